package admin

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// The history is a short in-memory record of the cluster's throughput
// and the consumer groups' lag, sampled every SampleInterval, for the
// console's charts: nothing is stored, a restart starts it again.

// maxHistoryGroups caps the groups whose lag is sampled: describing
// every group of a large cluster every few seconds would load its
// coordinators for a chart nobody can read.
const maxHistoryGroups = 50

// Counter families the broker exports (broker/metrics.go).
const (
	produceBytesMetric = "fjord_broker_produce_bytes_total"
	fetchBytesMetric   = "fjord_broker_fetch_bytes_total"
)

type topicPartition struct {
	Topic     string
	Partition int32
}

// historyPoint is one sample.
type historyPoint struct {
	Time       int64            `json:"time"`
	BytesIn    float64          `json:"bytes_in_per_sec"`
	BytesOut   float64          `json:"bytes_out_per_sec"`
	MessagesIn float64          `json:"messages_in_per_sec"`
	GroupLag   map[string]int64 `json:"group_lag"`
}

type historyPage struct {
	IntervalMs int64          `json:"interval_ms"`
	Points     []historyPoint `json:"points"`
}

// history keeps the last points; the previous reading of the counters
// the rates are computed from.
type history struct {
	mu     sync.Mutex
	max    int
	points []historyPoint

	// The previous sample's readings (valid once primed).
	primed   bool
	at       time.Time
	ends     map[topicPartition]int64
	bytesIn  float64
	bytesOut float64
}

// startHistory starts the sampler; it stops with the server.
func (s *Server) startHistory() {
	s.hist = &history{max: s.opts.HistoryPoints}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(s.opts.SampleInterval)
		defer t.Stop()
		s.sample() // the first reading only primes the rates
		for {
			select {
			case <-s.ctx.Done():
				return
			case <-t.C:
				s.sample()
			}
		}
	}()
}

// sample reads the end offsets, the byte counters and the groups' lag
// and appends a point with the rates since the previous reading. A
// sample the cluster does not answer is skipped (the chart shows a gap
// in time rather than a false zero).
func (s *Server) sample() {
	ctx, cancel := context.WithTimeout(s.ctx, min(s.opts.SampleInterval, requestTimeout))
	defer cancel()
	now := time.Now()
	ends, err := s.endOffsets(ctx)
	if err != nil {
		s.log.Debug("history sample: end offsets", "error", err)
		return
	}
	in, out := s.byteCounters()
	lags := s.groupLags(ctx)

	h := s.hist
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.primed {
		secs := now.Sub(h.at).Seconds()
		var msgs int64
		for tp, o := range ends {
			// A partition new since the last sample was produced to
			// since then (from 0); a deleted or truncated one adds
			// nothing.
			if d := o - h.ends[tp]; d > 0 {
				msgs += d
			}
		}
		p := historyPoint{
			Time:       now.UnixMilli(),
			MessagesIn: float64(msgs) / secs,
			BytesIn:    max(0, in-h.bytesIn) / secs, // counters restart at 0 with the broker
			BytesOut:   max(0, out-h.bytesOut) / secs,
			GroupLag:   lags,
		}
		h.points = append(h.points, p)
		if len(h.points) > h.max {
			h.points = append(h.points[:0], h.points[len(h.points)-h.max:]...)
		}
	}
	h.primed, h.at, h.ends, h.bytesIn, h.bytesOut = true, now, ends, in, out
}

// endOffsets are the end offsets of every non-internal partition.
func (s *Server) endOffsets(ctx context.Context) (map[topicPartition]int64, error) {
	// Fresh metadata: from the client's cache (up to 5 s old), a new
	// topic's first records would show a sample late, apart from the
	// bytes that brought them.
	mctx, mcancel := metadataCtx(ctx)
	defer mcancel()
	tds, err := s.adm.ListTopics(mctx)
	if err != nil {
		return nil, err
	}
	out := map[topicPartition]int64{}
	if len(tds) == 0 {
		return out, nil // kadm lists every topic, internal ones too, when given none
	}
	listed, err := s.adm.ListEndOffsets(ctx, tds.Names()...)
	if err != nil && len(listed) == 0 {
		return nil, err
	}
	listed.Each(func(o kadm.ListedOffset) {
		if o.Err == nil {
			out[topicPartition{Topic: o.Topic, Partition: o.Partition}] = o.Offset
		}
	})
	return out, nil
}

// byteCounters sums the broker's produce and fetch byte counters from
// the Gatherer (0 when there is none or it has no broker: a Connect
// worker's registry).
func (s *Server) byteCounters() (in, out float64) {
	if s.opts.Gatherer == nil {
		return 0, 0
	}
	mfs, err := s.opts.Gatherer.Gather()
	if err != nil {
		s.log.Debug("history sample: gather metrics", "error", err) // what was gathered is still used
	}
	for _, mf := range mfs {
		var sum float64
		for _, m := range mf.GetMetric() {
			if c := m.GetCounter(); c != nil {
				sum += c.GetValue()
			} else if u := m.GetUntyped(); u != nil {
				sum += u.GetValue()
			}
		}
		switch mf.GetName() {
		case produceBytesMetric:
			in += sum
		case fetchBytesMetric:
			out += sum
		}
	}
	return in, out
}

// groupLags is the total lag of the first maxHistoryGroups groups by
// name (groups whose lag is unknown are left out).
func (s *Server) groupLags(ctx context.Context) map[string]int64 {
	out := map[string]int64{}
	listed, err := s.adm.ListGroups(ctx)
	if err != nil && len(listed) == 0 {
		return out
	}
	names := listed.Groups()
	if len(names) > maxHistoryGroups {
		names = names[:maxHistoryGroups]
	}
	if len(names) == 0 {
		return out // kadm describes every group when given none
	}
	lags, err := s.adm.Lag(ctx, names...)
	if err != nil {
		return out
	}
	for g, l := range lags {
		if n := totalLag(l); n >= 0 {
			out[g] = n
		}
	}
	return out
}

// latest is the newest point.
func (h *history) latest() (historyPoint, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.points) == 0 {
		return historyPoint{}, false
	}
	return h.points[len(h.points)-1], true
}

func (s *Server) getHistory(w http.ResponseWriter, r *http.Request) {
	h := s.hist
	h.mu.Lock()
	page := historyPage{IntervalMs: s.opts.SampleInterval.Milliseconds(), Points: append([]historyPoint{}, h.points...)}
	h.mu.Unlock()
	writeJSON(w, http.StatusOK, page)
}
