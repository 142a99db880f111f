package broker

// AlterConfigs (v0-v2, replaces a resource's whole dynamic config) and
// IncrementalAlterConfigs (v0-v1, SET/DELETE/APPEND/SUBTRACT per key), for
// TOPIC and BROKER resources (a broker id, or "" for the cluster-wide
// default). Every entry is validated, with Kafka's rules and messages,
// before anything changes; changes apply to live logs immediately.

import (
	"context"
	"maps"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/controller"
	"github.com/fjordhq/fjord/broker/metadata"
)

func (s *Server) handleAlterConfigs(ctx context.Context, r *kmsg.AlterConfigsRequest) *kmsg.AlterConfigsResponse {
	resp := r.ResponseKind().(*kmsg.AlterConfigsResponse)
	dup := duplicateResources(len(r.Resources), func(i int) (kmsg.ConfigResourceType, string) {
		return r.Resources[i].ResourceType, r.Resources[i].ResourceName
	})
	for i, rr := range r.Resources {
		res := kmsg.NewAlterConfigsResponseResource()
		res.ResourceType, res.ResourceName = rr.ResourceType, rr.ResourceName
		if dup[i] {
			res.ErrorCode, res.ErrorMessage = kerr.InvalidRequest.Code, ptr(duplicateResourceMsg)
			resp.Resources = append(resp.Resources, res)
			continue
		}
		err := s.alterConfigs(ctx, int8(rr.ResourceType), rr.ResourceName, r.ValidateOnly, func(map[string]string) (map[string]string, error) {
			next := map[string]string{}
			for _, c := range rr.Configs {
				if c.Value == nil {
					return nil, &controller.Error{Code: kerr.InvalidRequest, Message: "Null value not supported for : " + c.Name}
				}
				next[c.Name] = *c.Value
			}
			return next, nil
		})
		if err != nil {
			res.ErrorCode, res.ErrorMessage = err.Code.Code, ptr(err.Message)
		}
		resp.Resources = append(resp.Resources, res)
	}
	return resp
}

func (s *Server) handleIncrementalAlterConfigs(ctx context.Context, r *kmsg.IncrementalAlterConfigsRequest) *kmsg.IncrementalAlterConfigsResponse {
	resp := r.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
	dup := duplicateResources(len(r.Resources), func(i int) (kmsg.ConfigResourceType, string) {
		return r.Resources[i].ResourceType, r.Resources[i].ResourceName
	})
	for i, rr := range r.Resources {
		res := kmsg.NewIncrementalAlterConfigsResponseResource()
		res.ResourceType, res.ResourceName = rr.ResourceType, rr.ResourceName
		if dup[i] {
			res.ErrorCode, res.ErrorMessage = kerr.InvalidRequest.Code, ptr(duplicateResourceMsg)
			resp.Resources = append(resp.Resources, res)
			continue
		}
		typ := int8(rr.ResourceType)
		err := s.alterConfigs(ctx, typ, rr.ResourceName, r.ValidateOnly, func(current map[string]string) (map[string]string, error) {
			return s.cfg.Topics.ApplyIncrementalAlter(typ, maps.Clone(current), rr.Configs)
		})
		if err != nil {
			res.ErrorCode, res.ErrorMessage = err.Code.Code, ptr(err.Message)
		}
		resp.Resources = append(resp.Resources, res)
	}
	return resp
}

func (s *Server) alterConfigs(ctx context.Context, typ int8, name string, validateOnly bool, mutate func(map[string]string) (map[string]string, error)) *controller.Error {
	switch typ {
	case metadata.ResourceTopic:
	case metadata.ResourceBroker:
		id, ok := s.brokerResource(name)
		if n, err := strconv.ParseInt(name, 10, 32); !ok && s.cluster != nil && err == nil && n >= 0 {
			// In a cluster this also runs on the active controller for
			// requests forwarded by the broker they name: Kafka checks the
			// id on the receiving broker only, never on the controller.
			id, ok = int32(n), true
		}
		if !ok {
			return &controller.Error{Code: kerr.InvalidRequest, Message: "Unexpected broker id, expected " + itoa(s.cfg.NodeID) + " or empty string, but received " + name}
		}
		if id < 0 {
			name = ""
		}
	default:
		return &controller.Error{Code: kerr.InvalidRequest, Message: "Unsupported resource type"}
	}
	err := s.ctrl.AlterConfigs(ctx, metadata.ConfigResource{Type: typ, Name: name}, mutate, validateOnly)
	if err == nil && !validateOnly {
		s.log.Info("altered configs", "resource", name, "type", typ)
	}
	return err
}

const duplicateResourceMsg = "Each resource must appear at most once."

// duplicateResources marks resources named more than once in one request:
// Kafka refuses all of their entries.
func duplicateResources(n int, at func(int) (kmsg.ConfigResourceType, string)) []bool {
	type key struct {
		t    kmsg.ConfigResourceType
		name string
	}
	count := map[key]int{}
	for i := 0; i < n; i++ {
		t, name := at(i)
		count[key{t, name}]++
	}
	out := make([]bool, n)
	for i := range out {
		t, name := at(i)
		out[i] = count[key{t, name}] > 1
	}
	return out
}
