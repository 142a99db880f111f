package cdc

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fjordhq/fjord/connect"
)

// Task is the CDC source task: one per connector (a slot has one reader).
// A reader goroutine snapshots and then streams the slot into a bounded
// queue; Poll hands the queue to the runtime; Commit advances the slot to
// what the runtime has durably stored.
type Task struct {
	tctx connect.SourceTaskContext
	s    *settings
	log  *slog.Logger

	partition map[string]any
	queue     *recordQueue
	cancel    context.CancelFunc
	done      chan struct{}

	conn *pgx.Conn // the reader's regular connection (catalog, heartbeats)
	cat  *catalog
	// confirmed is the LSN the slot may be advanced to: offsets of every
	// record before it are durable. The stream loop reports it.
	confirmed atomic.Uint64
	flushReq  chan struct{}

	stopOnce sync.Once
	runID    string

	metrics taskMetrics // read by the process's collector (metrics.go)
}

// contextHeaders appends Debezium's context headers (on by default in
// Debezium 3: extended.headers.enabled) to h.
func (t *Task) contextHeaders(h connect.Headers) connect.Headers {
	str := stringSchema
	return append(h,
		connect.Header{Key: "__debezium.context.connectorLogicalName", Schema: str, Value: t.s.prefix},
		connect.Header{Key: "__debezium.context.taskId", Schema: str, Value: "0"},
		connect.Header{Key: "__debezium.context.connectorName", Schema: str, Value: "postgresql"},
		connect.Header{Key: "__debezium.context.runId", Schema: str, Value: t.runID})
}

// Initialize keeps the runtime context (offsets).
func (t *Task) Initialize(ctx connect.SourceTaskContext) { t.tctx = ctx }

// Start parses the config and starts the reader.
func (t *Task) Start(ctx context.Context, props map[string]string) error {
	s, err := parseSettings(props)
	if err != nil {
		return err
	}
	t.s = s
	t.log = slog.Default().With("connector", props["name"], "plugin", "postgres-cdc", "slot", s.slot)
	if s.types.FailureMode == "warn" {
		log := t.log
		s.types.OnConversionFailure = func(tb *Table, column string, err error) {
			log.Warn("a value could not be converted; emitted as null (event.converting.failure.handling.mode=warn)",
				"table", tb.Schema+"."+tb.Name, "column", column, "err", err)
		}
	}
	t.partition = map[string]any{"server": s.prefix}
	t.runID = newRunID()
	t.metrics.connector = props["name"]
	if t.metrics.connector == "" {
		t.metrics.connector = s.prefix
	}
	t.metrics.behindMs.Store(-1)
	t.queue = newRecordQueue(s.maxQueue)
	t.flushReq = make(chan struct{}, 1)
	var stored map[string]any
	if t.tctx != nil {
		if stored, err = t.tctx.Offsets().Offset(t.partition); err != nil {
			return fmt.Errorf("read stored offsets: %w", err)
		}
	}
	off, err := parseOffset(stored)
	if err != nil {
		return err
	}
	rctx, cancel := context.WithCancel(context.Background())
	t.cancel = cancel
	t.done = make(chan struct{})
	// Fail fast on what the user must fix (bad login, wal_level, rights):
	// the task goes FAILED with the message instead of retrying forever.
	if err := t.prepare(ctx); err != nil {
		cancel()
		close(t.done)
		return err
	}
	go func() {
		defer close(t.done)
		err := t.run(rctx, off)
		if err != nil && rctx.Err() == nil {
			t.queue.fail(err)
			return
		}
		t.queue.fail(errStopped)
	}()
	metrics.add(t)
	return nil
}

var errStopped = errors.New("postgres-cdc: task stopped")

// Poll returns queued records, waiting up to poll.interval.ms for some.
func (t *Task) Poll(ctx context.Context) ([]*connect.SourceRecord, error) {
	recs, err := t.queue.take(ctx, t.s.maxBatch, t.s.pollInterval)
	if errors.Is(err, errStopped) {
		return nil, nil
	}
	return recs, err
}

// Commit advances the slot to the LSN of the committed offset: the
// runtime has stored the offsets of every record up to it.
func (t *Task) Commit(ctx context.Context) error {
	if t.tctx == nil {
		return nil
	}
	stored, err := t.tctx.Offsets().Offset(t.partition)
	if err != nil || stored == nil {
		return err
	}
	off, err := parseOffset(stored)
	if err != nil || off.snapshotting() {
		return err
	}
	for {
		cur := t.confirmed.Load()
		if off.lsn <= cur || t.confirmed.CompareAndSwap(cur, off.lsn) {
			break
		}
	}
	select {
	case t.flushReq <- struct{}{}:
	default:
	}
	return nil
}

// Stop stops the reader and closes its connections.
func (t *Task) Stop() error {
	metrics.remove(t)
	t.stopOnce.Do(func() {
		if t.cancel != nil {
			t.cancel()
			<-t.done
		}
	})
	return nil
}

// offset is the connector's position, stored per record.
//
//   - lsn: where streaming resumes and how far the slot may be confirmed:
//     the commit LSN of the record's transaction (the server re-sends a
//     transaction whose commit record is at the start LSN, so a
//     transaction cut by a crash is sent whole again) or, for heartbeats,
//     a position with nothing unsent before it.
//   - lsn_commit, event_seq: the transaction and the index of the record
//     in it; a resent transaction skips what was already stored.
//   - snapshot/last_snapshot_record: Debezium's snapshot markers; an
//     interrupted snapshot is redone.
type offset struct {
	lsn, lsnCommit uint64
	seq            int64
	snapshot       bool
	lastSnapshot   bool
	txID           int64
	tsUsec         int64
	present        bool
	// incremental is the progress of an ad-hoc incremental snapshot
	// (incrementalState as JSON), "" when none runs.
	incremental string
}

func (o offset) snapshotting() bool { return o.snapshot && !o.lastSnapshot }

func (o offset) toMap() map[string]any {
	m := map[string]any{"lsn": int64(o.lsn), "ts_usec": o.tsUsec}
	if o.snapshot {
		m["snapshot"] = true
		m["last_snapshot_record"] = o.lastSnapshot
	} else {
		m["lsn_commit"] = int64(o.lsnCommit)
		m["lsn_proc"] = int64(o.lsnCommit)
		m["event_seq"] = o.seq
	}
	if o.txID != 0 {
		m["txId"] = o.txID
	}
	if o.incremental != "" {
		m["incremental_snapshot"] = o.incremental
	}
	return m
}

func parseOffset(m map[string]any) (offset, error) {
	var o offset
	if m == nil {
		return o, nil
	}
	o.present = true
	num := func(k string) (int64, error) {
		switch v := m[k].(type) {
		case nil:
			return 0, nil
		case float64:
			return int64(v), nil
		case int64:
			return v, nil
		case int32:
			return int64(v), nil
		case int:
			return int64(v), nil
		case json.Number:
			return v.Int64()
		case string:
			return strconv.ParseInt(v, 10, 64)
		}
		return 0, fmt.Errorf("stored offset %s=%v (%T) is not a number; reset the connector's offsets", k, m[k], m[k])
	}
	var err error
	var v int64
	if v, err = num("lsn"); err != nil {
		return o, err
	}
	o.lsn = uint64(v)
	if v, err = num("lsn_commit"); err != nil {
		return o, err
	}
	o.lsnCommit = uint64(v)
	if o.seq, err = num("event_seq"); err != nil {
		return o, err
	}
	if o.txID, err = num("txId"); err != nil {
		return o, err
	}
	if o.tsUsec, err = num("ts_usec"); err != nil {
		return o, err
	}
	o.incremental, _ = m["incremental_snapshot"].(string)
	o.snapshot, _ = m["snapshot"].(bool)
	o.lastSnapshot, _ = m["last_snapshot_record"].(bool)
	if s, ok := m["snapshot"].(string); ok { // Debezium writes "INITIAL" etc. in newer versions
		o.snapshot = s != "" && s != "false"
	}
	return o, nil
}

// recordQueue is the bounded hand-off between the reader and Poll.
type recordQueue struct {
	mu       sync.Mutex
	recs     []*connect.SourceRecord
	max      int
	err      error
	notEmpty chan struct{} // signalled when records (or an error) arrive
	notFull  chan struct{} // signalled when Poll took records
}

func newRecordQueue(max int) *recordQueue {
	return &recordQueue{max: max, notEmpty: make(chan struct{}, 1), notFull: make(chan struct{}, 1)}
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// put appends records, blocking while the queue is full.
func (q *recordQueue) put(ctx context.Context, recs ...*connect.SourceRecord) error {
	for {
		q.mu.Lock()
		if len(q.recs) < q.max {
			q.recs = append(q.recs, recs...)
			q.mu.Unlock()
			signal(q.notEmpty)
			return nil
		}
		q.mu.Unlock()
		select {
		case <-q.notFull:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// fail records the reader's end; Poll returns it once the queue drained.
func (q *recordQueue) fail(err error) {
	q.mu.Lock()
	if q.err == nil {
		q.err = err
	}
	q.mu.Unlock()
	signal(q.notEmpty)
}

// take returns up to max records, waiting up to wait for the first.
func (q *recordQueue) take(ctx context.Context, max int, wait time.Duration) ([]*connect.SourceRecord, error) {
	var timer *time.Timer
	for {
		q.mu.Lock()
		if n := len(q.recs); n > 0 {
			if n > max {
				n = max
			}
			out := make([]*connect.SourceRecord, n)
			copy(out, q.recs)
			rest := copy(q.recs, q.recs[n:])
			clear(q.recs[rest:])
			q.recs = q.recs[:rest]
			q.mu.Unlock()
			signal(q.notFull)
			return out, nil
		}
		err := q.err
		q.mu.Unlock()
		if err != nil {
			return nil, err
		}
		if timer == nil {
			timer = time.NewTimer(wait)
			defer timer.Stop()
		}
		select {
		case <-q.notEmpty:
		case <-timer.C:
			return nil, nil
		case <-ctx.Done():
			return nil, nil
		}
	}
}

var stringSchema = connect.NewSchema(connect.String).Build()

// newRunID is a UUIDv7, as Debezium's run ids.
func newRunID() string {
	var b [16]byte
	rand.Read(b[:])
	ms := uint64(time.Now().UnixMilli())
	b[0], b[1], b[2], b[3], b[4], b[5] = byte(ms>>40), byte(ms>>32), byte(ms>>24), byte(ms>>16), byte(ms>>8), byte(ms)
	b[6] = b[6]&0x0f | 0x70
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
