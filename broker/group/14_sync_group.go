package group

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// SyncGroup, versions 0-5.
//
// The leader's SyncGroup carries the assignment: it is persisted with the
// group's members as a GroupMetadata record, and only once that is durable
// does the group become Stable and every parked SyncGroup get its member's
// assignment. Followers' SyncGroups block until then (or ctx ends). v3+
// checks the static instance id; v5+ checks protocol type and name.

// SyncGroup handles a SyncGroupRequest, blocking until the leader's
// assignment is persisted or ctx (the connection) ends.
func (c *Coordinator) SyncGroup(ctx context.Context, r *kmsg.SyncGroupRequest) *kmsg.SyncGroupResponse {
	fail := func(code int16) *kmsg.SyncGroupResponse {
		resp := kmsg.NewPtrSyncGroupResponse()
		resp.Version = r.Version
		resp.ErrorCode = code
		resp.MemberAssignment = []byte{}
		return resp
	}
	if r.Version >= 5 && (r.ProtocolType == nil || r.Protocol == nil) {
		// Kafka's API layer: from v5 both fields are mandatory.
		return fail(kerr.InconsistentGroupProtocol.Code)
	}
	if r.Group == "" {
		return fail(kerr.InvalidGroupID.Code)
	}
	g, _, code := c.lookup(r.Group, false)
	if code != 0 {
		return fail(code)
	}
	if g == nil {
		return fail(kerr.UnknownMemberID.Code)
	}
	waiter := &syncWaiter{version: r.Version, ch: make(chan *kmsg.SyncGroupResponse, 1)}
	immediate := g.sync(r, waiter)
	g.mu.Unlock()
	if immediate != nil {
		immediate.Version = r.Version
		return immediate
	}
	select {
	case resp := <-waiter.ch:
		resp.Version = r.Version
		return resp
	case <-ctx.Done():
		return fail(kerr.RebalanceInProgress.Code)
	}
}

// sync runs a SyncGroup against the locked group; nil means the request is
// parked on waiter.
func (g *group) sync(r *kmsg.SyncGroupRequest, waiter *syncWaiter) *kmsg.SyncGroupResponse {
	fail := func(code int16) *kmsg.SyncGroupResponse {
		resp := kmsg.NewPtrSyncGroupResponse()
		resp.ErrorCode = code
		resp.MemberAssignment = []byte{}
		return resp
	}
	if g.state == stateEmpty {
		return fail(kerr.UnknownMemberID.Code)
	}
	if code := g.validateMember(r.MemberID, r.InstanceID); code != 0 {
		return fail(code)
	}
	if r.Generation != g.generation {
		return fail(kerr.IllegalGeneration.Code)
	}
	if r.ProtocolType != nil && g.protocolType != "" && *r.ProtocolType != g.protocolType ||
		r.Protocol != nil && g.hasProtocol && *r.Protocol != g.protocol {
		return fail(kerr.InconsistentGroupProtocol.Code)
	}
	m := g.members[r.MemberID]
	switch g.state {
	case statePreparingRebalance:
		return fail(kerr.RebalanceInProgress.Code)
	case stateStable:
		g.removePendingSync(r.MemberID)
		resp := kmsg.NewPtrSyncGroupResponse()
		if g.protocolType != "" {
			resp.ProtocolType = kmsg.StringPtr(g.protocolType)
		}
		if g.hasProtocol {
			resp.Protocol = kmsg.StringPtr(g.protocol)
		}
		resp.MemberAssignment = m.assignment
		if resp.MemberAssignment == nil {
			resp.MemberAssignment = []byte{}
		}
		return resp
	}
	// CompletingRebalance: park until the leader's assignment is durable.
	if m.sync != nil && m.sync != waiter {
		m.sync.deliver(fail(kerr.RebalanceInProgress.Code))
	}
	m.sync = waiter
	g.removePendingSync(r.MemberID)
	if !g.isLeader(r.MemberID) {
		return nil
	}

	assignment := make(map[string][]byte, len(g.members))
	for _, a := range r.GroupAssignment {
		assignment[a.MemberID] = a.MemberAssignment
	}
	var missing []string
	for _, id := range g.order {
		if _, ok := assignment[id]; !ok {
			assignment[id] = []byte{}
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		g.c.log.Warn("leader sent no assignment for some members; they get an empty one",
			"group", g.id, "generation", g.generation, "members", missing)
	}
	g.c.log.Info("assignment received from leader", "group", g.id, "generation", g.generation,
		"leader", r.MemberID, "members", len(g.members))

	gen := g.generation
	rec := []Record{{Key: groupKey(g.id), Value: groupValue(g, assignment)}}
	g.w.enqueue(rec, func(err error) {
		g.mu.Lock()
		defer g.mu.Unlock()
		// Another member may have joined while the write was in flight:
		// only the rebalance that produced this assignment may finish.
		if g.state != stateCompletingRebalance || g.generation != gen {
			return
		}
		if err != nil {
			code := appendErrorCode(err)
			g.c.log.Warn("failed to persist group assignment", "group", g.id, "generation", gen, "err", err)
			g.resetAndPropagateAssignmentWithError(code)
			g.maybePrepareRebalanceOrCompleteJoin("failed to persist the assignment")
			return
		}
		g.setAndPropagateAssignment(assignment)
		g.transition(stateStable)
	})
	return nil
}

func msDuration(ms int32) time.Duration { return time.Duration(ms) * time.Millisecond }
