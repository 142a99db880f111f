package log

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"
)

// BenchmarkAppend measures the produce path: one batch per Append, as a
// produce request carries, with Kafka's defaults except 256 MiB segments
// (so long runs roll). Bytes/s is batch bytes written to the page cache.
func BenchmarkAppend(b *testing.B) {
	for _, tc := range []struct{ records, size int }{{10, 100}, {100, 100}, {16, 1024}} {
		b.Run(fmt.Sprintf("%dx%dB", tc.records, tc.size), func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.SegmentBytes = 256 << 20
			cfg.FileDeleteDelayMs = 0
			l := mustOpen(b, filepath.Join(b.TempDir(), "bench-0"), cfg, testOpts(nil), false)
			defer l.Close()
			data := valueBatch(noPID, tc.records, tc.size)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := l.Append(data, AppendOptions{LeaderEpoch: 1, AssignOffsets: true}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("idempotent-10x100B", func(b *testing.B) {
		cfg := DefaultConfig()
		cfg.SegmentBytes = 256 << 20
		l := mustOpen(b, filepath.Join(b.TempDir(), "bench-0"), cfg, testOpts(newClock()), false)
		defer l.Close()
		data := valueBatch(bopts{pid: 1, epoch: 0, seq: 0, ts: 1_700_000_000_000}, 10, 100)
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			seq := int32(i*10) & math.MaxInt32
			data[53], data[54], data[55], data[56] = byte(seq>>24), byte(seq>>16), byte(seq>>8), byte(seq)
			if _, err := l.Append(data, AppendOptions{LeaderEpoch: 1, AssignOffsets: true}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkRead measures the fetch path over a 64 MiB log of 1 KiB
// batches: Read finds the ranges for 1 MiB, AppendTo preads them.
func BenchmarkRead(b *testing.B) {
	cfg := DefaultConfig()
	cfg.SegmentBytes = 16 << 20
	l := mustOpen(b, filepath.Join(b.TempDir(), "bench-0"), cfg, testOpts(nil), false)
	defer l.Close()
	data := valueBatch(noPID, 10, 100)
	for l.Size() < 64<<20 {
		if _, err := l.Append(data, AppendOptions{AssignOffsets: true}); err != nil {
			b.Fatal(err)
		}
	}
	leo := l.LogEndOffset()
	for _, copyData := range []bool{false, true} {
		name := "ranges"
		if copyData {
			name = "ranges+pread"
		}
		b.Run(name+"-1MiB", func(b *testing.B) {
			buf := make([]byte, 0, 2<<20)
			b.SetBytes(1 << 20)
			b.ReportAllocs()
			b.ResetTimer()
			off := int64(0)
			for i := 0; i < b.N; i++ {
				res, err := l.Read(off, 1<<20, leo, true)
				if err != nil {
					b.Fatal(err)
				}
				if copyData {
					if buf, err = res.AppendTo(buf[:0]); err != nil {
						b.Fatal(err)
					}
				}
				off += int64(res.Size/len(data)) * 10
				if off >= leo {
					off = 0
				}
			}
		})
	}
	b.Run("tail-small", func(b *testing.B) {
		// A consumer at the end of the log: the common fetch.
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := l.Read(leo-10, 1<<20, leo, true); err != nil {
				b.Fatal(err)
			}
		}
	})
}
