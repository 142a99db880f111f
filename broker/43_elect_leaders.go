package broker

// ElectLeaders (v0-v2), AlterPartitionReassignments (v0-v1) and
// ListPartitionReassignments (v0): leadership and replica placement, run
// by the active controller (forwarded there from other brokers). A single
// node (controller.Local) has nothing to elect or move: every partition
// already has its only replica as leader, and the only valid assignment
// is that replica.

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/controller"
)

// clusterAdmin is what the raft quorum adds to controller.Controller.
type clusterAdmin interface {
	ElectLeaders(ctx context.Context, unclean bool, parts []controller.TopicPartition) []controller.ElectResult
	AlterPartitionReassignments(ctx context.Context, rs []controller.Reassignment) []*controller.Error
	ListPartitionReassignments(ctx context.Context, parts []controller.TopicPartition) []controller.OngoingReassignment
}

func (s *Server) clusterAdmin() (clusterAdmin, bool) {
	ca, ok := s.activeController().(clusterAdmin)
	return ca, ok
}

func (s *Server) handleElectLeaders(ctx context.Context, r *kmsg.ElectLeadersRequest) *kmsg.ElectLeadersResponse {
	resp := r.ResponseKind().(*kmsg.ElectLeadersResponse)
	unclean := r.Version >= 1 && r.ElectionType == 1
	if r.Version >= 1 && r.ElectionType != 0 && r.ElectionType != 1 {
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp
	}
	var parts []controller.TopicPartition
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			parts = append(parts, controller.TopicPartition{Topic: t.Topic, Partition: p})
		}
	}
	all := r.Topics == nil
	var results []controller.ElectResult
	if ca, ok := s.clusterAdmin(); ok {
		results = ca.ElectLeaders(ctx, unclean, parts)
	} else {
		img := s.image()
		if all {
			for _, name := range img.TopicNames() {
				for _, p := range img.Topics[name].Partitions {
					parts = append(parts, controller.TopicPartition{Topic: name, Partition: p.Index})
				}
			}
		}
		for _, tp := range parts {
			res := controller.ElectResult{TopicPartition: tp, Err: &controller.Error{Code: kerr.ElectionNotNeeded, Message: "Leader election not needed for topic partition."}}
			if img.Partition(tp.Topic, tp.Partition) == nil {
				res.Err = &controller.Error{Code: kerr.UnknownTopicOrPartition, Message: "The partition does not exist."}
			}
			results = append(results, res)
		}
	}
	// Electing every partition reports only what happened: partitions
	// whose leader was already the right one are left out, as in Kafka.
	byTopic := map[string]int{}
	for _, res := range results {
		if all && res.Err != nil && res.Err.Code == kerr.ElectionNotNeeded {
			continue
		}
		i, ok := byTopic[res.Topic]
		if !ok {
			i = len(resp.Topics)
			byTopic[res.Topic] = i
			rt := kmsg.NewElectLeadersResponseTopic()
			rt.Topic = res.Topic
			resp.Topics = append(resp.Topics, rt)
		}
		rp := kmsg.NewElectLeadersResponseTopicPartition()
		rp.Partition = res.Partition
		if res.Err != nil {
			rp.ErrorCode = res.Err.Code.Code
			if res.Err.Message != "" {
				rp.ErrorMessage = ptr(res.Err.Message)
			}
		}
		resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, rp)
	}
	return resp
}

func (s *Server) handleAlterPartitionAssignments(ctx context.Context, r *kmsg.AlterPartitionAssignmentsRequest) *kmsg.AlterPartitionAssignmentsResponse {
	resp := r.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
	resp.AllowReplicationFactorChange = r.AllowReplicationFactorChange
	var rs []controller.Reassignment
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			rs = append(rs, controller.Reassignment{TopicPartition: controller.TopicPartition{Topic: t.Topic, Partition: p.Partition}, Replicas: p.Replicas})
		}
	}
	var errs []*controller.Error
	if ca, ok := s.clusterAdmin(); ok {
		errs = ca.AlterPartitionReassignments(ctx, rs)
	} else {
		img := s.image()
		for _, ra := range rs {
			var err *controller.Error
			switch mp := img.Partition(ra.Topic, ra.Partition); {
			case mp == nil:
				err = &controller.Error{Code: kerr.UnknownTopicOrPartition, Message: "The partition does not exist."}
			case ra.Replicas == nil:
				err = &controller.Error{Code: kerr.NoReassignmentInProgress, Message: "No ongoing reassignment for this partition."}
			case !slices.Equal(ra.Replicas, mp.Replicas):
				err = &controller.Error{Code: kerr.InvalidReplicaAssignment, Message: "The replica assignment names brokers that are not registered."}
			}
			errs = append(errs, err)
		}
	}
	byTopic := map[string]int{}
	for i, ra := range rs {
		ti, ok := byTopic[ra.Topic]
		if !ok {
			ti = len(resp.Topics)
			byTopic[ra.Topic] = ti
			rt := kmsg.NewAlterPartitionAssignmentsResponseTopic()
			rt.Topic = ra.Topic
			resp.Topics = append(resp.Topics, rt)
		}
		rp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
		rp.Partition = ra.Partition
		if i < len(errs) && errs[i] != nil {
			rp.ErrorCode = errs[i].Code.Code
			if errs[i].Message != "" {
				rp.ErrorMessage = ptr(errs[i].Message)
			}
		}
		resp.Topics[ti].Partitions = append(resp.Topics[ti].Partitions, rp)
	}
	return resp
}

func (s *Server) handleListPartitionReassignments(ctx context.Context, r *kmsg.ListPartitionReassignmentsRequest) *kmsg.ListPartitionReassignmentsResponse {
	resp := r.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
	ca, ok := s.clusterAdmin()
	if !ok {
		return resp // a single node never has one in progress
	}
	var parts []controller.TopicPartition
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			parts = append(parts, controller.TopicPartition{Topic: t.Topic, Partition: p})
		}
	}
	byTopic := map[string]int{}
	for _, o := range ca.ListPartitionReassignments(ctx, parts) {
		ti, ok := byTopic[o.Topic]
		if !ok {
			ti = len(resp.Topics)
			byTopic[o.Topic] = ti
			rt := kmsg.NewListPartitionReassignmentsResponseTopic()
			rt.Topic = o.Topic
			resp.Topics = append(resp.Topics, rt)
		}
		rp := kmsg.NewListPartitionReassignmentsResponseTopicPartition()
		rp.Partition, rp.Replicas, rp.AddingReplicas, rp.RemovingReplicas = o.Partition, o.Replicas, o.AddingReplicas, o.RemovingReplicas
		resp.Topics[ti].Partitions = append(resp.Topics[ti].Partitions, rp)
	}
	return resp
}
