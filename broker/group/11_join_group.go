package group

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// JoinGroup, versions 0-9.
//
// v0 has no rebalance timeout (the session timeout stands in, as in
// Kafka); v4+ dynamic members first get MEMBER_ID_REQUIRED with their
// member id (KIP-394); v5+ static members (group.instance.id, KIP-345)
// rejoin under a new member id without a rebalance when the group's
// protocol does not change, fencing the old id with FENCED_INSTANCE_ID;
// v9 tells a rejoining static leader to skip assignment (KIP-814). The
// request blocks until the join phase completes or ctx ends.

// JoinGroup handles a JoinGroupRequest, blocking until the join phase of
// the rebalance completes or ctx (the connection) ends.
func (c *Coordinator) JoinGroup(ctx context.Context, r *kmsg.JoinGroupRequest) *kmsg.JoinGroupResponse {
	fail := func(code int16, memberID string) *kmsg.JoinGroupResponse {
		resp := kmsg.NewPtrJoinGroupResponse()
		resp.Version = r.Version
		resp.ErrorCode = code
		resp.MemberID = memberID
		return resp
	}
	if r.Group == "" {
		return fail(kerr.InvalidGroupID.Code, r.MemberID)
	}
	if int64(r.SessionTimeoutMillis) < c.cfg.MinSessionTimeout.Milliseconds() ||
		int64(r.SessionTimeoutMillis) > c.cfg.MaxSessionTimeout.Milliseconds() {
		return fail(kerr.InvalidSessionTimeout.Code, r.MemberID)
	}
	rebalanceMs := r.RebalanceTimeoutMillis
	if r.Version == 0 {
		rebalanceMs = r.SessionTimeoutMillis
	}
	ps := make([]protocol, 0, len(r.Protocols))
	for _, p := range r.Protocols {
		ps = append(ps, protocol{name: p.Name, metadata: p.Metadata})
	}
	j := &joinCall{
		req:         r,
		client:      clientFrom(ctx),
		protocols:   ps,
		rebalanceMs: rebalanceMs,
		waiter:      &joinWaiter{version: r.Version, ch: make(chan *kmsg.JoinGroupResponse, 1)},
	}

	unknown := r.MemberID == ""
	g, created, code := c.lookup(r.Group, unknown)
	if code != 0 {
		return fail(code, r.MemberID)
	}
	if g == nil {
		// A member id for a group we do not know: it was deleted or
		// expired; the client resets its member id and joins anew.
		return fail(kerr.UnknownMemberID.Code, r.MemberID)
	}

	var wr *write
	if !g.acceptJoiningMember(r.MemberID) {
		g.remove(r.MemberID)
		j.respond(fail(kerr.GroupMaxSizeReached.Code, ""))
	} else if unknown {
		wr = g.joinNewMember(j)
	} else {
		wr = g.joinExistingMember(j)
	}
	if created && wr == nil {
		// Kafka commits a new group with an empty metadata record when
		// nothing else is written for it.
		wr = g.w.enqueue([]Record{{Key: groupKey(g.id), Value: emptyGroupValue(g.stateMs)}}, nil)
	}
	g.mu.Unlock()

	if wr != nil {
		select {
		case <-wr.done:
			if wr.err != nil && created {
				c.log.Warn("failed to persist new group", "group", r.Group, "err", wr.err)
				return fail(appendErrorCode(wr.err), r.MemberID)
			}
		case <-ctx.Done():
			return fail(kerr.RebalanceInProgress.Code, r.MemberID)
		}
	}
	select {
	case resp := <-j.waiter.ch:
		resp.Version = r.Version
		return resp
	case <-ctx.Done():
		// The client is gone; like Kafka (which cannot see a parked
		// client disconnect) the member stays awaiting until the join
		// phase or its session timeout settles it.
		return fail(kerr.RebalanceInProgress.Code, r.MemberID)
	}
}

// joinCall is one JoinGroup in flight.
type joinCall struct {
	req         *kmsg.JoinGroupRequest
	client      clientInfo
	protocols   []protocol
	rebalanceMs int32
	waiter      *joinWaiter
}

// respond answers the call right away (not parked on a member).
func (j *joinCall) respond(r *kmsg.JoinGroupResponse) { j.waiter.deliver(r) }

func (j *joinCall) reply(code int16, memberID string) {
	r := kmsg.NewPtrJoinGroupResponse()
	r.ErrorCode = code
	r.MemberID = memberID
	j.respond(r)
}

// acceptJoiningMember enforces group.max.size (Kafka's rules: while
// preparing a rebalance, count members already waiting in JoinGroup;
// otherwise count members).
func (g *group) acceptJoiningMember(memberID string) bool {
	max := g.c.cfg.MaxGroupSize
	switch g.state {
	case statePreparingRebalance:
		if m, ok := g.members[memberID]; ok && m.join != nil {
			return true
		}
		return g.awaitingJoin < max
	case stateCompletingRebalance, stateStable:
		if _, ok := g.members[memberID]; ok {
			return true
		}
		return len(g.members) < max
	default:
		return true
	}
}

func (g *group) joinNewMember(j *joinCall) *write {
	r := j.req
	if !g.supportsProtocols(r.ProtocolType, j.protocols) {
		j.reply(kerr.InconsistentGroupProtocol.Code, "")
		return nil
	}
	clientID := j.client.id
	newID := generateMemberID(clientID, r.InstanceID)
	if r.InstanceID != nil {
		if existing, ok := g.static[*r.InstanceID]; ok {
			g.c.log.Info("static member rejoined with an unknown member id; replacing its old member id",
				"group", g.id, "instance_id", *r.InstanceID, "old_member_id", existing, "member_id", newID, "state", g.state)
			return g.updateStaticMember(j, existing, newID)
		}
		g.c.log.Info("new static member joins", "group", g.id, "instance_id", *r.InstanceID, "member_id", newID)
		g.addMemberAndRebalance(j, newID)
		return nil
	}
	if r.Version >= 4 {
		// KIP-394: the member must come back with its id, so that a
		// client that never learns its id leaves no member behind.
		g.addPending(newID)
		g.schedulePendingExpiry(newID, msDuration(r.SessionTimeoutMillis))
		j.reply(kerr.MemberIDRequired.Code, newID)
		return nil
	}
	g.addMemberAndRebalance(j, newID)
	return nil
}

func (g *group) joinExistingMember(j *joinCall) *write {
	r := j.req
	id := r.MemberID
	if !g.supportsProtocols(r.ProtocolType, j.protocols) {
		j.reply(kerr.InconsistentGroupProtocol.Code, id)
		return nil
	}
	if _, ok := g.pending[id]; ok {
		if r.InstanceID != nil {
			// Pending members are dynamic by construction.
			j.reply(kerr.UnknownMemberID.Code, id)
			return nil
		}
		g.addMemberAndRebalance(j, id)
		return nil
	}
	if code := g.validateMember(id, r.InstanceID); code != 0 {
		j.reply(code, id)
		return nil
	}
	m := g.members[id]
	switch g.state {
	case statePreparingRebalance:
		g.updateMemberAndRebalance(m, j, "member rejoined while preparing rebalance")
	case stateCompletingRebalance:
		if m.matches(j.protocols) {
			// The member lost its JoinGroup response: resend it.
			j.respond(g.joinResponse(id, g.isLeader(id)))
		} else {
			g.updateMemberAndRebalance(m, j, "member changed its metadata while completing rebalance")
		}
	case stateStable:
		switch {
		case g.isLeader(id):
			// A rejoining leader forces a rebalance: it may have seen
			// changes (new partitions) that the metadata does not show.
			g.updateMemberAndRebalance(m, j, "leader rejoined")
		case !m.matches(j.protocols):
			g.updateMemberAndRebalance(m, j, "member changed its metadata")
		default:
			j.respond(g.joinResponse(id, false))
		}
	default:
		g.c.log.Warn("rejoining member found the group in an unexpected state", "group", g.id, "member_id", id, "state", g.state)
		j.reply(kerr.UnknownMemberID.Code, id)
	}
	return nil
}

func (g *group) updateMemberAndRebalance(m *member, j *joinCall, reason string) {
	g.updateMember(m, j.protocols, j.rebalanceMs, j.req.SessionTimeoutMillis, j.waiter)
	g.maybePrepareRebalanceOrCompleteJoin(reason)
}

func (g *group) addMemberAndRebalance(j *joinCall, id string) {
	r := j.req
	m := &member{
		id:                 id,
		instanceID:         r.InstanceID,
		clientID:           j.client.id,
		clientHost:         j.client.host,
		rebalanceTimeoutMs: j.rebalanceMs,
		sessionTimeoutMs:   r.SessionTimeoutMillis,
		protocolType:       r.ProtocolType,
		protocols:          j.protocols,
		isNew:              true,
	}
	if g.state == statePreparingRebalance && g.prevState == stateEmpty {
		g.newMemberAdded = true
	}
	g.add(m, j.waiter)
	// A parked JoinGroup cannot heartbeat and Kafka cannot see the client
	// disconnect, so new members' joins are bounded separately.
	g.rescheduleHeartbeat(m, newMemberJoinTimeout)
	reason := "new member joined"
	if r.Reason != nil && *r.Reason != "" {
		reason += ": " + *r.Reason
	}
	g.maybePrepareRebalanceOrCompleteJoin(reason)
}

// updateStaticMember replaces a static member's id. In a Stable group
// whose protocol would not change, there is no rebalance: the member is
// persisted under its new id and gets the current generation (a v9+
// leader is told to skip assignment; an older one is not told it leads,
// so it does not reassign).
func (g *group) updateStaticMember(j *joinCall, oldID, newID string) *write {
	r := j.req
	prevLeader := g.leader
	nm := g.replaceStaticMember(*r.InstanceID, oldID, newID)
	g.rescheduleHeartbeat(nm, g.sessionTimeout(nm))
	oldProtocols, oldRebalance, oldSession := nm.protocols, nm.rebalanceTimeoutMs, nm.sessionTimeoutMs
	g.updateMember(nm, j.protocols, j.rebalanceMs, r.SessionTimeoutMillis, j.waiter)

	switch g.state {
	case stateStable:
		if !g.hasProtocol || g.selectProtocol() != g.protocol {
			g.maybePrepareRebalanceOrCompleteJoin("static member rejoined with a change of protocol")
			return nil
		}
		gen := g.generation
		rec := []Record{{Key: groupKey(g.id), Value: groupValue(g, nil)}}
		return g.w.enqueue(rec, func(err error) {
			g.mu.Lock()
			defer g.mu.Unlock()
			if g.members[newID] != nm {
				return
			}
			if err != nil {
				g.c.log.Warn("failed to persist static member replacement; reverting", "group", g.id,
					"instance_id", *r.InstanceID, "member_id", newID, "err", err)
				g.updateMember(nm, oldProtocols, oldRebalance, oldSession, nil)
				reverted := g.replaceStaticMember(*r.InstanceID, newID, oldID)
				g.rescheduleHeartbeat(reverted, g.sessionTimeout(reverted))
				fail := kmsg.NewPtrJoinGroupResponse()
				fail.ErrorCode = appendErrorCode(err)
				j.respond(fail)
				return
			}
			resp := g.joinResponse(newID, false)
			resp.Generation = gen
			if r.Version >= 9 {
				if g.isLeader(newID) {
					resp.Members = g.currentMembers()
					resp.SkipAssignment = true
				}
			} else {
				resp.LeaderID = prevLeader
			}
			g.completeJoin(nm, resp)
		})
	case stateCompletingRebalance:
		// The leader may already hold the old id in its assignment:
		// rebalance so the new id gets one.
		g.prepareRebalance("static member rejoined while completing rebalance")
	default:
		g.maybeCompleteJoinPhase()
	}
	return nil
}
