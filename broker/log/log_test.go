package log

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fjordhq/fjord/broker/batch"
)

func TestAppendReadReopen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "orders-0")
	cfg := testConfig()
	cfg.SegmentBytes = 4096
	cfg.IndexIntervalBytes = 256
	l := mustOpen(t, dir, cfg, testOpts(nil), false)
	var want [][]byte
	for i := 0; i < 100; i++ {
		b := valueBatch(noPID, 1+i%5, 20+i)
		res := mustAppend(t, l, b)
		if res.FirstOffset != l.LogEndOffset()-int64(1+i%5) || res.LastOffset != l.LogEndOffset()-1 {
			t.Fatalf("append %d: offsets %d..%d, log end %d", i, res.FirstOffset, res.LastOffset, l.LogEndOffset())
		}
		want = append(want, b)
	}
	if l.NumSegments() < 5 {
		t.Fatalf("want several segments at segment.bytes=4096, got %d", l.NumSegments())
	}
	check := func(l *Log) {
		t.Helper()
		got := readAllBatches(t, l, 0)
		if len(got) != len(want) {
			t.Fatalf("read %d batches, want %d", len(got), len(want))
		}
		for i := range got {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("batch %d differs: got %v want %v", i, got[i], batch.Batch(want[i]))
			}
		}
		// Every offset reads from its own batch.
		for off := int64(0); off < l.LogEndOffset(); off += 7 {
			res, err := l.Read(off, 1, math.MaxInt64, true)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := res.AppendTo(nil)
			bb := batch.Batch(b)
			if bb.BaseOffset() > off || bb.LastOffset() < off {
				t.Fatalf("read at %d got batch %v", off, bb)
			}
		}
	}
	check(l)
	leo := l.LogEndOffset()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = mustOpen(t, dir, cfg, testOpts(nil), false)
	if l.LogEndOffset() != leo {
		t.Fatalf("clean reopen: log end %d, want %d", l.LogEndOffset(), leo)
	}
	check(l)
	l.Close()
	l = mustOpen(t, dir, cfg, testOpts(nil), true)
	if l.LogEndOffset() != leo {
		t.Fatalf("recovering reopen: log end %d, want %d", l.LogEndOffset(), leo)
	}
	check(l)
	// Appends continue where the log ended.
	res := mustAppend(t, l, valueBatch(noPID, 3, 10))
	if res.FirstOffset != leo {
		t.Fatalf("append after reopen at %d, want %d", res.FirstOffset, leo)
	}
	l.Close()
}

func TestReadLimits(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	cfg := testConfig()
	cfg.SegmentBytes = 2000
	cfg.IndexIntervalBytes = 100
	l := mustOpen(t, dir, cfg, testOpts(nil), false)
	defer l.Close()
	var sizes []int
	for i := 0; i < 40; i++ {
		b := valueBatch(noPID, 2, 50)
		sizes = append(sizes, len(b))
		mustAppend(t, l, b) // offsets 2i, 2i+1
	}
	bsz := sizes[0]

	t.Run("out of range", func(t *testing.T) {
		if _, err := l.Read(81, 100, math.MaxInt64, true); !errors.Is(err, ErrOffsetOutOfRange) {
			t.Fatalf("read past end: %v", err)
		}
		if _, err := l.Read(-1, 100, math.MaxInt64, true); !errors.Is(err, ErrOffsetOutOfRange) {
			t.Fatalf("read below start: %v", err)
		}
		res, err := l.Read(80, 100, math.MaxInt64, true)
		if err != nil || res.Size != 0 {
			t.Fatalf("read at end: %v %+v", err, res)
		}
	})
	t.Run("max bytes whole batches", func(t *testing.T) {
		res, err := l.Read(3, 3*bsz+bsz/2, math.MaxInt64, false)
		if err != nil {
			t.Fatal(err)
		}
		if res.Size != 3*bsz {
			t.Fatalf("size %d, want 3 batches of %d", res.Size, bsz)
		}
		b, _ := res.AppendTo(nil)
		if got := batch.Batch(b).BaseOffset(); got != 2 {
			t.Fatalf("first batch base %d, want 2 (holds offset 3)", got)
		}
	})
	t.Run("min one batch", func(t *testing.T) {
		res, _ := l.Read(10, 10, math.MaxInt64, false)
		if res.Size != 0 {
			t.Fatalf("size %d without minOneBatch", res.Size)
		}
		res, _ = l.Read(10, 10, math.MaxInt64, true)
		if res.Size != bsz {
			t.Fatalf("size %d with minOneBatch, want %d", res.Size, bsz)
		}
	})
	t.Run("high watermark", func(t *testing.T) {
		res, _ := l.Read(0, 1<<20, 7, true)
		// batches [0,1] [2,3] [4,5] [6,7]: base 6 < 7 is included, 8 is not
		if res.Size != 4*bsz {
			t.Fatalf("size %d, want 4 batches", res.Size)
		}
		res, _ = l.Read(8, 1<<20, 8, true)
		if res.Size != 0 {
			t.Fatalf("read at hw returned %d bytes", res.Size)
		}
	})
	t.Run("spans segments", func(t *testing.T) {
		if l.NumSegments() < 3 {
			t.Fatalf("want >= 3 segments, got %d", l.NumSegments())
		}
		res, _ := l.Read(0, 1<<20, math.MaxInt64, false)
		if res.Size != 40*bsz || len(res.Ranges) != l.NumSegments() {
			t.Fatalf("size %d in %d ranges, want %d in %d", res.Size, len(res.Ranges), 40*bsz, l.NumSegments())
		}
	})
}

func TestRollReasons(t *testing.T) {
	c := newClock()
	t.Run("segment.ms by first batch timestamp", func(t *testing.T) {
		cfg := testConfig()
		cfg.SegmentMs = 1000
		l := mustOpen(t, filepath.Join(t.TempDir(), "t-0"), cfg, testOpts(c), false)
		defer l.Close()
		o := noPID
		mustAppend(t, l, valueBatch(o, 1, 10))
		o.ts += 1000
		mustAppend(t, l, valueBatch(o, 1, 10)) // exactly segment.ms: no roll
		if l.NumSegments() != 1 {
			t.Fatalf("rolled at exactly segment.ms")
		}
		o.ts += 1
		mustAppend(t, l, valueBatch(o, 1, 10))
		if l.NumSegments() != 2 {
			t.Fatalf("no roll after segment.ms, %d segments", l.NumSegments())
		}
	})
	t.Run("segment.ms by wall clock without timestamps", func(t *testing.T) {
		cfg := testConfig()
		cfg.SegmentMs = 1000
		l := mustOpen(t, filepath.Join(t.TempDir(), "t-0"), cfg, testOpts(c), false)
		defer l.Close()
		o := noPID
		o.ts = -1
		mustAppend(t, l, valueBatch(o, 1, 10))
		c.Advance(1001 * time.Millisecond)
		mustAppend(t, l, valueBatch(o, 1, 10))
		if l.NumSegments() != 2 {
			t.Fatalf("no roll after segment.ms of wall time, %d segments", l.NumSegments())
		}
	})
	t.Run("index full", func(t *testing.T) {
		cfg := testConfig()
		cfg.SegmentIndexBytes = 3 * 12 // 4 offset entries, 3 time entries
		cfg.IndexIntervalBytes = 1
		l := mustOpen(t, filepath.Join(t.TempDir(), "t-0"), cfg, testOpts(c), false)
		defer l.Close()
		o := noPID
		for i := 0; i < 10; i++ {
			o.ts++
			mustAppend(t, l, valueBatch(o, 1, 10))
		}
		if l.NumSegments() < 2 {
			t.Fatalf("no roll on a full index")
		}
		if got := readAllBatches(t, l, 0); len(got) != 10 {
			t.Fatalf("read %d batches", len(got))
		}
	})
	t.Run("relative offset overflow", func(t *testing.T) {
		l := mustOpen(t, filepath.Join(t.TempDir(), "t-0"), testConfig(), testOpts(c), false)
		defer l.Close()
		b := valueBatch(noPID, 1, 10)
		if _, err := l.Append(b, AppendOptions{}); err != nil {
			t.Fatal(err)
		}
		b2 := valueBatch(noPID, 1, 10)
		batch.Batch(b2).SetBaseOffset(math.MaxInt32 + 10)
		if _, err := l.Append(b2, AppendOptions{}); err != nil {
			t.Fatal(err)
		}
		if l.NumSegments() != 2 || l.segments()[1].base != math.MaxInt32+10 {
			t.Fatalf("want a new segment at %d", math.MaxInt32+10)
		}
		if _, err := l.Append(valueBatch(noPID, 1, 10), AppendOptions{}); !errors.Is(err, ErrInvalidOffsets) {
			t.Fatalf("replica append below log end: %v", err)
		}
	})
	t.Run("batch larger than segment", func(t *testing.T) {
		cfg := testConfig()
		cfg.SegmentBytes = 100
		l := mustOpen(t, filepath.Join(t.TempDir(), "t-0"), cfg, testOpts(c), false)
		defer l.Close()
		if _, err := l.Append(valueBatch(noPID, 1, 200), AppendOptions{AssignOffsets: true}); !errors.Is(err, ErrRecordBatchTooLarge) {
			t.Fatalf("got %v", err)
		}
	})
}

func TestDirLayout(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "events-3")
	cfg := testConfig()
	cfg.SegmentBytes = 500
	l := mustOpen(t, dir, cfg, testOpts(nil), false)
	for i := 0; i < 5; i++ {
		mustAppend(t, l, valueBatch(noPID, 3, 100))
	}
	if err := l.SetTopicID([16]byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	names := map[string]bool{}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		names[e.Name()] = true
	}
	for _, want := range []string{
		"00000000000000000000.log", "00000000000000000000.index", "00000000000000000000.timeindex",
		"00000000000000000003.log", "00000000000000000003.snapshot", "00000000000000000015.snapshot",
		"leader-epoch-checkpoint", "partition.metadata",
	} {
		if !names[want] {
			t.Errorf("missing %s in %v", want, names)
		}
	}
}

// Idle closed segments drop their in-memory indexes; reads reload them,
// and a read racing with the unload still finds its batch.
func TestUnloadIdleIndexes(t *testing.T) {
	cfg := testConfig()
	cfg.SegmentBytes = 2000
	cfg.IndexIntervalBytes = 100
	l := mustOpen(t, filepath.Join(t.TempDir(), "u-0"), cfg, testOpts(nil), false)
	defer l.Close()
	for i := 0; i < 100; i++ {
		mustAppend(t, l, valueBatch(noPID, 2, 40))
	}
	readAllBatches(t, l, 0)
	if n := l.unloadIdleIndexes(0); n != l.NumSegments()-1 {
		t.Fatalf("unloaded %d of %d closed segments", n, l.NumSegments()-1)
	}
	if !l.active().loaded {
		t.Fatal("active segment unloaded")
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 50; i++ {
			l.unloadIdleIndexes(0)
		}
	}()
	for off := int64(0); off < l.LogEndOffset(); off += 3 {
		res, err := l.Read(off, 1, math.MaxInt64, true)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := res.AppendTo(nil)
		if bb := batch.Batch(b); bb.BaseOffset() > off || bb.LastOffset() < off {
			t.Fatalf("read at %d got %v", off, bb)
		}
	}
	<-done
	if _, _, ok, err := l.OffsetForTimestamp(0); !ok || err != nil {
		t.Fatalf("timestamp lookup after unload: %v %v", ok, err)
	}
}
