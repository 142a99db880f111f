package runtime

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect/runtime/runtimetest"
	"github.com/fjordhq/fjord/connect/storage"
	"github.com/fjordhq/fjord/internal/testkit"
)

// series returns the series of name whose labels include want.
func series(t *testing.T, reg prometheus.Gatherer, name string, want map[string]string) []*dto.Metric {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []*dto.Metric
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metrics:
		for _, m := range mf.Metric {
			have := map[string]string{}
			for _, l := range m.Label {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if have[k] != v {
					continue metrics
				}
			}
			out = append(out, m)
		}
	}
	return out
}

// one returns the single series of name matching want.
func one(t *testing.T, reg prometheus.Gatherer, name string, want map[string]string) (*dto.Metric, error) {
	t.Helper()
	s := series(t, reg, name, want)
	if len(s) != 1 {
		return nil, fmt.Errorf("%d %s%v series, want 1", len(s), name, want)
	}
	return s[0], nil
}

func newMetricsWorker(t *testing.T, addr string, reg prometheus.Registerer) *Worker {
	t.Helper()
	cfg, err := ParseWorkerConfig(workerProps(addr), Standalone)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWorker(cfg, WorkerOptions{WorkerID: "metrics", Offsets: storage.NewMemoryOffsetStore(), Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close(context.Background()) })
	return w
}

// TestSourceTaskMetrics: poll batch sizes, offset commit times and the
// active record count of a real source task writing to a broker. The
// producer lingers 2 s, so the polled records are seen unacknowledged
// before they are seen written. A stopped task's series are gone.
func TestSourceTaskMetrics(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	reg := prometheus.NewRegistry()
	w := newMetricsWorker(t, b.Addr, reg)
	ev := newEvents()
	id := runtimetest.TestID(t)
	ids := run(t, w, ev, runtimetest.SourceConfig("msrc", id, "metrics-src", 30, "batch.size", "10", "producer.override.linger.ms", "2000"))
	task := map[string]string{"connector": "msrc", "task": "0"}

	sawActive := false
	testkit.CheckFor(t, 30*time.Second, 5*time.Millisecond, func() error {
		m, err := one(t, reg, "fjord_connect_source_record_active_count", task)
		if err != nil {
			return err
		}
		if m.GetGauge().GetValue() > 0 {
			sawActive = true
		}
		written, err := one(t, reg, "fjord_connect_source_records_written_total", task)
		if err != nil {
			return err
		}
		if got := written.GetCounter().GetValue(); got != 30 {
			return fmt.Errorf("%v records written, want 30", got)
		}
		if v := m.GetGauge().GetValue(); v != 0 {
			return fmt.Errorf("%v records active after all were written", v)
		}
		return nil
	})
	if !sawActive {
		t.Error("the active record count never showed the records waiting in the lingering producer")
	}
	h, err := one(t, reg, "fjord_connect_batch_size", map[string]string{"connector": "msrc", "task": "0", "kind": "poll"})
	if err != nil {
		t.Fatal(err)
	}
	if hist := h.GetHistogram(); hist.GetSampleCount() != 3 || hist.GetSampleSum() != 30 {
		t.Errorf("poll batch sizes: %d polls summing to %v, want 3 polls of 10", hist.GetSampleCount(), hist.GetSampleSum())
	}
	testkit.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		c, err := one(t, reg, "fjord_connect_offset_commit_seconds", task)
		if err != nil {
			return err
		}
		if c.GetHistogram().GetSampleCount() == 0 {
			return fmt.Errorf("no offset commit timed")
		}
		return nil
	})

	w.StopTasks(context.Background(), ids)
	for _, name := range []string{"fjord_connect_source_record_active_count", "fjord_connect_batch_size",
		"fjord_connect_offset_commit_seconds", "fjord_connect_source_records_polled_total"} {
		if s := series(t, reg, name, map[string]string{"connector": "msrc"}); len(s) != 0 {
			t.Errorf("%s: %d series left after the task stopped", name, len(s))
		}
	}
}

// TestSinkTaskMetrics: a sink task's lag while it works through a topic
// fetched a few batches at a time (small fetches, slow puts), then none;
// put batch sizes and commit times.
func TestSinkTaskMetrics(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	const topic, n = "metrics-sink", 200
	cl := testkit.Client(t, b.Addr, kgo.DefaultProduceTopic(topic), kgo.AllowAutoTopicCreation())
	ctx := testkit.Context(t, 60*time.Second)
	for i := range n {
		// One record per batch, so a small fetch carries few of them.
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprintf("value-%03d-%s", i, strings.Repeat("x", 50)))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	reg := prometheus.NewRegistry()
	w := newMetricsWorker(t, b.Addr, reg)
	id := runtimetest.TestID(t)
	ids := run(t, w, newEvents(), runtimetest.SinkConfig("msink", id, topic, "put.delay.ms", "20",
		"consumer.override.max.partition.fetch.bytes", "1024", "consumer.override.fetch.max.bytes", "1024"))
	task := map[string]string{"connector": "msink", "task": "0"}

	maxLag := 0.0
	testkit.CheckFor(t, 60*time.Second, 5*time.Millisecond, func() error {
		m, err := one(t, reg, "fjord_connect_sink_lag_records", task)
		if err != nil {
			return err
		}
		lag := m.GetGauge().GetValue()
		maxLag = max(maxLag, lag)
		if d := runtimetest.Collector(id).Distinct(); d < n {
			return fmt.Errorf("%d of %d records put", d, n)
		}
		if lag != 0 {
			return fmt.Errorf("lag %v with every record put", lag)
		}
		return nil
	})
	t.Logf("sink lag peaked at %v records", maxLag)
	// The first poll carried about 1 KiB of a 200-record partition.
	if maxLag < n/2 {
		t.Errorf("the sink's lag peaked at %v, want most of the %d records while it caught up", maxLag, n)
	}
	h, err := one(t, reg, "fjord_connect_batch_size", map[string]string{"connector": "msink", "task": "0", "kind": "put"})
	if err != nil {
		t.Fatal(err)
	}
	if hist := h.GetHistogram(); hist.GetSampleSum() != n || hist.GetSampleCount() < 2 {
		t.Errorf("put batch sizes: %d puts of %v records, want %d records in several puts", hist.GetSampleCount(), hist.GetSampleSum(), n)
	}
	testkit.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		c, err := one(t, reg, "fjord_connect_offset_commit_seconds", task)
		if err != nil {
			return err
		}
		if c.GetHistogram().GetSampleCount() == 0 {
			return fmt.Errorf("no sink offset commit timed")
		}
		return nil
	})
	w.StopTasks(context.Background(), ids)
	if s := series(t, reg, "fjord_connect_sink_lag_records", map[string]string{"connector": "msink"}); len(s) != 0 {
		t.Errorf("%d sink lag series left after the task stopped", len(s))
	}
}
