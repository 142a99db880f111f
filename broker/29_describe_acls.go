package broker

// DescribeAcls, v1-v3, answered from this broker's metadata image (Kafka's
// brokers answer from their authorizer's copy of the metadata log). The
// filter's MATCH pattern type selects every ACL that applies to the named
// resource: literal same name, literal "*", and prefixes of the name.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (s *Server) handleDescribeACLs(r *kmsg.DescribeACLsRequest) *kmsg.DescribeACLsResponse {
	resp := r.ResponseKind().(*kmsg.DescribeACLsResponse)
	resp.ErrorMessage = ptr("") // Kafka's default for a success
	if !s.authorizerEnabled() {
		resp.ErrorCode, resp.ErrorMessage = kerr.SecurityDisabled.Code, ptr("No Authorizer is configured on the broker")
		return resp
	}
	f := aclFilter(r.ResourceType, r.ResourceName, r.ResourcePatternType, r.Principal, r.Host, r.Operation, r.PermissionType)
	if f.PatternUnknown() || f.EntryUnknown() {
		// Kafka refuses such a filter while parsing the request.
		resp.ErrorCode, resp.ErrorMessage = kerr.InvalidRequest.Code, ptr("Filter contain UNKNOWN elements")
		return resp
	}
	// ACLList is sorted by resource pattern, so one pattern's ACLs are
	// consecutive: each run is one resource of the answer.
	for _, a := range s.image().ACLList() {
		if !f.Matches(a.ACL) {
			continue
		}
		n := len(resp.Resources)
		if n == 0 || resp.Resources[n-1].ResourceName != a.ResourceName ||
			resp.Resources[n-1].ResourceType != kmsg.ACLResourceType(a.ResourceType) ||
			resp.Resources[n-1].ResourcePatternType != kmsg.ACLResourcePatternType(a.PatternType) {
			res := kmsg.NewDescribeACLsResponseResource()
			res.ResourceType, res.ResourceName = kmsg.ACLResourceType(a.ResourceType), a.ResourceName
			res.ResourcePatternType = kmsg.ACLResourcePatternType(a.PatternType)
			resp.Resources = append(resp.Resources, res)
			n++
		}
		acl := kmsg.NewDescribeACLsResponseResourceACL()
		acl.Principal, acl.Host = a.Principal, a.Host
		acl.Operation, acl.PermissionType = kmsg.ACLOperation(a.Operation), kmsg.ACLPermissionType(a.Permission)
		resp.Resources[n-1].ACLs = append(resp.Resources[n-1].ACLs, acl)
	}
	return resp
}
