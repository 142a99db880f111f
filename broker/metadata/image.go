// Package metadata holds the cluster metadata image every broker serves
// from, and the records that change it.
//
// The controller is the only writer: it turns admin requests into Records
// and appends them to its durable log (a local journal for a single node,
// a raft log for a cluster). Every broker applies the same records, in the
// same order, to build an Image. An Image is immutable once published:
// Apply returns a new Image sharing unchanged parts with the old one, and
// readers load the current image from an atomic pointer without locks.
//
// Records mirror KRaft's metadata records (TopicRecord, PartitionRecord,
// ConfigRecord, RemoveTopicRecord, ProducerIdsRecord, RegisterBrokerRecord)
// so the later cluster work maps one to one.
package metadata

import (
	"crypto/rand"
	"encoding/base64"
	"maps"
	"slices"
	"sort"

	"github.com/fjordhq/fjord/broker/auth"
)

// UUID is a Kafka UUID (topic ids, cluster id bytes).
type UUID [16]byte

// NewUUID returns a random UUID that is not zero and, like Kafka's
// Uuid.randomUuid, never starts with '-' when base64url-encoded.
func NewUUID() UUID {
	for {
		var u UUID
		rand.Read(u[:])
		u[6] = u[6]&0x0f | 0x40 // version 4
		u[8] = u[8]&0x3f | 0x80 // variant
		if s := u.String(); s[0] != '-' && u != (UUID{}) {
			return u
		}
	}
}

// String is the base64url (no padding) form Kafka prints.
func (u UUID) String() string { return base64.RawURLEncoding.EncodeToString(u[:]) }

// ParseUUID parses Kafka's base64url form.
func ParseUUID(s string) (UUID, bool) {
	var u UUID
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 16 {
		return u, false
	}
	copy(u[:], b)
	return u, true
}

func (u UUID) MarshalText() ([]byte, error) { return []byte(u.String()), nil }

func (u *UUID) UnmarshalText(b []byte) error {
	v, ok := ParseUUID(string(b))
	if !ok {
		return errBadUUID
	}
	*u = v
	return nil
}

// Broker is a registered broker.
//
// The cluster fields (Epoch, IncarnationID, Listeners,
// InControlledShutdown) are KRaft's BrokerRegistration; a single-node
// controller leaves them zero, and they are omitted from its journal.
type Broker struct {
	ID     int32  `json:"id"`
	Host   string `json:"host"`
	Port   int32  `json:"port"`
	Rack   string `json:"rack,omitempty"`
	Fenced bool   `json:"fenced,omitempty"`
	// Epoch is the broker epoch: the metadata offset of the registration
	// that created this incarnation (Kafka uses the record's offset).
	Epoch int64 `json:"epoch,omitempty"`
	// IncarnationID is new on every broker process start; a registration
	// with the same id amends, a new one starts a new epoch.
	IncarnationID UUID `json:"incarnationId,omitzero"`
	// Listeners are every advertised listener; Host/Port is the first.
	Listeners []Listener `json:"listeners,omitempty"`
	// InControlledShutdown: the broker asked to shut down and its
	// leaderships are being moved away; it is not eligible for new ones.
	InControlledShutdown bool `json:"inControlledShutdown,omitempty"`
}

// Listener is one advertised listener of a broker.
type Listener struct {
	Name string `json:"name"`
	Host string `json:"host"`
	Port int32  `json:"port"`
}

// Equal reports whether two registrations are identical.
func (b *Broker) Equal(o *Broker) bool {
	return b.ID == o.ID && b.Host == o.Host && b.Port == o.Port && b.Rack == o.Rack &&
		b.Fenced == o.Fenced && b.Epoch == o.Epoch && b.IncarnationID == o.IncarnationID &&
		b.InControlledShutdown == o.InControlledShutdown && slices.Equal(b.Listeners, o.Listeners)
}

// Active reports whether the broker may lead partitions and take new
// replicas: registered, unfenced and not shutting down (Kafka's
// ClusterControlManager.isActive).
func (b *Broker) Active() bool { return b != nil && !b.Fenced && !b.InControlledShutdown }

// Partition is one partition's replica state.
type Partition struct {
	Index          int32   `json:"index"`
	Replicas       []int32 `json:"replicas"`
	ISR            []int32 `json:"isr"`
	Leader         int32   `json:"leader"` // -1: no leader (offline)
	LeaderEpoch    int32   `json:"leaderEpoch"`
	PartitionEpoch int32   `json:"partitionEpoch"`
	// AddingReplicas and RemovingReplicas are set while a reassignment
	// (KIP-455) is in progress; Replicas then holds the target replicas
	// followed by the ones being removed.
	AddingReplicas   []int32 `json:"addingReplicas,omitempty"`
	RemovingReplicas []int32 `json:"removingReplicas,omitempty"`
}

// Reassigning reports whether a reassignment is in progress.
func (p *Partition) Reassigning() bool {
	return len(p.AddingReplicas) > 0 || len(p.RemovingReplicas) > 0
}

// Clone returns a deep copy.
func (p *Partition) Clone() *Partition {
	c := *p
	c.Replicas = slices.Clone(p.Replicas)
	c.ISR = slices.Clone(p.ISR)
	c.AddingReplicas = slices.Clone(p.AddingReplicas)
	c.RemovingReplicas = slices.Clone(p.RemovingReplicas)
	return &c
}

// TopicPartition names a partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// Topic is a topic and its partitions, indexed by partition number.
type Topic struct {
	Name       string       `json:"name"`
	ID         UUID         `json:"id"`
	Partitions []*Partition `json:"partitions"`
}

// Internal reports whether Kafka treats the topic as internal.
func (t *Topic) Internal() bool { return IsInternal(t.Name) }

// IsInternal reports whether a topic name is one of Kafka's internal topics.
func IsInternal(name string) bool {
	return name == "__consumer_offsets" || name == "__transaction_state"
}

// ConfigResource names a config owner: a topic, a broker ("0"), or the
// cluster-wide broker default (Type broker, Name "").
type ConfigResource struct {
	Type int8   `json:"type"` // kmsg.ConfigResourceType: 2 topic, 4 broker
	Name string `json:"name"`
}

// Resource types, as kmsg.ConfigResourceType numbers them.
const (
	ResourceTopic  int8 = 2
	ResourceBroker int8 = 4
)

// Image is an immutable snapshot of cluster metadata.
type Image struct {
	// Offset is the journal offset of the last applied record; -1 when empty.
	Offset         int64
	ClusterID      string
	ControllerID   int32
	Brokers        map[int32]*Broker
	Topics         map[string]*Topic
	TopicsByID     map[UUID]*Topic
	Configs        map[ConfigResource]map[string]string
	NextProducerID int64
	// Scram holds the SCRAM credentials (salted keys only), ACLs the
	// access control entries by id.
	Scram map[ScramKey]auth.ScramCredential
	ACLs  map[UUID]ACLWithID
	// ClientQuotas are the client quotas (quotas.go); nil: none. Replaced,
	// never modified, by each quota record.
	ClientQuotas *ClientQuotas
}

// Empty returns the image before any record.
func Empty() *Image {
	return &Image{
		Offset:       -1,
		ControllerID: -1,
		Brokers:      map[int32]*Broker{},
		Topics:       map[string]*Topic{},
		TopicsByID:   map[UUID]*Topic{},
		Configs:      map[ConfigResource]map[string]string{},
		Scram:        map[ScramKey]auth.ScramCredential{},
		ACLs:         map[UUID]ACLWithID{},
	}
}

// Topic returns the named topic or nil.
func (img *Image) Topic(name string) *Topic { return img.Topics[name] }

// Partition returns a topic's partition or nil.
func (img *Image) Partition(topic string, p int32) *Partition {
	t := img.Topics[topic]
	if t == nil || p < 0 || int(p) >= len(t.Partitions) {
		return nil
	}
	return t.Partitions[p]
}

// TopicConfigs returns a topic's overrides (never nil; do not modify).
func (img *Image) TopicConfigs(topic string) map[string]string {
	if m := img.Configs[ConfigResource{ResourceTopic, topic}]; m != nil {
		return m
	}
	return emptyConfigs
}

// BrokerConfigs returns dynamic configs for a broker id ("" for the cluster default).
func (img *Image) BrokerConfigs(name string) map[string]string {
	if m := img.Configs[ConfigResource{ResourceBroker, name}]; m != nil {
		return m
	}
	return emptyConfigs
}

var emptyConfigs = map[string]string{}

// TopicNames returns all topic names, sorted.
func (img *Image) TopicNames() []string {
	names := slices.Collect(maps.Keys(img.Topics))
	sort.Strings(names)
	return names
}

// BrokerIDs returns the registered broker ids, sorted.
func (img *Image) BrokerIDs() []int32 {
	ids := slices.Collect(maps.Keys(img.Brokers))
	slices.Sort(ids)
	return ids
}

// LiveBrokerIDs returns the unfenced broker ids, sorted.
func (img *Image) LiveBrokerIDs() []int32 {
	var ids []int32
	for _, id := range img.BrokerIDs() {
		if !img.Brokers[id].Fenced {
			ids = append(ids, id)
		}
	}
	return ids
}

// Offline returns the partitions without a usable leader (none elected,
// or the leader is not a registered unfenced broker), sorted.
func (img *Image) Offline() []TopicPartition {
	return img.partitionsWhere(func(p *Partition) bool {
		b := img.Brokers[p.Leader]
		return p.Leader < 0 || b == nil || b.Fenced
	})
}

// UnderReplicated returns the partitions whose ISR is smaller than their
// replication factor (replicas being added by a reassignment do not
// count, as in Kafka's UnderReplicatedPartitions), sorted.
func (img *Image) UnderReplicated() []TopicPartition {
	return img.partitionsWhere(func(p *Partition) bool {
		return len(p.ISR) < len(p.Replicas)-len(p.AddingReplicas)
	})
}

func (img *Image) partitionsWhere(f func(*Partition) bool) []TopicPartition {
	var out []TopicPartition
	for _, name := range img.TopicNames() {
		for _, p := range img.Topics[name].Partitions {
			if f(p) {
				out = append(out, TopicPartition{name, p.Index})
			}
		}
	}
	return out
}

// clone makes a shallow copy whose maps may be modified; entries are
// shared and must be replaced, not mutated.
func (img *Image) clone() *Image {
	c := *img
	c.Brokers = maps.Clone(img.Brokers)
	c.Topics = maps.Clone(img.Topics)
	c.TopicsByID = maps.Clone(img.TopicsByID)
	c.Configs = maps.Clone(img.Configs)
	c.Scram = maps.Clone(img.Scram)
	c.ACLs = maps.Clone(img.ACLs)
	return &c
}

// WithTopicConfigs returns a copy of img in which topic has exactly the
// given overrides: used to describe a topic that is about to be created.
func (img *Image) WithTopicConfigs(topic string, configs map[string]string) *Image {
	c := img.clone()
	if len(configs) == 0 {
		delete(c.Configs, ConfigResource{ResourceTopic, topic})
	} else {
		c.Configs[ConfigResource{ResourceTopic, topic}] = maps.Clone(configs)
	}
	return c
}
