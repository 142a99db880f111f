// Package partitioner decides the encoded partition (the directory part of
// an object key) of each record, as Confluent's storage partitioners do
// (partitioner.class), and names objects exactly as Confluent's S3 sink
// names them.
package partitioner

import (
	"time"

	"github.com/fjordhq/fjord/connect"
)

// Partitioner is one configured partitioner.class.
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
