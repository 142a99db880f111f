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
	// The loop may not have caught the log over its limit before the
	// appender finished (fast machines, -short): one more pass must.
	if _, err := l.DeleteOldSegments(); err != nil {
		t.Fatal(err)
	}
	if l.LogStartOffset() == 0 || l.Size() > cfg.RetentionBytes+cfg.SegmentBytes {
		t.Fatalf("retention did not apply: start %d, size %d", l.LogStartOffset(), l.Size())
	}
	if got := readAllBatches(t, l, l.LogStartOffset()); len(got) == 0 {
		t.Fatal("nothing left")
	}
}

// The cleaner compacts while an appender writes and readers read: reads
// stay valid (increasing offsets, whole batches) and the end result is the
// latest value per key.
func TestConcurrentCompaction(t *testing.T) {
	c := newClock()
	cfg := compactConfig()
	cfg.FileDeleteDelayMs = 2000
	l := mustOpen(t, filepath.Join(t.TempDir(), "cc-0"), cfg, testOpts(c), false)
	defer l.Close()
	appends := 1500
	if testing.Short() {
		appends = 400
	}
	var done atomic.Bool
	var wg sync.WaitGroup
	errc := make(chan error, 8)
	fail := func(err error) {
		select {
		case errc <- err:
		default:
		}
	}
	var all []logRecord
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer done.Store(true)
		for i := 0; i < appends; i++ {
			k, v := fmt.Sprintf("k%d", i%37), fmt.Sprint(i)
			res, err := l.Append(kv(t, batch.CodecSnappy, c.Now().UnixMilli(), k, v), AppendOptions{AssignOffsets: true})
			if err != nil {
				fail(err)
				return
			}
			all = append(all, logRecord{res.FirstOffset, k, v})
		}
	}()
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(r)))
			var buf []byte
			for !done.Load() {
				leo := l.LogEndOffset()
				if leo == 0 {
					continue
				}
				off := rng.Int63n(leo)
				res, err := l.Read(off, 1+rng.Intn(4<<10), leo, true)
				if err != nil {
					fail(fmt.Errorf("read %d: %w", off, err))
					return
				}
				if buf, err = res.AppendTo(buf[:0]); err != nil {
					fail(fmt.Errorf("read %d: %w", off, err))
					return
				}
				prev := int64(-1)
				for p := buf; len(p) > 0; {
					b, rest, err := batch.Next(p)
					if err == nil {
						err = b.Validate()
					}
					if err != nil || b.BaseOffset() <= prev || (prev < 0 && b.LastOffset() < off) {
						fail(fmt.Errorf("read %d: bad batch %v after %d: %v", off, b, prev, err))
						return
					}
					prev = b.LastOffset()
					p = rest
				}
			}
		}(r)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		om := newOffsetMap(1 << 16)
		for !done.Load() {
			if _, _, err := l.compact(om, true, 8192); err != nil && !errors.Is(err, errCleanAborted) {
				fail(err)
				return
			}
		}
	}()
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.Compact(1<<20, true); err != nil {
		t.Fatal(err)
	}
	sameRecords(t, records(t, l), latest(all, l.LogEndOffset()))
}
