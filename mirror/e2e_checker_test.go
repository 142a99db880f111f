package mirror_test

import "testing"

// TestCheckResumed checks the failover test's judge on hand-made reads:
// it must reject a missed record, a repeat, a gap, a short read and too
// many re-reads, so that the end-to-end test can fail.
func TestCheckResumed(t *testing.T) {
	seq := func(from, to int64) []int64 {
		var out []int64
		for s := from; s < to; s++ {
			out = append(out, s)
		}
		return out
	}
	for _, c := range []struct {
		name   string
		seqs   []int64
		reread int64
		ok     bool
	}{
		{"from the committed point", seq(20, 30), 0, true},
		{"re-reads within offset.lag.max", seq(12, 30), 8, true},
		{"re-reads offset.lag.max", seq(10, 30), 10, true},
		{"too many re-reads", seq(9, 30), 11, false},
		{"everything again", seq(0, 30), 20, false},
		{"misses the first unprocessed record", seq(21, 30), 0, false},
		{"stops short", seq(20, 29), 0, false},
		{"a repeat", append(seq(20, 25), seq(24, 30)...), 0, false},
		{"a gap", append(seq(20, 25), seq(26, 30)...), 0, false},
		{"nothing read", nil, 0, false},
	} {
		reread, err := checkResumed(c.seqs, 20, 30, 10)
		if (err == nil) != c.ok || (c.ok && reread != c.reread) {
			t.Errorf("%s: reread %d, err %v; want reread %d, ok %v", c.name, reread, err, c.reread, c.ok)
		}
	}
	if _, err := checkResumed(nil, 30, 30, 10); err != nil {
		t.Errorf("a partition the group had finished, with nothing new: %v", err)
	}
}
