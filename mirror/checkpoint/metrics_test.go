package checkpoint

import (
	"math"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

func TestLatencyWindow(t *testing.T) {
	m := NewMetrics()
	now := time.Unix(1000, 0)
	m.now = func() time.Time { return now }
	k := LatencyKey{Source: "a", Target: "b", Group: "g", Topic: "a.t", Partition: 1}
	m.RecordLatency(k, 100)
	now = now.Add(10 * time.Second)
	m.RecordLatency(k, 300)
	now = now.Add(25 * time.Second) // a second sample window
	m.RecordLatency(k, 200)
	l := m.Latencies()
	if len(l) != 1 || l[0].Last != 200 || l[0].Max != 300 || l[0].Min != 100 || l[0].Avg != 200 {
		t.Fatalf("latencies %+v, want last 200 max 300 min 100 avg 200", l)
	}
	// After two windows the first sample has expired.
	now = now.Add(30 * time.Second)
	l = m.Latencies()
	if l[0].Max != 200 || l[0].Min != 200 {
		t.Fatalf("after the first window expired: %+v", l[0])
	}
	// With no sample in the window, the stats are NaN (as Kafka's).
	now = now.Add(time.Minute)
	l = m.Latencies()
	if l[0].Last != 200 || !math.IsNaN(l[0].Max) || !math.IsNaN(l[0].Avg) {
		t.Fatalf("empty window: %+v", l[0])
	}
	m.Forget(k)
	if len(m.Latencies()) != 0 {
		t.Fatal("Forget kept the series")
	}
}

func TestLatencyCollector(t *testing.T) {
	m := NewMetrics()
	m.RecordLatency(LatencyKey{Source: "a", Target: "b", Group: "g", Topic: "a.t", Partition: 3}, 42)
	reg := prometheus.NewRegistry()
	reg.MustRegister(m)
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range fams {
		for _, mt := range f.Metric {
			labels := map[string]string{}
			for _, lp := range mt.Label {
				labels[lp.GetName()] = lp.GetValue()
			}
			if labels["group"] != "g" || labels["topic"] != "a.t" || labels["partition"] != "3" || labels["source"] != "a" || labels["target"] != "b" {
				t.Fatalf("%s labels %v", f.GetName(), labels)
			}
			got[f.GetName()] = mt.GetGauge().GetValue()
		}
	}
	for _, name := range []string{"fjord_mirror_checkpoint_latency_ms", "fjord_mirror_checkpoint_latency_ms_max",
		"fjord_mirror_checkpoint_latency_ms_min", "fjord_mirror_checkpoint_latency_ms_avg"} {
		if got[name] != 42 {
			t.Errorf("%s = %v, want 42", name, got[name])
		}
	}
}
