package broker

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/protocol"
	"time"
)

// Metrics are the broker's Prometheus metrics. Per-API children are
// resolved once at start so the request path does no label lookups.
type Metrics struct {
	requests      [128]prometheus.Counter
	latency       [128]prometheus.Observer
	connections   prometheus.Gauge
	bytesIn       prometheus.Counter
	bytesOut      prometheus.Counter
	produceErrors prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{}
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "fjord", Subsystem: "broker", Name: "requests_total",
		Help: "Kafka requests handled, by API.",
	}, []string{"api"})
	latency := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "fjord", Subsystem: "broker", Name: "request_duration_seconds",
		Help:    "Time from reading a request to handing its response to the writer, by API (fetch includes long-poll waits).",
		Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10),
	}, []string{"api"})
	m.connections = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: "fjord", Subsystem: "broker", Name: "connections",
		Help: "Open client connections.",
	})
	m.bytesIn = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "fjord", Subsystem: "broker", Name: "produce_bytes_total",
		Help: "Record batch bytes received by produce requests.",
	})
	m.bytesOut = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "fjord", Subsystem: "broker", Name: "fetch_bytes_total",
		Help: "Record batch bytes returned by fetch requests.",
	})
	m.produceErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "fjord", Subsystem: "broker", Name: "produce_errors_total",
		Help: "Produce partitions answered with an error.",
	})
	for k := range apiVersions {
		name := kmsg.NameForKey(k)
		m.requests[k] = requests.WithLabelValues(name)
		m.latency[k] = latency.WithLabelValues(name)
	}
	for _, c := range []prometheus.Collector{requests, latency, m.connections, m.bytesIn, m.bytesOut, m.produceErrors} {
		reg.Register(c)
	}
	return m
}

func (m *Metrics) observeRequest(req *protocol.Request, elapsed time.Duration) {
	if k := req.Key; k >= 0 && int(k) < len(m.requests) && m.requests[k] != nil {
		m.requests[k].Inc()
		m.latency[k].Observe(elapsed.Seconds())
	}
}

func (m *Metrics) connection(delta int) { m.connections.Add(float64(delta)) }

func (m *Metrics) produced(topic string, bytes int, code int16) {
	m.bytesIn.Add(float64(bytes))
	if code != 0 {
		m.produceErrors.Inc()
	}
}

func (m *Metrics) fetched(bytes int) { m.bytesOut.Add(float64(bytes)) }
