package batch

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type goldenRecord struct{ key, value string }

// goldenRecords is what every producer in testdata/golden sent, in order,
// each record with one header "source" naming the producer. Values are
// text of a few hundred bytes that compresses about 3:1, so that batches
// span several 32 KiB snappy and 64 KiB lz4 blocks.
func goldenRecords() []goldenRecord {
	words := []string{"fjord", "kafka", "batch", "record", "offset", "snappy", "zstd", "gzip",
		"lz4", "broker", "leader", "epoch", "segment", "index", "crc", "varint"}
	recs := make([]goldenRecord, 300)
	x := uint32(1)
	for i := range recs {
		var v strings.Builder
		fmt.Fprintf(&v, "value-%03d:", i)
		n := 20 + i%40
		for range n {
			x = x*1664525 + 1013904223
			v.WriteString(words[x>>28])
			fmt.Fprintf(&v, "-%d ", x>>24&0xf)
		}
		recs[i] = goldenRecord{key: fmt.Sprintf("key-%03d", i), value: v.String()}
	}
	return recs
}

// TestGoldenBatches reads batches written by librdkafka (kcat), Apache
// Kafka's Java producer and kafka-python, captured from their produce
// requests by capture_test.go. Each must validate, walk, iterate to the
// records that were sent, and survive recompression to every codec.
func TestGoldenBatches(t *testing.T) {
	files, err := filepath.Glob("testdata/golden/*.bin")
	if err != nil {
		t.Fatal(err)
	}
	// The set is fixed: a missing file means a lost golden, not a pass.
	want := []string{
		"java-gzip", "java-lz4", "java-snappy", "java-uncompressed", "java-zstd",
		"kafka-python-gzip", "kafka-python-uncompressed",
		"librdkafka-gzip", "librdkafka-lz4", "librdkafka-snappy", "librdkafka-uncompressed", "librdkafka-zstd",
	}
	var have []string
	for _, f := range files {
		have = append(have, strings.TrimSuffix(filepath.Base(f), ".bin"))
	}
	if strings.Join(have, " ") != strings.Join(want, " ") {
		t.Fatalf("golden files:\n have %v\n want %v", have, want)
	}
	expect := goldenRecords()
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".bin")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			producer := name[:strings.LastIndexByte(name, '-')]
			codec := map[string]Codec{"uncompressed": CodecNone, "gzip": CodecGzip, "snappy": CodecSnappy,
				"lz4": CodecLZ4, "zstd": CodecZstd}[name[len(producer)+1:]]
			var d Decoder
			next := 0
			nbatches := 0
			for rest := raw; len(rest) > 0; {
				b, r, err := Next(rest)
				if err != nil {
					t.Fatalf("batch %d: %v", nbatches, err)
				}
				rest = r
				nbatches++
				if err := b.Validate(); err != nil {
					t.Fatalf("%s: %v", b, err)
				}
				if b.Codec() != codec {
					t.Fatalf("%s: codec %s, want %s", b, b.Codec(), codec)
				}
				s, err := d.Check(b)
				if err != nil {
					t.Fatalf("check %s: %v", b, err)
				}
				if !s.Contiguous || s.Records != b.NumRecords() || s.NullKeys != 0 {
					t.Fatalf("%s: summary %+v", b, s)
				}
				if s.MinTimestamp < 1.5e12 || s.MaxTimestamp != b.MaxTimestamp() {
					t.Fatalf("%s: timestamps %d..%d, batch max %d", b, s.MinTimestamp, s.MaxTimestamp, b.MaxTimestamp())
				}
				first := next
				err = d.Records(b, func(r *Record) error {
					if next >= len(expect) {
						return errors.New("more records than were sent")
					}
					e := expect[next]
					if string(r.Key) != e.key || string(r.Value) != e.value {
						return fmt.Errorf("record %d: %q=%q, want %q=%q", next, r.Key, r.Value, e.key, e.value)
					}
					if len(r.Headers) != 1 || string(r.Headers[0].Key) != "source" || string(r.Headers[0].Value) != producer {
						return fmt.Errorf("record %d: headers %q", next, r.Headers)
					}
					if r.Offset != b.BaseOffset()+int64(next-first) {
						return fmt.Errorf("record %d: offset %d", next, r.Offset)
					}
					next++
					return nil
				})
				if err != nil {
					t.Fatalf("%s: %v", b, err)
				}
				checkRecompressions(t, b)
			}
			if next != len(expect) {
				t.Fatalf("%d records in %d batches, want %d", next, nbatches, len(expect))
			}
			t.Logf("%d batches, %d bytes", nbatches, len(raw))
		})
	}
}

// checkRecompressions recompresses b to every codec and back and checks
// that the records section and every header field but codec and CRC
// survive.
func checkRecompressions(t *testing.T, b Batch) {
	t.Helper()
	var d Decoder
	orig, err := d.RecordsBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	orig = bytes.Clone(orig)
	for c := CodecNone; c <= CodecZstd; c++ {
		out, s, err := d.Recompress(nil, b, c)
		if err != nil {
			t.Fatalf("recompress %s to %s: %v", b, c, err)
		}
		if s.Records != b.NumRecords() {
			t.Fatalf("recompress %s: summary %+v", b, s)
		}
		nb, rest, err := Next(out)
		if err != nil || len(rest) != 0 {
			t.Fatalf("recompressed %s to %s: %v, %d trailing", b, c, err, len(rest))
		}
		if err := nb.Validate(); err != nil {
			t.Fatalf("recompressed %s to %s: %v", b, c, err)
		}
		if nb.Codec() != c {
			t.Fatalf("recompressed to %s: codec %s", c, nb.Codec())
		}
		sameHeader(t, b, nb)
		got, err := d.RecordsBytes(nb)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, orig) {
			t.Fatalf("recompressed %s to %s: records differ", b, c)
		}
		// And back to the original codec.
		back, _, err := d.Recompress(nil, nb, b.Codec())
		if err != nil {
			t.Fatal(err)
		}
		sameHeader(t, b, Batch(back))
		got, err = d.RecordsBytes(Batch(back))
		if err != nil || !bytes.Equal(got, orig) {
			t.Fatalf("recompressed %s to %s and back: %v", b, c, err)
		}
	}
}

// sameHeader compares every header field except length, codec and CRC.
func sameHeader(t *testing.T, a, b Batch) {
	t.Helper()
	if a.BaseOffset() != b.BaseOffset() || a.LeaderEpoch() != b.LeaderEpoch() ||
		a.Attributes()&^AttrCompressionMask != b.Attributes()&^AttrCompressionMask ||
		a.LastOffsetDelta() != b.LastOffsetDelta() || a.BaseTimestamp() != b.BaseTimestamp() ||
		a.MaxTimestamp() != b.MaxTimestamp() || a.ProducerID() != b.ProducerID() ||
		a.ProducerEpoch() != b.ProducerEpoch() || a.BaseSequence() != b.BaseSequence() ||
		a.NumRecords() != b.NumRecords() {
		t.Fatalf("header changed:\n %x\n %x", a.Header(), b.Header())
	}
}
