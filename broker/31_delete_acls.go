package broker

// DeleteAcls, v1-v3: every filter answers the ACLs it matched and
// removed (Kafka's AclControlManager.deleteAcls); all removals of one
// request are one metadata change. Without authorizer.class.name every
// filter fails with SECURITY_DISABLED.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/auth"
	"github.com/fjordhq/fjord/broker/metadata"
)

func (s *Server) handleDeleteACLs(ctx context.Context, r *kmsg.DeleteACLsRequest) *kmsg.DeleteACLsResponse {
	resp := r.ResponseKind().(*kmsg.DeleteACLsResponse)
	fail := func(code *kerr.Error, msg string) *kmsg.DeleteACLsResponse {
		resp, _ := securityErrorResponse(r, code.Code, msg)
		return resp.(*kmsg.DeleteACLsResponse)
	}
	if !s.authorizerEnabled() {
		return fail(kerr.SecurityDisabled, "No Authorizer is configured.")
	}
	c := s.securityController()
	if c == nil {
		return fail(kerr.NotController, "no active controller")
	}
	filters := make([]metadata.ACLFilter, len(r.Filters))
	for i, f := range r.Filters {
		filters[i] = aclFilter(f.ResourceType, f.ResourceName, f.ResourcePatternType, f.Principal, f.Host, f.Operation, f.PermissionType)
	}
	total := 0
	for _, res := range c.DeleteACLs(ctx, filters) {
		fr := kmsg.NewDeleteACLsResponseResult()
		if res.Err != nil {
			fr.ErrorCode, fr.ErrorMessage = res.Err.Code.Code, &res.Err.Message
		}
		for _, a := range res.Deleted {
			fr.MatchingACLs = append(fr.MatchingACLs, matchingACL(a))
		}
		total += len(res.Deleted)
		resp.Results = append(resp.Results, fr)
	}
	if total > 0 {
		s.log.Info("deleted ACLs", "count", total)
	}
	return resp
}

func matchingACL(a auth.ACL) kmsg.DeleteACLsResponseResultMatchingACL {
	m := kmsg.NewDeleteACLsResponseResultMatchingACL()
	m.ResourceType, m.ResourceName = kmsg.ACLResourceType(a.ResourceType), a.ResourceName
	m.ResourcePatternType = kmsg.ACLResourcePatternType(a.PatternType)
	m.Principal, m.Host = a.Principal, a.Host
	m.Operation, m.PermissionType = kmsg.ACLOperation(a.Operation), kmsg.ACLPermissionType(a.Permission)
	return m
}
