package log

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func idem(pid int64, epoch int16, seq int32, n int) []byte {
	return valueBatch(bopts{pid: pid, epoch: epoch, seq: seq, ts: 1_700_000_000_000}, n, 10)
}

func TestIdempotentProducer(t *testing.T) {
	c := newClock()
	l := mustOpen(t, filepath.Join(t.TempDir(), "p-0"), testConfig(), testOpts(c), false)
	defer l.Close()
	app := func(b []byte) (AppendResult, error) {
		return l.Append(b, AppendOptions{LeaderEpoch: 1, AssignOffsets: true})
	}
	var first [6]AppendResult
	for i := 0; i < 6; i++ {
		res, err := app(idem(1, 0, int32(i*5), 5))
		if err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
		first[i] = res
	}
	leo := l.LogEndOffset()

	t.Run("duplicates of the last five", func(t *testing.T) {
		for i := 1; i < 6; i++ {
			res, err := app(idem(1, 0, int32(i*5), 5))
			if err != nil || !res.Duplicate || res.FirstOffset != first[i].FirstOffset || res.LastOffset != first[i].LastOffset {
				t.Fatalf("retry of batch %d: %+v %v, want offsets %d..%d", i, res, err, first[i].FirstOffset, first[i].LastOffset)
			}
		}
		if l.LogEndOffset() != leo {
			t.Fatalf("duplicates were written")
		}
	})
	t.Run("older than five batches is out of order", func(t *testing.T) {
		if _, err := app(idem(1, 0, 0, 5)); !errors.Is(err, ErrOutOfOrderSequence) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("gap", func(t *testing.T) {
		if _, err := app(idem(1, 0, 31, 1)); !errors.Is(err, ErrOutOfOrderSequence) {
			t.Fatalf("got %v", err)
		}
		if l.LogEndOffset() != leo {
			t.Fatalf("rejected batch was written")
		}
	})
	t.Run("in sequence", func(t *testing.T) {
		if _, err := app(idem(1, 0, 30, 2)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("epoch bump restarts at 0", func(t *testing.T) {
		if _, err := app(idem(1, 1, 32, 1)); !errors.Is(err, ErrOutOfOrderSequence) {
			t.Fatalf("new epoch not at 0: %v", err)
		}
		if _, err := app(idem(1, 1, 0, 3)); err != nil {
			t.Fatalf("new epoch at 0: %v", err)
		}
		if _, err := app(idem(1, 0, 32, 1)); !errors.Is(err, ErrInvalidProducerEpoch) {
			t.Fatalf("fenced epoch: %v", err)
		}
		// The old epoch's batches no longer count as duplicates.
		if _, err := app(idem(1, 0, 30, 2)); !errors.Is(err, ErrInvalidProducerEpoch) {
			t.Fatalf("old epoch retry: %v", err)
		}
	})
	t.Run("unknown producer may start anywhere (KIP-360)", func(t *testing.T) {
		if _, err := app(idem(2, 4, 1234, 1)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("sequence wraps", func(t *testing.T) {
		if _, err := app(idem(3, 0, math.MaxInt32, 1)); err != nil {
			t.Fatal(err)
		}
		if _, err := app(idem(3, 0, 0, 1)); err != nil {
			t.Fatalf("wrap to 0: %v", err)
		}
	})
	t.Run("replica appends are not checked", func(t *testing.T) {
		b := idem(1, 0, 999, 1) // stale epoch, wrong sequence
		batchAt(b, l.LogEndOffset())
		if _, err := l.Append(b, AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	ps := l.Producers()
	if len(ps) != 3 || ps[0].ProducerID != 1 || ps[0].LastSequence != 999 || ps[1].LastSequence != 1234 || ps[2].LastSequence != 0 {
		t.Fatalf("producers %+v", ps)
	}
	t.Run("expiry", func(t *testing.T) {
		c.Advance(25 * time.Hour)
		if _, err := l.DeleteOldSegments(); err != nil {
			t.Fatal(err)
		}
		if ps := l.Producers(); len(ps) != 0 {
			t.Fatalf("producers not expired: %+v", ps)
		}
		// Forgotten: any sequence is accepted again.
		if _, err := app(idem(1, 0, 77, 1)); err != nil {
			t.Fatal(err)
		}
	})
}

func batchAt(b []byte, off int64) {
	b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7] = byte(off>>56), byte(off>>48), byte(off>>40), byte(off>>32), byte(off>>24), byte(off>>16), byte(off>>8), byte(off)
}

func TestProducerStateSurvivesRestart(t *testing.T) {
	c := newClock()
	dir := filepath.Join(t.TempDir(), "p-0")
	cfg := testConfig()
	cfg.SegmentBytes = 1000
	l := mustOpen(t, dir, cfg, testOpts(c), false)
	seq := int32(0)
	for i := 0; i < 20; i++ {
		mustAppend(t, l, idem(5, 2, seq, 3))
		seq += 3
	}
	if l.NumSegments() < 3 {
		t.Fatalf("want rolls, got %d segments", l.NumSegments())
	}
	for _, s := range l.segments()[1:] {
		if _, err := os.Stat(snapshotPath(dir, s.base)); err != nil {
			t.Fatalf("no snapshot at roll to %d", s.base)
		}
	}
	last := l.LogEndOffset()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(snapshotPath(dir, last)); err != nil {
		t.Fatal("no snapshot at close")
	}

	check := func(l *Log) {
		t.Helper()
		ps := l.Producers()
		if len(ps) != 1 || ps[0].ProducerID != 5 || ps[0].Epoch != 2 || ps[0].LastSequence != seq-1 {
			t.Fatalf("producers after reopen %+v", ps)
		}
		// The last batch is known: its retry is a duplicate.
		res, err := l.Append(idem(5, 2, seq-3, 3), AppendOptions{AssignOffsets: true})
		if err != nil || !res.Duplicate || res.LastOffset != last-1 {
			t.Fatalf("retry after reopen: %+v %v", res, err)
		}
		if _, err := l.Append(idem(5, 2, seq+1, 1), AppendOptions{AssignOffsets: true}); !errors.Is(err, ErrOutOfOrderSequence) {
			t.Fatalf("gap after reopen: %v", err)
		}
	}
	l = mustOpen(t, dir, cfg, testOpts(c), false)
	check(l)
	crash(l)

	// Unclean: the snapshot at the log end is gone; state is rebuilt from
	// the newest roll snapshot plus the batches after it.
	os.Remove(snapshotPath(dir, last))
	l = mustOpen(t, dir, cfg, testOpts(c), true)
	check(l)
	l.Close()
}

func TestSnapshotDecodeRejectsCorruption(t *testing.T) {
	b := encodeSnapshot(map[int64]*producerEntry{7: func() *producerEntry {
		e := emptyProducer(7)
		e.addBatch(1, batchMeta{lastSeq: 9, lastOffset: 100, offsetDelta: 4, timestamp: 5})
		return &e
	}()})
	es, err := decodeSnapshot(b)
	if err != nil || len(es) != 1 || es[0].lastSeq() != 9 || es[0].epoch != 1 {
		t.Fatalf("round trip: %+v %v", es, err)
	}
	for i := range b {
		c := append([]byte(nil), b...)
		c[i] ^= 0x10
		if _, err := decodeSnapshot(c); err == nil {
			t.Fatalf("flipped byte %d accepted", i)
		}
	}
	if _, err := decodeSnapshot(b[:len(b)-1]); err == nil {
		t.Fatal("truncated snapshot accepted")
	}
}
