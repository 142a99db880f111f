package batch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// randomRecords makes n records with every shape the format allows: null
// and empty keys and values, headers with null values, negative timestamp
// deltas, gaps between offsets, non-zero attributes.
func randomRecords(rng *rand.Rand, base int64, n int) []Record {
	recs := make([]Record, n)
	off := base + int64(rng.IntN(3))
	ts := int64(1_700_000_000_000)
	bytesOrNil := func(max int) []byte {
		switch rng.IntN(5) {
		case 0:
			return nil
		case 1:
			return []byte{}
		}
		b := make([]byte, rng.IntN(max)+1)
		for i := range b {
			b[i] = byte('a' + rng.IntN(26))
		}
		return b
	}
	for i := range recs {
		r := &recs[i]
		r.Offset = off
		off += 1 + int64(rng.IntN(2))*int64(rng.IntN(1000))
		r.Timestamp = ts + int64(rng.IntN(20000)) - 10000
		r.Attributes = int8(rng.IntN(2))
		r.Key = bytesOrNil(20)
		r.Value = bytesOrNil(300)
		for range rng.IntN(4) {
			k := bytesOrNil(10)
			if k == nil {
				k = []byte{}
			}
			r.Headers = append(r.Headers, Header{Key: k, Value: bytesOrNil(10)})
		}
	}
	return recs
}

// cloneRecord deep-copies r so it outlives the iterator's reuse.
func cloneRecord(r *Record) Record {
	c := *r
	c.Key, c.Value = cloneBytes(r.Key), cloneBytes(r.Value)
	c.Headers = nil
	for _, h := range r.Headers {
		c.Headers = append(c.Headers, Header{Key: cloneBytes(h.Key), Value: cloneBytes(h.Value)})
	}
	return c
}

func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

func sameRecord(a, b Record) error {
	if a.Offset != b.Offset || a.Timestamp != b.Timestamp || a.Attributes != b.Attributes {
		return fmt.Errorf("offset/timestamp/attrs %d/%d/%d vs %d/%d/%d", a.Offset, a.Timestamp, a.Attributes, b.Offset, b.Timestamp, b.Attributes)
	}
	if (a.Key == nil) != (b.Key == nil) || !bytes.Equal(a.Key, b.Key) {
		return fmt.Errorf("key %q vs %q", a.Key, b.Key)
	}
	if (a.Value == nil) != (b.Value == nil) || !bytes.Equal(a.Value, b.Value) {
		return fmt.Errorf("value %q vs %q", a.Value, b.Value)
	}
	if len(a.Headers) != len(b.Headers) {
		return fmt.Errorf("%d vs %d headers", len(a.Headers), len(b.Headers))
	}
	for i := range a.Headers {
		x, y := a.Headers[i], b.Headers[i]
		if !bytes.Equal(x.Key, y.Key) || (x.Value == nil) != (y.Value == nil) || !bytes.Equal(x.Value, y.Value) {
			return fmt.Errorf("header %d: %q=%q vs %q=%q", i, x.Key, x.Value, y.Key, y.Value)
		}
	}
	return nil
}

func collect(t *testing.T, d *Decoder, b Batch) []Record {
	t.Helper()
	var out []Record
	if err := d.Records(b, func(r *Record) error { out = append(out, cloneRecord(r)); return nil }); err != nil {
		t.Fatalf("records of %s: %v", b, err)
	}
	return out
}

// TestBuildReadByKmsg builds batches and reads them back with kmsg's
// generated decoders, which we did not write.
func TestBuildReadByKmsg(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range codecs {
		for _, n := range []int{1, 2, 17, 400} {
			recs := randomRecords(rng, 1000, n)
			h := BuildHeader{BaseOffset: 1000, PartitionLeaderEpoch: 7, Producer: &Producer{ID: 42, Epoch: 3, BaseSequence: 99}}
			raw, err := Build(nil, h, recs, c)
			if err != nil {
				t.Fatal(err)
			}
			b := Batch(raw)
			if err := b.Validate(); err != nil {
				t.Fatal(err)
			}
			var kb kmsg.RecordBatch
			if err := kb.ReadFrom(raw); err != nil {
				t.Fatalf("kmsg: %v", err)
			}
			if kb.FirstOffset != 1000 || kb.PartitionLeaderEpoch != 7 || kb.Magic != 2 || int(kb.NumRecords) != n ||
				kb.ProducerID != 42 || kb.ProducerEpoch != 3 || kb.FirstSequence != 99 || Codec(kb.Attributes&7) != c ||
				kb.LastOffsetDelta != int32(recs[n-1].Offset-1000) || kb.FirstTimestamp != recs[0].Timestamp {
				t.Fatalf("%s n=%d: kmsg header %+v", c, n, kb)
			}
			maxTS := recs[0].Timestamp
			for _, r := range recs {
				maxTS = max(maxTS, r.Timestamp)
			}
			if kb.MaxTimestamp != maxTS {
				t.Fatalf("max timestamp %d, want %d", kb.MaxTimestamp, maxTS)
			}
			plain, err := Decompress(c, nil, kb.Records, 0)
			if err != nil {
				t.Fatal(err)
			}
			for i := range n {
				var kr kmsg.Record
				if err := kr.ReadFrom(plain); err != nil {
					t.Fatalf("kmsg record %d: %v", i, err)
				}
				size := int(kr.Length) + varintLen(int64(kr.Length))
				plain = plain[size:]
				got := Record{Offset: 1000 + int64(kr.OffsetDelta), Timestamp: kb.FirstTimestamp + kr.TimestampDelta64,
					Attributes: kr.Attributes, Key: kr.Key, Value: kr.Value}
				for _, hd := range kr.Headers {
					got.Headers = append(got.Headers, Header{Key: []byte(hd.Key), Value: hd.Value})
				}
				// kmsg reads empty headers' values and keys as non-nil
				// empty only if present; compare loosely on emptiness.
				want := recs[i]
				if err := sameRecord(normalizeHeaders(got), normalizeHeaders(want)); err != nil {
					t.Fatalf("%s record %d: %v", c, i, err)
				}
			}
			if len(plain) != 0 {
				t.Fatalf("%d bytes after the records", len(plain))
			}
		}
	}
}

// normalizeHeaders makes empty header keys non-nil: a header key cannot be
// null on the wire, and kmsg reads it as a string.
func normalizeHeaders(r Record) Record {
	hs := make([]Header, len(r.Headers))
	for i, h := range r.Headers {
		if h.Key == nil {
			h.Key = []byte{}
		}
		hs[i] = h
	}
	r.Headers = hs
	return r
}

// kmsgBatch encodes recs with kmsg's generated encoders into an
// uncompressed batch.
func kmsgBatch(base int64, baseTS int64, recs []Record) []byte {
	var body []byte
	for _, r := range recs {
		kr := kmsg.Record{Attributes: r.Attributes, TimestampDelta64: r.Timestamp - baseTS,
			OffsetDelta: int32(r.Offset - base), Key: r.Key, Value: r.Value}
		for _, h := range r.Headers {
			kr.Headers = append(kr.Headers, kmsg.Header{Key: string(h.Key), Value: h.Value})
		}
		probe := kr.AppendTo(nil) // Length 0 takes one byte
		kr.Length = int32(len(probe) - 1)
		body = kr.AppendTo(body)
	}
	kb := kmsg.RecordBatch{FirstOffset: base, PartitionLeaderEpoch: -1, Magic: 2,
		LastOffsetDelta: int32(recs[len(recs)-1].Offset - base), FirstTimestamp: baseTS, MaxTimestamp: baseTS,
		ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, NumRecords: int32(len(recs)), Records: body}
	raw := kb.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	Batch(raw).UpdateCRC()
	return raw
}

// TestReadKmsgBuilt reads batches encoded by kmsg.
func TestReadKmsgBuilt(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 3, 250} {
		recs := randomRecords(rng, 50, n)
		raw := kmsgBatch(50, recs[0].Timestamp, recs)
		b := Batch(raw)
		if err := b.Validate(); err != nil {
			t.Fatal(err)
		}
		s, err := b.CheckRecords()
		if err != nil {
			t.Fatal(err)
		}
		if s.Records != int32(n) || s.Size != len(raw)-HeaderSize {
			t.Fatalf("summary %+v", s)
		}
		var d Decoder
		got := collect(t, &d, b)
		for i := range recs {
			if err := sameRecord(normalizeHeaders(got[i]), normalizeHeaders(recs[i])); err != nil {
				t.Fatalf("record %d: %v", i, err)
			}
		}
		// Our encoding of the same records is byte-identical to kmsg's.
		ours, err := Build(nil, BuildHeader{BaseOffset: 50, PartitionLeaderEpoch: -1, LastOffsetDelta: b.LastOffsetDelta(), MaxTimestamp: recs[0].Timestamp}, recs, CodecNone)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(Batch(ours).RecordsBytes(), b.RecordsBytes()) {
			t.Fatal("our record encoding differs from kmsg's")
		}
	}
}

func TestSummary(t *testing.T) {
	recs := []Record{
		{Offset: 10, Timestamp: 500, Key: []byte("a")},
		{Offset: 11, Timestamp: 300},
		{Offset: 12, Timestamp: 900, Key: []byte{}},
		{Offset: 13, Timestamp: 400},
	}
	for _, c := range codecs {
		raw, err := Build(nil, BuildHeader{BaseOffset: 10}, recs, c)
		if err != nil {
			t.Fatal(err)
		}
		var d Decoder
		s, err := d.Check(raw)
		if err != nil {
			t.Fatal(err)
		}
		want := Summary{Records: 4, Contiguous: true, MinTimestamp: 300, MaxTimestamp: 900, NullKeys: 2, FirstNullKey: 1, Size: s.Size}
		if s != want {
			t.Fatalf("%s: summary %+v, want %+v", c, s, want)
		}
		if c == CodecNone {
			if s2, err := Batch(raw).CheckRecords(); err != nil || s2 != s {
				t.Fatalf("CheckRecords: %+v, %v", s2, err)
			}
		} else if _, err := Batch(raw).CheckRecords(); err == nil {
			t.Fatalf("CheckRecords on a %s batch succeeded", c)
		}
	}
	// A gap (as after compaction) or a lastOffsetDelta past the last
	// record is well formed but not contiguous.
	gapped, _ := Build(nil, BuildHeader{BaseOffset: 10}, []Record{{Offset: 10}, {Offset: 12}}, CodecNone)
	tail, _ := Build(nil, BuildHeader{BaseOffset: 10, LastOffsetDelta: 5}, []Record{{Offset: 10}, {Offset: 11}}, CodecNone)
	for _, raw := range [][]byte{gapped, tail} {
		s, err := Batch(raw).CheckRecords()
		if err != nil || s.Contiguous {
			t.Fatalf("%s: %+v, %v", Batch(raw), s, err)
		}
	}
}

// TestCheckRecordsCorrupt breaks a well-formed batch in every way the walk
// must notice; each must be ErrCorrupt from CheckRecords, from a Decoder
// after compression, and (for structural damage) from iteration.
func TestCheckRecordsCorrupt(t *testing.T) {
	recs := []Record{
		{Offset: 0, Timestamp: 1, Key: []byte("k0"), Value: []byte("v0"), Headers: []Header{{Key: []byte("h"), Value: []byte("x")}}},
		{Offset: 1, Timestamp: 2, Key: []byte("k1"), Value: []byte("v1")},
		{Offset: 2, Timestamp: 3, Key: []byte("k2"), Value: []byte("v2")},
	}
	good, err := Build(nil, BuildHeader{}, recs, CodecNone)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Batch(good).CheckRecords(); err != nil {
		t.Fatal(err)
	}
	// Record 0 starts at HeaderSize: length(1) attrs(1) ts(1) off(1)
	// keylen(1) "k0" vallen(1) "v0" hcount(1) hklen(1) "h" hvlen(1) "x".
	r0 := HeaderSize
	cases := []struct {
		name       string
		edit       func(b []byte) []byte
		structural bool // iteration must fail too; else only the walk's rules
	}{
		{"count+1", func(b []byte) []byte { binary.BigEndian.PutUint32(b[offRecordsCount:], 4); return b }, true},
		{"count-1", func(b []byte) []byte { binary.BigEndian.PutUint32(b[offRecordsCount:], 2); return b }, true},
		{"trailing byte", func(b []byte) []byte { return append(b, 0) }, true},
		{"length+1", func(b []byte) []byte { b[r0] += 2; return b }, true},
		{"length-1", func(b []byte) []byte { b[r0] -= 2; return b }, true},
		{"length negative", func(b []byte) []byte { b[r0] = 1; return b }, true},
		{"key length -2", func(b []byte) []byte { b[r0+4] = 3; return b }, true},
		{"key past record", func(b []byte) []byte { b[r0+4] = 60; return b }, true},
		{"null header key", func(b []byte) []byte { b[r0+11] = 1; return b }, true},
		{"header count -1", func(b []byte) []byte { b[r0+10] = 1; return b }, true},
		{"header count 2", func(b []byte) []byte { b[r0+10] = 4; return b }, true},
		{"6-byte varint", func(b []byte) []byte {
			// Replace record 0's offset delta 0 by a 6-byte encoding of 0,
			// growing the record length to match.
			out := append([]byte{}, b[:r0+3]...)
			out = append(out, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00)
			out = append(out, b[r0+4:]...)
			out[r0] += 10
			return out
		}, true},
		{"offset delta repeats", func(b []byte) []byte {
			// record 1 gets delta 0: find it after record 0.
			r1 := r0 + 1 + int(b[r0]>>1)
			b[r1+3] = 0
			return b
		}, false},
		{"offset delta past last", func(b []byte) []byte {
			binary.BigEndian.PutUint32(b[offLastOffsetDelta:], 1)
			return b
		}, false},
		{"first delta negative", func(b []byte) []byte { b[r0+3] = 1; return b }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bad := tc.edit(bytes.Clone(good))
			binary.BigEndian.PutUint32(bad[offBatchLength:], uint32(len(bad)-LogOverhead))
			Batch(bad).UpdateCRC()
			if err := Batch(bad).Validate(); err != nil {
				t.Fatalf("header no longer valid: %v", err)
			}
			if _, err := Batch(bad).CheckRecords(); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("CheckRecords: %v, want ErrCorrupt", err)
			}
			var d Decoder
			err := d.Records(bad, func(*Record) error { return nil })
			if tc.structural && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Records: %v, want ErrCorrupt", err)
			}
			// The same records inside a compressed batch.
			for _, c := range codecs[1:] {
				zb, _, err := d.Recompress(nil, good, c)
				if err != nil {
					t.Fatal(err)
				}
				hdr := Batch(zb).Header()
				copy(hdr[offRecordsCount:], bad[offRecordsCount:offRecordsCount+4])
				copy(hdr[offLastOffsetDelta:], bad[offLastOffsetDelta:offLastOffsetDelta+4])
				zrec, _ := Compress(c, nil, bad[HeaderSize:])
				zbad := append(bytes.Clone(hdr), zrec...)
				binary.BigEndian.PutUint32(zbad[offBatchLength:], uint32(len(zbad)-LogOverhead))
				Batch(zbad).UpdateCRC()
				if _, err := d.Check(zbad); !errors.Is(err, ErrCorrupt) {
					t.Fatalf("%s Check: %v, want ErrCorrupt", c, err)
				}
				if _, _, err := d.Recompress(nil, zbad, CodecNone); !errors.Is(err, ErrCorrupt) {
					t.Fatalf("%s Recompress: %v, want ErrCorrupt", c, err)
				}
			}
		})
	}
}

func TestIteratorStopsOnError(t *testing.T) {
	raw, _ := Build(nil, BuildHeader{}, []Record{{Offset: 0}, {Offset: 1}, {Offset: 2}}, CodecLZ4)
	stop := errors.New("stop")
	n := 0
	err := Batch(raw).Records(func(r *Record) error {
		if n++; r.Offset == 1 {
			return stop
		}
		return nil
	})
	if err != stop || n != 2 {
		t.Fatalf("got %v after %d records", err, n)
	}
}

// TestNoAllocs pins the hot paths at zero allocations once warm.
func TestNoAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	recs := randomRecords(rng, 0, 100)
	plain, _ := Build(nil, BuildHeader{}, recs, CodecNone)
	if n := testing.AllocsPerRun(100, func() {
		if _, err := Batch(plain).CheckRecords(); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("CheckRecords: %.1f allocs", n)
	}
	for _, c := range codecs {
		raw, _ := Build(nil, BuildHeader{}, recs, c)
		var d Decoder
		count := 0
		fn := func(*Record) error { count++; return nil }
		_ = d.Records(raw, fn) // warm: grows the buffer and header slice
		allocs := testing.AllocsPerRun(50, func() {
			if err := d.Records(raw, fn); err != nil {
				t.Fatal(err)
			}
			if _, err := d.Check(raw); err != nil {
				t.Fatal(err)
			}
		})
		t.Logf("%s: Decoder.Records+Check %.1f allocs", c, allocs)
		// Under -race sync.Pool drops Puts, so pooled codecs allocate.
		if allocs > 0 && (c == CodecNone || !raceEnabled) {
			t.Fatalf("%s: Decoder.Records+Check: %.1f allocs, want 0", c, allocs)
		}
	}
}
