package admin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A sink's lag on a topic: the records of the topic its consumer group
// has not committed (Kafka's kafka-consumer-groups LAG, summed), and the
// age of the oldest of them — the timestamp of the first uncommitted
// record of each partition, read with a short-lived direct consumer.

// clusterWait bounds each offset lookup of the view: with the cluster
// unreachable, franz-go's retries would otherwise hold the request for
// its whole timeout, and the view answers with null lags instead.
const clusterWait = 5 * time.Second

// firstRecordWait bounds reading the first uncommitted records: a
// partition whose leader is slow to answer leaves lag_seconds to the
// others, or null.
const firstRecordWait = 2 * time.Second

// topicOffsets are the log start and end offsets of the topics shown.
type topicOffsets struct {
	starts, ends kadm.ListedOffsets
	err          error // when the cluster did not answer at all
}

func (s *Server) listTopicOffsets(ctx context.Context, topics []string) topicOffsets {
	if len(topics) == 0 {
		return topicOffsets{}
	}
	ctx, cancel := context.WithTimeout(ctx, clusterWait)
	defer cancel()
	var o topicOffsets
	// Partial answers (*kadm.ShardErrors) still hold what the reachable
	// brokers answered; partitions missing from them show as unknown.
	ends, err := s.adm.ListEndOffsets(ctx, topics...)
	if len(ends) == 0 && err != nil {
		return topicOffsets{err: fmt.Errorf("could not list the end offsets (is the Kafka cluster reachable?): %w", err)}
	}
	starts, err := s.adm.ListStartOffsets(ctx, topics...)
	if len(starts) == 0 && err != nil {
		return topicOffsets{err: fmt.Errorf("could not list the start offsets (is the Kafka cluster reachable?): %w", err)}
	}
	o.starts, o.ends = starts, ends
	return o
}

// partitions are a topic's partitions with an end offset, sorted; ok is
// false when the topic does not exist.
func (o topicOffsets) partitions(topic string) (ps []int32, ok bool) {
	for p, lo := range o.ends[topic] {
		if errors.Is(lo.Err, kerr.UnknownTopicOrPartition) {
			return nil, false
		}
		if lo.Err == nil && p >= 0 {
			ps = append(ps, p)
		}
	}
	slices.Sort(ps)
	return ps, o.ends[topic] != nil
}

// topicHop is a topic with its size: records between log start and end.
func (o topicOffsets) topicHop(topic string) hop {
	h := hop{Kind: hopTopic, Name: topic}
	if o.err != nil {
		h.Detail = o.err.Error()
		return h
	}
	ps, ok := o.partitions(topic)
	if !ok {
		h.Detail = "the topic does not exist"
		return h
	}
	var records int64
	for _, p := range ps {
		end, _ := o.ends.Lookup(topic, p)
		start, found := o.starts.Lookup(topic, p)
		if !found || start.Err != nil {
			start.Offset = 0
		}
		records += max(0, end.Offset-start.Offset)
	}
	h.Detail = fmt.Sprintf("%d partitions, %d records", len(ps), records)
	if len(ps) == 1 {
		h.Detail = fmt.Sprintf("1 partition, %d records", records)
	}
	return h
}

// sinkLag is a sink's lag on one topic.
type sinkLag struct {
	records *int64
	seconds *float64
	detail  string
}

// sinkLags computes a sink group's lag on each of topics.
func (s *Server) sinkLags(ctx context.Context, group string, topics []string, offs topicOffsets) map[string]*sinkLag {
	out := map[string]*sinkLag{}
	if len(topics) == 0 {
		return out
	}
	unknown := func(why string) map[string]*sinkLag {
		for _, t := range topics {
			out[t] = &sinkLag{detail: why}
		}
		return out
	}
	if offs.err != nil {
		return unknown(offs.err.Error())
	}
	fctx, cancel := context.WithTimeout(ctx, clusterWait)
	committed, err := s.adm.FetchOffsets(fctx, group)
	cancel()
	if err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
		return unknown(fmt.Sprintf("could not read the committed offsets of group %s: %v", group, err))
	}

	// Per topic: the records behind, and where each lagging partition's
	// first unconsumed record is.
	from := map[string]map[int32]int64{}
	for _, t := range topics {
		ps, ok := offs.partitions(t)
		if !ok {
			out[t] = &sinkLag{detail: "the topic does not exist"}
			continue
		}
		var behind int64
		uncommitted := 0
		for _, p := range ps {
			end, _ := offs.ends.Lookup(t, p)
			next := int64(-1)
			if c, ok := committed.Lookup(t, p); ok && c.Err == nil && c.At >= 0 {
				next = c.At
			}
			if next < 0 {
				// Nothing committed: Connect's sink consumers start at
				// the log start (auto.offset.reset=earliest).
				next = 0
				if st, ok := offs.starts.Lookup(t, p); ok && st.Err == nil {
					next = st.Offset
				}
				if end.Offset > next {
					uncommitted++ // an empty partition needs no commit
				}
			}
			if n := end.Offset - next; n > 0 {
				behind += n
				if from[t] == nil {
					from[t] = map[int32]int64{}
				}
				from[t][p] = next
			}
		}
		l := &sinkLag{records: &behind}
		if uncommitted > 0 {
			l.detail = fmt.Sprintf("%d of %d partitions hold records but no committed offset (lag counted from the log start)", uncommitted, len(ps))
		}
		if behind == 0 {
			zero := 0.0
			l.seconds = &zero
		}
		out[t] = l
	}
	if len(from) == 0 {
		return out
	}
	ts, err := s.firstTimestamps(ctx, from)
	now := time.Now()
	for t, ps := range from {
		l := out[t]
		var oldest time.Time
		missing := 0
		for p := range ps {
			tp, ok := ts[t][p]
			if !ok {
				missing++
				continue
			}
			if oldest.IsZero() || tp.Before(oldest) {
				oldest = tp
			}
		}
		if !oldest.IsZero() {
			sec := max(0, now.Sub(oldest).Seconds())
			l.seconds = &sec
		}
		if missing > 0 {
			why := fmt.Sprintf("the first unconsumed record of %d partitions could not be read within %s", missing, firstRecordWait)
			if err != nil {
				why = fmt.Sprintf("the first unconsumed records could not be read: %v", err)
			}
			l.detail = joinDetail(l.detail, why)
		}
	}
	return out
}

// firstTimestamps reads the timestamp of the first record at or after
// each given offset, with a direct partition consumer (no group) of its
// own: the admin API's shared client is not turned into a consumer.
func (s *Server) firstTimestamps(ctx context.Context, from map[string]map[int32]int64) (map[string]map[int32]time.Time, error) {
	parts := map[string]map[int32]kgo.Offset{}
	need := 0
	for t, ps := range from {
		parts[t] = map[int32]kgo.Offset{}
		for p, o := range ps {
			parts[t][p] = kgo.NewOffset().At(o)
			need++
		}
	}
	opts := append(slices.Clone(s.opts.ClientOpts),
		kgo.ClientID("fjord-admin-api-lag"),
		kgo.ConsumePartitions(parts),
		kgo.FetchMaxWait(200*time.Millisecond),
		kgo.FetchMaxPartitionBytes(64<<10), // one record per partition is all it needs
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, firstRecordWait)
	defer cancel()
	out := map[string]map[int32]time.Time{}
	got := 0
	for got < need && ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) {
			if _, seen := out[r.Topic][r.Partition]; seen || r.Offset < from[r.Topic][r.Partition] {
				return
			}
			if out[r.Topic] == nil {
				out[r.Topic] = map[int32]time.Time{}
			}
			out[r.Topic][r.Partition] = r.Timestamp
			got++
			cl.PauseFetchPartitions(map[string][]int32{r.Topic: {r.Partition}})
		})
	}
	return out, nil
}

func joinDetail(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
