package metadata

import (
	"errors"
	"fmt"
	"maps"
	"slices"
)

var errBadUUID = errors.New("invalid UUID")

// Record is one metadata change. Exactly one field is set; the JSON form
// is what the journal stores.
type Record struct {
	Cluster     *ClusterRecord        `json:"cluster,omitempty"`
	Broker      *RegisterBrokerRecord `json:"broker,omitempty"`
	Topic       *TopicRecord          `json:"topic,omitempty"`
	Partition   *PartitionRecord      `json:"partition,omitempty"`
	RemoveTopic *RemoveTopicRecord    `json:"removeTopic,omitempty"`
	Config      *ConfigRecord         `json:"config,omitempty"`
	ProducerIDs *ProducerIDsRecord    `json:"producerIds,omitempty"`
	// BrokerChange is Kafka's BrokerRegistrationChangeRecord: fencing,
	// unfencing and controlled shutdown of a registered broker.
	BrokerChange *BrokerChangeRecord `json:"brokerChange,omitempty"`
	// UnregisterBroker is Kafka's UnregisterBrokerRecord: the broker
	// leaves the image (UnregisterBroker, `fjord cluster remove-broker`).
	UnregisterBroker *UnregisterBrokerRecord `json:"unregisterBroker,omitempty"`
	// Security records (security.go): SCRAM credentials and ACLs.
	ScramCredential       *UserScramCredentialRecord       `json:"scramCredential,omitempty"`
	RemoveScramCredential *RemoveUserScramCredentialRecord `json:"removeScramCredential,omitempty"`
	ACL                   *AccessControlEntryRecord        `json:"acl,omitempty"`
	RemoveACL             *RemoveAccessControlEntryRecord  `json:"removeAcl,omitempty"`
	// ClientQuota is Kafka's ClientQuotaRecord (quotas.go).
	ClientQuota *ClientQuotaRecord `json:"clientQuota,omitempty"`
}

// ClusterRecord sets the cluster id and the active controller.
type ClusterRecord struct {
	ClusterID    string `json:"clusterId"`
	ControllerID int32  `json:"controllerId"`
}

// RegisterBrokerRecord adds or replaces a broker registration.
type RegisterBrokerRecord struct{ Broker }

// EpochFromOffset as a RegisterBrokerRecord's Epoch makes the broker epoch
// the offset the record is stored at, as Kafka's broker epochs are.
const EpochFromOffset int64 = -1

// TopicRecord creates a topic (its partitions follow as PartitionRecords).
type TopicRecord struct {
	Name string `json:"name"`
	ID   UUID   `json:"id"`
}

// PartitionRecord creates or replaces a partition of a topic.
type PartitionRecord struct {
	TopicID UUID `json:"topicId"`
	Partition
}

// RemoveTopicRecord deletes a topic and its configs.
type RemoveTopicRecord struct {
	ID UUID `json:"id"`
}

// ConfigRecord sets (Value non-nil) or removes (Value nil) one config.
type ConfigRecord struct {
	Resource ConfigResource `json:"resource"`
	Key      string         `json:"key"`
	Value    *string        `json:"value"`
}

// ProducerIDsRecord reserves producer ids below NextProducerID.
type ProducerIDsRecord struct {
	NextProducerID int64 `json:"nextProducerId"`
}

// BrokerChangeRecord changes a registered broker's state. Epoch must match
// the registration (a change for an older incarnation does not apply).
type BrokerChangeRecord struct {
	ID                   int32 `json:"id"`
	Epoch                int64 `json:"epoch"`
	Fenced               *bool `json:"fenced,omitempty"`
	InControlledShutdown *bool `json:"inControlledShutdown,omitempty"`
}

// UnregisterBrokerRecord removes a broker registration. Epoch must match
// the registration, so a removal never drops a newer incarnation.
type UnregisterBrokerRecord struct {
	ID    int32 `json:"id"`
	Epoch int64 `json:"epoch"`
}

// ApplyEntry returns the image after one metadata log entry holding recs,
// stored at offset: the whole entry takes one offset (a raft index), and
// the new image's Offset is offset even when recs is empty. img is not
// modified.
func (img *Image) ApplyEntry(offset int64, recs []Record) (*Image, error) {
	n := img.clone()
	for _, r := range recs {
		if err := n.apply(r, offset); err != nil {
			return nil, fmt.Errorf("metadata entry at offset %d: %w", offset, err)
		}
	}
	n.Offset = offset
	return n, nil
}

// Apply returns the image after recs, which were stored at offsets
// firstOffset, firstOffset+1, .... img is not modified.
func (img *Image) Apply(firstOffset int64, recs []Record) (*Image, error) {
	n := img.clone()
	for i, r := range recs {
		if err := n.apply(r, firstOffset+int64(i)); err != nil {
			return nil, fmt.Errorf("metadata record at offset %d: %w", firstOffset+int64(i), err)
		}
	}
	if len(recs) > 0 {
		n.Offset = firstOffset + int64(len(recs)) - 1
	}
	return n, nil
}

// apply applies one record stored at offset.
func (img *Image) apply(r Record, offset int64) error {
	if ok, err := img.applySecurity(r); ok {
		return err
	}
	if r.ClientQuota != nil {
		return img.applyClientQuota(r.ClientQuota)
	}
	switch {
	case r.Cluster != nil:
		img.ClusterID = r.Cluster.ClusterID
		img.ControllerID = r.Cluster.ControllerID
	case r.Broker != nil:
		b := r.Broker.Broker
		b.Listeners = slices.Clone(b.Listeners)
		if b.Epoch == EpochFromOffset {
			// The controller proposes a registration before it knows the
			// log offset it will get; every replica of the log resolves it
			// the same way.
			b.Epoch = offset
		}
		img.Brokers[b.ID] = &b
	case r.BrokerChange != nil:
		c := r.BrokerChange
		old := img.Brokers[c.ID]
		if old == nil {
			return fmt.Errorf("change of unregistered broker %d", c.ID)
		}
		if old.Epoch != c.Epoch {
			return fmt.Errorf("change of broker %d epoch %d, registered epoch is %d", c.ID, c.Epoch, old.Epoch)
		}
		b := *old
		if c.Fenced != nil {
			b.Fenced = *c.Fenced
			if b.Fenced {
				// A fenced broker has left controlled shutdown: it leads
				// nothing and will register again to come back.
				b.InControlledShutdown = false
			}
		}
		if c.InControlledShutdown != nil {
			b.InControlledShutdown = *c.InControlledShutdown
		}
		img.Brokers[b.ID] = &b
	case r.UnregisterBroker != nil:
		u := r.UnregisterBroker
		old := img.Brokers[u.ID]
		if old == nil || old.Epoch != u.Epoch {
			return fmt.Errorf("unregister of broker %d epoch %d, which is not registered", u.ID, u.Epoch)
		}
		delete(img.Brokers, u.ID)
	case r.Topic != nil:
		if _, ok := img.Topics[r.Topic.Name]; ok {
			return fmt.Errorf("topic %q already exists", r.Topic.Name)
		}
		t := &Topic{Name: r.Topic.Name, ID: r.Topic.ID}
		img.Topics[t.Name] = t
		img.TopicsByID[t.ID] = t
	case r.Partition != nil:
		old := img.TopicsByID[r.Partition.TopicID]
		if old == nil {
			return fmt.Errorf("partition record for unknown topic id %s", r.Partition.TopicID)
		}
		p := *r.Partition.Partition.Clone()
		t := &Topic{Name: old.Name, ID: old.ID, Partitions: slices.Clone(old.Partitions)}
		switch idx := int(p.Index); {
		case idx < len(t.Partitions):
			t.Partitions[idx] = &p
		case idx == len(t.Partitions):
			t.Partitions = append(t.Partitions, &p)
		default:
			return fmt.Errorf("partition %d of %s out of order (have %d)", idx, t.Name, len(t.Partitions))
		}
		img.Topics[t.Name] = t
		img.TopicsByID[t.ID] = t
	case r.RemoveTopic != nil:
		t := img.TopicsByID[r.RemoveTopic.ID]
		if t == nil {
			return fmt.Errorf("remove of unknown topic id %s", r.RemoveTopic.ID)
		}
		delete(img.Topics, t.Name)
		delete(img.TopicsByID, t.ID)
		delete(img.Configs, ConfigResource{ResourceTopic, t.Name})
	case r.Config != nil:
		c := r.Config
		m := maps.Clone(img.Configs[c.Resource])
		if m == nil {
			m = map[string]string{}
		}
		if c.Value == nil {
			delete(m, c.Key)
		} else {
			m[c.Key] = *c.Value
		}
		if len(m) == 0 {
			delete(img.Configs, c.Resource)
		} else {
			img.Configs[c.Resource] = m
		}
	case r.ProducerIDs != nil:
		if r.ProducerIDs.NextProducerID < img.NextProducerID {
			return fmt.Errorf("producer id block goes backwards: %d < %d", r.ProducerIDs.NextProducerID, img.NextProducerID)
		}
		img.NextProducerID = r.ProducerIDs.NextProducerID
	default:
		return errors.New("empty record")
	}
	return nil
}
