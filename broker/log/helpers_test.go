package log

import (
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/fjordhq/fjord/broker/batch"
)

// rec is a record for test batches; nil Value is a tombstone.
type rec struct {
	Key, Value []byte
	TsDelta    int64
}

type bopts struct {
	pid       int64
	epoch     int16
	seq       int32
	ts        int64 // base timestamp
	txn, ctrl bool
}

var noPID = bopts{pid: -1, epoch: -1, seq: -1, ts: 1_700_000_000_000}

// mkBatch encodes an uncompressed v2 batch (a minimal encoder for tests of
// this package; the broker's batch package owns the real one).
func mkBatch(o bopts, recs ...rec) []byte {
	var body []byte
	maxTs := o.ts
	for i, r := range recs {
		var rb []byte
		rb = append(rb, 0) // attributes
		rb = binary.AppendVarint(rb, r.TsDelta)
		rb = binary.AppendVarint(rb, int64(i))
		if r.Key == nil {
			rb = binary.AppendVarint(rb, -1)
		} else {
			rb = binary.AppendVarint(rb, int64(len(r.Key)))
			rb = append(rb, r.Key...)
		}
		if r.Value == nil {
			rb = binary.AppendVarint(rb, -1)
		} else {
			rb = binary.AppendVarint(rb, int64(len(r.Value)))
			rb = append(rb, r.Value...)
		}
		rb = binary.AppendVarint(rb, 0) // headers
		body = binary.AppendVarint(body, int64(len(rb)))
		body = append(body, rb...)
		maxTs = max(maxTs, o.ts+r.TsDelta)
	}
	b := make([]byte, batch.HeaderSize, batch.HeaderSize+len(body))
	b = append(b, body...)
	be := binary.BigEndian
	be.PutUint32(b[8:], uint32(len(b)-batch.LogOverhead))
	be.PutUint32(b[12:], 0)
	b[16] = 2
	var attr uint16
	if o.txn {
		attr |= batch.AttrTransactional
	}
	if o.ctrl {
		attr |= batch.AttrControl
	}
	be.PutUint16(b[21:], attr)
	be.PutUint32(b[23:], uint32(max(len(recs)-1, 0)))
	be.PutUint64(b[27:], uint64(o.ts))
	be.PutUint64(b[35:], uint64(maxTs))
	be.PutUint64(b[43:], uint64(o.pid))
	be.PutUint16(b[51:], uint16(o.epoch))
	be.PutUint32(b[53:], uint32(o.seq))
	be.PutUint32(b[57:], uint32(len(recs)))
	batch.Batch(b).UpdateCRC()
	return b
}

// valueBatch is n records of size bytes each with keys k0..k(n-1).
func valueBatch(o bopts, n, size int) []byte {
	recs := make([]rec, n)
	for i := range recs {
		v := make([]byte, size)
		for j := range v {
			v[j] = byte('a' + (i+j)%26)
		}
		recs[i] = rec{Key: []byte(fmt.Sprintf("k%d", i)), Value: v, TsDelta: int64(i)}
	}
	return mkBatch(o, recs...)
}

// clock is an injectable clock for Options.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.UnixMilli(1_700_000_000_000)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func testOpts(c *clock) Options {
	o := Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if c != nil {
		o.Now = c.Now
	}
	return o
}

func testConfig() Config {
	c := DefaultConfig()
	c.FileDeleteDelayMs = 0
	return c
}

// readAllBatches reads every batch from offset on with AppendTo.
func readAllBatches(t testing.TB, l *Log, from int64) []batch.Batch {
	t.Helper()
	var out []batch.Batch
	for off := from; off < l.LogEndOffset(); {
		res, err := l.Read(off, 1<<20, l.LogEndOffset(), true)
		if err != nil {
			t.Fatalf("read at %d: %v", off, err)
		}
		if res.Size == 0 {
			t.Fatalf("read at %d: nothing before log end %d", off, l.LogEndOffset())
		}
		b, err := res.AppendTo(nil)
		if err != nil {
			t.Fatalf("read at %d: %v", off, err)
		}
		for len(b) > 0 {
			bb, rest, err := batch.Next(b)
			if err != nil {
				t.Fatalf("read at %d: %v", off, err)
			}
			if err := bb.Validate(); err != nil {
				t.Fatalf("read at %d: batch %v: %v", off, bb, err)
			}
			out = append(out, bb)
			off = bb.NextOffset()
			b = rest
		}
	}
	return out
}

func mustOpen(t testing.TB, dir string, cfg Config, o Options, recover bool) *Log {
	t.Helper()
	l, err := Open(dir, cfg, o, recover)
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	return l
}

func mustAppend(t testing.TB, l *Log, data []byte) AppendResult {
	t.Helper()
	res, err := l.Append(data, AppendOptions{LeaderEpoch: 0, AssignOffsets: true})
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	return res
}

// checkFor polls fn until it returns nil or wait passes.
func checkFor(t testing.TB, wait, every time.Duration, fn func() error) {
	t.Helper()
	deadline := time.Now().Add(wait)
	var err error
	for time.Now().Before(deadline) {
		if err = fn(); err == nil {
			return
		}
		time.Sleep(every)
	}
	t.Fatalf("condition not met after %v: %v", wait, err)
}
