package batch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// Seeds live in testdata/fuzz/<FuzzName>/: valid batches of every codec
// (built here and cut from the golden files), truncations and bit flips.
// Run one target at a time, e.g.
//
//	go test -run '^$' -fuzz '^FuzzRecords$' -fuzztime 60s ./broker/batch/

// fuzzMaxSize bounds decompression in the fuzz targets.
const fuzzMaxSize = 1 << 20

// FuzzValidate splits arbitrary bytes into batches and validates them: no
// input may panic, and what Next returns must be consistent.
func FuzzValidate(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		rest := data
		for i := 0; i < 1000 && len(rest) > 0; i++ {
			b, r, err := Next(rest)
			if err != nil {
				if b != nil || r != nil {
					t.Fatal("Next returned a batch with an error")
				}
				return
			}
			if len(b) != Size(rest) || len(b)+len(r) != len(rest) || len(b) < HeaderSize {
				t.Fatalf("Next split %d bytes into %d + %d", len(rest), len(b), len(r))
			}
			rest = r
			if err := b.Validate(); err != nil {
				continue
			}
			_ = b.String()
			_ = b.LastSequence()
			_, _ = b.DeleteHorizon()
			_ = b.BuildHeader()
			if b.Codec() == CodecNone {
				_, _ = b.CheckRecords()
			}
		}
	})
}

// FuzzRecords walks, iterates, rebuilds and recompresses arbitrary batches.
// The length and CRC are fixed up first so that mutations reach the
// records rather than dying at Validate. Whatever the walk accepts,
// iteration, Build and Recompress must accept too and agree on.
func FuzzRecords(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < HeaderSize || len(data) > 1<<20 {
			return
		}
		b := Batch(bytes.Clone(data))
		binary.BigEndian.PutUint32(b[offBatchLength:], uint32(len(b)-LogOverhead))
		b[offMagic] = 2
		b.UpdateCRC()
		if b.Validate() != nil {
			return
		}
		d := Decoder{MaxSize: fuzzMaxSize}
		s, checkErr := d.Check(b)
		var recs []Record
		iterErr := d.Records(b, func(r *Record) error {
			if len(recs) >= 1<<16 {
				return errors.New("too many records")
			}
			recs = append(recs, cloneRecord(r))
			return nil
		})
		if checkErr != nil {
			if !errors.Is(checkErr, ErrCorrupt) && !errors.Is(checkErr, ErrTooLarge) {
				t.Fatalf("check: error %v is neither ErrCorrupt nor ErrTooLarge", checkErr)
			}
			return
		}
		if iterErr != nil {
			t.Fatalf("check accepted %s but iteration failed: %v", b, iterErr)
		}
		if int(s.Records) != len(recs) || s.Records != b.NumRecords() {
			t.Fatalf("check saw %d records, iteration %d, header %d", s.Records, len(recs), b.NumRecords())
		}

		// Rebuild from the iterated records. LogAppendTime batches report
		// the append time as every record's timestamp, so compare the
		// rebuilt batch's records, not its bytes.
		rebuilt, err := Build(nil, b.BuildHeader(), recs, b.Codec())
		if err != nil {
			t.Fatalf("rebuild %s: %v", b, err)
		}
		nb := Batch(rebuilt)
		if err := nb.Validate(); err != nil {
			t.Fatalf("rebuilt batch invalid: %v", err)
		}
		if nb.LastOffset() != b.LastOffset() || nb.NumRecords() != b.NumRecords() {
			t.Fatalf("rebuilt %s from %s", nb, b)
		}
		i := 0
		err = d.Records(nb, func(r *Record) error {
			if err := sameRecord(*r, recs[i]); err != nil {
				return err
			}
			i++
			return nil
		})
		if err != nil {
			t.Fatalf("rebuilt records differ: %v", err)
		}

		for c := CodecNone; c <= CodecZstd; c++ {
			out, s2, err := d.Recompress(nil, b, c)
			if err != nil {
				t.Fatalf("recompress %s to %s: %v", b, c, err)
			}
			if s2 != s {
				t.Fatalf("recompress summary %+v, check %+v", s2, s)
			}
			if err := Batch(out).Validate(); err != nil {
				t.Fatalf("recompressed to %s: %v", c, err)
			}
		}
	})
}

// fuzzDecompress checks that arbitrary input never panics or exceeds the
// limit, and that whatever decodes round-trips through our encoder.
func fuzzDecompress(f *testing.F, c Codec) {
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := Decompress(c, nil, data, fuzzMaxSize)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("error %v is neither ErrCorrupt nor ErrTooLarge", err)
			}
			return
		}
		if len(out) > fuzzMaxSize {
			t.Fatalf("decompressed %d bytes past the %d limit", len(out), fuzzMaxSize)
		}
		comp, err := Compress(c, nil, out)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Decompress(c, nil, comp, fuzzMaxSize)
		if err != nil || !bytes.Equal(back, out) {
			t.Fatalf("round trip of %d decoded bytes: %v", len(out), err)
		}
	})
}

func FuzzDecompressGzip(f *testing.F)   { fuzzDecompress(f, CodecGzip) }
func FuzzDecompressSnappy(f *testing.F) { fuzzDecompress(f, CodecSnappy) }
func FuzzDecompressLZ4(f *testing.F)    { fuzzDecompress(f, CodecLZ4) }
func FuzzDecompressZstd(f *testing.F)   { fuzzDecompress(f, CodecZstd) }
