package batch

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchBatch builds a batch of about size bytes of records with 100-byte
// values and 10-byte keys, as a producer of small events sends.
func benchBatch(b testing.TB, size int, codec Codec) []byte {
	rng := rand.New(rand.NewPCG(13, 14))
	var recs []Record
	for total := 0; total < size-HeaderSize; {
		v := make([]byte, 100)
		for i := range v {
			v[i] = "abcdefghijklmnop"[rng.IntN(16)]
		}
		r := Record{Offset: int64(len(recs)), Timestamp: 1_700_000_000_000 + int64(len(recs)),
			Key: fmt.Appendf(nil, "key-%06d", len(recs)), Value: v}
		total += len(appendRecord(nil, &r, int32(r.Offset), int64(len(recs))))
		recs = append(recs, r)
	}
	raw, err := Build(nil, BuildHeader{}, recs, codec)
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

// BenchmarkCheckRecords is the broker's per-produce walk of an uncompressed
// 16 KiB batch of 100-byte records.
func BenchmarkCheckRecords(b *testing.B) {
	raw := Batch(benchBatch(b, 16<<10, CodecNone))
	s, err := raw.CheckRecords()
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%d records in %d bytes", s.Records, len(raw))
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := raw.CheckRecords(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidateAndCheck adds the header checks and CRC-32C, the whole
// per-batch cost of accepting an uncompressed produce.
func BenchmarkValidateAndCheck(b *testing.B) {
	raw := Batch(benchBatch(b, 16<<10, CodecNone))
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if err := raw.Validate(); err != nil {
			b.Fatal(err)
		}
		if _, err := raw.CheckRecords(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecoderCheck walks compressed 16 KiB batches (bytes are the
// uncompressed size): mostly decompression.
func BenchmarkDecoderCheck(b *testing.B) {
	for _, c := range codecs {
		b.Run(c.String(), func(b *testing.B) {
			plain := benchBatch(b, 16<<10, CodecNone)
			raw, err := Recompress(nil, plain, c)
			if err != nil {
				b.Fatal(err)
			}
			var d Decoder
			b.SetBytes(int64(len(plain)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := d.Check(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRecords iterates every record of an uncompressed 16 KiB batch.
func BenchmarkRecords(b *testing.B) {
	raw := Batch(benchBatch(b, 16<<10, CodecNone))
	var d Decoder
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	n := 0
	fn := func(*Record) error { n++; return nil }
	for b.Loop() {
		if err := d.Records(raw, fn); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRecompress turns an uncompressed 16 KiB batch into each codec,
// as the broker does for a topic with its own compression.type.
func BenchmarkRecompress(b *testing.B) {
	plain := benchBatch(b, 16<<10, CodecNone)
	for _, c := range codecs[1:] {
		b.Run(c.String(), func(b *testing.B) {
			var d Decoder
			var dst []byte
			b.SetBytes(int64(len(plain)))
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if dst, _, err = d.Recompress(dst[:0], plain, c); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(dst))/float64(len(plain)), "ratio")
		})
	}
}

// BenchmarkBuild encodes 150 records of 100 bytes uncompressed, the group
// coordinator's and the compactor's path.
func BenchmarkBuild(b *testing.B) {
	var recs []Record
	err := Batch(benchBatch(b, 16<<10, CodecNone)).Records(func(r *Record) error {
		recs = append(recs, cloneRecord(r))
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	var dst []byte
	b.ReportAllocs()
	for b.Loop() {
		if dst, err = Build(dst[:0], BuildHeader{}, recs, CodecNone); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(dst)))
}
