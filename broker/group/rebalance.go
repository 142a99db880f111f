package group

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// This file is the rebalance half of Kafka's GroupMetadataManager for
// classic groups: preparing a rebalance, completing the join phase,
// propagating the leader's assignment, and the timers that drive them
// (initial delay, rebalance timeout, pending sync, member sessions). Every
// function here runs with g.mu held; timer callbacks take it themselves.

// after runs fn under the group lock after d, unless the group died.
func (g *group) after(d time.Duration, fn func()) *time.Timer {
	if d < 0 {
		d = 0
	}
	return time.AfterFunc(d, func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.state == stateDead {
			return
		}
		fn()
	})
}

func (g *group) cancelJoinTimer() {
	g.joinSeq = g.nextSeq()
	if g.joinTimer != nil {
		g.joinTimer.Stop()
		g.joinTimer = nil
	}
}

func (g *group) cancelSyncTimer() {
	g.syncSeq = g.nextSeq()
	if g.syncTimer != nil {
		g.syncTimer.Stop()
		g.syncTimer = nil
	}
}

// scheduleJoin (re)arms the group's join timer; only the latest one fires.
func (g *group) scheduleJoin(d time.Duration, fn func()) {
	g.cancelJoinTimer()
	seq := g.joinSeq
	g.joinTimer = g.after(d, func() {
		if g.joinSeq == seq {
			g.joinTimer = nil
			fn()
		}
	})
}

func (g *group) stopHeartbeat(m *member) {
	m.hbSeq = g.nextSeq()
	if m.hbTimer != nil {
		m.hbTimer.Stop()
		m.hbTimer = nil
	}
}

// rescheduleHeartbeat restarts a member's session timer.
func (g *group) rescheduleHeartbeat(m *member, d time.Duration) {
	g.stopHeartbeat(m)
	seq := m.hbSeq
	m.hbTimer = g.after(d, func() {
		if m.hbSeq == seq && g.members[m.id] == m {
			m.hbTimer = nil
			g.expireHeartbeat(m)
		}
	})
}

func (g *group) sessionTimeout(m *member) time.Duration {
	return time.Duration(m.sessionTimeoutMs) * time.Millisecond
}

// schedulePendingExpiry drops a pending (MEMBER_ID_REQUIRED) member that
// does not come back within its session timeout.
func (g *group) schedulePendingExpiry(id string, d time.Duration) {
	pm := g.pending[id]
	if pm == nil {
		return
	}
	seq := pm.seq
	pm.timer = g.after(d, func() {
		if cur := g.pending[id]; cur != nil && cur.seq == seq {
			g.c.log.Info("pending member removed after session timeout", "group", g.id, "member_id", id)
			g.remove(id)
			if g.state == statePreparingRebalance && g.hasAllMembersJoined() {
				g.completeJoinPhase()
			}
		}
	})
}

// expireHeartbeat removes a member whose session ran out, unless it is
// parked in a join or sync (then it is alive by definition).
func (g *group) expireHeartbeat(m *member) {
	if m.hasSatisfiedHeartbeat() {
		return
	}
	g.c.log.Info("member failed to heartbeat within its session timeout; removing it",
		"group", g.id, "member_id", m.id, "session_timeout_ms", m.sessionTimeoutMs)
	g.removeMemberAndUpdate(m, "session timeout expired")
}

// removeMemberAndUpdate removes a member (answering a parked JoinGroup
// UNKNOWN_MEMBER_ID so a live client rejoins) and moves the group on.
func (g *group) removeMemberAndUpdate(m *member, reason string) {
	r := kmsg.NewPtrJoinGroupResponse()
	r.ErrorCode = kerr.UnknownMemberID.Code
	g.completeJoin(m, r)
	g.remove(m.id)
	switch {
	case g.state == stateStable || g.state == stateCompletingRebalance:
		g.maybePrepareRebalanceOrCompleteJoin(reason)
	case g.state == statePreparingRebalance && g.hasAllMembersJoined():
		g.completeJoinPhase()
	}
}

func (g *group) maybePrepareRebalanceOrCompleteJoin(reason string) {
	if g.canRebalance() {
		g.prepareRebalance(reason)
	} else {
		g.maybeCompleteJoinPhase()
	}
}

// maybeCompleteJoinPhase completes the join phase once everyone rejoined,
// except during the initial (delayed) rebalance of a new group.
func (g *group) maybeCompleteJoinPhase() {
	if g.state != statePreparingRebalance || g.prevState == stateEmpty || !g.hasAllMembersJoined() {
		return
	}
	g.completeJoinPhase()
}

// prepareRebalance moves the group to PreparingRebalance. Members parked
// in SyncGroup are told REBALANCE_IN_PROGRESS. A rebalance from Empty is
// the initial one: it waits group.initial.rebalance.delay.ms, extended
// while new members keep arriving, up to the rebalance timeout (KIP-134).
func (g *group) prepareRebalance(reason string) {
	if g.state == stateCompletingRebalance {
		g.resetAndPropagateAssignmentWithError(kerr.RebalanceInProgress.Code)
	}
	g.cancelSyncTimer()
	g.pendingSync = nil

	initial := g.state == stateEmpty
	if initial {
		delay := g.c.cfg.InitialRebalanceDelay
		remaining := g.rebalanceTimeout() - delay
		if remaining < 0 {
			remaining = 0
		}
		g.newMemberAdded = false
		g.scheduleJoin(delay, func() { g.tryCompleteInitialRebalance(delay, remaining) })
	}
	g.transition(statePreparingRebalance)
	g.c.log.Info("preparing to rebalance group", "group", g.id, "generation", g.generation,
		"members", len(g.members), "reason", reason)
	if !initial {
		g.maybeCompleteJoinElseSchedule()
	}
}

func (g *group) maybeCompleteJoinElseSchedule() {
	if g.hasAllMembersJoined() {
		g.completeJoinPhase()
		return
	}
	g.scheduleJoin(g.rebalanceTimeout(), g.completeJoinPhase)
}

func (g *group) tryCompleteInitialRebalance(delay, remaining time.Duration) {
	if g.newMemberAdded && remaining != 0 {
		g.newMemberAdded = false
		next := min(g.c.cfg.InitialRebalanceDelay, remaining)
		left := max(remaining-delay, 0)
		g.scheduleJoin(next, func() { g.tryCompleteInitialRebalance(next, left) })
		return
	}
	g.completeJoinPhase()
}

// completeJoinPhase ends the join phase: dynamic members that did not
// rejoin are dropped (static ones keep their place), the generation
// advances, and every parked JoinGroup is answered; the leader gets the
// member list. An empty result is persisted right away; otherwise the
// group waits for SyncGroup from every member.
func (g *group) completeJoinPhase() {
	if g.state != statePreparingRebalance {
		return
	}
	g.cancelJoinTimer()
	var dropped []string
	for _, id := range append([]string(nil), g.order...) {
		m := g.members[id]
		if m.join == nil && m.instanceID == nil {
			g.remove(id)
			dropped = append(dropped, id)
		}
	}
	if len(dropped) > 0 {
		g.c.log.Info("removed dynamic members that did not rejoin", "group", g.id, "members", dropped)
	}

	if !g.maybeElectNewJoinedLeader() && len(g.members) > 0 {
		// Only static members that have not rejoined remain: wait another
		// rebalance timeout for them or for their sessions to expire.
		g.c.log.Warn("group could not complete rebalance because no members rejoined", "group", g.id)
		// At least a second between retries: members loaded with a zero
		// rebalance timeout would otherwise spin here until their
		// sessions expire.
		g.scheduleJoin(max(g.rebalanceTimeout(), time.Second), g.completeJoinPhase)
		return
	}

	g.initNextGeneration()
	if g.state == stateEmpty {
		g.c.log.Info("group is now empty", "group", g.id, "generation", g.generation)
		rec := []Record{{Key: groupKey(g.id), Value: groupValue(g, nil)}}
		g.w.enqueue(rec, func(err error) {
			if err != nil {
				g.c.log.Warn("failed to persist empty group metadata", "group", g.id, "err", err)
			}
		})
		return
	}

	g.c.log.Info("group rebalanced; awaiting sync", "group", g.id, "generation", g.generation,
		"protocol", g.protocol, "leader", g.leader, "members", len(g.members))
	g.pendingSync = make(map[string]struct{}, len(g.members))
	for _, id := range g.order {
		m := g.members[id]
		g.completeJoin(m, g.joinResponse(m.id, g.isLeader(m.id)))
		g.rescheduleHeartbeat(m, g.sessionTimeout(m))
		m.isNew = false
		g.pendingSync[m.id] = struct{}{}
	}
	g.schedulePendingSync()
}

// schedulePendingSync removes members that do not send SyncGroup within
// the rebalance timeout, then rebalances without them.
func (g *group) schedulePendingSync() {
	g.cancelSyncTimer()
	seq, gen := g.syncSeq, g.generation
	g.syncTimer = g.after(g.rebalanceTimeout(), func() {
		if g.syncSeq != seq || g.generation != gen {
			return
		}
		g.syncTimer = nil
		if g.state != stateCompletingRebalance && g.state != stateStable {
			return
		}
		if len(g.pendingSync) == 0 {
			return
		}
		var ids []string
		for id := range g.pendingSync {
			ids = append(ids, id)
		}
		for _, id := range ids {
			g.remove(id)
		}
		g.c.log.Info("removed members that did not send SyncGroup in time", "group", g.id, "members", ids)
		g.prepareRebalance("pending sync expired")
	})
}

func (g *group) removePendingSync(id string) {
	delete(g.pendingSync, id)
	if len(g.pendingSync) == 0 {
		g.cancelSyncTimer()
	}
}

func (g *group) resetAndPropagateAssignmentWithError(code int16) {
	for _, m := range g.members {
		m.assignment = nil
	}
	g.propagateAssignment(code)
}

func (g *group) setAndPropagateAssignment(assignment map[string][]byte) {
	for _, m := range g.members {
		m.assignment = assignment[m.id]
	}
	g.propagateAssignment(0)
}

// propagateAssignment answers every parked SyncGroup and restarts those
// members' session timers: expirations that fired while they were parked
// were ignored, so nothing else would expire them.
func (g *group) propagateAssignment(code int16) {
	for _, id := range g.order {
		m := g.members[id]
		r := kmsg.NewPtrSyncGroupResponse()
		r.ErrorCode = code
		if code == 0 {
			if g.protocolType != "" {
				r.ProtocolType = kmsg.StringPtr(g.protocolType)
			}
			if g.hasProtocol {
				r.Protocol = kmsg.StringPtr(g.protocol)
			}
			r.MemberAssignment = m.assignment
		}
		if r.MemberAssignment == nil {
			r.MemberAssignment = []byte{}
		}
		if g.completeSync(m, r) {
			g.rescheduleHeartbeat(m, g.sessionTimeout(m))
		}
	}
}

// onLoaded starts the session timers of replayed members (from now, as
// Kafka does) and rebalances a group that is over group.max.size.
func (g *group) onLoaded() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state == stateDead {
		return
	}
	for _, id := range g.order {
		m := g.members[id]
		g.rescheduleHeartbeat(m, g.sessionTimeout(m))
	}
	if len(g.members) > g.c.cfg.MaxGroupSize {
		g.prepareRebalance("freshly loaded group is over group.max.size")
	}
}
