package source

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/runtime"
	"github.com/fjordhq/fjord/connect/storage"
	"github.com/fjordhq/fjord/mirror/mirrorconfig"
	"github.com/fjordhq/fjord/mirror/records"
)

// Task is MirrorSourceTask: it replicates its assigned topic-partitions.
type Task struct {
	ctx   connect.SourceTaskContext
	s     *settings
	log   *slog.Logger
	cl    *kgo.Client
	parts map[connect.TopicPartition]*partition

	batches  batches
	clock    msClock
	syncs    *offsetSyncWriter
	syncsCl  *kgo.Client
	stopping atomic.Bool
	released bool // metrics given back (Start's failure or Stop)
	stamps   int  // 1 when some topic keeps its name (a provenance header per record)
	// exactOffsets: every record carries its own source offset (no
	// sharing within a poll, see Poll), for exactly-once set-ups, where
	// a transaction's offsets must be exactly its records'.
	exactOffsets bool
}

var (
	_ connect.SourceTask           = (*Task)(nil)
	_ connect.ContextualSourceTask = (*Task)(nil)
	_ connect.RecordCommitter      = (*Task)(nil)
	_ connect.Versioned            = (*Task)(nil)
)

func (t *Task) Initialize(ctx connect.SourceTaskContext) { t.ctx = ctx }
func (t *Task) Version() string                          { return (&Connector{}).Version() }

// Start assigns the task's partitions to its own consumer on the source
// cluster, each from just after the offset the worker stored for it (the
// consumer's auto.offset.reset, earliest by default, for those without
// one), and opens the offset-syncs producer.
func (t *Task) Start(ctx context.Context, props map[string]string) error {
	s, err := parseSettings(props)
	if err != nil {
		return err
	}
	t.s = s
	t.exactOffsets = readCommitted(props) || props[exactlyOnceSupportConfig] == "required"
	t.log = slog.With("connector", s.name, "task", props[mirrorconfig.TaskIndex], "flow", s.sourceAlias+"->"+s.targetAlias)
	tps, err := decodeAssignment(props[TaskTopicPartitionsConfig])
	if err != nil {
		return err
	}
	reset, err := resetOffset(props)
	if err != nil {
		return err
	}
	stored, err := t.loadOffsets(tps)
	if err != nil {
		return fmt.Errorf("read stored source offsets: %w", err)
	}
	t.parts = make(map[connect.TopicPartition]*partition, len(tps))
	assign := map[string]map[int32]kgo.Offset{}
	uncommitted := 0
	for _, tp := range tps {
		remote := s.policy.FormatRemoteTopic(s.sourceAlias, tp.Topic)
		key := metricKey{source: s.sourceAlias, target: s.targetAlias, topic: remote, partition: tp.Partition}
		t.parts[tp] = &partition{source: tp, sourcePartition: wrapPartition(tp, s.sourceAlias), remote: remote,
			identity: remote == tp.Topic, key: key, m: metrics.acquire(key)}
		if remote == tp.Topic {
			t.stamps = 1
		}
		if assign[tp.Topic] == nil {
			assign[tp.Topic] = map[int32]kgo.Offset{}
		}
		if off, ok := stored[tp]; ok && off >= 0 {
			assign[tp.Topic][tp.Partition] = kgo.NewOffset().At(off + 1)
		} else {
			uncommitted++
			assign[tp.Topic][tp.Partition] = reset
		}
	}
	t.log.Info("Starting with previously uncommitted partitions", "uncommitted", uncommitted, "partitions", len(tps))
	opts := []kgo.Opt{kgo.ConsumePartitions(assign)}
	if sourceConsumerProp(props, "fetch.max.wait.ms") == "" {
		// Kafka's consumer default, not franz-go's 5 s: a partition
		// assigned while a fetch waits joins the next fetch, so franz-go's
		// default would delay new partitions and topics by 5 s.
		opts = append(opts, kgo.FetchMaxWait(500*time.Millisecond))
	}
	if t.cl, err = client(props, mirrorconfig.Source, runtime.ConsumerClient, "replication-consumer", opts...); err != nil {
		t.releaseMetrics()
		return fmt.Errorf("source consumer: %w", err)
	}
	if s.emitOffsetSyncs {
		if err := t.startOffsetSyncs(props); err != nil {
			t.cl.Close()
			t.releaseMetrics()
			return err
		}
	}
	t.log.Info("Replicating topic-partitions", "count", len(tps), "topic_partitions", encodeAssignment(tps))
	return nil
}

// resetOffset is where a partition without a stored offset starts: the
// source consumer's auto.offset.reset, earliest unless set (MM2 puts
// earliest when absent).
func resetOffset(props map[string]string) (kgo.Offset, error) {
	v := sourceConsumerProp(props, "auto.offset.reset")
	switch strings.ToLower(v) {
	case "earliest":
		return kgo.NewOffset().AtStart(), nil
	case "latest":
		return kgo.NewOffset().AtEnd(), nil
	}
	return kgo.Offset{}, fmt.Errorf("Invalid value %s for configuration auto.offset.reset: the mirror source consumer supports earliest and latest", v)
}

// loadOffsets reads the stored offset of each partition: the last
// replicated record's upstream offset.
func (t *Task) loadOffsets(tps []connect.TopicPartition) (map[connect.TopicPartition]int64, error) {
	out := map[connect.TopicPartition]int64{}
	if t.ctx == nil || t.ctx.Offsets() == nil || len(tps) == 0 {
		return out, nil
	}
	keys := make([]map[string]any, len(tps))
	for i, tp := range tps {
		keys[i] = wrapPartition(tp, t.s.sourceAlias)
	}
	got, err := t.ctx.Offsets().Offsets(keys)
	if err != nil {
		return nil, err
	}
	for i, tp := range tps {
		if o, ok := got[storage.PartitionKey(keys[i])]; ok {
			out[tp] = unwrapOffset(o)
		}
	}
	return out, nil
}

// startOffsetSyncs opens the producer of the offset-syncs topic on the
// cluster offset-syncs.topic.location names.
func (t *Task) startOffsetSyncs(props map[string]string) error {
	cl, err := client(props, t.s.offsetSyncsLocation, runtime.ProducerClient, "offset-syncs-"+t.s.offsetSyncsLocation+"-producer",
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return fmt.Errorf("offset-syncs producer: %w", err)
	}
	t.syncsCl = cl
	topic := t.s.offsetSyncsTopic()
	send := func(s records.OffsetSync, done func()) {
		r := &kgo.Record{Topic: topic, Partition: 0, Key: s.Key(), Value: s.Value()}
		cl.Produce(context.Background(), r, func(_ *kgo.Record, err error) {
			if err != nil && !errors.Is(err, kgo.ErrClientClosed) {
				t.log.Error("Failure sending offset sync.", "topic", topic, "err", err)
			}
			done()
		})
	}
	t.syncs = newOffsetSyncWriter(t.s.offsetLagMax, send, t.log)
	for _, p := range t.parts {
		p.syncState = t.syncs.state(p.source)
	}
	return nil
}

// Poll returns the records fetched within consumer.poll.timeout.ms. Fetch
// errors are logged and polling goes on (MM2 returns null on a
// KafkaException): the client retries them itself.
//
// Unlike MM2, the records a poll emits for one partition share one
// source offset map, the offset just before the poll's first record of
// the partition, except the last one, which carries its own: a record's
// map is a few hundred bytes, more than the rest of it. A commit of the
// whole poll's records, or at a stop (the worker flushes first), stores
// exact offsets as MM2's; one that falls within a poll's records stores
// the offset before them, so a restart from it copies them again — at
// least once, as a restart from any commit. Offset syncs and metrics use
// each record's exact offset (batch.meta). A task set up for exactly once
// (a read_committed source consumer or exactly.once.support=required)
// gives every record its own offset.
func (t *Task) Poll(ctx context.Context) ([]*connect.SourceRecord, error) {
	if t.stopping.Load() {
		return nil, nil
	}
	pctx, cancel := context.WithTimeout(ctx, t.s.pollTimeout)
	fetches := t.cl.PollFetches(pctx)
	cancel()
	if fetches.IsClientClosed() {
		return nil, nil
	}
	fetches.EachError(func(topic string, p int32, err error) {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			return
		}
		t.log.Warn("Failure during poll.", "topic", topic, "partition", p, "err", err)
	})
	n, headers := 0, 0
	fetches.EachRecord(func(r *kgo.Record) {
		n++
		headers += len(r.Headers) + t.stamps
	})
	if n == 0 {
		return nil, nil
	}
	b := t.batches.get(n, headers)
	now := time.Now().UnixMilli()
	fetches.EachPartition(func(fp kgo.FetchTopicPartition) {
		p := t.parts[connect.TopicPartition{Topic: fp.Topic, Partition: fp.Partition}]
		if p == nil || len(fp.Records) == 0 {
			return
		}
		t.convertFetched(b, p, fp.Records, now)
	})
	out := b.ptrs
	t.batches.track(b)
	return out, nil
}

// convertFetched appends the records of one partition fetched together
// to b: all but the last share the source offset map of the offset
// before the first (see Poll).
func (t *Task) convertFetched(b *batch, p *partition, recs []*kgo.Record, now int64) {
	var shared map[string]any
	if len(recs) > 1 && !t.exactOffsets {
		shared = wrapOffset(recs[0].Offset - 1)
	}
	var ages batchStats
	var bytes, skipped int64
	var last *connect.SourceRecord
	var lastOffset int64
	for _, r := range recs {
		sr := b.convertRecord(p, r, t.s.sourceAlias, t.s.targetAlias, shared)
		if sr == nil {
			skipped++
			p.skips.skipped()
			continue
		}
		p.skips.kept(r.Offset)
		last, lastOffset = sr, r.Offset
		ages.add(float64(now - sr.Timestamp))
		bytes += int64(len(r.Value))
	}
	if last != nil && shared != nil {
		last.SourceOffset = wrapOffset(lastOffset)
	}
	p.m.recordPolled(bytes, ages, now)
	if skipped > 0 {
		p.m.skipped.Add(skipped)
	}
}

// CommitRecord is called as the target acknowledges each record: it
// counts it, measures its replication latency and may queue an offset
// sync mapping its source offset to the offset it got on the target.
func (t *Task) CommitRecord(r *connect.SourceRecord, md *connect.RecordMetadata) error {
	if t.stopping.Load() {
		return nil
	}
	var p *partition
	var upstream int64
	if b, i := t.batches.find(r); b != nil {
		p, upstream = b.meta[i].p, b.meta[i].offset
		defer t.batches.done(b)
	} else {
		// Not one of Poll's records (tests call CommitRecord directly).
		tp, ok := unwrapPartition(r.SourcePartition)
		if !ok {
			return nil
		}
		p, upstream = t.parts[tp], unwrapOffset(r.SourceOffset)
	}
	if p == nil || md == nil {
		// md nil: dropped by a transformation, nothing landed to sync.
		return nil
	}
	now := t.clock.nowMillis()
	p.m.recordReplicated(float64(now-r.Timestamp), now)
	if t.syncs != nil {
		if p.syncState != nil {
			t.syncs.maybeQueueOffsetSyncsOf(p.syncState, p.source, upstream, md.Offset, p.skips.follows(upstream))
		} else {
			t.syncs.maybeQueueOffsetSyncs(p.source, upstream, md.Offset, p.skips.follows(upstream))
		}
		t.syncs.firePendingOffsetSyncs()
	}
	return nil
}

// msClock reads the wall clock in milliseconds at about half the cost of
// time.Now, which reads the wall and the monotonic clocks: it adds the
// monotonic time elapsed since a wall reading taken at most a second
// before. CommitRecord reads it for every record.
type msClock struct {
	base atomic.Pointer[time.Time]
}

func (c *msClock) nowMillis() int64 {
	b := c.base.Load()
	if b != nil {
		if d := time.Since(*b); d >= 0 && d < time.Second {
			return b.UnixMilli() + d.Milliseconds()
		}
	}
	now := time.Now()
	c.base.Store(&now)
	return now.UnixMilli()
}

// Commit runs after each offset commit: syncs held back by their
// spacing go now, so a quiet partition's consumers are not left behind.
func (t *Task) Commit(context.Context) error {
	if t.syncs != nil {
		t.syncs.promoteDelayedOffsetSyncs()
		t.syncs.firePendingOffsetSyncs()
	}
	return nil
}

// Stop closes the consumer, lets the offset syncs in flight finish
// briefly and closes their producer.
func (t *Task) Stop() error {
	t.stopping.Store(true)
	if t.cl != nil {
		t.cl.Close()
	}
	if t.syncs != nil {
		t.syncs.close()
	}
	if t.syncsCl != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = t.syncsCl.Flush(ctx)
		cancel()
		t.syncsCl.Close()
	}
	t.releaseMetrics()
	return nil
}

// releaseMetrics removes the task's series from the collector; the
// partitions keep their (now unlisted) sensors, so a CommitRecord racing
// with Stop still has somewhere to count.
func (t *Task) releaseMetrics() {
	if t.released {
		return
	}
	t.released = true
	for _, p := range t.parts {
		metrics.release(p.key)
	}
}
