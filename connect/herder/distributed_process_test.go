package herder

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/internal/testkit"
)

// Process-level tests: `fjord connect worker.properties` workers as
// separate processes against a broker, driven over the REST API. A
// datagen source writes numbered records; two file sinks copy them to
// files. Workers are killed with SIGKILL and restarted while data flows;
// every record must reach the topic and both files at least once.

const (
	procRecords  = 3000
	procRate     = 150 // records/s for the whole source: the run spans the kills
	procMaxDelay = 4 * time.Second
)

type procWorker struct {
	name  string
	props string
	rest  string // http://127.0.0.1:port
	id    string // host:port, the worker id in statuses
	p     *testkit.Process
}

type procCluster struct {
	t       *testing.T
	broker  *testkit.Broker
	dir     string
	workers []*procWorker
	http    *http.Client
}

func newProcCluster(t *testing.T, n int) *procCluster {
	t.Helper()
	b := testkit.StartBroker(t, map[string]string{"group.min.session.timeout.ms": "500"})
	c := &procCluster{t: t, broker: b, dir: t.TempDir(), http: &http.Client{Timeout: 30 * time.Second}}
	if _, err := testkit.Admin(t, b.Addr).CreateTopic(testkit.Context(t, 30*time.Second), 4, 1, nil, "proc-data"); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		c.addWorker(fmt.Sprintf("w%d", i+1))
	}
	return c
}

func (c *procCluster) addWorker(name string) *procWorker {
	addr := testkit.FreeAddr(c.t)
	w := &procWorker{name: name, rest: "http://" + addr, id: addr, props: filepath.Join(c.dir, name+".properties")}
	props := strings.Join([]string{
		"bootstrap.servers=" + c.broker.Addr,
		"group.id=connect-proc",
		"config.storage.topic=connect-proc-configs",
		"offset.storage.topic=connect-proc-offsets",
		"status.storage.topic=connect-proc-status",
		"config.storage.replication.factor=1",
		"offset.storage.replication.factor=1",
		"status.storage.replication.factor=1",
		"offset.storage.partitions=5",
		"status.storage.partitions=2",
		"key.converter=org.apache.kafka.connect.storage.StringConverter",
		"value.converter=org.apache.kafka.connect.json.JsonConverter",
		"value.converter.schemas.enable=false",
		"listeners=http://" + addr,
		"offset.flush.interval.ms=500",
		"session.timeout.ms=3000",
		"heartbeat.interval.ms=500",
		"scheduled.rebalance.max.delay.ms=" + strconv.Itoa(int(procMaxDelay.Milliseconds())),
		"task.shutdown.graceful.timeout.ms=2000",
	}, "\n") + "\n"
	if err := os.WriteFile(w.props, []byte(props), 0o644); err != nil {
		c.t.Fatal(err)
	}
	w.p = testkit.StartProcess(c.t, "connect", w.props)
	c.workers = append(c.workers, w)
	c.waitServing(w)
	return w
}

// waitServing waits until the worker's REST API answers (its stores are
// open and its herder started).
func (c *procCluster) waitServing(w *procWorker) {
	c.t.Helper()
	testkit.CheckFor(c.t, 60*time.Second, 100*time.Millisecond, func() error {
		if w.p.Exited() {
			c.t.Fatalf("worker %s exited:\n%s", w.name, w.p.Output())
		}
		code, b, err := c.call(w, "GET", "/", nil)
		if err != nil {
			return err
		}
		if code != http.StatusOK {
			return fmt.Errorf("GET / on %s: %d %s", w.name, code, b)
		}
		return nil
	})
}

// restart restarts a killed worker and waits until it serves.
func (c *procCluster) restart(w *procWorker) {
	c.t.Helper()
	w.p.Restart()
	c.waitServing(w)
}

// call sends a REST request and returns the status and body.
func (c *procCluster) call(w *procWorker, method, path string, body any) (int, []byte, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, w.rest+path, r)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// create POSTs a connector to w (a follower forwards it to the leader),
// retrying while the group forms or rebalances.
func (c *procCluster) create(w *procWorker, name string, config map[string]string) {
	c.t.Helper()
	testkit.CheckFor(c.t, 60*time.Second, 200*time.Millisecond, func() error {
		code, b, err := c.call(w, "POST", "/connectors", map[string]any{"name": name, "config": config})
		if err != nil {
			return err
		}
		if code == http.StatusCreated || code == http.StatusConflict && bytes.Contains(b, []byte("already exists")) {
			return nil
		}
		return fmt.Errorf("POST /connectors %s: %d %s", name, code, b)
	})
}

type procStatus struct {
	Connector struct {
		State    string `json:"state"`
		WorkerID string `json:"worker_id"`
	} `json:"connector"`
	Tasks []struct {
		ID       int    `json:"id"`
		State    string `json:"state"`
		WorkerID string `json:"worker_id"`
		Trace    string `json:"trace"`
	} `json:"tasks"`
}

func (c *procCluster) status(w *procWorker, name string) (*procStatus, error) {
	code, b, err := c.call(w, "GET", "/connectors/"+name+"/status", nil)
	if err != nil {
		return nil, err
	}
	if code != http.StatusOK {
		return nil, fmt.Errorf("GET status of %s: %d %s", name, code, b)
	}
	var st procStatus
	return &st, json.Unmarshal(b, &st)
}

// placement waits until every connector and task of the named connectors
// is RUNNING on a live worker, with check passing on who runs what
// (worker id -> count), and returns it.
func (c *procCluster) placement(via *procWorker, connectors map[string]int, wait time.Duration, check func(map[string]int) error) map[string]int {
	c.t.Helper()
	var counts map[string]int
	testkit.CheckFor(c.t, wait, 250*time.Millisecond, func() error {
		counts = map[string]int{}
		for name, tasks := range connectors {
			st, err := c.status(via, name)
			if err != nil {
				return err
			}
			if st.Connector.State != "RUNNING" {
				return fmt.Errorf("connector %s is %s on %s", name, st.Connector.State, st.Connector.WorkerID)
			}
			counts[st.Connector.WorkerID]++
			if len(st.Tasks) != tasks {
				return fmt.Errorf("connector %s has %d tasks, want %d", name, len(st.Tasks), tasks)
			}
			for _, ts := range st.Tasks {
				if ts.State != "RUNNING" {
					return fmt.Errorf("task %s-%d is %s on %s %s", name, ts.ID, ts.State, ts.WorkerID, ts.Trace)
				}
				counts[ts.WorkerID]++
			}
		}
		if check != nil {
			return check(counts)
		}
		return nil
	})
	return counts
}

func onlyOn(ids ...string) func(map[string]int) error {
	return func(counts map[string]int) error {
		for w := range counts {
			if !slices.Contains(ids, w) {
				return fmt.Errorf("%s still runs %d units (live: %v)", w, counts[w], ids)
			}
		}
		for _, id := range ids {
			if counts[id] == 0 {
				return fmt.Errorf("%s runs nothing: %v", id, counts)
			}
		}
		return nil
	}
}

// idsIn counts the records per id in the topic.
func (c *procCluster) idsInTopic(topic string) map[int64]int {
	cl := testkit.Client(c.t, c.broker.Addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ctx := testkit.Context(c.t, 60*time.Second)
	out := map[int64]int{}
	total := 0
	for total < procRecords*2 {
		fs := cl.PollRecords(ctx, 1000)
		if ctx.Err() != nil {
			break
		}
		fs.EachRecord(func(r *kgo.Record) {
			var v struct {
				ID int64 `json:"id"`
			}
			if err := json.Unmarshal(r.Value, &v); err != nil {
				c.t.Errorf("record %s: %v", r.Value, err)
				return
			}
			out[v.ID]++
			total++
		})
		if len(out) == procRecords {
			// Anything still in flight would only add duplicates.
			break
		}
	}
	return out
}

var idField = regexp.MustCompile(`\bid=(\d+)`)

// idsInFile counts the records per id a file sink wrote (FileStreamSink
// prints the value, a Java Map: {id=12, ...}).
func idsInFile(t *testing.T, path string) map[int64]int {
	out := map[int64]int{}
	f, err := os.Open(path)
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := idField.FindStringSubmatch(sc.Text()); m != nil {
			n, _ := strconv.ParseInt(m[1], 10, 64)
			out[n]++
		}
	}
	return out
}

func checkDelivery(t *testing.T, what string, got map[int64]int) {
	t.Helper()
	var missing []int64
	dups := 0
	for i := range int64(procRecords) {
		switch n := got[i]; {
		case n == 0:
			missing = append(missing, i)
		case n > 1:
			dups += n - 1
		}
	}
	t.Logf("%s: %d distinct records of %d, %d duplicates", what, len(got), procRecords, dups)
	if len(missing) > 0 {
		t.Errorf("%s: %d records missing (first %v)", what, len(missing), missing[:min(10, len(missing))])
	}
}

func (c *procCluster) connectors() map[string]int {
	dir := c.dir
	c.create(c.workers[0], "gen", map[string]string{
		"connector.class": "datagen", "kafka.topic": "proc-data", "tasks.max": "3",
		"value.schema": "id:int64:seq,pad:string:8..16", "count": strconv.Itoa(procRecords),
		"rate": strconv.Itoa(procRate), "seed": "7",
	})
	for _, s := range []string{"sink-a", "sink-b"} {
		c.create(c.workers[len(c.workers)-1], s, map[string]string{
			"connector.class": "FileStreamSink", "topics": "proc-data", "tasks.max": "1",
			"file": filepath.Join(dir, s+".txt"),
		})
	}
	return map[string]int{"gen": 3, "sink-a": 1, "sink-b": 1}
}

// finish waits for the source to produce everything and the sinks to copy
// it, then checks at-least-once delivery end to end.
func (c *procCluster) finish() {
	c.t.Helper()
	testkit.CheckFor(c.t, 3*time.Minute, time.Second, func() error {
		for _, s := range []string{"sink-a", "sink-b"} {
			if n := len(idsInFile(c.t, filepath.Join(c.dir, s+".txt"))); n < procRecords {
				return fmt.Errorf("%s has %d distinct records of %d", s, n, procRecords)
			}
		}
		return nil
	})
	checkDelivery(c.t, "topic proc-data", c.idsInTopic("proc-data"))
	for _, s := range []string{"sink-a", "sink-b"} {
		checkDelivery(c.t, s, idsInFile(c.t, filepath.Join(c.dir, s+".txt")))
	}
}

func TestProcessTwoWorkersKillAndRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level failover takes a minute; skipped with -short")
	}
	c := newProcCluster(t, 2)
	w1, w2 := c.workers[0], c.workers[1]
	units := c.connectors()
	c.placement(w1, units, 90*time.Second, onlyOn(w1.id, w2.id))

	// kill -9 w2: after its session expires and
	// scheduled.rebalance.max.delay.ms passes, w1 runs everything.
	killed := time.Now()
	w2.p.Kill()
	c.placement(w1, units, 90*time.Second, onlyOn(w1.id))
	moved := time.Since(killed)
	t.Logf("w2's work moved to w1 %v after kill -9", moved.Round(100*time.Millisecond))
	if moved < procMaxDelay {
		t.Errorf("work moved after %v, before scheduled.rebalance.max.delay.ms (%v)", moved, procMaxDelay)
	}

	// w2 comes back: work spreads back without stopping everything.
	c.restart(w2)
	c.placement(w1, units, 90*time.Second, onlyOn(w1.id, w2.id))
	c.finish()
}

func TestProcessThreeWorkersKillAndRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level failover takes a minute; skipped with -short")
	}
	c := newProcCluster(t, 3)
	w1, w2, w3 := c.workers[0], c.workers[1], c.workers[2]
	units := c.connectors()
	c.placement(w1, units, 90*time.Second, onlyOn(w1.id, w2.id, w3.id))

	// Kill the leader this time: the survivors elect a new one, which
	// has no memory of the assignment and takes the lost work as new.
	leader := c.leader()
	var rest []*procWorker
	for _, w := range c.workers {
		if w != leader {
			rest = append(rest, w)
		}
	}
	leader.p.Kill()
	c.placement(rest[0], units, 90*time.Second, onlyOn(rest[0].id, rest[1].id))

	// And a follower of the new group, while data still flows.
	rest[1].p.Kill()
	killed := time.Now()
	c.placement(rest[0], units, 90*time.Second, onlyOn(rest[0].id))
	t.Logf("a follower's work moved %v after kill -9", time.Since(killed).Round(100*time.Millisecond))

	c.restart(leader)
	c.restart(rest[1])
	c.placement(rest[0], units, 90*time.Second, onlyOn(w1.id, w2.id, w3.id))
	c.finish()
}

var leaderURLField = regexp.MustCompile(`joined the worker group.* leader_url=(\S+)`)

// leader finds the worker that leads now, from what a live worker logged
// when it last joined the group (the REST API does not say).
func (c *procCluster) leader() *procWorker {
	c.t.Helper()
	var out *procWorker
	testkit.CheckFor(c.t, 30*time.Second, 200*time.Millisecond, func() error {
		for _, w := range c.workers {
			if w.p.Exited() {
				continue
			}
			ms := leaderURLField.FindAllStringSubmatch(w.p.LastRun(), -1)
			if len(ms) == 0 {
				continue
			}
			url := ms[len(ms)-1][1]
			for _, l := range c.workers {
				if l.rest+"/" == url {
					out = l
					return nil
				}
			}
			return fmt.Errorf("%s names leader %s, which is none of ours", w.name, url)
		}
		return fmt.Errorf("no worker logged joining the group")
	})
	return out
}

// TestProcessBadWorkerConfig: a worker.properties missing required keys
// is refused at start with every missing key named.
func TestProcessBadWorkerConfig(t *testing.T) {
	props := filepath.Join(t.TempDir(), "worker.properties")
	if err := os.WriteFile(props, []byte("bootstrap.servers=127.0.0.1:1\nkey.converter=org.apache.kafka.connect.storage.StringConverter\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := testkit.StartProcess(t, "connect", props)
	testkit.CheckFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		if !p.Exited() {
			return fmt.Errorf("still running")
		}
		return nil
	})
	for _, k := range []string{"value.converter", "group.id", "offset.storage.topic", "config.storage.topic", "status.storage.topic"} {
		if !strings.Contains(p.Output(), `Missing required configuration "`+k+`"`) {
			t.Errorf("output does not name the missing %s:\n%s", k, p.Output())
		}
	}
}
