package herder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect/storage"
	"github.com/fjordhq/fjord/internal/testkit"
)

// fakeCluster is what every fake worker of a test shares: who runs what,
// so a test can see work move and catch anything running twice.
type fakeCluster struct {
	mu       sync.Mutex
	running  map[string]string // "conn" or "conn/3" -> worker id
	starts   map[string]int    // starts per connector or task
	overlaps []string
}

func newFakeCluster() *fakeCluster {
	return &fakeCluster{running: map[string]string{}, starts: map[string]int{}}
}

func (c *fakeCluster) start(key, worker string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if w, ok := c.running[key]; ok && w != worker {
		c.overlaps = append(c.overlaps, fmt.Sprintf("%s on %s and %s", key, w, worker))
	}
	c.running[key] = worker
	c.starts[key]++
}

func (c *fakeCluster) stop(key, worker string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running[key] == worker {
		delete(c.running, key)
	}
}

// owners returns, per worker, the sorted keys it runs.
func (c *fakeCluster) owners() map[string][]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string][]string{}
	for k, w := range c.running {
		out[w] = append(out[w], k)
	}
	for _, ks := range out {
		slices.Sort(ks)
	}
	return out
}

func (c *fakeCluster) owner(key string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.running[key]
}

func (c *fakeCluster) startCount(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.starts[key]
}

func (c *fakeCluster) checkNoOverlap(t *testing.T) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.overlaps) > 0 {
		t.Errorf("work ran on two workers at once: %v", c.overlaps)
	}
}

// fakeWorker is an in-memory DistributedWorker: it "runs" a connector or
// task by recording it, reports statuses as Kafka's worker does, and
// makes tasks.max task configs carrying the connector's "config.version".
type fakeWorker struct {
	id      string
	cluster *fakeCluster

	mu         sync.Mutex
	connectors map[string]fakeConnector
	tasks      map[storage.TaskID]fakeTask
	failStart  map[string]bool  // connector names whose StartConnector fails
	failTask   map[string]error // taskKey → the error StartTask returns
	dead       bool
}

type fakeConnector struct {
	config      map[string]string
	target      storage.TargetState
	l           DistributedStatusListener
	reconfigure func()
}

type fakeTask struct {
	config map[string]string
	target storage.TargetState
	l      DistributedStatusListener
}

func newFakeWorker(id string, c *fakeCluster) *fakeWorker {
	return &fakeWorker{id: id, cluster: c, connectors: map[string]fakeConnector{}, tasks: map[storage.TaskID]fakeTask{}, failStart: map[string]bool{}, failTask: map[string]error{}}
}

func stateOf(t storage.TargetState) storage.State {
	switch t {
	case storage.TargetPaused:
		return storage.StatePaused
	case storage.TargetStopped:
		return storage.StateStopped
	}
	return storage.StateRunning
}

func (w *fakeWorker) StartConnector(_ context.Context, name string, config map[string]string, target storage.TargetState, l DistributedStatusListener, reconfigure func()) error {
	w.mu.Lock()
	fail := w.failStart[name]
	if !fail {
		w.connectors[name] = fakeConnector{config, target, l, reconfigure}
	}
	w.mu.Unlock()
	if fail {
		return errors.New("connector refused to start")
	}
	w.cluster.start(name, w.id)
	l.Status(name, -1, stateOf(target), nil)
	return nil
}

func (w *fakeWorker) StopConnector(_ context.Context, name string) {
	w.mu.Lock()
	c, ok := w.connectors[name]
	delete(w.connectors, name)
	w.mu.Unlock()
	if ok {
		w.cluster.stop(name, w.id)
		c.l.Status(name, -1, storage.StateUnassigned, nil)
	}
}

func (w *fakeWorker) ConnectorTaskConfigs(_ context.Context, name string, config map[string]string) ([]map[string]string, error) {
	n, err := strconv.Atoi(config["tasks.max"])
	if err != nil {
		n = 1
	}
	var out []map[string]string
	for i := range n {
		out = append(out, map[string]string{"task.index": strconv.Itoa(i), "config.version": config["config.version"]})
	}
	return out, nil
}

func taskKey(id storage.TaskID) string { return fmt.Sprintf("%s/%d", id.Connector, id.Task) }

func (w *fakeWorker) StartTask(_ context.Context, id storage.TaskID, _, taskConfig map[string]string, target storage.TargetState, l DistributedStatusListener) error {
	w.mu.Lock()
	if err := w.failTask[taskKey(id)]; err != nil {
		w.mu.Unlock()
		return err
	}
	w.tasks[id] = fakeTask{taskConfig, target, l}
	w.mu.Unlock()
	w.cluster.start(taskKey(id), w.id)
	l.Status(id.Connector, id.Task, stateOf(target), nil)
	return nil
}

func (w *fakeWorker) StopTasks(_ context.Context, ids []storage.TaskID) {
	for _, id := range ids {
		w.mu.Lock()
		t, ok := w.tasks[id]
		delete(w.tasks, id)
		w.mu.Unlock()
		if ok {
			w.cluster.stop(taskKey(id), w.id)
			t.l.Status(id.Connector, id.Task, storage.StateUnassigned, nil)
		}
	}
}

func (w *fakeWorker) SetTargetState(_ context.Context, name string, target storage.TargetState) error {
	w.mu.Lock()
	var notify []func()
	if c, ok := w.connectors[name]; ok {
		c.target = target
		w.connectors[name] = c
		notify = append(notify, func() { c.l.Status(name, -1, stateOf(target), nil) })
	}
	for id, t := range w.tasks {
		if id.Connector == name {
			t.target = target
			w.tasks[id] = t
			notify = append(notify, func() { t.l.Status(id.Connector, id.Task, stateOf(target), nil) })
		}
	}
	w.mu.Unlock()
	for _, n := range notify {
		n()
	}
	return nil
}

// die drops everything the worker runs without a word and ignores all
// later calls, like a killed process.
func (w *fakeWorker) die() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for c := range w.connectors {
		w.cluster.stop(c, w.id)
	}
	for id := range w.tasks {
		w.cluster.stop(taskKey(id), w.id)
	}
	w.connectors, w.tasks = map[string]fakeConnector{}, map[storage.TaskID]fakeTask{}
	w.dead = true
}

// taskConfig returns the config a local task was started with.
func (w *fakeWorker) taskConfig(id storage.TaskID) (map[string]string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t, ok := w.tasks[id]
	return t.config, ok
}

func (w *fakeWorker) targetOf(name string) (storage.TargetState, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	c, ok := w.connectors[name]
	return c.target, ok
}

// requestReconfigure makes a connector ask for new task configs, as a
// connector whose source changed shape would.
func (w *fakeWorker) requestReconfigure(name string) bool {
	w.mu.Lock()
	c, ok := w.connectors[name]
	w.mu.Unlock()
	if ok {
		c.reconfigure()
	}
	return ok
}

// testWorker is one in-process distributed worker: herder, fake worker,
// its own Kafka-topic stores and a tiny REST endpoint for the internal
// task-config hand-over.
type testWorker struct {
	id       string
	h        *Distributed
	w        *fakeWorker
	configs  *storage.KafkaConfigStore
	statuses *storage.KafkaStatusStore
	srv      *httptest.Server
	url      string
	stopped  atomic.Bool
	// task-config hand-overs this worker accepted and refused
	signedPosts, badSignatures atomic.Int32
}

type workerOpts struct {
	maxDelay time.Duration
	protocol string
	session  time.Duration
}

func testLogger() *slog.Logger {
	level := slog.LevelWarn
	if os.Getenv("FJORD_TEST_LOG") != "" {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

func startTestWorker(t *testing.T, addr, groupID, id string, cluster *fakeCluster, o workerOpts) *testWorker {
	t.Helper()
	ctx := testkit.Context(t, time.Minute)
	opts := storage.KafkaOptions{ClientOpts: []kgo.Opt{kgo.SeedBrokers(addr)}, ReadTimeout: 30 * time.Second, Logger: testLogger()}
	configs, err := storage.StartKafkaConfigStore(ctx, opts, storage.KafkaTopic{Name: groupID + "-configs", Property: "config.storage.topic", Partitions: 1, ReplicationFactor: 1, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	statuses, err := storage.StartKafkaStatusStore(ctx, opts, storage.KafkaTopic{Name: groupID + "-status", Property: "status.storage.topic", Partitions: 5, ReplicationFactor: 1, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	tw := &testWorker{id: id, w: newFakeWorker(id, cluster), configs: configs, statuses: statuses}
	tw.srv = httptest.NewServer(http.HandlerFunc(tw.serveInternal))
	tw.url = tw.srv.URL + "/"
	session := o.session
	if session == 0 {
		session = 2 * time.Second
	}
	protocol := o.protocol
	if protocol == "" {
		protocol = "sessioned"
	}
	h, err := NewDistributed(DistributedConfig{
		GroupID: groupID, WorkerID: id, URL: tw.url, Protocol: protocol,
		SessionTimeout: session, HeartbeatInterval: session / 8, RebalanceTimeout: 10 * time.Second,
		ScheduledRebalanceMaxDelay: o.maxDelay, SetScheduledRebalanceMaxDelay: true,
		WorkerSyncTimeout: 5 * time.Second, WorkerUnsyncBackoff: time.Second,
		RetryBackoff: 50 * time.Millisecond, RetryBackoffMax: 500 * time.Millisecond,
		KafkaClusterID: "test-cluster", Logger: testLogger().With("w", id),
	}, DistributedDeps{
		Client:   testkit.Client(t, addr),
		Configs:  configs,
		Statuses: statuses,
		Topics:   statuses,
		Worker:   tw.w,
		ConnectorType: func(c map[string]string) ConnectorType {
			if strings.Contains(c["connector.class"], "Sink") {
				return TypeSink
			}
			return TypeSource
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	tw.h = h
	h.Start()
	t.Cleanup(func() { tw.stop(t) })
	return tw
}

// serveInternal is the leader side of the task-config hand-over (the
// real REST API serves it in api/connect, internal.go).
func (tw *testWorker) serveInternal(w http.ResponseWriter, r *http.Request) {
	name, ok := strings.CutSuffix(strings.TrimPrefix(r.URL.Path, "/connectors/"), "/tasks")
	if r.Method != http.MethodPost || !ok {
		http.NotFound(w, r)
		return
	}
	var configs []map[string]string
	b, _ := io.ReadAll(r.Body)
	if err := tw.h.VerifyInternalRequest(r.Context(), b, r.Header); err != nil {
		tw.badSignatures.Add(1)
		http.Error(w, err.Error(), StatusOf(err))
		return
	}
	tw.signedPosts.Add(1)
	if err := json.Unmarshal(b, &configs); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if err := tw.h.PutTaskConfigs(r.Context(), name, configs); err != nil {
		http.Error(w, err.Error(), StatusOf(err))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (tw *testWorker) stop(t *testing.T) {
	if !tw.stopped.CompareAndSwap(false, true) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := tw.h.Stop(ctx); err != nil {
		t.Errorf("stop %s: %v", tw.id, err)
	}
	tw.srv.Close()
	tw.configs.Close()
	tw.statuses.Close()
}

// crash makes the worker vanish as a killed process would: no
// LeaveGroup, no status updates, its work simply gone.
func (tw *testWorker) crash(t *testing.T) {
	tw.h.killed.Store(true)
	tw.stop(t)
	tw.w.die()
}
