package controller

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// quorumUnregister is optionally implemented by a ControllerQuorum that
// can remove broker registrations (Quorum does). Without it
// UnregisterBroker answers UNSUPPORTED_VERSION, as a controller that does
// not know the API would.
type quorumUnregister interface {
	UnregisterBroker(ctx context.Context, id int32) *Error
}

var _ quorumUnregister = (*Quorum)(nil)

// serveUnregisterBroker answers UnregisterBroker (KRaft's
// ControllerApis.handleUnregisterBroker): on the active controller it
// removes the registration; elsewhere it answers NOT_CONTROLLER, which
// makes a forwarding broker look for the active one.
func serveUnregisterBroker(ctx context.Context, q ControllerQuorum, r *kmsg.UnregisterBrokerRequest) kmsg.Response {
	resp := r.ResponseKind().(*kmsg.UnregisterBrokerResponse)
	u, ok := q.(quorumUnregister)
	if !ok {
		resp.ErrorCode = kerr.UnsupportedVersion.Code
		return resp
	}
	if err := u.UnregisterBroker(ctx, r.BrokerID); err != nil {
		resp.ErrorCode = err.Code.Code
		if err.Message != "" {
			msg := err.Message
			resp.ErrorMessage = &msg
		}
	}
	return resp
}
