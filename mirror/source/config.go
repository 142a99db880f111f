package source

import (
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/runtime"
	"github.com/fjordhq/fjord/mirror/filter"
	"github.com/fjordhq/fjord/mirror/mirrorconfig"
	"github.com/fjordhq/fjord/mirror/policy"
)

// MirrorSourceConfig's own keys, with MM2's names (topic and config
// property filter keys are the filter package's, the shared ones
// mirrorconfig's).
const (
	ConsumerPollTimeoutConfig      = "consumer.poll.timeout.ms"
	RefreshTopicsEnabledConfig     = "refresh.topics.enabled"
	RefreshTopicsIntervalConfig    = "refresh.topics.interval.seconds"
	SyncTopicConfigsEnabledConfig  = "sync.topic.configs.enabled"
	SyncTopicConfigsIntervalConfig = "sync.topic.configs.interval.seconds"
	SyncTopicACLsEnabledConfig     = "sync.topic.acls.enabled"
	SyncTopicACLsIntervalConfig    = "sync.topic.acls.interval.seconds"
	ReplicationFactorConfig        = "replication.factor"
	OffsetSyncsReplicationConfig   = mirrorconfig.OffsetSyncsTopicConfigPrefix + "replication.factor"
	OffsetLagMaxConfig             = "offset.lag.max"
	HeartbeatsReplicationConfig    = "heartbeats.replication.enabled"

	// Set by the connector in task configs (MirrorSourceTaskConfig).
	TaskTopicPartitionsConfig = "task.assigned.partitions"

	// exactlyOnceSupportConfig is the worker's connector-level key
	// (KIP-618) MM2's validate checks against the consumer's isolation.
	exactlyOnceSupportConfig = "exactly.once.support"
)

// MirrorSourceConfig's defaults.
const (
	defaultPollTimeoutMs          = 1000
	defaultIntervalSeconds        = 10 * 60
	defaultReplicationFactor      = 2
	defaultOffsetSyncsReplication = 3
	defaultOffsetLagMax           = 100
)

// ConfigDef returns the connector's keys: the shared mirror keys, the
// topic and config property filters' and MirrorSourceConfig's.
func ConfigDef() *connect.ConfigDef {
	d := mirrorconfig.NewConfigDef()
	filter.DefineTopicKeys(d)
	filter.DefineConfigPropertyKeys(d)
	low := func(name string, t connect.ConfigType, def any, doc string) {
		d.Define(connect.ConfigKey{Name: name, Type: t, Default: def, Importance: connect.Low, Doc: doc})
	}
	low(ConsumerPollTimeoutConfig, connect.TypeLong, int64(defaultPollTimeoutMs), "Timeout when polling source cluster.")
	low(RefreshTopicsEnabledConfig, connect.TypeBoolean, true, "Whether to periodically check for new topics and partitions.")
	low(RefreshTopicsIntervalConfig, connect.TypeLong, int64(defaultIntervalSeconds), "Frequency of topic refresh.")
	low(SyncTopicConfigsEnabledConfig, connect.TypeBoolean, true, "Whether to periodically configure remote topics to match their corresponding upstream topics.")
	low(SyncTopicConfigsIntervalConfig, connect.TypeLong, int64(defaultIntervalSeconds), "Frequency of topic config sync.")
	low(SyncTopicACLsEnabledConfig, connect.TypeBoolean, true, "Whether to periodically configure remote topic ACLs to match their corresponding upstream topics.")
	low(SyncTopicACLsIntervalConfig, connect.TypeLong, int64(defaultIntervalSeconds), "Frequency of topic ACL sync.")
	d.Define(connect.ConfigKey{Name: ReplicationFactorConfig, Type: connect.TypeInt, Default: int32(defaultReplicationFactor),
		Validator: replicationFactor, Importance: connect.Low, Doc: "Replication factor for newly created remote topics."})
	d.Define(connect.ConfigKey{Name: OffsetSyncsReplicationConfig, Type: connect.TypeShort, Default: int16(defaultOffsetSyncsReplication),
		Validator: replicationFactor, Importance: connect.Low, Doc: "Replication factor for offset-syncs topic."})
	low(OffsetLagMaxConfig, connect.TypeLong, int64(defaultOffsetLagMax), "How out-of-sync a remote partition can be before it is resynced.")
	d.Define(connect.ConfigKey{Name: mirrorconfig.OffsetSyncsTopicLocation, Type: connect.TypeString, Default: mirrorconfig.OffsetSyncsTopicLocationDefault,
		Validator: connect.OneOf(mirrorconfig.Source, mirrorconfig.Target), Importance: connect.Low,
		Doc: "The location (source/target) of the offset-syncs topic."})
	low(mirrorconfig.EmitOffsetSyncsEnabled, connect.TypeBoolean, mirrorconfig.EmitOffsetSyncsEnabledDefault,
		"Whether to store the new offset of the replicated records in offset-syncs topic or not. "+
			"MirrorCheckpointConnector will not be able to sync group offsets or emit checkpoints if emit.checkpoints.enabled and/or sync.group.offsets.enabled are enabled while "+
			mirrorconfig.EmitOffsetSyncsEnabled+" is disabled.")
	low(HeartbeatsReplicationConfig, connect.TypeBoolean, true, "Whether to replicate the heartbeats topics even when the topic filter does not include them. "+
		"If set to true, heartbeats topics identified by the replication policy will always be replicated, regardless of the topic filter configuration. "+
		"If set to false, heartbeats topics will only be replicated if the topic filter allows.")
	d.Define(connect.ConfigKey{Name: TaskTopicPartitionsConfig, Type: connect.TypeList, Default: nil, Internal: true, Importance: connect.Low,
		Doc: "Topic-partitions assigned to this task to replicate."})
	d.Define(connect.ConfigKey{Name: mirrorconfig.TaskIndex, Type: connect.TypeInt, Default: nil, Internal: true, Importance: connect.Low,
		Doc: "The index of the task"})
	return d
}

func replicationFactor(name string, v any) error {
	var n int64
	switch x := v.(type) {
	case int32:
		n = int64(x)
	case int16:
		n = int64(x)
	}
	if n < 1 && n != -1 {
		return fmt.Errorf("Value must be at least 1, or -1 for the broker's default")
	}
	return nil
}

// settings is a parsed connector or task config.
type settings struct {
	props                 map[string]string
	name                  string
	enabled               bool
	sourceAlias           string
	targetAlias           string
	policy                policy.ReplicationPolicy
	adminTimeout          time.Duration
	pollTimeout           time.Duration
	refreshInterval       time.Duration // < 0: off
	syncConfigsInterval   time.Duration // < 0: off
	syncACLsInterval      time.Duration // < 0: off
	replicationFactor     int16
	offsetSyncsRF         int16
	offsetSyncsLocation   string // mirrorconfig.Source or Target
	emitOffsetSyncs       bool
	offsetLagMax          int64
	heartbeatsReplication bool
}

func parseSettings(props map[string]string) (*settings, error) {
	c, err := mirrorconfig.Parse(ConfigDef(), props)
	if err != nil {
		return nil, err
	}
	return &settings{
		props:                 props,
		name:                  c.ConnectorName(),
		enabled:               c.Enabled(),
		sourceAlias:           c.SourceClusterAlias(),
		targetAlias:           c.TargetClusterAlias(),
		policy:                c.ReplicationPolicy(),
		adminTimeout:          c.AdminTimeout(),
		pollTimeout:           max(time.Duration(c.Long(ConsumerPollTimeoutConfig))*time.Millisecond, time.Millisecond),
		refreshInterval:       interval(c.Config, RefreshTopicsEnabledConfig, RefreshTopicsIntervalConfig),
		syncConfigsInterval:   interval(c.Config, SyncTopicConfigsEnabledConfig, SyncTopicConfigsIntervalConfig),
		syncACLsInterval:      interval(c.Config, SyncTopicACLsEnabledConfig, SyncTopicACLsIntervalConfig),
		replicationFactor:     int16(c.Int(ReplicationFactorConfig)),
		offsetSyncsRF:         c.Short(OffsetSyncsReplicationConfig),
		offsetSyncsLocation:   c.String(mirrorconfig.OffsetSyncsTopicLocation),
		emitOffsetSyncs:       c.Bool(mirrorconfig.EmitOffsetSyncsEnabled),
		offsetLagMax:          c.Long(OffsetLagMaxConfig),
		heartbeatsReplication: c.Bool(HeartbeatsReplicationConfig),
	}, nil
}

// interval is MM2's "negative interval to disable": off when the enabled
// key is false.
func interval(c *connect.Config, enabledKey, secondsKey string) time.Duration {
	if !c.Bool(enabledKey) {
		return -1
	}
	return time.Duration(c.Long(secondsKey)) * time.Second
}

// offsetSyncsTopic is the offset-syncs topic's name: named for the other
// cluster of the flow (mm2-offset-syncs.<target>.internal on the source
// by default).
func (s *settings) offsetSyncsTopic() string {
	other := s.sourceAlias
	if s.offsetSyncsLocation == mirrorconfig.Source {
		other = s.targetAlias
	}
	return s.policy.OffsetSyncsTopic(other)
}

// client builds a client of the flow whose client.id carries MM2's role
// ("replication-consumer", ...), so that brokers' logs and quotas tell
// the connector's clients apart.
func client(props map[string]string, cluster string, kind runtime.ClientKind, role string, opts ...kgo.Opt) (*kgo.Client, error) {
	cp, err := mirrorconfig.ClientProps(props, cluster, kind, role)
	if err != nil {
		return nil, err
	}
	return mirrorconfig.Client(props, cluster, kind, append(opts, kgo.ClientID(cp["client.id"]))...)
}

// sourceConsumerProp is a source consumer setting as MM2 assembles the
// consumer's config (auto.offset.reset is earliest unless set).
func sourceConsumerProp(props map[string]string, key string) string {
	cp, err := mirrorconfig.ClientProps(props, mirrorconfig.Source, runtime.ConsumerClient, "")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(cp[key])
}
