// Package checkpoint is MirrorMaker 2's MirrorCheckpointConnector
// (org.apache.kafka.connect.mirror.MirrorCheckpointConnector, also
// "MirrorCheckpointConnector" and "mirror-checkpoint"): it translates
// the source cluster's consumer group offsets through the offset syncs
// MirrorSourceConnector writes and emits them as MM2 checkpoint records
// to <source>.checkpoints.internal on the target, so a consumer can fail
// over to the target and continue near where it stopped without skipping
// a record.
//
// Entry points:
//
//	Connector, Task        the connector and its task (registered with
//	                       connect/plugins in init)
//	ConfigDef              MirrorCheckpointConfig's keys
//	OffsetSyncStore        Kafka 3.5+'s offset-sync store and translation
//	LoadOffsetSyncs,       one-off translation from an offset-syncs topic
//	TranslateOffset        (for `fjord mirror status`)
//	DefaultMetrics         checkpoint-latency-ms, a prometheus.Collector
//	                       to register with the /metrics registry
//
// Files: syncstore.go (the store), syncread.go and topicread.go (reading
// the internal topics), checkpointstore.go (last checkpoints, for
// monotonicity across restarts), checkpoints.go (translation of a
// group's offsets), groupsync.go (sync.group.offsets.enabled),
// connector.go, task.go, config.go, metrics.go.
package checkpoint
