package log

import (
	"errors"
	"log/slog"
	"math"
	"os"
	"time"
)

// Config holds a partition's effective topic-level log settings, named after
// Kafka's topic configs. Zero values are not defaults: start from
// DefaultConfig and override.
type Config struct {
	SegmentBytes       int64 // segment.bytes
	SegmentMs          int64 // segment.ms
	SegmentIndexBytes  int32 // segment.index.bytes: roll when an index would outgrow it
	IndexIntervalBytes int32 // index.interval.bytes
	RetentionMs        int64 // retention.ms, -1 = forever
	RetentionBytes     int64 // retention.bytes, -1 = unlimited
	Compact, Delete    bool  // cleanup.policy=compact / delete / compact,delete
	DeleteRetentionMs  int64 // delete.retention.ms: how long tombstones survive compaction
	MinCompactionLagMs int64 // min.compaction.lag.ms
	MaxCompactionLagMs int64 // max.compaction.lag.ms

	MinCleanableDirtyRatio float64 // min.cleanable.dirty.ratio

	// FlushMessages and FlushMs (flush.messages, flush.ms) force an fsync
	// after that many messages or that much time. Kafka's default is never:
	// durability comes from replication and the page cache.
	FlushMessages, FlushMs int64

	FileDeleteDelayMs int64 // file.delete.delay.ms: deleted segments stay readable this long
}

// DefaultConfig returns Kafka's defaults for every topic-level log config.
func DefaultConfig() Config {
	return Config{
		SegmentBytes:           1 << 30,
		SegmentMs:              7 * 24 * 3600 * 1000,
		SegmentIndexBytes:      10 << 20,
		IndexIntervalBytes:     4096,
		RetentionMs:            7 * 24 * 3600 * 1000,
		RetentionBytes:         -1,
		Delete:                 true,
		DeleteRetentionMs:      24 * 3600 * 1000,
		MinCompactionLagMs:     0,
		MaxCompactionLagMs:     math.MaxInt64,
		MinCleanableDirtyRatio: 0.5,
		FlushMessages:          math.MaxInt64,
		FlushMs:                math.MaxInt64,
		FileDeleteDelayMs:      60000,
	}
}

// maxOffsetEntries is how many offset index entries fit in
// SegmentIndexBytes (at least one, so a tiny setting still makes progress).
func (c *Config) maxOffsetEntries() int {
	return max(int(c.SegmentIndexBytes)/offsetEntrySize, 1)
}

func (c *Config) maxTimeEntries() int {
	return max(int(c.SegmentIndexBytes)/timeEntrySize, 1)
}

// Options are process-wide settings shared by every log.
type Options struct {
	Logger *slog.Logger
	// Now is the clock; tests inject one to drive retention, rolls,
	// compaction lag and producer expiry.
	Now func() time.Time
	// ProducerIDExpirationMs is producer.id.expiration.ms (default 1 day).
	ProducerIDExpirationMs int64
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.ProducerIDExpirationMs <= 0 {
		o.ProducerIDExpirationMs = 86400000
	}
	return o
}

// Errors the broker maps to Kafka error codes. They are wrapped with
// context; test with errors.Is.
var (
	// ErrOffsetOutOfRange: a read or DeleteRecords outside
	// [LogStartOffset, LogEndOffset] (OFFSET_OUT_OF_RANGE).
	ErrOffsetOutOfRange = errors.New("offset out of range")
	// ErrOutOfOrderSequence: an idempotent batch whose sequence does not
	// follow the producer's last one (OUT_OF_ORDER_SEQUENCE_NUMBER).
	ErrOutOfOrderSequence = errors.New("out of order sequence number")
	// ErrInvalidProducerEpoch: a batch from an older producer epoch than
	// the log has seen (INVALID_PRODUCER_EPOCH).
	ErrInvalidProducerEpoch = errors.New("invalid producer epoch")
	// ErrUnknownProducerID (UNKNOWN_PRODUCER_ID) is never returned by
	// Append: since KIP-360 (Kafka 2.5) a producer the log does not know,
	// for example because retention removed its state, may continue with
	// any sequence. It is kept so callers can map it uniformly.
	ErrUnknownProducerID = errors.New("unknown producer id")
	// ErrRecordBatchTooLarge: a batch larger than segment.bytes can never
	// fit in a segment (RECORD_BATCH_TOO_LARGE).
	ErrRecordBatchTooLarge = errors.New("record batch larger than segment.bytes")
	// ErrInvalidOffsets: a replica append (AssignOffsets false) whose
	// offsets go backwards or below the log end offset.
	ErrInvalidOffsets = errors.New("invalid record batch offsets")
	// ErrClosed: the log was closed or deleted.
	ErrClosed = errors.New("log closed")
	// ErrLogFailed: an earlier I/O error left the log in an unknown state;
	// it refuses writes until reopened (Kafka takes the dir offline).
	ErrLogFailed = errors.New("log failed after an I/O error")
)

// AppendOptions say how Append treats the batches.
type AppendOptions struct {
	// LeaderEpoch is written into every batch's partitionLeaderEpoch when
	// AssignOffsets is set, and recorded in the leader epoch cache.
	LeaderEpoch int32
	// AssignOffsets: leader append, the log assigns offsets and checks
	// producer sequences. False: replica append, batches keep their
	// offsets and epochs and producer state is updated without checks.
	AssignOffsets bool
}

// AppendResult describes an append.
type AppendResult struct {
	FirstOffset, LastOffset int64
	LogStartOffset          int64
	LogEndOffset            int64 // after the append
	// MaxTimestamp is the largest batch max timestamp and
	// OffsetOfMaxTimestamp the last offset of the batch holding it.
	MaxTimestamp, OffsetOfMaxTimestamp int64
	// Duplicate: an idempotent producer retried a batch the log already
	// has. Nothing was written; the offsets are the original ones.
	Duplicate bool
	// Bytes is how many bytes were written.
	Bytes int
}

// FileRange is a byte range of a segment file. The file stays open for at
// least file.delete.delay.ms after its segment is deleted, so a range can
// be read (or sent with sendfile) after Read returns.
type FileRange struct {
	File *os.File
	Pos  int64
	Size int
}

// ReadResult is the whole batches a Read found, as file ranges.
type ReadResult struct {
	Ranges []FileRange
	Size   int
}

// AppendTo reads the ranges into dst. It fails if a range was truncated
// meanwhile (TruncateTo on a follower), which the caller treats as a
// retriable read error.
func (r ReadResult) AppendTo(dst []byte) ([]byte, error) {
	for _, fr := range r.Ranges {
		n := len(dst)
		dst = growLen(dst, fr.Size)
		if _, err := fr.File.ReadAt(dst[n:], fr.Pos); err != nil {
			return dst[:n], &os.PathError{Op: "read", Path: fr.File.Name(), Err: err}
		}
	}
	return dst, nil
}

// growLen extends b by n bytes, reallocating at most once.
func growLen(b []byte, n int) []byte {
	if cap(b)-len(b) < n {
		nb := make([]byte, len(b), len(b)+n)
		copy(nb, b)
		b = nb
	}
	return b[:len(b)+n]
}

// ProducerState is one idempotent producer's state, as DescribeProducers
// reports it.
type ProducerState struct {
	ProducerID       int64
	Epoch            int16
	LastSequence     int32
	LastTimestamp    int64
	CoordinatorEpoch int32
	TxnStartOffset   int64 // -1: no open transaction
}
