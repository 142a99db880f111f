package broker

// AlterUserScramCredentials, v0: the client sends each upsertion's salt
// and salted password (never the password); the controller derives the
// stored and server keys and stores them in the metadata log (Kafka's
// ScramControlManager, with its errors: UNACCEPTABLE_CREDENTIAL for
// iterations outside 4096..16384 or an empty name,
// UNSUPPORTED_SASL_MECHANISM, RESOURCE_NOT_FOUND for deleting a missing
// credential, DUPLICATE_RESOURCE for a user named twice). A non-controller
// forwards the request to the active controller.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/auth"
	"github.com/fjordhq/fjord/broker/controller"
)

func (s *Server) handleAlterUserSCRAMCredentials(ctx context.Context, r *kmsg.AlterUserSCRAMCredentialsRequest) *kmsg.AlterUserSCRAMCredentialsResponse {
	resp := r.ResponseKind().(*kmsg.AlterUserSCRAMCredentialsResponse)
	c := s.securityController()
	if c == nil {
		out, _ := securityErrorResponse(r, kerr.NotController.Code, "no active controller")
		return out.(*kmsg.AlterUserSCRAMCredentialsResponse)
	}
	dels := make([]controller.ScramDeletion, len(r.Deletions))
	for i, d := range r.Deletions {
		dels[i] = controller.ScramDeletion{Name: d.Name, Mechanism: auth.ScramMechanism(d.Mechanism)}
	}
	ups := make([]controller.ScramUpsertion, len(r.Upsertions))
	for i, u := range r.Upsertions {
		ups[i] = controller.ScramUpsertion{Name: u.Name, Mechanism: auth.ScramMechanism(u.Mechanism),
			Iterations: u.Iterations, Salt: u.Salt, SaltedPassword: u.SaltedPassword}
	}
	for _, res := range c.AlterScram(ctx, dels, ups) {
		out := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
		out.User = res.User
		if res.Err != nil {
			out.ErrorCode, out.ErrorMessage = res.Err.Code.Code, &res.Err.Message
		} else {
			// Never log the salt or keys; who changed is enough.
			s.log.Info("altered SCRAM credentials", "user", res.User)
		}
		resp.Results = append(resp.Results, out)
	}
	return resp
}
