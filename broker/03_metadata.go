package broker

// Metadata, v0-v13. Topics may be named (or, v10+, given by id); a null
// list (v1+) or an empty one (v0) means all topics. Missing topics are
// created when auto.create.topics.enable is on and the request allows it
// (always before v4), with num.partitions and default.replication.factor,
// and returned in the same answer. Authorized-operation bitfields (v8+)
// are filled when asked: without an authorizer every operation is allowed.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/controller"
	"github.com/fjordhq/fjord/broker/metadata"
)

// Authorized-operation bitfields when every operation is allowed (bit n
// set for AclOperation code n).
const (
	topicOpsAll   int32 = 1<<3 | 1<<4 | 1<<5 | 1<<6 | 1<<7 | 1<<8 | 1<<10 | 1<<11 // READ WRITE CREATE DELETE ALTER DESCRIBE DESCRIBE_CONFIGS ALTER_CONFIGS
	clusterOpsAll int32 = 1<<5 | 1<<7 | 1<<8 | 1<<9 | 1<<10 | 1<<11 | 1<<12       // CREATE ALTER DESCRIBE CLUSTER_ACTION DESCRIBE_CONFIGS ALTER_CONFIGS IDEMPOTENT_WRITE
	opsOmitted    int32 = -2147483648
)

func (s *Server) handleMetadata(ctx context.Context, r *kmsg.MetadataRequest, listener string) *kmsg.MetadataResponse {
	resp := r.ResponseKind().(*kmsg.MetadataResponse)
	img := s.image()

	all := r.Topics == nil || (r.Version == 0 && len(r.Topics) == 0)
	autoCreate := s.cfg.AutoCreateTopics && (r.Version < 4 || r.AllowAutoTopicCreation)
	if !all && autoCreate {
		var create []controller.CreateTopic
		for _, t := range r.Topics {
			if t.Topic != nil && img.Topics[*t.Topic] == nil && !metadata.IsInternal(*t.Topic) && controller.ValidateTopicName(*t.Topic) == nil {
				create = append(create, controller.CreateTopic{Name: *t.Topic, Partitions: -1, ReplicationFactor: -1})
			}
		}
		if len(create) > 0 {
			for i, res := range s.createTopics(ctx, create) {
				if res.Err != nil && res.Err.Code != kerr.TopicAlreadyExists {
					s.log.Warn("auto-create topic failed", "topic", create[i].Name, "err", res.Err)
				} else if res.Err == nil {
					s.log.Info("auto-created topic", "topic", create[i].Name)
				}
			}
			img = s.image()
		}
	}

	for _, id := range img.BrokerIDs() {
		b := img.Brokers[id]
		if b.Fenced {
			continue
		}
		host, port, ok := endpoint(b, listener)
		if !ok {
			continue
		}
		mb := kmsg.NewMetadataResponseBroker()
		mb.NodeID, mb.Host, mb.Port = b.ID, host, port
		if b.Rack != "" {
			mb.Rack = ptr(b.Rack)
		}
		resp.Brokers = append(resp.Brokers, mb)
	}
	resp.ClusterID = ptr(img.ClusterID)
	resp.ControllerID = clientControllerID(img)
	resp.AuthorizedOperations = opsOmitted
	if r.IncludeClusterAuthorizedOperations {
		resp.AuthorizedOperations = clusterOpsAll
	}

	if all {
		for _, name := range img.TopicNames() {
			resp.Topics = append(resp.Topics, s.metadataTopic(img, img.Topics[name], r))
		}
		return resp
	}
	for _, rt := range r.Topics {
		var t *metadata.Topic
		if rt.Topic != nil {
			t = img.Topics[*rt.Topic]
		} else {
			t = img.TopicsByID[metadata.UUID(rt.TopicID)]
		}
		if t == nil {
			mt := kmsg.NewMetadataResponseTopic()
			mt.Topic, mt.TopicID = rt.Topic, rt.TopicID
			mt.AuthorizedOperations = opsOmitted
			switch {
			case rt.Topic == nil:
				mt.ErrorCode = kerr.UnknownTopicID.Code
			case controller.ValidateTopicName(*rt.Topic) != nil:
				mt.ErrorCode = kerr.InvalidTopicException.Code
			default:
				mt.ErrorCode = kerr.UnknownTopicOrPartition.Code
			}
			resp.Topics = append(resp.Topics, mt)
			continue
		}
		resp.Topics = append(resp.Topics, s.metadataTopic(img, t, r))
	}
	return resp
}

func (s *Server) metadataTopic(img *metadata.Image, t *metadata.Topic, r *kmsg.MetadataRequest) kmsg.MetadataResponseTopic {
	mt := kmsg.NewMetadataResponseTopic()
	mt.Topic = ptr(t.Name)
	mt.TopicID = t.ID
	mt.IsInternal = t.Internal()
	mt.AuthorizedOperations = opsOmitted
	if r.IncludeTopicAuthorizedOperations {
		mt.AuthorizedOperations = topicOpsAll
	}
	for _, p := range t.Partitions {
		mp := kmsg.NewMetadataResponseTopicPartition()
		mp.Partition = p.Index
		mp.Leader = p.Leader
		mp.LeaderEpoch = p.LeaderEpoch
		mp.Replicas = p.Replicas
		mp.ISR = p.ISR
		for _, id := range p.Replicas {
			if b := img.Brokers[id]; b == nil || b.Fenced {
				mp.OfflineReplicas = append(mp.OfflineReplicas, id)
			}
		}
		if b := img.Brokers[p.Leader]; b == nil || b.Fenced {
			mp.ErrorCode = kerr.LeaderNotAvailable.Code
			mp.Leader = -1
		}
		mt.Partitions = append(mt.Partitions, mp)
	}
	return mt
}
