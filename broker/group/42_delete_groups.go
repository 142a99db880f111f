package group

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DeleteGroups, versions 0-3.
//
// Only Empty groups can be deleted (NON_EMPTY_GROUP otherwise; a group
// that does not exist is GROUP_ID_NOT_FOUND). Deletion writes a tombstone
// for every committed offset and then for the group, and answers once they
// are durable. The group disappears at once; if the tombstones cannot be
// written it comes back, as Kafka's timeline revert would bring it back.

// DeleteGroups handles a DeleteGroupsRequest.
func (c *Coordinator) DeleteGroups(ctx context.Context, r *kmsg.DeleteGroupsRequest) *kmsg.DeleteGroupsResponse {
	resp := kmsg.NewPtrDeleteGroupsResponse()
	resp.Version = r.Version
	type inFlight struct {
		idx int
		wr  *write
	}
	var waits []inFlight
	for _, id := range r.Groups {
		dg := kmsg.NewDeleteGroupsResponseGroup()
		dg.Group = id
		wr, code := c.deleteGroup(id)
		dg.ErrorCode = code
		resp.Groups = append(resp.Groups, dg)
		if wr != nil {
			waits = append(waits, inFlight{len(resp.Groups) - 1, wr})
		}
	}
	for _, w := range waits {
		select {
		case <-w.wr.done:
			if w.wr.err != nil {
				resp.Groups[w.idx].ErrorCode = appendErrorCode(w.wr.err)
			}
		case <-ctx.Done():
			resp.Groups[w.idx].ErrorCode = kerr.CoordinatorNotAvailable.Code
		}
	}
	return resp
}

// deleteGroup validates and queues the deletion of one group.
func (c *Coordinator) deleteGroup(id string) (*write, int16) {
	g, _, code := c.lookup(id, false)
	if code != 0 {
		return nil, code
	}
	if g == nil {
		return nil, kerr.GroupIDNotFound.Code
	}
	if g.state != stateEmpty {
		g.mu.Unlock()
		return nil, kerr.NonEmptyGroup.Code
	}
	records := g.offsetTombstones()
	records = append(records, Record{Key: groupKey(g.id)})
	prev := g.state
	g.markDead()
	wr := g.w.enqueue(records, func(err error) {
		if err == nil || err == errNotCoordinator {
			return
		}
		c.restoreGroup(g, prev)
	})
	g.mu.Unlock()
	c.removeGroup(g)
	c.log.Info("deleting group", "group", id, "offsets", len(records)-1)
	return wr, 0
}

// offsetTombstones deletes every offset of the group, including commits
// still being written (their records precede the tombstones in the log).
func (g *group) offsetTombstones() []Record {
	seen := make(map[topicPartition]bool)
	var recs []Record
	add := func(tp topicPartition) {
		if !seen[tp] {
			seen[tp] = true
			recs = append(recs, Record{Key: offsetKey(g.id, tp.topic, tp.partition)})
		}
	}
	for _, tp := range g.sortedOffsets() {
		add(tp)
	}
	for tp := range g.inflight {
		add(tp)
	}
	return recs
}

// restoreGroup puts back a group whose deletion could not be persisted,
// unless the partition moved or a new group took its id meanwhile.
func (c *Coordinator) restoreGroup(g *group, state groupState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	part, ok := c.parts[g.partition]
	if !ok || part.w != g.w {
		return
	}
	if cur := c.groups[g.id]; cur != nil && cur != g {
		return // a new group took the id
	}
	g.mu.Lock()
	g.transition(state)
	g.mu.Unlock()
	c.groups[g.id] = g
	c.log.Warn("failed to persist group deletion; the group is restored", "group", g.id)
}
