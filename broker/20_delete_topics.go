package broker

// DeleteTopics, v1-v6 (v6 may name topics by id). Refused with
// TOPIC_DELETION_DISABLED when delete.topic.enable=false, and for
// Kafka's internal topics. The partition logs are removed when the
// metadata change is applied (renamed to <dir>-delete, then deleted in
// the background, as Kafka does).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/metadata"
)

func (s *Server) handleDeleteTopics(ctx context.Context, r *kmsg.DeleteTopicsRequest) *kmsg.DeleteTopicsResponse {
	resp := r.ResponseKind().(*kmsg.DeleteTopicsResponse)
	img := s.image()
	type want struct {
		name *string
		id   [16]byte
	}
	var wants []want
	if r.Version >= 6 {
		for _, t := range r.Topics {
			wants = append(wants, want{t.Topic, t.TopicID})
		}
	} else {
		for _, name := range r.TopicNames {
			wants = append(wants, want{name: ptr(name)})
		}
	}
	var names []string
	var idx []int
	for _, w := range wants {
		rt := kmsg.NewDeleteTopicsResponseTopic()
		rt.Topic, rt.TopicID = w.name, w.id
		var t *metadata.Topic
		if w.name != nil {
			t = img.Topics[*w.name]
		} else {
			t = img.TopicsByID[metadata.UUID(w.id)]
		}
		switch {
		case !s.cfg.DeleteTopicEnable:
			rt.ErrorCode = kerr.TopicDeletionDisabled.Code
			rt.ErrorMessage = ptr("Topic deletion is disabled (delete.topic.enable=false).")
		case t == nil && w.name == nil:
			rt.ErrorCode = kerr.UnknownTopicID.Code
		case t == nil:
			rt.ErrorCode = kerr.UnknownTopicOrPartition.Code
			rt.ErrorMessage = ptr("This server does not host this topic-partition.")
		case t.Internal():
			rt.ErrorCode = kerr.InvalidRequest.Code
			rt.ErrorMessage = ptrf("Topic %s is an internal topic and cannot be deleted.", t.Name)
		default:
			rt.Topic, rt.TopicID = ptr(t.Name), t.ID
			idx = append(idx, len(resp.Topics))
			names = append(names, t.Name)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if len(names) == 0 {
		return resp
	}
	for i, err := range s.ctrl.DeleteTopics(ctx, names) {
		rt := &resp.Topics[idx[i]]
		if err != nil {
			rt.ErrorCode = err.Code.Code
			if err.Message != "" {
				rt.ErrorMessage = ptr(err.Message)
			}
			continue
		}
		s.log.Info("deleted topic", "topic", names[i])
	}
	return resp
}
