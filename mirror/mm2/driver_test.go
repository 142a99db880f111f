package mm2

import (
	"context"
	"errors"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect/herder"
)

// fakeGroup is a flow's worker group as the driver sees it: connector
// configs that only the leader may write.
type fakeGroup struct {
	herder.Herder // methods the driver does not call panic

	mu      sync.Mutex
	leader  bool
	configs map[string]map[string]string
	puts    int
	putErr  error
	infoErr error // answered by ConnectorInfo when set
}

func (g *fakeGroup) ConnectorInfo(_ context.Context, name string) (*herder.ConnectorInfo, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.infoErr != nil {
		return nil, g.infoErr
	}
	c, ok := g.configs[name]
	if !ok {
		return nil, herder.NotFound(name)
	}
	return &herder.ConnectorInfo{Name: name, Config: maps.Clone(c)}, nil
}

func (g *fakeGroup) PutConnectorConfig(_ context.Context, name string, config map[string]string, _ herder.TargetState, _ bool) (bool, *herder.ConnectorInfo, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.leader {
		return false, nil, &herder.NotLeaderError{LeaderURL: "http://elsewhere"}
	}
	if g.putErr != nil {
		return false, nil, g.putErr
	}
	_, existed := g.configs[name]
	g.configs[name] = maps.Clone(config)
	g.puts++
	return !existed, &herder.ConnectorInfo{Name: name, Config: config}, nil
}

func (g *fakeGroup) ConnectorStatus(_ context.Context, name string) (*herder.ConnectorStateInfo, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.configs[name]; !ok {
		return nil, herder.NotFound(name)
	}
	return &herder.ConnectorStateInfo{Name: name, Connector: herder.ConnectorState{State: herder.StateRunning},
		Tasks: []herder.TaskState{{ID: 0, State: herder.StateRunning}}}, nil
}

func (g *fakeGroup) set(f func(g *fakeGroup)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	f(g)
}

func (g *fakeGroup) get(f func(g *fakeGroup)) { g.set(f) }

// lines collects progress output.
type lines struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestDriverConfiguresAsLeader: the group's connectors are written once
// the worker leads, kept when they match, rewritten when changed behind
// the driver's back; every flow's worker stops when Run's context ends.
func TestDriverConfiguresAsLeader(t *testing.T) {
	c := mustParse(t, "clusters", "a, b, hub", "emit.heartbeats.enabled", "false",
		"a->hub.enabled", "true", "b->hub.enabled", "true", "a.bootstrap.servers", "a:9092",
		"b.bootstrap.servers", "b:9092", "hub.bootstrap.servers", "hub:9092")
	groups := map[string]*fakeGroup{}
	var mu sync.Mutex
	stopped := map[string]bool{}
	out := &lines{}
	d := &Driver{Config: c, Progress: out, Poll: 5 * time.Millisecond, Resync: 10 * time.Millisecond,
		Start: func(ctx context.Context, f Flow, props map[string]string) (herder.Herder, func(), error) {
			mu.Lock()
			defer mu.Unlock()
			if props["group.id"] != f.Source+"-mm2" || props["bootstrap.servers"] != "hub:9092" {
				t.Errorf("%s worker props %v", f, props)
			}
			g := &fakeGroup{configs: map[string]map[string]string{}}
			groups[f.String()] = g
			return g, func() { mu.Lock(); stopped[f.String()] = true; mu.Unlock() }, nil
		}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()

	waitFor(t, "both workers", func() bool { mu.Lock(); defer mu.Unlock(); return len(groups) == 2 })
	mu.Lock()
	aHub := groups["a->hub"]
	mu.Unlock()
	// Not the leader yet: nothing is written, and no error is printed.
	time.Sleep(30 * time.Millisecond)
	aHub.get(func(g *fakeGroup) {
		if g.puts != 0 {
			t.Errorf("%d writes before leading", g.puts)
		}
	})
	aHub.set(func(g *fakeGroup) { g.leader = true })
	waitFor(t, "three connectors", func() bool {
		n := 0
		aHub.get(func(g *fakeGroup) { n = len(g.configs) })
		return n == 3
	})
	for _, conn := range Connectors {
		aHub.get(func(g *fakeGroup) {
			if !maps.Equal(g.configs[conn.Name], c.ConnectorConfig(Flow{"a", "hub"}, conn)) {
				t.Errorf("%s config %v", conn.Name, g.configs[conn.Name])
			}
		})
	}
	// Up to date: further checks write nothing.
	time.Sleep(50 * time.Millisecond)
	aHub.get(func(g *fakeGroup) {
		if g.puts != 3 {
			t.Errorf("%d writes, want 3 (configs already match)", g.puts)
		}
	})
	// Someone changes a config over REST: the leader puts the file's back.
	aHub.set(func(g *fakeGroup) { g.configs["MirrorSourceConnector"]["topics"] = "other" })
	waitFor(t, "the config restored", func() bool {
		ok := false
		aHub.get(func(g *fakeGroup) { ok = g.configs["MirrorSourceConnector"]["topics"] != "other" })
		return ok
	})

	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	mu.Lock()
	if !stopped["a->hub"] || !stopped["b->hub"] {
		t.Errorf("workers stopped: %v", stopped)
	}
	mu.Unlock()
	o := out.String()
	for _, want := range []string{
		"a->hub: replicating; worker group a-mm2 on hub (hub:9092)",
		"a->hub: MirrorSourceConnector created",
		"a->hub: MirrorSourceConnector RUNNING, 1 task(s) 1 RUNNING",
		"a->hub: MirrorSourceConnector reconfigured",
		"a->hub: stopped",
	} {
		if !strings.Contains(o, want+"\n") {
			t.Errorf("progress lacks %q:\n%s", want, o)
		}
	}
	if strings.Contains(o, "cannot configure") {
		t.Errorf("a follower's refusal was reported as an error:\n%s", o)
	}
}

// TestDriverRetries: a worker that cannot start is retried; a connector
// the group refuses is reported once, not on every attempt.
func TestDriverRetries(t *testing.T) {
	c := mustParse(t, "clusters", "a, b", "emit.heartbeats.enabled", "false", "a->b.enabled", "true")
	out := &lines{}
	var mu sync.Mutex
	attempts := 0
	g := &fakeGroup{leader: true, configs: map[string]map[string]string{},
		putErr: errors.New("Connector configuration is invalid")}
	d := &Driver{Config: c, Progress: out, Poll: 5 * time.Millisecond, RetryMax: 10 * time.Millisecond,
		Start: func(ctx context.Context, f Flow, props map[string]string) (herder.Herder, func(), error) {
			mu.Lock()
			defer mu.Unlock()
			attempts++
			if attempts < 3 {
				return nil, nil, errors.New("look up the Kafka cluster id: dial tcp: connection refused")
			}
			return g, func() {}, nil
		}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	waitFor(t, "the worker", func() bool { mu.Lock(); defer mu.Unlock(); return attempts == 3 })
	time.Sleep(50 * time.Millisecond)
	cancel()
	<-done
	o := out.String()
	if n := strings.Count(o, "a->b: cannot start the worker on b"); n != 2 {
		t.Errorf("%d start failures reported, want 2:\n%s", n, o)
	}
	if n := strings.Count(o, "a->b: cannot configure MirrorSourceConnector: Connector configuration is invalid"); n != 1 {
		t.Errorf("refusal reported %d times, want once:\n%s", n, o)
	}
}

// TestDriverWaitsOutRebalances: while the group cannot say what it has
// (409 during a rebalance), the leader writes nothing — a write restarts
// the connector — and configures once it can compare.
func TestDriverWaitsOutRebalances(t *testing.T) {
	c := mustParse(t, "clusters", "a, b", "emit.heartbeats.enabled", "false", "a->b.enabled", "true")
	g := &fakeGroup{leader: true, configs: map[string]map[string]string{}, infoErr: herder.ErrRebalancing}
	d := &Driver{Config: c, Poll: 5 * time.Millisecond,
		Start: func(context.Context, Flow, map[string]string) (herder.Herder, func(), error) {
			return g, func() {}, nil
		}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	time.Sleep(50 * time.Millisecond)
	g.get(func(g *fakeGroup) {
		if g.puts != 0 {
			t.Errorf("%d writes while rebalancing", g.puts)
		}
	})
	g.set(func(g *fakeGroup) { g.infoErr = nil })
	waitFor(t, "the configs", func() bool {
		n := 0
		g.get(func(g *fakeGroup) { n = g.puts })
		return n == 3
	})
	cancel()
	<-done
}

func TestDriverNoFlows(t *testing.T) {
	d := &Driver{Config: mustParse(t, "clusters", "a, b", "emit.heartbeats.enabled", "false")}
	if err := d.Run(context.Background()); err == nil {
		t.Fatal("Run with no flows succeeded")
	}
}
