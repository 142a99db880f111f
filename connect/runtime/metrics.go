package runtime

import (
	"errors"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the worker's Prometheus counters, labelled by connector and
// task (the counterparts of Kafka Connect's source-task-metrics,
// sink-task-metrics and task-error-metrics). Tasks add whole batches, so
// counting costs nothing per record.
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
}

// NewMetrics creates the counters and registers them with reg (nil: not
// registered, as in tests). Registering twice in one registry reuses the
// counters already there.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	labels := []string{"connector", "task"}
	vec := func(name, help string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "fjord", Subsystem: "connect", Name: name, Help: help}, labels)
		if reg != nil {
			if err := reg.Register(c); err != nil {
				var are prometheus.AlreadyRegisteredError
				if errors.As(err, &are) {
					return are.ExistingCollector.(*prometheus.CounterVec)
				}
			}
		}
		return c
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
	}
}

// taskMetrics are one task's counters.
type taskMetrics struct {
	sourcePolled, sourceWritten, sinkRead, sinkPut prometheus.Counter
	offsetCommits, offsetFailures                  prometheus.Counter
	failures, errors, skipped, retries             prometheus.Counter
	dlqProduced                                    prometheus.Counter
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
	}
}

// forget drops a removed task's series.
func (m *Metrics) forget(connector string, task int) {
	l := prometheus.Labels{"connector": connector, "task": strconv.Itoa(task)}
	for _, v := range []*prometheus.CounterVec{m.sourcePolled, m.sourceWritten, m.sinkRead, m.sinkPut, m.offsetCommits,
		m.offsetFailures, m.failures, m.errors, m.skipped, m.retries, m.dlqProduced} {
		v.Delete(l)
	}
}
