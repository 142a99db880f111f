package source

import (
	"errors"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are MM2's MirrorSourceMetrics per replicated partition,
// labelled as MM2 tags them (source, target, topic, partition; topic is
// the remote topic). Counts are cumulative counters; rates, min, max and
// avg cover MM2's window (two samples of 30 s, as Kafka's Metrics
// defaults), computed when scraped.
//
// The collector is one per process: RegisterMetrics adds it to a
// registry (a worker's /metrics), as connect/runtime.NewMetrics does for
// the worker's own counters.
var metrics = newCollector()

// RegisterMetrics registers the mirror source metrics with reg; doing so
// again (or in several registries) is harmless.
func RegisterMetrics(reg prometheus.Registerer) error {
	if err := reg.Register(metrics); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			return err
		}
	}
	return nil
}

const (
	statWindowMs = int64(30 * time.Second / time.Millisecond)
	statSamples  = 2
)

var metricLabels = []string{"source", "target", "topic", "partition"}

func desc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc("fjord_mirror_source_"+name, help, metricLabels, nil)
}

var (
	descRecordCount = desc("record_count", "Number of source records replicated to the target cluster (MM2 record-count).")
	descRecordRate  = desc("record_rate", "Average number of source records replicated to the target cluster per second (MM2 record-rate).")
	descByteCount   = desc("byte_count", "Number of bytes replicated to the target cluster (MM2 byte-count).")
	descByteRate    = desc("byte_rate", "Average number of bytes replicated per second (MM2 byte-rate).")
	descAge         = desc("record_age_ms", "The age of incoming source records when replicated to the target cluster (MM2 record-age-ms).")
	descAgeMax      = desc("record_age_ms_max", "The max age of incoming source records when replicated to the target cluster (MM2 record-age-ms-max).")
	descAgeMin      = desc("record_age_ms_min", "The min age of incoming source records when replicated to the target cluster (MM2 record-age-ms-min).")
	descAgeAvg      = desc("record_age_ms_avg", "The average age of incoming source records when replicated to the target cluster (MM2 record-age-ms-avg).")
	descLatency     = desc("replication_latency_ms", "Time it takes records to replicate from source to target cluster (MM2 replication-latency-ms).")
	descLatencyMax  = desc("replication_latency_ms_max", "Max time it takes records to replicate from source to target cluster (MM2 replication-latency-ms-max).")
	descLatencyMin  = desc("replication_latency_ms_min", "Min time it takes records to replicate from source to target cluster (MM2 replication-latency-ms-min).")
	descLatencyAvg  = desc("replication_latency_ms_avg", "Average time it takes records to replicate from source to target cluster (MM2 replication-latency-ms-avg).")
	descLoopSkipped = desc("provenance_skipped_count", "Records not replicated because their provenance header shows they came from the target cluster (identity naming, active-active).")
	allDescs        = []*prometheus.Desc{descRecordCount, descRecordRate, descByteCount, descByteRate, descAge, descAgeMax, descAgeMin, descAgeAvg, descLatency, descLatencyMax, descLatencyMin, descLatencyAvg, descLoopSkipped}
)

type metricKey struct {
	source, target, topic string
	partition             int32
}

// collector holds every task's partition metrics.
type collector struct {
	mu    sync.Mutex
	parts map[metricKey]*partitionMetrics
}

func newCollector() *collector { return &collector{parts: map[metricKey]*partitionMetrics{}} }

// acquire returns the metrics of a remote partition for a task; release
// drops them once no task has them (a task that stops takes its series
// with it, as MM2's closes its Metrics).
func (c *collector) acquire(k metricKey) *partitionMetrics {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.parts[k]
	if m == nil {
		m = &partitionMetrics{}
		c.parts[k] = m
	}
	m.refs++
	return m
}

func (c *collector) release(k metricKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m := c.parts[k]; m != nil {
		if m.refs--; m.refs <= 0 {
			delete(c.parts, k)
		}
	}
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	keys := make([]metricKey, 0, len(c.parts))
	parts := make([]*partitionMetrics, 0, len(c.parts))
	for k, m := range c.parts {
		keys = append(keys, k)
		parts = append(parts, m)
	}
	c.mu.Unlock()
	now := time.Now().UnixMilli()
	for i, m := range parts {
		k := keys[i]
		l := []string{k.source, k.target, k.topic, strconv.Itoa(int(k.partition))}
		gauge := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, l...)
		}
		ch <- prometheus.MustNewConstMetric(descRecordCount, prometheus.CounterValue, float64(m.records.Load()), l...)
		ch <- prometheus.MustNewConstMetric(descByteCount, prometheus.CounterValue, float64(m.bytes.Load()), l...)
		ch <- prometheus.MustNewConstMetric(descLoopSkipped, prometheus.CounterValue, float64(m.skipped.Load()), l...)
		m.mu.Lock()
		recordRate, byteRate := m.recordRate.rate(now), m.byteRate.rate(now)
		age, latency := m.age.snapshot(now), m.latency.snapshot(now)
		m.mu.Unlock()
		gauge(descRecordRate, recordRate)
		gauge(descByteRate, byteRate)
		gauge(descAge, age.last)
		gauge(descAgeMax, age.max)
		gauge(descAgeMin, age.min)
		gauge(descAgeAvg, age.avg)
		gauge(descLatency, latency.last)
		gauge(descLatencyMax, latency.max)
		gauge(descLatencyMin, latency.min)
		gauge(descLatencyAvg, latency.avg)
	}
}

// partitionMetrics are one remote partition's sensors.
type partitionMetrics struct {
	refs int // under collector.mu

	records, bytes, skipped atomic.Int64

	mu                   sync.Mutex
	recordRate, byteRate window
	age, latency         window
}

// recordPolled notes a poll's records of the partition: their bytes and
// ages (MM2 records both as records are polled).
func (m *partitionMetrics) recordPolled(bytes int64, ages batchStats, now int64) {
	m.bytes.Add(bytes)
	m.mu.Lock()
	m.byteRate.add(ages.count, float64(bytes), 0, 0, 0, now)
	m.age.add(ages.count, ages.sum, ages.min, ages.max, ages.last, now)
	m.mu.Unlock()
}

// recordReplicated notes a record the target acknowledged, latencyMs
// after its timestamp.
func (m *partitionMetrics) recordReplicated(latencyMs float64, now int64) {
	m.records.Add(1)
	m.mu.Lock()
	m.recordRate.add(1, 1, 0, 0, 0, now)
	m.latency.add(1, latencyMs, latencyMs, latencyMs, latencyMs, now)
	m.mu.Unlock()
}

// batchStats summarises values recorded together.
type batchStats struct {
	count         int64
	sum, min, max float64
	last          float64
}

func (b *batchStats) add(v float64) {
	if b.count == 0 || v < b.min {
		b.min = v
	}
	if b.count == 0 || v > b.max {
		b.max = v
	}
	b.count++
	b.sum += v
	b.last = v
}

// window is Kafka's SampledStat with statSamples samples of
// statWindowMs: values older than the whole window no longer count.
type window struct {
	samples [statSamples]sample
	cur     int
	last    float64
	any     bool
}

type sample struct {
	start    int64
	count    int64
	sum      float64
	min, max float64
}

func (w *window) add(count int64, sum, mn, mx, last float64, now int64) {
	if count == 0 {
		return
	}
	s := &w.samples[w.cur]
	if s.count == 0 && s.start == 0 {
		s.start = now
	} else if now-s.start >= statWindowMs {
		w.cur = (w.cur + 1) % statSamples
		s = &w.samples[w.cur]
		*s = sample{start: now}
	}
	if s.count == 0 || mn < s.min {
		s.min = mn
	}
	if s.count == 0 || mx > s.max {
		s.max = mx
	}
	s.count += count
	s.sum += sum
	w.last, w.any = last, true
}

type windowSnapshot struct{ last, min, max, avg float64 }

// snapshot is the window's Value, Min, Max and Avg; NaN where nothing
// was recorded in the window (Kafka reports NaN or infinities there).
func (w *window) snapshot(now int64) windowSnapshot {
	out := windowSnapshot{last: math.NaN(), min: math.NaN(), max: math.NaN(), avg: math.NaN()}
	if w.any {
		out.last = w.last
	}
	var count int64
	var sum float64
	for i := range w.samples {
		s := &w.samples[i]
		if s.count == 0 || now-s.start >= statSamples*statWindowMs {
			continue
		}
		if count == 0 || s.min < out.min {
			out.min = s.min
		}
		if count == 0 || s.max > out.max {
			out.max = s.max
		}
		count += s.count
		sum += s.sum
	}
	if count > 0 {
		out.avg = sum / float64(count)
	}
	return out
}

// rate is Kafka's Rate over the window, per second: the sum recorded in
// live samples over the time they cover, counted as at least all but
// one full sample so that a young window does not overstate the rate.
func (w *window) rate(now int64) float64 {
	var sum float64
	oldest := now
	for i := range w.samples {
		s := &w.samples[i]
		if s.count == 0 || now-s.start >= statSamples*statWindowMs {
			continue
		}
		sum += s.sum
		oldest = min(oldest, s.start)
	}
	elapsed := now - oldest
	if full := elapsed / statWindowMs; full < statSamples-1 {
		elapsed += (statSamples - 1 - full) * statWindowMs
	}
	return sum / (float64(elapsed) / 1000)
}
