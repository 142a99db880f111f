package broker

// Leadership as clients see it: which broker leads a partition, the
// answers that send clients there (NOT_LEADER_OR_FOLLOWER with the new
// leader, KIP-951), and the errors replication waits end with.

import (
	"errors"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/metadata"
)

// errNotLeader: this broker does not lead the partition (any more).
var errNotLeader = errors.New("not the leader of the partition")

// notHostedCode answers a request for a partition this broker does not
// host: NOT_LEADER_OR_FOLLOWER if the partition exists (the client's
// metadata is stale and a refresh sends it elsewhere), else
// UNKNOWN_TOPIC_OR_PARTITION.
func (s *Server) notHostedCode(img *metadata.Image, topic string, partition int32) int16 {
	if img.Partition(topic, partition) != nil {
		return kerr.NotLeaderForPartition.Code
	}
	return kerr.UnknownTopicOrPartition.Code
}

// currentLeader fills a KIP-951 current-leader field for a partition and
// notes the leader so its endpoint goes into the response. The fields are
// left at -1 when the leader is unknown or offline.
func (s *Server) currentLeader(img *metadata.Image, topic string, partition int32, out *kmsg.ProduceResponseTopicPartitionCurrentLeader, leaders *map[int32]bool) {
	out.LeaderID, out.LeaderEpoch = leaderOf(img, topic, partition, leaders)
}

// fetchCurrentLeader is currentLeader for Fetch answers.
func (s *Server) fetchCurrentLeader(img *metadata.Image, topic string, partition int32, out *kmsg.FetchResponseTopicPartitionCurrentLeader, leaders *map[int32]bool) {
	out.LeaderID, out.LeaderEpoch = leaderOf(img, topic, partition, leaders)
}

func leaderOf(img *metadata.Image, topic string, partition int32, leaders *map[int32]bool) (int32, int32) {
	mp := img.Partition(topic, partition)
	if mp == nil || mp.Leader < 0 {
		return -1, -1
	}
	if b := img.Brokers[mp.Leader]; b == nil || b.Fenced {
		return -1, -1
	}
	if *leaders == nil {
		*leaders = map[int32]bool{}
	}
	(*leaders)[mp.Leader] = true
	return mp.Leader, mp.LeaderEpoch
}

// nodeEndpoints lists the brokers named in current-leader fields, as
// Produce v10+ answers carry them (so clients need no metadata refresh).
func (s *Server) nodeEndpoints(img *metadata.Image, ids map[int32]bool) []kmsg.ProduceResponseBroker {
	var out []kmsg.ProduceResponseBroker
	for _, id := range slices.Sorted(maps.Keys(ids)) {
		b := img.Brokers[id]
		if b == nil {
			continue
		}
		nb := kmsg.NewProduceResponseBroker()
		nb.NodeID, nb.Host, nb.Port = b.ID, b.Host, b.Port
		if b.Rack != "" {
			nb.Rack = ptr(b.Rack)
		}
		out = append(out, nb)
	}
	return out
}

// fetchNodeEndpoints is nodeEndpoints for Fetch v16+ answers.
func (s *Server) fetchNodeEndpoints(img *metadata.Image, ids map[int32]bool) []kmsg.FetchResponseBroker {
	var out []kmsg.FetchResponseBroker
	for _, b := range s.nodeEndpoints(img, ids) {
		out = append(out, kmsg.FetchResponseBroker{NodeID: b.NodeID, Host: b.Host, Port: b.Port, Rack: b.Rack})
	}
	return out
}
