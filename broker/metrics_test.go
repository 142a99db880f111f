package broker_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/api"
	"github.com/fjordhq/fjord/internal/testkit"
)

// metricValue sums the values of name's series whose labels include
// want (counters, gauges, and a histogram's sample count); ok is false
// when no series matches.
func metricValue(t *testing.T, g prometheus.Gatherer, name string, want map[string]string) (float64, bool) {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	sum, found := 0.0, false
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.Metric {
			if !hasLabels(m, want) {
				continue
			}
			found = true
			switch {
			case m.Counter != nil:
				sum += m.Counter.GetValue()
			case m.Gauge != nil:
				sum += m.Gauge.GetValue()
			case m.Histogram != nil:
				sum += float64(m.Histogram.GetSampleCount())
			}
		}
	}
	return sum, found
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	n := 0
	for _, l := range m.Label {
		if v, ok := want[l.GetName()]; ok {
			if v != l.GetValue() {
				return false
			}
			n++
		}
	}
	return n == len(want)
}

// mustMetric is metricValue failing the test when no series matches.
func mustMetric(t *testing.T, g prometheus.Gatherer, name string, want map[string]string) float64 {
	t.Helper()
	v, ok := metricValue(t, g, name, want)
	if !ok {
		t.Fatalf("no %s%v series", name, want)
	}
	return v
}

// TestBrokerMetrics: per-topic bytes and messages in and out, log sizes
// and offsets, partition counts, the controller's view and the group
// counters of a single broker, read from its registry after real
// clients produced, consumed in a group and deleted the topic.
func TestBrokerMetrics(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	g := b.Server.Gatherer()
	if g == nil {
		t.Fatal("the broker's registry cannot be gathered")
	}
	adm := testkit.Admin(t, b.Addr)
	const topic, n = "metrics-a", 400
	createTopic(t, adm, topic, 2, nil)
	cl := testkit.Client(t, b.Addr, kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(kgo.NoCompression()))
	ctx := testkit.Context(t, 30*time.Second)
	for i := range n {
		cl.Produce(ctx, &kgo.Record{Key: []byte(fmt.Sprint(i)), Value: []byte(strings.Repeat("v", 100))}, nil)
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	tl := map[string]string{"topic": topic}
	if got := mustMetric(t, g, "fjord_broker_topic_messages_in_total", tl); got != n {
		t.Errorf("messages in %v, want %d", got, n)
	}
	// Batches are stored as they were produced: the bytes in are the
	// bytes in the topic's logs.
	bytesIn := mustMetric(t, g, "fjord_broker_topic_bytes_in_total", tl)
	if logSize := mustMetric(t, g, "fjord_log_size_bytes", tl); bytesIn <= float64(n*100) || bytesIn != logSize {
		t.Errorf("bytes in %v, log size %v: want equal and above %d", bytesIn, logSize, n*100)
	}
	if got := mustMetric(t, g, "fjord_log_end_offset", tl); got != n {
		t.Errorf("log end offsets sum to %v, want %d", got, n)
	}
	if got := mustMetric(t, g, "fjord_log_start_offset", tl); got != 0 {
		t.Errorf("log start offsets sum to %v, want 0", got)
	}
	if got := mustMetric(t, g, "fjord_broker_topic_bytes_out_total", tl); got != 0 {
		t.Errorf("bytes out %v before any fetch", got)
	}

	// A group consumer reads everything: bytes out, and a rebalance.
	consumer := testkit.Client(t, b.Addr, kgo.ConsumeTopics(topic), kgo.ConsumerGroup("metrics-group"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	for got := 0; got < n; {
		fs := consumer.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d", got, n)
		}
		got += fs.NumRecords()
	}
	if got := mustMetric(t, g, "fjord_broker_topic_bytes_out_total", tl); got < bytesIn {
		t.Errorf("bytes out %v after consuming everything, want at least the %v bytes in", got, bytesIn)
	}
	if got := mustMetric(t, g, "fjord_group_rebalances_total", nil); got < 1 {
		t.Errorf("rebalances %v after a consumer joined", got)
	}
	testkit.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		if got := mustMetric(t, g, "fjord_group_completed_rebalances_total", nil); got < 1 {
			return fmt.Errorf("completed rebalances %v", got)
		}
		if got := mustMetric(t, g, "fjord_group_groups", map[string]string{"state": "Stable"}); got != 1 {
			return fmt.Errorf("%v Stable groups, want 1", got)
		}
		return nil
	})

	// Partition counts: the topic's 2 and __consumer_offsets' 50, all led
	// here; a single node is its own active controller.
	for name, want := range map[string]float64{
		"fjord_broker_partitions": 52, "fjord_broker_leader_partitions": 52,
		"fjord_broker_under_replicated_partitions": 0, "fjord_broker_under_min_isr_partitions": 0,
		"fjord_broker_offline_partitions": 0, "fjord_controller_active": 1,
		"fjord_controller_active_brokers": 1, "fjord_controller_fenced_brokers": 0,
	} {
		if got := mustMetric(t, g, name, nil); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if got := mustMetric(t, g, "fjord_broker_requests_total", map[string]string{"api": "Produce"}); got < 1 {
		t.Errorf("produce requests %v", got)
	}
	if got := mustMetric(t, g, "fjord_broker_request_duration_seconds", map[string]string{"api": "Fetch"}); got < 1 {
		t.Errorf("fetch latencies observed %v", got)
	}

	// A deleted topic's series go with it.
	consumer.Close()
	if _, err := adm.DeleteTopics(ctx, topic); err != nil {
		t.Fatal(err)
	}
	testkit.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		for _, name := range []string{"fjord_broker_topic_bytes_in_total", "fjord_broker_topic_bytes_out_total",
			"fjord_broker_topic_messages_in_total", "fjord_log_size_bytes", "fjord_log_end_offset"} {
			if _, ok := metricValue(t, g, name, tl); ok {
				return fmt.Errorf("%s still has a series for the deleted topic", name)
			}
		}
		return nil
	})
}

// TestBrokerReadyz: a serving single broker is ready; a closed one
// answers 503 naming the check and why.
func TestBrokerReadyz(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	h := api.New(nil)
	srv := b.Server
	h.AddReadyCheck("broker", srv.ReadyError)
	code, body := get(t, h, "/readyz")
	if code != http.StatusOK || !strings.Contains(body, `"status":"ready"`) || !strings.Contains(body, `"broker":"ok"`) {
		t.Fatalf("/readyz of a serving broker: %d %s", code, body)
	}
	b.Close()
	code, body = get(t, h, "/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, `"failing":["broker"]`) || !strings.Contains(body, "shutting down") {
		t.Fatalf("/readyz of a closed broker: %d %s", code, body)
	}
}

func get(t *testing.T, h *api.Server, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.Router.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code, rec.Body.String()
}
