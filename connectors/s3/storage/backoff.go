package storage

import (
	"math/rand/v2"
	"time"
)

// backoff is the wait before retry number attempt (1 = the first retry):
// base doubled per retry, capped at max, with "equal jitter" — a random
// point in the upper half of that window. The lower half stays empty so
// even the first retry waits at least half of s3.retry.backoff.ms (full
// jitter can retry a throttled request almost at once); the random upper
// half keeps many tasks that failed together from retrying together.
type backoff struct {
	base, max time.Duration
	// rand returns a number in [0, 1); tests fix it.
	rand func() float64
}

func (b backoff) BackoffDelay(attempt int, _ error) (time.Duration, error) {
	return b.delay(attempt), nil
}

func (b backoff) delay(attempt int) time.Duration {
	if b.base <= 0 {
		return 0
	}
	window := b.base
	for i := 1; i < attempt && window < b.max; i++ {
		window *= 2
	}
	if b.max > 0 && window > b.max {
		window = b.max
	}
	r := b.rand
	if r == nil {
		r = rand.Float64
	}
	half := window / 2
	return half + time.Duration(r()*float64(window-half))
}
