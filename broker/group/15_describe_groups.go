package group

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeGroups, versions 0-6.
//
// A Stable group reports its protocol and each member's metadata for it;
// other states report members without metadata. A group that does not
// exist is reported Dead, with GROUP_ID_NOT_FOUND from v6 (KIP-1043) and
// no error before. v3+ include authorized operations when asked: with no
// authorizer, everything a group supports (READ, DELETE, DESCRIBE).

// groupOperations is the bit set of ACL operations on a group resource.
const groupOperations = 1<<3 | 1<<6 | 1<<8 // READ | DELETE | DESCRIBE

// DescribeGroups handles a DescribeGroupsRequest.
func (c *Coordinator) DescribeGroups(_ context.Context, r *kmsg.DescribeGroupsRequest) *kmsg.DescribeGroupsResponse {
	resp := kmsg.NewPtrDescribeGroupsResponse()
	resp.Version = r.Version
	for _, id := range r.Groups {
		dg := kmsg.NewDescribeGroupsResponseGroup()
		dg.Group = id
		if r.IncludeAuthorizedOperations {
			dg.AuthorizedOperations = groupOperations
		}
		g, _, code := c.lookup(id, false)
		switch {
		case code != 0:
			dg.ErrorCode = code
			dg.State = ""
		case g == nil:
			dg.State = stateDead.String()
			if r.Version >= 6 {
				dg.ErrorCode = kerr.GroupIDNotFound.Code
				dg.ErrorMessage = kmsg.StringPtr(fmt.Sprintf("Group %s not found.", id))
			}
		default:
			g.describe(&dg)
			g.mu.Unlock()
		}
		resp.Groups = append(resp.Groups, dg)
	}
	return resp
}

func (g *group) describe(dg *kmsg.DescribeGroupsResponseGroup) {
	dg.State = g.state.String()
	dg.ProtocolType = g.protocolType
	stable := g.state == stateStable && g.hasProtocol
	if stable {
		dg.Protocol = g.protocol
	}
	for _, id := range g.order {
		m := g.members[id]
		dm := kmsg.NewDescribeGroupsResponseGroupMember()
		dm.MemberID = m.id
		dm.InstanceID = m.instanceID
		dm.ClientID = m.clientID
		dm.ClientHost = m.clientHost
		dm.ProtocolMetadata = []byte{}
		if stable {
			dm.ProtocolMetadata = m.metadata(g.protocol)
		}
		dm.MemberAssignment = m.assignment
		if dm.MemberAssignment == nil {
			dm.MemberAssignment = []byte{}
		}
		dg.Members = append(dg.Members, dm)
	}
}
