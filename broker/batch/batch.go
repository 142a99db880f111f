// Package batch reads and edits Kafka record batches (message format v2) in
// place, as raw bytes.
//
// The broker never decodes records on its hot path: a produced batch is
// validated (length, magic, CRC-32C), its base offset is rewritten, and the
// same bytes go to disk and later to consumers. This package is the one place
// that knows the fixed 61-byte header layout:
//
//	baseOffset           int64   0
//	batchLength          int32   8   (bytes after this field)
//	partitionLeaderEpoch int32  12
//	magic                int8   16   (2)
//	crc                  uint32 17   (CRC-32C of attributes..end)
//	attributes           int16  21
//	lastOffsetDelta      int32  23
//	baseTimestamp        int64  27
//	maxTimestamp         int64  35
//	producerId           int64  43
//	producerEpoch        int16  51
//	baseSequence         int32  53
//	recordsCount         int32  57
//	records              ...    61
//
// baseOffset and partitionLeaderEpoch lie outside the CRC, so the broker can
// set them without recomputing it.
//
// Looking inside a batch is for the paths that must: on produce, the broker
// walks an uncompressed batch's records with Batch.CheckRecords (no
// allocation) or a compressed one with Decoder.Check, and re-encodes with
// Decoder.Recompress when the topic's compression.type differs; compaction
// iterates records with Decoder.Records and writes the survivors with Build
// around the original header (Batch.BuildHeader); the group coordinator
// builds its __consumer_offsets batches with Build. records.go holds the
// record format and the walk, build.go building and recompressing, and
// compress.go the four codecs with the framings Kafka's clients write,
// pooled encoder state and limits against decompression bombs.
package batch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Header field offsets.
const (
	offBaseOffset      = 0
	offBatchLength     = 8
	offLeaderEpoch     = 12
	offMagic           = 16
	offCRC             = 17
	offAttributes      = 21
	offLastOffsetDelta = 23
	offBaseTimestamp   = 27
	offMaxTimestamp    = 35
	offProducerID      = 43
	offProducerEpoch   = 51
	offBaseSequence    = 53
	offRecordsCount    = 57

	// HeaderSize is the size of the v2 batch header, records follow it.
	HeaderSize = 61
	// LogOverhead is the size of baseOffset + batchLength, the part of a
	// batch not counted by batchLength.
	LogOverhead = 12
)

// Attribute bits.
const (
	AttrCompressionMask   = 0x07
	AttrTimestampType     = 0x08 // set: LogAppendTime
	AttrTransactional     = 0x10
	AttrControl           = 0x20
	AttrDeleteHorizonFlag = 0x40 // KIP-534: baseTimestamp holds the delete horizon
)

// Codec is a batch compression codec as numbered in the attributes.
type Codec int8

const (
	CodecNone Codec = iota
	CodecGzip
	CodecSnappy
	CodecLZ4
	CodecZstd
)

func (c Codec) String() string {
	switch c {
	case CodecNone:
		return "none"
	case CodecGzip:
		return "gzip"
	case CodecSnappy:
		return "snappy"
	case CodecLZ4:
		return "lz4"
	case CodecZstd:
		return "zstd"
	}
	return fmt.Sprintf("codec(%d)", int8(c))
}

// Errors returned by validation. The broker maps them to Kafka error codes:
// ErrCorrupt and ErrCRC to CORRUPT_MESSAGE, ErrMagic to
// UNSUPPORTED_FOR_MESSAGE_FORMAT, ErrTruncated to CORRUPT_MESSAGE.
var (
	ErrTruncated = errors.New("record batch truncated")
	ErrCorrupt   = errors.New("corrupt record batch")
	ErrCRC       = errors.New("record batch CRC mismatch")
	ErrMagic     = errors.New("unsupported record batch magic")
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Batch is a view of one record batch. It aliases the bytes it was made
// from: setters write through to them.
type Batch []byte

// Size returns the total size of the batch whose header starts at b
// (LogOverhead + batchLength), or -1 if b is shorter than the length prefix.
func Size(b []byte) int {
	if len(b) < LogOverhead {
		return -1
	}
	return LogOverhead + int(int32(binary.BigEndian.Uint32(b[offBatchLength:])))
}

// Next splits the first batch off b. It checks only that the length prefix
// is sane and the whole batch is present; call Validate for the rest.
func Next(b []byte) (first Batch, rest []byte, err error) {
	if len(b) < LogOverhead {
		return nil, nil, ErrTruncated
	}
	n := Size(b)
	if n < HeaderSize {
		return nil, nil, fmt.Errorf("%w: batch length %d below header size", ErrCorrupt, n-LogOverhead)
	}
	if n > len(b) {
		return nil, nil, ErrTruncated
	}
	return Batch(b[:n:n]), b[n:], nil
}

// Validate checks the magic byte, the header's internal consistency and the
// CRC. It does not look inside compressed records.
func (b Batch) Validate() error {
	if len(b) < HeaderSize {
		return ErrTruncated
	}
	if Size(b) != len(b) {
		return fmt.Errorf("%w: batch length %d does not match %d bytes", ErrCorrupt, Size(b)-LogOverhead, len(b)-LogOverhead)
	}
	if m := b[offMagic]; m != 2 {
		return fmt.Errorf("%w %d", ErrMagic, m)
	}
	if crc32.Checksum(b[offAttributes:], castagnoli) != b.CRC() {
		return ErrCRC
	}
	if b.LastOffsetDelta() < 0 || b.NumRecords() < 0 {
		return fmt.Errorf("%w: negative lastOffsetDelta or record count", ErrCorrupt)
	}
	if c := b.Codec(); c > CodecZstd {
		return fmt.Errorf("%w: unknown compression codec %d", ErrCorrupt, c)
	}
	return nil
}

func (b Batch) BaseOffset() int64      { return int64(binary.BigEndian.Uint64(b[offBaseOffset:])) }
func (b Batch) SetBaseOffset(o int64)  { binary.BigEndian.PutUint64(b[offBaseOffset:], uint64(o)) }
func (b Batch) LastOffset() int64      { return b.BaseOffset() + int64(b.LastOffsetDelta()) }
func (b Batch) NextOffset() int64      { return b.LastOffset() + 1 }
func (b Batch) LeaderEpoch() int32     { return int32(binary.BigEndian.Uint32(b[offLeaderEpoch:])) }
func (b Batch) SetLeaderEpoch(e int32) { binary.BigEndian.PutUint32(b[offLeaderEpoch:], uint32(e)) }
func (b Batch) Magic() int8            { return int8(b[offMagic]) }
func (b Batch) CRC() uint32            { return binary.BigEndian.Uint32(b[offCRC:]) }
func (b Batch) Attributes() int16      { return int16(binary.BigEndian.Uint16(b[offAttributes:])) }
func (b Batch) Codec() Codec           { return Codec(b.Attributes() & AttrCompressionMask) }
func (b Batch) LogAppendTime() bool    { return b.Attributes()&AttrTimestampType != 0 }
func (b Batch) Transactional() bool    { return b.Attributes()&AttrTransactional != 0 }
func (b Batch) Control() bool          { return b.Attributes()&AttrControl != 0 }
func (b Batch) HasDeleteHorizon() bool { return b.Attributes()&AttrDeleteHorizonFlag != 0 }
func (b Batch) LastOffsetDelta() int32 { return int32(binary.BigEndian.Uint32(b[offLastOffsetDelta:])) }
func (b Batch) BaseTimestamp() int64   { return int64(binary.BigEndian.Uint64(b[offBaseTimestamp:])) }
func (b Batch) MaxTimestamp() int64    { return int64(binary.BigEndian.Uint64(b[offMaxTimestamp:])) }
func (b Batch) ProducerID() int64      { return int64(binary.BigEndian.Uint64(b[offProducerID:])) }
func (b Batch) ProducerEpoch() int16   { return int16(binary.BigEndian.Uint16(b[offProducerEpoch:])) }
func (b Batch) BaseSequence() int32    { return int32(binary.BigEndian.Uint32(b[offBaseSequence:])) }
func (b Batch) NumRecords() int32      { return int32(binary.BigEndian.Uint32(b[offRecordsCount:])) }
func (b Batch) RecordsBytes() []byte   { return b[HeaderSize:] }
func (b Batch) Idempotent() bool       { return b.ProducerID() >= 0 }
func (b Batch) LastSequence() int32    { return IncSequence(b.BaseSequence(), b.LastOffsetDelta()) }
func (b Batch) Header() Batch          { return b[:HeaderSize] }
func (b Batch) String() string {
	return fmt.Sprintf("batch[base=%d last=%d n=%d codec=%s size=%d]", b.BaseOffset(), b.LastOffset(), b.NumRecords(), b.Codec(), len(b))
}
func (b Batch) setAttributes(a int16)    { binary.BigEndian.PutUint16(b[offAttributes:], uint16(a)) }
func (b Batch) setMaxTimestamp(ts int64) { binary.BigEndian.PutUint64(b[offMaxTimestamp:], uint64(ts)) }
func (b Batch) setBaseTimestamp(ts int64) {
	binary.BigEndian.PutUint64(b[offBaseTimestamp:], uint64(ts))
}

// DeleteHorizon returns the delete horizon (KIP-534) that compaction stored
// in baseTimestamp, and whether the batch has one. Record timestamps stay
// baseTimestamp + delta either way.
func (b Batch) DeleteHorizon() (int64, bool) {
	if !b.HasDeleteHorizon() {
		return -1, false
	}
	return b.BaseTimestamp(), true
}

// SetLogAppendTime marks the batch as LogAppendTime with the given time as
// its max timestamp, as Kafka does for topics with
// message.timestamp.type=LogAppendTime, and rewrites the CRC. Consumers
// read every record's timestamp as ts.
func (b Batch) SetLogAppendTime(ts int64) {
	b.setAttributes(b.Attributes() | AttrTimestampType)
	b.setMaxTimestamp(ts)
	b.UpdateCRC()
}

// UpdateCRC recomputes the CRC after an edit inside the CRC's range.
func (b Batch) UpdateCRC() {
	binary.BigEndian.PutUint32(b[offCRC:], crc32.Checksum(b[offAttributes:], castagnoli))
}

// IncSequence adds n to a producer sequence number, wrapping at MaxInt32 to
// 0 as Kafka's DefaultRecordBatch.incrementSequence does.
func IncSequence(seq, n int32) int32 {
	if seq > int32(^uint32(0)>>1)-n {
		return n - (int32(^uint32(0)>>1) - seq) - 1
	}
	return seq + n
}
