package group

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// LeaveGroup, versions 0-5.
//
// v0-v2 name one member; v3+ (KIP-345) a batch, each by member id or, for
// administrative removal of static members, by group.instance.id alone.
// Leaving members are removed at once and the group rebalances. For v0-v2
// the single member's error is the top-level error.

// LeaveGroup handles a LeaveGroupRequest.
func (c *Coordinator) LeaveGroup(_ context.Context, r *kmsg.LeaveGroupRequest) *kmsg.LeaveGroupResponse {
	resp := kmsg.NewPtrLeaveGroupResponse()
	resp.Version = r.Version
	members := r.Members
	if r.Version < 3 {
		m := kmsg.NewLeaveGroupRequestMember()
		m.MemberID = r.MemberID
		members = []kmsg.LeaveGroupRequestMember{m}
	}
	finish := func() *kmsg.LeaveGroupResponse {
		if r.Version < 3 {
			if len(resp.Members) > 0 && resp.ErrorCode == 0 {
				resp.ErrorCode = resp.Members[0].ErrorCode
			}
			resp.Members = nil
		}
		return resp
	}
	if r.Group == "" {
		resp.ErrorCode = kerr.InvalidGroupID.Code
		return finish()
	}
	g, _, code := c.lookup(r.Group, false)
	if code != 0 {
		resp.ErrorCode = code
		return finish()
	}
	if g == nil {
		for _, m := range members {
			resp.Members = append(resp.Members, leaveResult(m, kerr.UnknownMemberID.Code))
		}
		return finish()
	}
	defer g.mu.Unlock()

	var left []string
	for _, lm := range members {
		reason := "not provided"
		if lm.Reason != nil {
			reason = *lm.Reason
		}
		switch {
		case lm.MemberID == "":
			id, ok := "", false
			if lm.InstanceID != nil {
				id, ok = g.static[*lm.InstanceID]
			}
			if !ok {
				resp.Members = append(resp.Members, leaveResult(lm, kerr.UnknownMemberID.Code))
				continue
			}
			g.removeLeaving(id, reason)
			left = append(left, id)
		case g.pending[lm.MemberID] != nil:
			g.remove(lm.MemberID)
			g.c.log.Info("pending member left the group", "group", g.id, "member_id", lm.MemberID, "reason", reason)
			left = append(left, lm.MemberID)
		default:
			if code := g.validateMember(lm.MemberID, lm.InstanceID); code != 0 {
				resp.Members = append(resp.Members, leaveResult(lm, code))
				continue
			}
			g.removeLeaving(lm.MemberID, reason)
			left = append(left, lm.MemberID)
		}
		resp.Members = append(resp.Members, leaveResult(lm, 0))
	}
	if len(left) > 0 {
		switch g.state {
		case stateStable, stateCompletingRebalance:
			g.maybePrepareRebalanceOrCompleteJoin("members left the group")
		case statePreparingRebalance:
			g.maybeCompleteJoinPhase()
		}
	}
	return finish()
}

func leaveResult(m kmsg.LeaveGroupRequestMember, code int16) kmsg.LeaveGroupResponseMember {
	out := kmsg.NewLeaveGroupResponseMember()
	out.MemberID = m.MemberID
	out.InstanceID = m.InstanceID
	out.ErrorCode = code
	return out
}

// removeLeaving removes a member that asked to leave; a JoinGroup it has
// parked is answered UNKNOWN_MEMBER_ID.
func (g *group) removeLeaving(id, reason string) {
	m := g.members[id]
	if m == nil {
		return
	}
	g.c.log.Info("member left the group", "group", g.id, "member_id", id, "reason", reason)
	r := kmsg.NewPtrJoinGroupResponse()
	r.ErrorCode = kerr.UnknownMemberID.Code
	g.completeJoin(m, r)
	g.remove(id)
}
