package bench

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// cpuSampler reads a process's CPU time every interval, so that the CPU
// it used over any window (a driver's timed part, which another process
// measured) can be read afterwards.
type cpuSampler struct {
	pid  int
	mu   sync.Mutex
	at   []time.Time
	cpu  []time.Duration
	quit chan struct{}
	done chan struct{}
}

func startCPUSampler(pid int, every time.Duration) *cpuSampler {
	s := &cpuSampler{pid: pid, quit: make(chan struct{}), done: make(chan struct{})}
	s.sample()
	go func() {
		defer close(s.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-s.quit:
				return
			case <-t.C:
				s.sample()
			}
		}
	}()
	return s
}

func (s *cpuSampler) sample() {
	c, err := ProcessCPU(s.pid)
	if err != nil {
		return // exited; the phases notice
	}
	s.add(time.Now(), c)
}

func (s *cpuSampler) add(at time.Time, c time.Duration) {
	s.mu.Lock()
	s.at = append(s.at, at)
	s.cpu = append(s.cpu, c)
	s.mu.Unlock()
}

func (s *cpuSampler) stop() {
	close(s.quit)
	<-s.done
}

// between is the CPU time used from one instant to another, each read by
// linear interpolation between the samples around it (clamped to the
// first and last sample).
func (s *cpuSampler) between(from, to time.Time) time.Duration {
	s.sample() // a sample after `to`, when asked right after the window
	s.mu.Lock()
	defer s.mu.Unlock()
	return max(s.cpuAt(to)-s.cpuAt(from), 0)
}

func (s *cpuSampler) cpuAt(t time.Time) time.Duration {
	n := len(s.at)
	if n == 0 {
		return 0
	}
	i := sort.Search(n, func(i int) bool { return !s.at[i].Before(t) })
	switch {
	case i == 0:
		return s.cpu[0]
	case i == n:
		return s.cpu[n-1]
	}
	t0, t1 := s.at[i-1], s.at[i]
	c0, c1 := s.cpu[i-1], s.cpu[i]
	span := t1.Sub(t0)
	if span <= 0 {
		return c1
	}
	return c0 + time.Duration(float64(c1-c0)*float64(t.Sub(t0))/float64(span))
}

// sameRecords checks that two topics hold the same n records (key and
// value bytes; order across partitions aside): the connector and the raw
// driver made and encoded the same data.
func sameRecords(ctx context.Context, addr, a, b string, n int) error {
	ha, err := recordHashes(ctx, addr, a, n)
	if err != nil {
		return err
	}
	hb, err := recordHashes(ctx, addr, b, n)
	if err != nil {
		return err
	}
	if !slices.Equal(ha, hb) {
		diff := 0
		for i := range ha {
			if ha[i] != hb[i] {
				diff++
			}
		}
		return fmt.Errorf("topics %s and %s hold different records (%d of %d sorted hashes differ)", a, b, diff, n)
	}
	return nil
}

// recordHashes reads all n records of topic and returns the sorted
// FNV-1a hashes of key and value.
func recordHashes(ctx context.Context, addr, topic string, n int) ([][2]uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	out := make([][2]uint64, 0, n)
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil, fmt.Errorf("read %s: %d of %d records: %w", topic, len(out), n, ctx.Err())
		}
		var ferr error
		fs.EachError(func(t string, p int32, err error) { ferr = errors.Join(ferr, fmt.Errorf("%s[%d]: %w", t, p, err)) })
		if ferr != nil {
			return nil, ferr
		}
		fs.EachRecord(func(r *kgo.Record) {
			hk, hv := fnv.New64a(), fnv.New64a()
			hk.Write(r.Key)
			hv.Write(r.Value)
			out = append(out, [2]uint64{hk.Sum64(), hv.Sum64()})
		})
	}
	if len(out) != n {
		return nil, fmt.Errorf("%s holds %d records, want %d", topic, len(out), n)
	}
	slices.SortFunc(out, func(x, y [2]uint64) int {
		if x[0] != y[0] {
			return cmpU64(x[0], y[0])
		}
		return cmpU64(x[1], y[1])
	})
	return out, nil
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
