package broker

// CreatePartitions, v0-v3: grows topics; new partitions are placed like
// new topics' (or as explicitly assigned) and their logs created when the
// metadata change applies. validate_only checks without changing.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (s *Server) handleCreatePartitions(ctx context.Context, r *kmsg.CreatePartitionsRequest) *kmsg.CreatePartitionsResponse {
	resp := r.ResponseKind().(*kmsg.CreatePartitionsResponse)
	seen := map[string]int{}
	for _, t := range r.Topics {
		seen[t.Topic]++
	}
	for _, t := range r.Topics {
		rt := kmsg.NewCreatePartitionsResponseTopic()
		rt.Topic = t.Topic
		if seen[t.Topic] > 1 {
			rt.ErrorCode = kerr.InvalidRequest.Code
			rt.ErrorMessage = ptr("Duplicate topic in request.")
			resp.Topics = append(resp.Topics, rt)
			continue
		}
		var assignment [][]int32
		for _, a := range t.Assignment {
			assignment = append(assignment, a.Replicas)
		}
		if err := s.ctrl.CreatePartitions(ctx, t.Topic, t.Count, assignment, r.ValidateOnly); err != nil {
			rt.ErrorCode = err.Code.Code
			if err.Message != "" {
				rt.ErrorMessage = ptr(err.Message)
			}
		} else if !r.ValidateOnly {
			s.log.Info("added partitions", "topic", t.Topic, "count", t.Count)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
