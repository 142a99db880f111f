package source

import (
	"math"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

func TestWindowStats(t *testing.T) {
	var w window
	snap := w.snapshot(1000)
	if !math.IsNaN(snap.avg) || !math.IsNaN(snap.max) {
		t.Errorf("empty window: %+v", snap)
	}
	var b batchStats
	for _, v := range []float64{5, 1, 9} {
		b.add(v)
	}
	w.add(b.count, b.sum, b.min, b.max, b.last, 1000)
	w.add(1, 3, 3, 3, 3, 2000)
	snap = w.snapshot(2000)
	if snap.min != 1 || snap.max != 9 || snap.avg != 4.5 || snap.last != 3 {
		t.Errorf("snapshot %+v", snap)
	}
	// A second sample starts after 30 s; the first expires after 60 s.
	w.add(1, 100, 100, 100, 100, 1000+statWindowMs)
	if snap = w.snapshot(1000 + statWindowMs); snap.max != 100 || snap.min != 1 {
		t.Errorf("two samples %+v", snap)
	}
	if snap = w.snapshot(1000 + 2*statWindowMs); snap.min != 100 || snap.avg != 100 {
		t.Errorf("after the first sample expired %+v", snap)
	}
	// Rate: a young window counts as at least one full sample more
	// than it has (Kafka's Rate.windowSize): 300 in 1 s is 300 / 31 s.
	var r window
	r.add(3, 300, 0, 0, 0, 0)
	if got := r.rate(1000); got != 300.0/31 {
		t.Errorf("rate %v, want 300 / 31 s", got)
	}
	if got := r.rate(1000 + statWindowMs); got != 300.0/31 {
		t.Errorf("rate after a full sample %v, want 300 / 31 s", got)
	}
}

func gather(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) *dto.Metric {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if v, ok := labels[lp.GetName()]; ok && v != lp.GetValue() {
					continue next
				}
			}
			return m
		}
	}
	return nil
}

func TestMetricsCollector(t *testing.T) {
	reg := prometheus.NewRegistry()
	if err := RegisterMetrics(reg); err != nil {
		t.Fatal(err)
	}
	if err := RegisterMetrics(reg); err != nil {
		t.Fatalf("registering twice: %v", err)
	}
	k := metricKey{source: "ma", target: "mb", topic: "ma.t", partition: 1}
	m := metrics.acquire(k)
	m2 := metrics.acquire(k) // a second task on the same partition, briefly
	if m != m2 {
		t.Fatal("two sensors for one partition")
	}
	var ages batchStats
	ages.add(10)
	ages.add(20)
	now := time.Now().UnixMilli()
	m.recordPolled(64, ages, now)
	m.recordReplicated(7, now)
	labels := map[string]string{"source": "ma", "target": "mb", "topic": "ma.t", "partition": "1"}
	if got := gather(t, reg, "fjord_mirror_source_record_count", labels); got == nil || got.GetCounter().GetValue() != 1 {
		t.Errorf("record_count %v", got)
	}
	if got := gather(t, reg, "fjord_mirror_source_byte_count", labels); got == nil || got.GetCounter().GetValue() != 64 {
		t.Errorf("byte_count %v", got)
	}
	if got := gather(t, reg, "fjord_mirror_source_record_age_ms_max", labels); got == nil || got.GetGauge().GetValue() != 20 {
		t.Errorf("record_age_ms_max %v", got)
	}
	if got := gather(t, reg, "fjord_mirror_source_replication_latency_ms_avg", labels); got == nil || got.GetGauge().GetValue() != 7 {
		t.Errorf("replication_latency_ms_avg %v", got)
	}
	metrics.release(k)
	if gather(t, reg, "fjord_mirror_source_record_count", labels) == nil {
		t.Error("series dropped while a task still has it")
	}
	metrics.release(k)
	if gather(t, reg, "fjord_mirror_source_record_count", labels) != nil {
		t.Error("series kept after its tasks stopped")
	}
}
