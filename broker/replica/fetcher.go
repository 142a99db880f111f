package replica

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/batch"
	"github.com/fjordhq/fjord/broker/log"
	"github.com/fjordhq/fjord/broker/metadata"
	"github.com/fjordhq/fjord/broker/wire"
)

// Request versions the fetcher sends. Fjord nodes of one build serve the
// same ranges (broker/apis.go); these are what Kafka 4's replica fetcher
// uses for the features we need.
const (
	// fetchVersion: topic ids (v13), DivergingEpoch (v12), ReplicaState
	// with the broker epoch (v15, KIP-903).
	fetchVersion = 15
	// fetchVersionNoIDs is used when a followed topic has no id (v12:
	// names, ReplicaID field).
	fetchVersionNoIDs       = 12
	offsetForEpochVersion   = 4
	listOffsetsVersion      = 7
	defaultPartitionMax     = 1 << 20  // replica.fetch.max.bytes
	defaultMaxBytes         = 10 << 20 // replica.fetch.response.max.bytes
	defaultMaxWait          = 500 * time.Millisecond
	defaultBackoff          = time.Second      // replica.fetch.backoff.ms
	defaultRequestTimeout   = 30 * time.Second // replica.socket.timeout.ms
	listOffsetsLatest       = -1
	listOffsetsEarliest     = -2
	fetchSessionEpochNoSess = -1 // FINAL_EPOCH: a full fetch with no session
)

// FetcherOptions configure a FetcherManager.
type FetcherOptions struct {
	LocalID int32
	// Dialer opens connections to leaders with the inter-broker
	// listener's security protocol (nil: PLAINTEXT).
	Dialer *wire.Dialer
	// BrokerEpoch is this broker's epoch from its registration, sent in
	// every fetch (KIP-903); nil sends -1.
	BrokerEpoch func() int64
	// Resolve returns a broker's replication address (host:port) from the
	// metadata image.
	Resolve func(brokerID int32) (addr string, ok bool)
	// MaxBytes is replica.fetch.response.max.bytes (10 MiB),
	// PartitionMaxBytes replica.fetch.max.bytes (1 MiB), MaxWait
	// replica.fetch.wait.max.ms (500 ms), MinBytes replica.fetch.min.bytes (1).
	MaxBytes, PartitionMaxBytes int32
	MaxWait                     time.Duration
	MinBytes                    int32
	// BackoffOnError is replica.fetch.backoff.ms (1 s).
	BackoffOnError time.Duration
	// RequestTimeout bounds a request beyond MaxWait
	// (replica.socket.timeout.ms, 30 s).
	RequestTimeout time.Duration
	// Throttle is follower.replication.throttled.rate, applied to the
	// partitions Throttled reports (follower.replication.throttled.replicas
	// lists this broker for them) while they are not in sync. Nil: none.
	Throttle  *Throttle
	Throttled func(topic string, partition int32) bool
	Logger    *slog.Logger
	// OnHighWatermark reports the follower's high watermark: the leader's,
	// capped at the local log end offset. It can go down, after a
	// truncation or under a new leader that knows less; the broker sets
	// it as given.
	OnHighWatermark func(topic string, partition int32, hw int64)
	// OnAppend is called after records are appended to a followed log.
	OnAppend func(topic string, partition int32)
}

// Follow is one partition this broker replicates from a leader.
type Follow struct {
	Topic     string
	TopicID   metadata.UUID
	Partition int32
	Log       *log.Log
	LeaderID  int32
	// LeaderEpoch is the epoch of the leadership being followed; fetches
	// carry it and the leader refuses any other.
	LeaderEpoch int32
	// HighWatermark is the replica's high watermark when following starts
	// (0 if unknown). Truncation falls back to it only when the leader
	// cannot place the follower's epoch, as Kafka does.
	HighWatermark int64
}

type tpKey struct {
	topic     string
	partition int32
}

// FetcherManager runs the follower side of replication: one fetcher
// goroutine per leader broker (Kafka's num.replica.fetchers=1), each
// fetching every partition it follows from that leader in one Fetch.
//
// A partition starts (or restarts, on a new leader or epoch) in the
// truncating phase: OffsetForLeaderEpoch for its latest epoch tells where
// its log diverges from the leader's, the log is truncated there, and
// fetching continues from the log end. A fetch answer with DivergingEpoch
// truncates the same way. Records are appended with their offsets and
// epochs (AssignOffsets false).
//
// Once Remove (or Set to another leader) returns, the fetcher no longer
// touches that partition's log: appends and truncations happen under the
// fetcher's lock, which they take.
type FetcherManager struct {
	o  FetcherOptions
	lg *slog.Logger
	wg sync.WaitGroup

	mu       sync.Mutex
	closed   bool
	fetchers map[int32]*fetcher
	owner    map[tpKey]*fetcher
}

// NewFetcherManager returns a manager with no partitions.
func NewFetcherManager(o FetcherOptions) *FetcherManager {
	if o.MaxBytes <= 0 {
		o.MaxBytes = defaultMaxBytes
	}
	if o.PartitionMaxBytes <= 0 {
		o.PartitionMaxBytes = defaultPartitionMax
	}
	if o.MaxWait <= 0 {
		o.MaxWait = defaultMaxWait
	}
	if o.MinBytes <= 0 {
		o.MinBytes = 1
	}
	if o.BackoffOnError <= 0 {
		o.BackoffOnError = defaultBackoff
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = defaultRequestTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &FetcherManager{
		o:        o,
		lg:       o.Logger.With("fetcher_of", o.LocalID),
		fetchers: map[int32]*fetcher{},
		owner:    map[tpKey]*fetcher{},
	}
}

// Set starts following f, or changes its leader or epoch. Calling it again
// with the same leader and epoch changes nothing (a fetch that the leader
// fenced stays paused until a new epoch). An older epoch than the one
// followed is ignored. A leader of -1 (offline) or this broker stops
// following, as Remove.
func (m *FetcherManager) Set(f Follow) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	k := tpKey{f.Topic, f.Partition}
	if f.LeaderID == m.o.LocalID || f.LeaderID < 0 {
		// We lead it, or nobody does: nothing to fetch from.
		if cur := m.owner[k]; cur != nil {
			m.removeLocked(k, cur)
		}
		return
	}
	if cur := m.owner[k]; cur != nil {
		if cur.leader == f.LeaderID {
			cur.set(f)
			return
		}
		if e, ok := cur.epochOf(k); ok && f.LeaderEpoch < e {
			return
		}
		m.removeLocked(k, cur)
	}
	fe := m.fetchers[f.LeaderID]
	if fe == nil {
		fe = newFetcher(m, f.LeaderID)
		m.fetchers[f.LeaderID] = fe
		m.wg.Add(1)
		go fe.run()
	}
	fe.set(f)
	m.owner[k] = fe
}

// Remove stops following a partition (this broker leads it now, or no
// longer hosts it). When it returns the fetcher no longer writes to the
// partition's log.
func (m *FetcherManager) Remove(topic string, partition int32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := tpKey{topic, partition}
	if fe := m.owner[k]; fe != nil {
		m.removeLocked(k, fe)
	}
}

func (m *FetcherManager) removeLocked(k tpKey, fe *fetcher) {
	delete(m.owner, k)
	if fe.remove(k) == 0 {
		// Kafka's shutdownIdleFetcherThreads: no partitions, no goroutine.
		delete(m.fetchers, fe.leader)
		fe.cancel()
	}
}

// Following reports the leader and epoch a partition is followed at, and
// whether fetching is paused because the leader fenced that epoch.
func (m *FetcherManager) Following(topic string, partition int32) (leader, epoch int32, paused, ok bool) {
	m.mu.Lock()
	fe := m.owner[tpKey{topic, partition}]
	m.mu.Unlock()
	if fe == nil {
		return 0, 0, false, false
	}
	fe.mu.Lock()
	defer fe.mu.Unlock()
	ps := fe.parts[tpKey{topic, partition}]
	if ps == nil {
		return 0, 0, false, false
	}
	return ps.f.LeaderID, ps.f.LeaderEpoch, ps.phase == phaseFailed, true
}

// Close stops every fetcher and waits for them.
func (m *FetcherManager) Close() {
	m.mu.Lock()
	m.closed = true
	for id, fe := range m.fetchers {
		fe.cancel()
		delete(m.fetchers, id)
	}
	clear(m.owner)
	m.mu.Unlock()
	m.wg.Wait()
}

type phase int

const (
	phaseTruncating phase = iota
	phaseFetching
	phaseFailed // fenced: wait for a new leader epoch
)

// partState is one followed partition (Kafka's PartitionFetchState).
type partState struct {
	f                Follow
	phase            phase
	gen              uint64 // bumped on every Set that restarts it: stale answers are dropped
	fetchOffset      int64
	lastFetchedEpoch int32
	hw               int64 // last reported; -1 none
	delayUntil       time.Time
	inSync           bool // the last fetch left no lag
}

// fetcher fetches from one leader.
type fetcher struct {
	m      *FetcherManager
	leader int32
	lg     *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc
	wake   chan struct{}
	conn   *wire.Conn // the goroutine's own
	gen    uint64

	mu    sync.Mutex
	parts map[tpKey]*partState
}

func newFetcher(m *FetcherManager, leader int32) *fetcher {
	fe := &fetcher{
		m:      m,
		leader: leader,
		lg:     m.lg.With("leader", leader),
		wake:   make(chan struct{}, 1),
		parts:  map[tpKey]*partState{},
	}
	fe.ctx, fe.cancel = context.WithCancel(context.Background())
	return fe
}

func (fe *fetcher) poke() {
	select {
	case fe.wake <- struct{}{}:
	default:
	}
}

func (fe *fetcher) epochOf(k tpKey) (int32, bool) {
	fe.mu.Lock()
	defer fe.mu.Unlock()
	if ps := fe.parts[k]; ps != nil {
		return ps.f.LeaderEpoch, true
	}
	return 0, false
}

func (fe *fetcher) set(f Follow) {
	fe.mu.Lock()
	k := tpKey{f.Topic, f.Partition}
	if ps := fe.parts[k]; ps != nil {
		if f.LeaderEpoch < ps.f.LeaderEpoch || (f.LeaderEpoch == ps.f.LeaderEpoch && f.Log == ps.f.Log) {
			ps.f.TopicID = f.TopicID
			fe.mu.Unlock()
			return
		}
	}
	fe.gen++
	fe.parts[k] = &partState{
		f:                f,
		phase:            phaseTruncating,
		gen:              fe.gen,
		fetchOffset:      f.Log.LogEndOffset(),
		lastFetchedEpoch: -1,
		hw:               -1,
	}
	fe.lg.Info("following", "topic", f.Topic, "partition", f.Partition, "epoch", f.LeaderEpoch, "log_end", f.Log.LogEndOffset())
	fe.mu.Unlock()
	fe.poke()
}

// remove drops a partition and returns how many remain.
func (fe *fetcher) remove(k tpKey) int {
	fe.mu.Lock()
	defer fe.mu.Unlock()
	delete(fe.parts, k)
	return len(fe.parts)
}

// events are callbacks collected under the lock and run after it.
type events struct {
	hws     []hwEvent
	appends []tpKey
}

type hwEvent struct {
	k  tpKey
	hw int64
}

func (fe *fetcher) fire(ev *events) {
	o := &fe.m.o
	for _, e := range ev.hws {
		if o.OnHighWatermark != nil {
			o.OnHighWatermark(e.k.topic, e.k.partition, e.hw)
		}
	}
	for _, k := range ev.appends {
		if o.OnAppend != nil {
			o.OnAppend(k.topic, k.partition)
		}
	}
}

// setHW records and reports the follower high watermark.
func (ps *partState) setHW(hw int64, k tpKey, ev *events) {
	hw = min(hw, ps.f.Log.LogEndOffset())
	if hw == ps.hw {
		return
	}
	ps.hw = hw
	ps.f.Log.SetHighWatermark(hw)
	ev.hws = append(ev.hws, hwEvent{k, hw})
}

func (fe *fetcher) run() {
	defer fe.m.wg.Done()
	defer func() {
		if fe.conn != nil {
			fe.conn.Close()
		}
	}()
	for fe.ctx.Err() == nil {
		worked := fe.truncate()
		if fe.ctx.Err() != nil {
			return
		}
		if fe.fetch() {
			worked = true
		}
		if !worked {
			fe.idle()
		}
	}
}

// idle waits for a Set, the end of the earliest delay, or throttle room.
func (fe *fetcher) idle() {
	wait := time.Second
	now := time.Now()
	fe.mu.Lock()
	for _, ps := range fe.parts {
		if ps.phase != phaseFailed && ps.delayUntil.After(now) {
			wait = min(wait, ps.delayUntil.Sub(now))
		}
	}
	fe.mu.Unlock()
	if w := fe.m.o.Throttle.Wait(); w > 0 {
		wait = min(wait, w)
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-fe.ctx.Done():
	case <-fe.wake:
	case <-t.C:
	}
}

// connection returns the connection to the leader, dialling if needed.
func (fe *fetcher) connection() (*wire.Conn, error) {
	if fe.conn != nil && !fe.conn.Broken() {
		return fe.conn, nil
	}
	addr, ok := fe.m.o.Resolve(fe.leader)
	if !ok {
		return nil, fmt.Errorf("no address for broker %d", fe.leader)
	}
	ctx, cancel := context.WithTimeout(fe.ctx, fe.m.o.RequestTimeout)
	defer cancel()
	c, err := fe.m.o.Dialer.Dial(ctx, addr, fmt.Sprintf("broker-%d-fetcher-0", fe.m.o.LocalID))
	if err != nil {
		return nil, err
	}
	fe.conn = c
	return c, nil
}

func (fe *fetcher) request(req kmsg.Request, timeout time.Duration) (kmsg.Response, error) {
	c, err := fe.connection()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(fe.ctx, timeout)
	defer cancel()
	return c.Request(ctx, req)
}

// delayLocked backs a partition off for replica.fetch.backoff.ms.
func (fe *fetcher) delayLocked(ps *partState) {
	ps.delayUntil = time.Now().Add(fe.m.o.BackoffOnError)
}

// leaderCatchingUpBackoff is the retry delay after NOT_LEADER_OR_FOLLOWER
// or UNKNOWN_LEADER_EPOCH from the broker the metadata names as leader:
// after a failover the follower often learns of the election a few
// milliseconds before the new leader has applied it. Kafka waits the full
// replica.fetch.backoff.ms (1 s) here, which adds that second to every
// failover; Fjord asks again shortly.
const leaderCatchingUpBackoff = 50 * time.Millisecond

// delayLeaderLocked delays after an answer that means "the leader has not
// caught up with the metadata yet".
func (fe *fetcher) delayLeaderLocked(ps *partState, err error) {
	if err == kerr.NotLeaderForPartition || err == kerr.UnknownLeaderEpoch {
		ps.delayUntil = time.Now().Add(min(leaderCatchingUpBackoff, fe.m.o.BackoffOnError))
		return
	}
	fe.delayLocked(ps)
}

func (ps *partState) ready(now time.Time) bool { return !ps.delayUntil.After(now) }

type truncReq struct {
	k      tpKey
	gen    uint64
	epoch  int32 // current leader epoch
	latest int32 // the log's latest epoch
}

// truncate runs the truncating phase for every partition in it: one
// OffsetForLeaderEpoch for all, then truncation. It reports whether it did
// anything.
func (fe *fetcher) truncate() bool {
	var ev events
	var reqs []truncReq
	now := time.Now()
	fe.mu.Lock()
	for k, ps := range fe.parts {
		if ps.phase != phaseTruncating || !ps.ready(now) {
			continue
		}
		latest := ps.f.Log.LatestEpoch()
		if latest < 0 {
			// No epochs (an empty log): nothing can have diverged but
			// what is past the high watermark, Kafka's truncateToHighWatermark.
			fe.truncateLocked(k, ps, truncation{min(ps.f.HighWatermark, ps.f.Log.LogEndOffset()), true}, &ev)
			continue
		}
		reqs = append(reqs, truncReq{k, ps.gen, ps.f.LeaderEpoch, latest})
	}
	fe.mu.Unlock()
	fe.fire(&ev)
	if len(reqs) == 0 {
		return len(ev.hws) > 0
	}

	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.SetVersion(offsetForEpochVersion)
	req.ReplicaID = fe.m.o.LocalID
	idx := map[string]int{}
	for _, r := range reqs {
		i, ok := idx[r.k.topic]
		if !ok {
			i = len(req.Topics)
			idx[r.k.topic] = i
			t := kmsg.NewOffsetForLeaderEpochRequestTopic()
			t.Topic = r.k.topic
			req.Topics = append(req.Topics, t)
		}
		p := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		p.Partition, p.CurrentLeaderEpoch, p.LeaderEpoch = r.k.partition, r.epoch, r.latest
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, p)
	}
	resp, err := fe.request(req, fe.m.o.RequestTimeout)
	if err != nil {
		fe.lg.Warn("OffsetForLeaderEpoch failed", "err", err)
		fe.delayAll(reqs)
		return true
	}
	answers := map[tpKey]kmsg.OffsetForLeaderEpochResponseTopicPartition{}
	for _, t := range resp.(*kmsg.OffsetForLeaderEpochResponse).Topics {
		for _, p := range t.Partitions {
			answers[tpKey{t.Topic, p.Partition}] = p
		}
	}
	fe.mu.Lock()
	for _, r := range reqs {
		ps := fe.parts[r.k]
		if ps == nil || ps.gen != r.gen || ps.phase != phaseTruncating {
			continue
		}
		a, ok := answers[r.k]
		if !ok {
			fe.delayLocked(ps)
			continue
		}
		switch err := kerr.ErrorForCode(a.ErrorCode); err {
		case nil:
			tr := truncationFor(ps.f.Log, a.LeaderEpoch, a.EndOffset, max(ps.hw, ps.f.HighWatermark))
			fe.lg.Info("truncating", "topic", r.k.topic, "partition", r.k.partition, "to", tr.offset,
				"log_end", ps.f.Log.LogEndOffset(), "epoch", r.latest, "leader_epoch", a.LeaderEpoch, "leader_end", a.EndOffset, "complete", tr.complete)
			fe.truncateLocked(r.k, ps, tr, &ev)
		case kerr.FencedLeaderEpoch:
			fe.fencedLocked(r.k, ps)
		default:
			fe.lg.Info("OffsetForLeaderEpoch error; retrying", "topic", r.k.topic, "partition", r.k.partition, "err", err)
			fe.delayLeaderLocked(ps, err)
		}
	}
	fe.mu.Unlock()
	fe.fire(&ev)
	return true
}

// truncateLocked truncates a partition's log and moves it on: to fetching
// when the truncation is complete, or to another truncation round.
func (fe *fetcher) truncateLocked(k tpKey, ps *partState, tr truncation, ev *events) {
	l := ps.f.Log
	if tr.offset < l.LogEndOffset() {
		if err := l.TruncateTo(tr.offset); err != nil {
			fe.lg.Error("truncation failed", "topic", k.topic, "partition", k.partition, "offset", tr.offset, "err", err)
			fe.delayLocked(ps)
			return
		}
	}
	ps.fetchOffset = l.LogEndOffset()
	ps.lastFetchedEpoch = l.LatestEpoch()
	if max(ps.hw, ps.f.HighWatermark) > ps.fetchOffset {
		// Records below the old high watermark went: so does it.
		ps.setHW(ps.fetchOffset, k, ev)
	}
	if tr.complete {
		ps.phase = phaseFetching
	}
}

func (fe *fetcher) fencedLocked(k tpKey, ps *partState) {
	fe.lg.Info("leader has a newer epoch; paused until the metadata moves on", "topic", k.topic, "partition", k.partition, "epoch", ps.f.LeaderEpoch)
	ps.phase = phaseFailed
}

func (fe *fetcher) delayAll(reqs []truncReq) {
	fe.mu.Lock()
	defer fe.mu.Unlock()
	for _, r := range reqs {
		if ps := fe.parts[r.k]; ps != nil && ps.gen == r.gen {
			fe.delayLocked(ps)
		}
	}
}

type fetchReq struct {
	k      tpKey
	gen    uint64
	offset int64
	epoch  int32
	id     metadata.UUID
}

// fetch sends one Fetch for every partition ready to fetch and processes
// the answer. It reports whether it sent anything.
func (fe *fetcher) fetch() bool {
	o := &fe.m.o
	var reqs []fetchReq
	now := time.Now()
	throttled := o.Throttle.Exceeded()
	version := int16(fetchVersion)
	req := kmsg.NewPtrFetchRequest()
	req.MaxWaitMillis = int32(o.MaxWait.Milliseconds())
	req.MinBytes, req.MaxBytes = o.MinBytes, o.MaxBytes
	req.SessionID, req.SessionEpoch = 0, fetchSessionEpochNoSess
	topicIdx := map[string]int{}
	fe.mu.Lock()
	for k, ps := range fe.parts {
		if ps.phase != phaseFetching || !ps.ready(now) {
			continue
		}
		// Kafka's shouldFollowerThrottle: only replicas still catching up.
		if throttled && !ps.inSync && o.Throttled != nil && o.Throttled(k.topic, k.partition) {
			continue
		}
		if ps.f.TopicID == (metadata.UUID{}) {
			version = fetchVersionNoIDs
		}
		i, ok := topicIdx[k.topic]
		if !ok {
			i = len(req.Topics)
			topicIdx[k.topic] = i
			t := kmsg.NewFetchRequestTopic()
			t.Topic, t.TopicID = k.topic, ps.f.TopicID
			req.Topics = append(req.Topics, t)
		}
		p := kmsg.NewFetchRequestTopicPartition()
		p.Partition = k.partition
		p.CurrentLeaderEpoch = ps.f.LeaderEpoch
		p.FetchOffset = ps.fetchOffset
		p.LastFetchedEpoch = ps.lastFetchedEpoch
		p.LogStartOffset = ps.f.Log.LogStartOffset()
		p.PartitionMaxBytes = o.PartitionMaxBytes
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, p)
		reqs = append(reqs, fetchReq{k, ps.gen, ps.fetchOffset, ps.f.LeaderEpoch, ps.f.TopicID})
	}
	fe.mu.Unlock()
	if len(reqs) == 0 {
		return false
	}
	req.SetVersion(version)
	epoch := int64(-1)
	if o.BrokerEpoch != nil {
		epoch = o.BrokerEpoch()
	}
	if version >= 15 {
		req.ReplicaState.ID, req.ReplicaState.Epoch = o.LocalID, epoch
	} else {
		req.ReplicaID = o.LocalID
	}

	resp, err := fe.request(req, o.MaxWait+o.RequestTimeout)
	if err == nil {
		if code := resp.(*kmsg.FetchResponse).ErrorCode; code != 0 {
			err = kerr.ErrorForCode(code)
		}
	}
	if err != nil {
		if fe.ctx.Err() == nil {
			fe.lg.Warn("fetch failed", "err", err)
		}
		fe.mu.Lock()
		for _, r := range reqs {
			if ps := fe.parts[r.k]; ps != nil && ps.gen == r.gen {
				fe.delayLocked(ps)
			}
		}
		fe.mu.Unlock()
		return true
	}
	fr := resp.(*kmsg.FetchResponse)
	byID := map[metadata.UUID]string{}
	for _, r := range reqs {
		byID[r.id] = r.k.topic
	}
	answers := map[tpKey]*kmsg.FetchResponseTopicPartition{}
	for ti := range fr.Topics {
		t := &fr.Topics[ti]
		name := t.Topic
		if version >= 13 {
			name = byID[t.TopicID]
		}
		for pi := range t.Partitions {
			answers[tpKey{name, t.Partitions[pi].Partition}] = &t.Partitions[pi]
		}
	}

	var ev events
	var outOfRange []fetchReq
	fe.mu.Lock()
	for _, r := range reqs {
		ps := fe.parts[r.k]
		// Drop answers for partitions restarted, removed or moved on meanwhile.
		if ps == nil || ps.gen != r.gen || ps.phase != phaseFetching || ps.fetchOffset != r.offset {
			continue
		}
		a := answers[r.k]
		if a == nil {
			fe.delayLocked(ps) // not answered: ask again after the backoff
			continue
		}
		switch err := kerr.ErrorForCode(a.ErrorCode); err {
		case nil:
			fe.processLocked(r.k, ps, a, &ev)
		case kerr.OffsetOutOfRange:
			outOfRange = append(outOfRange, r)
		case kerr.FencedLeaderEpoch:
			fe.fencedLocked(r.k, ps)
		default:
			// NOT_LEADER_OR_FOLLOWER, UNKNOWN_LEADER_EPOCH, UNKNOWN_TOPIC_*:
			// transient while metadata propagates; retried until a new
			// state arrives (soon for the first two: delayLeaderLocked).
			fe.lg.Info("fetch error; retrying", "topic", r.k.topic, "partition", r.k.partition, "err", err)
			fe.delayLeaderLocked(ps, err)
		}
	}
	fe.mu.Unlock()
	fe.fire(&ev)
	for _, r := range outOfRange {
		fe.outOfRange(r)
	}
	return true
}

// processLocked handles one partition's successful answer: a diverging
// epoch truncates; records are appended; the high watermark and log start
// offset follow the leader's (ReplicaFetcherThread.processPartitionData).
func (fe *fetcher) processLocked(k tpKey, ps *partState, a *kmsg.FetchResponseTopicPartition, ev *events) {
	l := ps.f.Log
	if d := a.DivergingEpoch; d.Epoch >= 0 { // Kafka's FetchResponse.isDivergingEpoch
		tr := truncationFor(l, d.Epoch, d.EndOffset, max(ps.hw, ps.f.HighWatermark))
		fe.lg.Info("leader reports divergence; truncating", "topic", k.topic, "partition", k.partition,
			"to", tr.offset, "log_end", l.LogEndOffset(), "diverging_epoch", d.Epoch, "diverging_end", d.EndOffset)
		fe.truncateLocked(k, ps, tr, ev)
		// Truncation on fetch is always followed by fetching: a further
		// divergence comes back in the next answer.
		if ps.phase == phaseTruncating {
			ps.phase = phaseFetching
		}
		return
	}
	if ps.fetchOffset != l.LogEndOffset() {
		// Someone else changed the log; find our place again.
		fe.lg.Warn("log end moved under the fetcher; re-truncating", "topic", k.topic, "partition", k.partition,
			"fetch_offset", ps.fetchOffset, "log_end", l.LogEndOffset())
		ps.phase = phaseTruncating
		return
	}
	data, base, err := wholeBatches(a.RecordBatches, ps.fetchOffset)
	if err != nil {
		fe.lg.Error("invalid records from leader", "topic", k.topic, "partition", k.partition, "offset", ps.fetchOffset, "err", err)
		fe.delayLocked(ps)
		return
	}
	if len(data) > 0 && base < ps.fetchOffset {
		// The leader's first batch starts below our end. With an empty log
		// that is a log start offset inside a batch (DeleteRecords, or our
		// own start-over): start the log at the batch instead, as Kafka
		// does on UnexpectedAppendOffsetException. Otherwise our log is not
		// a prefix of the leader's: find the divergence again.
		if l.LogEndOffset() != l.LogStartOffset() {
			fe.lg.Warn("leader batch straddles our log end; re-truncating", "topic", k.topic, "partition", k.partition,
				"batch_base", base, "log_end", l.LogEndOffset())
			ps.phase = phaseTruncating
			fe.delayLocked(ps)
			return
		}
		if err := l.TruncateFullyAndStartAt(base); err != nil {
			fe.lg.Error("truncate fully", "topic", k.topic, "partition", k.partition, "err", err)
			fe.delayLocked(ps)
			return
		}
		ps.fetchOffset = base
	}
	if len(data) > 0 {
		if _, err := l.Append(data, log.AppendOptions{AssignOffsets: false}); err != nil {
			fe.lg.Error("replica append failed", "topic", k.topic, "partition", k.partition, "offset", ps.fetchOffset, "err", err)
			fe.delayLocked(ps)
			if errors.Is(err, log.ErrInvalidOffsets) {
				ps.phase = phaseTruncating
			}
			return
		}
		ps.fetchOffset = l.LogEndOffset()
		ps.lastFetchedEpoch = l.LatestEpoch()
		ev.appends = append(ev.appends, k)
		if fe.m.o.Throttled != nil && fe.m.o.Throttled(k.topic, k.partition) {
			fe.m.o.Throttle.Record(len(data))
		}
	}
	ps.inSync = a.HighWatermark <= ps.fetchOffset
	ps.setHW(a.HighWatermark, k, ev)
	if lso := a.LogStartOffset; lso > l.LogStartOffset() && lso <= ps.hw {
		// The leader deleted records (retention, DeleteRecords): follow.
		if err := l.DeleteRecordsBefore(lso); err != nil {
			fe.lg.Warn("follow leader log start offset", "topic", k.topic, "partition", k.partition, "offset", lso, "err", err)
		}
	}
}

// wholeBatches returns the complete, valid batches at the start of b
// that end at or past offset. A leader may cut the last batch short at
// the fetch size; that part is fetched again next time. A batch failing
// its CRC is an error (the fetch is retried), as in Kafka. base is the
// first returned batch's base offset, which is below offset when the
// batch holding offset starts earlier.
func wholeBatches(b []byte, offset int64) (data []byte, base int64, err error) {
	start, end := 0, 0
	base = -1
	for rest := b; len(rest) > 0; {
		bt, r, err := batch.Next(rest)
		if errors.Is(err, batch.ErrTruncated) {
			break
		}
		if err != nil {
			return nil, 0, err
		}
		if err := bt.Validate(); err != nil {
			return nil, 0, err
		}
		if bt.LastOffset() < offset {
			start += len(bt) // wholly before what we asked for: skip
		} else if base < 0 {
			base = bt.BaseOffset()
		}
		end += len(bt)
		rest = r
	}
	return b[start:end], base, nil
}

// outOfRange is Kafka's fetchOffsetAndTruncate: ask the leader for its
// end offset; if ours is past it (an unclean election left us ahead),
// truncate to it. Otherwise ask for its start offset; if ours is below it
// (we were away while it deleted old segments), start over empty there.
func (fe *fetcher) outOfRange(r fetchReq) {
	latest, err := fe.listOffset(r, listOffsetsLatest)
	if err != nil {
		fe.offsetError(r, err)
		return
	}
	var ev events
	fe.mu.Lock()
	ps := fe.parts[r.k]
	if ps == nil || ps.gen != r.gen || ps.phase != phaseFetching {
		fe.mu.Unlock()
		return
	}
	l := ps.f.Log
	if leo := l.LogEndOffset(); latest < leo {
		fe.lg.Warn("fetch offset out of range; truncating to the leader's end offset", "topic", r.k.topic, "partition", r.k.partition,
			"log_end", leo, "leader_end", latest)
		fe.truncateLocked(r.k, ps, truncation{latest, true}, &ev)
		fe.mu.Unlock()
		fe.fire(&ev)
		return
	}
	fe.mu.Unlock()

	earliest, err := fe.listOffset(r, listOffsetsEarliest)
	if err != nil {
		fe.offsetError(r, err)
		return
	}
	fe.mu.Lock()
	defer fe.mu.Unlock()
	ps = fe.parts[r.k]
	if ps == nil || ps.gen != r.gen || ps.phase != phaseFetching {
		return
	}
	if leo := l.LogEndOffset(); earliest > leo {
		fe.lg.Warn("fetch offset out of range; starting over at the leader's log start offset", "topic", r.k.topic, "partition", r.k.partition,
			"log_end", leo, "leader_start", earliest)
		if err := l.TruncateFullyAndStartAt(earliest); err != nil {
			fe.lg.Error("truncate fully", "topic", r.k.topic, "partition", r.k.partition, "err", err)
			fe.delayLocked(ps)
			return
		}
	}
	ps.fetchOffset = l.LogEndOffset()
	ps.lastFetchedEpoch = l.LatestEpoch()
}

func (fe *fetcher) offsetError(r fetchReq, err error) {
	fe.mu.Lock()
	defer fe.mu.Unlock()
	ps := fe.parts[r.k]
	if ps == nil || ps.gen != r.gen {
		return
	}
	if errors.Is(err, kerr.FencedLeaderEpoch) {
		fe.fencedLocked(r.k, ps)
		return
	}
	fe.lg.Info("ListOffsets for out-of-range fetch failed; retrying", "topic", r.k.topic, "partition", r.k.partition, "err", err)
	fe.delayLocked(ps)
}

// listOffset asks the leader for its latest (-1: log end, as a replica
// sees it) or earliest (-2) offset.
func (fe *fetcher) listOffset(r fetchReq, ts int64) (int64, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.SetVersion(listOffsetsVersion)
	req.ReplicaID = fe.m.o.LocalID
	t := kmsg.NewListOffsetsRequestTopic()
	t.Topic = r.k.topic
	p := kmsg.NewListOffsetsRequestTopicPartition()
	p.Partition, p.CurrentLeaderEpoch, p.Timestamp = r.k.partition, r.epoch, ts
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	resp, err := fe.request(req, fe.m.o.RequestTimeout)
	if err != nil {
		return 0, err
	}
	for _, t := range resp.(*kmsg.ListOffsetsResponse).Topics {
		for _, p := range t.Partitions {
			if t.Topic == r.k.topic && p.Partition == r.k.partition {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
					return 0, err
				}
				return p.Offset, nil
			}
		}
	}
	return 0, fmt.Errorf("ListOffsets: no answer for %s-%d", r.k.topic, r.k.partition)
}
