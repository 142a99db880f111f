package datagen

import "math/bits"

// rng is wyrand: a tiny, fast generator. Each record gets its own stream
// seeded from (seed, sequence number), so record g is the same on every
// run and whatever task generates it, and a restarted task needs only
// its position to continue.
type rng struct{ s uint64 }

func newRNG(seed uint64, seq int64) rng {
	return rng{s: mix(seed ^ mix(uint64(seq)+0x9e3779b97f4a7c15))}
}

// mix is splitmix64's finaliser.
func mix(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

func (r *rng) next() uint64 {
	r.s += 0xa0761d6478bd642f
	hi, lo := bits.Mul64(r.s, r.s^0xe7037ed1a0b428db)
	return hi ^ lo
}

// intn returns a uniform value in [0, n) for n > 0 (Lemire's method,
// without the rejection step: the bias is below 2^-32 for the ranges
// generators use).
func (r *rng) intn(n uint64) uint64 {
	hi, _ := bits.Mul64(r.next(), n)
	return hi
}

// between returns a uniform value in [lo, hi].
func (r *rng) between(lo, hi int64) int64 {
	span := uint64(hi - lo)
	if span == ^uint64(0) {
		return int64(r.next())
	}
	return lo + int64(r.intn(span+1))
}

// float returns a uniform value in [0, 1).
func (r *rng) float() float64 { return float64(r.next()>>11) / (1 << 53) }
