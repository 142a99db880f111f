package runtime

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/runtime/runtimetest"
	"github.com/fjordhq/fjord/connect/storage"
	"github.com/fjordhq/fjord/internal/testkit"
)

func init() { runtimetest.Register() }

// events records status reports, as a herder would write them.
type events struct {
	mu   sync.Mutex
	last map[string]storage.State
	errs map[string]error
	all  map[string][]storage.State
}

func newEvents() *events {
	return &events{last: map[string]storage.State{}, errs: map[string]error{}, all: map[string][]storage.State{}}
}

func key(conn string, task int) string { return conn + "/" + strconv.Itoa(task) }

func (e *events) Status(conn string, task int, st storage.State, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	k := key(conn, task)
	e.last[k], e.errs[k] = st, err
	e.all[k] = append(e.all[k], st)
}

func (e *events) state(conn string, task int) (storage.State, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	k := key(conn, task)
	return e.last[k], e.errs[k]
}

func (e *events) history(conn string, task int) []storage.State {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.all[key(conn, task)])
}

func (e *events) await(t *testing.T, conn string, task int, want storage.State) error {
	t.Helper()
	var err error
	testkit.CheckFor(t, 30*time.Second, 10*time.Millisecond, func() error {
		st, e2 := e.state(conn, task)
		if st != want {
			return fmt.Errorf("%s task %d is %s (%v), want %s", conn, task, st, e2, want)
		}
		err = e2
		return nil
	})
	return err
}

func workerProps(addr string, extra ...string) map[string]string {
	m := map[string]string{
		"bootstrap.servers":            addr,
		"key.converter":                runtimetest.ConverterClass,
		"value.converter":              runtimetest.ConverterClass,
		"header.converter":             runtimetest.ConverterClass,
		"offset.storage.file.filename": "/nonexistent",
		"offset.flush.interval.ms":     "100",
	}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i]] = extra[i+1]
	}
	return m
}

func newTestWorker(t *testing.T, props map[string]string, offsets storage.OffsetStore) *Worker {
	t.Helper()
	cfg, err := ParseWorkerConfig(props, Standalone)
	if err != nil {
		t.Fatal(err)
	}
	if offsets == nil {
		offsets = storage.NewMemoryOffsetStore()
	}
	w, err := NewWorker(cfg, WorkerOptions{WorkerID: "test:8083", Offsets: offsets, Topics: storage.NewMemoryStatusStore()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close(context.Background()) })
	return w
}

// run starts a connector and its tasks as a herder would.
func run(t *testing.T, w *Worker, ev *events, config map[string]string) []storage.TaskID {
	t.Helper()
	ctx := testkit.Context(t, 30*time.Second)
	name := config["name"]
	if err := w.StartConnector(ctx, name, config, storage.TargetStarted, ev, nil); err != nil {
		t.Fatal(err)
	}
	tcs, err := w.ConnectorTaskConfigs(ctx, name, config)
	if err != nil {
		t.Fatal(err)
	}
	var ids []storage.TaskID
	for i, tc := range tcs {
		id := storage.TaskID{Connector: name, Task: i}
		if err := w.StartTask(ctx, id, config, tc, storage.TargetStarted, ev); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

func awaitDistinct(t *testing.T, c *runtimetest.Collected, n int) {
	t.Helper()
	testkit.CheckFor(t, 60*time.Second, 20*time.Millisecond, func() error {
		if d := c.Distinct(); d < n {
			return fmt.Errorf("sink has %d distinct values, want %d", d, n)
		}
		return nil
	})
}

func TestSourceToSink(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	adm := testkit.Admin(t, b.Addr)
	ctx := testkit.Context(t, time.Minute)
	if _, err := adm.CreateTopic(ctx, 3, 1, nil, "seq"); err != nil {
		t.Fatal(err)
	}
	offsets := storage.NewMemoryOffsetStore()
	w := newTestWorker(t, workerProps(b.Addr), offsets)
	ev := newEvents()
	id := runtimetest.TestID(t)
	const n = 500
	src := runtimetest.SourceConfig("src", id, "seq", n, "tasks.max", "2", "batch.size", "37")
	run(t, w, ev, src)
	sink := runtimetest.SinkConfig("sink", id, "seq", "tasks.max", "2")
	run(t, w, ev, sink)
	c := runtimetest.Collector(id)
	awaitDistinct(t, c, 2*n) // two source tasks, n records each

	for _, k := range []struct {
		conn string
		task int
	}{{"src", -1}, {"src", 0}, {"src", 1}, {"sink", -1}, {"sink", 0}, {"sink", 1}} {
		if st, err := ev.state(k.conn, k.task); st != storage.StateRunning {
			t.Errorf("%s/%d is %s (%v)", k.conn, k.task, st, err)
		}
	}
	// Source offsets reach the last record of each task's partition.
	testkit.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		all, _ := offsets.All(ctx, "src")
		if len(all) != 2 {
			return fmt.Errorf("offsets %v", all)
		}
		for _, o := range all {
			if o.Offset["seq"] != int64(n-1) {
				return fmt.Errorf("offsets %v", all)
			}
		}
		return nil
	})
	stats := runtimetest.Source(id)
	if got := stats.CommitRecords.Load(); got != 2*n {
		t.Errorf("CommitRecord called %d times, want %d", got, 2*n)
	}
	if stats.Commits.Load() == 0 {
		t.Error("source task Commit never called")
	}
	// Headers went through the header converter both ways.
	if hs := c.Header("seq"); len(hs) < 2*n {
		t.Errorf("%d seq headers", len(hs))
	}
	// The sink's group committed everything.
	testkit.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		o, err := w.ConnectorOffsets(ctx, "sink", sink)
		if err != nil {
			return err
		}
		total := int64(0)
		for _, x := range o.Offsets {
			total += x.Offset[kafkaOffsetKey].(int64)
		}
		if total != 2*n {
			return fmt.Errorf("sink committed %d records: %+v", total, o.Offsets)
		}
		return nil
	})
	// Topic tracking (written in the background).
	testkit.CheckFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		if ts := w.topics.Topics("src"); len(ts) != 1 || ts[0].Topic != "seq" {
			return fmt.Errorf("src topics %+v", ts)
		}
		return nil
	})
	w.StopTasks(ctx, []storage.TaskID{{Connector: "sink", Task: 0}, {Connector: "sink", Task: 1}})
	w.StopConnector(ctx, "sink")
	if st, _ := ev.state("sink", 0); st != storage.StateUnassigned {
		t.Errorf("stopped sink task is %s", st)
	}
	if st, _ := ev.state("sink", -1); st != storage.StateUnassigned {
		t.Errorf("stopped sink is %s", st)
	}
	if len(c.Closed()) == 0 {
		t.Error("sink task never closed its partitions")
	}
}

// TestSourceAtLeastOnce kills a source task mid-flight: the process
// "dies" (no commit after that point), a new worker resumes from the
// committed offsets, and every record reaches the topic at least once.
func TestSourceAtLeastOnce(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	ctx := testkit.Context(t, time.Minute)
	store := storage.NewMemoryOffsetStore()
	dying := &dyingStore{OffsetStore: store}
	id := runtimetest.TestID(t)
	const n = 3000
	src := runtimetest.SourceConfig("src", id, "alo", n, "batch.size", "50", "poll.delay.ms", "2")
	w1 := newTestWorker(t, workerProps(b.Addr, "offset.flush.interval.ms", "20"), dying)
	ev := newEvents()
	run(t, w1, ev, src)
	// Let some offsets be committed, then die mid-flight.
	testkit.CheckFor(t, 30*time.Second, 5*time.Millisecond, func() error {
		got, _ := store.Get(ctx, "src", []map[string]any{{"task": "0"}})
		if got[0] == nil || got[0]["seq"].(int64) < 300 {
			return fmt.Errorf("committed %v", got[0])
		}
		return nil
	})
	dying.die()
	w1.Close(ctx)
	committed, _ := store.Get(ctx, "src", []map[string]any{{"task": "0"}})
	resumeAt := committed[0]["seq"].(int64) + 1
	if resumeAt >= n {
		t.Fatalf("source finished before the crash (resume at %d)", resumeAt)
	}

	w2 := newTestWorker(t, workerProps(b.Addr), store)
	ev2 := newEvents()
	run(t, w2, ev2, src)
	ev2.await(t, "src", 0, storage.StateRunning)
	stats := runtimetest.Source(id)
	if starts := stats.StartedAt(); len(starts) != 2 || starts[1] != resumeAt {
		t.Fatalf("task starts at %v, want the second at %d (committed offset + 1)", starts, resumeAt)
	}
	// Read the topic: every sequence number at least once.
	seen := map[string]int{}
	cl := testkit.Client(t, b.Addr, kgo.ConsumeTopics("alo"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	for len(seen) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d distinct records of %d", len(seen), n)
		}
		fs.EachRecord(func(r *kgo.Record) { seen[string(r.Value)]++ })
	}
	dups := 0
	for i := range n {
		c := seen["v-"+strconv.Itoa(i)]
		if c == 0 {
			t.Fatalf("record %d missing", i)
		}
		dups += c - 1
	}
	t.Logf("resumed at %d; %d duplicates re-sent after the crash", resumeAt, dups)
}

// dyingStore stops committing offsets once told the process died.
type dyingStore struct {
	storage.OffsetStore
	mu   sync.Mutex
	dead bool
}

func (d *dyingStore) die() { d.mu.Lock(); d.dead = true; d.mu.Unlock() }

func (d *dyingStore) Put(ctx context.Context, c string, o []connect.SourcePartitionOffset) error {
	d.mu.Lock()
	dead := d.dead
	d.mu.Unlock()
	if dead {
		return fmt.Errorf("process is dead")
	}
	return d.OffsetStore.Put(ctx, c, o)
}

func TestPauseResumeAndFailure(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	ctx := testkit.Context(t, time.Minute)
	w := newTestWorker(t, workerProps(b.Addr), nil)
	ev := newEvents()
	id := runtimetest.TestID(t)
	src := runtimetest.SourceConfig("src", id, "pr", -1, "batch.size", "5", "poll.delay.ms", "5")
	run(t, w, ev, src)
	sink := runtimetest.SinkConfig("sink", id, "pr")
	run(t, w, ev, sink)
	c := runtimetest.Collector(id)
	awaitDistinct(t, c, 20)

	if err := w.SetTargetState(ctx, "sink", storage.TargetPaused); err != nil {
		t.Fatal(err)
	}
	ev.await(t, "sink", 0, storage.StatePaused)
	ev.await(t, "sink", -1, storage.StatePaused)
	// The paused sink receives nothing while the source goes on.
	before := len(c.Values())
	time.Sleep(300 * time.Millisecond) // nothing to poll for: asserting absence
	if after := len(c.Values()); after > before+maxPollBatch {
		t.Errorf("paused sink received %d records", after-before)
	}
	if err := w.SetTargetState(ctx, "sink", storage.TargetStarted); err != nil {
		t.Fatal(err)
	}
	ev.await(t, "sink", 0, storage.StateRunning)
	awaitDistinct(t, c, before+20)

	if h := ev.history("sink", 0); !slices.Contains(h, storage.StatePaused) {
		t.Errorf("history %v", h)
	}
}

// maxPollBatch bounds what a sink may still be handed after its pause
// (one poll already in hand).
const maxPollBatch = 500

func TestTaskFailsAndRestarts(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	ctx := testkit.Context(t, time.Minute)
	store := storage.NewMemoryOffsetStore()
	w := newTestWorker(t, workerProps(b.Addr), store)
	ev := newEvents()
	id := runtimetest.TestID(t)
	src := runtimetest.SourceConfig("src", id, "fail", 100, "batch.size", "10", "fail.at", "42")
	ids := run(t, w, ev, src)
	err := ev.await(t, "src", 0, storage.StateFailed)
	if err == nil || !strings.Contains(ErrorTrace(err), "told to fail at 42") {
		t.Fatalf("failure trace %q", ErrorTrace(err))
	}
	// A restart with the bug fixed resumes after what was committed.
	w.StopTasks(ctx, ids)
	fixed := maps.Clone(src)
	delete(fixed, "fail.at")
	taskConfig := maps.Clone(fixed)
	taskConfig["task.number"] = "0"
	if err := w.StartTask(ctx, ids[0], fixed, taskConfig, storage.TargetStarted, ev); err != nil {
		t.Fatal(err)
	}
	ev.await(t, "src", 0, storage.StateRunning)
	testkit.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		got, _ := store.Get(ctx, "src", []map[string]any{{"task": "0"}})
		if got[0] == nil || got[0]["seq"] != int64(99) {
			return fmt.Errorf("offset %v", got[0])
		}
		return nil
	})
	if starts := runtimetest.Source(id).StartedAt(); len(starts) != 2 || starts[1] != 42 {
		t.Errorf("starts %v, want the restart at 42", starts)
	}
}
