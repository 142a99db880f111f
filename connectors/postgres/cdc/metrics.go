package cdc

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The connector's Prometheus metrics, read from the running tasks when
// scraped:
//
//   - fjord_cdc_slot_lag_bytes{connector,slot}: how far the slot's
//     confirmed position is behind the server's WAL: the WAL end the
//     server last reported on the replication stream (keepalives and
//     XLogData carry it) minus the LSN the task has confirmed (what the
//     runtime has durably stored and the task reports to the server).
//     It is the WAL the server keeps for this slot beyond what is
//     needed; a slot that is not consumed grows it without bound.
//     Reported once the task streams (not during the initial snapshot).
//   - fjord_cdc_milliseconds_behind_source{connector}: the time between
//     the commit of the last transaction streamed and the task receiving
//     it (Debezium's MilliSecondsBehindSource).
//
// The collector is one per process: RegisterMetrics adds it to a
// registry (a worker's /metrics), as the mirror connectors do.
var metrics = &collector{tasks: map[*Task]struct{}{}}

// RegisterMetrics registers the CDC metrics with reg; doing so again (or
// in several registries) is harmless.
func RegisterMetrics(reg prometheus.Registerer) error {
	if err := reg.Register(metrics); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			return err
		}
	}
	return nil
}

var (
	descSlotLag = prometheus.NewDesc("fjord_cdc_slot_lag_bytes",
		"WAL bytes between the server's WAL end and the LSN the CDC task has confirmed for its replication slot: what the slot holds back (Postgres: pg_current_wal_lsn() - confirmed_flush_lsn).",
		[]string{"connector", "slot"}, nil)
	descBehind = prometheus.NewDesc("fjord_cdc_milliseconds_behind_source",
		"Milliseconds between the commit of the last transaction streamed and the CDC task receiving it (Debezium's MilliSecondsBehindSource).",
		[]string{"connector"}, nil)
)

// taskMetrics is what a task records for the collector.
type taskMetrics struct {
	connector string
	// walEnd is the server's WAL end from the replication stream; 0
	// until the task streams.
	walEnd atomic.Uint64
	// behindMs is MilliSecondsBehindSource of the last transaction; -1
	// before the first.
	behindMs atomic.Int64
}

// sawWALEnd records a WAL end the server reported.
func (m *taskMetrics) sawWALEnd(lsn uint64) {
	if lsn > m.walEnd.Load() {
		m.walEnd.Store(lsn)
	}
}

// sawCommit records a transaction's commit time as it is received.
func (m *taskMetrics) sawCommit(commit time.Time) {
	m.behindMs.Store(max(time.Since(commit).Milliseconds(), 0))
}

type collector struct {
	mu    sync.Mutex
	tasks map[*Task]struct{}
}

func (c *collector) add(t *Task) {
	c.mu.Lock()
	c.tasks[t] = struct{}{}
	c.mu.Unlock()
}

func (c *collector) remove(t *Task) {
	c.mu.Lock()
	delete(c.tasks, t)
	c.mu.Unlock()
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descSlotLag
	ch <- descBehind
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	// One series per connector: a task being replaced may briefly be
	// here beside its successor.
	seen := map[string]bool{}
	for t := range c.tasks {
		m := &t.metrics
		if seen[m.connector] {
			continue
		}
		seen[m.connector] = true
		if end := m.walEnd.Load(); end > 0 {
			lag := float64(0)
			if confirmed := t.confirmed.Load(); end > confirmed {
				lag = float64(end - confirmed)
			}
			ch <- prometheus.MustNewConstMetric(descSlotLag, prometheus.GaugeValue, lag, m.connector, t.s.slot)
		}
		if ms := m.behindMs.Load(); ms >= 0 {
			ch <- prometheus.MustNewConstMetric(descBehind, prometheus.GaugeValue, float64(ms), m.connector)
		}
	}
}
