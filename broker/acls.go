package broker

// Shared by the ACL and SCRAM APIs (29-31, 50-51): whether an authorizer
// is configured, translation between kmsg and auth codes, and the answers
// a forwarded request gets when the controller cannot be reached.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/authorizer"
	"github.com/fjordhq/fjord/broker/controller"
	"github.com/fjordhq/fjord/broker/metadata"

	"github.com/fjordhq/fjord/broker/auth"
)

// authorizerEnabled reports whether authorizer.class.name names the
// standard authorizer: without one Kafka stores no ACLs and its ACL APIs
// answer SECURITY_DISABLED.
func (s *Server) authorizerEnabled() bool {
	on, _ := authorizer.Enabled(s.cfg.Cluster.StaticConfigs[authorizer.KeyClassName])
	return on
}

// securityController is where ACL and credential changes go: the active
// controller here, or nil (forwarded, or no controller).
func (s *Server) securityController() controller.SecurityController {
	c, _ := s.activeController().(controller.SecurityController)
	return c
}

func aclFilter(rt kmsg.ACLResourceType, name *string, pt kmsg.ACLResourcePatternType, principal, host *string, op kmsg.ACLOperation, perm kmsg.ACLPermissionType) metadata.ACLFilter {
	return metadata.ACLFilter{
		ResourceType: auth.ResourceType(rt), ResourceName: name, PatternType: auth.PatternType(pt),
		Principal: principal, Host: host, Operation: auth.Operation(op), Permission: auth.Permission(perm),
	}
}

// securityErrorResponse answers every entity of a forwarded security
// request with code (see adminErrorResponse).
func securityErrorResponse(req kmsg.Request, code int16, msg string) (kmsg.Response, bool) {
	m := &msg
	switch r := req.(type) {
	case *kmsg.CreateACLsRequest:
		resp := r.ResponseKind().(*kmsg.CreateACLsResponse)
		for range r.Creations {
			res := kmsg.NewCreateACLsResponseResult()
			res.ErrorCode, res.ErrorMessage = code, m
			resp.Results = append(resp.Results, res)
		}
		return resp, true
	case *kmsg.DeleteACLsRequest:
		resp := r.ResponseKind().(*kmsg.DeleteACLsResponse)
		for range r.Filters {
			res := kmsg.NewDeleteACLsResponseResult()
			res.ErrorCode, res.ErrorMessage = code, m
			resp.Results = append(resp.Results, res)
		}
		return resp, true
	case *kmsg.AlterUserSCRAMCredentialsRequest:
		resp := r.ResponseKind().(*kmsg.AlterUserSCRAMCredentialsResponse)
		seen := map[string]bool{}
		add := func(user string) {
			if !seen[user] {
				seen[user] = true
				res := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
				res.User, res.ErrorCode, res.ErrorMessage = user, code, m
				resp.Results = append(resp.Results, res)
			}
		}
		for _, d := range r.Deletions {
			add(d.Name)
		}
		for _, u := range r.Upsertions {
			add(u.Name)
		}
		return resp, true
	}
	return nil, false
}

// Image returns the metadata image this broker serves from now (tests,
// and the authorizer: authorizer.NewFromImage(s.Image, ...)).
func (s *Server) Image() *metadata.Image { return s.image() }

// ScramStore looks credentials up in the current image at each call, so
// SASL/SCRAM sees credential changes as soon as the broker applies them.
func (s *Server) ScramStore() auth.ScramStore { return imageScramStore(s.image) }

type imageScramStore func() *metadata.Image

func (f imageScramStore) ScramCredential(user string, mech auth.ScramMechanism) (auth.ScramCredential, bool) {
	return f().ScramCredential(user, mech)
}

// NewAuthorizer builds the authorizer this broker's properties ask for
// (authorizer.class.name, super.users, allow.everyone.if.no.acl.found)
// over its live metadata image, or nil when authorization is off.
// Enforcement in the API handlers is wired separately.
func (s *Server) NewAuthorizer() (auth.Authorizer, error) {
	return authorizer.FromProperties(s.cfg.Cluster.StaticConfigs, s.image)
}
