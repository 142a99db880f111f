// Package policy names topics across clusters as MirrorMaker 2's
// ReplicationPolicy does (org.apache.kafka.connect.mirror.ReplicationPolicy)
// and decides whether a record may be mirrored to a cluster without
// looping back.
package policy

// ReplicationPolicy is MM2's ReplicationPolicy, method for method.
type ReplicationPolicy interface {
	// FormatRemoteTopic is the name topic of cluster sourceClusterAlias
	// gets on the target ("a.orders" by default, "orders" for identity).
	FormatRemoteTopic(sourceClusterAlias, topic string) string
	// TopicSource is the alias of the cluster a remote topic came from,
	// "" for a local topic.
	TopicSource(topic string) string
	// UpstreamTopic is the topic's name one hop upstream, "" when local.
	UpstreamTopic(topic string) string
	// OriginalTopic follows UpstreamTopic to the topic's first name.
	OriginalTopic(topic string) string
	HeartbeatsTopic() string
	OffsetSyncsTopic(clusterAlias string) string
	CheckpointsTopic(clusterAlias string) string
	IsHeartbeatsTopic(topic string) bool
	IsCheckpointsTopic(topic string) bool
	IsMM2InternalTopic(topic string) bool
	// IsInternalTopic: Kafka's and MM2's internal topics (__consumer_offsets,
	// names starting with "__" or ".", ending in ".internal", ...).
	IsInternalTopic(topic string) bool
}
