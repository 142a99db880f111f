package broker

// Where metadata comes from and where admin changes go.
//
// On a single node (no controller.quorum.voters) the broker runs
// controller.Local in-process: the image is its journal's, every admin
// change is local. In a cluster (see broker/controller/cluster.go) a node
// with the controller role runs the raft quorum; its admin changes are
// local only while it is the active controller. Any other node forwards
// the client's admin request verbatim to the active controller's listener
// and relays the answer, as Kafka's brokers do since KIP-590.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/controller"
	"github.com/fjordhq/fjord/broker/metadata"
)

// image is the metadata image this broker serves from.
func (s *Server) image() *metadata.Image { return s.img.Load() }

// activeController is the controller's admin interface when this node is
// the active controller (always, on a single node), nil when admin
// requests must be forwarded.
func (s *Server) activeController() controller.Controller {
	if s.quorum == nil {
		return s.ctrl // Local, or nil on a broker-only node
	}
	if s.quorum.IsActive() {
		return s.quorum
	}
	return nil
}

// quorumNode is what the broker needs of a raft controller it hosts.
type quorumNode interface {
	controller.Controller
	IsActive() bool
	ActiveID() int32
}

// controllerLink is how a cluster node reaches the active controller.
type controllerLink interface {
	Forward(ctx context.Context, req kmsg.Request) (kmsg.Response, error)
	AllocateProducerIDs(ctx context.Context, brokerID int32, brokerEpoch int64) (first, count int64, err error)
}

// forwardedAPIs are the admin requests a non-controller forwards.
var forwardedAPIs = map[int16]bool{
	int16(kmsg.CreateTopics):               true,
	int16(kmsg.DeleteTopics):               true,
	int16(kmsg.CreatePartitions):           true,
	int16(kmsg.AlterConfigs):               true,
	int16(kmsg.IncrementalAlterConfigs):    true,
	int16(kmsg.ElectLeaders):               true,
	int16(kmsg.AlterPartitionAssignments):  true,
	int16(kmsg.ListPartitionReassignments): true,
	int16(kmsg.CreateACLs):                 true,
	int16(kmsg.DeleteACLs):                 true,
	int16(kmsg.AlterUserSCRAMCredentials):  true,
	int16(kmsg.DescribeQuorum):             true,
	int16(kmsg.AlterClientQuotas):          true,
}

// mustForward reports whether an admin request has to go to the active
// controller instead of being handled here.
func (s *Server) mustForward(key int16) bool {
	return s.link != nil && forwardedAPIs[key] && s.activeController() == nil
}

// forward relays an admin request to the active controller. If that
// fails (no controller reachable before ctx ends) the client gets a
// retriable error in the API's own error fields.
func (s *Server) forward(ctx context.Context, req kmsg.Request) kmsg.Response {
	resp, err := s.link.Forward(ctx, req)
	if err == nil {
		return resp
	}
	s.log.Warn("forwarding to the active controller failed", "api", kmsg.NameForKey(req.Key()), "err", err)
	return adminErrorResponse(req, kerr.NotController.Code, "forwarding to the active controller failed: "+err.Error())
}

// adminErrorResponse answers every entity of an admin request with code.
func adminErrorResponse(req kmsg.Request, code int16, msg string) kmsg.Response {
	m := &msg
	switch r := req.(type) {
	case *kmsg.CreateTopicsRequest:
		resp := r.ResponseKind().(*kmsg.CreateTopicsResponse)
		for _, t := range r.Topics {
			rt := kmsg.NewCreateTopicsResponseTopic()
			rt.Topic, rt.ErrorCode, rt.ErrorMessage, rt.NumPartitions, rt.ReplicationFactor = t.Topic, code, m, -1, -1
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	case *kmsg.DeleteTopicsRequest:
		resp := r.ResponseKind().(*kmsg.DeleteTopicsResponse)
		for _, t := range r.Topics {
			rt := kmsg.NewDeleteTopicsResponseTopic()
			rt.Topic, rt.TopicID, rt.ErrorCode, rt.ErrorMessage = t.Topic, t.TopicID, code, m
			resp.Topics = append(resp.Topics, rt)
		}
		for _, name := range r.TopicNames {
			rt := kmsg.NewDeleteTopicsResponseTopic()
			rt.Topic, rt.ErrorCode = kmsg.StringPtr(name), code
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	case *kmsg.CreatePartitionsRequest:
		resp := r.ResponseKind().(*kmsg.CreatePartitionsResponse)
		for _, t := range r.Topics {
			rt := kmsg.NewCreatePartitionsResponseTopic()
			rt.Topic, rt.ErrorCode, rt.ErrorMessage = t.Topic, code, m
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	case *kmsg.AlterConfigsRequest:
		resp := r.ResponseKind().(*kmsg.AlterConfigsResponse)
		for _, rr := range r.Resources {
			res := kmsg.NewAlterConfigsResponseResource()
			res.ResourceType, res.ResourceName, res.ErrorCode, res.ErrorMessage = rr.ResourceType, rr.ResourceName, code, m
			resp.Resources = append(resp.Resources, res)
		}
		return resp
	case *kmsg.IncrementalAlterConfigsRequest:
		resp := r.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
		for _, rr := range r.Resources {
			res := kmsg.NewIncrementalAlterConfigsResponseResource()
			res.ResourceType, res.ResourceName, res.ErrorCode, res.ErrorMessage = rr.ResourceType, rr.ResourceName, code, m
			resp.Resources = append(resp.Resources, res)
		}
		return resp
	case *kmsg.ElectLeadersRequest:
		resp := r.ResponseKind().(*kmsg.ElectLeadersResponse)
		resp.ErrorCode = code
		return resp
	case *kmsg.AlterPartitionAssignmentsRequest:
		resp := r.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
		resp.ErrorCode, resp.ErrorMessage = code, m
		return resp
	case *kmsg.ListPartitionReassignmentsRequest:
		resp := r.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
		resp.ErrorCode, resp.ErrorMessage = code, m
		return resp
	case *kmsg.DescribeQuorumRequest:
		resp := r.ResponseKind().(*kmsg.DescribeQuorumResponse)
		resp.ErrorCode = code
		if r.Version >= 2 {
			resp.ErrorMessage = m
		}
		return resp
	}
	if resp, ok := securityErrorResponse(req, code, msg); ok {
		return resp
	}
	if r, ok := req.(*kmsg.AlterClientQuotasRequest); ok {
		return quotaErrorResponse(r, code, msg)
	}
	panic(fmt.Sprintf("adminErrorResponse: %T is not a forwarded request", req))
}

// createTopics creates topics for the broker's own needs (auto-creation,
// __consumer_offsets) on the active controller, here or remote.
func (s *Server) createTopics(ctx context.Context, reqs []controller.CreateTopic) []controller.TopicResult {
	if c := s.activeController(); c != nil || s.link == nil {
		if c == nil {
			return topicErrors(len(reqs), kerr.NotController, "no active controller")
		}
		return c.CreateTopics(ctx, reqs, false)
	}
	req := kmsg.NewPtrCreateTopicsRequest()
	req.SetVersion(7)
	req.TimeoutMillis = 30000
	for _, r := range reqs {
		t := kmsg.NewCreateTopicsRequestTopic()
		t.Topic, t.NumPartitions, t.ReplicationFactor = r.Name, r.Partitions, r.ReplicationFactor
		for k, v := range r.Configs {
			c := kmsg.NewCreateTopicsRequestTopicConfig()
			c.Name, c.Value = k, kmsg.StringPtr(v)
			t.Configs = append(t.Configs, c)
		}
		req.Topics = append(req.Topics, t)
	}
	raw, err := s.link.Forward(ctx, req)
	if err != nil {
		return topicErrors(len(reqs), kerr.NotController, err.Error())
	}
	resp := raw.(*kmsg.CreateTopicsResponse)
	out := make([]controller.TopicResult, len(reqs))
	for i := range reqs {
		if i >= len(resp.Topics) {
			out[i].Err = &controller.Error{Code: kerr.UnknownServerError, Message: "controller answered fewer topics than asked"}
			continue
		}
		rt := resp.Topics[i]
		if err := kerr.ErrorForCode(rt.ErrorCode); err != nil {
			var ke *kerr.Error
			errors.As(err, &ke)
			out[i].Err = &controller.Error{Code: ke, Message: derefString(rt.ErrorMessage)}
			continue
		}
		out[i].Topic = &metadata.Topic{Name: rt.Topic, ID: rt.TopicID}
	}
	return out
}

func topicErrors(n int, code *kerr.Error, msg string) []controller.TopicResult {
	out := make([]controller.TopicResult, n)
	for i := range out {
		out[i].Err = &controller.Error{Code: code, Message: msg}
	}
	return out
}

func derefString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// allocateProducerIDs reserves a block of producer ids on the active
// controller, here or remote; it returns the first id and the block size.
func (s *Server) allocateProducerIDs(ctx context.Context) (first, count int64, err error) {
	if c := s.activeController(); c != nil {
		first, err := c.AllocateProducerIDs(ctx, producerIDBlock)
		return first, producerIDBlock, err
	}
	if s.link == nil {
		return 0, 0, errors.New("no active controller")
	}
	return s.link.AllocateProducerIDs(ctx, s.cfg.NodeID, s.brokerEpoch())
}

// brokerEpoch is this broker's registration epoch (0 on a single node).
func (s *Server) brokerEpoch() int64 {
	if s.epoch == nil {
		return 0
	}
	return s.epoch()
}

func sortedKeys[V any](m map[int16]V) []int16 { return slices.Sorted(maps.Keys(m)) }

func sortedKeys32[V any](m map[int32]V) []int32 { return slices.Sorted(maps.Keys(m)) }

// clientControllerID is the "controller" Metadata and DescribeCluster
// name to clients. Clients send admin requests there, so it must be a
// live broker: the active controller when it is one (a combined node:
// no forwarding needed), else the lowest live broker, which forwards —
// Kafka's KRaft brokers answer a live broker too.
func clientControllerID(img *metadata.Image) int32 {
	if b := img.Brokers[img.ControllerID]; b != nil && !b.Fenced {
		return img.ControllerID
	}
	for _, id := range img.BrokerIDs() {
		if !img.Brokers[id].Fenced {
			return id
		}
	}
	return img.ControllerID
}
