package batch

// Records inside a v2 batch. Each record is
//
//	length         varint  (bytes after this field)
//	attributes     int8    (unused, 0)
//	timestampDelta varlong (from the batch's baseTimestamp)
//	offsetDelta    varint  (from the batch's baseOffset)
//	keyLength      varint  (-1: null key)
//	key            bytes
//	valueLength    varint  (-1: null value, a tombstone)
//	value          bytes
//	headerCount    varint
//	headers        { keyLength varint (>= 0), key, valueLength varint (-1: null), value }
//
// with varints zigzag-encoded as in protobuf; a varint field is at most 5
// bytes, a varlong 10. We decode records by hand rather than through
// kmsg.Record because the walk must not allocate and must check that every
// record's fields add up to exactly its length, which is what Kafka's
// DefaultRecord.readFrom enforces (the tests cross-check both ways against
// kmsg).
//
// Two ways in: Batch.CheckRecords walks an uncompressed batch's records
// without allocating (the broker calls it on every produced batch); a
// Decoder decompresses when needed, reusing its buffer across batches, and
// either checks the records or hands each one to a callback.

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"
)

// Header is a record header. Key is never null on the wire (an empty key is
// allowed); a nil Value is a null value.
type Header struct {
	Key   []byte
	Value []byte
}

// Record is one decoded record. Offsets and timestamps are absolute: the
// iterator adds the batch's base offset and base timestamp to the deltas
// on the wire, and Build subtracts them again. Key, Value and Headers alias
// the batch (or the Decoder's buffer) and are valid only during the
// callback; copy what you keep.
type Record struct {
	// Offset is the batch's base offset plus the record's offset delta.
	Offset int64
	// Timestamp is the batch's base timestamp plus the record's timestamp
	// delta. In a LogAppendTime batch it is the batch's max timestamp, as
	// Kafka's DefaultRecordBatch reports it to consumers.
	Timestamp int64
	// Attributes is the record attributes byte, unused by Kafka today and
	// kept as read.
	Attributes int8
	// Key and Value are nil for null; a zero-length non-nil slice is empty.
	Key, Value []byte
	Headers    []Header
}

// Summary is what a walk over a batch's records found. The broker uses it
// to apply per-record rules without decoding the batch again.
type Summary struct {
	// Records is the number of records walked, equal to NumRecords.
	Records int32
	// Contiguous reports offset deltas of exactly 0..n-1 with
	// lastOffsetDelta n-1, which Kafka requires of batches from clients
	// ("Inconsistent batch offset range"); compacted batches may have gaps.
	Contiguous bool
	// MinTimestamp and MaxTimestamp span the records' own timestamps
	// (baseTimestamp + delta, whatever the batch's timestamp type), for
	// message.timestamp.before/after.max.ms; both -1 with no records.
	MinTimestamp, MaxTimestamp int64
	// NullKeys counts records with a null key, which compacted topics
	// refuse; FirstNullKey is the index of the first, -1 if none.
	NullKeys     int32
	FirstNullKey int32
	// Size is the records section's uncompressed size in bytes.
	Size int
}

// CheckRecords walks the records of an uncompressed batch without
// allocating: the count must match recordsCount, the record lengths must
// cover the records section exactly, every record must parse to exactly its
// length, and offset deltas must increase strictly within
// [0, lastOffsetDelta]. Call Validate first. For compressed batches use a
// Decoder.
func (b Batch) CheckRecords() (Summary, error) {
	if b.Codec() != CodecNone {
		return Summary{}, fmt.Errorf("check records: batch is %s-compressed; use a Decoder", b.Codec())
	}
	return checkRecords(b.RecordsBytes(), b)
}

// Records calls fn for every record of b, decompressing as needed with a
// pooled Decoder bounded by DefaultMaxSize. The Record and the bytes it
// points to are reused after fn returns. An error from fn stops the walk
// and is returned as is.
func (b Batch) Records(fn func(r *Record) error) error {
	d := decoders.Get().(*Decoder)
	defer putDecoder(d)
	return d.Records(b, fn)
}

// A Decoder decompresses and decodes batches, keeping its buffers between
// calls so that steady-state use does not allocate. The zero value is ready
// to use. A Decoder is not safe for concurrent use.
type Decoder struct {
	// MaxSize bounds a batch's decompressed records section in bytes;
	// 0 means DefaultMaxSize. More is an error wrapping ErrTooLarge.
	MaxSize int

	buf []byte
	rec Record
}

var decoders = sync.Pool{New: func() any { return new(Decoder) }}

// putDecoder returns d to the pool unless it grew a buffer too large to
// keep around for everyone.
func putDecoder(d *Decoder) {
	if cap(d.buf) > 4<<20 {
		d.buf = nil
	}
	hs := d.rec.Headers[:0]
	if cap(hs) > 1024 {
		hs = nil
	}
	d.rec = Record{Headers: hs}
	decoders.Put(d)
}

// RecordsBytes returns b's records section uncompressed: b's own bytes for
// an uncompressed batch, else the Decoder's buffer, valid until its next
// use.
func (d *Decoder) RecordsBytes(b Batch) ([]byte, error) {
	if len(b) < HeaderSize {
		return nil, ErrTruncated
	}
	c := b.Codec()
	if c == CodecNone {
		return b.RecordsBytes(), nil
	}
	if b.NumRecords() == 0 && len(b) == HeaderSize {
		return nil, nil // an empty batch has nothing to decompress
	}
	var err error
	d.buf, err = Decompress(c, d.buf[:0], b.RecordsBytes(), d.MaxSize)
	if err != nil {
		return nil, fmt.Errorf("records of %s: %w", b, err)
	}
	return d.buf, nil
}

// Check is CheckRecords for a batch of any codec: it decompresses, then
// walks.
func (d *Decoder) Check(b Batch) (Summary, error) {
	recs, err := d.RecordsBytes(b)
	if err != nil {
		return Summary{}, err
	}
	return checkRecords(recs, b)
}

// Records calls fn for every record of b, decompressing as needed. The
// Record passed to fn and everything it points to are reused once fn
// returns. An error from fn stops the walk and is returned as is; a
// malformed record is an error wrapping ErrCorrupt. Like Kafka's record
// iterator it checks structure only; Check also enforces the offset-delta
// rules.
func (d *Decoder) Records(b Batch, fn func(r *Record) error) error {
	recs, err := d.RecordsBytes(b)
	if err != nil {
		return err
	}
	n := b.NumRecords()
	if n < 0 {
		return fmt.Errorf("%w: negative record count %d", ErrCorrupt, n)
	}
	baseOffset, baseTS := b.BaseOffset(), b.BaseTimestamp()
	logAppend := b.LogAppendTime()
	maxTS := b.MaxTimestamp()
	r := &d.rec
	p := recs
	for i := int32(0); i < n; i++ {
		var offDelta int32
		var tsDelta int64
		p, offDelta, tsDelta, err = readRecord(p, r)
		if err != nil {
			return fmt.Errorf("%w: record %d of %s: %w", ErrCorrupt, i, b, err)
		}
		r.Offset = baseOffset + int64(offDelta)
		r.Timestamp = baseTS + tsDelta
		if logAppend {
			r.Timestamp = maxTS
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	if len(p) != 0 {
		return fmt.Errorf("%w: %d bytes after the last of %d records in %s", ErrCorrupt, len(p), n, b)
	}
	return nil
}

// Record wire errors. They are wrapped with ErrCorrupt and the record's
// position by the callers.
var (
	errVarint       = fmt.Errorf("malformed varint")
	errRecordLength = fmt.Errorf("record length out of range")
	errRecordSize   = fmt.Errorf("record fields do not add up to its length")
	errFieldLength  = fmt.Errorf("field length out of range")
	errHeaderKey    = fmt.Errorf("null header key")
	errHeaderCount  = fmt.Errorf("header count out of range")
)

// checkRecords is the allocation-free walk behind CheckRecords and Check.
func checkRecords(p []byte, b Batch) (Summary, error) {
	s := Summary{MinTimestamp: -1, MaxTimestamp: -1, FirstNullKey: -1, Size: len(p)}
	n, last := b.NumRecords(), b.LastOffsetDelta()
	if n < 0 || last < 0 {
		return s, fmt.Errorf("%w: negative record count %d or lastOffsetDelta %d", ErrCorrupt, n, last)
	}
	baseTS := b.BaseTimestamp()
	prev := int64(-1)
	i := 0
	for k := int32(0); k < n; k++ {
		length, j, ok := varint32(p, i)
		if !ok || length < 0 || int(length) > len(p)-j {
			return s, fmt.Errorf("%w: record %d of %s: %w", ErrCorrupt, k, b, errRecordLength)
		}
		end := j + int(length)
		body := p[:end] // bound every read below by this record's length
		if j >= end {
			return s, fmt.Errorf("%w: record %d of %s: %w", ErrCorrupt, k, b, errRecordSize)
		}
		j++ // attributes
		tsDelta, j, ok := varint64(body, j)
		if !ok {
			return s, fmt.Errorf("%w: record %d timestamp of %s: %w", ErrCorrupt, k, b, errVarint)
		}
		off, j, ok := varint32(body, j)
		if !ok {
			return s, fmt.Errorf("%w: record %d offset delta of %s: %w", ErrCorrupt, k, b, errVarint)
		}
		if int64(off) <= prev || off > last {
			return s, fmt.Errorf("%w: record %d of %s: offset delta %d after %d, last %d", ErrCorrupt, k, b, off, prev, last)
		}
		prev = int64(off)
		var klen int32
		klen, j, ok = varint32(body, j)
		if !ok || klen < -1 || int(klen) > end-j {
			return s, fmt.Errorf("%w: record %d key of %s: %w", ErrCorrupt, k, b, errFieldLength)
		}
		if klen < 0 {
			if s.NullKeys == 0 {
				s.FirstNullKey = k
			}
			s.NullKeys++
		} else {
			j += int(klen)
		}
		if j, ok = skipBytes(body, j, -1); !ok {
			return s, fmt.Errorf("%w: record %d value of %s: %w", ErrCorrupt, k, b, errFieldLength)
		}
		var hn int32
		hn, j, ok = varint32(body, j)
		if !ok || hn < 0 || int(hn) > end-j {
			return s, fmt.Errorf("%w: record %d of %s: %w", ErrCorrupt, k, b, errHeaderCount)
		}
		for h := int32(0); h < hn; h++ {
			if j, ok = skipBytes(body, j, 0); !ok {
				return s, fmt.Errorf("%w: record %d header %d key of %s: %w", ErrCorrupt, k, h, b, errFieldLength)
			}
			if j, ok = skipBytes(body, j, -1); !ok {
				return s, fmt.Errorf("%w: record %d header %d value of %s: %w", ErrCorrupt, k, h, b, errFieldLength)
			}
		}
		if j != end {
			return s, fmt.Errorf("%w: record %d of %s: %w (%d of %d bytes)", ErrCorrupt, k, b, errRecordSize, j-(end-int(length)), length)
		}
		i = end
		ts := baseTS + tsDelta
		if k == 0 || ts < s.MinTimestamp {
			s.MinTimestamp = ts
		}
		if k == 0 || ts > s.MaxTimestamp {
			s.MaxTimestamp = ts
		}
	}
	if i != len(p) {
		return s, fmt.Errorf("%w: %d bytes after the last of %d records in %s", ErrCorrupt, len(p)-i, n, b)
	}
	s.Records = n
	s.Contiguous = n > 0 && last == n-1 // strictly increasing within [0, n-1]
	return s, nil
}

// skipBytes skips a length-prefixed field whose length may be as low as
// minLen (-1 for nullable fields, 0 for header keys).
func skipBytes(p []byte, i int, minLen int32) (int, bool) {
	n, i, ok := varint32(p, i)
	if !ok || n < minLen || int(n) > len(p)-i {
		return i, false
	}
	if n > 0 {
		i += int(n)
	}
	return i, true
}

// readRecord decodes the record at the start of p into r, reusing r's
// header slice, and returns the bytes after it.
func readRecord(p []byte, r *Record) (rest []byte, offDelta int32, tsDelta int64, err error) {
	length, i, ok := varint32(p, 0)
	if !ok || length < 1 || int(length) > len(p)-i {
		return nil, 0, 0, errRecordLength
	}
	body := p[:i+int(length)]
	r.Attributes = int8(body[i])
	i++
	if tsDelta, i, ok = varint64(body, i); !ok {
		return nil, 0, 0, errVarint
	}
	if offDelta, i, ok = varint32(body, i); !ok {
		return nil, 0, 0, errVarint
	}
	if r.Key, i, ok = readBytes(body, i, -1); !ok {
		return nil, 0, 0, errFieldLength
	}
	if r.Value, i, ok = readBytes(body, i, -1); !ok {
		return nil, 0, 0, errFieldLength
	}
	hn, i, ok := varint32(body, i)
	// Each header takes at least two bytes: this bounds the slice we grow.
	if !ok || hn < 0 || int(hn) > (len(body)-i)/2 {
		return nil, 0, 0, errHeaderCount
	}
	r.Headers = r.Headers[:0]
	for h := int32(0); h < hn; h++ {
		var hdr Header
		if hdr.Key, i, ok = readBytes(body, i, 0); !ok {
			return nil, 0, 0, errHeaderKey
		}
		if hdr.Value, i, ok = readBytes(body, i, -1); !ok {
			return nil, 0, 0, errFieldLength
		}
		r.Headers = append(r.Headers, hdr)
	}
	if i != len(body) {
		return nil, 0, 0, errRecordSize
	}
	return p[len(body):], offDelta, tsDelta, nil
}

// readBytes reads a length-prefixed field; length -1 (when minLen allows)
// is nil. The result's capacity is clipped so appends cannot run over the
// next field.
func readBytes(p []byte, i int, minLen int32) ([]byte, int, bool) {
	n, i, ok := varint32(p, i)
	if !ok || n < minLen || int(n) > len(p)-i {
		return nil, i, false
	}
	if n < 0 {
		return nil, i, true
	}
	return p[i : i+int(n) : i+int(n)], i + int(n), true
}

// varint32 reads a zigzag varint of at most 5 bytes whose unsigned form
// fits 32 bits, as Kafka's ByteUtils.readVarint demands.
func varint32(p []byte, i int) (int32, int, bool) {
	if i < len(p) && p[i] < 0x80 { // one byte: nearly every length and delta
		u := uint32(p[i])
		return int32(u>>1) ^ -int32(u&1), i + 1, true
	}
	var u uint64
	for s := uint(0); s < 35; s += 7 {
		if i >= len(p) {
			return 0, i, false
		}
		c := p[i]
		i++
		u |= uint64(c&0x7f) << s
		if c < 0x80 {
			if u > math.MaxUint32 {
				return 0, i, false
			}
			v := uint32(u)
			return int32(v>>1) ^ -int32(v&1), i, true
		}
	}
	return 0, i, false
}

// varint64 reads a zigzag varlong of at most 10 bytes.
func varint64(p []byte, i int) (int64, int, bool) {
	if i < len(p) && p[i] < 0x80 {
		u := uint64(p[i])
		return int64(u>>1) ^ -int64(u&1), i + 1, true
	}
	if i >= len(p) {
		return 0, i, false
	}
	u, n := binary.Uvarint(p[i:])
	if n <= 0 {
		return 0, i, false
	}
	return int64(u>>1) ^ -int64(u&1), i + n, true
}
