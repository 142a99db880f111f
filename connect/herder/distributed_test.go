package herder

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect/herder/group"
	"github.com/fjordhq/fjord/connect/plugins"
	"github.com/fjordhq/fjord/connect/storage"
	"github.com/fjordhq/fjord/internal/testkit"
)

// These tests run several distributed herders in one process against a
// real broker, with real Kafka-topic config and status stores; only the
// worker runtime is a fake that records what runs where.

const wait = 30 * time.Second

func sourceConfig(name string, tasks int, version string) map[string]string {
	return map[string]string{
		"name": name, "connector.class": "FakeSource", "tasks.max": strconv.Itoa(tasks), "config.version": version,
	}
}

// createConnector creates a connector through whichever worker leads,
// retrying while the group forms (409, no leader yet).
func createConnector(t *testing.T, ws []*testWorker, name string, config map[string]string) {
	t.Helper()
	testkit.CheckFor(t, wait, 50*time.Millisecond, func() error {
		var last error
		for _, w := range ws {
			if w.stopped.Load() {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			created, info, err := w.h.PutConnectorConfig(ctx, name, config, "", false)
			cancel()
			if err == nil {
				if !created || info.Name != name {
					return fmt.Errorf("created=%v info=%+v", created, info)
				}
				return nil
			}
			var nl *NotLeaderError
			if !errors.As(err, &nl) {
				last = err
			}
			if StatusOf(err) == http.StatusConflict && strings.Contains(err.Error(), "already exists") {
				return nil
			}
		}
		if last == nil {
			last = errors.New("no leader yet")
		}
		return last
	})
}

// leader returns the worker that leads now.
func leader(t *testing.T, ws []*testWorker) *testWorker {
	t.Helper()
	var out *testWorker
	testkit.CheckFor(t, wait, 50*time.Millisecond, func() error {
		for _, w := range ws {
			if w.stopped.Load() {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			var isLeader bool
			err := w.h.do(ctx, func() error { isLeader = w.h.isLeader() && !w.h.needJoin; return nil })
			cancel()
			if err == nil && isLeader {
				out = w
				return nil
			}
		}
		return errors.New("no leader")
	})
	return out
}

// waitRunning waits until every connector and its tasks run, each exactly
// once, and returns the owners.
func waitRunning(t *testing.T, c *fakeCluster, want map[string]int, check func(map[string][]string) error) map[string][]string {
	t.Helper()
	var owners map[string][]string
	testkit.CheckFor(t, wait, 50*time.Millisecond, func() error {
		owners = c.owners()
		var all []string
		for _, ks := range owners {
			all = append(all, ks...)
		}
		var exp []string
		for conn, n := range want {
			exp = append(exp, conn)
			for i := range n {
				exp = append(exp, fmt.Sprintf("%s/%d", conn, i))
			}
		}
		slices.Sort(all)
		slices.Sort(exp)
		if !slices.Equal(all, exp) {
			return fmt.Errorf("running %v, want %v", owners, exp)
		}
		if check != nil {
			return check(owners)
		}
		return nil
	})
	return owners
}

// balanced checks that each live worker runs an even share (counts of
// connectors and of tasks differ by at most one).
func balanced(workers ...string) func(map[string][]string) error {
	return func(owners map[string][]string) error {
		var conns, tasks []int
		for _, w := range workers {
			c, tk := 0, 0
			for _, k := range owners[w] {
				if strings.Contains(k, "/") {
					tk++
				} else {
					c++
				}
			}
			conns, tasks = append(conns, c), append(tasks, tk)
		}
		if slices.Max(conns)-slices.Min(conns) > 1 || slices.Max(tasks)-slices.Min(tasks) > 1 {
			return fmt.Errorf("imbalanced: connectors %v tasks %v over %v (%v)", conns, tasks, workers, owners)
		}
		for w := range owners {
			if !slices.Contains(workers, w) {
				return fmt.Errorf("worker %s still runs %v", w, owners[w])
			}
		}
		return nil
	}
}

func TestDistributedOneWorkerLifecycle(t *testing.T) {
	b := testkit.StartBroker(t, map[string]string{"group.min.session.timeout.ms": "200"})
	cluster := newFakeCluster()
	w := startTestWorker(t, b.Addr, "connect-life", "w1", cluster, workerOpts{maxDelay: time.Second})
	ws := []*testWorker{w}
	ctx := testkit.Context(t, 2*time.Minute)

	createConnector(t, ws, "src", sourceConfig("src", 3, "v1"))
	waitRunning(t, cluster, map[string]int{"src": 3}, nil)
	testkit.CheckFor(t, wait, 50*time.Millisecond, func() error {
		st, err := w.h.ConnectorStatus(ctx, "src")
		if err != nil {
			return err
		}
		if st.Connector.State != StateRunning || st.Connector.WorkerID != "w1" || len(st.Tasks) != 3 || st.Type != TypeSource {
			return fmt.Errorf("status %+v", st)
		}
		for _, ts := range st.Tasks {
			if ts.State != StateRunning {
				return fmt.Errorf("task %+v", ts)
			}
		}
		return nil
	})
	// Reads see the connector and its committed task configs.
	testkit.CheckFor(t, wait, 50*time.Millisecond, func() error {
		info, err := w.h.ConnectorInfo(ctx, "src")
		if err != nil {
			return err
		}
		if len(info.Tasks) != 3 || info.Config["config.version"] != "v1" {
			return fmt.Errorf("info %+v", info)
		}
		tasks, err := w.h.TaskConfigs(ctx, "src")
		if err != nil || len(tasks) != 3 || tasks[2].Config["task.index"] != "2" {
			return fmt.Errorf("task configs %+v %v", tasks, err)
		}
		names, err := w.h.Connectors(ctx)
		if err != nil || !slices.Equal(names, []string{"src"}) {
			return fmt.Errorf("connectors %v %v", names, err)
		}
		return nil
	})
	if _, _, err := w.h.PutConnectorConfig(ctx, "src", sourceConfig("src", 3, "v1"), "", false); StatusOf(err) != http.StatusConflict {
		t.Errorf("creating an existing connector: %v, want 409", err)
	}
	if _, err := w.h.ConnectorInfo(ctx, "nope"); StatusOf(err) != http.StatusNotFound {
		t.Errorf("unknown connector: %v, want 404", err)
	}

	// A config change restarts the tasks with configs made from it.
	if _, _, err := w.h.PutConnectorConfig(ctx, "src", sourceConfig("src", 2, "v2"), "", true); err != nil {
		t.Fatal(err)
	}
	waitRunning(t, cluster, map[string]int{"src": 2}, func(map[string][]string) error {
		for i := range 2 {
			c, ok := w.w.taskConfig(storage.TaskID{Connector: "src", Task: i})
			if !ok || c["config.version"] != "v2" {
				return fmt.Errorf("task %d runs config %v", i, c)
			}
		}
		return nil
	})
	// The removed task's status is deleted by the leader after the
	// rebalance.
	testkit.CheckFor(t, wait, 50*time.Millisecond, func() error {
		if _, err := w.h.TaskStatus(ctx, TaskID{"src", 2}); StatusOf(err) != http.StatusNotFound {
			return fmt.Errorf("status of removed task 2: %v", err)
		}
		return nil
	})

	// Pause and resume reach the worker.
	if err := w.h.PauseConnector(ctx, "src"); err != nil {
		t.Fatal(err)
	}
	testkit.CheckFor(t, wait, 50*time.Millisecond, func() error {
		if st, _ := w.w.targetOf("src"); st != storage.TargetPaused {
			return fmt.Errorf("target %s", st)
		}
		s, err := w.h.ConnectorStatus(ctx, "src")
		if err != nil || s.Connector.State != StatePaused || s.Tasks[0].State != StatePaused {
			return fmt.Errorf("status %+v %v", s, err)
		}
		return nil
	})
	if err := w.h.ResumeConnector(ctx, "src"); err != nil {
		t.Fatal(err)
	}
	testkit.CheckFor(t, wait, 50*time.Millisecond, func() error {
		s, err := w.h.ConnectorStatus(ctx, "src")
		if err != nil || s.Connector.State != StateRunning {
			return fmt.Errorf("status %+v %v", s, err)
		}
		return nil
	})

	// Offsets can only be changed once the connector is STOPPED.
	w.h.deps.Offsets = &memOffsets{}
	if _, err := w.h.ResetConnectorOffsets(ctx, "src"); StatusOf(err) != http.StatusBadRequest ||
		!strings.Contains(err.Error(), "Connectors must be in the STOPPED state") {
		t.Errorf("reset offsets of a running connector: %v", err)
	}
	if err := w.h.StopConnector(ctx, "src"); err != nil {
		t.Fatal(err)
	}
	waitRunning(t, cluster, map[string]int{"src": 0}, nil)
	testkit.CheckFor(t, wait, 50*time.Millisecond, func() error {
		s, err := w.h.ConnectorStatus(ctx, "src")
		if err != nil || s.Connector.State != StateStopped || len(s.Tasks) != 0 {
			return fmt.Errorf("status %+v %v", s, err)
		}
		_, err = w.h.ResetConnectorOffsets(ctx, "src")
		return err
	})
	// Resuming a stopped connector brings its tasks back.
	if err := w.h.ResumeConnector(ctx, "src"); err != nil {
		t.Fatal(err)
	}
	waitRunning(t, cluster, map[string]int{"src": 2}, nil)

	// Restarting failed-only does nothing when nothing failed; restarting
	// everything restarts the connector and its tasks.
	before := cluster.startCount("src/0")
	plan, err := w.h.RestartConnector(ctx, "src", true, false)
	if err != nil || plan.Connector.State != StateRestarting || len(plan.Tasks) != 2 || plan.Tasks[1].State != StateRestarting {
		t.Fatalf("restart plan %+v %v", plan, err)
	}
	testkit.CheckFor(t, wait, 50*time.Millisecond, func() error {
		if n := cluster.startCount("src/0"); n <= before {
			return fmt.Errorf("task 0 started %d times, was %d", n, before)
		}
		return nil
	})
	before = cluster.startCount("src/1")
	if err := w.h.RestartTask(ctx, TaskID{"src", 1}); err != nil {
		t.Fatal(err)
	}
	if n := cluster.startCount("src/1"); n != before+1 {
		t.Errorf("task 1 started %d times, want %d", n, before+1)
	}
	if err := w.h.RestartTask(ctx, TaskID{"src", 7}); StatusOf(err) != http.StatusNotFound {
		t.Errorf("restart of an unknown task: %v", err)
	}

	// Deletion stops everything and removes the statuses.
	if err := w.h.DeleteConnector(ctx, "src"); err != nil {
		t.Fatal(err)
	}
	waitRunning(t, cluster, map[string]int{}, nil)
	testkit.CheckFor(t, wait, 50*time.Millisecond, func() error {
		if _, err := w.h.ConnectorStatus(ctx, "src"); StatusOf(err) != http.StatusNotFound {
			return fmt.Errorf("status after delete: %v", err)
		}
		return nil
	})
	cluster.checkNoOverlap(t)
}

// memOffsets is an OffsetManager that accepts everything.
type memOffsets struct{}

func (*memOffsets) ConnectorOffsets(context.Context, string, map[string]string) (*ConnectorOffsets, error) {
	return &ConnectorOffsets{Offsets: []ConnectorOffset{}}, nil
}

func (*memOffsets) ModifyConnectorOffsets(_ context.Context, _ string, _ map[string]string, o *ConnectorOffsets) (string, error) {
	if o == nil {
		return "The offsets for this connector have been reset successfully", nil
	}
	return "The offsets for this connector have been altered successfully", nil
}

func TestDistributedThreeWorkersSpreadAndMove(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-worker rebalancing runs for tens of seconds; skipped with -short")
	}
	b := testkit.StartBroker(t, map[string]string{"group.min.session.timeout.ms": "200"})
	cluster := newFakeCluster()
	const delay = 3 * time.Second
	o := workerOpts{maxDelay: delay, session: 2 * time.Second}
	w1 := startTestWorker(t, b.Addr, "connect-three", "w1", cluster, o)
	w2 := startTestWorker(t, b.Addr, "connect-three", "w2", cluster, o)
	ws := []*testWorker{w1, w2}
	want := map[string]int{}
	for i := range 3 {
		name := fmt.Sprintf("c%d", i)
		createConnector(t, ws, name, sourceConfig(name, 3, "v1"))
		want[name] = 3
	}
	waitRunning(t, cluster, want, balanced("w1", "w2"))

	// A follower cannot write configs: it names the leader for the
	// REST layer to forward to.
	l := leader(t, ws)
	follower := w1
	if l == w1 {
		follower = w2
	}
	ctx := testkit.Context(t, 3*time.Minute)
	_, _, err := follower.h.PutConnectorConfig(ctx, "x", sourceConfig("x", 1, "v1"), "", false)
	var nl *NotLeaderError
	if !errors.As(err, &nl) || nl.LeaderURL != l.url {
		t.Fatalf("create on a follower: %v, want NotLeaderError naming %s", err, l.url)
	}

	// A third worker joins: it gets a fair share, and work that stays
	// where it was is not restarted.
	starts := map[string]int{}
	for _, ks := range cluster.owners() {
		for _, k := range ks {
			starts[k] = cluster.startCount(k)
		}
	}
	before := cluster.owners()
	w3 := startTestWorker(t, b.Addr, "connect-three", "w3", cluster, o)
	ws = append(ws, w3)
	after := waitRunning(t, cluster, want, balanced("w1", "w2", "w3"))
	for w, ks := range before {
		for _, k := range ks {
			if slices.Contains(after[w], k) && cluster.startCount(k) != starts[k] {
				t.Errorf("%s stayed on %s but was restarted (%d starts, was %d)", k, w, cluster.startCount(k), starts[k])
			}
		}
	}
	cluster.checkNoOverlap(t)

	// A connector running on a follower regenerates its task configs: the
	// follower hands them to the leader, which writes them.
	l = leader(t, ws)
	var onFollower *testWorker
	var conn string
	for _, w := range ws {
		if w == l {
			continue
		}
		for _, k := range cluster.owners()[w.id] {
			if !strings.Contains(k, "/") {
				onFollower, conn = w, k
			}
		}
	}
	if onFollower == nil {
		t.Fatalf("no connector runs on a follower: %v", cluster.owners())
	}
	if _, _, err := l.h.PutConnectorConfig(ctx, conn, sourceConfig(conn, 4, "v2"), "", true); err != nil {
		t.Fatal(err)
	}
	want[conn] = 4
	waitRunning(t, cluster, want, func(map[string][]string) error {
		for _, w := range ws {
			for i := range 4 {
				if c, ok := w.w.taskConfig(storage.TaskID{Connector: conn, Task: i}); ok && c["config.version"] != "v2" {
					return fmt.Errorf("%s/%d runs %v", conn, i, c)
				}
			}
		}
		return balanced("w1", "w2", "w3")(cluster.owners())
	})

	if n := l.signedPosts.Load(); n == 0 {
		t.Errorf("the leader accepted no signed task-config hand-over")
	}
	if n := l.badSignatures.Load(); n != 0 {
		t.Errorf("the leader refused %d hand-overs", n)
	}
	// A forged or unsigned hand-over is refused (KIP-507).
	body := []byte(`[{"task.index":"0"}]`)
	hdr := http.Header{}
	if err := l.h.VerifyInternalRequest(ctx, body, hdr); StatusOf(err) != http.StatusBadRequest {
		t.Errorf("unsigned internal request: %v, want 400", err)
	}
	signInternalRequest(hdr, &storage.SessionKey{Key: "AAAA", Algorithm: "HmacSHA256"}, body)
	if err := l.h.VerifyInternalRequest(ctx, body, hdr); StatusOf(err) != http.StatusForbidden {
		t.Errorf("internal request signed with another key: %v, want 403", err)
	}

	// A worker crashes (no LeaveGroup): after its session expires the
	// others wait scheduled.rebalance.max.delay.ms for it, then take its
	// work.
	victim := w2
	if l == w2 {
		victim = w3
	}
	lost := cluster.owners()[victim.id]
	if len(lost) == 0 {
		t.Fatalf("%s runs nothing", victim.id)
	}
	crashed := time.Now()
	victim.crash(t)
	var survivors []string
	for _, w := range ws {
		if w != victim {
			survivors = append(survivors, w.id)
		}
	}
	waitRunning(t, cluster, want, balanced(survivors...))
	if d := time.Since(crashed); d < delay {
		t.Errorf("lost work moved after %v, before scheduled.rebalance.max.delay.ms (%v)", d, delay)
	}
	t.Logf("a crashed worker's %d connectors and tasks moved after %v", len(lost), time.Since(crashed).Round(100*time.Millisecond))
	cluster.checkNoOverlap(t)
}

// TestDistributedWorkerBouncesBack: a worker that leaves and returns
// within the delay gets its work back and nobody else ran it meanwhile.
func TestDistributedWorkerBouncesBack(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-worker rebalancing runs for tens of seconds; skipped with -short")
	}
	b := testkit.StartBroker(t, map[string]string{"group.min.session.timeout.ms": "200"})
	cluster := newFakeCluster()
	o := workerOpts{maxDelay: 6 * time.Second}
	w1 := startTestWorker(t, b.Addr, "connect-bounce", "w1", cluster, o)
	w2 := startTestWorker(t, b.Addr, "connect-bounce", "w2", cluster, o)
	ws := []*testWorker{w1, w2}
	createConnector(t, ws, "a", sourceConfig("a", 2, "v1"))
	createConnector(t, ws, "b", sourceConfig("b", 2, "v1"))
	want := map[string]int{"a": 2, "b": 2}
	waitRunning(t, cluster, want, balanced("w1", "w2"))
	l := leader(t, ws)
	follower := w1
	if l == w1 {
		follower = w2
	}
	held := cluster.owners()[follower.id]
	follower.stop(t) // a clean stop: LeaveGroup, its work stopped
	// Its work is held back (not reassigned) while it may come back.
	time.Sleep(2 * time.Second)
	for _, k := range held {
		if o := cluster.owner(k); o != "" {
			t.Fatalf("%s moved to %s during the delay", k, o)
		}
	}
	back := startTestWorker(t, b.Addr, "connect-bounce", follower.id, cluster, o)
	owners := waitRunning(t, cluster, want, balanced("w1", "w2"))
	if !slices.Equal(owners[back.id], held) {
		t.Errorf("returning worker runs %v, it ran %v", owners[back.id], held)
	}
	cluster.checkNoOverlap(t)
}

// TestDistributedEagerProtocol: workers configured with
// connect.protocol=eager use Kafka's "default" protocol: every rebalance
// stops everything and hands out whole assignments.
func TestDistributedEagerProtocol(t *testing.T) {
	b := testkit.StartBroker(t, map[string]string{"group.min.session.timeout.ms": "200"})
	cluster := newFakeCluster()
	o := workerOpts{protocol: "eager"}
	w1 := startTestWorker(t, b.Addr, "connect-eager", "w1", cluster, o)
	w2 := startTestWorker(t, b.Addr, "connect-eager", "w2", cluster, o)
	ws := []*testWorker{w1, w2}
	createConnector(t, ws, "e", sourceConfig("e", 4, "v1"))
	waitRunning(t, cluster, map[string]int{"e": 4}, balanced("w1", "w2"))
	if w1.h.protocol != "default" {
		t.Errorf("protocol %q, want default", w1.h.protocol)
	}
	cluster.checkNoOverlap(t)
}

func TestDistributedValidationErrors(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	cluster := newFakeCluster()
	w := startTestWorker(t, b.Addr, "connect-valid", "w1", cluster, workerOpts{})
	w.h.deps.Validate = func(_ context.Context, c map[string]string) (*ConfigInfos, error) {
		infos := &ConfigInfos{Name: c["connector.class"], Groups: []string{}}
		for _, k := range []string{"name", "tasks.max"} {
			v := c[k]
			ci := ConfigInfo{Definition: ConfigKeyInfo{Name: k}, Value: ConfigValueInfo{Name: k, Value: &v, Errors: []string{}}}
			if k == "tasks.max" && v == "0" {
				ci.Value.Errors = append(ci.Value.Errors, "Invalid value 0 for configuration tasks.max: Value must be at least 1")
				infos.ErrorCount++
			}
			infos.Configs = append(infos.Configs, ci)
		}
		return infos, nil
	}
	ctx := testkit.Context(t, time.Minute)
	_, _, err := w.h.PutConnectorConfig(ctx, "bad", sourceConfig("bad", 0, "v1"), "", false)
	want := "Connector configuration is invalid and contains the following 1 error(s):\n" +
		"Invalid value 0 for configuration tasks.max: Value must be at least 1\n" +
		"You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`"
	if StatusOf(err) != http.StatusBadRequest || err.Error() != want {
		t.Fatalf("invalid config: %v", err)
	}
	// A sink whose consumer group would be the workers' own group.
	sink := map[string]string{"name": "other", "connector.class": "FakeSink", "tasks.max": "1"}
	w.h.cfg.GroupID = "connect-valid"
	infos, err := w.h.ValidateConnectorConfig(ctx, sink)
	if err != nil || infos.ErrorCount != 0 {
		t.Fatalf("valid sink: %+v %v", infos, err)
	}
	sink["consumer.override.group.id"] = "connect-valid"
	infos, err = w.h.ValidateConnectorConfig(ctx, sink)
	if err != nil || infos.ErrorCount != 1 || len(infos.Configs) != 3 ||
		infos.Configs[2].Value.Errors[0] != "Consumer group connect-valid conflicts with Connect worker group connect-valid" {
		t.Fatalf("sink in the worker group: %+v %v", infos, err)
	}
	delete(sink, "consumer.override.group.id")
	sink["name"] = "valid" // its default group, connect-valid, is the workers'
	infos, err = w.h.ValidateConnectorConfig(ctx, sink)
	if err != nil || infos.ErrorCount != 1 ||
		infos.Configs[0].Value.Errors[0] != "Consumer group for sink connector named valid conflicts with Connect worker group connect-valid" {
		t.Fatalf("sink named after the worker group: %+v %v", infos, err)
	}
}

// TestCheckRebalanceNeeded: reads answer 409 while a config change that
// needs a rebalance is pending (new or removed connectors, new task
// configs), not for changes to known connectors.
func TestCheckRebalanceNeeded(t *testing.T) {
	d := &Distributed{known: map[string]bool{"a": true}}
	l := distListener{d}
	d.wake = make(chan struct{}, 1)
	if err := d.checkRebalanceNeeded(); err != nil {
		t.Fatalf("nothing pending: %v", err)
	}
	l.ConnectorConfigUpdated("a")
	l.TargetStateChanged("a")
	if err := d.checkRebalanceNeeded(); err != nil {
		t.Fatalf("a known connector's config changed: %v", err)
	}
	l.ConnectorConfigUpdated("b")
	if err := d.checkRebalanceNeeded(); StatusOf(err) != http.StatusConflict || err.Error() != "Request cannot be completed because a rebalance is expected" {
		t.Fatalf("a new connector: %v", err)
	}
	d.pending.take()
	l.ConnectorConfigRemoved("a")
	if err := d.checkRebalanceNeeded(); StatusOf(err) != http.StatusConflict {
		t.Fatalf("a removed connector: %v", err)
	}
	d.pending.take()
	l.TaskConfigsUpdated([]storage.TaskID{{Connector: "a", Task: 0}})
	if err := d.checkRebalanceNeeded(); StatusOf(err) != http.StatusConflict {
		t.Fatalf("new task configs: %v", err)
	}
	d.pending.take()
	d.needsReconfig = true
	if err := d.checkRebalanceNeeded(); StatusOf(err) != http.StatusConflict {
		t.Fatalf("a rebalance requested: %v", err)
	}
}

// TestReconfigureRetryBackoff: a follower whose hand-over of task configs
// to the leader fails retries with a growing backoff, and stops retrying
// once a hand-over succeeds.
func TestReconfigureRetryBackoff(t *testing.T) {
	var fail atomic.Bool
	var posts atomic.Int32
	fail.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		if fail.Load() {
			http.Error(w, `{"error_code":500,"message":"leader busy"}`, http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	clock := time.UnixMilli(1_700_000_000_000)
	d := &Distributed{
		log: testLogger(), now: func() time.Time { return clock }, ctx: context.Background(), http: srv.Client(),
		requests: make(chan func(), 8), stopCh: make(chan struct{}), retries: map[string]*reconfigRetry{},
		started: map[string]bool{"c": true}, applied: map[string]map[string]string{},
		snapshot:   &storage.ConfigSnapshot{Connectors: map[string]map[string]string{"c": sourceConfig("c", 2, "v1")}},
		assignment: &group.Assignment{Leader: "the-leader", LeaderURL: srv.URL + "/"},
		memberID:   "me",
		deps:       DistributedDeps{Worker: newFakeWorker("me", newFakeCluster()), Configs: storage.NewMemoryConfigStore()},
	}
	run := func() {
		select {
		case fn := <-d.requests:
			fn()
		case <-time.After(10 * time.Second):
			t.Fatal("the hand-over never reported back")
		}
	}
	want := reconfigBackoffInitial
	for i := range 4 {
		d.reconfigureWithRetry("c")
		if r := d.retries["c"]; r == nil || !r.inFlight {
			t.Fatalf("attempt %d: no hand-over in flight: %+v", i, r)
		}
		d.runRetries() // nothing due while one is in flight
		run()
		r := d.retries["c"]
		if r == nil || r.backoff != want || !r.at.Equal(clock.Add(want)) {
			t.Fatalf("after failure %d: retry %+v, want backoff %v", i+1, r, want)
		}
		clock = clock.Add(want)
		want *= 2
	}
	fail.Store(false)
	d.runRetries()
	run()
	if r, ok := d.retries["c"]; ok {
		t.Fatalf("retry still scheduled after a successful hand-over: %+v", r)
	}
	if n := posts.Load(); n != 5 {
		t.Errorf("%d hand-overs posted, want 5", n)
	}
}

// tracedErr is an error that renders its own trace, as connect/runtime's
// task errors do (Kafka's exception class names and causes).
type tracedErr struct{}

func (tracedErr) Error() string { return "cannot open the file" }
func (tracedErr) Trace() string {
	return "org.apache.kafka.connect.errors.ConnectException: cannot open the file"
}

// Statuses written by the distributed herder carry the plugin version and
// failures' traces as Kafka Connect 4.4's do (api/connect's captured
// answers: "version" on the connector and every task, "trace" on a FAILED
// one), the same as herder.Standalone writes them.
func TestDistributedStatusVersionAndTrace(t *testing.T) {
	plugins.Register(plugins.Plugin{Class: "com.example.VersionedSource", Aliases: []string{"VersionedSource"},
		Kind: plugins.Source, Version: "7.1.0", New: func() any { return nil }})
	b := testkit.StartBroker(t, map[string]string{"group.min.session.timeout.ms": "200"})
	cluster := newFakeCluster()
	w := startTestWorker(t, b.Addr, "connect-version", "w1", cluster, workerOpts{maxDelay: time.Second})
	ws := []*testWorker{w}
	ctx := testkit.Context(t, 2*time.Minute)
	w.w.mu.Lock()
	w.w.failStart["broken"] = true
	w.w.failTask[taskKey(storage.TaskID{Connector: "src", Task: 1})] = tracedErr{}
	w.w.mu.Unlock()

	conf := func(name string) map[string]string {
		c := sourceConfig(name, 2, "v1")
		c["connector.class"] = "com.example.VersionedSource"
		return c
	}
	createConnector(t, ws, "src", conf("src"))
	createConnector(t, ws, "broken", conf("broken"))
	testkit.CheckFor(t, wait, 50*time.Millisecond, func() error {
		st, err := w.h.ConnectorStatus(ctx, "src")
		if err != nil {
			return err
		}
		if st.Connector.State != StateRunning || st.Connector.Version != "7.1.0" || len(st.Tasks) != 2 {
			return fmt.Errorf("connector status %+v", st)
		}
		t0, t1 := st.Tasks[0], st.Tasks[1]
		if t0.State != StateRunning || t0.Version != "7.1.0" || t0.Trace != "" {
			return fmt.Errorf("task 0 %+v", t0)
		}
		if t1.State != StateFailed || t1.Version != "7.1.0" || t1.Trace != (tracedErr{}).Trace() {
			return fmt.Errorf("task 1 %+v", t1)
		}
		ts, err := w.h.TaskStatus(ctx, TaskID{Connector: "src", Task: 1})
		if err != nil || ts.State != StateFailed || ts.Version != "7.1.0" || ts.Trace != (tracedErr{}).Trace() {
			return fmt.Errorf("task status %+v %v", ts, err)
		}
		bs, err := w.h.ConnectorStatus(ctx, "broken")
		if err != nil {
			return err
		}
		if bs.Connector.State != StateFailed || bs.Connector.Version != "7.1.0" || !strings.Contains(bs.Connector.Trace, "connector refused to start") {
			return fmt.Errorf("broken connector status %+v", bs.Connector)
		}
		return nil
	})
	// The restart plan (202 answer) keeps versions and traces, as Kafka's.
	info, err := w.h.RestartConnector(ctx, "src", true, true)
	if err != nil {
		t.Fatal(err)
	}
	if info == nil || info.Connector.Version != "7.1.0" || len(info.Tasks) != 2 || info.Tasks[1].State != StateRestarting ||
		info.Tasks[1].Version != "7.1.0" || info.Tasks[1].Trace == "" {
		t.Errorf("restart plan %+v", info)
	}
}
