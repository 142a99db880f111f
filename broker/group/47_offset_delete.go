package group

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// OffsetDelete, version 0 (KIP-496).
//
// Deletes committed offsets of a group. Only an Empty group, or a
// "consumer" group for topics its members do not subscribe to
// (GROUP_SUBSCRIBED_TO_TOPIC otherwise), allows it; any other non-empty
// group is NON_EMPTY_GROUP. Partitions without an offset succeed without
// writing anything. Group-level errors leave the topic list empty.

// OffsetDelete handles an OffsetDeleteRequest.
func (c *Coordinator) OffsetDelete(ctx context.Context, r *kmsg.OffsetDeleteRequest) *kmsg.OffsetDeleteResponse {
	resp := kmsg.NewPtrOffsetDeleteResponse()
	resp.Version = r.Version
	if r.Group == "" {
		resp.ErrorCode = kerr.InvalidGroupID.Code
		return resp
	}
	fail := func(code int16) *kmsg.OffsetDeleteResponse {
		resp.ErrorCode = code
		resp.Topics = nil
		return resp
	}
	g, _, code := c.lookup(r.Group, false)
	if code != 0 {
		return fail(code)
	}
	if g == nil {
		return fail(kerr.GroupIDNotFound.Code)
	}
	if g.state != stateEmpty && g.protocolType != "consumer" {
		g.mu.Unlock()
		return fail(kerr.NonEmptyGroup.Code)
	}

	var records []Record
	var deleted []topicPartition
	for _, t := range r.Topics {
		rt := kmsg.NewOffsetDeleteResponseTopic()
		rt.Topic = t.Topic
		subscribed := g.isSubscribedToTopic(t.Topic)
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetDeleteResponseTopicPartition()
			rp.Partition = p.Partition
			switch {
			case !c.partitionExists(t.Topic, p.Partition):
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			case subscribed:
				rp.ErrorCode = kerr.GroupSubscribedToTopic.Code
			default:
				tp := topicPartition{t.Topic, p.Partition}
				if g.offsets[t.Topic][p.Partition] != nil || g.inflight[tp] > 0 {
					records = append(records, Record{Key: offsetKey(g.id, t.Topic, p.Partition)})
					deleted = append(deleted, tp)
				}
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if len(records) == 0 {
		g.mu.Unlock()
		return resp
	}
	wr := g.w.enqueue(records, func(err error) {
		if err != nil {
			return
		}
		g.mu.Lock()
		defer g.mu.Unlock()
		for _, tp := range deleted {
			g.deleteOffset(tp)
		}
	})
	g.mu.Unlock()
	select {
	case <-wr.done:
		if wr.err != nil {
			return fail(appendErrorCode(wr.err))
		}
	case <-ctx.Done():
		return fail(kerr.CoordinatorNotAvailable.Code)
	}
	return resp
}
