package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mathrand "math/rand/v2"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// ProbeConfig is the failover probe: one acks=all producer writing to one
// partition, one record at a time.
type ProbeConfig struct {
	Brokers   string // comma-separated seeds
	Topic     string
	Partition int32
	Interval  time.Duration // at most one write started per interval
	Timeout   time.Duration
	// FranzDefaults keeps franz-go's own retry and metadata backoffs
	// instead of the Java producer's (see javaLikeBackoff).
	FranzDefaults bool
}

// javaLikeBackoff gives franz-go the Java producer's reaction to a lost
// leader: retries back off from retry.backoff.ms=100 doubling to
// retry.backoff.max.ms=1000 with ±20 % jitter (KIP-580), and metadata
// may be refreshed again after retry.backoff.ms. franz-go's defaults
// (250 ms doubling to 5 s; metadata at most every 5 s unless an answer
// carries an error) would put franz-go's schedule into the failover time:
// while the controller has not yet fenced the dead leader, Metadata still
// names it without error, so the client backs off for seconds on a
// leader that was replaced meanwhile.
func javaLikeBackoff() []kgo.Opt {
	return []kgo.Opt{kgo.RetryBackoffFn(javaLikeBackoffFn), kgo.MetadataMinAge(100 * time.Millisecond)}
}

func javaLikeBackoffFn(fails int) time.Duration {
	d := min(100*time.Millisecond<<min(max(fails-1, 0), 4), time.Second)
	return time.Duration(float64(d) * (0.8 + 0.4*mathrand.Float64()))
}

// ProbeAck is one line the probe prints per acknowledged record.
type ProbeAck struct {
	AckNs  int64  `json:"ack_ns"`  // wall clock (Unix ns) when the ack arrived
	SentNs int64  `json:"sent_ns"` // when the record was handed to the client
	Offset int64  `json:"offset"`
	Err    string `json:"err,omitempty"` // a write the client gave up on
}

// RunProbe writes one record at a time to cfg.Partition with acks=all
// (linger 0 so that a lone record is sent at once; the Java producer's
// backoffs unless FranzDefaults; franz-go's defaults otherwise) and prints
// a ProbeAck line per outcome to out, until stop is closed or the timeout
// passes. The orchestrator kills the partition's leader meanwhile and
// reads from these lines when writes succeeded again: the client's own
// reaction (reconnect, metadata refresh, retry backoff) is part of the
// failover time, as it is for any application.
func RunProbe(ctx context.Context, cfg ProbeConfig, stop <-chan struct{}, out io.Writer) error {
	if cfg.Brokers == "" || cfg.Topic == "" || cfg.Partition < 0 || cfg.Timeout <= 0 {
		return errors.New("probe: --brokers, --topic, --partition >= 0 and --timeout > 0 are required")
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	opts := []kgo.Opt{
		kgo.SeedBrokers(strings.Split(cfg.Brokers, ",")...),
		kgo.DefaultProduceTopic(cfg.Topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(0),
	}
	if !cfg.FranzDefaults {
		opts = append(opts, javaLikeBackoff()...)
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("probe client: %w", err)
	}
	defer cl.Close()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	enc := json.NewEncoder(out)
	next := time.Now()
	for ctx.Err() == nil {
		if d := time.Until(next); d > 0 && !sleepCtx(ctx, d) { // pacing the writes
			break
		}
		next = time.Now().Add(cfg.Interval)
		r := &kgo.Record{Partition: cfg.Partition, Value: []byte("failover-probe")}
		sent := time.Now()
		err := cl.ProduceSync(ctx, r).FirstErr()
		a := ProbeAck{AckNs: time.Now().UnixNano(), SentNs: sent.UnixNano(), Offset: r.Offset}
		if err != nil {
			if ctx.Err() != nil {
				break // stopped while a write waited: not an outcome
			}
			a.Err, a.Offset = err.Error(), -1
		}
		if err := enc.Encode(a); err != nil {
			return fmt.Errorf("probe output: %w", err)
		}
	}
	return nil
}

// stdinClosed returns a channel closed when r (the probe's stdin, which
// the orchestrator holds open) reaches EOF: the orchestrator's way to
// stop the probe without a signal.
func stdinClosed(r io.Reader) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, bufio.NewReader(r))
		close(ch)
	}()
	return ch
}
