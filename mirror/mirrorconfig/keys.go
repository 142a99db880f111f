package mirrorconfig

import (
	"fmt"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/mirror/policy"
)

// Keys of MM2's MirrorConnectorConfig shared by the source, checkpoint and
// heartbeat connectors.
const (
	Enabled                       = "enabled"
	SourceClusterAlias            = "source.cluster.alias"
	TargetClusterAlias            = "target.cluster.alias"
	AdminTimeoutMs                = "admin.timeout.ms"
	ReplicationPolicyClass        = policy.ClassConfig
	ReplicationPolicySeparator    = policy.SeparatorConfig
	InternalTopicSeparatorEnabled = policy.InternalTopicSeparatorEnabledConfig
	ForwardingAdminClass          = "forwarding.admin.class"
	MetricReporters               = "metric.reporters"
	SecurityProtocol              = "security.protocol"

	// Defined by the connectors that use them (MirrorSourceConfig,
	// MirrorCheckpointConfig), named here because both need them.
	TopicFilterClass             = "topic.filter.class"
	OffsetSyncsTopicConfigPrefix = "offset-syncs.topic."
	OffsetSyncsTopicLocation     = OffsetSyncsTopicConfigPrefix + "location"
	EmitOffsetSyncsEnabled       = "emit.offset-syncs.enabled"
	TaskIndex                    = "task.index"
	// OffsetSyncsClientRolePrefix starts the client role of clients that
	// read or write the offset-syncs topic ("offset-syncs-source-admin").
	OffsetSyncsClientRolePrefix = "offset-syncs-"
)

// Defaults.
const (
	SourceClusterAliasDefault               = "source" // the offset-syncs location's default; the alias itself is required
	TargetClusterAliasDefault               = "target"
	AdminTimeoutMsDefault             int64 = 60000
	ReplicationPolicyClassDefault           = policy.DefaultClass
	ReplicationPolicySeparatorDefault       = policy.SeparatorDefault
	ForwardingAdminClassDefault             = "org.apache.kafka.clients.admin.ForwardingAdmin"
	MetricReportersDefault                  = "org.apache.kafka.common.metrics.JmxReporter"
	OffsetSyncsTopicLocationDefault         = SourceClusterAliasDefault
	EmitOffsetSyncsEnabledDefault           = true
)

// Define adds MirrorConnectorConfig's keys (BASE_CONNECTOR_CONFIG_DEF
// less the Connect connector keys, which the runtime defines) to d, with
// Kafka's types, defaults and docs. Kafka's ssl.* and sasl.* keys are
// not defined: Fjord's clients read neither key stores nor SASL, and an
// undefined key still reaches the clients through the originals.
func Define(d *connect.ConfigDef) *connect.ConfigDef {
	return d.
		Define(connect.ConfigKey{Name: Enabled, Type: connect.TypeBoolean, Default: true, Importance: connect.Low,
			Doc: "Whether to replicate source->target."}).
		Define(connect.ConfigKey{Name: SourceClusterAlias, Type: connect.TypeString, Default: connect.NoDefault,
			Importance: connect.High, Doc: "Alias of source cluster"}).
		Define(connect.ConfigKey{Name: TargetClusterAlias, Type: connect.TypeString, Default: TargetClusterAliasDefault,
			Importance: connect.High, Doc: "Alias of target cluster. Used in metrics reporting."}).
		Define(connect.ConfigKey{Name: AdminTimeoutMs, Type: connect.TypeLong, Default: AdminTimeoutMsDefault,
			Importance: connect.Low, Doc: "Timeout for administrative tasks, e.g. detecting new topics."}).
		Define(connect.ConfigKey{Name: ReplicationPolicyClass, Type: connect.TypeClass, Default: ReplicationPolicyClassDefault,
			Validator: policyClass, Importance: connect.Low, Doc: "Class which defines the remote topic naming convention."}).
		Define(connect.ConfigKey{Name: ReplicationPolicySeparator, Type: connect.TypeString, Default: ReplicationPolicySeparatorDefault,
			Importance: connect.Low, Doc: "Separator used in remote topic naming convention."}).
		Define(connect.ConfigKey{Name: InternalTopicSeparatorEnabled, Type: connect.TypeBoolean, Default: policy.InternalTopicSeparatorEnabledDefault,
			Importance: connect.Low, Doc: "Whether to use replication.policy.separator to control the names of topics used for checkpoints and offset syncs. " +
				"By default, custom separators are used in these topic names; however, if upgrading MirrorMaker 2 from older versions " +
				"that did not allow for these topic names to be customized, it may be necessary to set this property to 'false' in order " +
				"to continue using the same names for those topics."}).
		Define(connect.ConfigKey{Name: ForwardingAdminClass, Type: connect.TypeClass, Default: ForwardingAdminClassDefault,
			Validator: forwardingAdminClass, Importance: connect.Low,
			Doc: "Class which extends ForwardingAdmin to define custom cluster resource management (topics, configs, etc). " +
				"Fjord supports only the default, which manages resources on the target cluster itself."}).
		Define(connect.ConfigKey{Name: MetricReporters, Type: connect.TypeList, Default: []string{MetricReportersDefault},
			Importance: connect.Low, Doc: "A list of classes to use as metrics reporters. Accepted for compatibility; " +
				"Fjord reports mirror metrics on its own /metrics endpoint."}).
		Define(connect.ConfigKey{Name: SecurityProtocol, Type: connect.TypeString, Default: "PLAINTEXT",
			Validator: connect.OneOfFold("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"), Importance: connect.Medium,
			Doc: "Protocol used to communicate with brokers."})
}

// NewConfigDef returns a definition holding only the shared keys.
func NewConfigDef() *connect.ConfigDef { return Define(connect.NewConfigDef()) }

// policyClass accepts the replication policies Fjord has, with the
// message Kafka gives for a class it cannot load.
func policyClass(name string, v any) error {
	s, _ := v.(string)
	if _, err := policy.New(map[string]string{policy.ClassConfig: s}); err != nil {
		return fmt.Errorf("Class %s could not be found.", s)
	}
	return nil
}

// forwardingAdminClass rejects custom ForwardingAdmin classes instead of
// silently managing topics on the target, which a custom one would not.
func forwardingAdminClass(name string, v any) error {
	switch s, _ := v.(string); s {
	case ForwardingAdminClassDefault, "ForwardingAdmin":
		return nil
	default:
		return fmt.Errorf("Class %s could not be found.", s)
	}
}
