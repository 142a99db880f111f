package source

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/fjordhq/fjord/connect"
	offsetstore "github.com/fjordhq/fjord/connect/storage"
)

// Backoff after an S3 failure: doubled per failure in a row, reset by a
// success.
const (
	minBackoff = 250 * time.Millisecond
	maxBackoff = 30 * time.Second
)

// Task restores some Kafka partitions: for each, it reads the partition's
// objects in start-offset order, one open object at a time, and emits one
// record per stored record.
type Task struct {
	tctx      connect.SourceTaskContext
	s         *settings
	n         naming
	b         bucket
	parts     []*partState
	byTopic   map[string][]*partState
	rr        int // round robin over parts: the next one to read an object of
	cur       *objectStream
	curPart   *partState
	nextList  time.Time // when to list again once everything listed is read
	settle    settle
	failures  int // S3 failures in a row
	retryAt   time.Time
	stop      chan struct{}
	stopOnce  sync.Once
	openMu    sync.Mutex    // guards open, which Stop closes
	open      *objectStream // the object Poll reads, for Stop
	newBucket bucketFactory // tests replace it
}

// partState is one Kafka partition's progress.
type partState struct {
	tp     connect.TopicPartition
	source map[string]any // shared by its records: the runtime caches its encoding by identity
	cur    cursor
	queue  []objectRef // objects still to read, in order
}

var (
	_ connect.SourceTask           = (*Task)(nil)
	_ connect.ContextualSourceTask = (*Task)(nil)
)

func (t *Task) Initialize(ctx connect.SourceTaskContext) { t.tctx = ctx }

func (t *Task) Start(ctx context.Context, props map[string]string) error {
	s, err := parseSettings(props)
	if err != nil {
		return fmt.Errorf("S3 source task config: %w", err)
	}
	var tps []connect.TopicPartition
	if raw := props[taskPartitionsConfig]; raw != "" {
		if err := json.Unmarshal([]byte(raw), &tps); err != nil {
			return fmt.Errorf("S3 source task: bad %s %q: %w", taskPartitionsConfig, raw, err)
		}
	}
	return t.start(ctx, s, tps)
}

// start runs the task on parsed settings (the tests' entry).
func (t *Task) start(ctx context.Context, s *settings, tps []connect.TopicPartition) error {
	t.s, t.n = s, namingOf(s)
	t.settle = settle{minAge: s.minAge}
	t.stop = make(chan struct{})
	t.byTopic = map[string][]*partState{}
	for _, tp := range tps {
		p := &partState{tp: tp, source: sourcePartition(tp)}
		t.parts = append(t.parts, p)
		t.byTopic[tp.Topic] = append(t.byTopic[tp.Topic], p)
	}
	if err := t.loadOffsets(); err != nil {
		return err
	}
	if t.newBucket == nil {
		t.newBucket = openStore
	}
	var err error
	if t.b, err = t.newBucket(ctx, s); err != nil {
		return fmt.Errorf("S3 source task: %w", err)
	}
	slog.Info("S3 source task started", "partitions", len(t.parts))
	return nil
}

// loadOffsets reads where each partition was committed last.
func (t *Task) loadOffsets() error {
	if t.tctx == nil || t.tctx.Offsets() == nil || len(t.parts) == 0 {
		return nil
	}
	keys := make([]map[string]any, len(t.parts))
	for i, p := range t.parts {
		keys[i] = p.source
	}
	offs, err := t.tctx.Offsets().Offsets(keys)
	if err != nil {
		return fmt.Errorf("S3 source task: read committed offsets: %w", err)
	}
	for _, p := range t.parts {
		c, err := cursorFrom(offs[offsetstore.PartitionKey(p.source)], func(key string) (int64, bool) {
			_, start, ok := t.n.parse(key)
			return start, ok
		})
		if err != nil {
			return fmt.Errorf("S3 source task: committed offset of %s-%d: %w", p.tp.Topic, p.tp.Partition, err)
		}
		p.cur = c
		if c.Set {
			slog.Info("S3 source: resuming", "topic", p.tp.Topic, "partition", p.tp.Partition, "object", c.Key, "record", c.Record)
		}
	}
	return nil
}

// Poll returns up to record.batch.max.size records. When every object
// listed is read it waits out s3.poll.interval.ms since the last listing
// and lists again, for what the sink wrote since.
func (t *Task) Poll(ctx context.Context) ([]*connect.SourceRecord, error) {
	if wait := time.Until(t.retryAt); wait > 0 {
		t.sleep(ctx, wait)
		return nil, nil
	}
	if t.cur == nil && t.idle() {
		if wait := time.Until(t.nextList); wait > 0 {
			t.sleep(ctx, wait)
			return nil, nil
		}
		if err := t.list(ctx); err != nil {
			return nil, t.failed(ctx, err)
		}
		if t.idle() {
			return nil, nil // nothing new: the next poll waits
		}
	}
	recs := make([]*connect.SourceRecord, 0, t.s.batchSize)
	for len(recs) < t.s.batchSize {
		if t.cur == nil {
			p := t.nextPart()
			if p == nil {
				break
			}
			ref := p.queue[0]
			o, err := openObject(ctx, t.b, t.s, ref, p.cur.skip(ref))
			if err != nil {
				return t.fail(ctx, recs, err)
			}
			t.cur, t.curPart = o, p
			t.setOpen(o)
		}
		r, err := t.cur.next()
		if errors.Is(err, io.EOF) {
			t.finishObject()
			continue
		}
		if err != nil {
			t.closeObject()
			return t.fail(ctx, recs, err)
		}
		recs = append(recs, t.record(r))
	}
	t.failures = 0
	return recs, nil
}

// nextPart picks the partition to open an object of, round robin, so
// that every partition progresses; nil when all are read.
func (t *Task) nextPart() *partState {
	for range t.parts {
		p := t.parts[t.rr%len(t.parts)]
		if len(p.queue) > 0 {
			return p
		}
		t.rr++
	}
	return nil
}

// fail ends a poll that hit err after reading recs. Records read before
// the failure are returned; the next poll reopens the object after them
// and meets the error again with nothing before it.
func (t *Task) fail(ctx context.Context, recs []*connect.SourceRecord, err error) ([]*connect.SourceRecord, error) {
	err = t.failed(ctx, err)
	if len(recs) > 0 {
		return recs, nil
	}
	return nil, err
}

// record turns a restored record into a source record.
func (t *Task) record(r restored) *connect.SourceRecord {
	p, ref := t.curPart, t.cur.ref
	p.cur = cursor{Set: true, Key: ref.Key, Start: ref.Start, Record: r.index}
	rec := connect.NewSourceRecord(p.source, sourceOffset(ref, r.index), p.tp.Topic, r.keySchema, r.key, r.valueSchema, r.value)
	if t.s.restorePartitions {
		rec.Partition = p.tp.Partition
	}
	rec.Headers = r.headers
	return rec
}

// finishObject marks the open object read to its end and moves on to the
// next partition.
func (t *Task) finishObject() {
	p, ref := t.curPart, t.cur.ref
	if !p.cur.Set || p.cur.Key != ref.Key {
		// An object with no record left to emit still moves the cursor,
		// so that it is not opened again in this run.
		p.cur = cursor{Set: true, Key: ref.Key, Start: ref.Start, Record: t.cur.index - 1}
	}
	p.cur.Done = true
	p.queue = p.queue[1:]
	t.closeObject()
	t.rr++
}

func (t *Task) closeObject() {
	t.setOpen(nil)
	t.cur, t.curPart = nil, nil
}

// setOpen records the open object for Stop, closing the one before.
func (t *Task) setOpen(o *objectStream) {
	t.openMu.Lock()
	defer t.openMu.Unlock()
	if t.open != nil && t.open != o {
		t.open.close()
	}
	t.open = o
}

// idle reports whether every listed object was read.
func (t *Task) idle() bool {
	return !slices.ContainsFunc(t.parts, func(p *partState) bool { return len(p.queue) > 0 })
}

// list lists each topic of the task once and queues, per partition, the
// objects after its cursor that have settled. The next listing is a poll
// interval away, or sooner when an object was held back.
func (t *Task) list(ctx context.Context) error {
	now := time.Now()
	next := now.Add(t.s.pollInterval)
	for topic, parts := range t.byTopic {
		want := map[int32]bool{}
		for _, p := range parts {
			want[p.tp.Partition] = true
		}
		objs, err := objectsOf(ctx, t.b, t.n, topic, want)
		if err != nil {
			return &storeError{fmt.Errorf("list %s: %w", t.n.layout.TopicPrefix(topic), err)}
		}
		for _, p := range parts {
			q, at := t.settle.ready(queue(objs[p.tp.Partition], p.cur), now)
			p.queue = q
			if !at.IsZero() && at.Before(next) {
				next = at
			}
		}
	}
	t.nextList = next
	t.failures = 0
	return nil
}

// failed handles a failed S3 call or a bad object: S3 failures are
// logged and retried after a backoff; anything else fails the task.
func (t *Task) failed(ctx context.Context, err error) error {
	var se *storeError
	if !errors.As(err, &se) {
		return err
	}
	if ctx.Err() != nil {
		return nil // the task is being stopped: not an S3 failure
	}
	t.failures++
	wait := min(minBackoff<<min(t.failures-1, 16), maxBackoff)
	slog.Warn("S3 source: S3 request failed, retrying", "err", err, "attempt", t.failures, "backoff", wait)
	t.retryAt = time.Now().Add(wait)
	return nil
}

func (t *Task) sleep(ctx context.Context, d time.Duration) {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
	case <-ctx.Done():
	case <-t.stop:
	}
}

func (t *Task) Commit(ctx context.Context) error { return nil }

// Stop wakes a waiting Poll; it may run while Poll runs.
func (t *Task) Stop() error {
	if t.stop == nil {
		return nil
	}
	t.stopOnce.Do(func() {
		close(t.stop)
	})
	// The open object's stream is closed so its connection is not left
	// to the garbage collector; a Poll still reading fails on it and its
	// records are read again by whoever resumes.
	t.openMu.Lock()
	defer t.openMu.Unlock()
	if t.open != nil {
		t.open.close()
		t.open = nil
	}
	return nil
}
