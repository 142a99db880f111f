package replica

import (
	"sync"
	"time"
)

// Throttle is a byte-rate limit for replication traffic:
// follower.replication.throttled.rate (in the fetcher) or
// leader.replication.throttled.rate (in the leader's fetch handler), for
// the partitions listed in *.replication.throttled.replicas. It is a
// token bucket that may go into debt: traffic is recorded after it
// happened (a fetch's size is known only from its answer), and throttled
// partitions are left out of requests while the bucket is empty, so the
// average rate converges to the limit whatever the fetch sizes. As in
// Kafka, replicas that are in sync are never throttled; the caller checks.
//
// Safe for concurrent use; the rate may change at any time (dynamic
// broker config).
type Throttle struct {
	mu     sync.Mutex
	rate   float64 // bytes per second; <= 0: unlimited
	tokens float64
	last   time.Time
	now    func() time.Time
}

// burstTime bounds how much unused rate accumulates: a tenth of a second,
// so an idle period does not turn into a burst far above the limit.
const burstTime = 100 * time.Millisecond

// NewThrottle returns a limit of rate bytes per second (<= 0: none).
func NewThrottle(rate int64) *Throttle {
	t := &Throttle{now: time.Now}
	t.last = t.now()
	t.rate = float64(rate)
	return t
}

// SetRate changes the limit (<= 0 removes it).
func (t *Throttle) SetRate(rate int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.refillLocked()
	t.rate = float64(rate)
	if t.rate <= 0 {
		t.tokens = 0
	}
}

// Rate returns the limit in bytes per second (<= 0: none).
func (t *Throttle) Rate() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return int64(t.rate)
}

func (t *Throttle) refillLocked() {
	now := t.now()
	if t.rate > 0 {
		t.tokens = min(t.tokens+now.Sub(t.last).Seconds()*t.rate, t.rate*burstTime.Seconds())
	}
	t.last = now
}

// Exceeded reports whether throttled traffic must wait now.
func (t *Throttle) Exceeded() bool {
	return t.Wait() > 0
}

// Wait returns how long until throttled traffic may flow again (0: now).
func (t *Throttle) Wait() time.Duration {
	if t == nil {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.rate <= 0 {
		return 0
	}
	t.refillLocked()
	if t.tokens >= 0 {
		return 0
	}
	return time.Duration(-t.tokens / t.rate * float64(time.Second))
}

// Record charges n bytes of throttled traffic.
func (t *Throttle) Record(n int) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.rate <= 0 {
		return
	}
	t.refillLocked()
	t.tokens -= float64(n)
}
