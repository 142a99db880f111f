// Package source is Fjord's MirrorSourceConnector
// (org.apache.kafka.connect.mirror.MirrorSourceConnector): it replicates
// the records of a source cluster's topics into a target cluster, with
// MirrorMaker 2's config keys, defaults, topic naming and offset syncs.
//
// The connector (connector.go) runs on a Connect worker of the target
// cluster. It lists the source's topics (admin.go), creates their remote
// topics on the target with the same partition count and configs, adds
// partitions when the source grows, keeps remote topic configs in step
// (configsync.go), copies the source's topic ACLs to the remote topics
// with MM2's rules (acls.go: literal topic ACLs of mirrored topics, ALLOW
// WRITE left out, ALLOW ALL downgraded to ALLOW READ; a source without an
// authorizer is noted once) and splits the topic-partitions round robin
// over tasks.max tasks (partitions.go). It also creates the offset-syncs
// topic. Where Fjord departs from MM2:
//   - a topic-partition is given to a task only once its remote partition
//     exists, so that no record can make the producer create a remote
//     topic with the broker's defaults or land in another partition;
//     what could not be created is retried with backoff;
//   - a replication factor the cluster cannot have fails the connector
//     with a message saying so (MM2 logs it and replicates nothing);
//   - for a topic that keeps its name (identity naming) config syncs copy
//     only what changed on the source, so that two flows mirroring one
//     topic into each other do not undo each other's changes;
//   - the records one poll emits for a partition share one source offset
//     (the offset before the first of them), except the last, which has
//     its own (task.go, Poll): an offset commit that falls within a
//     poll's records stores the offset before them, so a restart from it
//     copies up to one poll's worth of records again — at least once, as
//     MM2 — and each record costs no map of its own (not with a
//     read_committed source consumer or exactly.once.support=required,
//     where offsets must be exact).
//
// Each task (task.go) consumes its partitions from the source with its
// own client, from the offsets the worker stored for it, and emits one
// SourceRecord per source record (convert.go) to the remote topic's
// partition of the same number: key, value and headers as BYTES,
// timestamps kept. As records are acknowledged it writes offset syncs
// (offsetsync.go) that MirrorCheckpointConnector translates consumer
// offsets with, and it keeps MM2's per-partition metrics (metrics.go;
// RegisterMetrics adds them to a Prometheus registry).
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
