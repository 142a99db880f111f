package batch

// Building batches: the group coordinator writes __consumer_offsets records
// and transaction markers, compaction rewrites filtered batches, and the
// broker recompresses batches for topics whose compression.type differs
// from the producer's. Build follows Kafka's MemoryRecordsBuilder:
//
//   - baseTimestamp is the first record's timestamp, or the delete horizon
//     when one is set (KIP-534), and every record's delta is taken from it;
//   - maxTimestamp is the largest record timestamp, or the log append time
//     for LogAppendTime batches;
//   - lastOffsetDelta may be forced past the last record, as
//     MemoryRecords.filterTo does with overrideLastOffset so that a
//     compacted batch keeps its offset range and the producer's last
//     sequence;
//   - a batch without records is written as DefaultRecordBatch
//     .writeEmptyHeader does: uncompressed, baseTimestamp -1, maxTimestamp
//     from the header. Compaction keeps such batches for producer state.

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"
)

// Producer identifies an idempotent or transactional producer's batch.
type Producer struct {
	ID           int64
	Epoch        int16
	BaseSequence int32
}

// BuildHeader holds the batch fields Build cannot derive from the records.
// The zero value is an ordinary batch at offset 0 with no producer.
type BuildHeader struct {
	BaseOffset int64
	// PartitionLeaderEpoch is outside the CRC; the log overwrites it on
	// append. Kafka writes -1 when unknown.
	PartitionLeaderEpoch int32
	// LastOffsetDelta is a floor for the batch's lastOffsetDelta: Build
	// uses the larger of it and the last record's delta. Compaction sets
	// the original batch's value so the range survives removed records.
	LastOffsetDelta int32
	// Producer is nil for a batch with no producer (id, epoch and base
	// sequence all -1 on the wire).
	Producer      *Producer
	Transactional bool
	Control       bool
	// LogAppendTime marks the batch's timestamps as LogAppendTime;
	// MaxTimestamp is then the append time and is written as the batch's
	// maxTimestamp. MaxTimestamp is also the timestamp of a batch with no
	// records. Otherwise it is ignored and derived from the records.
	LogAppendTime bool
	MaxTimestamp  int64
	// DeleteHorizonMs, when HasDeleteHorizon, becomes the baseTimestamp
	// and sets the delete-horizon attribute (KIP-534).
	HasDeleteHorizon bool
	DeleteHorizonMs  int64
}

// BuildHeader returns the fields needed to rebuild b around other records:
// compaction filters records and calls Build(dst, b.BuildHeader(), kept,
// b.Codec()). The delete horizon is carried over if b has one.
func (b Batch) BuildHeader() BuildHeader {
	h := BuildHeader{
		BaseOffset:           b.BaseOffset(),
		PartitionLeaderEpoch: b.LeaderEpoch(),
		LastOffsetDelta:      b.LastOffsetDelta(),
		Transactional:        b.Transactional(),
		Control:              b.Control(),
		LogAppendTime:        b.LogAppendTime(),
		MaxTimestamp:         b.MaxTimestamp(),
	}
	if b.ProducerID() >= 0 || b.ProducerEpoch() >= 0 || b.BaseSequence() >= 0 {
		h.Producer = &Producer{ID: b.ProducerID(), Epoch: b.ProducerEpoch(), BaseSequence: b.BaseSequence()}
	}
	h.DeleteHorizonMs, h.HasDeleteHorizon = b.DeleteHorizon()
	return h
}

// scratchPool holds buffers for records awaiting compression.
var scratchPool = sync.Pool{New: func() any { return new([]byte) }}

// Build appends a v2 batch of recs to dst. Record offsets must increase
// strictly, starting at or after h.BaseOffset and within MaxInt32 of it.
// The records are compressed with codec, except that a batch without
// records is always uncompressed. The CRC is computed last.
func Build(dst []byte, h BuildHeader, recs []Record, codec Codec) ([]byte, error) {
	if codec < CodecNone || codec > CodecZstd {
		return dst, fmt.Errorf("build batch: unknown codec %s", codec)
	}
	if h.LastOffsetDelta < 0 {
		return dst, fmt.Errorf("build batch: negative lastOffsetDelta %d", h.LastOffsetDelta)
	}
	if len(recs) > math.MaxInt32 {
		return dst, fmt.Errorf("build batch: %d records", len(recs))
	}
	last := h.LastOffsetDelta
	prev := int64(-1)
	baseTS, maxTS := int64(-1), int64(-1)
	for i := range recs {
		d := recs[i].Offset - h.BaseOffset
		if d <= prev || d > math.MaxInt32 {
			return dst, fmt.Errorf("build batch: record %d offset %d: offsets must increase from base offset %d by at most %d",
				i, recs[i].Offset, h.BaseOffset, math.MaxInt32)
		}
		prev = d
		if ts := recs[i].Timestamp; i == 0 || ts > maxTS {
			maxTS = ts
		}
	}
	if len(recs) > 0 {
		last = max(last, int32(prev))
		baseTS = recs[0].Timestamp
	} else {
		codec, maxTS = CodecNone, h.MaxTimestamp
	}
	if h.HasDeleteHorizon && len(recs) > 0 {
		baseTS = h.DeleteHorizonMs
	}
	if h.LogAppendTime {
		maxTS = h.MaxTimestamp
	}

	start := len(dst)
	dst = append(dst, make([]byte, HeaderSize)...)
	var err error
	if codec == CodecNone {
		dst = appendRecords(dst, recs, h.BaseOffset, baseTS)
	} else {
		sp := scratchPool.Get().(*[]byte)
		raw := appendRecords((*sp)[:0], recs, h.BaseOffset, baseTS)
		dst, err = Compress(codec, dst, raw)
		if cap(raw) <= 4<<20 {
			*sp = raw
		}
		scratchPool.Put(sp)
		if err != nil {
			return dst[:start], fmt.Errorf("build batch: %w", err)
		}
	}
	if len(dst)-start-LogOverhead > math.MaxInt32 {
		return dst[:start], fmt.Errorf("build batch: %d bytes is over the batch size limit", len(dst)-start)
	}

	attrs := int16(codec)
	if h.LogAppendTime {
		attrs |= AttrTimestampType
	}
	if h.Transactional {
		attrs |= AttrTransactional
	}
	if h.Control {
		attrs |= AttrControl
	}
	if h.HasDeleteHorizon && len(recs) > 0 {
		attrs |= AttrDeleteHorizonFlag
	}
	pid, epoch, seq := int64(-1), int16(-1), int32(-1)
	if p := h.Producer; p != nil {
		pid, epoch, seq = p.ID, p.Epoch, p.BaseSequence
	}
	b := Batch(dst[start:])
	be := binary.BigEndian
	be.PutUint64(b[offBaseOffset:], uint64(h.BaseOffset))
	be.PutUint32(b[offBatchLength:], uint32(len(b)-LogOverhead))
	be.PutUint32(b[offLeaderEpoch:], uint32(h.PartitionLeaderEpoch))
	b[offMagic] = 2
	be.PutUint16(b[offAttributes:], uint16(attrs))
	be.PutUint32(b[offLastOffsetDelta:], uint32(last))
	be.PutUint64(b[offBaseTimestamp:], uint64(baseTS))
	be.PutUint64(b[offMaxTimestamp:], uint64(maxTS))
	be.PutUint64(b[offProducerID:], uint64(pid))
	be.PutUint16(b[offProducerEpoch:], uint16(epoch))
	be.PutUint32(b[offBaseSequence:], uint32(seq))
	be.PutUint32(b[offRecordsCount:], uint32(len(recs)))
	b.UpdateCRC()
	return dst, nil
}

// appendRecords encodes recs with deltas from baseOffset and baseTS.
func appendRecords(dst []byte, recs []Record, baseOffset, baseTS int64) []byte {
	for i := range recs {
		r := &recs[i]
		dst = appendRecord(dst, r, int32(r.Offset-baseOffset), r.Timestamp-baseTS)
	}
	return dst
}

// appendRecord encodes one record; see the layout in records.go.
func appendRecord(dst []byte, r *Record, offDelta int32, tsDelta int64) []byte {
	n := 1 + varintLen(tsDelta) + varintLen(int64(offDelta)) +
		bytesLen(r.Key) + bytesLen(r.Value) + varintLen(int64(len(r.Headers)))
	for _, h := range r.Headers {
		n += varintLen(int64(len(h.Key))) + len(h.Key) + bytesLen(h.Value)
	}
	dst = binary.AppendVarint(dst, int64(n))
	dst = append(dst, byte(r.Attributes))
	dst = binary.AppendVarint(dst, tsDelta)
	dst = binary.AppendVarint(dst, int64(offDelta))
	dst = appendBytes(dst, r.Key)
	dst = appendBytes(dst, r.Value)
	dst = binary.AppendVarint(dst, int64(len(r.Headers)))
	for _, h := range r.Headers {
		dst = binary.AppendVarint(dst, int64(len(h.Key)))
		dst = append(dst, h.Key...)
		dst = appendBytes(dst, h.Value)
	}
	return dst
}

func appendBytes(dst, b []byte) []byte {
	if b == nil {
		return binary.AppendVarint(dst, -1)
	}
	return append(binary.AppendVarint(dst, int64(len(b))), b...)
}

func bytesLen(b []byte) int {
	if b == nil {
		return 1
	}
	return varintLen(int64(len(b))) + len(b)
}

// varintLen is the size of v zigzag-encoded.
func varintLen(v int64) int {
	u := uint64(v<<1) ^ uint64(v>>63)
	n := 1
	for u >= 0x80 {
		u >>= 7
		n++
	}
	return n
}

// Recompress appends b re-encoded with codec: the same records, offsets,
// timestamps, producer fields and flags, a new CRC. The records must be
// well formed (they are walked); decompression is bounded by
// DefaultMaxSize. See Decoder.Recompress for a bound of your own.
func Recompress(dst []byte, b Batch, codec Codec) ([]byte, error) {
	d := decoders.Get().(*Decoder)
	defer putDecoder(d)
	out, _, err := d.Recompress(dst, b, codec)
	return out, err
}

// Recompress appends b re-encoded with codec and returns the Summary of its
// records, so that the broker's produce path decompresses once for both
// checking and recompressing. The records section is carried over byte for
// byte, only recompressed; every header field but the codec bits and the
// CRC is kept. A batch without records, or already in codec, is appended
// unchanged (after the walk).
func (d *Decoder) Recompress(dst []byte, b Batch, codec Codec) ([]byte, Summary, error) {
	if codec < CodecNone || codec > CodecZstd {
		return dst, Summary{}, fmt.Errorf("recompress: unknown codec %s", codec)
	}
	recs, err := d.RecordsBytes(b)
	if err != nil {
		return dst, Summary{}, fmt.Errorf("recompress: %w", err)
	}
	s, err := checkRecords(recs, b)
	if err != nil {
		return dst, s, fmt.Errorf("recompress: %w", err)
	}
	if b.Codec() == codec || b.NumRecords() == 0 {
		return append(dst, b...), s, nil
	}
	start := len(dst)
	dst = append(dst, b[:HeaderSize]...)
	if dst, err = Compress(codec, dst, recs); err != nil {
		return dst[:start], s, fmt.Errorf("recompress %s: %w", b, err)
	}
	if len(dst)-start-LogOverhead > math.MaxInt32 {
		return dst[:start], s, fmt.Errorf("recompress %s: %d bytes is over the batch size limit", b, len(dst)-start)
	}
	out := Batch(dst[start:])
	binary.BigEndian.PutUint32(out[offBatchLength:], uint32(len(out)-LogOverhead))
	out.setAttributes(out.Attributes()&^AttrCompressionMask | int16(codec))
	out.UpdateCRC()
	return dst, s, nil
}
