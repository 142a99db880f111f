package quota

import "github.com/prometheus/client_golang/prometheus"

// sensor is one client's rate: Kafka's Rate over a SampledStat of
// WindowedSum samples, with the same sample rotation, purging and window
// size rules, so throttle times match Kafka's.
type sensor struct {
	samples int   // quota.window.num
	winMs   int64 // quota.window.size.seconds in ms
	buf     [MaxSamples + 1]sample
	n       int // samples in use (up to samples+1)
	current int
	lastUse int64

	bytes, throttleMs, throttled prometheus.Counter // nil without metrics
}

// MaxSamples bounds quota.window.num so a sensor is one allocation;
// larger settings are treated as this many.
const MaxSamples = 64

type sample struct {
	value       float64
	eventCount  int64
	startMs     int64
	lastEventMs int64
}

func (s *sample) reset(nowMs int64) {
	*s = sample{startMs: nowMs, lastEventMs: nowMs}
}

// cur is SampledStat.current.
func (s *sensor) cur(nowMs int64) *sample {
	if s.n == 0 {
		s.buf[0].reset(nowMs)
		s.n = 1
	}
	return &s.buf[s.current]
}

// record is SampledStat.record: a sample older than the window is
// complete and the next one (kept: samples+1, Kafka's "overlapping
// sample" placeholder) starts at now.
func (s *sensor) record(v float64, nowMs int64) {
	smp := s.cur(nowMs)
	if nowMs-smp.startMs >= s.winMs {
		s.current = (s.current + 1) % (s.samples + 1)
		if s.current >= s.n {
			s.n++
		}
		smp = &s.buf[s.current]
		smp.reset(nowMs)
	}
	smp.value += v
	smp.eventCount++
	smp.lastEventMs = nowMs
}

// purge is SampledStat.purgeObsoleteSamples: samples with no event in
// samples*window are reset to now.
func (s *sensor) purge(nowMs int64) {
	expire := int64(s.samples) * s.winMs
	for i := 0; i < s.n; i++ {
		if nowMs-s.buf[i].lastEventMs >= expire {
			s.buf[i].reset(nowMs)
		}
	}
}

// windowSize is Rate.windowSize in ms: the time since the oldest
// sample started, counted as at least samples-1 full windows.
func (s *sensor) windowSize(nowMs int64) int64 {
	s.purge(nowMs)
	s.cur(nowMs)
	oldest := s.buf[0].startMs
	for i := 1; i < s.n; i++ {
		oldest = min(oldest, s.buf[i].startMs)
	}
	elapsed := nowMs - oldest
	if full := elapsed / s.winMs; full < int64(s.samples-1) {
		elapsed += (int64(s.samples-1) - full) * s.winMs
	}
	return max(elapsed, 1)
}

// rate is Rate.measure in units per second.
func (s *sensor) rate(nowMs int64) float64 {
	s.purge(nowMs)
	var sum float64
	for i := 0; i < s.n; i++ {
		sum += s.buf[i].value
	}
	return sum / (float64(s.windowSize(nowMs)) / 1000)
}

// sent counts the metrics of one recorded value.
func (s *sensor) sent(v float64, undone bool, throttleMs int64) {
	if s.bytes == nil {
		return
	}
	if !undone {
		s.bytes.Add(v)
	}
	if throttleMs > 0 {
		s.throttleMs.Add(float64(throttleMs))
		s.throttled.Inc()
	}
}
