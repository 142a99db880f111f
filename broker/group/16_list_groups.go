package group

import (
	"context"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ListGroups, versions 0-5.
//
// Lists the groups of every loaded partition. v4+ filter by state
// (case-insensitive, KIP-518) and report it; v5+ filter by type (KIP-848)
// and report it: every group here is "classic", so a filter naming only
// other or unknown types matches nothing. While any partition is loading
// the answer is COORDINATOR_LOAD_IN_PROGRESS, as in Kafka.

// ListGroups handles a ListGroupsRequest.
func (c *Coordinator) ListGroups(_ context.Context, r *kmsg.ListGroupsRequest) *kmsg.ListGroupsResponse {
	resp := kmsg.NewPtrListGroupsResponse()
	resp.Version = r.Version
	gs, loading := c.loadedGroups()
	if loading {
		resp.ErrorCode = kerr.CoordinatorLoadInProgress.Code
		return resp
	}
	states := make(map[string]bool)
	if r.Version >= 4 {
		for _, s := range r.StatesFilter {
			states[strings.ToLower(strings.TrimSpace(s))] = true
		}
	}
	if r.Version >= 5 && len(r.TypesFilter) > 0 {
		classic := false
		for _, t := range r.TypesFilter {
			if strings.EqualFold(strings.TrimSpace(t), "classic") {
				classic = true
			}
		}
		if !classic {
			return resp
		}
	}
	for _, g := range gs {
		g.mu.Lock()
		state, ptype := g.state, g.protocolType
		g.mu.Unlock()
		if state == stateDead {
			continue
		}
		if len(states) > 0 && !states[strings.ToLower(state.String())] {
			continue
		}
		lg := kmsg.NewListGroupsResponseGroup()
		lg.Group = g.id
		lg.ProtocolType = ptype
		lg.GroupState = state.String()
		lg.GroupType = "classic"
		resp.Groups = append(resp.Groups, lg)
	}
	return resp
}
