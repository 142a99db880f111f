package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Result is what one driver process measured; it prints as one JSON line.
type Result struct {
	Mode    string  `json:"mode"` // produce, consume or latency
	Topic   string  `json:"topic"`
	Acks    string  `json:"acks,omitempty"`
	Size    int     `json:"size"`
	Records int64   `json:"records"` // timed records, warm-up excluded
	Bytes   int64   `json:"bytes"`   // timed record value bytes
	Seconds float64 `json:"seconds"`

	RecordsPerSec float64 `json:"records_per_sec"`
	MBPerSec      float64 `json:"mb_per_sec"` // 10^6 bytes of record values

	// Latency mode only: time from Produce to the broker's acknowledgement.
	P50Ms  float64 `json:"p50_ms,omitempty"`
	P99Ms  float64 `json:"p99_ms,omitempty"`
	MaxMs  float64 `json:"max_ms,omitempty"`
	RateHz float64 `json:"rate_hz,omitempty"` // achieved send rate

	// ClientCPU is the driver's own CPU use over the timed part, in cores:
	// near 1 or more means the client, not the broker, may be the limit.
	ClientCPU float64 `json:"client_cpu"`
}

// DriverConfig is what the produce, consume and latency drivers share.
type DriverConfig struct {
	Brokers string
	Topic   string
	Records int // timed records
	Warmup  int // untimed records before the clock starts
	Size    int // record value bytes
	Acks    string
	Timeout time.Duration

	// Latency mode.
	Rate   int           // records per second
	Linger time.Duration // producer linger; the latency driver uses 0
}

func (c DriverConfig) validate() error {
	switch {
	case c.Brokers == "":
		return errors.New("--brokers is required")
	case c.Topic == "":
		return errors.New("--topic is required")
	case c.Records <= 0:
		return fmt.Errorf("--records %d: want > 0", c.Records)
	case c.Warmup < 0:
		return fmt.Errorf("--warmup %d: want >= 0", c.Warmup)
	case c.Size <= 0 || c.Size > 900_000:
		return fmt.Errorf("--size %d: want 1..900000 bytes", c.Size)
	case c.Acks != "1" && c.Acks != "all":
		return fmt.Errorf("--acks %q: want 1 or all", c.Acks)
	case c.Timeout <= 0:
		return fmt.Errorf("--timeout %s: want > 0", c.Timeout)
	}
	return nil
}

// producerOpts is the single place that departs from franz-go's defaults:
// acks, and idempotence off for acks=1 because franz-go refuses idempotent
// writes without acks=all.
func producerOpts(acks string) []kgo.Opt {
	if acks == "1" {
		return []kgo.Opt{kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite()}
	}
	return []kgo.Opt{kgo.RequiredAcks(kgo.AllISRAcks())}
}

// payload hands out record values as slices of one random buffer: distinct,
// incompressible values (franz-go's default snappy would otherwise shrink
// repeated bytes to nothing) without an allocation per record.
type payload struct {
	buf  []byte
	size int
}

func newPayload(size int) *payload {
	n := max(8<<20, 4*size)
	buf := make([]byte, n)
	var seed [32]byte
	seed[0] = byte(size)
	_, _ = rand.NewChaCha8(seed).Read(buf) // never fails
	return &payload{buf: buf, size: size}
}

func (p *payload) value(i int) []byte {
	// A stride that is not a multiple of the size keeps neighbouring
	// records from sharing bytes.
	off := (i * (p.size + 7)) % (len(p.buf) - p.size)
	return p.buf[off : off+p.size : off+p.size]
}

// produceCounter collects promise outcomes from the client's goroutines.
type produceCounter struct {
	acked  atomic.Int64
	failed atomic.Int64
	mu     sync.Mutex
	first  error
}

func (c *produceCounter) promise(_ *kgo.Record, err error) {
	if err == nil {
		c.acked.Add(1)
		return
	}
	c.failed.Add(1)
	c.mu.Lock()
	if c.first == nil {
		c.first = err
	}
	c.mu.Unlock()
}

func (c *produceCounter) err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.first != nil {
		return fmt.Errorf("%d records failed, first: %w", c.failed.Load(), c.first)
	}
	return nil
}

// produceN produces n records starting at value index from, then flushes.
// Records come from slabs to keep the client's allocation rate (which
// competes with the broker for CPU) low and equal for every broker.
func produceN(ctx context.Context, cl *kgo.Client, p *payload, from, n int, c *produceCounter) error {
	const slab = 4096
	var recs []kgo.Record
	for i := range n {
		if len(recs) == 0 {
			recs = make([]kgo.Record, min(slab, n-i))
		}
		r := &recs[0]
		recs = recs[1:]
		r.Value = p.value(from + i)
		cl.Produce(ctx, r, c.promise)
	}
	if err := cl.Flush(ctx); err != nil {
		return fmt.Errorf("flush: %w", err)
	}
	return c.err()
}

// RunProduce produces Warmup untimed records, then Records timed ones, and
// reports the timed throughput.
func RunProduce(ctx context.Context, c DriverConfig) (Result, error) {
	if err := c.validate(); err != nil {
		return Result{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	opts := append([]kgo.Opt{kgo.SeedBrokers(c.Brokers), kgo.DefaultProduceTopic(c.Topic)}, producerOpts(c.Acks)...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return Result{}, fmt.Errorf("new client: %w", err)
	}
	defer cl.Close()
	p := newPayload(c.Size)
	var counter produceCounter
	if err := produceN(ctx, cl, p, 0, c.Warmup, &counter); err != nil {
		return Result{}, fmt.Errorf("warm-up produce to %s: %w", c.Brokers, err)
	}
	start, cpu0 := time.Now(), selfCPU()
	if err := produceN(ctx, cl, p, c.Warmup, c.Records, &counter); err != nil {
		return Result{}, fmt.Errorf("produce to %s: %w", c.Brokers, err)
	}
	elapsed, cpu := time.Since(start), selfCPU()-cpu0
	if got, want := counter.acked.Load(), int64(c.Warmup+c.Records); got != want {
		return Result{}, fmt.Errorf("produce: %d of %d records acknowledged", got, want)
	}
	r := throughput("produce", c, int64(c.Records), elapsed)
	r.ClientCPU = cpu.Seconds() / elapsed.Seconds()
	return r, nil
}

// RunConsume reads the topic from the beginning until it has seen exactly
// Warmup+Records records. The clock starts after the poll that brought the
// Warmup'th record, and only records polled after that count, so the
// timed share is approximate (fetches arrive whole, up to franz-go's
// default 1 MiB per partition) but the rate is exact.
func RunConsume(ctx context.Context, c DriverConfig) (Result, error) {
	if err := c.validate(); err != nil {
		return Result{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(c.Brokers),
		kgo.ConsumeTopics(c.Topic),
		kgo.ConsumeStartOffset(kgo.NewOffset().AtStart()), // franz-go's default, stated
	)
	if err != nil {
		return Result{}, fmt.Errorf("new client: %w", err)
	}
	defer cl.Close()

	want := int64(c.Warmup + c.Records)
	var (
		seen, bytes, timedFrom, bytesFrom int64
		start                             time.Time
		cpu0                              time.Duration
	)
	if c.Warmup == 0 {
		start, cpu0 = time.Now(), selfCPU()
	}
	for seen < want {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return Result{}, fmt.Errorf("consume from %s: %d of %d records after %s: %w", c.Brokers, seen, want, c.Timeout, err)
		}
		var fetchErr error
		fs.EachError(func(t string, p int32, err error) {
			// Retriable errors are retried by the client; anything it
			// hands us is fatal for a benchmark.
			fetchErr = errors.Join(fetchErr, fmt.Errorf("%s[%d]: %w", t, p, err))
		})
		if fetchErr != nil {
			return Result{}, fmt.Errorf("consume from %s: %w", c.Brokers, fetchErr)
		}
		var bad int
		fs.EachRecord(func(r *kgo.Record) {
			seen++
			bytes += int64(len(r.Value))
			if len(r.Value) != c.Size {
				bad++
			}
		})
		if bad > 0 {
			return Result{}, fmt.Errorf("consume: %d records with a value size other than %d", bad, c.Size)
		}
		if start.IsZero() && seen >= int64(c.Warmup) {
			start, cpu0, timedFrom, bytesFrom = time.Now(), selfCPU(), seen, bytes
		}
	}
	elapsed, cpu := time.Since(start), selfCPU()-cpu0
	if seen != want {
		return Result{}, fmt.Errorf("consume: read %d records, the topic should hold %d", seen, want)
	}
	if seen == timedFrom {
		// Fetches arrive whole; a topic that fits in the fetches that
		// finish the warm-up leaves nothing to time.
		return Result{}, fmt.Errorf("consume: all %d records arrived with the warm-up fetches; use more --records or a smaller --warmup", seen)
	}
	r := throughput("consume", c, seen-timedFrom, elapsed)
	r.Bytes = bytes - bytesFrom
	r.MBPerSec = float64(r.Bytes) / 1e6 / elapsed.Seconds()
	r.ClientCPU = cpu.Seconds() / elapsed.Seconds()
	return r, nil
}

func throughput(mode string, c DriverConfig, n int64, elapsed time.Duration) Result {
	s := max(elapsed.Seconds(), 1e-9)
	b := n * int64(c.Size)
	return Result{
		Mode: mode, Topic: c.Topic, Acks: c.Acks, Size: c.Size,
		Records: n, Bytes: b, Seconds: s,
		RecordsPerSec: float64(n) / s,
		MBPerSec:      float64(b) / 1e6 / s,
	}
}

// RunLatency produces at a fixed Rate and reports the distribution of
// Produce-to-acknowledgement times of the Records timed ones.
func RunLatency(ctx context.Context, c DriverConfig) (Result, error) {
	if err := c.validate(); err != nil {
		return Result{}, err
	}
	if c.Rate <= 0 || c.Rate > 1_000_000 {
		return Result{}, fmt.Errorf("--rate %d: want 1..1000000", c.Rate)
	}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	opts := append([]kgo.Opt{
		kgo.SeedBrokers(c.Brokers),
		kgo.DefaultProduceTopic(c.Topic),
		kgo.ProducerLinger(c.Linger),
	}, producerOpts(c.Acks)...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return Result{}, fmt.Errorf("new client: %w", err)
	}
	defer cl.Close()

	total := c.Warmup + c.Records
	lat := make([]time.Duration, total)
	recs := make([]kgo.Record, total)
	p := newPayload(c.Size)
	var counter produceCounter
	interval := time.Second / time.Duration(c.Rate)
	start := time.Now()
	for i := range total {
		if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
			time.Sleep(d) // pacing the load, not waiting for a condition
		}
		if ctx.Err() != nil {
			break
		}
		r := &recs[i]
		r.Value = p.value(i)
		sent := time.Now()
		cl.Produce(ctx, r, func(r *kgo.Record, err error) {
			lat[i] = time.Since(sent)
			counter.promise(r, err)
		})
	}
	sendTime := time.Since(start)
	if err := cl.Flush(ctx); err != nil {
		return Result{}, fmt.Errorf("latency produce to %s: flush: %w", c.Brokers, err)
	}
	if err := counter.err(); err != nil {
		return Result{}, fmt.Errorf("latency produce to %s: %w", c.Brokers, err)
	}
	timed := lat[c.Warmup:]
	slices.Sort(timed)
	r := Result{
		Mode: "latency", Topic: c.Topic, Acks: c.Acks, Size: c.Size,
		Records: int64(len(timed)), Bytes: int64(len(timed) * c.Size), Seconds: sendTime.Seconds(),
		P50Ms:  ms(percentile(timed, 0.50)),
		P99Ms:  ms(percentile(timed, 0.99)),
		MaxMs:  ms(timed[len(timed)-1]),
		RateHz: float64(total) / sendTime.Seconds(),
	}
	r.RecordsPerSec = r.RateHz
	r.MBPerSec = r.RateHz * float64(c.Size) / 1e6
	return r, nil
}

// percentile returns the nearest-rank q-quantile of sorted durations.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(rank, 0), len(sorted)-1)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
