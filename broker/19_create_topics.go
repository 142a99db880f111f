package broker

// CreateTopics, v2-v7. Validation (names, partitions, replication factor
// against registered brokers, explicit assignments, every config entry)
// is the controller's; validate_only runs it without creating. v5+
// answers include the new topic's partitions, replication factor and
// full config list, as Kafka's do.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/controller"
)

func (s *Server) handleCreateTopics(ctx context.Context, r *kmsg.CreateTopicsRequest) *kmsg.CreateTopicsResponse {
	resp := r.ResponseKind().(*kmsg.CreateTopicsResponse)
	counts := map[string]int{}
	for _, t := range r.Topics {
		counts[t.Topic]++
	}

	var reqs []controller.CreateTopic
	var idx []int // response index for each controller request
	for _, t := range r.Topics {
		rt := kmsg.NewCreateTopicsResponseTopic()
		rt.Topic = t.Topic
		rt.NumPartitions, rt.ReplicationFactor = -1, -1
		if counts[t.Topic] > 1 {
			// Kafka answers a duplicated name once.
			if counts[t.Topic] > 0 {
				counts[t.Topic] = -1
				rt.ErrorCode = kerr.InvalidRequest.Code
				rt.ErrorMessage = ptr("Duplicate topic name.")
				resp.Topics = append(resp.Topics, rt)
			}
			continue
		}
		if counts[t.Topic] < 0 {
			continue
		}
		ct := controller.CreateTopic{Name: t.Topic, Partitions: t.NumPartitions, ReplicationFactor: t.ReplicationFactor, Configs: map[string]string{}}
		bad := ""
		for _, c := range t.Configs {
			if c.Value == nil {
				bad = c.Name
				break
			}
			ct.Configs[c.Name] = *c.Value
		}
		if bad != "" {
			rt.ErrorCode = kerr.InvalidConfig.Code
			rt.ErrorMessage = ptrf("Null value not supported for topic configs: %s", bad)
			resp.Topics = append(resp.Topics, rt)
			continue
		}
		if len(t.ReplicaAssignment) > 0 {
			a := make([][]int32, len(t.ReplicaAssignment))
			ok := true
			for _, ra := range t.ReplicaAssignment {
				if ra.Partition < 0 || int(ra.Partition) >= len(a) || a[ra.Partition] != nil {
					ok = false
					break
				}
				a[ra.Partition] = ra.Replicas
			}
			if !ok {
				rt.ErrorCode = kerr.InvalidReplicaAssignment.Code
				rt.ErrorMessage = ptr("Partitions should be a consecutive 0-based integer sequence")
				resp.Topics = append(resp.Topics, rt)
				continue
			}
			ct.Assignment = a
		}
		idx = append(idx, len(resp.Topics))
		reqs = append(reqs, ct)
		resp.Topics = append(resp.Topics, rt)
	}
	if len(reqs) == 0 {
		return resp
	}
	results := s.ctrl.CreateTopics(ctx, reqs, r.ValidateOnly)
	img := s.image()
	for i, res := range results {
		rt := &resp.Topics[idx[i]]
		if res.Err != nil {
			rt.ErrorCode = res.Err.Code.Code
			if res.Err.Message != "" {
				rt.ErrorMessage = ptr(res.Err.Message)
			}
			continue
		}
		if !r.ValidateOnly {
			s.log.Info("created topic", "topic", res.Topic.Name, "partitions", len(res.Topic.Partitions), "id", res.Topic.ID)
		}
		rt.TopicID = res.Topic.ID
		rt.NumPartitions = int32(len(res.Topic.Partitions))
		rt.ReplicationFactor = int16(len(res.Topic.Partitions[0].Replicas))
		if r.Version >= 5 {
			rt.Configs = s.cfg.Topics.CreateTopicConfigs(img, reqs[i].Configs)
		}
	}
	return resp
}
