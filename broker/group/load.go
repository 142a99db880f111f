package group

import (
	"errors"
	"fmt"
	"sort"

	"github.com/twmb/franz-go/pkg/kmsg"
)

type replayStats struct {
	records, skipped, offsets int
}

// replay rebuilds partition p's groups from its records, in log order:
// the last record of a key wins and a tombstone removes what came before,
// which is also what the compacted log keeps.
func (c *Coordinator) replay(p int32) (map[string]*group, replayStats, error) {
	groups := make(map[string]*group)
	var st replayStats
	get := func(id string) *group {
		g := groups[id]
		if g == nil {
			// Offsets without group metadata make a simple group.
			g = newGroup(c, id, p, nil)
			groups[id] = g
		}
		return g
	}
	err := c.store.Replay(p, func(offset int64, key, value []byte) error {
		st.records++
		d, err := decodeRecord(key, value)
		if err != nil {
			st.skipped++
			if !errors.Is(err, errSkipRecord) {
				c.log.Warn("skipping undecodable __consumer_offsets record", "partition", p, "offset", offset, "err", err)
			}
			return nil
		}
		if q := c.partitionFor(d.group); q != p {
			st.skipped++
			c.log.Warn("skipping record of a group that belongs to another __consumer_offsets partition",
				"partition", p, "offset", offset, "group", d.group, "group_partition", q)
			return nil
		}
		switch {
		case d.isOffset && d.offset != nil:
			get(d.group).setOffset(topicPartition{d.topic, d.partition}, d.offset)
		case d.isOffset:
			if g := groups[d.group]; g != nil {
				g.deleteOffset(topicPartition{d.topic, d.partition})
			}
		case d.meta != nil:
			get(d.group).applyMetadata(d.meta)
		default:
			delete(groups, d.group)
		}
		return nil
	})
	if err != nil {
		return nil, st, fmt.Errorf("replay: %w", err)
	}
	for _, g := range groups {
		g.computeSubscribedTopics()
		for _, ps := range g.offsets {
			st.offsets += len(ps)
		}
	}
	return groups, st, nil
}

// applyMetadata replaces the group's state with a GroupMetadata record's,
// keeping its offsets: members come back as they were at the last
// completed rebalance, and the group is Stable if it has any (Empty
// otherwise) until their sessions say otherwise. Inconsistent records
// (members without a protocol, duplicate ids) are loaded as far as they
// make sense rather than rejected.
func (g *group) applyMetadata(v *kmsg.GroupMetadataValue) {
	g.members = make(map[string]*member)
	g.order = nil
	g.static = make(map[string]string)
	g.supported = make(map[string]int)
	g.awaitingJoin = 0
	g.pendingSync = nil
	g.generation = v.Generation
	g.protocolType = v.ProtocolType
	g.protocol, g.hasProtocol = "", false
	if v.Protocol != nil {
		g.protocol, g.hasProtocol = *v.Protocol, true
	}
	g.leader = ""
	g.stateMs = v.CurrentStateTimestamp
	if v.Version < 2 {
		g.stateMs = -1
	}
	if g.hasProtocol {
		for _, mv := range v.Members {
			if _, dup := g.members[mv.MemberID]; dup || mv.MemberID == "" {
				continue
			}
			if mv.InstanceID != nil {
				if _, dup := g.static[*mv.InstanceID]; dup {
					continue
				}
			}
			rebalance := mv.RebalanceTimeoutMillis
			if v.Version < 1 || rebalance == -1 {
				rebalance = mv.SessionTimeoutMillis
			}
			m := &member{
				id:                 mv.MemberID,
				instanceID:         mv.InstanceID,
				clientID:           mv.ClientID,
				clientHost:         mv.ClientHost,
				rebalanceTimeoutMs: rebalance,
				sessionTimeoutMs:   mv.SessionTimeoutMillis,
				protocolType:       v.ProtocolType,
				protocols:          []protocol{{name: g.protocol, metadata: mv.Subscription}},
				assignment:         mv.Assignment,
			}
			g.add(m, nil)
		}
	}
	if v.Leader != nil {
		if _, ok := g.members[*v.Leader]; ok {
			g.leader = *v.Leader
		}
	}
	if g.leader == "" && len(g.order) > 0 {
		g.leader = g.order[0]
	}
	g.prevState = stateDead
	if len(g.members) > 0 {
		g.state = stateStable
	} else {
		g.state = stateEmpty
	}
}

// sortedOffsets lists the group's committed partitions in a stable order.
func (g *group) sortedOffsets() []topicPartition {
	var tps []topicPartition
	for t, ps := range g.offsets {
		for p := range ps {
			tps = append(tps, topicPartition{t, p})
		}
	}
	sort.Slice(tps, func(i, j int) bool {
		if tps[i].topic != tps[j].topic {
			return tps[i].topic < tps[j].topic
		}
		return tps[i].partition < tps[j].partition
	})
	return tps
}
