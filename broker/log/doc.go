// Package log is the durable storage under every partition: Kafka's
// segmented log, byte for byte in Kafka's on-disk layout, with its crash
// recovery, retention, compaction and idempotent-producer state.
//
// Usage: the broker opens a Manager over log.dirs, which loads every
// partition, and asks it for logs:
//
//	m, err := log.OpenManager(log.ManagerConfig{Dirs: dirs}, configFor, log.Options{Logger: lg})
//	m.Start(ctx) // retention, flush.ms, checkpoints, cleaner
//	l, err := m.Create("orders", 0, topicID, cfg)
//	res, err := l.Append(batches, log.AppendOptions{LeaderEpoch: e, AssignOffsets: true})
//	rr, err := l.Read(offset, maxBytes, highWatermark, true)
//	buf, err = rr.AppendTo(buf) // or sendfile rr.Ranges
//	m.Close() // flush, checkpoints, clean shutdown marker
//
// Layout. A log dir holds meta.properties, the text checkpoints
// recovery-point-offset-checkpoint, log-start-offset-checkpoint and
// cleaner-offset-checkpoint, a .kafka_cleanshutdown marker after a clean
// stop, and one directory per partition, <topic>-<partition>, with
// partition.metadata (topic id), leader-epoch-checkpoint, producer
// snapshots <offset>.snapshot, and segments named by base offset:
// 00000000000000000000.log with its sparse .index (4-byte relative offset,
// 4-byte position, one entry per index.interval.bytes) and .timeindex
// (8-byte timestamp, 4-byte relative offset, increasing max timestamps).
// Golden tests compare every format with files Apache Kafka 4.4 wrote, and
// the Manager opens a data dir Kafka shut down.
//
// Writes. Batches arrive validated (CRC, magic); Append rewrites only the
// base offset and partition leader epoch (outside the CRC), checks
// idempotent producers' sequences (duplicates of the last five batches
// return their original offsets), rolls the segment when Kafka would
// (segment.bytes, segment.ms from the first batch's timestamp, a full
// index, relative offset overflow) and writes everything with one pwrite,
// plus sparse index entries. Nothing is decoded per record. fsync happens
// when a segment rolls (in the background), on Flush, with flush.messages
// or flush.ms, and at Close; the recovery point records how far data is
// known durable.
//
// Reads. Read takes no lock: it loads the immutable segment list and the
// published end offset, finds the batch holding the offset through the
// in-memory index and returns file ranges of whole batches, which the
// broker can send with sendfile. Deleted segments stay open for
// file.delete.delay.ms, so ranges handed out remain readable.
//
// Recovery. After a clean shutdown nothing is rescanned: each segment is a
// stat, indexes of closed segments load on first use, and only the active
// segment's tail past its last index entry is read, so start-up time does
// not grow with the data. After a crash, segments from the recovery point
// on are validated batch by batch (length, CRC, increasing offsets); the
// first invalid batch and everything after it are cut off, indexes are
// rebuilt, and producer state is reloaded from the newest snapshot plus
// the batch headers after it. Missing or corrupt indexes are rebuilt
// whenever found.
//
// Retention and compaction follow UnifiedLog.deleteOldSegments and
// LogCleaner; see retention.go and compact.go.
package log
