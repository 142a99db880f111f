package group

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Heartbeat, versions 0-4.
//
// A heartbeat restarts the member's session timer. During a rebalance it
// answers REBALANCE_IN_PROGRESS, which is how members learn to rejoin.
// While the partition is loading the answer is NONE, as in Kafka: the
// member's session is restored with the group, so it must not rejoin.

// Heartbeat handles a HeartbeatRequest.
func (c *Coordinator) Heartbeat(_ context.Context, r *kmsg.HeartbeatRequest) *kmsg.HeartbeatResponse {
	resp := kmsg.NewPtrHeartbeatResponse()
	resp.Version = r.Version
	if r.Group == "" {
		resp.ErrorCode = kerr.InvalidGroupID.Code
		return resp
	}
	g, _, code := c.lookup(r.Group, false)
	switch {
	case code == kerr.CoordinatorLoadInProgress.Code:
		return resp
	case code != 0:
		resp.ErrorCode = code
		return resp
	case g == nil:
		resp.ErrorCode = kerr.UnknownMemberID.Code
		return resp
	}
	defer g.mu.Unlock()
	if code := g.validateMember(r.MemberID, r.InstanceID); code != 0 {
		resp.ErrorCode = code
		return resp
	}
	if r.Generation != g.generation {
		resp.ErrorCode = kerr.IllegalGeneration.Code
		return resp
	}
	m := g.members[r.MemberID]
	switch g.state {
	case stateEmpty:
		resp.ErrorCode = kerr.UnknownMemberID.Code
	case statePreparingRebalance:
		g.rescheduleHeartbeat(m, g.sessionTimeout(m))
		resp.ErrorCode = kerr.RebalanceInProgress.Code
	default: // CompletingRebalance, Stable: members may heartbeat before syncing
		g.rescheduleHeartbeat(m, g.sessionTimeout(m))
	}
	return resp
}
