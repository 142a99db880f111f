package admin

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect/herder"
	"github.com/fjordhq/fjord/internal/testkit"
)

const cxStringConverter = "org.apache.kafka.connect.storage.StringConverter"

// cxPipelines GETs /api/v1/pipelines.
func (a *cxAPI) pipelines(t *testing.T) pipelinesResponse {
	t.Helper()
	var out pipelinesResponse
	if code := a.get(t, "/pipelines", &out); code != http.StatusOK {
		t.Fatalf("GET /pipelines: %d", code)
	}
	return out
}

func findPipeline(ps pipelinesResponse, name string) (pipeline, bool) {
	for _, p := range ps.Pipelines {
		if p.Name == name {
			return p, true
		}
	}
	return pipeline{}, false
}

// shape is a pipeline's hops as "kind:name" (for comparing layouts).
func (p pipeline) shape() string {
	var s []string
	for _, h := range p.Hops {
		s = append(s, h.Kind+":"+h.Name)
	}
	return strings.Join(s, " → ")
}

func (h hop) String() string {
	f := func(p *int64) string {
		if p == nil {
			return "null"
		}
		return fmt.Sprint(*p)
	}
	sec := "null"
	if h.LagSeconds != nil {
		sec = fmt.Sprint(*h.LagSeconds)
	}
	st := "null"
	if h.State != nil {
		st = *h.State
	}
	return fmt.Sprintf("%s %s state=%s records=%s bytes=%s seconds=%s (%s)", h.Kind, h.Name, st, f(h.LagRecords), f(h.LagBytes), sec, h.Detail)
}

func appendLines(t *testing.T, name string, from, to int) {
	t.Helper()
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i := from; i < to; i++ {
		fmt.Fprintf(f, "line %d\n", i)
	}
}

// TestPipelinesFileChain runs FileStreamSource → lines → FileStreamSink
// (and a topics.regex sink on the same topic) in a real worker, plus a
// sink no source feeds: the view shows the chains, the sinks catch up to
// lag 0, and a paused sink falls behind by exactly the records produced
// meanwhile, with the age of the oldest of them.
func TestPipelinesFileChain(t *testing.T) {
	testkit.SkipShort(t, "a Connect worker with a file chain")
	b := testkit.StartBroker(t, nil)
	adm := testkit.Admin(t, b.Addr)
	if _, err := adm.CreateTopics(testkit.Context(t, 10*time.Second), 2, 1, nil, "lines", "other"); err != nil {
		t.Fatal(err)
	}
	w := cxStartWorker(t, b.Addr, cxStringConverter, nil)
	api := cxStartAPI(t, Options{ClientOpts: cxSeeds(b.Addr), Herder: w.h})

	dir := t.TempDir()
	in := filepath.Join(dir, "in.txt")
	appendLines(t, in, 0, 100)
	cxProduce(t, b.Addr, "other", "a", "b", "c")
	w.create(t, map[string]string{"name": "src", "connector.class": "FileStreamSource", "file": in, "topic": "lines"})
	w.create(t, map[string]string{"name": "snk", "connector.class": "FileStreamSink", "file": filepath.Join(dir, "out.txt"), "topics": "lines"})
	w.create(t, map[string]string{"name": "rx", "connector.class": "FileStreamSink", "file": filepath.Join(dir, "rx.txt"), "topics.regex": "li.*s"})
	w.create(t, map[string]string{"name": "orphan", "connector.class": "FileStreamSink", "file": filepath.Join(dir, "orphan.txt"), "topics": "other"})

	// Every sink catches up: lag 0 records, 0 seconds.
	caughtUp := func() error {
		if err := w.failed(); err != nil {
			t.Fatal(err)
		}
		ps := api.pipelines(t)
		if !ps.Available || len(ps.Pipelines) != 2 {
			return fmt.Errorf("available %v, %d pipelines, want 2: %+v", ps.Available, len(ps.Pipelines), ps.Pipelines)
		}
		src, _ := findPipeline(ps, "src")
		if got, want := src.shape(), "source:src → topic:lines → sink:rx → sink:snk"; got != want {
			return fmt.Errorf("pipeline src is %s, want %s", got, want)
		}
		orphan, _ := findPipeline(ps, "orphan")
		if got, want := orphan.shape(), "topic:other → sink:orphan"; got != want {
			return fmt.Errorf("pipeline orphan is %s, want %s", got, want)
		}
		for _, h := range append(src.Hops, orphan.Hops...) {
			switch h.Kind {
			case hopSource:
				if h.State == nil || *h.State != "RUNNING" || h.LagRecords != nil || h.LagBytes != nil || h.LagSeconds != nil {
					return fmt.Errorf("source hop %v, want RUNNING and no lags", h)
				}
			case hopTopic:
				if h.State != nil || h.LagRecords != nil {
					return fmt.Errorf("topic hop %v, want no state or lag", h)
				}
			case hopSink:
				if h.State == nil || *h.State != "RUNNING" || h.LagRecords == nil || *h.LagRecords != 0 ||
					h.LagSeconds == nil || *h.LagSeconds != 0 || h.LagBytes != nil {
					return fmt.Errorf("sink hop %v, want RUNNING with lag 0 records, 0 s", h)
				}
			}
		}
		if d := src.Hops[1].Detail; d != "2 partitions, 100 records" {
			return fmt.Errorf("topic lines detail %q", d)
		}
		return nil
	}
	testkit.CheckFor(t, 60*time.Second, 100*time.Millisecond, caughtUp)

	// Paused, snk stops committing: the next 40 lines are its lag, and
	// the oldest of them is older than now. rx keeps up.
	ctx := testkit.Context(t, 30*time.Second)
	if err := w.h.PauseConnector(ctx, "snk"); err != nil {
		t.Fatal(err)
	}
	w.awaitState(t, "snk", herder.StatePaused)
	appendLines(t, in, 100, 140)
	var behind hop
	testkit.CheckFor(t, 60*time.Second, 100*time.Millisecond, func() error {
		src, _ := findPipeline(api.pipelines(t), "src")
		if len(src.Hops) != 4 {
			return fmt.Errorf("pipeline src is %s", src.shape())
		}
		rx, snk := src.Hops[2], src.Hops[3]
		if snk.State == nil || *snk.State != "PAUSED" || snk.LagRecords == nil || *snk.LagRecords != 40 {
			return fmt.Errorf("paused sink hop %v, want PAUSED with 40 records behind", snk)
		}
		if rx.LagRecords == nil || *rx.LagRecords != 0 {
			return fmt.Errorf("running sink hop %v, want caught up", rx)
		}
		behind = snk
		return nil
	})
	if behind.LagSeconds == nil || *behind.LagSeconds <= 0 || *behind.LagSeconds > 60 {
		t.Fatalf("paused sink hop %v: lag_seconds should be the age of its first unconsumed record", behind)
	}
	if !strings.Contains(behind.Detail, "group connect-snk") {
		t.Errorf("sink detail %q does not name its group", behind.Detail)
	}

	// Later, the same records are older: lag_seconds is the oldest
	// unconsumed record's age.
	first := *behind.LagSeconds
	time.Sleep(1500 * time.Millisecond) // the age must grow by wall-clock time
	src, _ := findPipeline(api.pipelines(t), "src")
	if l := src.Hops[3].LagSeconds; l == nil || *l < first+1.4 {
		t.Fatalf("lag_seconds went from %v to %v over 1.5 s", first, src.Hops[3])
	}

	if err := w.h.ResumeConnector(ctx, "snk"); err != nil {
		t.Fatal(err)
	}
	testkit.CheckFor(t, 60*time.Second, 100*time.Millisecond, caughtUpAfter(t, api, 140))
}

// caughtUpAfter: every sink of src is back at lag 0 once lines holds n
// records.
func caughtUpAfter(t *testing.T, api *cxAPI, n int) func() error {
	return func() error {
		src, ok := findPipeline(api.pipelines(t), "src")
		if !ok || len(src.Hops) != 4 {
			return fmt.Errorf("pipeline src is %s", src.shape())
		}
		if d := src.Hops[1].Detail; d != fmt.Sprintf("2 partitions, %d records", n) {
			return fmt.Errorf("topic hop %v", src.Hops[1])
		}
		for _, h := range src.Hops[2:] {
			if h.LagRecords == nil || *h.LagRecords != 0 || h.LagSeconds == nil || *h.LagSeconds != 0 {
				return fmt.Errorf("sink hop %v, want caught up", h)
			}
		}
		return nil
	}
}

// TestPipelinesWithoutWorker: a node without a Connect worker answers
// available false, not an error.
func TestPipelinesWithoutWorker(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	api := cxStartAPI(t, Options{ClientOpts: cxSeeds(b.Addr)})
	ps := api.pipelines(t)
	if ps.Available || ps.Pipelines == nil || len(ps.Pipelines) != 0 || ps.Detail == "" {
		t.Fatalf("%+v, want available false, [] and a reason", ps)
	}
	var m mirrorResponse
	if code := api.get(t, "/mirror", &m); code != http.StatusOK || m.Available || m.Flows == nil || len(m.Flows) != 0 {
		t.Fatalf("GET /mirror: %d %+v, want available false and []", code, m)
	}
}

// TestPipelinesClusterDown: with the broker gone the view still answers
// within its bounds, the sink hop's lags null and saying why.
func TestPipelinesClusterDown(t *testing.T) {
	testkit.SkipShort(t, "a Connect worker losing its broker")
	b := testkit.StartBroker(t, nil)
	if _, err := testkit.Admin(t, b.Addr).CreateTopics(testkit.Context(t, 10*time.Second), 1, 1, nil, "events"); err != nil {
		t.Fatal(err)
	}
	cxProduce(t, b.Addr, "events", "a", "b")
	w := cxStartWorker(t, b.Addr, cxStringConverter, nil)
	api := cxStartAPI(t, Options{ClientOpts: cxSeeds(b.Addr), Herder: w.h})
	w.create(t, map[string]string{"name": "out", "connector.class": "FileStreamSink", "file": filepath.Join(t.TempDir(), "out.txt"), "topics": "events"})
	testkit.CheckFor(t, 60*time.Second, 100*time.Millisecond, func() error {
		p, _ := findPipeline(api.pipelines(t), "out")
		if len(p.Hops) != 2 || p.Hops[1].LagRecords == nil || *p.Hops[1].LagRecords != 0 {
			return fmt.Errorf("pipeline out: %v", p.Hops)
		}
		return nil
	})
	b.Close()
	start := time.Now()
	p, _ := findPipeline(api.pipelines(t), "out")
	took := time.Since(start)
	if len(p.Hops) != 2 || p.Hops[1].LagRecords != nil || p.Hops[1].LagSeconds != nil || p.Hops[0].Detail == "" || !strings.Contains(p.Hops[1].Detail, "could not list the end offsets") {
		t.Fatalf("pipeline out with the broker down: %v", p.Hops)
	}
	if took > 3*clusterWait {
		t.Errorf("the view took %s with the broker down", took)
	}
}
