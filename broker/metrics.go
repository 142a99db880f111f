package broker

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/protocol"
)

// Metrics are the broker's Prometheus metrics. Per-API children are
// resolved once at start and per-topic children once per partition
// (partition.tm), so the request paths do no label lookups.
//
// What is computed from state (partition counts, under-replicated and
// offline partitions, log sizes, group states) is read at scrape time by
// stateCollector (metrics_state.go) and costs the request paths nothing.
type Metrics struct {
	requests      [128]prometheus.Counter
	latency       [128]prometheus.Observer
	connections   prometheus.Gauge
	bytesIn       prometheus.Counter
	bytesOut      prometheus.Counter
	produceErrors prometheus.Counter

	// Per topic (Kafka's BrokerTopicMetrics with a topic tag).
	topicBytesIn    *prometheus.CounterVec
	topicBytesOut   *prometheus.CounterVec
	topicMessagesIn *prometheus.CounterVec
	topicsMu        sync.Mutex
	topics          map[string]*topicMetrics

	isrShrinks, isrExpands          prometheus.Counter
	rebalances, completedRebalances prometheus.Counter
}

// topicMetrics are one topic's counters, shared by its partitions here.
type topicMetrics struct {
	bytesIn, bytesOut, messagesIn prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{topics: map[string]*topicMetrics{}}
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "fjord", Subsystem: "broker", Name: "requests_total",
		Help: "Kafka requests handled, by API (kafka.network:type=RequestMetrics,name=RequestsPerSec,request=<api>).",
	}, []string{"api"})
	latency := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "fjord", Subsystem: "broker", Name: "request_duration_seconds",
		Help:    "Time from reading a request to handing its response to the writer, by API; fetch includes long-poll waits (kafka.network:type=RequestMetrics,name=TotalTimeMs,request=<api>).",
		Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10),
	}, []string{"api"})
	m.connections = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: "fjord", Subsystem: "broker", Name: "connections",
		Help: "Open client connections (kafka.server:type=socket-server-metrics,name=connection-count).",
	})
	m.bytesIn = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "fjord", Subsystem: "broker", Name: "produce_bytes_total",
		Help: "Record batch bytes received by produce requests, rejected ones included.",
	})
	m.bytesOut = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "fjord", Subsystem: "broker", Name: "fetch_bytes_total",
		Help: "Record batch bytes returned by fetch requests, replica fetches included.",
	})
	m.produceErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "fjord", Subsystem: "broker", Name: "produce_errors_total",
		Help: "Produce partitions answered with an error (kafka.server:type=BrokerTopicMetrics,name=FailedProduceRequestsPerSec).",
	})
	topicLabel := []string{"topic"}
	m.topicBytesIn = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "fjord", Subsystem: "broker", Name: "topic_bytes_in_total",
		Help: "Bytes of record batches appended to the topic's partitions led here by produce requests (kafka.server:type=BrokerTopicMetrics,name=BytesInPerSec,topic=<topic>).",
	}, topicLabel)
	m.topicBytesOut = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "fjord", Subsystem: "broker", Name: "topic_bytes_out_total",
		Help: "Bytes of record batches sent to consumers from the topic; replica fetches are not counted (kafka.server:type=BrokerTopicMetrics,name=BytesOutPerSec,topic=<topic>).",
	}, topicLabel)
	m.topicMessagesIn = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "fjord", Subsystem: "broker", Name: "topic_messages_in_total",
		Help: "Records appended to the topic's partitions led here by produce requests (kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec,topic=<topic>).",
	}, topicLabel)
	m.isrShrinks = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "fjord", Subsystem: "broker", Name: "isr_shrinks_total",
		Help: "ISR shrinks of partitions led here, whether this leader or the controller (a follower fenced or shut down) removed the replicas (kafka.server:type=ReplicaManager,name=IsrShrinksPerSec).",
	})
	m.isrExpands = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "fjord", Subsystem: "broker", Name: "isr_expands_total",
		Help: "ISR expansions of partitions led here: a follower caught up and rejoined (kafka.server:type=ReplicaManager,name=IsrExpandsPerSec).",
	})
	// Group counters carry no group label: a group id per series would
	// grow without bound with short-lived consumers.
	m.rebalances = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "fjord", Subsystem: "group", Name: "rebalances_total",
		Help: "Rebalances started by the groups this broker coordinates: a group entered PreparingRebalance (kafka.server:type=group-coordinator-metrics,name=classic-group-rebalance-count).",
	})
	m.completedRebalances = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "fjord", Subsystem: "group", Name: "completed_rebalances_total",
		Help: "Rebalances completed by the groups this broker coordinates: the leader's assignment was stored and the group is Stable (kafka.server:type=group-coordinator-metrics,name=group-completed-rebalance-count).",
	})
	for k := range apiVersions {
		name := kmsg.NameForKey(k)
		m.requests[k] = requests.WithLabelValues(name)
		m.latency[k] = latency.WithLabelValues(name)
	}
	for _, c := range []prometheus.Collector{requests, latency, m.connections, m.bytesIn, m.bytesOut, m.produceErrors,
		m.topicBytesIn, m.topicBytesOut, m.topicMessagesIn, m.isrShrinks, m.isrExpands, m.rebalances, m.completedRebalances} {
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

// topic returns a topic's counters, creating its series on first use. It
// runs when a partition is created here (reconcile), never per request.
func (m *Metrics) topic(name string) *topicMetrics {
	m.topicsMu.Lock()
	defer m.topicsMu.Unlock()
	tm := m.topics[name]
	if tm == nil {
		tm = &topicMetrics{
			bytesIn:    m.topicBytesIn.WithLabelValues(name),
			bytesOut:   m.topicBytesOut.WithLabelValues(name),
			messagesIn: m.topicMessagesIn.WithLabelValues(name),
		}
		m.topics[name] = tm
	}
	return tm
}

// dropTopic deletes the series of a topic no partition of which is
// hosted here any more (deleted, or moved away), as Kafka removes a
// topic's BrokerTopicMetrics: a deleted topic does not linger in /metrics.
func (m *Metrics) dropTopic(name string) {
	m.topicsMu.Lock()
	defer m.topicsMu.Unlock()
	if _, ok := m.topics[name]; !ok {
		return
	}
	delete(m.topics, name)
	m.topicBytesIn.DeleteLabelValues(name)
	m.topicBytesOut.DeleteLabelValues(name)
	m.topicMessagesIn.DeleteLabelValues(name)
}

// isrChanged counts a committed ISR change of a partition led here.
func (m *Metrics) isrChanged(shrunk, expanded bool) {
	if shrunk {
		m.isrShrinks.Inc()
	}
	if expanded {
		m.isrExpands.Inc()
	}
}

// groupRebalance counts a group's rebalance starting (completed false)
// or completing.
func (m *Metrics) groupRebalance(completed bool) {
	if completed {
		m.completedRebalances.Inc()
	} else {
		m.rebalances.Inc()
	}
}

// dropTopicMetrics deletes the per-topic series of topics that had
// partitions here in old and have none in next.
func (s *Server) dropTopicMetrics(old, next *partitionTable) {
	if old == nil {
		return
	}
	gone := map[string]bool{}
	for k := range old.byKey {
		gone[k.topic] = true
	}
	for k := range next.byKey {
		delete(gone, k.topic)
	}
	for topic := range gone {
		s.metrics.dropTopic(topic)
	}
}
