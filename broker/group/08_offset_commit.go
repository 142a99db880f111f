package group

import (
	"context"
	"unicode/utf16"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// OffsetCommit, versions 0-10.
//
// v0 carries no generation or member (a simple commit); v1 may carry a
// commit timestamp per partition; v2-v4 a retention time, which makes the
// offset expire at commit time + retention (written as value version 1,
// the old per-offset expiry); v5+ use the broker's offsets.retention
// (KIP-211); v7+ static members; v9+ answer GROUP_ID_NOT_FOUND for a
// generation-aware commit to a group that does not exist (older versions:
// ILLEGAL_GENERATION); v10 names topics by id.
//
// A commit with generation -1 to a group that does not exist creates a
// "simple" group (no protocol type, no members) that only holds offsets.
// The response is sent once the offset records are durable, and only then
// are the offsets visible to OffsetFetch.

// OffsetCommit handles an OffsetCommitRequest.
func (c *Coordinator) OffsetCommit(ctx context.Context, r *kmsg.OffsetCommitRequest) *kmsg.OffsetCommitResponse {
	resp := kmsg.NewPtrOffsetCommitResponse()
	resp.Version = r.Version
	generation, memberID := r.Generation, r.MemberID
	if r.Version == 0 {
		generation, memberID = -1, ""
	}

	// The API layer's checks: topics by id (v10), unknown topics and
	// partitions. What passes is what the coordinator stores.
	type pending struct {
		topic string
		id    [16]byte
		p     kmsg.OffsetCommitRequestTopicPartition
		rt    *kmsg.OffsetCommitResponseTopic
		rp    int // index in rt.Partitions
	}
	var valid []pending
	resp.Topics = make([]kmsg.OffsetCommitResponseTopic, len(r.Topics))
	for i, t := range r.Topics {
		rt := &resp.Topics[i]
		*rt = kmsg.NewOffsetCommitResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		name, id, code := c.resolveCommitTopic(r.Version, t.Topic, t.TopicID)
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition = p.Partition
			rp.ErrorCode = code
			if code == 0 && !c.partitionExists(name, p.Partition) {
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			}
			rt.Partitions = append(rt.Partitions, rp)
			if rp.ErrorCode == 0 {
				valid = append(valid, pending{topic: name, id: id, p: p, rt: rt, rp: len(rt.Partitions) - 1})
			}
		}
	}
	failAll := func(code int16) *kmsg.OffsetCommitResponse {
		for _, v := range valid {
			v.rt.Partitions[v.rp].ErrorCode = code
		}
		return resp
	}
	if len(valid) == 0 {
		return resp
	}

	g, created, code := c.lookup(r.Group, generation < 0)
	if code != 0 {
		return failAll(code)
	}
	if g == nil {
		if r.Version >= 9 {
			return failAll(kerr.GroupIDNotFound.Code)
		}
		return failAll(kerr.IllegalGeneration.Code)
	}
	if code := g.validateOffsetCommit(memberID, r.InstanceID, generation); code != 0 {
		dropped := g.dropIfUnused(created)
		g.mu.Unlock()
		if dropped {
			c.removeGroup(g)
		}
		return failAll(code)
	}
	// Commits keep a classic member's session alive.
	if g.state == stateStable || g.state == statePreparingRebalance {
		if m := g.members[memberID]; m != nil {
			g.rescheduleHeartbeat(m, g.sessionTimeout(m))
		}
	}

	now := c.nowMs()
	expire := int64(-1)
	if r.Version >= 2 && r.Version <= 4 && r.RetentionTimeMillis != -1 {
		expire = now + r.RetentionTimeMillis
	}
	type commit struct {
		tp topicPartition
		o  *offsetEntry
	}
	var commits []commit
	var records []Record
	for _, v := range valid {
		if v.p.Metadata != nil && javaLength(*v.p.Metadata) > c.cfg.OffsetMetadataMaxBytes {
			v.rt.Partitions[v.rp].ErrorCode = kerr.OffsetMetadataTooLarge.Code
			continue
		}
		o := &offsetEntry{offset: v.p.Offset, leaderEpoch: -1, commitMs: now, expireMs: expire, topicID: v.id}
		if v.p.Metadata != nil {
			o.metadata = *v.p.Metadata
		}
		if r.Version >= 6 {
			o.leaderEpoch = v.p.LeaderEpoch
		}
		if r.Version == 1 && v.p.Timestamp != -1 {
			o.commitMs = v.p.Timestamp
		}
		tp := topicPartition{v.topic, v.p.Partition}
		commits = append(commits, commit{tp, o})
		records = append(records, Record{Key: offsetKey(g.id, v.topic, v.p.Partition), Value: offsetValue(o)})
		g.inflight[tp]++
	}
	if len(records) == 0 {
		dropped := g.dropIfUnused(created)
		g.mu.Unlock()
		if dropped {
			c.removeGroup(g)
		}
		return resp
	}
	wr := g.w.enqueue(records, func(err error) {
		g.mu.Lock()
		defer g.mu.Unlock()
		for _, cm := range commits {
			if g.inflight[cm.tp]--; g.inflight[cm.tp] <= 0 {
				delete(g.inflight, cm.tp)
			}
			if err == nil {
				g.setOffset(cm.tp, cm.o)
			}
		}
	})
	g.mu.Unlock()

	select {
	case <-wr.done:
		if wr.err != nil {
			c.log.Warn("failed to persist offset commit", "group", r.Group, "err", wr.err)
			code := appendErrorCode(wr.err)
			for _, v := range valid {
				if v.rt.Partitions[v.rp].ErrorCode == 0 {
					v.rt.Partitions[v.rp].ErrorCode = code
				}
			}
		}
	case <-ctx.Done():
		// The outcome is unknown to us; the client must retry.
		for _, v := range valid {
			if v.rt.Partitions[v.rp].ErrorCode == 0 {
				v.rt.Partitions[v.rp].ErrorCode = kerr.CoordinatorNotAvailable.Code
			}
		}
	}
	return resp
}

// resolveCommitTopic maps a request topic to its name and id: by id in
// v10+, by name before.
func (c *Coordinator) resolveCommitTopic(version int16, name string, id [16]byte) (string, [16]byte, int16) {
	if version >= 10 {
		if c.topics == nil {
			return "", id, kerr.UnknownTopicID.Code
		}
		n, ok := c.topics.TopicName(id)
		if !ok {
			return "", id, kerr.UnknownTopicID.Code
		}
		return n, id, 0
	}
	if c.topics != nil {
		if tid, _, ok := c.topics.Topic(name); ok {
			id = tid
		}
	}
	return name, id, 0
}

func (c *Coordinator) partitionExists(topic string, partition int32) bool {
	if c.topics == nil {
		return true
	}
	_, n, ok := c.topics.Topic(topic)
	return ok && partition >= 0 && partition < n
}

// validateOffsetCommit is Kafka's ClassicGroup.validateOffsetCommit.
func (g *group) validateOffsetCommit(memberID string, instanceID *string, generation int32) int16 {
	if generation < 0 && g.state == stateEmpty {
		// Admin clients and consumers that assign partitions themselves.
		return 0
	}
	if generation >= 0 || memberID != "" || instanceID != nil {
		if code := g.validateMember(memberID, instanceID); code != 0 {
			return code
		}
		if generation != g.generation {
			return kerr.IllegalGeneration.Code
		}
	} else if g.state != stateEmpty {
		// A commit without member and generation is only accepted while
		// nobody owns the partitions.
		return kerr.UnknownMemberID.Code
	}
	if g.state == stateCompletingRebalance {
		// The member has the new generation but not yet its assignment.
		return kerr.RebalanceInProgress.Code
	}
	return 0
}

// dropIfUnused marks Dead a group this request created when nothing came
// of it, as Kafka's timeline revert does for a failed simple commit; the
// caller removes it from the coordinator after unlocking it.
func (g *group) dropIfUnused(created bool) bool {
	if !created || g.state != stateEmpty || len(g.members) > 0 || len(g.pending) > 0 ||
		len(g.offsets) > 0 || len(g.inflight) > 0 {
		return false
	}
	g.transition(stateDead)
	g.stopTimers()
	return true
}

func (g *group) setOffset(tp topicPartition, o *offsetEntry) {
	ps := g.offsets[tp.topic]
	if ps == nil {
		ps = make(map[int32]*offsetEntry)
		g.offsets[tp.topic] = ps
	}
	ps[tp.partition] = o
}

func (g *group) deleteOffset(tp topicPartition) {
	if ps := g.offsets[tp.topic]; ps != nil {
		delete(ps, tp.partition)
		if len(ps) == 0 {
			delete(g.offsets, tp.topic)
		}
	}
}

// javaLength is String.length() in Java, UTF-16 code units, which is what
// offset.metadata.max.bytes is compared against.
func javaLength(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}
