package checkpoint

import (
	"math"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// MM2's MirrorCheckpointMetrics records checkpoint-latency-ms per
// (source, target, group, topic, partition): the last value, and the max,
// min and avg over Kafka's default metrics window (2 samples of 30 s).
const (
	metricsSampleWindow = 30 * time.Second
	metricsSamples      = 2
)

// LatencyKey names one checkpoint-latency series. Topic is the remote
// (target-side) topic, as in MM2's tags.
type LatencyKey struct {
	Source, Target, Group, Topic string
	Partition                    int32
}

// Latency is one series' current values in milliseconds; Max, Min and
// Avg are NaN when the window holds no sample (Kafka's NaN).
type Latency struct {
	LatencyKey
	Last, Max, Min, Avg float64
}

type latencySample struct {
	start    time.Time
	count    int
	sum      float64
	min, max float64
}

type latencySeries struct {
	last    float64
	samples []latencySample
}

func (s *latencySeries) record(v float64, now time.Time) {
	s.last = v
	n := len(s.samples)
	if n == 0 || now.Sub(s.samples[n-1].start) >= metricsSampleWindow {
		s.samples = append(s.samples, latencySample{start: now, min: v, max: v})
		if len(s.samples) > metricsSamples {
			s.samples = s.samples[1:]
		}
		n = len(s.samples)
	}
	cur := &s.samples[n-1]
	cur.count++
	cur.sum += v
	cur.min = math.Min(cur.min, v)
	cur.max = math.Max(cur.max, v)
}

// stats combines the samples still inside the window.
func (s *latencySeries) stats(now time.Time) (maxV, minV, avg float64) {
	maxV, minV = math.Inf(-1), math.Inf(1)
	count, sum := 0, 0.0
	for _, smp := range s.samples {
		if now.Sub(smp.start) >= metricsSamples*metricsSampleWindow {
			continue
		}
		count += smp.count
		sum += smp.sum
		maxV = math.Max(maxV, smp.max)
		minV = math.Min(minV, smp.min)
	}
	if count == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	return maxV, minV, sum / float64(count)
}

// Metrics holds checkpoint latencies; it is a prometheus.Collector. The
// checkpoint tasks of a process record into DefaultMetrics.
type Metrics struct {
	mu     sync.Mutex
	series map[LatencyKey]*latencySeries
	now    func() time.Time
}

// DefaultMetrics is where checkpoint tasks record: register it with the
// registry behind /metrics (the `fjord mirror` driver does).
var DefaultMetrics = NewMetrics()

// NewMetrics returns an empty set.
func NewMetrics() *Metrics {
	return &Metrics{series: map[LatencyKey]*latencySeries{}, now: time.Now}
}

// RecordLatency records that a checkpoint reached the target ms after
// it was created.
func (m *Metrics) RecordLatency(k LatencyKey, ms int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.series[k]
	if s == nil {
		s = &latencySeries{}
		m.series[k] = s
	}
	s.record(float64(ms), m.now())
}

// Forget drops series (a stopped task's).
func (m *Metrics) Forget(keys ...LatencyKey) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, k := range keys {
		delete(m.series, k)
	}
}

// Latencies returns every series, sorted.
func (m *Metrics) Latencies() []Latency {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	out := make([]Latency, 0, len(m.series))
	for k, s := range m.series {
		l := Latency{LatencyKey: k, Last: s.last}
		l.Max, l.Min, l.Avg = s.stats(now)
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].LatencyKey, out[j].LatencyKey
		if a.Source != b.Source {
			return a.Source < b.Source
		}
		if a.Target != b.Target {
			return a.Target < b.Target
		}
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		return a.Partition < b.Partition
	})
	return out
}

var latencyLabels = []string{"source", "target", "group", "topic", "partition"}

func latencyDesc(suffix, help string) *prometheus.Desc {
	return prometheus.NewDesc("fjord_mirror_checkpoint_latency_ms"+suffix, help, latencyLabels, nil)
}

var (
	descLatency    = latencyDesc("", "Time it takes consumer group offsets to replicate from source to target cluster (MM2's checkpoint-latency-ms).")
	descLatencyMax = latencyDesc("_max", "Max time it takes consumer group offsets to replicate from source to target cluster.")
	descLatencyMin = latencyDesc("_min", "Min time it takes consumer group offsets to replicate from source to target cluster.")
	descLatencyAvg = latencyDesc("_avg", "Average time it takes consumer group offsets to replicate from source to target cluster.")
)

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- descLatency
	ch <- descLatencyMax
	ch <- descLatencyMin
	ch <- descLatencyAvg
}

// Collect implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	for _, l := range m.Latencies() {
		lv := []string{l.Source, l.Target, l.Group, l.Topic, strconv.Itoa(int(l.Partition))}
		ch <- prometheus.MustNewConstMetric(descLatency, prometheus.GaugeValue, l.Last, lv...)
		ch <- prometheus.MustNewConstMetric(descLatencyMax, prometheus.GaugeValue, l.Max, lv...)
		ch <- prometheus.MustNewConstMetric(descLatencyMin, prometheus.GaugeValue, l.Min, lv...)
		ch <- prometheus.MustNewConstMetric(descLatencyAvg, prometheus.GaugeValue, l.Avg, lv...)
	}
}
