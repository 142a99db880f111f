package mm2

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect/runtime"
	"github.com/fjordhq/fjord/mirror/mirrorconfig"
)

// offsetRange is [from, to) of one partition.
type offsetRange struct{ from, to int64 }

// readRanges reads the records of the given partition ranges from one
// side of a flow and hands each to fn; a partition is done at its first
// record at or past to-1 (so a range of one offset yields the first
// record at or after it, which skips transaction markers). It returns
// when every partition is done or ctx ends; fn is called from this
// goroutine only.
func readRanges(ctx context.Context, props map[string]string, cluster string, ranges map[string]map[int32]offsetRange, fn func(*kgo.Record)) error {
	parts := map[string]map[int32]kgo.Offset{}
	left := 0
	for t, ps := range ranges {
		for p, r := range ps {
			if r.from >= r.to {
				continue
			}
			if parts[t] == nil {
				parts[t] = map[int32]kgo.Offset{}
			}
			parts[t][p] = kgo.NewOffset().At(r.from)
			left++
		}
	}
	if left == 0 {
		return nil
	}
	cl, err := mirrorconfig.Client(props, cluster, runtime.ConsumerClient, kgo.ConsumePartitions(parts))
	if err != nil {
		return err
	}
	defer cl.Close()
	done := map[string]map[int32]bool{}
	for left > 0 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return fmt.Errorf("read %s: %w", cluster, ctx.Err())
		}
		fs.EachRecord(func(r *kgo.Record) {
			rg, ok := ranges[r.Topic][r.Partition]
			if !ok || done[r.Topic][r.Partition] {
				return
			}
			fn(r)
			if r.Offset >= rg.to-1 {
				if done[r.Topic] == nil {
					done[r.Topic] = map[int32]bool{}
				}
				done[r.Topic][r.Partition] = true
				left--
			}
		})
	}
	return nil
}

// offsets are a partition's log start and end offsets.
type offsets struct{ start, end int64 }

// listOffsets lists the start and end offsets of the topics' partitions.
func listOffsets(ctx context.Context, adm *kadm.Client, topics []string) (map[string]map[int32]offsets, error) {
	out := map[string]map[int32]offsets{}
	if len(topics) == 0 {
		return out, nil
	}
	ends, err := adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return nil, err
	}
	starts, err := adm.ListStartOffsets(ctx, topics...)
	if err != nil {
		return nil, err
	}
	var firstErr error
	ends.Each(func(o kadm.ListedOffset) {
		if o.Partition < 0 { // kadm's marker for a topic that does not exist
			return
		}
		if o.Err != nil {
			firstErr = fmt.Errorf("end offset of %s-%d: %w", o.Topic, o.Partition, o.Err)
			return
		}
		s, ok := starts.Lookup(o.Topic, o.Partition)
		if !ok || s.Err != nil {
			firstErr = fmt.Errorf("start offset of %s-%d: %v", o.Topic, o.Partition, s.Err)
			return
		}
		if out[o.Topic] == nil {
			out[o.Topic] = map[int32]offsets{}
		}
		out[o.Topic][o.Partition] = offsets{s.Offset, o.Offset}
	})
	return out, firstErr
}
