package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// A latency record's value starts with the instant it was handed to the
// producer, its sequence number within its part and which part it
// belongs to; random bytes fill the rest up to the record size.
const (
	latTimeOff  = 0  // Unix nanoseconds, big endian
	latSeqOff   = 8  // big endian
	latKindOff  = 16 // latWarm or latTimed
	latMinBytes = 17
)

const (
	latWarm  byte = 0 // warm-up: flows before the clock starts, not measured
	latTimed byte = 1
)

func encodeLatencyValue(v []byte, at time.Time, seq uint64, kind byte) {
	binary.BigEndian.PutUint64(v[latTimeOff:], uint64(at.UnixNano()))
	binary.BigEndian.PutUint64(v[latSeqOff:], seq)
	v[latKindOff] = kind
}

func decodeLatencyValue(v []byte) (at time.Time, seq uint64, kind byte, ok bool) {
	if len(v) < latMinBytes {
		return time.Time{}, 0, 0, false
	}
	kind = v[latKindOff]
	if kind != latWarm && kind != latTimed {
		return time.Time{}, 0, 0, false
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(v[latTimeOff:]))), binary.BigEndian.Uint64(v[latSeqOff:]), kind, true
}

// latencyCollector gathers what the target's consumer sees: for each
// timed record the time from produce to consume (its first copy; later
// copies are counted as duplicates), and how many warm-up records came.
type latencyCollector struct {
	mu          sync.Mutex
	lat         []time.Duration
	seen        []bool
	timed, warm int64
	dups, bad   int64
	firstWarm   time.Time
	err         error
}

func newLatencyCollector(n int) *latencyCollector {
	return &latencyCollector{lat: make([]time.Duration, n), seen: make([]bool, n)}
}

// add takes the records of one poll, all consumed at now.
func (c *latencyCollector) add(now time.Time, recs []*kgo.Record) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range recs {
		at, seq, kind, ok := decodeLatencyValue(r.Value)
		switch {
		case !ok:
			c.bad++
		case kind == latWarm:
			if c.firstWarm.IsZero() {
				c.firstWarm = now
			}
			c.warm++
		case seq >= uint64(len(c.seen)):
			c.bad++
		case c.seen[seq]:
			c.dups++
		default:
			c.seen[seq] = true
			c.lat[seq] = now.Sub(at)
			c.timed++
		}
	}
}

func (c *latencyCollector) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = err
	}
}

// state is what the producer side steers by.
func (c *latencyCollector) state() (warm, timed int64, firstWarm time.Time, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil && c.bad > 0 {
		return c.warm, c.timed, c.firstWarm, fmt.Errorf("%d records on the target are not the benchmark's", c.bad)
	}
	return c.warm, c.timed, c.firstWarm, c.err
}

// result sorts the latencies of the timed records (all must have come).
func (c *latencyCollector) result() (sorted []time.Duration, dups int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	sorted = slices.Clone(c.lat)
	slices.Sort(sorted)
	return sorted, c.dups
}

// latencyPhase mirrors a fresh topic while records are produced into it
// at LatencyRate: first a warm-up, until the mirror has delivered for
// LatencyWarmup and its backlog from start-up is gone, then the timed
// records, for LatencyDuration. A consumer on the target (franz-go
// defaults, this process) takes consume time − produce time per record.
func (x *mirrorBench) latencyPhase(ctx context.Context, column string) (MirrorSample, error) {
	cfg := x.cfg
	topic := fmt.Sprintf("%s-lat-%s-r%d", mirrorTopic, column, x.run)
	f := newMirrorFlow(column, MirrorPhaseLatency, x.run, topic)
	remote := f.remoteTopic()
	if err := createS3Topic(ctx, x.srcAdm, topic, cfg.Partitions); err != nil {
		return MirrorSample{}, err
	}
	defer x.dropTopic(x.srcAdm, topic)
	x.settle(ctx)

	ctx, cancel := context.WithTimeout(ctx, cfg.PhaseTimeout)
	defer cancel()
	proc, start, err := x.startMirror(column, f)
	if err != nil {
		return MirrorSample{}, err
	}
	defer x.dropTopic(x.dstAdm, remote)
	defer proc.stop(cfg.StopGrace)
	cpu := startCPUSampler(proc.pid(), 10*time.Millisecond)
	defer cpu.stop()
	check := func() error {
		if err := mirrorAlive(column, proc); err != nil {
			return err
		}
		if err := x.alive(); err != nil {
			return err
		}
		return ctx.Err()
	}
	// The consumer starts once the remote topic has all its partitions,
	// so that it reads every one from its start.
	for remotePartitions(ctx, x.dstAdm, remote) < cfg.Partitions {
		if err := check(); err != nil {
			return MirrorSample{}, fmt.Errorf("waiting for %s: %w", remote, err)
		}
		if !sleepCtx(ctx, cfg.Poll) { // polling for the remote topic
			return MirrorSample{}, fmt.Errorf("waiting for %s: %w", remote, ctx.Err())
		}
	}

	n := cfg.latencyRecords()
	col := newLatencyCollector(n)
	cons, err := kgo.NewClient(kgo.SeedBrokers(cfg.TargetAddr), kgo.ConsumeTopics(remote),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return MirrorSample{}, err
	}
	defer cons.Close()
	cctx, stopConsumer := context.WithCancel(ctx)
	consumed := make(chan struct{})
	go func() {
		defer close(consumed)
		for {
			fs := cons.PollFetches(cctx)
			if cctx.Err() != nil {
				return
			}
			now := time.Now()
			fs.EachError(func(t string, p int32, err error) {
				if !errors.Is(err, context.Canceled) {
					col.fail(fmt.Errorf("consume %s[%d]: %w", t, p, err))
				}
			})
			col.add(now, fs.Records())
		}
	}()
	defer func() { stopConsumer(); <-consumed }()

	prod, err := kgo.NewClient(kgo.SeedBrokers(cfg.SourceAddr), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.ProducerLinger(0))
	if err != nil {
		return MirrorSample{}, err
	}
	defer prod.Close()
	var pc produceCounter
	pl := newPayload(cfg.Size)
	send := func(seq uint64, kind byte) {
		v := make([]byte, cfg.Size)
		copy(v[latMinBytes:], pl.value(int(seq))[latMinBytes:])
		encodeLatencyValue(v, time.Now(), seq, kind)
		prod.Produce(ctx, &kgo.Record{Value: v}, pc.promise)
	}
	interval := time.Second / time.Duration(cfg.LatencyRate)

	// Warm-up: until the mirror has delivered for LatencyWarmup with at
	// most a second of records outstanding, or for five times that
	// whatever is outstanding (a mirror that lags more than a second is
	// then measured as it is).
	w0 := time.Now()
	var warmSent int64
	for ; ; warmSent++ {
		if warmSent%1000 == 0 {
			if err := check(); err != nil {
				return MirrorSample{}, fmt.Errorf("warm-up (%d records sent): %w", warmSent, err)
			}
		}
		warm, _, first, err := col.state()
		if err != nil {
			return MirrorSample{}, err
		}
		if !first.IsZero() {
			since := time.Since(first)
			if since >= cfg.LatencyWarmup && (warmSent-warm <= int64(cfg.LatencyRate) || since >= 5*cfg.LatencyWarmup) {
				break
			}
		}
		if d := time.Until(w0.Add(time.Duration(warmSent) * interval)); d > 0 {
			time.Sleep(d) // pacing the load, not waiting for a condition
		}
		send(uint64(warmSent), latWarm)
	}
	_, _, firstWarm, _ := col.state()

	t0 := time.Now()
	for i := range n {
		if i%1000 == 0 {
			if err := check(); err != nil {
				return MirrorSample{}, fmt.Errorf("timed part (%d of %d records sent): %w", i, n, err)
			}
		}
		if d := time.Until(t0.Add(time.Duration(i) * interval)); d > 0 {
			time.Sleep(d) // pacing the load, not waiting for a condition
		}
		send(uint64(i), latTimed)
	}
	sent := time.Now()
	if err := prod.Flush(ctx); err != nil {
		return MirrorSample{}, fmt.Errorf("flush the producer: %w", err)
	}
	if err := pc.err(); err != nil {
		return MirrorSample{}, err
	}
	for {
		_, timed, _, err := col.state()
		if err != nil {
			return MirrorSample{}, err
		}
		if timed == int64(n) {
			break
		}
		if err := check(); err != nil {
			return MirrorSample{}, fmt.Errorf("%d of %d timed records on the target: %w", timed, n, err)
		}
		if !sleepCtx(ctx, 10*time.Millisecond) { // waiting for the consumer to see the last records
			return MirrorSample{}, fmt.Errorf("%d of %d timed records on the target: %w", timed, n, ctx.Err())
		}
	}
	lat, dups := col.result()
	sendSecs := max(sent.Sub(t0).Seconds(), 1e-9)
	return MirrorSample{
		Records: int64(n), Seconds: sendSecs, FirstMs: ms(firstWarm.Sub(start)), WarmupRecords: warmSent,
		Rate: cfg.LatencyRate, RateHz: float64(n) / sendSecs, Duplicates: dups,
		P50Ms: ms(percentile(lat, 0.50)), P99Ms: ms(percentile(lat, 0.99)), MaxMs: ms(lat[len(lat)-1]),
		ProcessCores: cpu.between(t0, sent).Seconds() / sendSecs,
	}, nil
}
