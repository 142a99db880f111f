package admin

import (
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fjordhq/fjord/internal/testkit"
)

const cxByteArray = "org.apache.kafka.connect.converters.ByteArrayConverter"

// TestMirror runs a MirrorSourceConnector (east → west, two in-process
// brokers, the worker on west) and a MirrorHeartbeatConnector, beside a
// connector that is not a mirror: /api/v1/mirror lists the two flows
// with their clusters, tasks, the topics they write and, for the source
// flow, the records it copied and their replication latency from the
// mirror source metrics.
func TestMirror(t *testing.T) {
	testkit.SkipShort(t, "mirroring between two brokers")
	east, west := testkit.StartBroker(t, nil), testkit.StartBroker(t, nil)
	if _, err := testkit.Admin(t, east.Addr).CreateTopics(testkit.Context(t, 10*time.Second), 2, 1, nil, "orders"); err != nil {
		t.Fatal(err)
	}
	var values []string
	for i := range 25 {
		values = append(values, fmt.Sprintf("order %d", i))
	}
	cxProduce(t, east.Addr, "orders", values...)

	reg := cxMetrics(t)
	w := cxStartWorker(t, west.Addr, cxStringConverter, reg)
	api := cxStartAPI(t, Options{ClientOpts: cxSeeds(west.Addr), Herder: w.h, Gatherer: reg})
	bytes := map[string]string{"key.converter": cxByteArray, "value.converter": cxByteArray, "header.converter": cxByteArray}
	with := func(m map[string]string) map[string]string {
		for k, v := range bytes {
			m[k] = v
		}
		return m
	}
	w.create(t, with(map[string]string{
		"name": "east-to-west", "connector.class": "MirrorSourceConnector", "tasks.max": "2",
		"source.cluster.alias": "east", "target.cluster.alias": "west",
		"source.cluster.bootstrap.servers": east.Addr, "target.cluster.bootstrap.servers": west.Addr,
		"topics": "orders", "replication.factor": "1", "offset-syncs.topic.replication.factor": "1",
		"refresh.topics.interval.seconds": "1", "sync.topic.configs.interval.seconds": "1",
	}))
	w.create(t, with(map[string]string{
		"name": "beat", "connector.class": "mirror-heartbeat", // Fjord's alias
		"source.cluster.alias": "east", "target.cluster.alias": "west", "target.cluster.bootstrap.servers": west.Addr,
		"heartbeats.topic.replication.factor": "1", "emit.heartbeats.interval.seconds": "1",
	}))
	in := filepath.Join(t.TempDir(), "in.txt")
	os.WriteFile(in, []byte("x\n"), 0o644)
	w.create(t, map[string]string{"name": "not-a-mirror", "connector.class": "FileStreamSource", "file": in, "topic": "lines"})

	var flows []mirrorFlow
	testkit.CheckFor(t, 60*time.Second, 100*time.Millisecond, func() error {
		if err := w.failed(); err != nil {
			t.Fatal(err)
		}
		var m mirrorResponse
		if code := api.get(t, "/mirror", &m); code != http.StatusOK || !m.Available {
			return fmt.Errorf("GET /mirror: %d %+v", code, m)
		}
		if len(m.Flows) != 2 || m.Flows[0].Connector != "beat" || m.Flows[1].Connector != "east-to-west" {
			return fmt.Errorf("flows %+v, want beat and east-to-west", m.Flows)
		}
		src := m.Flows[1]
		if src.Records == nil || *src.Records < 25 || !slices.Contains(src.Topics, "east.orders") {
			return fmt.Errorf("source flow %s has not copied the 25 orders", cxJSON(src))
		}
		if len(m.Flows[0].Topics) == 0 {
			return fmt.Errorf("heartbeat flow %s has written no heartbeats", cxJSON(m.Flows[0]))
		}
		flows = m.Flows
		return nil
	})

	beat, src := flows[0], flows[1]
	if src.Class != mirrorSourceClass || src.SourceCluster != "east" || src.TargetCluster != "west" ||
		src.State == nil || *src.State != "RUNNING" || !slices.Equal(src.Topics, []string{"east.orders"}) {
		t.Fatalf("source flow %s", cxJSON(src))
	}
	if len(src.Tasks) == 0 {
		t.Fatalf("source flow %s has no tasks", cxJSON(src))
	}
	for i, tk := range src.Tasks {
		if tk.ID != i || tk.State != "RUNNING" || tk.WorkerID != "127.0.0.1:8083" {
			t.Fatalf("source flow task %d: %+v", i, tk)
		}
	}
	if *src.Records != 25 {
		t.Errorf("source flow copied %d records, the topic has 25", *src.Records)
	}
	if l := src.ReplicationLatencyMs; l == nil || *l < 0 || math.IsNaN(*l) || *l > 60000 {
		t.Errorf("source flow replication latency %v, want the metrics' value", l)
	}
	if beat.Class != mirrorHeartbeatClass || beat.SourceCluster != "east" || beat.TargetCluster != "west" ||
		beat.State == nil || *beat.State != "RUNNING" || len(beat.Tasks) != 1 || !slices.Equal(beat.Topics, []string{"heartbeats"}) {
		t.Errorf("heartbeat flow %s", cxJSON(beat))
	}
	if beat.ReplicationLatencyMs != nil || beat.Records != nil {
		t.Errorf("heartbeat flow %s has replication metrics (only source flows replicate)", cxJSON(beat))
	}
}

// TestFlowMetrics: a flow takes the samples of its alias pair and
// topics, its slowest partition's window average, the last value when
// the window is empty, and nulls when the process has no samples.
func TestFlowMetrics(t *testing.T) {
	nan := math.NaN()
	samples := []mirrorSample{
		{source: "a", target: "b", topic: "a.x", records: 10, latencyAvg: 5, latency: 4},
		{source: "a", target: "b", topic: "a.x", records: 7, latencyAvg: 9, latency: 20},
		{source: "a", target: "b", topic: "a.y", records: 100, latencyAvg: 50, latency: 50},
		{source: "c", target: "b", topic: "c.x", records: 1000, latencyAvg: 500, latency: 500},
		{source: "a", target: "d", topic: "a.z", records: 3, latencyAvg: nan, latency: 12},
	}
	lat, n := flowMetrics(samples, "a", "b", []string{"a.x"})
	if lat == nil || *lat != 9 || n == nil || *n != 17 {
		t.Errorf("a→b on a.x: %v %v, want 9 ms and 17", lat, n)
	}
	lat, n = flowMetrics(samples, "a", "b", nil) // topics unknown: the whole pair
	if lat == nil || *lat != 50 || *n != 117 {
		t.Errorf("a→b: %v %v, want 50 ms and 117", lat, n)
	}
	lat, n = flowMetrics(samples, "a", "d", nil)
	if lat == nil || *lat != 12 || *n != 3 {
		t.Errorf("a→d with an idle window: %v %v, want the last value 12 ms", lat, n)
	}
	if lat, n = flowMetrics(samples, "x", "y", nil); lat != nil || n != nil {
		t.Errorf("no samples: %v %v, want nulls", lat, n)
	}
}
