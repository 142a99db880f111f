package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect/runtime/runtimetest"
	"github.com/fjordhq/fjord/connect/storage"
	"github.com/fjordhq/fjord/internal/testkit"
)

type dlqGolden struct {
	Connector map[string]string `json:"connector"`
	Records   []struct {
		Key     string      `json:"key"`
		Value   string      `json:"value"`
		Headers [][2]string `json:"headers"`
	} `json:"records"`
}

func produce(t *testing.T, cl *kgo.Client, rs ...*kgo.Record) {
	t.Helper()
	if err := cl.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func readAll(t *testing.T, addr, topic string, n int) []*kgo.Record {
	t.Helper()
	ctx := testkit.Context(t, 30*time.Second)
	cl := testkit.Client(t, addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d records of %d from %s", len(out), n, topic)
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, r) })
	}
	return out
}

// TestDeadLetterQueueMatchesKafka replays the DLQ capture: the same
// records through a sink with the same error settings must produce the
// record Kafka Connect wrote (testdata/kafkaref/dlq.json): original key,
// value and headers, then Kafka's __connect.errors.* context headers.
func TestDeadLetterQueueMatchesKafka(t *testing.T) {
	data, err := os.ReadFile("testdata/kafkaref/dlq.json")
	if err != nil {
		t.Fatal(err)
	}
	var g dlqGolden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	b := testkit.StartBroker(t, nil)
	cl := testkit.Client(t, b.Addr, kgo.AllowAutoTopicCreation())
	produce(t, cl, &kgo.Record{Topic: "dlq-src", Key: []byte("k1"), Value: []byte("not json"), Headers: []kgo.RecordHeader{{Key: "h1", Value: []byte("v1")}}},
		&kgo.Record{Topic: "dlq-src", Key: []byte("k2"), Value: []byte(`{"ok":true}`)})

	w := newTestWorker(t, workerProps(b.Addr), nil)
	ev := newEvents()
	id := runtimetest.TestID(t)
	cfg := runtimetest.SinkConfig("golden-dlq", id, "dlq-src")
	for k, v := range g.Connector {
		if k != "connector.class" && k != "key.converter" {
			cfg[k] = v
		}
	}
	run(t, w, ev, cfg)
	c := runtimetest.Collector(id)
	awaitDistinct(t, c, 1)
	if v := c.Values(); len(v) != 1 || v[0] != "map[ok:true]" {
		t.Errorf("sink got %q", v)
	}
	got := readAll(t, b.Addr, "golden-dlq", 1)[0]
	want := g.Records[0]
	if string(got.Key) != want.Key || string(got.Value) != want.Value {
		t.Errorf("DLQ record %q=%q, Kafka wrote %q=%q", got.Key, got.Value, want.Key, want.Value)
	}
	if len(got.Headers) != len(want.Headers) {
		t.Fatalf("%d headers, Kafka wrote %d: %v", len(got.Headers), len(want.Headers), got.Headers)
	}
	for i, h := range want.Headers {
		gh := got.Headers[i]
		if gh.Key != h[0] {
			t.Errorf("header %d is %s, Kafka's is %s", i, gh.Key, h[0])
			continue
		}
		if h[0] == headerExceptionTrace || h[0] == headerExceptionMessage {
			// Java's stack trace vs Go's error chain, and Jackson's parse
			// error detail (empty here) vs the Go converter's: Kafka's
			// text must begin ours.
			first := strings.SplitN(h[1], "\n", 2)[0]
			if !strings.HasPrefix(string(gh.Value), first) {
				t.Errorf("header %s %q does not start with Kafka's %q", h[0], gh.Value, first)
			}
			continue
		}
		if string(gh.Value) != h[1] {
			t.Errorf("header %s = %q, Kafka wrote %q", h[0], gh.Value, h[1])
		}
	}
	if st, _ := ev.state("golden-dlq", 0); st != storage.StateRunning {
		t.Errorf("task is %s after a tolerated error", st)
	}
}

func TestToleranceNoneFailsTask(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	cl := testkit.Client(t, b.Addr, kgo.AllowAutoTopicCreation())
	produce(t, cl, &kgo.Record{Topic: "strict", Value: []byte("fine")}, &kgo.Record{Topic: "strict", Value: []byte("bad one")})
	w := newTestWorker(t, workerProps(b.Addr), nil)
	ev := newEvents()
	id := runtimetest.TestID(t)
	run(t, w, ev, runtimetest.SinkConfig("strict", id, "strict", "value.converter", runtimetest.FlakyClass))
	err := ev.await(t, "strict", 0, storage.StateFailed)
	trace := ErrorTrace(err)
	if !strings.Contains(trace, "Tolerance exceeded in error handler") || !strings.Contains(trace, "cannot read") {
		t.Errorf("trace %q", trace)
	}
	if got := runtimetest.Collector(id).Values(); len(got) != 0 {
		t.Errorf("a failed batch reached the sink: %q", got)
	}
}

func TestRetriesThenSucceeds(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	cl := testkit.Client(t, b.Addr, kgo.AllowAutoTopicCreation())
	for i := range 5 {
		produce(t, cl, &kgo.Record{Topic: "flaky", Value: []byte(fmt.Sprint("r", i))})
	}
	w := newTestWorker(t, workerProps(b.Addr), nil)
	ev := newEvents()
	id := runtimetest.TestID(t)
	// Three retriable converter failures, retried for up to 10 s.
	run(t, w, ev, runtimetest.SinkConfig("flaky", id, "flaky", "value.converter", runtimetest.FlakyClass,
		"value.converter.failures", "3", "errors.retry.timeout", "10000", "errors.retry.delay.max.ms", "100",
		"retriable.failures", "2"))
	c := runtimetest.Collector(id)
	awaitDistinct(t, c, 5)
	if v := c.Values(); len(v) != 5 || v[0] != "r0" || v[4] != "r4" {
		t.Errorf("values %q (want each once, in order)", v)
	}
	if n := c.RetriableFailures(); n != 2 {
		t.Errorf("sink Put failed %d times, want 2 retried", n)
	}

	// Without retries, the same flakiness fails the task.
	ev2 := newEvents()
	id2 := id + "-noretry"
	run(t, w, ev2, runtimetest.SinkConfig("flaky2", id2, "flaky", "value.converter", runtimetest.FlakyClass,
		"value.converter.failures", "3"))
	err := ev2.await(t, "flaky2", 0, storage.StateFailed)
	if !strings.Contains(ErrorTrace(err), "RetriableException") {
		t.Errorf("trace %q", ErrorTrace(err))
	}
}

func TestErrantRecordReporter(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	cl := testkit.Client(t, b.Addr, kgo.AllowAutoTopicCreation())
	for _, v := range []string{"a", "reject", "b"} {
		produce(t, cl, &kgo.Record{Topic: "errant", Key: []byte("k-" + v), Value: []byte(v)})
	}
	w := newTestWorker(t, workerProps(b.Addr), nil)
	ev := newEvents()
	id := runtimetest.TestID(t)
	run(t, w, ev, runtimetest.SinkConfig("errant", id, "errant", "errant.on", "reject", "errors.tolerance", "all",
		"errors.deadletterqueue.topic.name", "errant-dlq", "errors.deadletterqueue.topic.replication.factor", "1",
		"errors.deadletterqueue.context.headers.enable", "true", "errors.log.enable", "true", "errors.log.include.messages", "true"))
	c := runtimetest.Collector(id)
	awaitDistinct(t, c, 2)
	r := readAll(t, b.Addr, "errant-dlq", 1)[0]
	hs := map[string]string{}
	for _, h := range r.Headers {
		hs[h.Key] = string(h.Value)
	}
	if string(r.Value) != "reject" || hs[headerStage] != "TASK_PUT" || hs[headerClass] != runtimetest.SinkClass ||
		hs[headerOffset] != "1" || !strings.Contains(hs[headerExceptionMessage], "rejects") {
		t.Errorf("DLQ record %q headers %v", r.Value, hs)
	}
}

// TestSinkCommitsOnlyWhatPreCommitReturns holds PreCommit: nothing is
// committed even after many flush intervals; a new task starts over.
func TestSinkCommitsOnlyWhatPreCommitReturns(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	ctx := testkit.Context(t, time.Minute)
	cl := testkit.Client(t, b.Addr, kgo.AllowAutoTopicCreation())
	for i := range 10 {
		produce(t, cl, &kgo.Record{Topic: "held", Value: []byte(fmt.Sprint(i))})
	}
	w := newTestWorker(t, workerProps(b.Addr, "offset.flush.interval.ms", "20"), nil)
	ev := newEvents()
	id := runtimetest.TestID(t)
	cfg := runtimetest.SinkConfig("held", id, "held", "hold.commits", "true")
	ids := run(t, w, ev, cfg)
	awaitDistinct(t, runtimetest.Collector(id), 10)
	time.Sleep(200 * time.Millisecond) // ten flush intervals: asserting nothing gets committed
	o, err := w.ConnectorOffsets(ctx, "held", cfg)
	if err != nil || len(o.Offsets) != 0 {
		t.Fatalf("held sink committed %+v (%v)", o.Offsets, err)
	}
	w.StopTasks(ctx, ids)
	// The same records come again to a new task.
	if err := w.StartTask(ctx, ids[0], cfg, cfg, storage.TargetStarted, ev); err != nil {
		t.Fatal(err)
	}
	testkit.CheckFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		if n := len(runtimetest.Collector(id).Values()); n < 20 {
			return fmt.Errorf("%d values, want the 10 twice", n)
		}
		return nil
	})
}
