package group

import (
	"context"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// OffsetFetch, versions 0-10.
//
// v0-v7 fetch one group; v8+ any number of groups (KIP-709), each answered
// on its own (a group on another coordinator gets NOT_COORDINATOR while the
// rest succeed). Null topics (v2+) fetch every committed offset of the
// group. A partition without a committed offset, or a group that does not
// exist, answers offset -1 without error, as Kafka does. Group-level errors
// are the top-level error in v2-v7 and every partition's error in v0-v1.
// v10 names topics by id. RequireStable (v7+) needs no waiting here:
// transactional offset commits are not served, so no offset is pending.

// OffsetFetch handles an OffsetFetchRequest.
func (c *Coordinator) OffsetFetch(_ context.Context, r *kmsg.OffsetFetchRequest) *kmsg.OffsetFetchResponse {
	resp := kmsg.NewPtrOffsetFetchResponse()
	resp.Version = r.Version
	if r.Version >= 8 {
		for _, rg := range r.Groups {
			var topics []fetchTopic
			if rg.Topics != nil {
				topics = make([]fetchTopic, 0, len(rg.Topics))
				for _, t := range rg.Topics {
					topics = append(topics, c.resolveFetchTopic(r.Version, t.Topic, t.TopicID, t.Partitions))
				}
			}
			res := c.fetchGroup(rg.Group, rg.Topics == nil, topics, r.Version >= 10)
			sg := kmsg.NewOffsetFetchResponseGroup()
			sg.Group = rg.Group
			sg.ErrorCode = res.code
			for _, t := range res.topics {
				st := kmsg.NewOffsetFetchResponseGroupTopic()
				st.Topic, st.TopicID = t.name, t.id
				for _, p := range t.partitions {
					sp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
					sp.Partition, sp.Offset, sp.LeaderEpoch, sp.Metadata, sp.ErrorCode = p.partition, p.offset, p.leaderEpoch, kmsg.StringPtr(p.metadata), p.code
					st.Partitions = append(st.Partitions, sp)
				}
				sg.Topics = append(sg.Topics, st)
			}
			resp.Groups = append(resp.Groups, sg)
		}
		return resp
	}

	all := r.Version >= 2 && r.Topics == nil
	var topics []fetchTopic
	for _, t := range r.Topics {
		topics = append(topics, fetchTopic{name: t.Topic, partitions: t.Partitions})
	}
	res := c.fetchGroup(r.Group, all, topics, false)
	if r.Version >= 2 {
		resp.ErrorCode = res.code
	} else if res.code != 0 {
		// No top-level error before v2: every partition carries it.
		for _, t := range topics {
			st := kmsg.NewOffsetFetchResponseTopic()
			st.Topic = t.name
			for _, p := range t.partitions {
				sp := kmsg.NewOffsetFetchResponseTopicPartition()
				sp.Partition, sp.Offset, sp.LeaderEpoch, sp.Metadata, sp.ErrorCode = p, -1, -1, kmsg.StringPtr(""), res.code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp
	}
	for _, t := range res.topics {
		st := kmsg.NewOffsetFetchResponseTopic()
		st.Topic = t.name
		for _, p := range t.partitions {
			sp := kmsg.NewOffsetFetchResponseTopicPartition()
			sp.Partition, sp.Offset, sp.LeaderEpoch, sp.Metadata, sp.ErrorCode = p.partition, p.offset, p.leaderEpoch, kmsg.StringPtr(p.metadata), p.code
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

type fetchTopic struct {
	name       string
	id         [16]byte
	partitions []int32
	code       int16 // set when the topic id is unknown (v10)
}

type fetchedPartition struct {
	partition   int32
	offset      int64
	leaderEpoch int32
	metadata    string
	code        int16
}

type fetchedTopic struct {
	name       string
	id         [16]byte
	partitions []fetchedPartition
}

type fetchResult struct {
	code   int16
	topics []fetchedTopic
}

func (c *Coordinator) resolveFetchTopic(version int16, name string, id [16]byte, partitions []int32) fetchTopic {
	t := fetchTopic{name: name, id: id, partitions: partitions}
	if version < 10 {
		return t
	}
	if c.topics == nil {
		t.code = kerr.UnknownTopicID.Code
		return t
	}
	n, ok := c.topics.TopicName(id)
	if !ok {
		t.code = kerr.UnknownTopicID.Code
		return t
	}
	t.name = n
	return t
}

// fetchGroup reads one group's committed offsets: the listed topics, or
// all of them. byID asks for topic ids in the answer (v10).
func (c *Coordinator) fetchGroup(groupID string, all bool, topics []fetchTopic, byID bool) fetchResult {
	g, _, code := c.lookup(groupID, false)
	if code != 0 {
		return fetchResult{code: code}
	}
	var res fetchResult
	if !all {
		for _, t := range topics {
			ft := fetchedTopic{name: t.name, id: t.id}
			if byID {
				ft.name = ""
			}
			for _, p := range t.partitions {
				fp := fetchedPartition{partition: p, offset: -1, leaderEpoch: -1, code: t.code}
				if g != nil && t.code == 0 {
					if o := g.offsets[t.name][p]; o != nil {
						fp.offset, fp.leaderEpoch, fp.metadata = o.offset, o.leaderEpoch, o.metadata
					}
				}
				ft.partitions = append(ft.partitions, fp)
			}
			res.topics = append(res.topics, ft)
		}
		if g != nil {
			g.mu.Unlock()
		}
		return res
	}
	if g == nil {
		return res
	}
	defer g.mu.Unlock()
	names := make([]string, 0, len(g.offsets))
	for name := range g.offsets {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		ft := fetchedTopic{name: name}
		if byID {
			id, ok := c.topicID(name, g.offsets[name])
			if !ok {
				continue // a topic without an id cannot be named in v10
			}
			ft.name, ft.id = "", id
		}
		ps := make([]int32, 0, len(g.offsets[name]))
		for p := range g.offsets[name] {
			ps = append(ps, p)
		}
		sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
		for _, p := range ps {
			o := g.offsets[name][p]
			ft.partitions = append(ft.partitions, fetchedPartition{partition: p, offset: o.offset, leaderEpoch: o.leaderEpoch, metadata: o.metadata})
		}
		res.topics = append(res.topics, ft)
	}
	return res
}

// topicID finds a topic's id: from the broker's metadata, else from the
// offsets committed for it.
func (c *Coordinator) topicID(name string, offsets map[int32]*offsetEntry) ([16]byte, bool) {
	if c.topics != nil {
		if id, _, ok := c.topics.Topic(name); ok {
			return id, true
		}
		return [16]byte{}, false
	}
	for _, o := range offsets {
		if o.topicID != ([16]byte{}) {
			return o.topicID, true
		}
	}
	return [16]byte{}, false
}
