package group

import (
	"time"
)

// Offset retention (KIP-211, Kafka 2.1+). Every
// offsets.retention.check.interval the coordinator writes tombstones for
// expired offsets and deletes groups that are left Empty with no offsets:
//
//   - an Empty group's offsets expire offsets.retention after the group
//     became Empty (after their commit, for records too old to carry the
//     state timestamp);
//   - a Stable "consumer" group's offsets of topics no member subscribes
//     to expire offsets.retention after their commit;
//   - a simple group's (commits only, no members ever) likewise;
//   - any other group keeps its offsets;
//   - an offset committed with an explicit retention time (OffsetCommit
//     v2-v4) expires at the time that set, whatever the group does.
//
// Offsets of subscribed topics never expire, nor those with a commit still
// being written.

func (c *Coordinator) expiryLoop() {
	defer close(c.expiryDone)
	t := time.NewTicker(c.cfg.OffsetsRetentionCheckInterval)
	defer t.Stop()
	for {
		select {
		case <-c.stopExpiry:
			return
		case <-t.C:
			c.expireOffsets()
		}
	}
}

// expireOffsets runs one retention pass over the loaded groups and returns
// how many tombstones it queued.
func (c *Coordinator) expireOffsets() int {
	start := time.Now()
	gs, _ := c.loadedGroups()
	now := c.nowMs()
	retention := c.cfg.OffsetsRetention.Milliseconds()
	total, deletedGroups := 0, 0
	for _, g := range gs {
		n, deleted := g.expire(now, retention)
		total += n
		if deleted {
			deletedGroups++
			c.removeGroup(g)
		}
	}
	if total > 0 {
		c.log.Info("expired offsets and groups", "tombstones", total, "groups_deleted", deletedGroups, "took", time.Since(start))
	}
	return total
}

// expire queues tombstones for the group's expired offsets, and for the
// group itself when it is Empty and nothing is left. It reports how many
// tombstones it queued and whether the group is now Dead.
func (g *group) expire(nowMs, retentionMs int64) (int, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state == stateDead || g.w == nil {
		return 0, false
	}
	var base func(o *offsetEntry) int64
	switch {
	case g.protocolType == "":
		base = func(o *offsetEntry) int64 { return o.commitMs }
	case g.state == stateEmpty:
		base = func(o *offsetEntry) int64 {
			if g.stateMs >= 0 {
				return g.stateMs
			}
			return o.commitMs
		}
	case g.protocolType == "consumer" && g.subscribedKnown && g.state == stateStable:
		base = func(o *offsetEntry) int64 { return o.commitMs }
	default:
		return 0, false
	}

	allExpired := len(g.inflight) == 0
	var expired []topicPartition
	for _, tp := range g.sortedOffsets() {
		if g.isSubscribedToTopic(tp.topic) || g.inflight[tp] > 0 {
			allExpired = false
			continue
		}
		o := g.offsets[tp.topic][tp.partition]
		var isExpired bool
		if o.expireMs >= 0 {
			isExpired = nowMs >= o.expireMs
		} else {
			isExpired = nowMs-base(o) >= retentionMs
		}
		if isExpired {
			expired = append(expired, tp)
		} else {
			allExpired = false
		}
	}
	deleteGroup := allExpired && g.state == stateEmpty && len(g.pending) == 0
	if len(expired) == 0 && !deleteGroup {
		return 0, false
	}
	records := make([]Record, 0, len(expired)+1)
	for _, tp := range expired {
		records = append(records, Record{Key: offsetKey(g.id, tp.topic, tp.partition)})
	}
	if deleteGroup {
		records = append(records, Record{Key: groupKey(g.id)})
		g.markDead()
		g.c.log.Info("deleting empty group whose offsets all expired", "group", g.id, "offsets", len(expired))
	}
	g.w.enqueue(records, func(err error) {
		if err != nil {
			if deleteGroup && err != errNotCoordinator {
				g.c.restoreGroup(g, stateEmpty)
			}
			g.c.log.Warn("failed to persist expired offsets", "group", g.id, "err", err)
			return
		}
		g.mu.Lock()
		defer g.mu.Unlock()
		for _, tp := range expired {
			g.deleteOffset(tp)
		}
	})
	return len(records), deleteGroup
}
