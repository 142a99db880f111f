package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// MM2 reads its single-partition internal topics (offset syncs,
// checkpoints) from partition 0 only, whatever their partition count.
const internalPartition = int32(0)

// partitionReader consumes partition 0 of one topic from its start with
// a client that consumes nothing else.
type partitionReader struct {
	cl    *kgo.Client
	adm   *kadm.Client
	topic string
	log   *slog.Logger
	// next is the offset after the last record read.
	next int64
}

func newPartitionReader(cl *kgo.Client, topic string, log *slog.Logger) *partitionReader {
	cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{topic: {internalPartition: kgo.NewOffset().AtStart()}})
	return &partitionReader{cl: cl, adm: kadm.NewClient(cl), topic: topic, log: log}
}

// endOffset is the partition's end now; a topic that does not exist yet
// ends at 0 (it has nothing to read).
func (r *partitionReader) endOffset(ctx context.Context) (start, end int64, err error) {
	ends, err := r.adm.ListEndOffsets(ctx, r.topic)
	if err != nil {
		return 0, 0, err
	}
	o, ok := ends.Lookup(r.topic, internalPartition)
	if !ok || errors.Is(o.Err, kerr.UnknownTopicOrPartition) {
		return 0, 0, nil
	}
	if o.Err != nil {
		return 0, 0, o.Err
	}
	starts, err := r.adm.ListStartOffsets(ctx, r.topic)
	if err != nil {
		return 0, 0, err
	}
	if so, ok := starts.Lookup(r.topic, internalPartition); ok && so.Err == nil {
		start = so.Offset
	}
	return start, o.Offset, nil
}

// readToEnd reads every record up to the end offset the partition had
// when it was called, passing each to fn.
func (r *partitionReader) readToEnd(ctx context.Context, fn func(*kgo.Record)) error {
	start, end, err := r.endOffset(ctx)
	if err != nil {
		return fmt.Errorf("find the end of %s: %w", r.topic, err)
	}
	for r.next < end && start < end {
		if err := r.poll(ctx, time.Second, fn); err != nil {
			return err
		}
		if r.next >= end {
			break
		}
		// Records may have been deleted under us (retention, a
		// recreated topic): look again where the partition starts.
		if start, end, err = r.endOffset(ctx); err != nil {
			return fmt.Errorf("find the end of %s: %w", r.topic, err)
		}
		start = max(start, r.next)
	}
	return nil
}

// follow reads new records until ctx is done.
func (r *partitionReader) follow(ctx context.Context, fn func(*kgo.Record)) {
	for ctx.Err() == nil {
		if err := r.poll(ctx, 0, fn); err != nil && ctx.Err() == nil {
			r.log.Warn("reading "+r.topic, "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
}

// poll waits up to wait (0: until ctx is done) for records of the
// partition. Errors a fetch reports while a topic is being created or
// its leader moves are retried by the client and only logged here.
func (r *partitionReader) poll(ctx context.Context, wait time.Duration, fn func(*kgo.Record)) error {
	pctx := ctx
	if wait > 0 {
		var cancel context.CancelFunc
		pctx, cancel = context.WithTimeout(ctx, wait)
		defer cancel()
	}
	fs := r.cl.PollFetches(pctx)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if fs.IsClientClosed() {
		return kgo.ErrClientClosed
	}
	fs.EachError(func(topic string, p int32, err error) {
		if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
			r.log.Debug("fetch error", "topic", topic, "partition", p, "err", err)
		}
	})
	fs.EachRecord(func(rec *kgo.Record) {
		if rec.Topic != r.topic || rec.Partition != internalPartition {
			return
		}
		fn(rec)
		r.next = rec.Offset + 1
	})
	return nil
}
