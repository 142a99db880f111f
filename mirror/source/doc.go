// Package source is Fjord's MirrorSourceConnector
// (org.apache.kafka.connect.mirror.MirrorSourceConnector): it replicates
// the records of a source cluster's topics into a target cluster, with
// MirrorMaker 2's config keys, defaults, topic naming and offset syncs.
//
// The connector (connector.go) runs on a Connect worker of the target
// cluster. It lists the source's topics (topics.go), creates their remote
// topics on the target with the same partition count and configs, adds
// partitions when the source grows, keeps remote topic configs in step
// (configsync.go) and splits the topic-partitions round robin over
// tasks.max tasks. It also creates the offset-syncs topic.
//
// Each task (task.go) consumes its partitions from the source with its
// own client, from the offsets the worker stored for it, and emits one
// SourceRecord per source record (convert.go) to the remote topic's
// partition of the same number: key, value and headers as BYTES,
// timestamps kept. As records are acknowledged it writes offset syncs
// (offsetsync.go) that MirrorCheckpointConnector translates consumer
// offsets with, and it keeps MM2's per-partition metrics (metrics.go).
//
// With identity naming (IdentityReplicationPolicy), where a topic keeps
// its name on the target, tasks stamp each record with the clusters it
// has passed through (policy.ProvenanceHeader) and do not send a record
// back to a cluster it came from, so two clusters can mirror one topic
// name into each other (active-active) — which MM2 cannot.
//
// Mirror connectors are configured with ByteArrayConverter for keys,
// values and headers (key.converter, value.converter, header.converter),
// as MirrorMaker 2's dedicated mode sets them: the bytes are copied as
// they are.
package source
