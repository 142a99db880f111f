package quota

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the quota metrics (Kafka's per-client Produce/Fetch
// byte-rate and throttle-time metrics, as counters). Series exist only
// for the clients a quota applies to, labelled with the quota metric
// tags (user, client_id; "" for a part the applying quota does not
// depend on), and are deleted when the client's sensor expires, so
// cardinality is bounded by the clients under a quota.
type Metrics struct {
	bytes, throttleMs, throttled *prometheus.CounterVec
}

// NewMetrics registers the quota metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	labels := []string{"quota_type", "user", "client_id"}
	m := &Metrics{
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "fjord", Subsystem: "quota", Name: "bytes_total",
			Help: "Bytes counted against a client quota, by quota type (produce: request bytes; fetch: response bytes sent) and the quota's user/client-id tags (kafka.server:type=Produce|Fetch,user=,client-id= byte-rate).",
		}, labels),
		throttleMs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "fjord", Subsystem: "quota", Name: "throttle_time_ms_total",
			Help: "Throttle time given to clients over their quota, in ms (kafka.server:type=Produce|Fetch,user=,client-id= throttle-time).",
		}, labels),
		throttled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "fjord", Subsystem: "quota", Name: "throttled_requests_total",
			Help: "Requests answered with a throttle time because the client was over its quota.",
		}, labels),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.bytes, m.throttleMs, m.throttled} {
			reg.Register(c) // a second broker in one process shares the first's series
		}
	}
	return m
}

func (m *Metrics) children(kind string, t Tags) (bytes, throttleMs, throttled prometheus.Counter) {
	return m.bytes.WithLabelValues(kind, t.User, t.ClientID),
		m.throttleMs.WithLabelValues(kind, t.User, t.ClientID),
		m.throttled.WithLabelValues(kind, t.User, t.ClientID)
}

func (m *Metrics) remove(kind string, t Tags) {
	m.bytes.DeleteLabelValues(kind, t.User, t.ClientID)
	m.throttleMs.DeleteLabelValues(kind, t.User, t.ClientID)
	m.throttled.DeleteLabelValues(kind, t.User, t.ClientID)
}
