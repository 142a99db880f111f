package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/auth"
	"github.com/fjordhq/fjord/broker/controller"
	"github.com/fjordhq/fjord/broker/group"
	"github.com/fjordhq/fjord/broker/log"
	"github.com/fjordhq/fjord/broker/metadata"
	"github.com/fjordhq/fjord/broker/protocol"
	"github.com/fjordhq/fjord/broker/wire"
)

// Config is what a Server needs, in the broker's own terms. ConfigFrom
// builds it from a parsed server.properties (broker/config), which is how
// users spell it.
type Config struct {
	NodeID int32
	// ListenAddr is the PLAINTEXT listener's host:port ("" for no listener).
	ListenAddr string
	// ExtraListenAddrs are the other client listeners (e.g. one per
	// inter.broker.listener.name in use), served like ListenAddr.
	ExtraListenAddrs []string
	// ListenerNames are the client listeners' names, in the order of
	// ListenAddr then ExtraListenAddrs.
	ListenerNames []string
	// ListenerSecurity is each client listener's security by its name
	// (ListenerNames); a missing entry is PLAINTEXT.
	ListenerSecurity map[string]*protocol.Security
	// ScramStore holds the SCRAM credentials SASL listeners check
	// (the metadata image implements it).
	ScramStore auth.ScramStore
	// MaxConnections, MaxConnectionsPerIP and MaxConnectionsPerIPOverrides
	// are max.connections, max.connections.per.ip and its overrides
	// (0: no limit).
	MaxConnections, MaxConnectionsPerIP int
	MaxConnectionsPerIPOverrides        map[string]int
	// AdvertisedHost/Port are what Metadata tells clients; empty/0 take
	// the bound listener's address.
	AdvertisedHost string
	AdvertisedPort int32
	Rack           string
	ClusterID      string
	// MetadataDir holds the controller journal (default: first log dir).
	MetadataDir string
	// BootstrapConfigs are cluster-default dynamic configs written when a
	// new cluster is created (Kafka 4 writes min.insync.replicas).
	BootstrapConfigs map[string]string

	NumPartitions            int32
	DefaultReplicationFactor int16
	AutoCreateTopics         bool
	DeleteTopicEnable        bool
	MaxRequestSize           int32
	IdleTimeout              time.Duration
	// SocketSendBuffer and SocketReceiveBuffer are socket.send.buffer.bytes
	// and socket.receive.buffer.bytes (-1: the OS default).
	SocketSendBuffer, SocketReceiveBuffer int
	ProducerIDExpirationMs                int64
	OffsetsTopicPartitions                int32
	OffsetsTopicSegmentBytes              int64

	LogManager log.ManagerConfig
	Group      group.Config
	// Topics resolves, validates and describes topic and broker configs.
	Topics TopicPolicy

	// Cluster is the KRaft-style cluster configuration; its zero value
	// (no voters) is a single node running controller.Local.
	Cluster ClusterConfig

	Logger     *slog.Logger
	Registerer prometheus.Registerer
	// Context, if set, bounds start-up (a cluster broker waits in New to
	// be unfenced) and, when cancelled, stops the broker's background work:
	// a SIGTERM during start-up ends New with an error.
	Context context.Context
}

// ClusterConfig is what a node of a cluster needs beyond a single broker,
// from Kafka's property names.
type ClusterConfig struct {
	// Voters is controller.quorum.voters: node id → host:port. Empty
	// means a single node (no raft).
	Voters map[int32]string
	// Broker and Controller are the process.roles.
	Broker, Controller bool
	// ControllerListenAddr is where the controller listener binds (the
	// first of controller.listener.names in listeners).
	ControllerListenAddr string
	// ControllerSecurity is the controller listener's security protocol
	// (listener.security.protocol.map) with its TLS and SASL settings;
	// nil for PLAINTEXT. Raft and the Kafka protocol both run under it.
	ControllerSecurity *protocol.Security
	// ControllerDialer connects to the voters' controller listeners:
	// brokers to the active controller, controllers to their raft peers
	// (TLS truststore/keystore, SASL sasl.mechanism.controller.protocol
	// with the listener's JAAS username/password); nil for PLAINTEXT.
	ControllerDialer *wire.Dialer
	// Listeners are the advertised client listeners, registered with the
	// controller.
	Listeners []controller.Listener
	// InterBrokerListener is inter.broker.listener.name: the listener of
	// other brokers this one replicates from.
	InterBrokerListener string
	// InterBrokerDialer connects to that listener with its security
	// protocol (TLS truststore, SASL sasl.mechanism.inter.broker.protocol
	// with the listener's JAAS username/password); nil for PLAINTEXT.
	InterBrokerDialer *wire.Dialer
	// StaticConfigs are server.properties, for the controller's own
	// settings (unclean.leader.election.enable, auto.leader.rebalance.*).
	StaticConfigs map[string]string

	// broker.session.timeout.ms and broker.heartbeat.interval.ms. Fjord's
	// defaults (2000 and 500) are shorter than Kafka's (9000 and 2000) so
	// a killed leader is replaced in about two seconds.
	BrokerSessionTimeout    time.Duration
	BrokerHeartbeatInterval time.Duration
	// replica.lag.time.max.ms (30 s).
	ReplicaLagTime time.Duration
	// replica.fetch.max.bytes (1 MiB per partition),
	// replica.fetch.response.max.bytes (10 MiB), replica.fetch.min.bytes
	// (1), replica.fetch.wait.max.ms (500), replica.fetch.backoff.ms (1000).
	ReplicaFetchMaxBytes         int32
	ReplicaFetchResponseMaxBytes int32
	ReplicaFetchMinBytes         int32
	ReplicaFetchWait             time.Duration
	ReplicaFetchBackoff          time.Duration
	// OffsetsTopicReplicationFactor is offsets.topic.replication.factor
	// (3), capped at the live brokers when the topic is created.
	OffsetsTopicReplicationFactor int16
}

// Enabled reports whether this node is part of a raft-managed cluster.
func (c ClusterConfig) Enabled() bool { return len(c.Voters) > 0 }

// TopicPolicy is the broker's view of configuration rules.
type TopicPolicy interface {
	// Resolve returns a topic's effective settings in img (overrides,
	// dynamic broker configs, static broker configs, defaults).
	Resolve(img *metadata.Image, topic string) TopicSettings
	// Validate checks a complete set of topic overrides.
	Validate(configs map[string]string) error
	// ValidateBroker checks dynamic configs for a broker ("" = cluster default).
	ValidateBroker(broker string, configs map[string]string) error
	// DescribeTopic and DescribeBroker answer DescribeConfigs for one resource.
	DescribeTopic(img *metadata.Image, topic string, req *kmsg.DescribeConfigsRequestResource, includeSynonyms, includeDocs bool, version int16) []kmsg.DescribeConfigsResponseResourceConfig
	DescribeBroker(img *metadata.Image, broker int32, req *kmsg.DescribeConfigsRequestResource, includeSynonyms, includeDocs bool, version int16) []kmsg.DescribeConfigsResponseResourceConfig
	// CreateTopicConfigs lists a new topic's configs for CreateTopics v5+.
	CreateTopicConfigs(img *metadata.Image, overrides map[string]string) []kmsg.CreateTopicsResponseTopicConfig
	// ApplyIncrementalAlter applies IncrementalAlterConfigs operations to
	// a resource's current dynamic configs, returning the new set.
	ApplyIncrementalAlter(typ int8, current map[string]string, ops []kmsg.IncrementalAlterConfigsRequestResourceConfig) (map[string]string, error)
}

// TopicSettings are a topic's effective settings, as the produce and
// fetch paths use them.
type TopicSettings struct {
	Log               log.Config
	MaxMessageBytes   int32
	CompressionType   string // producer, uncompressed, gzip, snappy, lz4, zstd
	LogAppendTime     bool   // message.timestamp.type=LogAppendTime
	TimestampBeforeMs int64  // message.timestamp.before.max.ms
	TimestampAfterMs  int64  // message.timestamp.after.max.ms
	MinInsyncReplicas int32
}

func (a TopicSettings) equal(b TopicSettings) bool { return a == b }

func (c *Config) fill() error {
	if len(c.LogManager.Dirs) == 0 {
		return errors.New("no log dirs configured: set log.dirs (or --data-dir)")
	}
	if c.Topics == nil {
		return errors.New("internal: broker config has no topic policy")
	}
	if c.MetadataDir == "" {
		c.MetadataDir = defaultMetadataDir(c.LogManager.Dirs)
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.MaxRequestSize <= 0 {
		c.MaxRequestSize = 100 << 20
	}
	if c.NumPartitions <= 0 {
		c.NumPartitions = 1
	}
	if c.DefaultReplicationFactor <= 0 {
		c.DefaultReplicationFactor = 1
	}
	if c.OffsetsTopicPartitions <= 0 {
		c.OffsetsTopicPartitions = 50
	}
	if c.OffsetsTopicSegmentBytes <= 0 {
		c.OffsetsTopicSegmentBytes = 100 << 20
	}
	if c.Group.OffsetsTopicPartitions <= 0 {
		c.Group.OffsetsTopicPartitions = c.OffsetsTopicPartitions
	}
	if c.ProducerIDExpirationMs <= 0 {
		c.ProducerIDExpirationMs = 86400000
	}
	if c.Registerer == nil {
		c.Registerer = prometheus.NewRegistry()
	}
	cl := &c.Cluster
	if cl.Enabled() {
		if !cl.Broker && !cl.Controller {
			return errors.New("process.roles must name broker, controller or both when controller.quorum.voters is set")
		}
		if _, ok := cl.Voters[c.NodeID]; cl.Controller && !ok {
			return fmt.Errorf("node.id %d has the controller role but is not in controller.quorum.voters", c.NodeID)
		}
		if cl.Controller && cl.ControllerListenAddr == "" {
			return errors.New("the controller role needs a controller listener: name it in controller.listener.names and listeners")
		}
	}
	defDur := func(d *time.Duration, def time.Duration) {
		if *d <= 0 {
			*d = def
		}
	}
	defDur(&cl.BrokerSessionTimeout, 2*time.Second)
	defDur(&cl.BrokerHeartbeatInterval, 500*time.Millisecond)
	defDur(&cl.ReplicaLagTime, 30*time.Second)
	defDur(&cl.ReplicaFetchWait, 500*time.Millisecond)
	defDur(&cl.ReplicaFetchBackoff, time.Second)
	if cl.ReplicaFetchMaxBytes <= 0 {
		cl.ReplicaFetchMaxBytes = 1 << 20
	}
	if cl.ReplicaFetchResponseMaxBytes <= 0 {
		cl.ReplicaFetchResponseMaxBytes = 10 << 20
	}
	if cl.ReplicaFetchMinBytes <= 0 {
		cl.ReplicaFetchMinBytes = 1
	}
	if cl.OffsetsTopicReplicationFactor <= 0 {
		cl.OffsetsTopicReplicationFactor = 3
	}
	return nil
}
