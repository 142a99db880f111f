package runtime

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/plugins"
	"github.com/fjordhq/fjord/connect/runtime/runtimetest"
	"github.com/fjordhq/fjord/connect/storage"
	"github.com/fjordhq/fjord/internal/testkit"
)

// TestTopicCreation: KIP-158 creates the source's topic with the first
// matching group's settings before the first record goes to it.
func TestTopicCreation(t *testing.T) {
	b := testkit.StartBroker(t, map[string]string{"auto.create.topics.enable": "false"})
	ctx := testkit.Context(t, time.Minute)
	w := newTestWorker(t, workerProps(b.Addr), nil)
	ev := newEvents()
	id := runtimetest.TestID(t)
	run(t, w, ev, runtimetest.SourceConfig("src", id, "state-orders", 10,
		"topic.creation.groups", "compacted",
		"topic.creation.default.replication.factor", "1", "topic.creation.default.partitions", "2",
		"topic.creation.compacted.include", "state-.*", "topic.creation.compacted.partitions", "3",
		"topic.creation.compacted.cleanup.policy", "compact"))
	// A short metadata age: the topic appears while we poll for it.
	adm := kadm.NewClient(testkit.Client(t, b.Addr, kgo.MetadataMinAge(20*time.Millisecond)))
	testkit.CheckFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		td, err := adm.ListTopics(ctx, "state-orders")
		if err != nil || td["state-orders"].Err != nil {
			return fmt.Errorf("topic: %v %+v", err, td)
		}
		if n := len(td["state-orders"].Partitions); n != 3 {
			return fmt.Errorf("%d partitions, want the compacted group's 3", n)
		}
		return nil
	})
	rc, err := adm.DescribeTopicConfigs(ctx, "state-orders")
	if err != nil {
		t.Fatal(err)
	}
	c, _ := rc.On("state-orders", nil)
	for _, kv := range c.Configs {
		if kv.Key == "cleanup.policy" && (kv.Value == nil || *kv.Value != "compact") {
			t.Errorf("cleanup.policy %v", kv.Value)
		}
	}
	readAll(t, b.Addr, "state-orders", 10)
}

// TestSinkTopicsRegex: a sink subscribed by regex reads every matching
// topic, whole names only (Java's Matcher.matches).
func TestSinkTopicsRegex(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	cl := testkit.Client(t, b.Addr, kgo.AllowAutoTopicCreation())
	for _, topic := range []string{"metrics.a", "metrics.b", "xmetrics.c"} {
		produce(t, cl, &kgo.Record{Topic: topic, Value: []byte(topic)})
	}
	w := newTestWorker(t, workerProps(b.Addr), nil)
	ev := newEvents()
	id := runtimetest.TestID(t)
	cfg := runtimetest.SinkConfig("re", id, "")
	delete(cfg, "topics")
	cfg["topics.regex"] = "metrics\\..*"
	run(t, w, ev, cfg)
	c := runtimetest.Collector(id)
	awaitDistinct(t, c, 2)
	time.Sleep(300 * time.Millisecond) // asserting xmetrics.c never comes
	for _, v := range c.Values() {
		if v == "xmetrics.c" {
			t.Errorf("a topic the regex does not match whole was consumed")
		}
	}
}

func TestMetrics(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	reg := prometheus.NewRegistry()
	cfg, err := ParseWorkerConfig(workerProps(b.Addr), Standalone)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWorker(cfg, WorkerOptions{WorkerID: "m", Offsets: storage.NewMemoryOffsetStore(), Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(context.Background())
	ev := newEvents()
	id := runtimetest.TestID(t)
	run(t, w, ev, runtimetest.SourceConfig("src", id, "m", 50))
	run(t, w, ev, runtimetest.SinkConfig("sink", id, "m"))
	awaitDistinct(t, runtimetest.Collector(id), 50)
	sum := func(name string) (float64, bool) {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() == name {
				total := 0.0
				for _, m := range mf.Metric {
					total += m.GetCounter().GetValue()
				}
				return total, true
			}
		}
		return 0, false
	}
	testkit.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		for name, want := range map[string]float64{
			"fjord_connect_source_records_polled_total": 50, "fjord_connect_source_records_written_total": 50,
			"fjord_connect_sink_records_read_total": 50, "fjord_connect_sink_records_sent_total": 50,
		} {
			if got, _ := sum(name); got != want {
				return fmt.Errorf("%s = %v, want %v", name, got, want)
			}
		}
		return nil
	})
	if n, ok := sum("fjord_connect_offset_commits_total"); !ok || n == 0 {
		t.Errorf("offset commits %v %v", n, ok)
	}
}

// TestOverridePolicyAtStart: with policy None, a task whose connector
// overrides a client config does not start.
func TestOverridePolicyAtStart(t *testing.T) {
	w := newTestWorker(t, workerProps("127.0.0.1:1", "connector.client.config.override.policy", "None"), nil)
	cfg := runtimetest.SinkConfig("p", runtimetest.TestID(t), "t", "consumer.override.max.poll.records", "5")
	err := w.StartTask(context.Background(), storage.TaskID{Connector: "p"}, cfg, cfg, storage.TargetStarted, newEvents())
	if err == nil || !strings.Contains(err.Error(), "The 'None' policy does not allow 'max.poll.records' to be overridden") {
		t.Errorf("start: %v", err)
	}
	v, err := ValidateConnectorConfig(w.cfg, cfg)
	if err != nil || v.ErrorCount != 1 {
		t.Errorf("validation: %d errors, %v", v.ErrorCount, err)
	}
}

// TestSinkResetOffsets: a task rewinding with SinkTaskContext.ResetOffsets
// gets the records again.
func TestSinkResetOffsets(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	cl := testkit.Client(t, b.Addr, kgo.AllowAutoTopicCreation())
	for i := range 5 {
		produce(t, cl, &kgo.Record{Topic: "rewind", Value: []byte(fmt.Sprint("r", i))})
	}
	w := newTestWorker(t, workerProps(b.Addr), nil)
	id := runtimetest.TestID(t)
	run(t, w, newEvents(), runtimetest.SinkConfig("rw", id, "rewind", "rewind.on", "r4"))
	c := runtimetest.Collector(id)
	testkit.CheckFor(t, 30*time.Second, 10*time.Millisecond, func() error {
		if n := len(c.Values()); n < 10 {
			return fmt.Errorf("%d values: %v", n, c.Values())
		}
		return nil
	})
	if v := c.Values(); v[5] != "r0" || v[9] != "r4" {
		t.Errorf("after the rewind: %v", v)
	}
}

// raisingConnector fails itself through its context after starting.
type raisingConnector struct{ nullSourceConnector }

func (c *raisingConnector) Initialize(ctx connect.ConnectorContext) {
	go ctx.RaiseError(fmt.Errorf("lost the source system"))
}

func init() {
	plugins.Register(plugins.Plugin{Class: "io.fjord.test.RaisingConnector", Kind: plugins.Source, New: func() any { return &raisingConnector{} }})
}

func TestConnectorRaiseError(t *testing.T) {
	w := newTestWorker(t, workerProps("127.0.0.1:1"), nil)
	ev := newEvents()
	cfg := map[string]string{"name": "raise", "connector.class": "io.fjord.test.RaisingConnector"}
	if err := w.StartConnector(context.Background(), "raise", cfg, storage.TargetStarted, ev, nil); err != nil {
		t.Fatal(err)
	}
	err := ev.await(t, "raise", -1, storage.StateFailed)
	if err == nil || !strings.Contains(ErrorTrace(err), "lost the source system") {
		t.Errorf("trace %q", ErrorTrace(err))
	}
}
