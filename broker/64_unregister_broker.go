package broker

// UnregisterBroker (v0): remove a broker's registration from the cluster
// (`kafka-cluster.sh unregister`, `fjord cluster remove-broker`). Kafka
// brokers forward it to the active controller, which serves it
// (controller.ServeControllerRequest); so does Fjord: an active combined
// node answers from its quorum, any other node forwards. A single node
// has no controller quorum: its only broker is itself, which would
// register again at once, so it refuses.

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/controller"
)

func (s *Server) handleUnregisterBroker(ctx context.Context, r *kmsg.UnregisterBrokerRequest) kmsg.Response {
	resp := r.ResponseKind().(*kmsg.UnregisterBrokerResponse)
	fail := func(code int16, msg string) kmsg.Response {
		resp.ErrorCode, resp.ErrorMessage = code, &msg
		return resp
	}
	if cl := s.cluster; cl != nil && cl.quorum != nil && cl.quorum.IsActive() {
		if out, ok := controller.ServeControllerRequest(ctx, cl.quorum, r); ok {
			return out
		}
	}
	if s.link != nil {
		out, err := s.link.Forward(ctx, r)
		if err != nil {
			s.log.Warn("forwarding to the active controller failed", "api", "UnregisterBroker", "err", err)
			return fail(kerr.NotController.Code, "forwarding to the active controller failed: "+err.Error())
		}
		return out
	}
	if s.image().Brokers[r.BrokerID] == nil {
		return fail(kerr.BrokerIDNotRegistered.Code, fmt.Sprintf("Broker ID %d is not currently registered", r.BrokerID))
	}
	return fail(kerr.InvalidRequest.Code, "this is a single-node broker: it cannot unregister itself")
}
