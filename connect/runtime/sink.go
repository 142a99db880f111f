package runtime

import (
	"context"
	"errors"
	"fmt"
	"maps"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/storage"
)

// SinkGroupID is the consumer group of a sink connector (Kafka's
// SinkUtils.consumerGroupId).
func SinkGroupID(connector string) string { return "connect-" + connector }

// sinkTask runs a SinkTask (Kafka's WorkerSinkTask): a consumer in the
// connector's group polls records, converts and transforms them and gives
// them to Put; every offset.flush.interval.ms PreCommit says what is
// durable and only that is committed. Rebalances open and close
// partitions; the task's own calls never overlap rebalance callbacks.
type sinkTask struct {
	w        *Worker
	t        *workerTask
	cc       *ConnectorConfig
	props    map[string]string
	task     connect.SinkTask
	plugins  *taskPlugins
	eh       *errorHandler
	m        *taskMetrics
	copts    []kgo.Opt
	cl       *kgo.Client
	dlqCl    *kgo.Client
	maxPoll  int
	interval time.Duration

	clMu sync.Mutex // guards cl's creation against close

	// taskMu serialises calls into the task between the poll loop and
	// rebalance callbacks (Kafka makes them all on the task's thread).
	taskMu        sync.Mutex
	closed        bool // the task was closed: callbacks are no-ops
	assigned      map[connect.TopicPartition]bool
	current       map[connect.TopicPartition]int64 // next offset, after Put
	lastCommitted map[connect.TopicPartition]int64
	resets        map[connect.TopicPartition]int64
	timeout       time.Duration
	batch         map[recordKey]*kgo.Record // for the errant record reporter
	wantErrant    atomic.Bool
	commitNow     atomic.Bool
	tracked       map[string]bool

	// parallel is how many goroutines convert a batch (0 or 1: the loop's
	// own); done says which records of the batch they converted.
	parallel int
	done     []bool

	// polled holds a poll's records while they are delivered in batches.
	polled []*kgo.Record
	// moved are partitions repositioned (reset, rewound) since the poll;
	// guarded by taskMu.
	moved map[connect.TopicPartition]bool
	// pausedSincePoll are partitions the task paused since the poll.
	pauseMu         sync.Mutex
	pausedSincePoll map[connect.TopicPartition]bool

	// lag is, per assigned partition, the high watermark and the next
	// offset to fetch as of the last poll that returned the partition
	// (guarded by taskMu); lagRecords their summed difference, the
	// sink-lag gauge.
	lag        map[connect.TopicPartition]partitionLag
	lagRecords atomic.Int64
}

// partitionLag is a partition's position as its last poll left it.
type partitionLag struct {
	highWatermark, next int64
}

type recordKey struct {
	topic     string
	partition int32
	offset    int64
}

func (w *Worker) newSinkTask(t *workerTask, cc *ConnectorConfig, props map[string]string) (*sinkTask, error) {
	conn, ok := cc.Plugin.New().(connect.SinkConnector)
	if !ok {
		return nil, fmt.Errorf("%s is not a sink connector", cc.Plugin.Class)
	}
	tp, err := w.buildPlugins(cc)
	if err != nil {
		return nil, err
	}
	m := w.metrics.forTask(t.id.Connector, t.id.Task)
	s := &sinkTask{w: w, t: t, cc: cc, props: props, task: conn.NewTask(), plugins: tp, m: m,
		eh:       newErrorHandler(cc, t.id.String(), t.id.Connector, t.id.Task, t.log, m),
		assigned: map[connect.TopicPartition]bool{}, current: map[connect.TopicPartition]int64{},
		lastCommitted: map[connect.TopicPartition]int64{}, resets: map[connect.TopicPartition]int64{},
		tracked: map[string]bool{}, maxPoll: 500, interval: w.cfg.OffsetFlushInterval,
		lag: map[connect.TopicPartition]partitionLag{}}
	if s.interval <= 0 {
		s.interval = time.Minute
	}
	_, kc := tp.keyConv.(connect.ConcurrentConverter)
	_, vc := tp.valueConv.(connect.ConcurrentConverter)
	if kc && vc {
		s.parallel = min(goruntime.GOMAXPROCS(0), 4)
	}
	overrides, err := w.overrides(cc, ConsumerOverridePrefix)
	if err != nil {
		closeChain(tp.chain)
		return nil, err
	}
	base := map[string]string{"client.id": "connector-consumer-" + t.id.String(), "auto.offset.reset": "earliest",
		"group.id": SinkGroupID(t.id.Connector)}
	cprops := w.cfg.ClientProps(ConsumerClient, base, overrides)
	if n, err := strconv.Atoi(strings.TrimSpace(cprops["max.poll.records"])); err == nil && n > 0 {
		s.maxPoll = n
	}
	opts, err := KafkaClientOpts(ConsumerClient, cprops, t.log)
	if err != nil {
		closeChain(tp.chain)
		return nil, err
	}
	group := strings.TrimSpace(cprops["group.id"])
	copts := []kgo.Opt{
		// Kafka's consumer default: range, then cooperative-sticky, so
		// Fjord and Kafka Connect workers can share a sink's group.
		kgo.Balancers(kgo.RangeBalancer(), kgo.CooperativeStickyBalancer()),
	}
	copts = append(copts, opts...)
	copts = append(copts,
		kgo.ConsumerGroup(group),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsAssigned(s.onAssigned),
		kgo.OnPartitionsRevoked(s.onRevoked),
		kgo.OnPartitionsLost(s.onLost),
	)
	if cc.TopicsRegex != nil {
		copts = append(copts, kgo.ConsumeRegex(), kgo.ConsumeTopics("^(?:"+cc.TopicsRegex.String()+")$"))
	} else {
		copts = append(copts, kgo.ConsumeTopics(cc.Topics...))
	}
	// The consumer joins the group only once the task started (Kafka
	// subscribes after SinkTask.start), so Open never precedes Start.
	s.copts = copts
	if cc.DLQTopic != "" {
		if err := s.setupDLQ(); err != nil {
			closeChain(tp.chain)
			return nil, err
		}
	}
	return s, nil
}

// setupDLQ creates the dead letter queue topic if missing and its producer.
func (s *sinkTask) setupDLQ() error {
	pov, err := s.w.overrides(s.cc, ProducerOverridePrefix)
	if err != nil {
		return err
	}
	pprops := s.w.cfg.ClientProps(ProducerClient, map[string]string{"client.id": "connector-dlq-producer-" + s.t.id.String(), "acks": "all", "compression.type": "none"}, pov)
	opts, err := KafkaClientOpts(ProducerClient, pprops, s.t.log)
	if err != nil {
		return err
	}
	if s.dlqCl, err = kgo.NewClient(opts...); err != nil {
		return fmt.Errorf("dead letter queue producer: %w", err)
	}
	adm := kadm.NewClient(s.dlqCl)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := adm.CreateTopic(ctx, 1, s.cc.DLQReplicationFactor, nil, s.cc.DLQTopic)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		s.dlqCl.Close()
		return fmt.Errorf("create dead letter queue topic %s (replication factor %d; set errors.deadletterqueue.topic.replication.factor for small clusters): %w",
			s.cc.DLQTopic, s.cc.DLQReplicationFactor, err)
	}
	s.eh.dlq = &dlqReporter{topic: s.cc.DLQTopic, contextHeaders: s.cc.DLQContextHeaders, cl: s.dlqCl}
	return nil
}

func tps(m map[string][]int32) []connect.TopicPartition {
	var out []connect.TopicPartition
	for t, ps := range m {
		for _, p := range ps {
			out = append(out, connect.TopicPartition{Topic: t, Partition: p})
		}
	}
	slices.SortFunc(out, func(a, b connect.TopicPartition) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition - b.Partition)
	})
	return out
}

func (s *sinkTask) onAssigned(_ context.Context, _ *kgo.Client, m map[string][]int32) {
	s.taskMu.Lock()
	defer s.taskMu.Unlock()
	if s.closed {
		return
	}
	parts := tps(m)
	for _, tp := range parts {
		s.assigned[tp] = true
	}
	if err := s.task.Open(parts); err != nil {
		s.t.log.Error("sink task Open failed", "partitions", parts, "err", err)
	}
}

func (s *sinkTask) onRevoked(ctx context.Context, cl *kgo.Client, m map[string][]int32) {
	s.taskMu.Lock()
	defer s.taskMu.Unlock()
	if s.closed {
		return
	}
	parts := tps(m)
	s.commitLocked(ctx, cl, parts)
	s.closePartitions(parts)
}

func (s *sinkTask) onLost(_ context.Context, _ *kgo.Client, m map[string][]int32) {
	s.taskMu.Lock()
	defer s.taskMu.Unlock()
	if s.closed {
		return
	}
	s.closePartitions(tps(m))
}

func (s *sinkTask) closePartitions(parts []connect.TopicPartition) {
	if len(parts) == 0 {
		return
	}
	if err := s.task.Close(parts); err != nil {
		s.t.log.Error("sink task Close failed", "partitions", parts, "err", err)
	}
	for _, tp := range parts {
		delete(s.assigned, tp)
		delete(s.current, tp)
		delete(s.lastCommitted, tp)
		delete(s.resets, tp)
		delete(s.lag, tp)
	}
	s.sumLagLocked()
}

// updateLagLocked takes each fetched partition's high watermark and the
// offset after its last record from a poll (a few map writes per
// partition, nothing per record) and republishes the task's lag.
func (s *sinkTask) updateLagLocked(fs kgo.Fetches) {
	fs.EachPartition(func(p kgo.FetchTopicPartition) {
		tp := connect.TopicPartition{Topic: p.Topic, Partition: p.Partition}
		if p.Err != nil || !s.assigned[tp] {
			return
		}
		l, ok := s.lag[tp]
		if n := len(p.Records); n > 0 {
			l.next, ok = p.Records[n-1].Offset+1, true
		}
		if !ok {
			return // no position known yet: nothing was fetched
		}
		l.highWatermark = p.HighWatermark
		s.lag[tp] = l
	})
	s.sumLagLocked()
}

func (s *sinkTask) sumLagLocked() {
	var sum int64
	for _, l := range s.lag {
		sum += max(l.highWatermark-l.next, 0)
	}
	s.lagRecords.Store(sum)
}

func (s *sinkTask) execute(ctx context.Context) error {
	if ci, ok := s.task.(connect.ContextualSinkTask); ok {
		ci.Initialize(&sinkTaskContext{s})
	}
	if err := s.task.Start(ctx, s.props); err != nil {
		return &ConnectError{Msg: "sink task failed to start", Err: err}
	}
	cl, err := kgo.NewClient(s.copts...)
	if err != nil {
		_ = s.task.Stop()
		return &ConnectError{Msg: "sink task consumer", Err: err}
	}
	s.w.metrics.gauges.setLag(taskKey{s.t.id.Connector, s.t.id.Task}, s.lagRecords.Load)
	s.clMu.Lock()
	s.cl = cl
	s.clMu.Unlock()
	err = s.loop(ctx, cl)
	// Stop: commit what PreCommit vouches for, close the partitions, stop
	// the task (Kafka's WorkerSinkTask.close).
	s.taskMu.Lock()
	if err == nil {
		cctx, cancel := context.WithTimeout(context.Background(), s.w.stopGrace())
		s.commitLocked(cctx, cl, nil)
		cancel()
	}
	s.closePartitions(slices.Collect(maps.Keys(s.assigned)))
	s.closed = true
	s.taskMu.Unlock()
	if serr := s.task.Stop(); serr != nil {
		s.t.log.Warn("sink task stop failed", "err", serr)
	}
	// Leave the group now, failed or stopped, so other tasks get the
	// partitions (Kafka closes the consumer when the task's thread ends).
	s.closeClient()
	return err
}

// client returns the consumer (nil before the task started or after it
// closed).
func (s *sinkTask) client() *kgo.Client {
	s.clMu.Lock()
	defer s.clMu.Unlock()
	return s.cl
}

// closeClient closes the consumer once.
func (s *sinkTask) closeClient() {
	s.clMu.Lock()
	cl := s.cl
	s.cl = nil
	s.clMu.Unlock()
	if cl != nil {
		cl.CloseAllowingRebalance()
	}
}

func (s *sinkTask) loop(ctx context.Context, cl *kgo.Client) error {
	nextCommit := time.Now().Add(s.interval)
	recs := make([]*connect.Record, 0, s.maxPoll)
	for {
		if ctx.Err() != nil {
			return nil
		}
		if s.t.paused() {
			if !s.t.awaitRunning(ctx) {
				return nil
			}
		} else {
			s.t.status(storage.StateRunning, nil)
		}
		if s.commitNow.Swap(false) || !time.Now().Before(nextCommit) {
			s.taskMu.Lock()
			s.commitLocked(ctx, cl, nil)
			s.taskMu.Unlock()
			nextCommit = time.Now().Add(s.interval)
		}
		s.taskMu.Lock()
		s.applyResetsLocked(cl)
		s.taskMu.Unlock()
		pctx, cancel := context.WithDeadline(ctx, nextCommit)
		// Everything buffered: deliver puts it in batches of maxPoll.
		fs := cl.PollFetches(pctx)
		cancel()
		if ctx.Err() != nil {
			cl.AllowRebalance()
			return nil
		}
		s.taskMu.Lock()
		s.updateLagLocked(fs)
		s.taskMu.Unlock()
		var fatal error
		fs.EachError(func(t string, p int32, err error) {
			if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
				return
			}
			if errors.Is(err, kgo.ErrClientClosed) {
				fatal = err
				return
			}
			s.t.log.Warn("consumer fetch error", "topic", t, "partition", p, "err", err)
		})
		if fatal != nil {
			cl.AllowRebalance()
			return &ConnectError{Msg: "consumer closed", Err: fatal}
		}
		err := s.deliver(ctx, cl, fs, recs[:0], &nextCommit)
		cl.AllowRebalance()
		if err != nil {
			return err
		}
	}
}

// deliver converts, transforms and puts one poll's records in batches of
// at most max.poll.records, in the order the consumer returned them (so
// per partition in offset order).
//
// The loop polls everything the consumer has buffered, not max.poll.records
// at a time: franz-go sends a broker its next fetch only once the previous
// one is drained, so taking it all at once lets the next fetch travel
// while these records are converted and put (Kafka's consumer likewise
// prefetches while the application works). Between batches the loop does
// what it would do between polls: commits when asked, and stops early when
// the task or connector pauses, a partition is paused or repositioned
// (ResetOffsets, a PreCommit rewind), or the task stops. Records of such
// partitions not yet put are given back to the consumer: it is positioned
// at the first of them, so they are fetched again when that makes sense.
// A slow task gives back the rest of a poll after maxPollHold, so that
// rebalances (blocked while a poll is delivered) wait no longer than that.
func (s *sinkTask) deliver(ctx context.Context, cl *kgo.Client, fs kgo.Fetches, recs []*connect.Record, nextCommit *time.Time) error {
	n := fs.NumRecords()
	if n == 0 {
		return nil
	}
	polled := time.Now()
	s.taskMu.Lock()
	s.moved = nil
	s.taskMu.Unlock()
	s.pauseMu.Lock()
	s.pausedSincePoll = nil
	s.pauseMu.Unlock()
	all := s.polled[:0]
	fs.EachRecord(func(kr *kgo.Record) { all = append(all, kr) })
	defer func() {
		clear(all)
		s.polled = all[:0]
	}()
	for len(all) > 0 {
		batch := all[:min(len(all), s.maxPoll)]
		all = all[len(batch):]
		if err := s.deliverBatch(ctx, cl, batch, recs[:0]); err != nil {
			return err
		}
		if len(all) == 0 {
			break
		}
		now := time.Now()
		if s.commitNow.Swap(false) || !now.Before(*nextCommit) {
			s.taskMu.Lock()
			s.commitLocked(ctx, cl, nil)
			s.taskMu.Unlock()
			*nextCommit = time.Now().Add(s.interval)
		}
		all = s.dropUndeliverable(ctx, cl, all, now.Sub(polled) > maxPollHold)
	}
	return nil
}

// maxPollHold is how long the sink loop delivers one poll's records
// before giving the rest back to the consumer.
const maxPollHold = time.Second

// dropUndeliverable removes from rest, the poll's records not put yet,
// those that must not be put now: all of them when the task stops, its
// connector is paused or giveBack is set, and those of partitions the task paused or that were
// repositioned since the poll. The consumer is rewound to the first dropped
// record of each partition that was not repositioned.
func (s *sinkTask) dropUndeliverable(ctx context.Context, cl *kgo.Client, rest []*kgo.Record, giveBack bool) []*kgo.Record {
	s.taskMu.Lock()
	moved := s.moved
	s.moved = nil
	s.taskMu.Unlock()
	s.pauseMu.Lock()
	paused := s.pausedSincePoll
	s.pausedSincePoll = nil
	s.pauseMu.Unlock()
	all := giveBack || ctx.Err() != nil || s.t.paused()
	if !all && len(moved) == 0 && len(paused) == 0 {
		return rest
	}
	if ctx.Err() != nil {
		// The consumer closes; what was put is committed on the way out.
		return nil
	}
	keep := rest[:0]
	rewind := map[string]map[int32]kgo.EpochOffset{}
	for _, kr := range rest {
		tp := connect.TopicPartition{Topic: kr.Topic, Partition: kr.Partition}
		if moved[tp] {
			continue
		}
		if all || paused[tp] {
			if _, ok := rewind[kr.Topic][kr.Partition]; !ok {
				addOffset(rewind, tp, kr.Offset)
			}
			continue
		}
		keep = append(keep, kr)
	}
	clear(rest[len(keep):])
	if len(rewind) > 0 {
		cl.SetOffsets(rewind)
	}
	return keep
}

// deliverBatch converts, transforms and puts one batch of records.
func (s *sinkTask) deliverBatch(ctx context.Context, cl *kgo.Client, krs []*kgo.Record, recs []*connect.Record) error {
	n := len(krs)
	s.m.sinkRead.Add(float64(n))
	errant := s.wantErrant.Load()
	if errant {
		s.batch = make(map[recordKey]*kgo.Record, n)
	}
	// The poll's records live in one slab: one allocation, not one per
	// record (a task that keeps some keeps the slab, which is fine).
	slab := make([]connect.Record, n)
	done := s.convertParallel(krs, slab)
	lastTopic := ""
	for i, kr := range krs {
		if errant {
			s.batch[recordKey{kr.Topic, kr.Partition, kr.Offset}] = kr
		}
		var (
			r   *connect.Record
			ok  bool
			err error
		)
		if done != nil && done[i] {
			r, ok, err = s.transform(ctx, kr, &slab[i])
		} else {
			r, ok, err = s.convert(ctx, kr, &slab[i])
		}
		if err != nil {
			return err
		}
		if ok {
			recs = append(recs, r)
		}
		if kr.Topic != lastTopic {
			lastTopic = kr.Topic
			if !s.tracked[kr.Topic] {
				s.tracked[kr.Topic] = true
				if s.w.topics != nil && s.w.cfg.TopicTrackingEnable {
					s.w.recordActiveTopic(s.t.id, kr.Topic)
				}
			}
		}
	}
	if err := s.put(ctx, recs); err != nil {
		return err
	}
	// Put succeeded: these records' offsets may be committed once
	// PreCommit agrees. A partition's records are in offset order.
	s.taskMu.Lock()
	var last connect.TopicPartition
	for i, kr := range krs {
		if i == n-1 || krs[i+1].Partition != kr.Partition || krs[i+1].Topic != kr.Topic {
			last = connect.TopicPartition{Topic: kr.Topic, Partition: kr.Partition}
			if s.assigned[last] {
				s.current[last] = kr.Offset + 1
			}
		}
	}
	s.applyResetsLocked(cl)
	s.taskMu.Unlock()
	s.batch = nil
	return nil
}

// parallelMin is the smallest batch converted in parallel.
const parallelMin = 64

// convertParallel converts the batch's records without headers into slab
// on several goroutines when the key and value converters are concurrent
// (connect.ConcurrentConverter) and more than one CPU is there to use. It
// returns which records are converted (nil: none); the others, and every
// failure, go through convert in order, with the error handling.
func (s *sinkTask) convertParallel(krs []*kgo.Record, slab []connect.Record) []bool {
	workers := min(s.parallel, len(krs)/(parallelMin/2))
	if workers < 2 {
		return nil
	}
	done := s.done[:0]
	if cap(done) < len(krs) {
		done = make([]bool, len(krs))
	}
	done = done[:len(krs)]
	s.done = done
	work := func(from, to int) {
		for i := from; i < to; i++ {
			kr := krs[i]
			done[i] = len(kr.Headers) == 0 && s.convertPlain(kr, &slab[i])
		}
	}
	var wg sync.WaitGroup
	per := (len(krs) + workers - 1) / workers
	for from := per; from < len(krs); from += per {
		wg.Go(func() { work(from, min(from+per, len(krs))) })
	}
	work(0, min(per, len(krs)))
	wg.Wait()
	return done
}

// put delivers records, retrying while the task says RetriableError
// (Kafka retries such a batch until it succeeds or the task stops).
func (s *sinkTask) put(ctx context.Context, recs []*connect.Record) error {
	retried := false
	for {
		s.taskMu.Lock()
		err := s.task.Put(ctx, recs)
		timeout := s.timeout
		s.timeout = 0
		s.taskMu.Unlock()
		if err == nil {
			s.m.sinkPut.Add(float64(len(recs)))
			s.m.putBatch.Observe(float64(len(recs)))
			if retried {
				s.t.runningCause(nil)
			}
			return nil
		}
		var re *connect.RetriableError
		if !errors.As(err, &re) {
			return &ConnectError{Msg: "Exiting WorkerSinkTask due to unrecoverable exception.", Err: err}
		}
		retried = true
		s.t.runningCause(err)
		s.m.retries.Inc()
		if timeout <= 0 {
			timeout = retryDelayMin
		}
		s.t.log.Warn("sink task asked to retry its batch", "records", len(recs), "after", timeout, "err", err)
		if !sleepCtx(ctx, timeout) {
			return nil
		}
	}
}

// convert turns a consumed record into a sink record: headers, key and
// value through the converters, then the transformations.
func (s *sinkTask) convert(ctx context.Context, kr *kgo.Record, r *connect.Record) (*connect.Record, bool, error) {
	tp := s.plugins
	initSinkRecord(kr, r)
	if len(kr.Headers) > 0 {
		if err := s.convertHeaders(kr, r); err != nil {
			if ok, fatal := s.convertFailed(ctx, kr, r, StageHeaderConverter, err); !ok {
				return nil, false, fatal
			}
		}
	}
	var err error
	if r.KeySchema, r.Key, err = tp.keyConv.ToConnectData(kr.Topic, &r.Headers, kr.Key); err != nil {
		if ok, fatal := s.convertFailed(ctx, kr, r, StageKeyConverter, err); !ok {
			return nil, false, fatal
		}
	}
	if r.ValueSchema, r.Value, err = tp.valueConv.ToConnectData(kr.Topic, &r.Headers, kr.Value); err != nil {
		if ok, fatal := s.convertFailed(ctx, kr, r, StageValueConverter, err); !ok {
			return nil, false, fatal
		}
	}
	return s.transform(ctx, kr, r)
}

// initSinkRecord sets r's fields that come straight from kr.
func initSinkRecord(kr *kgo.Record, r *connect.Record) {
	*r = connect.Record{
		Topic: kr.Topic, Partition: kr.Partition, Offset: kr.Offset,
		Timestamp: kr.Timestamp.UnixMilli(), TimestampType: connect.TimestampType(kr.Attrs.TimestampType()),
		OriginalTopic: kr.Topic, OriginalPartition: kr.Partition, OriginalOffset: kr.Offset,
	}
	if kr.Timestamp.IsZero() {
		r.Timestamp = -1
	}
}

// convertPlain converts a record without headers, as convert does when
// nothing fails, and reports whether nothing failed. It only reads the
// task's state, so records can go through it in parallel with concurrent
// converters.
func (s *sinkTask) convertPlain(kr *kgo.Record, r *connect.Record) bool {
	tp := s.plugins
	initSinkRecord(kr, r)
	var err error
	if r.KeySchema, r.Key, err = tp.keyConv.ToConnectData(kr.Topic, &r.Headers, kr.Key); err != nil {
		return false
	}
	r.ValueSchema, r.Value, err = tp.valueConv.ToConnectData(kr.Topic, &r.Headers, kr.Value)
	return err == nil
}

// transform applies the transformation chain to a converted record.
func (s *sinkTask) transform(ctx context.Context, kr *kgo.Record, r *connect.Record) (*connect.Record, bool, error) {
	tp := s.plugins
	if len(tp.chain) == 0 {
		return r, true, nil
	}
	out, class, err := applyChain(tp.chain, r)
	if err != nil {
		ok, fatal := s.eh.handle(ctx, failure{stage: StageTransformation, class: class, err: err, consumed: kr}, func() error {
			var e error
			out, class, e = applyChain(tp.chain, r)
			return e
		})
		if !ok {
			return nil, false, fatal
		}
	}
	return out, out != nil, nil
}

func (s *sinkTask) convertHeaders(kr *kgo.Record, r *connect.Record) error {
	r.Headers = make(connect.Headers, 0, len(kr.Headers))
	for _, h := range kr.Headers {
		sc, v, err := s.plugins.headerConv.ToConnectHeader(kr.Topic, h.Key, h.Value)
		if err != nil {
			return err
		}
		r.Headers = append(r.Headers, connect.Header{Key: h.Key, Schema: sc, Value: v})
	}
	return nil
}

func (s *sinkTask) convertFailed(ctx context.Context, kr *kgo.Record, r *connect.Record, stage Stage, err error) (bool, error) {
	tp := s.plugins
	var class string
	var op func() error
	switch stage {
	case StageKeyConverter:
		class = tp.keyClass
		op = func() (e error) {
			r.KeySchema, r.Key, e = tp.keyConv.ToConnectData(kr.Topic, &r.Headers, kr.Key)
			return e
		}
	case StageValueConverter:
		class = tp.valueClass
		op = func() (e error) {
			r.ValueSchema, r.Value, e = tp.valueConv.ToConnectData(kr.Topic, &r.Headers, kr.Value)
			return e
		}
	default:
		class = tp.headerClass
		op = func() error { return s.convertHeaders(kr, r) }
	}
	return s.eh.handle(ctx, failure{stage: stage, class: class, err: err, consumed: kr}, op)
}

// commitLocked asks PreCommit what is durable among the delivered offsets
// (of parts, or all assigned partitions) and commits that. A failing
// PreCommit rewinds the consumer to the last committed offsets so the
// records are delivered again (Kafka's onCommitCompleted with an error).
func (s *sinkTask) commitLocked(ctx context.Context, cl *kgo.Client, parts []connect.TopicPartition) {
	offsets := map[connect.TopicPartition]int64{}
	if parts == nil {
		maps.Copy(offsets, s.current)
	} else {
		for _, tp := range parts {
			if o, ok := s.current[tp]; ok {
				offsets[tp] = o
			}
		}
	}
	committable, err := s.task.PreCommit(ctx, maps.Clone(offsets))
	if err != nil {
		s.m.offsetFailures.Inc()
		s.t.log.Error("sink task PreCommit failed; rewinding to the last committed offsets", "err", err)
		rewind := map[string]map[int32]kgo.EpochOffset{}
		for tp := range offsets {
			if o, ok := s.lastCommitted[tp]; ok {
				addOffset(rewind, tp, o)
				s.current[tp] = o
				s.markMovedLocked(tp)
			}
		}
		if len(rewind) > 0 {
			cl.SetOffsets(rewind)
		}
		return
	}
	commit := map[string]map[int32]kgo.EpochOffset{}
	var committed []connect.TopicPartition
	for tp, o := range committable {
		if !s.assigned[tp] {
			s.t.log.Debug("ignoring PreCommit offset of a partition not assigned to the task", "topic", tp.Topic, "partition", tp.Partition)
			continue
		}
		if parts != nil && !slices.Contains(parts, tp) {
			continue
		}
		if last, ok := s.lastCommitted[tp]; ok && last == o {
			continue
		}
		addOffset(commit, tp, o)
		committed = append(committed, tp)
	}
	if len(commit) == 0 {
		return
	}
	var cerr error
	start := time.Now()
	cl.CommitOffsetsSync(ctx, commit, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		if err != nil {
			cerr = err
			return
		}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if e := kerr.ErrorForCode(p.ErrorCode); e != nil && cerr == nil {
					cerr = fmt.Errorf("%s-%d: %w", t.Topic, p.Partition, e)
				}
			}
		}
	})
	if cerr != nil {
		s.m.offsetFailures.Inc()
		s.t.log.Warn("sink offset commit failed; will retry", "err", cerr)
		return
	}
	s.m.commitTime.Observe(time.Since(start).Seconds())
	for _, tp := range committed {
		s.lastCommitted[tp] = commit[tp.Topic][tp.Partition].Offset
	}
	s.m.offsetCommits.Inc()
}

func addOffset(m map[string]map[int32]kgo.EpochOffset, tp connect.TopicPartition, o int64) {
	if m[tp.Topic] == nil {
		m[tp.Topic] = map[int32]kgo.EpochOffset{}
	}
	m[tp.Topic][tp.Partition] = kgo.EpochOffset{Epoch: -1, Offset: o}
}

// applyResetsLocked seeks to offsets the task asked for with ResetOffsets.
func (s *sinkTask) applyResetsLocked(cl *kgo.Client) {
	if len(s.resets) == 0 {
		return
	}
	seek := map[string]map[int32]kgo.EpochOffset{}
	for tp, o := range s.resets {
		if s.assigned[tp] {
			addOffset(seek, tp, o)
			s.current[tp] = o
			s.markMovedLocked(tp)
		}
	}
	clear(s.resets)
	if len(seek) > 0 {
		cl.SetOffsets(seek)
	}
}

// markMovedLocked notes that tp was repositioned: the rest of the current
// poll's records of tp are not to be put.
func (s *sinkTask) markMovedLocked(tp connect.TopicPartition) {
	if s.moved == nil {
		s.moved = map[connect.TopicPartition]bool{}
	}
	s.moved[tp] = true
}

func (s *sinkTask) close(abandoned bool) {
	if abandoned {
		s.t.cancel()
	}
	s.closeClient()
	if s.dlqCl != nil {
		s.dlqCl.Close()
	}
	closeChain(s.plugins.chain)
}

// sinkTaskContext is a sink task's view of the runtime. Its methods are
// called from the task's own calls (Put, PreCommit, Open, Close), which
// hold taskMu, or from the task's goroutines, which do not.
type sinkTaskContext struct{ s *sinkTask }

var _ connect.SinkTaskContext = (*sinkTaskContext)(nil)

func (c *sinkTaskContext) ResetOffsets(offsets map[connect.TopicPartition]int64) {
	// Called from inside Put (taskMu held) or Open; applied after the
	// call returns.
	maps.Copy(c.s.resets, offsets)
}

func (c *sinkTaskContext) Timeout(d time.Duration) { c.s.timeout = d }

func (c *sinkTaskContext) Assignment() []connect.TopicPartition {
	out := slices.Collect(maps.Keys(c.s.assigned))
	slices.SortFunc(out, func(a, b connect.TopicPartition) int {
		if x := strings.Compare(a.Topic, b.Topic); x != 0 {
			return x
		}
		return int(a.Partition - b.Partition)
	})
	return out
}

func (c *sinkTaskContext) Pause(parts ...connect.TopicPartition) {
	if cl := c.s.client(); cl != nil {
		c.s.pauseMu.Lock()
		if c.s.pausedSincePoll == nil {
			c.s.pausedSincePoll = map[connect.TopicPartition]bool{}
		}
		for _, tp := range parts {
			c.s.pausedSincePoll[tp] = true
		}
		c.s.pauseMu.Unlock()
		cl.PauseFetchPartitions(tpMap(parts))
	}
}

func (c *sinkTaskContext) Resume(parts ...connect.TopicPartition) {
	if cl := c.s.client(); cl != nil {
		cl.ResumeFetchPartitions(tpMap(parts))
	}
}

func tpMap(parts []connect.TopicPartition) map[string][]int32 {
	m := map[string][]int32{}
	for _, tp := range parts {
		m[tp.Topic] = append(m[tp.Topic], tp.Partition)
	}
	return m
}

func (c *sinkTaskContext) RequestCommit() { c.s.commitNow.Store(true) }

// ReportCause is connect.CauseReporter: the cause shows in the task's
// RUNNING status until cleared with nil.
func (c *sinkTaskContext) ReportCause(err error) { c.s.t.runningCause(err) }

func (c *sinkTaskContext) ErrantRecordReporter() connect.ErrantRecordReporter {
	if !c.s.eh.tolerateAll && c.s.eh.dlq == nil {
		return nil
	}
	c.s.wantErrant.Store(true)
	return &errantReporter{c.s}
}

func (c *sinkTaskContext) Config() map[string]string { return maps.Clone(c.s.props) }

// errantReporter sends records the task could not write to the error
// reporters (log, dead letter queue), as read from Kafka.
type errantReporter struct{ s *sinkTask }

func (e *errantReporter) Report(ctx context.Context, r *connect.Record, err error) error {
	s := e.s
	kr := s.batch[recordKey{r.OriginalTopic, r.OriginalPartition, r.OriginalOffset}]
	if kr == nil {
		// Not from the current batch (or reported before the reporter
		// was asked for): rebuild the bytes through the converters.
		var cerr error
		kr = &kgo.Record{Topic: r.OriginalTopic, Partition: r.OriginalPartition, Offset: r.OriginalOffset}
		if kr.Key, cerr = s.plugins.keyConv.FromConnectData(r.Topic, &r.Headers, r.KeySchema, r.Key); cerr != nil {
			return fmt.Errorf("errant record key: %w", cerr)
		}
		if kr.Value, cerr = s.plugins.valueConv.FromConnectData(r.Topic, &r.Headers, r.ValueSchema, r.Value); cerr != nil {
			return fmt.Errorf("errant record value: %w", cerr)
		}
	}
	s.m.errors.Inc()
	s.eh.report(ctx, failure{stage: StageTaskPut, class: s.cc.Plugin.Class, err: err, consumed: kr})
	if !s.eh.tolerateAll {
		return &ConnectError{Msg: "Tolerance exceeded in error handler", Err: err}
	}
	s.m.skipped.Inc()
	return nil
}
