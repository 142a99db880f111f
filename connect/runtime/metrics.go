package runtime

import (
	"errors"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the worker's Prometheus metrics, labelled by connector and
// task (the counterparts of Kafka Connect's source-task-metrics,
// sink-task-metrics, connector-task-metrics and task-error-metrics).
// Tasks add whole batches, so counting costs nothing per record; the
// gauges are read from the tasks when scraped (taskGauges). A task's
// series are deleted when it stops, as Kafka removes a task's metrics.
type Metrics struct {
	sourcePolled   *prometheus.CounterVec
	sourceWritten  *prometheus.CounterVec
	sinkRead       *prometheus.CounterVec
	sinkPut        *prometheus.CounterVec
	offsetCommits  *prometheus.CounterVec
	offsetFailures *prometheus.CounterVec
	failures       *prometheus.CounterVec
	errors         *prometheus.CounterVec
	skipped        *prometheus.CounterVec
	retries        *prometheus.CounterVec
	dlqProduced    *prometheus.CounterVec
	batchSize      *prometheus.HistogramVec
	commitTime     *prometheus.HistogramVec
	gauges         *taskGauges
}

// NewMetrics creates the metrics and registers them with reg (nil: not
// registered, as in tests). Registering twice in one registry reuses the
// metrics already there.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	labels := []string{"connector", "task"}
	vec := func(name, help string) *prometheus.CounterVec {
		return register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "fjord", Subsystem: "connect", Name: name, Help: help}, labels))
	}
	return &Metrics{
		sourcePolled:   vec("source_records_polled_total", "Records returned by source tasks' poll (source-record-poll-total)."),
		sourceWritten:  vec("source_records_written_total", "Records a source task wrote to Kafka and the brokers acknowledged (source-record-write-total)."),
		sinkRead:       vec("sink_records_read_total", "Records sink tasks read from Kafka (sink-record-read-total)."),
		sinkPut:        vec("sink_records_sent_total", "Records given to sink tasks' put after transformations (sink-record-send-total)."),
		offsetCommits:  vec("offset_commits_total", "Successful offset commits (offset-commit-completion-total)."),
		offsetFailures: vec("offset_commit_failures_total", "Failed offset commits (offset-commit-skip-total / failures)."),
		failures:       vec("record_failures_total", "Failed operations, including those retried (total-record-failures)."),
		errors:         vec("record_errors_total", "Records that could not be processed after retries (total-record-errors)."),
		skipped:        vec("records_skipped_total", "Records skipped under errors.tolerance=all (total-records-skipped)."),
		retries:        vec("retries_total", "Retried operations (total-retries)."),
		dlqProduced:    vec("deadletterqueue_produce_requests_total", "Records written to the dead letter queue (deadletterqueue-produce-requests)."),
		batchSize: register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "fjord", Subsystem: "connect", Name: "batch_size",
			Help:    "Records per batch: kind=poll, what a source task's poll returned; kind=put, what a sink task's put was given (kafka.connect:type=connector-task-metrics batch-size-avg/batch-size-max).",
			Buckets: prometheus.ExponentialBuckets(1, 2, 15), // 1 .. 16384
		}, []string{"connector", "task", "kind"})),
		commitTime: register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "fjord", Subsystem: "connect", Name: "offset_commit_seconds",
			Help:    "Time a successful offset commit took: a source task writing its offsets, a sink task committing its consumer offsets (kafka.connect:type=connector-task-metrics offset-commit-avg-time-ms/offset-commit-max-time-ms).",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10), // 0.5 ms .. 131 s
		}, labels)),
		gauges: register(reg, newTaskGauges()),
	}
}

// register registers c with reg, or returns the collector reg already
// has in its place.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if reg == nil {
		return c
	}
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
	}
	return c
}

// taskMetrics are one task's metrics.
type taskMetrics struct {
	sourcePolled, sourceWritten, sinkRead, sinkPut prometheus.Counter
	offsetCommits, offsetFailures                  prometheus.Counter
	failures, errors, skipped, retries             prometheus.Counter
	dlqProduced                                    prometheus.Counter
	pollBatch, putBatch                            prometheus.Observer
	commitTime                                     prometheus.Observer
}

func (m *Metrics) forTask(connector string, task int) *taskMetrics {
	l := []string{connector, strconv.Itoa(task)}
	return &taskMetrics{
		sourcePolled: m.sourcePolled.WithLabelValues(l...), sourceWritten: m.sourceWritten.WithLabelValues(l...),
		sinkRead: m.sinkRead.WithLabelValues(l...), sinkPut: m.sinkPut.WithLabelValues(l...),
		offsetCommits: m.offsetCommits.WithLabelValues(l...), offsetFailures: m.offsetFailures.WithLabelValues(l...),
		failures: m.failures.WithLabelValues(l...), errors: m.errors.WithLabelValues(l...),
		skipped: m.skipped.WithLabelValues(l...), retries: m.retries.WithLabelValues(l...),
		dlqProduced: m.dlqProduced.WithLabelValues(l...),
		pollBatch:   m.batchSize.WithLabelValues(connector, l[1], "poll"),
		putBatch:    m.batchSize.WithLabelValues(connector, l[1], "put"),
		commitTime:  m.commitTime.WithLabelValues(l...),
	}
}

// forget drops a stopped task's series.
func (m *Metrics) forget(connector string, task int) {
	l := prometheus.Labels{"connector": connector, "task": strconv.Itoa(task)}
	for _, v := range []*prometheus.CounterVec{m.sourcePolled, m.sourceWritten, m.sinkRead, m.sinkPut, m.offsetCommits,
		m.offsetFailures, m.failures, m.errors, m.skipped, m.retries, m.dlqProduced} {
		v.Delete(l)
	}
	m.batchSize.DeletePartialMatch(l)
	m.commitTime.Delete(l)
	m.gauges.remove(taskKey{connector, task})
}

// taskKey names a task in taskGauges.
type taskKey struct {
	connector string
	task      int
}

var (
	descActiveCount = prometheus.NewDesc("fjord_connect_source_record_active_count",
		"Records a source task has polled and sent that the brokers have not acknowledged yet (kafka.connect:type=source-task-metrics source-record-active-count).",
		[]string{"connector", "task"}, nil)
	descSinkLag = prometheus.NewDesc("fjord_connect_sink_lag_records",
		"Records a sink task is behind: over its assigned partitions, the high watermark minus the next offset its consumer fetches, as of its last poll (the consumer's kafka.consumer:type=consumer-fetch-manager-metrics records-lag, summed).",
		[]string{"connector", "task"}, nil)
)

// taskGauges reports the running tasks' gauges when scraped, from
// functions the tasks register: nothing is kept up to date per record.
type taskGauges struct {
	mu     sync.Mutex
	active map[taskKey]func() int64
	lag    map[taskKey]func() int64
}

func newTaskGauges() *taskGauges {
	return &taskGauges{active: map[taskKey]func() int64{}, lag: map[taskKey]func() int64{}}
}

func (g *taskGauges) setActive(k taskKey, f func() int64) {
	g.mu.Lock()
	g.active[k] = f
	g.mu.Unlock()
}

func (g *taskGauges) setLag(k taskKey, f func() int64) {
	g.mu.Lock()
	g.lag[k] = f
	g.mu.Unlock()
}

func (g *taskGauges) remove(k taskKey) {
	g.mu.Lock()
	delete(g.active, k)
	delete(g.lag, k)
	g.mu.Unlock()
}

func (g *taskGauges) Describe(ch chan<- *prometheus.Desc) {
	ch <- descActiveCount
	ch <- descSinkLag
}

func (g *taskGauges) Collect(ch chan<- prometheus.Metric) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for k, f := range g.active {
		ch <- prometheus.MustNewConstMetric(descActiveCount, prometheus.GaugeValue, float64(f()), k.connector, strconv.Itoa(k.task))
	}
	for k, f := range g.lag {
		ch <- prometheus.MustNewConstMetric(descSinkLag, prometheus.GaugeValue, float64(f()), k.connector, strconv.Itoa(k.task))
	}
}
