package batch

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func TestBuildRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, c := range codecs {
		recs := randomRecords(rng, 5000, 300)
		h := BuildHeader{BaseOffset: 5000, PartitionLeaderEpoch: 3, Producer: &Producer{ID: 7, Epoch: 1, BaseSequence: 40}, Transactional: true}
		prefix := []byte("keep me")
		raw, err := Build(bytes.Clone(prefix), h, recs, c)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(raw, prefix) {
			t.Fatal("Build clobbered dst")
		}
		b, rest, err := Next(raw[len(prefix):])
		if err != nil || len(rest) != 0 {
			t.Fatalf("Next: %v, %d left", err, len(rest))
		}
		if err := b.Validate(); err != nil {
			t.Fatal(err)
		}
		if b.Codec() != c || !b.Transactional() || b.Control() || b.LogAppendTime() || b.HasDeleteHorizon() ||
			b.ProducerID() != 7 || b.ProducerEpoch() != 1 || b.BaseSequence() != 40 || b.LeaderEpoch() != 3 ||
			b.LastOffset() != recs[len(recs)-1].Offset || b.BaseTimestamp() != recs[0].Timestamp {
			t.Fatalf("%s: header %s %x", c, b, b.Header())
		}
		var d Decoder
		got := collect(t, &d, b)
		if len(got) != len(recs) {
			t.Fatalf("%d records, want %d", len(got), len(recs))
		}
		for i := range recs {
			if err := sameRecord(got[i], recs[i]); err != nil {
				t.Fatalf("%s record %d: %v", c, i, err)
			}
		}
		if h2 := b.BuildHeader(); h2.BaseOffset != 5000 || *h2.Producer != *h.Producer || !h2.Transactional ||
			h2.LastOffsetDelta != b.LastOffsetDelta() || h2.PartitionLeaderEpoch != 3 {
			t.Fatalf("BuildHeader %+v", h2)
		}
	}
}

// TestBuildCompaction is the log cleaner's use: filter records out of a
// batch, including its last, and rebuild around the survivors with the
// original header. Offsets, timestamps, the batch's offset range and the
// producer's last sequence survive, as in Kafka's MemoryRecords.filterTo.
func TestBuildCompaction(t *testing.T) {
	for _, c := range codecs {
		var recs []Record
		for i := range 10 {
			recs = append(recs, Record{Offset: 100 + int64(i), Timestamp: 1000 + int64(i*7%10),
				Key: []byte{byte('a' + i%4)}, Value: []byte{byte(i)}})
		}
		orig, err := Build(nil, BuildHeader{BaseOffset: 100, Producer: &Producer{ID: 5, Epoch: 0, BaseSequence: 20}}, recs, c)
		if err != nil {
			t.Fatal(err)
		}
		ob := Batch(orig)
		var kept []Record
		var d Decoder
		err = d.Records(ob, func(r *Record) error {
			if r.Offset >= 106 { // the newest record of each key survives
				kept = append(kept, cloneRecord(r))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		kept = kept[:len(kept)-1] // and drop the last one too
		h := ob.BuildHeader()
		h.HasDeleteHorizon, h.DeleteHorizonMs = true, 99_999
		raw, err := Build(nil, h, kept, ob.Codec())
		if err != nil {
			t.Fatal(err)
		}
		nb := Batch(raw)
		if err := nb.Validate(); err != nil {
			t.Fatal(err)
		}
		if nb.BaseOffset() != 100 || nb.LastOffset() != ob.LastOffset() || nb.LastSequence() != ob.LastSequence() ||
			nb.NumRecords() != 3 || nb.Codec() != c {
			t.Fatalf("%s: compacted %s, last seq %d vs %d", c, nb, nb.LastSequence(), ob.LastSequence())
		}
		if dh, ok := nb.DeleteHorizon(); !ok || dh != 99_999 || nb.BaseTimestamp() != 99_999 {
			t.Fatalf("delete horizon %d %v", dh, ok)
		}
		// Kept timestamps are 1000 + i*7%10 for i = 6, 7, 8: 1002, 1009, 1006.
		if nb.MaxTimestamp() != 1009 {
			t.Fatalf("max timestamp %d, want 1009", nb.MaxTimestamp())
		}
		s, err := d.Check(nb)
		if err != nil || s.Contiguous || s.Records != 3 {
			t.Fatalf("check compacted: %+v, %v", s, err)
		}
		got := collect(t, &d, nb)
		for i := range kept {
			if err := sameRecord(got[i], kept[i]); err != nil {
				t.Fatalf("%s: record %d: %v", c, i, err)
			}
		}
		// Rebuilding from the rebuilt batch keeps the horizon.
		if h := nb.BuildHeader(); !h.HasDeleteHorizon || h.DeleteHorizonMs != 99_999 {
			t.Fatalf("BuildHeader lost the delete horizon: %+v", h)
		}
	}
}

// TestBuildEmpty matches DefaultRecordBatch.writeEmptyHeader, which Kafka
// uses to keep an emptied batch's producer state: the hex is that method's
// output for baseOffset 10, lastOffset 14, producer 1/2/3, epoch 4,
// CreateTime, timestamp 1234, transactional.
func TestBuildEmpty(t *testing.T) {
	raw, err := Build(nil, BuildHeader{BaseOffset: 10, PartitionLeaderEpoch: 4, LastOffsetDelta: 4,
		Producer: &Producer{ID: 1, Epoch: 2, BaseSequence: 3}, Transactional: true, MaxTimestamp: 1234,
		HasDeleteHorizon: true, DeleteHorizonMs: 5}, nil, CodecZstd)
	if err != nil {
		t.Fatal(err)
	}
	b := Batch(raw)
	if err := b.Validate(); err != nil {
		t.Fatal(err)
	}
	want := "000000000000000a" + "00000031" + "00000004" + "02" + hex.EncodeToString(b[offCRC:offCRC+4]) +
		"0010" + "00000004" + "ffffffffffffffff" + "00000000000004d2" + "0000000000000001" + "0002" + "00000003" + "00000000"
	if got := hex.EncodeToString(raw); got != want {
		t.Fatalf("empty batch\n got %s\nwant %s", got, want)
	}
	if s, err := b.CheckRecords(); err != nil || s.Records != 0 || s.Contiguous {
		t.Fatalf("check empty: %+v, %v", s, err)
	}
	n := 0
	if err := b.Records(func(*Record) error { n++; return nil }); err != nil || n != 0 {
		t.Fatalf("iterate empty: %d, %v", n, err)
	}
	out, err := Recompress(nil, b, CodecGzip)
	if err != nil || !bytes.Equal(out, raw) {
		t.Fatalf("recompressing an empty batch changed it: %v", err)
	}
}

func TestBuildLogAppendTime(t *testing.T) {
	recs := []Record{{Offset: 0, Timestamp: 10}, {Offset: 1, Timestamp: 30}, {Offset: 2, Timestamp: 20}}
	raw, err := Build(nil, BuildHeader{LogAppendTime: true, MaxTimestamp: 777}, recs, CodecSnappy)
	if err != nil {
		t.Fatal(err)
	}
	b := Batch(raw)
	if !b.LogAppendTime() || b.MaxTimestamp() != 777 || b.BaseTimestamp() != 10 {
		t.Fatalf("%s: %x", b, b.Header())
	}
	// Consumers see the append time on every record.
	err = b.Records(func(r *Record) error {
		if r.Timestamp != 777 {
			t.Errorf("record %d: timestamp %d", r.Offset, r.Timestamp)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The walk reports the records' own timestamps, for the broker's
	// CreateTime checks.
	var d Decoder
	if s, err := d.Check(b); err != nil || s.MinTimestamp != 10 || s.MaxTimestamp != 30 {
		t.Fatalf("%+v, %v", s, err)
	}
	// SetLogAppendTime on a CreateTime batch agrees with Build.
	raw2, _ := Build(nil, BuildHeader{}, recs, CodecSnappy)
	Batch(raw2).SetLogAppendTime(777)
	if !bytes.Equal(raw, raw2) {
		t.Fatal("SetLogAppendTime differs from building with LogAppendTime")
	}
}

func TestBuildControl(t *testing.T) {
	// An end-transaction marker as the coordinator writes it: key version
	// 0 and type 1 (commit), value version 0 and coordinator epoch 5.
	marker := []Record{{Offset: 9, Timestamp: 1, Key: []byte{0, 0, 0, 1}, Value: []byte{0, 0, 0, 0, 0, 5}}}
	raw, err := Build(nil, BuildHeader{BaseOffset: 9, Producer: &Producer{ID: 3, Epoch: 2, BaseSequence: -1},
		Transactional: true, Control: true}, marker, CodecNone)
	if err != nil {
		t.Fatal(err)
	}
	b := Batch(raw)
	if !b.Control() || !b.Transactional() || b.ProducerID() != 3 || b.BaseSequence() != -1 || b.Attributes() != 0x30 {
		t.Fatalf("%s attrs %#x", b, b.Attributes())
	}
	if h := b.BuildHeader(); h.Producer == nil || h.Producer.BaseSequence != -1 || !h.Control {
		t.Fatalf("BuildHeader %+v", h)
	}
	if h := Batch(mustBuild(t, BuildHeader{BaseOffset: 9}, marker)).BuildHeader(); h.Producer != nil {
		t.Fatalf("no producer came back as %+v", h.Producer)
	}
}

func mustBuild(t *testing.T, h BuildHeader, recs []Record) []byte {
	t.Helper()
	raw, err := Build(nil, h, recs, CodecNone)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestBuildErrors(t *testing.T) {
	cases := map[string]struct {
		h     BuildHeader
		recs  []Record
		codec Codec
	}{
		"offset below base":   {BuildHeader{BaseOffset: 10}, []Record{{Offset: 9}}, CodecNone},
		"offsets repeat":      {BuildHeader{}, []Record{{Offset: 0}, {Offset: 0}}, CodecNone},
		"offsets decrease":    {BuildHeader{}, []Record{{Offset: 1}, {Offset: 0}}, CodecNone},
		"delta over int32":    {BuildHeader{}, []Record{{Offset: math.MaxInt32 + 1}}, CodecNone},
		"unknown codec":       {BuildHeader{}, []Record{{Offset: 0}}, Codec(6)},
		"negative last delta": {BuildHeader{LastOffsetDelta: -1}, nil, CodecNone},
	}
	for name, tc := range cases {
		dst := []byte("x")
		out, err := Build(dst, tc.h, tc.recs, tc.codec)
		if err == nil {
			t.Errorf("%s: built %s", name, Batch(out[1:]))
		}
		if !bytes.Equal(out, dst) {
			t.Errorf("%s: dst changed on error", name)
		}
	}
}

func TestRecompressErrors(t *testing.T) {
	raw := mustBuild(t, BuildHeader{}, []Record{{Offset: 0, Value: []byte("v")}})
	if _, err := Recompress(nil, raw, Codec(5)); err == nil {
		t.Fatal("recompress to codec 5 succeeded")
	}
	// Same codec: unchanged bytes.
	if out, err := Recompress(nil, raw, CodecNone); err != nil || !bytes.Equal(out, raw) {
		t.Fatalf("same codec: %v", err)
	}
	// Garbage where compressed records should be.
	bad := bytes.Clone(raw)
	Batch(bad).setAttributes(int16(CodecZstd))
	Batch(bad).UpdateCRC()
	if _, err := Recompress(nil, bad, CodecNone); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("garbage zstd: %v", err)
	}
	// A bound below the records' size.
	big := mustBuild(t, BuildHeader{}, []Record{{Offset: 0, Value: make([]byte, 100_000)}})
	zb, err := Recompress(nil, big, CodecZstd)
	if err != nil {
		t.Fatal(err)
	}
	d := Decoder{MaxSize: 50_000}
	if _, _, err := d.Recompress(nil, zb, CodecGzip); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("over the bound: %v", err)
	}
	if _, err := d.Check(zb); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("check over the bound: %v", err)
	}
}
