// Package partitioner decides the encoded partition (the directory part of
// an object key) of each record, as Confluent's storage partitioners do
// (partitioner.class), and names objects exactly as Confluent's S3 sink
// names them.
//
// Define adds the keys (Confluent's names, types and defaults), Validate
// checks them, New builds the Partitioner and LayoutFrom the object
// naming (Layout.Key, TopicPrefix, ParseKey). Where Fjord differs from
// Confluent it is on purpose:
//   - partitioner.class also takes simple names (FieldPartitioner);
//   - FieldPartitioner also partitions schemaless map values (Confluent
//     fails them);
//   - Validate reports up front what Confluent finds only when a task
//     starts (or on every record: a blank timestamp.field), and refuses
//     partition.duration.ms 0, which Confluent divides by;
//   - path.format prints names (MMM, EEE, a, G) in English only and has
//     no z (zone names); numbers print alike in every locale;
//   - ISO-8601 timestamp strings without an offset are read as UTC (Joda
//     uses the JVM's zone, UTC in Confluent's images);
//   - filename.offset.zero.pad.width 0 pads nothing (Confluent's "%00d"
//     throws).
package partitioner

import (
	"time"

	"github.com/fjordhq/fjord/connect"
)

// Partitioner is one configured partitioner.class (New makes one). Its
// methods may be called from several goroutines at once.
type Partitioner interface {
	// Encode returns the record's encoded partition, e.g. "partition=3"
	// or "year=2026/month=11/day=29/hour=16"; now is the wall clock
	// (the Wallclock timestamp extractor uses it).
	Encode(r *connect.SinkRecord, now time.Time) (string, error)
}

// TimeBased is implemented by the time-based partitioners: Timestamp is
// the record's time in ms by the configured timestamp.extractor, which
// rotate.interval.ms measures (Confluent allows rotate.interval.ms only
// with a time-based partitioner).
type TimeBased interface {
	Timestamp(r *connect.SinkRecord, now time.Time) (int64, error)
}

// PartitionError is Confluent's PartitionException: a record the
// partitioner cannot place. Msg is Confluent's message ("Error encoding
// partition."); Detail is what Confluent only logs beside it (the
// offending type or value), kept in the error text so Fjord's log and
// dead letter queue say why.
type PartitionError struct {
	Msg    string
	Detail string
}

func (e *PartitionError) Error() string {
	if e.Detail == "" {
		return e.Msg
	}
	return e.Msg + " (" + e.Detail + ")"
}

func errEncoding(detail string) error {
	return &PartitionError{Msg: "Error encoding partition.", Detail: detail}
}
