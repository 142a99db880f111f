package checkpoint

import (
	"fmt"
	"strings"
	"time"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/mirror/filter"
	"github.com/fjordhq/fjord/mirror/mirrorconfig"
)

// MirrorCheckpointConfig's keys, with MM2's names.
const (
	ConsumerPollTimeoutMs             = "consumer.poll.timeout.ms"
	RefreshGroupsEnabled              = "refresh.groups.enabled"
	RefreshGroupsIntervalSeconds      = "refresh.groups.interval.seconds"
	EmitCheckpointsEnabled            = "emit.checkpoints.enabled"
	EmitCheckpointsIntervalSeconds    = "emit.checkpoints.interval.seconds"
	SyncGroupOffsetsEnabled           = "sync.group.offsets.enabled"
	SyncGroupOffsetsIntervalSeconds   = "sync.group.offsets.interval.seconds"
	CheckpointsTopicReplicationFactor = "checkpoints.topic.replication.factor"
	// TaskAssignedGroups is set by the connector in each task's config.
	TaskAssignedGroups = "task.assigned.groups"
)

// Defaults, as MirrorCheckpointConfig's.
const (
	DefaultTopicFilterClass = "org.apache.kafka.connect.mirror.DefaultTopicFilter"
	defaultPollTimeoutMs    = int64(1000)
	defaultRefreshGroupsSec = int64(10 * 60)
	defaultEmitSec          = int64(60)
	defaultSyncGroupsSec    = int64(60)
	defaultCheckpointsRF    = int16(3)
)

// ConfigDef returns the connector's keys: the shared mirror keys and
// MirrorCheckpointConfig's, with the group filter's keys (groups,
// groups.exclude, group.filter.class); task.assigned.groups and
// task.index are internal. As in MM2, topics and topics.exclude are not
// defined here: the topic filter reads them from the originals.
func ConfigDef() *connect.ConfigDef {
	d := mirrorconfig.NewConfigDef()
	filter.DefineGroupKeys(d)
	low := func(name string, t connect.ConfigType, def any, doc string) {
		d.Define(connect.ConfigKey{Name: name, Type: t, Default: def, Importance: connect.Low, Doc: doc})
	}
	// MM2's task sleeps in steps of this while it waits for the next
	// checkpoint; Fjord's wakes at once when stopped, so it is accepted
	// and unused.
	low(ConsumerPollTimeoutMs, connect.TypeLong, defaultPollTimeoutMs, "Timeout when polling source cluster.")
	low(RefreshGroupsEnabled, connect.TypeBoolean, true, "Whether to periodically check for new consumer groups.")
	low(RefreshGroupsIntervalSeconds, connect.TypeLong, defaultRefreshGroupsSec, "Frequency of group refresh.")
	low(EmitCheckpointsEnabled, connect.TypeBoolean, true, "Whether to replicate consumer offsets to target cluster.")
	low(EmitCheckpointsIntervalSeconds, connect.TypeLong, defaultEmitSec, "Frequency of checkpoints.")
	low(SyncGroupOffsetsEnabled, connect.TypeBoolean, false, "Whether to periodically write the translated offsets to __consumer_offsets topic in target cluster, as long as no active consumers in that group are connected to the target cluster")
	low(SyncGroupOffsetsIntervalSeconds, connect.TypeLong, defaultSyncGroupsSec, "Frequency of consumer group offset sync.")
	low(CheckpointsTopicReplicationFactor, connect.TypeShort, defaultCheckpointsRF, "Replication factor for checkpoints topic.")
	d.Define(connect.ConfigKey{Name: mirrorconfig.OffsetSyncsTopicLocation, Type: connect.TypeString, Default: mirrorconfig.OffsetSyncsTopicLocationDefault,
		Validator: connect.OneOf(mirrorconfig.Source, mirrorconfig.Target), Importance: connect.Low,
		Doc: "The location (source/target) of the offset-syncs topic."})
	d.Define(connect.ConfigKey{Name: mirrorconfig.TopicFilterClass, Type: connect.TypeClass, Default: DefaultTopicFilterClass,
		Validator: onlyClass(DefaultTopicFilterClass), Importance: connect.Low,
		Doc: "TopicFilter to use. Selects topics to replicate. Fjord has DefaultTopicFilter only."})
	d.Define(connect.ConfigKey{Name: TaskAssignedGroups, Type: connect.TypeList, Default: nil, Internal: true, Importance: connect.Low,
		Doc: "Consumer groups assigned to this task to replicate."})
	d.Define(connect.ConfigKey{Name: mirrorconfig.TaskIndex, Type: connect.TypeInt, Default: nil, Internal: true, Importance: connect.Low,
		Doc: "The index of the task"})
	return d
}

// onlyClass accepts the one implementation Fjord has, by its class or
// simple name: a custom Java class cannot be loaded.
func onlyClass(class string) connect.Validator {
	simple := class[strings.LastIndexByte(class, '.')+1:]
	return func(name string, v any) error {
		if s, _ := v.(string); s == class || s == simple {
			return nil
		}
		return fmt.Errorf("Fjord supports only %s", class)
	}
}

// config is a parsed connector or task config.
type config struct {
	*mirrorconfig.Config
	props map[string]string
}

func parseConfig(props map[string]string) (*config, error) {
	c, err := mirrorconfig.Parse(ConfigDef(), props)
	if err != nil {
		return nil, err
	}
	return &config{Config: c, props: props}, nil
}

// interval is an enabled/interval pair's period, negative when disabled
// (MM2's convention).
func (c *config) interval(enabled, seconds string) time.Duration {
	if !c.Bool(enabled) {
		return -1
	}
	return time.Duration(c.Long(seconds)) * time.Second
}

func (c *config) emitCheckpointsInterval() time.Duration {
	return c.interval(EmitCheckpointsEnabled, EmitCheckpointsIntervalSeconds)
}

func (c *config) refreshGroupsInterval() time.Duration {
	return c.interval(RefreshGroupsEnabled, RefreshGroupsIntervalSeconds)
}

func (c *config) syncGroupOffsetsInterval() time.Duration {
	return c.interval(SyncGroupOffsetsEnabled, SyncGroupOffsetsIntervalSeconds)
}

// offsetSyncsCluster is the cluster holding the offset-syncs topic
// (mirrorconfig.Source or mirrorconfig.Target).
func (c *config) offsetSyncsCluster() string { return c.String(mirrorconfig.OffsetSyncsTopicLocation) }

// offsetSyncsTopic is named after the other cluster of the flow:
// mm2-offset-syncs.<target>.internal on the source, or
// mm2-offset-syncs.<source>.internal on the target.
func (c *config) offsetSyncsTopic() string {
	other := c.TargetClusterAlias()
	if c.offsetSyncsCluster() == mirrorconfig.Target {
		other = c.SourceClusterAlias()
	}
	return c.ReplicationPolicy().OffsetSyncsTopic(other)
}

// checkpointsTopic is <source>.checkpoints.internal on the target.
func (c *config) checkpointsTopic() string {
	return c.ReplicationPolicy().CheckpointsTopic(c.SourceClusterAlias())
}

func (c *config) taskGroups() []string { return c.List(TaskAssignedGroups) }

// validate is MirrorCheckpointConfig.validate: the cross-key errors.
func validate(props map[string]string) map[string]string {
	out := map[string]string{}
	if strings.TrimSpace(props[mirrorconfig.Enabled]) == "false" {
		return out
	}
	if strings.TrimSpace(props[EmitCheckpointsEnabled]) == "false" {
		out[EmitCheckpointsEnabled] = "MirrorCheckpointConnector can't run with " + EmitCheckpointsEnabled + " set to false"
	}
	if strings.TrimSpace(props[mirrorconfig.EmitOffsetSyncsEnabled]) == "false" {
		out[mirrorconfig.EmitOffsetSyncsEnabled] = "MirrorCheckpointConnector can't run without offset syncs"
	}
	return out
}
