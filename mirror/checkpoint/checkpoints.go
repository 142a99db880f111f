package checkpoint

import (
	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/mirror/filter"
	"github.com/fjordhq/fjord/mirror/policy"
	"github.com/fjordhq/fjord/mirror/records"
)

// Keys of a checkpoint record's source partition and offset (MM2's
// Checkpoint.connectPartition and MirrorUtils.wrapOffset(0)).
const (
	partitionGroupKey     = "group"
	partitionTopicKey     = "topic"
	partitionPartitionKey = "partition"
	offsetKey             = "offset"
)

// committed is a group's committed offset of one upstream partition.
type committed struct {
	offset   int64
	metadata string
}

// checkpointer turns upstream group offsets into checkpoints (the
// translation half of MM2's MirrorCheckpointTask).
type checkpointer struct {
	sourceAlias, targetAlias string
	policy                   policy.ReplicationPolicy
	topics                   filter.TopicFilter
	syncs                    *OffsetSyncStore
	store                    *checkpointStore
}

// remoteTopic is an upstream topic's name on the target: a topic that
// came from the target goes back to its original name (us-west.topic1 ->
// topic1), others get the source's prefix (topic1 -> us-east.topic1).
func (c *checkpointer) remoteTopic(topic string) string {
	if c.policy.TopicSource(topic) == c.targetAlias {
		return c.policy.OriginalTopic(topic)
	}
	return c.policy.FormatRemoteTopic(c.sourceAlias, topic)
}

// checkpoint translates one committed offset; ok is false when the
// partition has no translation. DownstreamOffset is -1 when the offset
// is older than every sync kept.
func (c *checkpointer) checkpoint(group string, tp connect.TopicPartition, off committed) (records.Checkpoint, bool) {
	down, ok := c.syncs.Translate(tp.Topic, tp.Partition, off.offset)
	if !ok {
		return records.Checkpoint{}, false
	}
	return records.Checkpoint{
		ConsumerGroupID: group, Topic: c.remoteTopic(tp.Topic), Partition: tp.Partition,
		UpstreamOffset: off.offset, DownstreamOffset: down, Metadata: off.metadata,
	}, true
}

// checkpointsForGroup returns the checkpoints to emit for a group's
// committed offsets, keyed by remote partition: topics the filter
// accepts, with a translation, and newer than the last checkpoint.
func (c *checkpointer) checkpointsForGroup(group string, offsets map[connect.TopicPartition]committed) map[connect.TopicPartition]records.Checkpoint {
	out := map[connect.TopicPartition]records.Checkpoint{}
	for tp, off := range offsets {
		if !c.topics.ShouldReplicateTopic(tp.Topic) {
			continue
		}
		cp, ok := c.checkpoint(group, tp, off)
		if !ok || cp.DownstreamOffset < 0 || !c.store.isMoreRecent(cp) {
			continue
		}
		out[connect.TopicPartition{Topic: cp.Topic, Partition: cp.Partition}] = cp
	}
	return out
}

// checkpointRecord is the source record of a checkpoint: BYTES key and
// value as MM2 writes them, to partition 0 of the checkpoints topic.
func checkpointRecord(cp records.Checkpoint, topic string, timestampMs int64) *connect.SourceRecord {
	r := connect.NewSourceRecord(
		map[string]any{partitionGroupKey: cp.ConsumerGroupID, partitionTopicKey: cp.Topic, partitionPartitionKey: cp.Partition},
		map[string]any{offsetKey: int64(0)},
		topic, connect.BytesSchema, cp.Key(), connect.BytesSchema, cp.Value())
	r.Partition = 0
	r.Timestamp = timestampMs
	return r
}
