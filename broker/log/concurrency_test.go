package log

import (
	"errors"
	"fmt"
	"math/rand"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/fjordhq/fjord/broker/batch"
)

// Readers, an appender, retention and lookups run together (under -race):
// every read returns whole valid batches with contiguous offsets starting
// at the batch holding the requested offset, even while retention deletes
// the segments being read.
func TestConcurrentAppendReadRetention(t *testing.T) {
	cfg := testConfig()
	cfg.SegmentBytes = 16 << 10
	cfg.IndexIntervalBytes = 100
	cfg.RetentionBytes = 64 << 10
	cfg.FileDeleteDelayMs = 2000
	l := mustOpen(t, filepath.Join(t.TempDir(), "c-0"), cfg, testOpts(newClock()), false)
	defer l.Close()

	appends := 2000
	if testing.Short() {
		appends = 500
	}
	var done atomic.Bool
	var wg sync.WaitGroup
	errc := make(chan error, 16)
	fail := func(err error) {
		select {
		case errc <- err:
		default:
		}
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer done.Store(true)
		rng := rand.New(rand.NewSource(1))
		seq := int32(0)
		for i := 0; i < appends; i++ {
			n := 1 + rng.Intn(5)
			o := bopts{pid: 1, epoch: 0, seq: seq, ts: 1_700_000_000_000 + int64(i)}
			if _, err := l.Append(valueBatch(o, n, 10+rng.Intn(200)), AppendOptions{AssignOffsets: true}); err != nil {
				fail(fmt.Errorf("append %d: %w", i, err))
				return
			}
			seq += int32(n)
		}
	}()
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(r + 10)))
			var buf []byte
			for !done.Load() {
				lso, leo := l.LogStartOffset(), l.LogEndOffset()
				if leo == lso {
					continue
				}
				off := lso + rng.Int63n(leo-lso)
				res, err := l.Read(off, 1+rng.Intn(8<<10), leo, true)
				if errors.Is(err, ErrOffsetOutOfRange) {
					continue // retention moved the start meanwhile
				}
				if err != nil {
					fail(fmt.Errorf("read %d: %w", off, err))
					return
				}
				buf, err = res.AppendTo(buf[:0])
				if err != nil {
					fail(fmt.Errorf("read %d: %w", off, err))
					return
				}
				next := int64(-1)
				for p := buf; len(p) > 0; {
					b, rest, err := batch.Next(p)
					if err == nil {
						err = b.Validate()
					}
					if err != nil {
						fail(fmt.Errorf("read %d: bad batch: %w", off, err))
						return
					}
					if next < 0 && (b.BaseOffset() > off || b.LastOffset() < off) {
						fail(fmt.Errorf("read %d: first batch %v", off, b))
						return
					}
					if next >= 0 && b.BaseOffset() != next {
						fail(fmt.Errorf("read %d: gap at %d", off, next))
						return
					}
					if b.BaseOffset() >= leo {
						fail(fmt.Errorf("read %d: batch %v beyond max offset %d", off, b, leo))
						return
					}
					next = b.NextOffset()
					p = rest
				}
				if len(buf) == 0 {
					var info string
					for _, s := range l.segments() {
						s.mu.RLock()
						info += fmt.Sprintf(" [seg %d size %d idx %v]", s.base, s.size.Load(), s.idx.entries)
						s.mu.RUnlock()
					}
					fail(fmt.Errorf("read %d < %d: nothing; lso %d now %d-%d %s", off, leo, lso, l.LogStartOffset(), l.LogEndOffset(), info))
					return
				}
			}
		}(r)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !done.Load() {
			if _, err := l.DeleteOldSegments(); err != nil {
				fail(err)
				return
			}
			l.MaxTimestamp()
			if _, _, _, err := l.OffsetForTimestamp(1_700_000_000_000 + 100); err != nil {
				fail(err)
				return
			}
			l.Producers()
			l.Size()
		}
	}()
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	if l.LogStartOffset() == 0 {
		t.Fatal("retention never ran")
	}
	if got := readAllBatches(t, l, l.LogStartOffset()); len(got) == 0 {
		t.Fatal("nothing left")
	}
}
