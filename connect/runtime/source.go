package runtime

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/storage"
)

// sourceTask runs a SourceTask (Kafka's WorkerSourceTask): poll,
// transform, convert, produce; offsets are committed every
// offset.flush.interval.ms up to the records the brokers acknowledged.
type sourceTask struct {
	w       *Worker
	t       *workerTask
	cc      *ConnectorConfig
	props   map[string]string
	task    connect.SourceTask
	plugins *taskPlugins
	eh      *errorHandler
	m       *taskMetrics
	cl      *kgo.Client
	adm     *kadm.Client // topic creation; nil when off

	submitted *submittedRecords
	promise   func(*kgo.Record, error)
	// keyAppend/valueAppend are the converters' append forms (nil when
	// they have none); arena is the buffer they append a poll into.
	keyAppend, valueAppend appendConverter
	headerAppend           headerAppendConverter
	arena                  []byte
	// cur is the arena of the poll being sent (arena is its buffer),
	// workerArenas those of convertParallel's goroutines.
	cur          *pollArena
	workerArenas []*pollArena
	arenaLen     int // how much of its arena the last poll used
	// parallel is how many goroutines convert a poll (0 or 1: the
	// loop's own); pre holds what they converted, arenaUse how much of
	// its buffer each used last time.
	parallel int
	pre      []preconverted
	arenaUse []int
	// sendErr is the first producer failure not tolerated: the task fails
	// at its next loop.
	sendErr atomic.Pointer[error]
	// failLoop cancels the task loop's context (set before the first
	// record is produced).
	failLoop context.CancelFunc

	commitMu  sync.Mutex // one offset commit at a time
	closeOnce sync.Once
	pending   map[string]connect.SourcePartitionOffset

	// maxBlock is the producer's max.block.ms (0: unbounded, Kafka
	// Connect's Long.MAX_VALUE default): how long a record may wait for
	// its topic to appear in the metadata before the task fails.
	maxBlock time.Duration

	topicsMu sync.Mutex
	created  map[string]bool       // topics known to exist (topic creation)
	acked    map[string]bool       // topics with an acknowledged record (maxBlock)
	waits    map[string]*topicWait // records' wait for a topic not acknowledged yet (maxBlock)
	tracked  map[string]bool       // topics recorded as active
	commitOK atomic.Bool           // a RecordCommitter task
	// written counts acknowledged records; the committer adds what is new
	// to the metric (one atomic add per record instead of a float CAS).
	written, reported atomic.Int64
}

func (w *Worker) newSourceTask(t *workerTask, cc *ConnectorConfig, props map[string]string) (*sourceTask, error) {
	conn, ok := cc.Plugin.New().(connect.SourceConnector)
	if !ok {
		return nil, fmt.Errorf("%s is not a source connector", cc.Plugin.Class)
	}
	tp, err := w.buildPlugins(cc)
	if err != nil {
		return nil, err
	}
	m := w.metrics.forTask(t.id.Connector, t.id.Task)
	s := &sourceTask{w: w, t: t, cc: cc, props: props, task: conn.NewTask(), plugins: tp, m: m,
		eh: newErrorHandler(cc, t.id.String(), t.id.Connector, t.id.Task, t.log, m), submitted: newSubmittedRecords(),
		pending: map[string]connect.SourcePartitionOffset{}, created: map[string]bool{}, tracked: map[string]bool{},
		acked: map[string]bool{}, waits: map[string]*topicWait{}}
	// Kafka's producer defaults: acks=all (Connect), no compression.
	base := map[string]string{"client.id": "connector-producer-" + t.id.String(), "acks": "all", "compression.type": "none"}
	ov, err := w.overrides(cc, ProducerOverridePrefix)
	if err != nil {
		closeChain(tp.chain)
		return nil, err
	}
	props2 := w.cfg.ClientProps(ProducerClient, base, ov)
	opts, err := KafkaClientOpts(ProducerClient, props2, t.log)
	if err != nil {
		closeChain(tp.chain)
		return nil, err
	}
	// max.block.ms bounds the wait for a topic's metadata (Kafka's
	// producer.waitOnMetadata); Connect's default is Long.MAX_VALUE.
	if v, ok := props2["max.block.ms"]; ok {
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil && n >= 0 && n < math.MaxInt64/int64(time.Millisecond) {
			s.maxBlock = max(time.Duration(n)*time.Millisecond, time.Millisecond)
		}
	}
	// Kafka's producer retries until it succeeds (delivery.timeout.ms is
	// Integer.MAX_VALUE for Connect); explicit partitions are honoured.
	// Like Kafka's producer (max.block.ms is Long.MAX_VALUE for Connect),
	// wait for a missing topic instead of failing, and let the broker
	// auto-create it when it is configured to; a finite max.block.ms
	// bounds that wait (produceCtx).
	opts = append([]kgo.Opt{
		kgo.RecordPartitioner(connectPartitioner{kgo.StickyKeyPartitioner(nil)}),
		kgo.AllowAutoTopicCreation(),
		kgo.UnknownTopicRetries(-1),
		kgo.ProducerLinger(5 * time.Millisecond),
	}, opts...)
	if s.cl, err = kgo.NewClient(opts...); err != nil {
		closeChain(tp.chain)
		return nil, fmt.Errorf("producer: %w", err)
	}
	if w.cfg.TopicCreationEnable && cc.TopicCreation != nil {
		aov, err := w.overrides(cc, AdminOverridePrefix)
		var aopts []kgo.Opt
		if err == nil {
			aprops := w.cfg.ClientProps(AdminClient, map[string]string{"client.id": "connector-adminclient-" + t.id.String()}, aov)
			aopts, err = KafkaClientOpts(AdminClient, aprops, t.log)
		}
		if err == nil {
			var acl *kgo.Client
			if acl, err = kgo.NewClient(aopts...); err == nil {
				s.adm = kadm.NewClient(acl)
			}
		}
		if err != nil {
			s.cl.Close()
			closeChain(tp.chain)
			return nil, fmt.Errorf("admin client for topic creation: %w", err)
		}
	}
	_, isCommitter := s.task.(connect.RecordCommitter)
	s.commitOK.Store(isCommitter)
	s.promise = s.onSent
	s.headerAppend, _ = tp.headerConv.(headerAppendConverter)
	s.keyAppend, _ = tp.keyConv.(appendConverter)
	s.valueAppend, _ = tp.valueConv.(appendConverter)
	_, kc := tp.keyConv.(connect.ConcurrentConverter)
	_, vc := tp.valueConv.(connect.ConcurrentConverter)
	if kc && vc && len(tp.chain) == 0 {
		s.parallel = min(goruntime.GOMAXPROCS(0), 4)
		s.arenaUse = make([]int, s.parallel)
	}
	return s, nil
}

// connectPartitioner sends records with an explicit partition (>= 0)
// there and lets Kafka's default partitioner place the others.
type connectPartitioner struct{ def kgo.Partitioner }

func (p connectPartitioner) ForTopic(t string) kgo.TopicPartitioner {
	return connectTopicPartitioner{p.def.ForTopic(t)}
}

type connectTopicPartitioner struct{ def kgo.TopicPartitioner }

func (p connectTopicPartitioner) OnNewBatch() {
	if nb, ok := p.def.(interface{ OnNewBatch() }); ok {
		nb.OnNewBatch()
	}
}
func (p connectTopicPartitioner) RequiresConsistency(r *kgo.Record) bool {
	return r.Partition >= 0 || p.def.RequiresConsistency(r)
}
func (p connectTopicPartitioner) Partition(r *kgo.Record, n int) int {
	if r.Partition >= 0 && int(r.Partition) < n {
		return int(r.Partition)
	}
	return p.def.Partition(r, n)
}

type sourceTaskContext struct{ s *sourceTask }

func (c *sourceTaskContext) Offsets() connect.OffsetReader {
	return &offsetReader{store: c.s.w.offsets, connector: c.s.t.id.Connector}
}
func (c *sourceTaskContext) Config() map[string]string { return maps.Clone(c.s.props) }

func (s *sourceTask) execute(ctx context.Context) error {
	if ci, ok := s.task.(connect.ContextualSourceTask); ok {
		ci.Initialize(&sourceTaskContext{s})
	}
	if err := s.task.Start(ctx, s.props); err != nil {
		return &ConnectError{Msg: "source task failed to start", Err: err}
	}
	defer func() {
		if err := s.task.Stop(); err != nil {
			s.t.log.Warn("source task stop failed", "err", err)
		}
	}()
	s.w.metrics.gauges.setActive(taskKey{s.t.id.Connector, s.t.id.Task}, func() int64 { return int64(s.submitted.pending()) })
	commitDone := make(chan struct{})
	commitCtx, stopCommits := context.WithCancel(context.Background())
	go s.commitLoop(commitCtx, commitDone)
	err := s.loop(ctx)
	stopCommits()
	<-commitDone
	// A clean stop flushes what was sent and commits it, so a restart
	// resumes after it (Kafka commits on stop too).
	fctx, cancel := context.WithTimeout(context.Background(), s.w.stopGrace())
	if ferr := s.cl.Flush(fctx); ferr != nil {
		s.t.log.Warn("producer did not flush before stopping", "err", ferr)
	}
	cancel()
	s.commitOffsets()
	if err == nil {
		if p := s.sendErr.Load(); p != nil {
			err = *p
		}
	}
	// Done, failed or stopped: release the clients now (Kafka closes the
	// producer when the task's thread ends).
	s.closeClients()
	return err
}

func (s *sourceTask) closeClients() {
	s.closeOnce.Do(func() {
		s.cl.Close()
		s.topicsMu.Lock()
		for _, w := range s.waits {
			w.cancel()
		}
		s.topicsMu.Unlock()
		if s.adm != nil {
			s.adm.Close()
		}
	})
}

func (s *sourceTask) loop(parent context.Context) error {
	// A send failure cancels ctx, so a task blocked in Poll learns of it
	// at once rather than at its next record.
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	s.failLoop = cancel
	var batch []*connect.Record
	for {
		if p := s.sendErr.Load(); p != nil {
			return *p
		}
		if ctx.Err() != nil {
			return nil
		}
		if s.t.paused() || batch == nil {
			if !s.t.awaitRunning(ctx) {
				return nil
			}
		}
		if batch == nil {
			recs, err := s.task.Poll(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				var re *connect.RetriableError
				if errors.As(err, &re) {
					s.t.log.Warn("source task poll failed; retrying", "err", err)
					continue
				}
				return &ConnectError{Msg: "source task poll failed", Err: err}
			}
			if len(recs) == 0 {
				continue
			}
			s.m.sourcePolled.Add(float64(len(recs)))
			s.m.pollBatch.Observe(float64(len(recs)))
			batch = recs
		}
		if err := s.send(ctx, batch); err != nil {
			if ctx.Err() != nil {
				return nil // stopping while waiting (topic creation)
			}
			return err
		}
		batch = nil
	}
}

// send transforms, converts and produces a polled batch.
func (s *sourceTask) send(ctx context.Context, batch []*connect.Record) error {
	tp := s.plugins
	// One lock for the poll's submissions; the producer's callbacks need
	// no lock to acknowledge.
	s.submitted.mu.Lock()
	defer s.submitted.mu.Unlock()
	// A buffer per poll, recycled once its records are acknowledged (the
	// previous one may still be referenced by records in flight). Sized
	// from the last poll's use.
	cur := getArena(max(s.arenaLen+s.arenaLen/4, 4096))
	s.cur, s.arena = cur, cur.buf
	defer func() {
		cur.buf = s.arena // it may have grown: keep the larger buffer
		s.arenaLen = len(s.arena)
		// Nothing may append to the buffer once it can be recycled.
		s.cur, s.arena = nil, nil
		cur.release()
		for _, wa := range s.workerArenas {
			wa.release()
		}
		s.workerArenas = s.workerArenas[:0]
	}()
	pc := s.convertParallel(batch)
	for i, pre := range batch {
		if pre == nil {
			continue
		}
		if pc != nil && pc[i].ok {
			or := s.outRecord(pre, pre)
			or.Key, or.Value = pc[i].key, pc[i].value
			or.arena = pc[i].arena
			pc[i] = preconverted{}
			if err := s.produce(ctx, pre, or); err != nil {
				return err
			}
			continue
		}
		r := pre
		if len(tp.chain) > 0 {
			// Transformations may change the record in place; the task
			// gets its own record back in CommitRecord.
			var class string
			var err error
			r, class, err = applyChain(tp.chain, pre.Clone())
			if err != nil {
				ok, fatal := s.eh.handle(ctx, failure{stage: StageTransformation, class: class, err: err, source: pre}, func() error {
					var e error
					r, class, e = applyChain(tp.chain, pre.Clone())
					return e
				})
				if fatal != nil {
					return fatal
				}
				if !ok {
					s.skip(pre)
					continue
				}
			}
			if r == nil {
				s.skip(pre)
				continue
			}
		}
		or, ok, err := s.convert(ctx, pre, r)
		if err != nil {
			return err
		}
		if !ok {
			s.skip(pre)
			continue
		}
		if err := s.produce(ctx, pre, or); err != nil {
			return err
		}
	}
	return nil
}

// produce submits a converted record and hands it to the producer.
func (s *sourceTask) produce(ctx context.Context, pre *connect.Record, or *outRecord) error {
	if err := s.ensureTopic(ctx, or.Topic); err != nil {
		return err
	}
	s.submitted.submitLocked(&or.sub, pre.SourcePartition, offsetOf(pre))
	pctx := context.Background()
	if s.maxBlock > 0 {
		pctx = s.produceCtx(or.Topic)
	}
	if or.arena == nil {
		or.arena = s.cur
	}
	if or.arena != nil {
		or.arena.hold()
	}
	s.cl.Produce(pctx, &or.Record, s.promise)
	return nil
}

// preconverted is a record's key and value converted ahead by
// convertParallel.
type preconverted struct {
	key, value []byte
	ok         bool
	arena      *pollArena
}

// convertParallel converts the keys and values of a poll's records
// without headers on several goroutines, each into its own buffer, when
// the task has no transformations, its key and value converters are
// concurrent (connect.ConcurrentConverter) and more than one CPU is
// there to use. It returns what it converted (nil: nothing); the rest,
// and every failure, go through convert in order, with the error
// handling. Records are still produced in the task's order.
func (s *sourceTask) convertParallel(batch []*connect.Record) []preconverted {
	workers := min(s.parallel, len(batch)/(parallelMin/2))
	if workers < 2 {
		return nil
	}
	pc := s.pre[:0]
	if cap(pc) < len(batch) {
		pc = make([]preconverted, len(batch))
	}
	pc = pc[:len(batch)]
	s.pre = pc
	tp := s.plugins
	for w := 0; w < workers; w++ {
		s.workerArenas = append(s.workerArenas, getArena(max(s.arenaUse[w]+s.arenaUse[w]/4, 4096)))
	}
	work := func(w, from, to int) {
		// A buffer per poll and goroutine, as the loop's own.
		wa := s.workerArenas[w]
		arena := wa.buf
		for i := from; i < to; i++ {
			r := batch[i]
			if r == nil || len(r.Headers) > 0 {
				continue
			}
			k, a, err := appendConnect(tp.keyConv, s.keyAppend, arena, r, r.KeySchema, r.Key)
			if err != nil {
				continue
			}
			v, a, err := appendConnect(tp.valueConv, s.valueAppend, a, r, r.ValueSchema, r.Value)
			if err != nil {
				continue
			}
			arena = a
			pc[i] = preconverted{key: k, value: v, ok: true, arena: wa}
		}
		wa.buf = arena
		s.arenaUse[w] = len(arena)
	}
	var wg sync.WaitGroup
	per := (len(batch) + workers - 1) / workers
	for w, from := 1, per; from < len(batch); w, from = w+1, from+per {
		wg.Go(func() { work(w, from, min(from+per, len(batch))) })
	}
	work(0, 0, min(per, len(batch)))
	wg.Wait()
	return pc
}

// appendConnect converts one key or value, appending to arena when the
// converter can; it returns the bytes and the grown arena.
func appendConnect(c connect.Converter, ac appendConverter, arena []byte, r *connect.Record, sc *connect.Schema, v any) (out, grown []byte, err error) {
	if ac == nil || (sc == nil && v == nil) {
		out, err = c.FromConnectData(r.Topic, &r.Headers, sc, v)
		return out, arena, err
	}
	start := len(arena)
	grown, err = ac.AppendConnectData(arena, sc, v)
	if err != nil {
		return nil, arena, err
	}
	// Full slice expression: nothing appended later may write into it.
	return grown[start:len(grown):len(grown)], grown, nil
}

// outRecord is a record on its way to Kafka with what the producer
// callback needs, in one allocation: the callback gets the *kgo.Record
// back and, Record being the first field, finds the rest from it.
type outRecord struct {
	kgo.Record
	pre *connect.Record
	sub submittedRecord
	// arena holds the buffer the key and value were converted into until
	// the producer is done with the record.
	arena *pollArena
}

// onSent is the producer callback for every record (one func value for
// the task, not one closure per record).
func (s *sourceTask) onSent(kr *kgo.Record, err error) {
	or := (*outRecord)(unsafe.Pointer(kr))
	s.sent(or, err)
}

// skip handles a record that was dropped or whose failure was tolerated:
// its offset may be committed, and the task hears it was not sent.
func (s *sourceTask) skip(pre *connect.Record) {
	r := &submittedRecord{}
	s.submitted.submitLocked(r, pre.SourcePartition, offsetOf(pre))
	s.submitted.ack(r)
	s.commitRecord(pre, nil)
}

func (s *sourceTask) sent(or *outRecord, err error) {
	kr := &or.Record
	if or.arena != nil {
		// The producer is done with the record's bytes.
		kr.Key, kr.Value = nil, nil
		or.arena.release()
		or.arena = nil
	}
	if err != nil {
		if s.eh.tolerateAll {
			s.t.log.Error("failed to send a record to Kafka; skipping it (errors.tolerance=all)", "topic", kr.Topic, "err", err)
			s.m.errors.Inc()
			s.m.skipped.Inc()
			s.commitRecord(or.pre, nil)
			// Last: once acknowledged, the record may be reused.
			s.submitted.ack(&or.sub)
			return
		}
		if s.maxBlock > 0 && errors.Is(err, context.DeadlineExceeded) {
			// The record's wait for its topic's metadata ran out.
			err = &KafkaTimeoutError{Msg: fmt.Sprintf("Topic %s not present in metadata after %d ms.", kr.Topic, s.maxBlock.Milliseconds())}
		}
		// Kafka's AbstractWorkerSourceTask: the task fails at its next
		// loop; nothing after this record's offset is committed.
		s.t.log.Error("failed to send record to Kafka", "topic", kr.Topic, "partition", kr.Partition, "err", err)
		ferr := error(&ConnectError{Msg: "Unrecoverable exception from producer send callback", Err: err})
		if s.sendErr.CompareAndSwap(nil, &ferr) && s.failLoop != nil {
			s.failLoop()
		}
		return
	}
	if s.maxBlock > 0 {
		s.topicAcked(kr.Topic)
	}
	s.written.Add(1)
	if s.commitOK.Load() {
		s.commitRecord(or.pre, &connect.RecordMetadata{Topic: kr.Topic, Partition: kr.Partition, Offset: kr.Offset, Timestamp: kr.Timestamp})
	}
	s.trackTopic(kr.Topic)
	// Last: once acknowledged and out of the queue, the record may be
	// reused (submittedRecords.free).
	s.submitted.ack(&or.sub)
}

func (s *sourceTask) commitRecord(pre *connect.Record, md *connect.RecordMetadata) {
	if !s.commitOK.Load() {
		return
	}
	if err := s.task.(connect.RecordCommitter).CommitRecord(pre, md); err != nil {
		s.t.log.Warn("source task CommitRecord failed", "err", err)
	}
}

// appendConverter is implemented by converters that can append their
// output to a buffer (JsonConverter): the worker then writes a whole
// poll's values into one buffer instead of allocating one per record.
type appendConverter interface {
	AppendConnectData(dst []byte, s *connect.Schema, v any) ([]byte, error)
}

// headerAppendConverter is a header converter that appends (as
// SimpleHeaderConverter does).
type headerAppendConverter interface {
	AppendConnectHeader(dst []byte, topic, key string, s *connect.Schema, v any) ([]byte, error)
}

// convert turns a transformed record into a Kafka record. The happy
// path allocates only the record (and, for appending converters, a
// share of the batch's buffer); retries and tolerance live in
// convertFailed.
func (s *sourceTask) convert(ctx context.Context, pre, r *connect.Record) (*outRecord, bool, error) {
	tp := s.plugins
	or := s.outRecord(pre, r)
	kr := &or.Record
	var err error
	if kr.Key, err = s.fromConnect(tp.keyConv, s.keyAppend, r, r.KeySchema, r.Key); err != nil {
		if ok, fatal := s.convertFailed(ctx, pre, r, kr, StageKeyConverter, err); !ok {
			return nil, false, fatal
		}
	}
	if kr.Value, err = s.fromConnect(tp.valueConv, s.valueAppend, r, r.ValueSchema, r.Value); err != nil {
		if ok, fatal := s.convertFailed(ctx, pre, r, kr, StageValueConverter, err); !ok {
			return nil, false, fatal
		}
	}
	if len(r.Headers) > 0 {
		if err = s.convertHeaders(r, kr); err != nil {
			if ok, fatal := s.convertFailed(ctx, pre, r, kr, StageHeaderConverter, err); !ok {
				return nil, false, fatal
			}
		}
	}
	return or, true, nil
}

// outRecord starts the Kafka record of r (pre as the task made it).
func (s *sourceTask) outRecord(pre, r *connect.Record) *outRecord {
	// One the queue is done with (submittedRecords.free) when there is
	// one; s.submitted.mu is held (send).
	var or *outRecord
	if n := len(s.submitted.free); n > 0 {
		or = s.submitted.free[n-1]
		s.submitted.free[n-1] = nil
		s.submitted.free = s.submitted.free[:n-1]
		*or = outRecord{pre: pre}
	} else {
		or = &outRecord{pre: pre}
	}
	or.sub.out = or
	or.Topic, or.Partition = r.Topic, r.Partition
	if r.Timestamp >= 0 {
		or.Timestamp = time.UnixMilli(r.Timestamp)
	}
	return or
}

// fromConnect converts one key or value, into the batch buffer when the
// converter can append.
func (s *sourceTask) fromConnect(c connect.Converter, ac appendConverter, r *connect.Record, sc *connect.Schema, v any) ([]byte, error) {
	if ac == nil || (sc == nil && v == nil) {
		return c.FromConnectData(r.Topic, &r.Headers, sc, v)
	}
	start := len(s.arena)
	out, err := ac.AppendConnectData(s.arena, sc, v)
	if err != nil {
		return nil, err
	}
	s.arena = out
	// Full slice expression: nothing appended later may write into it.
	return out[start:len(out):len(out)], nil
}

func (s *sourceTask) convertHeaders(r *connect.Record, kr *kgo.Record) error {
	kr.Headers = make([]kgo.RecordHeader, 0, len(r.Headers))
	for _, h := range r.Headers {
		if s.headerAppend != nil && s.cur != nil {
			var b []byte
			if h.Value != nil {
				start := len(s.arena)
				out, err := s.headerAppend.AppendConnectHeader(s.arena, r.Topic, h.Key, h.Schema, h.Value)
				if err != nil {
					return err
				}
				s.arena = out
				b = out[start:len(out):len(out)]
			}
			kr.Headers = append(kr.Headers, kgo.RecordHeader{Key: h.Key, Value: b})
			continue
		}
		b, err := s.plugins.headerConv.FromConnectHeader(r.Topic, h.Key, h.Schema, h.Value)
		if err != nil {
			return err
		}
		kr.Headers = append(kr.Headers, kgo.RecordHeader{Key: h.Key, Value: b})
	}
	return nil
}

// convertFailed retries a failed conversion step and applies the error
// tolerance; ok reports that the step finally succeeded.
func (s *sourceTask) convertFailed(ctx context.Context, pre, r *connect.Record, kr *kgo.Record, stage Stage, err error) (ok bool, fatal error) {
	tp := s.plugins
	var class string
	var op func() error
	switch stage {
	case StageKeyConverter:
		class = tp.keyClass
		op = func() (e error) {
			kr.Key, e = tp.keyConv.FromConnectData(r.Topic, &r.Headers, r.KeySchema, r.Key)
			return e
		}
	case StageValueConverter:
		class = tp.valueClass
		op = func() (e error) {
			kr.Value, e = tp.valueConv.FromConnectData(r.Topic, &r.Headers, r.ValueSchema, r.Value)
			return e
		}
	default:
		class = tp.headerClass
		op = func() error { return s.convertHeaders(r, kr) }
	}
	return s.eh.handle(ctx, failure{stage: stage, class: class, err: err, source: pre}, op)
}

// commitLoop commits offsets every offset.flush.interval.ms.
func (s *sourceTask) commitLoop(ctx context.Context, done chan struct{}) {
	defer close(done)
	iv := s.w.cfg.OffsetFlushInterval
	if iv <= 0 {
		iv = time.Minute
	}
	tick := time.NewTicker(iv)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			s.commitOffsets()
		}
	}
}

// commitOffsets writes the offsets of acknowledged records to the offset
// store within offset.flush.timeout.ms, then calls the task's Commit.
// Offsets that fail to write are retried at the next commit.
func (s *sourceTask) commitOffsets() {
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	w := s.written.Load()
	s.m.sourceWritten.Add(float64(w - s.reported.Swap(w)))
	maps.Copy(s.pending, s.submitted.committable())
	if len(s.pending) > 0 {
		offsets := make([]connect.SourcePartitionOffset, 0, len(s.pending))
		for _, k := range slices.Sorted(maps.Keys(s.pending)) {
			offsets = append(offsets, s.pending[k])
		}
		timeout := s.w.cfg.OffsetFlushTimeout
		if timeout <= 0 {
			timeout = 5 * time.Second
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		start := time.Now()
		err := s.w.offsets.Put(ctx, s.t.id.Connector, offsets)
		cancel()
		if err != nil {
			s.m.offsetFailures.Inc()
			s.t.log.Error("failed to commit source offsets; will retry", "err", err)
			return
		}
		s.m.commitTime.Observe(time.Since(start).Seconds())
		clear(s.pending)
		s.m.offsetCommits.Inc()
	}
	if err := s.task.Commit(context.Background()); err != nil {
		s.t.log.Warn("source task Commit failed", "err", err)
	}
}

// topicWait is the context records to a topic wait on until one of
// them is acknowledged: max.block.ms from the first record sent to it.
type topicWait struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// produceCtx returns the context to produce a record to topic with when
// max.block.ms is finite: the topic's wait until a record to it has been
// acknowledged (its metadata is known), then none.
func (s *sourceTask) produceCtx(topic string) context.Context {
	s.topicsMu.Lock()
	defer s.topicsMu.Unlock()
	if s.acked[topic] {
		return context.Background()
	}
	w := s.waits[topic]
	if w == nil || w.ctx.Err() != nil {
		ctx, cancel := context.WithTimeout(context.Background(), s.maxBlock)
		w = &topicWait{ctx, cancel}
		s.waits[topic] = w
	}
	return w.ctx
}

// topicAcked notes that topic's metadata is known: later records to it
// produce without a deadline. The wait's timer is left to expire (records
// waiting for buffer space may still hold its context).
func (s *sourceTask) topicAcked(topic string) {
	s.topicsMu.Lock()
	if !s.acked[topic] {
		s.acked[topic] = true
		delete(s.waits, topic)
	}
	s.topicsMu.Unlock()
}

// KafkaTimeoutError is Kafka's org.apache.kafka.common.errors.TimeoutException
// (a record's topic not in the metadata within max.block.ms).
type KafkaTimeoutError struct{ Msg string }

func (e *KafkaTimeoutError) Error() string { return e.Msg }
func (e *KafkaTimeoutError) JavaClass() string {
	return "org.apache.kafka.common.errors.TimeoutException"
}

// sendFailedBackoff is Kafka's AbstractWorkerSourceTask.SEND_FAILED_BACKOFF_MS:
// how long a task waits before retrying after a retriable failure.
const sendFailedBackoff = 100 * time.Millisecond

// ensureTopic makes sure a topic exists before the first record goes to
// it, as Kafka's AbstractWorkerSourceTask.maybeCreateTopic with KIP-158:
// a topic that exists is used as it is; a missing one is created with the
// settings of the first topic.creation group that matches it (default
// last). Retriable problems (timeouts, no controller, brokers not
// answering) are retried every 100 ms until the task stops; others fail
// the task with Kafka's messages.
func (s *sourceTask) ensureTopic(ctx context.Context, topic string) error {
	if s.adm == nil {
		return nil
	}
	s.topicsMu.Lock()
	known := s.created[topic]
	s.topicsMu.Unlock()
	if known {
		return nil
	}
	for {
		err := s.tryEnsureTopic(ctx, topic)
		if err == nil {
			s.topicsMu.Lock()
			s.created[topic] = true
			s.topicsMu.Unlock()
			return nil
		}
		var re *connect.RetriableError
		if !errors.As(err, &re) {
			s.t.log.Warn("failed to send record to topic due to an unrecoverable exception", "topic", topic, "err", err)
			return err
		}
		s.t.log.Warn("failed to send record to topic; backing off before retrying", "topic", topic, "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(sendFailedBackoff):
		}
	}
}

// retriableAdminErr reports whether an admin call's failure may clear by
// itself: Kafka's retriable errors, timeouts, connection failures.
func retriableAdminErr(err error) bool {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Retriable || errors.Is(err, kerr.RequestTimedOut)
	}
	return !errors.Is(err, context.Canceled)
}

func (s *sourceTask) tryEnsureTopic(ctx context.Context, topic string) error {
	s.t.log.Info("the task will send records to the topic for the first time; checking whether it exists", "topic", topic)
	td, err := s.adm.ListTopics(ctx, topic)
	if err == nil {
		if d, ok := td[topic]; ok {
			err = d.Err
		}
	}
	switch {
	case err == nil && len(td[topic].Partitions) > 0:
		s.t.log.Info("topic already exists", "topic", topic)
		return nil
	case err == nil, errors.Is(err, kerr.UnknownTopicOrPartition):
		// Missing: create it below.
	case errors.Is(err, kerr.TopicAuthorizationFailed):
		return &ConnectError{Msg: fmt.Sprintf("Not authorized to describe topic(s) '%s' on the brokers", topic), Err: err}
	case retriableAdminErr(err):
		return &connect.RetriableError{Err: fmt.Errorf("Timed out while describing topics '[%s]': %w", topic, err)}
	default:
		return &ConnectError{Msg: fmt.Sprintf("Error while attempting to describe topics '[%s]'", topic), Err: err}
	}
	g := s.cc.TopicCreation.For(topic)
	s.t.log.Info("creating topic", "topic", topic, "group", g.Name)
	cfg := map[string]*string{}
	for k, v := range g.Configs {
		cfg[k] = kadm.StringPtr(v)
	}
	resp, err := s.adm.CreateTopic(ctx, g.Partitions, g.ReplicationFactor, cfg, topic)
	if err == nil {
		err = resp.Err
	}
	newTopic := newTopicString(topic, g)
	switch {
	case err == nil:
		s.t.log.Info("created topic using creation group", "topic", newTopic, "group", g.Name)
		return nil
	case errors.Is(err, kerr.TopicAlreadyExists):
		s.t.log.Info("found existing topic", "topic", newTopic)
		return nil
	case errors.Is(err, kerr.TopicAuthorizationFailed), errors.Is(err, kerr.ClusterAuthorizationFailed), errors.Is(err, kerr.UnsupportedVersion):
		// Kafka's TopicAdmin assumes the topic exists or will be
		// auto-created; the task then finds neither.
		s.t.log.Warn("request to create new topic failed", "topic", topic, "err", err)
		return &ConnectError{Msg: fmt.Sprintf("Task failed to create new topic %s. Ensure that the task is authorized to create topics or that the topic exists and restart the task", newTopic)}
	case errors.Is(err, kerr.InvalidConfig):
		msg := err.Error()
		if resp.ErrMessage != "" {
			msg = resp.ErrMessage
		}
		return &ConnectError{Msg: fmt.Sprintf("Unable to create topic(s) '[%s]': %s", topic, msg), Err: err}
	case errors.Is(err, kerr.RequestTimedOut), errors.Is(err, context.DeadlineExceeded):
		return &ConnectError{Msg: fmt.Sprintf("Timed out while checking for or creating topic(s) '[%s]'. This could indicate a connectivity issue, unavailable topic partitions, or if this is your first use of the topic it may have taken too long to create.", topic), Err: err}
	case retriableAdminErr(err):
		return &connect.RetriableError{Err: fmt.Errorf("create topic %s: %w", topic, err)}
	default:
		return &ConnectError{Msg: fmt.Sprintf("Error while attempting to create/find topic(s) '[%s]'", topic), Err: err}
	}
}

// newTopicString is Kafka's NewTopic.toString, as its messages print it.
func newTopicString(topic string, g *TopicCreationGroup) string {
	keys := make([]string, 0, len(g.Configs))
	for k := range g.Configs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k + "=" + g.Configs[k])
	}
	return fmt.Sprintf("(name=%s, numPartitions=%d, replicationFactor=%d, replicasAssignments=null, configs={%s})", topic, g.Partitions, g.ReplicationFactor, b.String())
}

// trackTopic records a topic the task wrote to (KIP-558).
func (s *sourceTask) trackTopic(topic string) {
	if s.w.topics == nil || !s.w.cfg.TopicTrackingEnable {
		return
	}
	s.topicsMu.Lock()
	seen := s.tracked[topic]
	s.tracked[topic] = true
	s.topicsMu.Unlock()
	if !seen {
		s.w.recordActiveTopic(s.t.id, topic)
	}
}

func (s *sourceTask) close(abandoned bool) {
	if abandoned {
		s.t.cancel()
	}
	s.closeClients()
	closeChain(s.plugins.chain)
}

// recordActiveTopic writes a topic status unless the connector already
// has one for the topic (Kafka's WorkerTask.recordActiveTopic).
func (w *Worker) recordActiveTopic(id storage.TaskID, topic string) {
	for _, ts := range w.topics.Topics(id.Connector) {
		if ts.Topic == topic {
			return
		}
	}
	ts := storage.TopicStatus{Topic: topic, Connector: id.Connector, Task: id.Task, DiscoverTimestamp: time.Now().UnixMilli()}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := w.topics.PutTopic(ctx, ts); err != nil {
			w.log.Warn("could not record active topic", "connector", id.Connector, "topic", topic, "err", err)
		}
	}()
}
