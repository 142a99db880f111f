package log

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tsBatch is a batch whose records carry timestamp ts.
func tsBatch(ts int64, size int) []byte {
	o := noPID
	o.ts = ts
	return valueBatch(o, 1, size)
}

func countFiles(t *testing.T, dir, suffix string) int {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	n := 0
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), suffix) {
			n++
		}
	}
	return n
}

func TestRetentionByTime(t *testing.T) {
	c := newClock()
	now := c.Now().UnixMilli()
	cfg := testConfig()
	cfg.SegmentBytes = 300
	cfg.RetentionMs = 60_000
	dir := filepath.Join(t.TempDir(), "r-0")
	l := mustOpen(t, dir, cfg, testOpts(c), false)
	defer l.Close()
	// Two batches per segment; timestamps one minute apart, oldest first.
	for i := 0; i < 10; i++ {
		mustAppend(t, l, tsBatch(now-int64(10-i)*60_000, 60))
	}
	if l.NumSegments() != 5 {
		t.Fatalf("%d segments, want 5", l.NumSegments())
	}
	// Segments' largest timestamps: now-9m, -7m, -5m, -3m, -1m. All but
	// the last are older than 60 s; the last is exactly 60 s: kept (Kafka
	// deletes when now - largest > retention.ms).
	n, err := l.DeleteOldSegments()
	if err != nil || n != 4 {
		t.Fatalf("deleted %d (%v), want 4", n, err)
	}
	if l.LogStartOffset() != 8 || l.NumSegments() != 1 {
		t.Fatalf("log start %d, %d segments", l.LogStartOffset(), l.NumSegments())
	}
	// The active segment expires too: Kafka rolls a new empty segment and
	// deletes the old one.
	c.Advance(time.Second)
	if n, err := l.DeleteOldSegments(); err != nil || n != 1 {
		t.Fatalf("deleted %d (%v), want the expired active segment", n, err)
	}
	if l.NumSegments() != 1 || l.LogStartOffset() != 10 || l.LogEndOffset() != 10 || l.active().size.Load() != 0 {
		t.Fatalf("after deleting the active segment: %d segments, start %d end %d", l.NumSegments(), l.LogStartOffset(), l.LogEndOffset())
	}
	// An empty active segment is never deleted.
	c.Advance(time.Hour)
	if n, _ := l.DeleteOldSegments(); n != 0 {
		t.Fatalf("deleted the empty active segment")
	}
	checkFor(t, 5*time.Second, 10*time.Millisecond, func() error {
		if n := countFiles(t, dir, ".deleted"); n != 0 {
			return fmt.Errorf("%d .deleted files left", n)
		}
		if n := countFiles(t, dir, ".log"); n != 1 {
			return fmt.Errorf("%d .log files", n)
		}
		return nil
	})
	// The log keeps working at the same offsets.
	if res := mustAppend(t, l, tsBatch(c.Now().UnixMilli(), 10)); res.FirstOffset != 10 {
		t.Fatalf("append at %d", res.FirstOffset)
	}
}

func TestRetentionBySize(t *testing.T) {
	cfg := testConfig()
	cfg.SegmentBytes = 300
	l := mustOpen(t, filepath.Join(t.TempDir(), "r-0"), cfg, testOpts(newClock()), false)
	defer l.Close()
	for i := 0; i < 10; i++ {
		mustAppend(t, l, tsBatch(1_700_000_000_000, 60))
	}
	segSize := l.segments()[0].size.Load()
	cfg.RetentionBytes = 2*segSize + 1
	l.SetConfig(cfg)
	// 5 segments of segSize; delete whole segments while the rest stays >=
	// retention.bytes: 5s-2s-1 = 3s-1 → two go, leaving 3.
	if n, err := l.DeleteOldSegments(); err != nil || n != 2 {
		t.Fatalf("deleted %d (%v), want 2", n, err)
	}
	if l.Size() != 3*segSize || l.LogStartOffset() != 4 {
		t.Fatalf("size %d start %d", l.Size(), l.LogStartOffset())
	}
	cfg.RetentionBytes = 0 // everything, active included: roll first
	l.SetConfig(cfg)
	if _, err := l.DeleteOldSegments(); err != nil {
		t.Fatal(err)
	}
	if l.Size() != 0 || l.LogStartOffset() != 10 || l.NumSegments() != 1 {
		t.Fatalf("size %d start %d segments %d", l.Size(), l.LogStartOffset(), l.NumSegments())
	}
}

func TestRetentionRespectsHighWatermarkAndPolicy(t *testing.T) {
	c := newClock()
	cfg := testConfig()
	cfg.SegmentBytes = 300
	cfg.RetentionMs = 1
	l := mustOpen(t, filepath.Join(t.TempDir(), "r-0"), cfg, testOpts(c), false)
	defer l.Close()
	for i := 0; i < 10; i++ {
		mustAppend(t, l, tsBatch(1, 60))
	}
	l.SetHighWatermark(5) // segments [0,2) [2,4) end below 5; [4,6) does not
	if n, _ := l.DeleteOldSegments(); n != 2 || l.LogStartOffset() != 4 {
		t.Fatalf("deleted %d, start %d", n, l.LogStartOffset())
	}
	cfg.Delete, cfg.Compact = false, true
	l.SetConfig(cfg)
	l.SetHighWatermark(10)
	if n, _ := l.DeleteOldSegments(); n != 0 {
		t.Fatalf("compact-only topic lost %d segments to retention.ms", n)
	}
}

// A reader holding file ranges of a segment that retention deletes can
// still read them for file.delete.delay.ms.
func TestDeletedSegmentStaysReadable(t *testing.T) {
	c := newClock()
	cfg := testConfig()
	cfg.SegmentBytes = 300
	cfg.RetentionMs = 1
	cfg.FileDeleteDelayMs = 60_000
	dir := filepath.Join(t.TempDir(), "r-0")
	l := mustOpen(t, dir, cfg, testOpts(c), false)
	for i := 0; i < 4; i++ {
		mustAppend(t, l, tsBatch(1, 60))
	}
	res, err := l.Read(0, 1<<20, math.MaxInt64, true)
	if err != nil || len(res.Ranges) != 2 {
		t.Fatalf("read %+v %v", res, err)
	}
	if n, _ := l.DeleteOldSegments(); n != 2 {
		t.Fatalf("deleted %d", n)
	}
	if _, err := l.Read(0, 100, math.MaxInt64, true); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("read of deleted offsets: %v", err)
	}
	b, err := res.AppendTo(nil)
	if err != nil || len(b) != res.Size {
		t.Fatalf("in-flight read after delete: %v", err)
	}
	if countFiles(t, dir, ".log.deleted") != 2 || l.pendingDeletes() != 2 {
		t.Fatalf("want 2 segments waiting for file.delete.delay.ms")
	}
	l.Close() // deletes pending files now
	if countFiles(t, dir, ".deleted") != 0 {
		t.Fatalf(".deleted files left after close")
	}
}

func TestDeleteRecordsBefore(t *testing.T) {
	cfg := testConfig()
	cfg.SegmentBytes = 300
	dir := filepath.Join(t.TempDir(), "d-0")
	l := mustOpen(t, dir, cfg, testOpts(newClock()), false)
	for i := 0; i < 10; i++ {
		if _, err := l.Append(tsBatch(1, 60), AppendOptions{LeaderEpoch: int32(i / 4), AssignOffsets: true}); err != nil {
			t.Fatal(err)
		}
	}
	l.SetHighWatermark(8)
	if err := l.DeleteRecordsBefore(9); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("beyond the high watermark: %v", err)
	}
	if err := l.DeleteRecordsBefore(5); err != nil {
		t.Fatal(err)
	}
	// Segment [4,6) holds 5: the two before it go.
	if l.LogStartOffset() != 5 || l.segments()[0].base != 4 {
		t.Fatalf("start %d first segment %d", l.LogStartOffset(), l.segments()[0].base)
	}
	if got := l.epochs.snapshot(); len(got) != 2 || got[0] != (epochEntry{1, 5}) || got[1] != (epochEntry{2, 8}) {
		t.Fatalf("epochs %v", got)
	}
	res, err := l.Read(5, 1<<20, 8, true)
	if err != nil || res.Size == 0 {
		t.Fatalf("read at new start: %v", err)
	}
	if err := l.DeleteRecordsBefore(3); err != nil || l.LogStartOffset() != 5 {
		t.Fatalf("moving backwards: %v, start %d", err, l.LogStartOffset())
	}
	l.Close()
	// Standalone logs persist the start only through a Manager; the
	// segment boundary survives anyway.
	l = mustOpen(t, dir, cfg, testOpts(newClock()), false)
	defer l.Close()
	if l.LogStartOffset() != 4 {
		t.Fatalf("start after reopen %d", l.LogStartOffset())
	}
}

func TestTruncation(t *testing.T) {
	c := newClock()
	cfg := testConfig()
	cfg.SegmentBytes = 300
	cfg.IndexIntervalBytes = 1
	dir := filepath.Join(t.TempDir(), "tr-0")
	l := mustOpen(t, dir, cfg, testOpts(c), false)
	defer l.Close()
	seq := int32(0)
	for i := 0; i < 10; i++ {
		if _, err := l.Append(idem(4, 0, seq, 1), AppendOptions{LeaderEpoch: int32(i / 3), AssignOffsets: true}); err != nil {
			t.Fatal(err)
		}
		seq++
	}
	if err := l.TruncateTo(5); err != nil {
		t.Fatal(err)
	}
	if l.LogEndOffset() != 5 || l.active().base != 3 {
		t.Fatalf("end %d active %d", l.LogEndOffset(), l.active().base)
	}
	if e, off := l.EndOffsetForEpoch(1); e != 1 || off != 5 {
		t.Fatalf("epoch 1 ends at %d (epoch %d)", off, e)
	}
	if l.LatestEpoch() != 1 {
		t.Fatalf("latest epoch %d after truncating epochs 2 and 3", l.LatestEpoch())
	}
	if ps := l.Producers(); len(ps) != 1 || ps[0].LastSequence != 4 {
		t.Fatalf("producer state not truncated: %+v", ps)
	}
	if _, err := l.Append(idem(4, 0, 5, 1), AppendOptions{LeaderEpoch: 4, AssignOffsets: true}); err != nil {
		t.Fatalf("append after truncate: %v", err)
	}
	if got := readAllBatches(t, l, 0); len(got) != 6 {
		t.Fatalf("%d batches", len(got))
	}
	if ts, off := l.MaxTimestamp(); ts != 1_700_000_000_000 || off != 0 {
		t.Fatalf("max timestamp %d at %d", ts, off)
	}

	if err := l.TruncateFullyAndStartAt(100); err != nil {
		t.Fatal(err)
	}
	if l.LogStartOffset() != 100 || l.LogEndOffset() != 100 || l.NumSegments() != 1 || l.LatestEpoch() != -1 || len(l.Producers()) != 0 {
		t.Fatalf("after full truncation: start %d end %d", l.LogStartOffset(), l.LogEndOffset())
	}
	if res := mustAppend(t, l, tsBatch(1, 5)); res.FirstOffset != 100 {
		t.Fatalf("append at %d", res.FirstOffset)
	}
}

func TestLeaderEpochs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "e-0")
	l := mustOpen(t, dir, testConfig(), testOpts(nil), false)
	for i, e := range []int32{0, 0, 2, 2, 2, 5} {
		if _, err := l.Append(tsBatch(int64(i), 5), AppendOptions{LeaderEpoch: e, AssignOffsets: true}); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		req    int32
		epoch  int32
		offset int64
	}{
		{-1, -1, -1}, {0, 0, 2}, {1, 0, 2}, {2, 2, 5}, {3, 2, 5}, {5, 5, 6}, {6, -1, -1},
	}
	for _, tc := range cases {
		if e, o := l.EndOffsetForEpoch(tc.req); e != tc.epoch || o != tc.offset {
			t.Errorf("EndOffsetForEpoch(%d) = %d, %d; want %d, %d", tc.req, e, o, tc.epoch, tc.offset)
		}
	}
	if l.EpochForOffset(3) != 2 || l.EpochForOffset(0) != 0 || l.EpochForOffset(5) != 5 {
		t.Errorf("EpochForOffset wrong")
	}
	l.Close()
	if got := string(mustRead(t, filepath.Join(dir, leaderEpochFile))); got != "0\n3\n0 0\n2 2\n5 5\n" {
		t.Fatalf("leader-epoch-checkpoint %q", got)
	}
}
