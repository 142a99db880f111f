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

// BenchmarkOpenManager measures start-up after a clean shutdown and after a
// crash for different amounts of data: 8 partitions, 64 MiB segments,
// 16 KiB batches. After a clean shutdown Open reads no data (a stat per
// segment and the active segments' index tails), so the time should not
// grow with the data; after a crash only the segments from the recovery
// point on are validated.
func BenchmarkOpenManager(b *testing.B) {
	for _, total := range []int64{256 << 20, 2 << 30} {
		root := b.TempDir()
		dir := filepath.Join(root, "data")
		cfg := DefaultConfig()
		cfg.SegmentBytes = 64 << 20
		mc := ManagerConfig{Dirs: []string{dir}, RecoveryThreadsPerDir: 2}
		m, err := OpenManager(mc, func(string) Config { return cfg }, testOpts(nil))
		if err != nil {
			b.Fatal(err)
		}
		data := valueBatch(noPID, 16, 1000)
		for p := int32(0); p < 8; p++ {
			l, err := m.Create("bench", p, [16]byte{1}, cfg)
			if err != nil {
				b.Fatal(err)
			}
			for l.Size() < total/8 {
				if _, err := l.Append(data, AppendOptions{AssignOffsets: true}); err != nil {
					b.Fatal(err)
				}
			}
		}
		var size int64
		var segs int
		for _, p := range m.All() {
			size += p.Log.Size()
			segs += p.Log.NumSegments()
		}
		b.Logf("%d MiB in %d segments", size>>20, segs)
		if err := m.Close(); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("clean-%dMiB", total>>20), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				m, err := OpenManager(mc, func(string) Config { return cfg }, testOpts(nil))
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if err := m.Close(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
		b.Run(fmt.Sprintf("crash-%dMiB", total>>20), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				m, err := OpenManager(mc, func(string) Config { return cfg }, testOpts(nil))
				if err != nil {
					b.Fatal(err)
				}
				m.writeCheckpointsAll()
				m.crashForTest()
				b.StartTimer()
				m, err = OpenManager(mc, func(string) Config { return cfg }, testOpts(nil))
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				m.Close()
				b.StartTimer()
			}
		})
	}
}
