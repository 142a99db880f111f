package replica

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/fjordhq/fjord/broker/log"
	"github.com/fjordhq/fjord/broker/metadata"
)

// LeaderOptions configure a Leader.
type LeaderOptions struct {
	LocalID int32
	Log     *log.Log
	// State is the partition as the metadata image has it: replicas, ISR,
	// leader (LocalID), leader epoch, partition epoch.
	State   metadata.Partition
	TopicID metadata.UUID
	Topic   string
	// HighWatermark is the high watermark this replica knew before it
	// became leader (the last one a leader sent it, or its own as the
	// previous leader); 0 if none. It is clamped to the log's range.
	HighWatermark int64
	// ReplicaLagTime is replica.lag.time.max.ms (default 30 s): a follower
	// that has not caught up to the leader's log end for this long leaves
	// the ISR. The ISR check runs every ReplicaLagTime/2.
	ReplicaLagTime time.Duration
	// AlterPartition sends an ISR change to the controller and returns
	// the partition state the controller committed. Its error should wrap
	// the *kerr.Error of the answer (INVALID_UPDATE_VERSION, …); other
	// errors are retried. ctx ends when the Leader stops.
	AlterPartition func(ctx context.Context, newISR []int32, leaderEpoch, partitionEpoch int32) (metadata.Partition, error)
	// BrokerEpoch, if set, returns a broker's epoch in the metadata image
	// and whether it may join an ISR (registered, unfenced, not shutting
	// down): Kafka's isReplicaIsrEligible. A fetch carrying an older
	// broker epoch is refused (KIP-903). Nil: every replica is eligible.
	BrokerEpoch func(brokerID int32) (epoch int64, eligible bool)
	// RetryBackoff is the pause before retrying a failed AlterPartition
	// (default 100 ms).
	RetryBackoff time.Duration
	Now          func() time.Time
	Logger       *slog.Logger
	// OnHighWatermark is called, outside the Leader's lock, each time the
	// high watermark advances: the broker wakes parked fetches and
	// produce waits. Calls from different goroutines may arrive out of
	// order; keep the maximum.
	OnHighWatermark func(hw int64)
	// OnISRChange, if set, is called outside the Leader's lock each time
	// the committed ISR changes while this replica leads: shrunk when
	// replicas left it, expanded when replicas joined it (both for a
	// change that does both). Changes the controller made (a follower
	// fenced or shutting down) count as well as this leader's own
	// AlterPartition: the broker's ISR shrink and expand rates.
	OnISRChange func(shrunk, expanded bool)
}

// Leader is the leader side of one partition: Kafka's Partition in the
// leader role. It tracks every follower's log end offset from its
// fetches, advances the high watermark to the minimum log end offset of
// the maximal ISR, and changes the ISR through the controller
// (AlterPartition): expansion when a follower catches up, shrink when one
// stays behind for ReplicaLagTime.
//
// Methods are safe for concurrent use. Lock order: Leader.mu, then the
// log's locks; callbacks run with no Leader lock held.
type Leader struct {
	o    LeaderOptions
	log  *log.Log
	lg   *slog.Logger
	lag  time.Duration
	kick chan struct{} // a pending ISR change to send
	stop chan struct{}
	done chan struct{}
	ctx  context.Context
	halt context.CancelFunc
	once sync.Once

	mu             sync.Mutex
	stopped        bool
	leaderEpoch    int32
	partitionEpoch int32
	replicas       []int32
	isr            []int32    // committed by the controller
	pending        *isrChange // proposed to the controller, not yet committed
	epochStart     int64      // log end offset when this leader epoch began
	followers      map[int32]*follower
	hw             int64
	// changed is closed and replaced whenever the high watermark, the ISR
	// or stopped changes: WaitReplicated's wake-up.
	changed chan struct{}
}

// follower is the leader's view of one follower replica (Kafka's
// ReplicaState).
type follower struct {
	leo                int64 // -1: unknown since this leader epoch began
	lastFetchLeaderLEO int64 // the leader's end offset at the previous fetch
	lastFetch          time.Time
	lastCaughtUp       time.Time // last time the follower had fetched to the leader's end
	brokerEpoch        int64
	hasEpoch           bool
}

// caughtUp is Kafka's ReplicaState.isCaughtUp.
func (f *follower) caughtUp(leaderEnd int64, now time.Time, lag time.Duration) bool {
	return f.leo == leaderEnd || now.Sub(f.lastCaughtUp) <= lag
}

// isrChange is an AlterPartition in progress (Kafka's PendingExpandIsr /
// PendingShrinkIsr).
type isrChange struct {
	isr []int32 // proposed
	// maximal is what the high watermark and acks=all use meanwhile: the
	// union of the committed and proposed ISR, so an expansion counts
	// the new member at once and a shrink does not count until committed.
	maximal []int32
	send    bool // not sent yet (or to be retried)
}

// FetchState is what a follower's fetch gets back from FollowerFetch.
type FetchState struct {
	// HighWatermark goes in the fetch response.
	HighWatermark int64
	// Diverging is set when the follower's last fetched epoch and offset
	// disagree with this log (Fetch v12+ DivergingEpoch): answer with it
	// and no records.
	Diverging *EpochEndOffset
}

// EpochEndOffset is a leader epoch and the offset where it ends.
type EpochEndOffset struct {
	Epoch     int32
	EndOffset int64
}

// NewLeader makes this replica the partition's leader for o.State's
// leader epoch. It records the epoch's start offset in the log's epoch
// cache (Kafka's makeLeader), starts the ISR-expiry loop and may advance
// the high watermark at once (a single-member ISR).
func NewLeader(o LeaderOptions) *Leader {
	if o.ReplicaLagTime <= 0 {
		o.ReplicaLagTime = 30 * time.Second
	}
	if o.RetryBackoff <= 0 {
		o.RetryBackoff = 100 * time.Millisecond
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	tp := o.Log.TopicPartition()
	l := &Leader{
		o:              o,
		log:            o.Log,
		lg:             o.Logger.With("topic", tp.Topic, "partition", tp.Partition),
		lag:            o.ReplicaLagTime,
		kick:           make(chan struct{}, 1),
		stop:           make(chan struct{}),
		done:           make(chan struct{}),
		leaderEpoch:    o.State.LeaderEpoch,
		partitionEpoch: o.State.PartitionEpoch,
		replicas:       slices.Clone(o.State.Replicas),
		isr:            slices.Clone(o.State.ISR),
		followers:      map[int32]*follower{},
		changed:        make(chan struct{}),
	}
	l.ctx, l.halt = context.WithCancel(context.Background())
	leo := l.log.LogEndOffset()
	l.epochStart = leo
	// Followers holding a later epoch than any record here (elections in
	// quick succession) learn from this entry where to truncate.
	if err := l.log.AssignEpochStartOffset(l.leaderEpoch, leo); err != nil {
		l.lg.Warn("record leader epoch start", "epoch", l.leaderEpoch, "offset", leo, "err", err)
	}
	l.hw = min(max(o.HighWatermark, l.log.LogStartOffset()), leo)
	l.log.SetHighWatermark(l.hw)
	now := o.Now()
	for _, id := range l.replicas {
		if id == o.LocalID {
			continue
		}
		f := &follower{leo: -1, lastFetchLeaderLEO: -1}
		if slices.Contains(l.isr, id) {
			// ISR members get a full lag period to fetch from the new
			// leader; the others must catch up before they count.
			f.lastCaughtUp = now
		}
		l.followers[id] = f
	}
	l.lg.Info("became leader", "epoch", l.leaderEpoch, "partition_epoch", l.partitionEpoch,
		"epoch_start", leo, "high_watermark", l.hw, "isr", l.isr, "replicas", l.replicas)
	l.mu.Lock()
	hw, moved := l.maybeAdvanceLocked(now)
	l.mu.Unlock()
	if moved {
		l.notify(hw)
	}
	go l.run()
	return l
}

// HighWatermark is the offset below which records are committed.
func (l *Leader) HighWatermark() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.hw
}

// LeaderEpoch is the leader epoch this Leader serves.
func (l *Leader) LeaderEpoch() int32 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.leaderEpoch
}

// State returns the partition as this leader sees it: replicas, the
// committed ISR and epochs.
func (l *Leader) State() metadata.Partition {
	l.mu.Lock()
	defer l.mu.Unlock()
	return metadata.Partition{
		Index:          l.o.State.Index,
		Replicas:       slices.Clone(l.replicas),
		ISR:            slices.Clone(l.isr),
		Leader:         l.o.LocalID,
		LeaderEpoch:    l.leaderEpoch,
		PartitionEpoch: l.partitionEpoch,
	}
}

// ISR is the ISR the high watermark uses: Kafka's maximal ISR, the
// committed ISR plus members whose addition is in flight.
func (l *Leader) ISR() []int32 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.maximalLocked())
}

// InSyncCount is the size of the committed ISR, which min.insync.replicas
// is checked against before an acks=all append.
func (l *Leader) InSyncCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.isr)
}

// InSync reports whether a replica is in the committed ISR: the leader's
// fetch handler does not apply leader.replication.throttled.rate to
// in-sync replicas (Kafka's shouldLeaderThrottle).
func (l *Leader) InSync(replicaID int32) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Contains(l.isr, replicaID)
}

// CheckMinISR returns NOT_ENOUGH_REPLICAS when the committed ISR is
// smaller than min.insync.replicas (capped at the replication factor, as
// Kafka's effectiveMinIsr): the check before an acks=all append.
func (l *Leader) CheckMinISR(minISR int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return l.notLeaderErr()
	}
	if need := min(minISR, len(l.replicas)); len(l.isr) < need {
		tp := l.log.TopicPartition()
		return errorf(kerr.NotEnoughReplicas, "The size of the current ISR %v is insufficient to satisfy the min.isr requirement of %d for partition %s", l.isr, minISR, tp)
	}
	return nil
}

// CheckEpoch validates a request's current leader epoch against this
// leader's (-1: not given): FENCED_LEADER_EPOCH when older,
// UNKNOWN_LEADER_EPOCH when newer, NOT_LEADER_OR_FOLLOWER after Stop.
func (l *Leader) CheckEpoch(current int32) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.stopped:
		return l.notLeaderErr()
	case current >= 0 && current < l.leaderEpoch:
		return errorf(kerr.FencedLeaderEpoch, "The leader epoch in the request %d is older than the current leader epoch %d", current, l.leaderEpoch)
	case current > l.leaderEpoch:
		return errorf(kerr.UnknownLeaderEpoch, "The leader epoch in the request %d is newer than the current leader epoch %d", current, l.leaderEpoch)
	}
	return nil
}

func (l *Leader) notLeaderErr() error {
	return errorf(kerr.NotLeaderForPartition, "Leader not local for partition %s on broker %d", l.log.TopicPartition(), l.o.LocalID)
}

// OnAppend is called after each leader append: with no follower holding
// it back (a single-member ISR) the high watermark moves to the new end.
func (l *Leader) OnAppend() {
	l.mu.Lock()
	if l.stopped {
		l.mu.Unlock()
		return
	}
	hw, moved := l.maybeAdvanceLocked(l.o.Now())
	l.mu.Unlock()
	if moved {
		l.notify(hw)
	}
}

// FollowerFetch records a follower's fetch at fetchOffset, before the
// leader reads for it (Kafka's Partition.fetchRecords for a follower).
// When lastFetchedEpoch (>= 0) and fetchOffset do not match this log it
// returns the diverging epoch and records nothing. Otherwise it moves the
// follower's log end offset and caught-up time, proposes adding the
// follower to the ISR when it has caught up (to the high watermark and to
// this epoch's start), and advances the high watermark.
//
// Errors: NOT_LEADER_OR_FOLLOWER after Stop or for a fetch with a stale
// broker epoch; UNKNOWN_LEADER_EPOCH for a replica not in the assignment
// (it may be about to be added); OFFSET_OUT_OF_RANGE for an offset
// outside the log. The caller checks the request's current leader epoch
// first (CheckEpoch).
func (l *Leader) FollowerFetch(replicaID int32, replicaEpoch int64, fetchOffset int64, lastFetchedEpoch int32) (FetchState, error) {
	now := l.o.Now()
	l.mu.Lock()
	if l.stopped {
		l.mu.Unlock()
		return FetchState{}, l.notLeaderErr()
	}
	tp := l.log.TopicPartition()
	f := l.followers[replicaID]
	if f == nil {
		l.mu.Unlock()
		return FetchState{}, errorf(kerr.UnknownLeaderEpoch, "Replica %d is not recognized as a valid replica of %s in leader epoch %d with partition epoch %d", replicaID, tp, l.leaderEpoch, l.partitionEpoch)
	}
	if l.o.BrokerEpoch != nil && replicaEpoch != -1 {
		if cur, _ := l.o.BrokerEpoch(replicaID); cur > replicaEpoch {
			l.mu.Unlock()
			return FetchState{}, errorf(kerr.NotLeaderForPartition, "Received stale fetch state update. broker epoch=%d vs expected=%d", replicaEpoch, cur)
		}
	}
	lso, leo := l.log.LogStartOffset(), l.log.LogEndOffset()
	if lastFetchedEpoch >= 0 {
		epoch, end := l.log.EndOffsetForEpoch(lastFetchedEpoch)
		if epoch < 0 || end < 0 {
			l.mu.Unlock()
			return FetchState{}, errorf(kerr.OffsetOutOfRange, "Could not determine the end offset of the last fetched epoch %d from the request", lastFetchedEpoch)
		}
		if fetchOffset >= lso && (epoch < lastFetchedEpoch || end < fetchOffset) {
			st := FetchState{HighWatermark: l.hw, Diverging: &EpochEndOffset{Epoch: epoch, EndOffset: end}}
			l.mu.Unlock()
			return st, nil
		}
	}
	if fetchOffset < lso || fetchOffset > leo {
		l.mu.Unlock()
		return FetchState{}, errorf(kerr.OffsetOutOfRange, "Received request for offset %d for partition %s, but we only have log segments in the range %d to %d.", fetchOffset, tp, lso, leo)
	}

	// Replica.updateFetchStateOrThrow.
	switch {
	case fetchOffset >= leo:
		f.lastCaughtUp = later(f.lastCaughtUp, now)
	case fetchOffset >= f.lastFetchLeaderLEO:
		// It reached what the leader had at its previous fetch.
		f.lastCaughtUp = later(f.lastCaughtUp, f.lastFetch)
	}
	f.leo = fetchOffset
	f.lastFetchLeaderLEO = max(leo, f.lastFetchLeaderLEO)
	f.lastFetch = now
	f.brokerEpoch, f.hasEpoch = replicaEpoch, true

	expand := l.pending == nil && !slices.Contains(l.isr, replicaID) && l.eligibleLocked(replicaID, f) &&
		f.leo >= l.hw && f.leo >= l.epochStart
	if expand {
		newISR := append(slices.Clone(l.isr), replicaID)
		l.pending = &isrChange{isr: newISR, maximal: newISR, send: true}
		l.lg.Info("expanding ISR", "from", l.isr, "to", newISR, "follower_end", f.leo, "high_watermark", l.hw)
	}
	hw, moved := l.maybeAdvanceLocked(now)
	st := FetchState{HighWatermark: l.hw}
	l.mu.Unlock()
	if expand {
		l.poke()
	}
	if moved {
		l.notify(hw)
	}
	return st, nil
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// eligibleLocked is Kafka's isReplicaIsrEligible.
func (l *Leader) eligibleLocked(id int32, f *follower) bool {
	if l.o.BrokerEpoch == nil {
		return true
	}
	cur, ok := l.o.BrokerEpoch(id)
	return ok && f.hasEpoch && (f.brokerEpoch == -1 || f.brokerEpoch == cur)
}

func (l *Leader) maximalLocked() []int32 {
	if l.pending != nil {
		return l.pending.maximal
	}
	return l.isr
}

// maybeAdvanceLocked is Kafka's maybeIncrementLeaderHW: the new high
// watermark is the smallest log end offset among the leader, the maximal
// ISR, and followers that are caught up and eligible but not yet in the
// ISR (so a follower about to join is not left behind forever). A
// follower whose position in this epoch is unknown holds it back if it
// counts. The high watermark never goes backwards.
func (l *Leader) maybeAdvanceLocked(now time.Time) (int64, bool) {
	leo := l.log.LogEndOffset()
	hw := leo
	maximal := l.maximalLocked()
	for id, f := range l.followers {
		if f.leo >= hw {
			continue
		}
		if slices.Contains(maximal, id) || (f.caughtUp(leo, now, l.lag) && l.eligibleLocked(id, f)) {
			hw = f.leo
		}
	}
	if hw <= l.hw {
		return l.hw, false
	}
	l.hw = hw
	l.log.SetHighWatermark(hw)
	l.changedLocked()
	return hw, true
}

func (l *Leader) changedLocked() {
	close(l.changed)
	l.changed = make(chan struct{})
}

func (l *Leader) notify(hw int64) {
	if l.o.OnHighWatermark != nil {
		l.o.OnHighWatermark(hw)
	}
}

func (l *Leader) poke() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

// WaitReplicated waits until the high watermark passes offset (the last
// offset of an acks=all append): Kafka's DelayedProduce. It returns nil
// then, or NOT_ENOUGH_REPLICAS_AFTER_APPEND if the maximal ISR has fewer
// than minISR members (capped at the replication factor) at that moment;
// NOT_LEADER_OR_FOLLOWER if the Leader stops first; ctx's error when ctx
// ends (the caller answers REQUEST_TIMED_OUT).
func (l *Leader) WaitReplicated(ctx context.Context, offset int64, minISR int) error {
	for {
		l.mu.Lock()
		if l.stopped {
			l.mu.Unlock()
			return l.notLeaderErr()
		}
		if l.hw > offset {
			isr, rf := l.maximalLocked(), len(l.replicas)
			l.mu.Unlock()
			if len(isr) < min(minISR, rf) {
				return errorf(kerr.NotEnoughReplicasAfterAppend, "The size of the current ISR %v is insufficient to satisfy the min.isr requirement of %d for partition %s", isr, minISR, l.log.TopicPartition())
			}
			return nil
		}
		ch := l.changed
		l.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Update applies the partition's state from a newer metadata image
// (Kafka's makeLeader on a replica that already leads): the committed
// ISR, a changed replica set (reassignment), a new partition epoch, or a
// new leader epoch with this broker still the leader. States older than
// what the leader has (a partition epoch below its own, which it may
// have learnt from an AlterPartition answer first) are ignored. A state
// naming another leader stops the Leader.
func (l *Leader) Update(p metadata.Partition) {
	if p.Leader != l.o.LocalID {
		l.Stop()
		return
	}
	now := l.o.Now()
	l.mu.Lock()
	if l.stopped || p.LeaderEpoch < l.leaderEpoch || p.PartitionEpoch < l.partitionEpoch {
		l.mu.Unlock()
		return
	}
	l.replicas = slices.Clone(p.Replicas)
	for id := range l.followers {
		if !slices.Contains(l.replicas, id) {
			delete(l.followers, id)
		}
	}
	for _, id := range l.replicas {
		if id != l.o.LocalID && l.followers[id] == nil {
			l.followers[id] = &follower{leo: -1, lastFetchLeaderLEO: -1}
		}
	}
	if p.LeaderEpoch > l.leaderEpoch {
		leo := l.log.LogEndOffset()
		if err := l.log.AssignEpochStartOffset(p.LeaderEpoch, leo); err != nil {
			l.lg.Warn("record leader epoch start", "epoch", p.LeaderEpoch, "offset", leo, "err", err)
		}
		l.epochStart = leo
		// Replica.resetReplicaState for a re-elected leader.
		for id, f := range l.followers {
			inSync := slices.Contains(p.ISR, id)
			f.lastFetchLeaderLEO = leo
			f.lastCaughtUp, f.lastFetch = time.Time{}, time.Time{}
			if inSync {
				f.lastCaughtUp, f.lastFetch = now, now
			}
		}
		l.leaderEpoch = p.LeaderEpoch
		l.lg.Info("leader epoch changed", "epoch", p.LeaderEpoch, "epoch_start", leo)
	}
	shrunk, expanded := isrDiff(l.isr, p.ISR)
	l.isr = slices.Clone(p.ISR)
	l.partitionEpoch = p.PartitionEpoch
	l.pending = nil // an AlterPartition in flight is now stale: its answer is ignored
	l.changedLocked()
	hw, moved := l.maybeAdvanceLocked(now)
	l.mu.Unlock()
	l.isrChanged(shrunk, expanded)
	if moved {
		l.notify(hw)
	}
}

// isrDiff reports whether going from ISR old to ISR next removes members
// (shrunk) or adds some (expanded).
func isrDiff(old, next []int32) (shrunk, expanded bool) {
	for _, id := range old {
		if !slices.Contains(next, id) {
			shrunk = true
		}
	}
	for _, id := range next {
		if !slices.Contains(old, id) {
			expanded = true
		}
	}
	return shrunk, expanded
}

func (l *Leader) isrChanged(shrunk, expanded bool) {
	if (shrunk || expanded) && l.o.OnISRChange != nil {
		l.o.OnISRChange(shrunk, expanded)
	}
}

// Stop ends leadership: waiters get NOT_LEADER_OR_FOLLOWER, the ISR loop
// and any AlterPartition in flight are cancelled. It waits for the loop
// to exit and is idempotent.
func (l *Leader) Stop() {
	l.once.Do(func() {
		l.mu.Lock()
		l.stopped = true
		l.changedLocked()
		l.mu.Unlock()
		l.halt()
		close(l.stop)
	})
	<-l.done
}

// run checks for lagging ISR members every ReplicaLagTime/2 (Kafka's
// isr-expiration task) and sends ISR changes, one at a time.
func (l *Leader) run() {
	defer close(l.done)
	t := time.NewTicker(l.lag / 2)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			l.maybeShrinkAt(l.o.Now())
		case <-l.kick:
		}
		l.sendPending()
	}
}

// maybeShrinkAt is Kafka's maybeShrinkIsr: ISR members (the leader aside)
// that have not caught up to the leader's end within ReplicaLagTime are
// proposed for removal. Nothing is proposed while a change is in flight.
func (l *Leader) maybeShrinkAt(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped || l.pending != nil {
		return
	}
	leo := l.log.LogEndOffset()
	var out []int32
	for _, id := range l.isr {
		if id == l.o.LocalID {
			continue
		}
		if f := l.followers[id]; f == nil || !f.caughtUp(leo, now, l.lag) {
			out = append(out, id)
		}
	}
	if len(out) == 0 {
		return
	}
	newISR := slices.DeleteFunc(slices.Clone(l.isr), func(id int32) bool { return slices.Contains(out, id) })
	// Until the controller commits it, the removed members still count.
	l.pending = &isrChange{isr: newISR, maximal: l.isr, send: true}
	l.lg.Info("shrinking ISR", "from", l.isr, "to", newISR, "out_of_sync", out, "high_watermark", l.hw, "end_offset", leo)
}

// sendPending sends the pending ISR change, if any, and applies the
// answer (Kafka's submitAlterPartition and its completion handlers).
func (l *Leader) sendPending() {
	for {
		l.mu.Lock()
		ch := l.pending
		if l.stopped || ch == nil || !ch.send {
			l.mu.Unlock()
			return
		}
		ch.send = false
		isr, le, pe := slices.Clone(ch.isr), l.leaderEpoch, l.partitionEpoch
		l.mu.Unlock()

		res, err := l.o.AlterPartition(l.ctx, isr, le, pe)

		l.mu.Lock()
		if l.stopped || l.pending != ch {
			// Stopped, or an Update overtook this change.
			l.mu.Unlock()
			continue
		}
		retry := false
		var hw int64
		var moved, shrunk, expanded bool
		switch code := codeOf(err); {
		case err == nil:
			if res.LeaderEpoch != l.leaderEpoch || res.PartitionEpoch < l.partitionEpoch {
				// A stale answer: wait for the image.
				l.lg.Info("ignoring stale AlterPartition answer", "epoch", res.LeaderEpoch, "partition_epoch", res.PartitionEpoch)
				break
			}
			shrunk, expanded = isrDiff(l.isr, res.ISR)
			l.isr = slices.Clone(res.ISR)
			l.partitionEpoch = res.PartitionEpoch
			l.pending = nil
			l.changedLocked()
			l.lg.Info("ISR updated", "isr", l.isr, "partition_epoch", l.partitionEpoch)
			hw, moved = l.maybeAdvanceLocked(l.o.Now())
		case code == kerr.OperationNotAttempted || code == kerr.IneligibleReplica:
			// The controller says it did not apply it: back to the
			// committed state; a later fetch or check may propose again.
			l.lg.Info("AlterPartition rejected; ISR unchanged", "isr", l.isr, "err", err)
			l.pending = nil
			l.changedLocked()
		case code == kerr.UnknownTopicOrPartition || code == kerr.UnknownTopicID ||
			code == kerr.FencedLeaderEpoch || code == kerr.InvalidUpdateVersion ||
			code == kerr.InvalidRequest || code == kerr.NewLeaderElected:
			// Our state is stale; the next Update replaces it.
			l.lg.Info("AlterPartition failed; awaiting new metadata", "proposed", ch.isr, "err", err)
		case errors.Is(err, context.Canceled) && l.ctx.Err() != nil:
		default:
			l.lg.Warn("AlterPartition failed; retrying", "proposed", ch.isr, "err", err)
			ch.send = true
			retry = true
		}
		l.mu.Unlock()
		l.isrChanged(shrunk, expanded)
		if moved {
			l.notify(hw)
		}
		if retry {
			select {
			case <-l.stop:
				return
			case <-time.After(l.o.RetryBackoff):
			}
		}
	}
}
