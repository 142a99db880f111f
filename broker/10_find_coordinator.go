package broker

// FindCoordinator, v0-v6 (v4+ batches keys). Group keys map to the leader
// of __consumer_offsets partition abs(hashCode(group)) % 50, as in Kafka;
// the topic is created on first use, as Kafka does, with
// offsets.topic.num.partitions partitions, compacted. Fjord has no
// transaction coordinator yet. Share-group keys are INVALID_REQUEST.
//
// Transaction keys get TRANSACTIONAL_ID_AUTHORIZATION_FAILED with a
// message saying why: a non-retriable answer, so transactional producers
// fail at once instead of retrying until they time out.

import (
	"context"
	"fmt"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/controller"
	"github.com/fjordhq/fjord/broker/group"
)

const offsetsTopic = "__consumer_offsets"

const noTransactions = "Fjord does not support transactions yet: use an idempotent producer without a transactional.id"

func (s *Server) handleFindCoordinator(ctx context.Context, r *kmsg.FindCoordinatorRequest, listener string) *kmsg.FindCoordinatorResponse {
	resp := r.ResponseKind().(*kmsg.FindCoordinatorResponse)
	keys := r.CoordinatorKeys
	if r.Version < 4 {
		keys = []string{r.CoordinatorKey}
	}
	for _, key := range keys {
		c := kmsg.NewFindCoordinatorResponseCoordinator()
		c.Key = key
		code, msg, node := s.findCoordinator(ctx, r.CoordinatorType, key, listener)
		c.ErrorCode, c.ErrorMessage = code, msg
		c.NodeID, c.Port = -1, -1
		if code == 0 {
			c.NodeID, c.Host, c.Port = node.ID, node.Host, node.Port
		}
		resp.Coordinators = append(resp.Coordinators, c)
	}
	if r.Version < 4 {
		c := resp.Coordinators[0]
		resp.ErrorCode, resp.ErrorMessage, resp.NodeID, resp.Host, resp.Port = c.ErrorCode, c.ErrorMessage, c.NodeID, c.Host, c.Port
		resp.Coordinators = nil
	}
	return resp
}

type nodeAddr struct {
	ID   int32
	Host string
	Port int32
}

func (s *Server) findCoordinator(ctx context.Context, keyType int8, key, listener string) (int16, *string, nodeAddr) {
	switch keyType {
	case 0: // group
	case 1:
		// Not retriable on purpose: clients fail at once with the message
		// instead of retrying until their transaction timeout.
		return kerr.TransactionalIDAuthorizationFailed.Code, ptr(noTransactions), nodeAddr{}
	default:
		return kerr.InvalidRequest.Code, ptrf("Unsupported coordinator key type %d", keyType), nodeAddr{}
	}
	if err := s.ensureOffsetsTopic(ctx); err != nil {
		s.log.Warn("cannot create the offsets topic", "err", err)
		return kerr.CoordinatorNotAvailable.Code, ptr(err.Error()), nodeAddr{}
	}
	img := s.image()
	p := img.Partition(offsetsTopic, group.PartitionFor(key, s.cfg.OffsetsTopicPartitions))
	if p == nil {
		return kerr.CoordinatorNotAvailable.Code, nil, nodeAddr{}
	}
	b := img.Brokers[p.Leader]
	if b == nil || b.Fenced {
		return kerr.CoordinatorNotAvailable.Code, nil, nodeAddr{}
	}
	host, port, ok := endpoint(b, listener)
	if !ok {
		return kerr.CoordinatorNotAvailable.Code, nil, nodeAddr{}
	}
	return 0, nil, nodeAddr{b.ID, host, port}
}

// ensureOffsetsTopic creates __consumer_offsets if it does not exist yet
// and loads the coordinator's partitions.
func (s *Server) ensureOffsetsTopic(ctx context.Context) error {
	if s.image().Topics[offsetsTopic] != nil {
		return nil
	}
	s.offsetsMu.Lock()
	defer s.offsetsMu.Unlock()
	if s.image().Topics[offsetsTopic] != nil {
		return nil
	}
	rf := int16(1) // a single node can hold only one replica
	if s.cfg.Cluster.Enabled() {
		// offsets.topic.replication.factor, capped at the live brokers
		// (Kafka 4 refuses instead; a small cluster would never get a
		// coordinator, so Fjord caps it).
		live := int16(0)
		for _, b := range s.image().Brokers {
			if !b.Fenced {
				live++
			}
		}
		rf = max(min(s.cfg.Cluster.OffsetsTopicReplicationFactor, live), 1)
	}
	res := s.createTopics(ctx, []controller.CreateTopic{{
		Name:              offsetsTopic,
		Partitions:        s.cfg.OffsetsTopicPartitions,
		ReplicationFactor: rf,
		Configs: map[string]string{
			"cleanup.policy":   "compact",
			"compression.type": "producer",
			"segment.bytes":    strconv.FormatInt(s.cfg.OffsetsTopicSegmentBytes, 10),
		},
	}})
	if err := res[0].Err; err != nil && err.Code != kerr.TopicAlreadyExists {
		return fmt.Errorf("create %s: %w", offsetsTopic, err)
	}
	return s.loadOffsetsPartitions()
}

// loadOffsetsPartitions hands every local __consumer_offsets partition to
// the group coordinator, replaying its groups and offsets.
func (s *Server) loadOffsetsPartitions() error {
	t := s.image().Topics[offsetsTopic]
	if t == nil {
		return nil
	}
	for _, p := range t.Partitions {
		if p.Leader != s.cfg.NodeID {
			continue
		}
		if err := s.groups.Load(p.Index); err != nil {
			return fmt.Errorf("load groups from %s-%d: %w", offsetsTopic, p.Index, err)
		}
	}
	return nil
}

// coordinatorMove is a change of leadership of a __consumer_offsets
// partition on this broker.
type coordinatorMove struct {
	partition int32
	leader    bool
}

// moveCoordinator follows __consumer_offsets leadership: the group
// coordinator serves a partition's groups exactly while this broker leads
// it, loading them in the background (requests meanwhile get
// COORDINATOR_LOAD_IN_PROGRESS) and unloading them when the leadership
// moves (NOT_COORDINATOR sends clients to the new leader).
func (s *Server) moveCoordinator(moves []coordinatorMove) {
	if s.groups == nil {
		return // start-up: New loads what this broker leads
	}
	for _, m := range moves {
		if !m.leader {
			s.groups.Unload(m.partition)
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if err := s.groups.Load(m.partition); err != nil {
				s.log.Error("load group coordinator partition", "partition", m.partition, "err", err)
			}
		}()
	}
}
