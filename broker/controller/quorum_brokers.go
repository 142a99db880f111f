package controller

import (
	"context"
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/fjordhq/fjord/broker/metadata"
)

// Broker lifecycle on the active controller, after Kafka's
// ClusterControlManager and BrokerHeartbeatManager: registration gives a
// broker epoch and a fenced registration; heartbeats unfence it once it
// has caught up with the metadata log; missed heartbeats fence it again;
// a heartbeat asking to shut down starts a controlled shutdown.

// brokerSession is the active controller's in-memory heartbeat state.
// It is not replicated: a new active controller starts every broker with
// a fresh session.
type brokerSession struct {
	// expires is when the session ends unless a heartbeat renews it:
	// normally the last heartbeat plus broker.session.timeout.ms, earlier
	// after the heartbeat's connection closed or a controller failover
	// (see connectionLost and becomeActive).
	expires time.Time
	// cut says why expires is earlier than a session timeout after the
	// last heartbeat ("" if it is not), for the fencing log line.
	cut    string
	fenced bool
	// metadataOffset is the metadata offset the broker last reported it
	// applied; shutdownOffset the offset of the entry that moved its
	// leaderships away when it entered controlled shutdown.
	metadataOffset int64
	shutdownOffset int64
	// heartbeat is when the broker's latest heartbeat arrived.
	heartbeat time.Time
	// conn is the done channel of the controller-listener connection the
	// latest heartbeat came on (nil: none known), and unwatch stops the
	// watch on it.
	conn    <-chan struct{}
	unwatch func() bool
	// since is when this controller became active, until the broker's
	// first heartbeat to it (then zero): how long live brokers take to
	// find a new controller is logged, as it bounds the post-failover
	// grace.
	since time.Time
}

func (s *brokerSession) expired(now time.Time) bool { return now.After(s.expires) }

// stopWatch stops watching the session's connection.
func (s *brokerSession) stopWatch() {
	if s.unwatch != nil {
		s.unwatch()
	}
	s.conn, s.unwatch = nil, nil
}

// sessionValid reports whether the broker has an unexpired session
// (Kafka's hasValidSession). Caller holds q.mu.
func (q *Quorum) sessionValid(id int32, now time.Time) bool {
	s := q.sessions[id]
	b := q.Image().Brokers[id]
	return s != nil && b != nil && !b.Fenced && !s.expired(now)
}

// lossGrace is how long a broker keeps its session after the connection
// its latest heartbeat came on closed: two heartbeat intervals. A live
// broker whose connection merely broke redials and heartbeats within one
// interval and keeps its session; a killed one (its kernel closes its
// sockets at once) is fenced one grace after its death instead of one
// session timeout after its last heartbeat. Never longer than the session
// timeout: losing a connection must not extend a session.
func (q *Quorum) lossGrace() time.Duration {
	return min(2*q.opts.BrokerHeartbeatInterval, q.opts.BrokerSessionTimeout)
}

// watchConn remembers the connection a heartbeat came on, if the request
// context says which (ConnectionContext), so its closing can shorten the
// session. Only the latest heartbeat's connection counts: a broker's
// ControllerClient redials when a connection breaks, and a heartbeat on
// the new connection replaces the watch on the old. Caller holds q.mu.
func (q *Quorum) watchConn(ctx context.Context, id int32, s *brokerSession) {
	cc, ok := ctx.Value(connCtxKey{}).(context.Context)
	if !ok {
		return
	}
	done := cc.Done()
	if done == nil || done == s.conn {
		return
	}
	s.stopWatch()
	s.conn = done
	// AfterFunc runs at once (in its own goroutine) if the connection
	// closed while the heartbeat was processed: that broker is gone too.
	s.unwatch = context.AfterFunc(cc, func() { q.connectionLost(id, done) })
}

// connectionLost shortens broker id's session to lossGrace from now if the
// connection that closed (done) is still the one its latest heartbeat
// came on and the session is not already shorter.
func (q *Quorum) connectionLost(id int32, done <-chan struct{}) {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := q.sessions[id]
	if s == nil || s.conn != done || !q.IsActive() {
		return
	}
	s.conn, s.unwatch = nil, nil
	if b := q.Image().Brokers[id]; b == nil || b.Fenced {
		return
	}
	if exp := time.Now().Add(q.lossGrace()); exp.Before(s.expires) {
		s.expires, s.cut = exp, "its heartbeat connection closed"
		q.log.Info("broker's heartbeat connection closed; it is fenced unless it heartbeats again",
			"broker", id, "within", q.lossGrace())
	}
}

// RegisterBroker registers a broker process and returns its broker epoch.
// The same incarnation registering again amends its registration and
// keeps the epoch; a new incarnation gets a new epoch (the offset of its
// registration) and starts fenced. A new incarnation while the old one
// still has a live session is refused (DUPLICATE_BROKER_REGISTRATION), as
// in Kafka: the old process may still be running.
func (q *Quorum) RegisterBroker(ctx context.Context, r BrokerRegistration) (int64, *Error) {
	if err := q.lockActive(); err != nil {
		return 0, err
	}
	defer q.mu.Unlock()
	now := time.Now()
	img := q.Image()
	old := img.Brokers[r.ID]
	b := metadata.Broker{
		ID: r.ID, Host: r.Host, Port: r.Port, Rack: r.Rack,
		IncarnationID: r.IncarnationID, Fenced: true, Epoch: metadata.EpochFromOffset,
	}
	for _, l := range r.Listeners {
		b.Listeners = append(b.Listeners, metadata.Listener{Name: l.Name, Host: l.Host, Port: l.Port})
	}
	var recs []metadata.Record
	if old != nil && old.IncarnationID == r.IncarnationID {
		b.Epoch, b.Fenced, b.InControlledShutdown = old.Epoch, old.Fenced, old.InControlledShutdown
		if old.Equal(&b) {
			q.touch(r.ID, now)
			return old.Epoch, nil
		}
	} else if old != nil {
		if q.sessionValid(r.ID, now) {
			return 0, errorf(kerr.DuplicateBrokerRegistration, "Another broker is registered with that broker id.")
		}
		// The previous incarnation is gone; whatever it led or followed
		// must not wait for a process that restarted (and may have lost
		// unflushed data): drop it from every ISR and move its
		// leaderships, as fencing does.
		recs = q.partitionUpdates(img, r.ID, -1, q.partitionsWithReplicaInISR(img, r.ID))
	}
	recs = append(recs, metadata.Record{Broker: &metadata.RegisterBrokerRecord{Broker: b}})
	if err := q.propose(recs); err != nil {
		return 0, err
	}
	if old := q.sessions[r.ID]; old != nil {
		old.stopWatch()
	}
	q.sessions[r.ID] = &brokerSession{expires: now.Add(q.opts.BrokerSessionTimeout), fenced: q.Image().Brokers[r.ID].Fenced}
	return q.Image().Brokers[r.ID].Epoch, nil
}

// touch renews broker id's session for a full session timeout.
func (q *Quorum) touch(id int32, now time.Time) {
	s := q.sessions[id]
	if s == nil {
		s = &brokerSession{}
		q.sessions[id] = s
	}
	if !s.since.IsZero() {
		q.log.Info("first contact from broker since this controller became active", "broker", id, "after", now.Sub(s.since))
		s.since = time.Time{}
	}
	s.expires, s.cut = now.Add(q.opts.BrokerSessionTimeout), ""
}

// brokerState is Kafka's BrokerControlState.
type brokerState int

const (
	stateFenced brokerState = iota
	stateUnfenced
	stateControlledShutdown
	stateShutdownNow
)

func stateOf(b *metadata.Broker) brokerState {
	switch {
	case b.Fenced:
		return stateFenced
	case b.InControlledShutdown:
		return stateControlledShutdown
	}
	return stateUnfenced
}

// BrokerHeartbeat processes a heartbeat (Kafka's processBrokerHeartbeat):
// it renews the session and moves the broker between fenced, unfenced,
// controlled shutdown and shutdown-now.
func (q *Quorum) BrokerHeartbeat(ctx context.Context, h BrokerHeartbeat) (HeartbeatResult, *Error) {
	if err := q.lockActive(); err != nil {
		return HeartbeatResult{}, err
	}
	defer q.mu.Unlock()
	img := q.Image()
	b := img.Brokers[h.ID]
	if b == nil {
		return HeartbeatResult{}, errorf(kerr.BrokerIDNotRegistered, "No broker registration found for broker id %d", h.ID)
	}
	if b.Epoch != h.Epoch {
		return HeartbeatResult{}, errorf(kerr.StaleBrokerEpoch, "Expected broker epoch %d, but got broker epoch %d", b.Epoch, h.Epoch)
	}
	now := time.Now()
	q.touch(h.ID, now)
	sess := q.sessions[h.ID]
	q.watchConn(ctx, h.ID, sess)
	sess.metadataOffset = h.MetadataOffset
	sess.heartbeat = now
	cur := stateOf(b)
	next := cur
	switch cur {
	case stateFenced:
		switch {
		case h.WantShutdown:
			next = stateShutdownNow
		case !h.WantFence && h.MetadataOffset >= b.Epoch:
			next = stateUnfenced
		}
	case stateUnfenced:
		switch {
		case h.WantFence && h.WantShutdown:
			next = stateShutdownNow
		case h.WantFence:
			next = stateFenced
		case h.WantShutdown && leadsAny(img, h.ID):
			next = stateControlledShutdown
		case h.WantShutdown:
			next = stateShutdownNow
		}
	case stateControlledShutdown:
		// Kafka's rule: leading nothing is not enough; every active
		// broker must have applied the entry that moved the leaderships,
		// so the new leaders act as leaders before this one stops.
		if !leadsAny(img, h.ID) && q.lowestActiveOffset(img) >= sess.shutdownOffset {
			next = stateShutdownNow
		}
	}
	var recs []metadata.Record
	if next != cur {
		switch next {
		case stateFenced, stateShutdownNow:
			if cur != stateFenced {
				recs = q.fenceRecords(img, b)
			}
		case stateUnfenced:
			recs = q.unfenceRecords(img, b)
		case stateControlledShutdown:
			recs = q.controlledShutdownRecords(img, b)
		}
	}
	if err := q.propose(recs); err != nil {
		return HeartbeatResult{}, err
	}
	sess.fenced = next == stateFenced || next == stateShutdownNow
	if next == stateControlledShutdown && cur != stateControlledShutdown {
		sess.shutdownOffset = q.Image().Offset
	}
	return HeartbeatResult{
		IsCaughtUp:     h.MetadataOffset >= b.Epoch,
		IsFenced:       next == stateFenced || next == stateShutdownNow,
		ShouldShutdown: next == stateShutdownNow,
	}, nil
}

// lowestActiveOffset is the lowest metadata offset the active brokers
// (registered, unfenced, not shutting down) last reported, as Kafka's
// BrokerHeartbeatManager.lowestActiveOffset; MaxInt64 when there is none.
// Caller holds q.mu.
func (q *Quorum) lowestActiveOffset(img *metadata.Image) int64 {
	low := int64(math.MaxInt64)
	for id, b := range img.Brokers {
		if !b.Active() {
			continue
		}
		off := int64(-1) // no heartbeat to this controller yet
		if s := q.sessions[id]; s != nil {
			off = s.metadataOffset
		}
		low = min(low, off)
	}
	return low
}

// leadsAny reports whether broker id leads any partition.
func leadsAny(img *metadata.Image, id int32) bool {
	for _, t := range img.Topics {
		for _, p := range t.Partitions {
			if p.Leader == id {
				return true
			}
		}
	}
	return false
}

// fenceRecords fences b: it leaves every ISR (except where it is the last
// member: Kafka keeps ISR=[b] with no leader, an offline partition that b
// leads again when it comes back), its leaderships move to the next live
// ISR member, then the broker is marked fenced (Kafka's
// handleBrokerFenced).
func (q *Quorum) fenceRecords(img *metadata.Image, b *metadata.Broker) []metadata.Record {
	recs := q.partitionUpdates(img, b.ID, -1, q.partitionsWithReplicaInISR(img, b.ID))
	t := true
	return append(recs, metadata.Record{BrokerChange: &metadata.BrokerChangeRecord{ID: b.ID, Epoch: b.Epoch, Fenced: &t}})
}

// unfenceRecords unfences b and gives it back the leadership of offline
// partitions it can lead (Kafka's handleBrokerUnfenced). It does not
// rejoin any ISR: the leader adds it back with AlterPartition once it has
// caught up.
func (q *Quorum) unfenceRecords(img *metadata.Image, b *metadata.Broker) []metadata.Record {
	f := false
	recs := []metadata.Record{{BrokerChange: &metadata.BrokerChangeRecord{ID: b.ID, Epoch: b.Epoch, Fenced: &f}}}
	return append(recs, q.partitionUpdates(img, -1, b.ID, q.partitionsWithoutLeader(img))...)
}

// controlledShutdownRecords marks b in controlled shutdown and moves its
// leaderships away, dropping it from ISRs that have other members
// (Kafka's handleBrokerInControlledShutdown).
func (q *Quorum) controlledShutdownRecords(img *metadata.Image, b *metadata.Broker) []metadata.Record {
	t := true
	recs := []metadata.Record{{BrokerChange: &metadata.BrokerChangeRecord{ID: b.ID, Epoch: b.Epoch, InControlledShutdown: &t}}}
	return append(recs, q.partitionUpdates(img, b.ID, -1, q.partitionsWithReplicaInISR(img, b.ID))...)
}

// tick runs on the active controller: fence one broker whose session
// expired (one at a time, as Kafka does, so each fencing is visible before
// the next), then maybe balance leaders.
func (q *Quorum) tick() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.IsActive() {
		return
	}
	now := time.Now()
	img := q.Image()
	for _, id := range img.BrokerIDs() {
		b := img.Brokers[id]
		if b.Fenced {
			continue
		}
		s := q.sessions[id]
		if s == nil {
			q.sessions[id] = &brokerSession{expires: now.Add(q.opts.BrokerSessionTimeout)}
			continue
		}
		if s.expired(now) {
			if s.cut != "" {
				q.log.Info("fencing broker: its shortened session expired", "broker", id, "because", s.cut)
			} else {
				q.log.Info("fencing broker: its session timed out", "broker", id, "timeout", q.opts.BrokerSessionTimeout)
			}
			if err := q.propose(q.fenceRecords(img, b)); err != nil {
				q.log.Warn("fencing broker failed", "broker", id, "err", err)
			} else {
				s.fenced = true
			}
			return
		}
	}
	q.maybeElectUnclean()
	q.maybeRebalance(now)
}

// maybeElectUnclean elects leaders outside the ISR for offline partitions
// whose topic allows it: unclean.leader.election.enable may have been
// turned on after the partition went offline (Kafka's
// maybeElectUncleanLeaders). Caller holds q.mu.
func (q *Quorum) maybeElectUnclean() {
	img := q.Image()
	var parts []partRef
	for _, ref := range q.partitionsWithoutLeader(img) {
		if q.uncleanEnabled(img, ref.t.Name) {
			parts = append(parts, ref)
		}
	}
	if len(parts) == 0 {
		return
	}
	if recs := q.partitionUpdates(img, -1, -1, parts); len(recs) > 0 {
		q.log.Warn("unclean leader election", "partitions", len(recs))
		if err := q.propose(recs); err != nil {
			q.log.Warn("unclean leader election failed", "err", err)
		}
	}
}
