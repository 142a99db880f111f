package broker

// CreateAcls, v1-v3 (Kafka 4 removed v0). Kafka's AclApis checks (the
// CLUSTER resource is named kafka-cluster, names are not empty), then the
// controller's AclControlManager validation; ACLs are stored in the
// metadata log. Without authorizer.class.name every creation fails with
// SECURITY_DISABLED, as Kafka's does. A creation using a filter-only
// code (ANY, MATCH) fails the whole request, as in Kafka.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/auth"
	"github.com/fjordhq/fjord/broker/controller"
)

// clusterResourceName is the only name of the CLUSTER resource.
const clusterResourceName = "kafka-cluster"

func (s *Server) handleCreateACLs(ctx context.Context, r *kmsg.CreateACLsRequest) *kmsg.CreateACLsResponse {
	resp := r.ResponseKind().(*kmsg.CreateACLsResponse)
	results := make([]kmsg.CreateACLsResponseResult, len(r.Creations))
	for i := range results {
		results[i] = kmsg.NewCreateACLsResponseResult()
		results[i].ErrorMessage = ptr("") // Kafka's default for a success
	}
	resp.Results = results
	fail := func(i int, code *kerr.Error, msg string) {
		results[i].ErrorCode, results[i].ErrorMessage = code.Code, &msg
	}
	if !s.authorizerEnabled() {
		for i := range results {
			fail(i, kerr.SecurityDisabled, "No Authorizer is configured.")
		}
		return resp
	}
	// Kafka builds every creation's AclBinding before validating any, and
	// ResourcePattern/AccessControlEntry refuse the filter-only codes: one
	// such creation fails the whole request with UNKNOWN_SERVER_ERROR
	// (Kafka 4.4 answers so, without a message; we say which).
	for _, c := range r.Creations {
		if msg := filterOnlyCode(c); msg != "" {
			for i := range results {
				fail(i, kerr.UnknownServerError, msg)
			}
			return resp
		}
	}
	var acls []auth.ACL
	var idx []int
	for i, c := range r.Creations {
		acl := auth.ACL{
			ResourceType: auth.ResourceType(c.ResourceType), ResourceName: c.ResourceName,
			PatternType: auth.PatternType(c.ResourcePatternType), Principal: c.Principal, Host: c.Host,
			Operation: auth.Operation(c.Operation), Permission: auth.Permission(c.PermissionType),
		}
		switch {
		case acl.ResourceType == auth.ResourceCluster && acl.ResourceName != clusterResourceName:
			fail(i, kerr.InvalidRequest, "The only valid name for the CLUSTER resource is "+clusterResourceName)
			continue
		case acl.ResourceName == "":
			fail(i, kerr.InvalidRequest, "Invalid empty resource name")
			continue
		}
		acls = append(acls, acl)
		idx = append(idx, i)
	}
	if len(acls) == 0 {
		return resp
	}
	c := s.securityController()
	if c == nil {
		for _, i := range idx {
			fail(i, kerr.NotController, "no active controller")
		}
		return resp
	}
	errs := c.CreateACLs(ctx, acls)
	for j, i := range idx {
		if e := errs[j]; e != nil {
			fail(i, e.Code, e.Message)
		}
	}
	if n := countNil(errs); n > 0 {
		s.log.Info("created ACLs", "count", n)
	}
	return resp
}

func countNil(errs []*controller.Error) int {
	n := 0
	for _, e := range errs {
		if e == nil {
			n++
		}
	}
	return n
}

// filterOnlyCode names a code of c that only filters may use, as the
// exception Kafka's constructors throw, or returns "".
func filterOnlyCode(c kmsg.CreateACLsRequestCreation) string {
	switch {
	case c.ResourceType == kmsg.ACLResourceTypeAny:
		return "resourceType must not be ANY"
	case c.ResourcePatternType == kmsg.ACLResourcePatternTypeMatch || c.ResourcePatternType == kmsg.ACLResourcePatternTypeAny:
		return "patternType must not be " + auth.PatternType(c.ResourcePatternType).String()
	case c.Operation == kmsg.ACLOperationAny:
		return "operation must not be ANY"
	case c.PermissionType == kmsg.ACLPermissionTypeAny:
		return "permissionType must not be ANY"
	}
	return ""
}
