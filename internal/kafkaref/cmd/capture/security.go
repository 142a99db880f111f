package main

// Scenarios for the ACL and SCRAM credential APIs: "security" runs Kafka's
// StandardAuthorizer (the PLAINTEXT client is ANONYMOUS, made a super user
// so it may manage ACLs), "security-off" has no authorizer. Requests use
// fixed salts and salted passwords so the files are stable.

import (
	"bytes"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	scenarios = append(scenarios,
		scenario{name: "security", props: []string{
			"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
			"super.users=User:ANONYMOUS",
		}, steps: securitySteps},
		scenario{name: "security-off", steps: securityOffSteps},
	)
}

// GoldenSalt and goldenSalted are the credentials the captures upsert.
var (
	goldenSalt   = []byte("fjord-golden-salt")
	goldenSalted = bytes.Repeat([]byte{7}, 32)
)

func scramUpsert(name string, mech int8, iterations int32) kmsg.AlterUserSCRAMCredentialsRequestUpsertion {
	u := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
	u.Name, u.Mechanism, u.Iterations, u.Salt, u.SaltedPassword = name, mech, iterations, goldenSalt, goldenSalted
	return u
}

func scramDeletion(name string, mech int8) kmsg.AlterUserSCRAMCredentialsRequestDeletion {
	d := kmsg.NewAlterUserSCRAMCredentialsRequestDeletion()
	d.Name, d.Mechanism = name, mech
	return d
}

func scramDescribe(users ...string) *kmsg.DescribeUserSCRAMCredentialsRequest {
	r := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
	for _, u := range users {
		x := kmsg.NewDescribeUserSCRAMCredentialsRequestUser()
		x.Name = u
		r.Users = append(r.Users, x)
	}
	return r
}

func aclCreation(rt kmsg.ACLResourceType, name string, pt kmsg.ACLResourcePatternType, principal, host string, op kmsg.ACLOperation, perm kmsg.ACLPermissionType) kmsg.CreateACLsRequestCreation {
	c := kmsg.NewCreateACLsRequestCreation()
	c.ResourceType, c.ResourceName, c.ResourcePatternType = rt, name, pt
	c.Principal, c.Host, c.Operation, c.PermissionType = principal, host, op, perm
	return c
}

func aclDescribe(rt kmsg.ACLResourceType, name *string, pt kmsg.ACLResourcePatternType, principal *string) *kmsg.DescribeACLsRequest {
	r := kmsg.NewPtrDescribeACLsRequest()
	r.ResourceType, r.ResourceName, r.ResourcePatternType, r.Principal = rt, name, pt, principal
	r.Operation, r.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	return r
}

func aclDeleteFilter(rt kmsg.ACLResourceType, name *string, pt kmsg.ACLResourcePatternType, principal *string, op kmsg.ACLOperation) kmsg.DeleteACLsRequestFilter {
	f := kmsg.NewDeleteACLsRequestFilter()
	f.ResourceType, f.ResourceName, f.ResourcePatternType, f.Principal = rt, name, pt, principal
	f.Operation, f.PermissionType = op, kmsg.ACLPermissionTypeAny
	return f
}

const (
	topicRT, groupRT, clusterRT, anyRT = kmsg.ACLResourceTypeTopic, kmsg.ACLResourceTypeGroup, kmsg.ACLResourceTypeCluster, kmsg.ACLResourceTypeAny
	litPT, prePT, matchPT, anyPT       = kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLResourcePatternTypePrefixed, kmsg.ACLResourcePatternTypeMatch, kmsg.ACLResourcePatternTypeAny
	allowP, denyP                      = kmsg.ACLPermissionTypeAllow, kmsg.ACLPermissionTypeDeny
)

func securitySteps(s *session) error {
	upsert := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	upsert.Upsertions = append(upsert.Upsertions, scramUpsert("alice", 1, 8192), scramUpsert("bob", 2, 4096))

	mixed := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	mixed.Upsertions = append(mixed.Upsertions, scramUpsert("few", 1, 4095), scramUpsert("many", 1, 16385),
		scramUpsert("alice", 1, 4096), scramUpsert("", 1, 4096), scramUpsert("nomech", 3, 4096), scramUpsert("ok", 2, 16384))
	mixed.Deletions = append(mixed.Deletions, scramDeletion("alice", 1), scramDeletion("ghost", 1), scramDeletion("bob", 1))

	creates := kmsg.NewPtrCreateACLsRequest()
	creates.Creations = append(creates.Creations,
		aclCreation(topicRT, "orders", litPT, "User:alice", "*", kmsg.ACLOperationRead, allowP),
		aclCreation(topicRT, "pay", prePT, "User:etl", "10.1.2.3", kmsg.ACLOperationWrite, allowP),
		aclCreation(topicRT, "*", litPT, "User:mallory", "*", kmsg.ACLOperationAll, denyP),
		aclCreation(groupRT, "g", litPT, "User:alice", "*", kmsg.ACLOperationRead, allowP),
		aclCreation(clusterRT, "kafka-cluster", litPT, "User:ops", "*", kmsg.ACLOperationAlter, allowP),
		aclCreation(topicRT, "orders", litPT, "User:alice", "*", kmsg.ACLOperationRead, allowP), // again
		aclCreation(clusterRT, "c", litPT, "User:ops", "*", kmsg.ACLOperationAlter, allowP),
		aclCreation(topicRT, "", litPT, "User:alice", "*", kmsg.ACLOperationRead, allowP),
	)
	// One creation with a filter-only code (MATCH) fails the whole
	// request, the valid creation beside it included.
	poisoned := kmsg.NewPtrCreateACLsRequest()
	poisoned.Creations = append(poisoned.Creations,
		aclCreation(topicRT, "t", litPT, "User:alice", "*", kmsg.ACLOperationRead, allowP),
		aclCreation(topicRT, "t", matchPT, "User:alice", "*", kmsg.ACLOperationRead, allowP),
	)
	if err := s.steps(
		step{"acl_create_filter_code", "CreateAcls: a MATCH pattern in one creation fails every creation of the request", poisoned, -1},
		step{"scram_alter_upsert", "AlterUserScramCredentials: two valid upsertions", upsert, -1},
		step{"scram_alter_errors", "AlterUserScramCredentials: too few/many iterations, a user named twice, empty name, unknown mechanism, missing credentials, and one valid upsertion", mixed, -1},
		step{"acl_create", "CreateAcls: valid literal, prefixed, wildcard, group and cluster ACLs, a repeat, a CLUSTER not named kafka-cluster, an empty name", creates, -1},
	); err != nil {
		return err
	}
	// The broker's authorizer applies the controller's records a moment
	// after CreateAcls answers.
	if err := s.poll("ACLs visible", func() error {
		resp, err := s.request(aclDescribe(anyRT, nil, anyPT, nil), -1)
		if err != nil {
			return err
		}
		if n := len(resp.(*kmsg.DescribeACLsResponse).Resources); n != 5 {
			return fmt.Errorf("%d resources described, want 5", n)
		}
		return nil
	}); err != nil {
		return err
	}
	del := kmsg.NewPtrDeleteACLsRequest()
	del.Filters = append(del.Filters,
		aclDeleteFilter(anyRT, nil, anyPT, str("User:alice"), kmsg.ACLOperationAny),
		aclDeleteFilter(topicRT, str("payments"), matchPT, nil, kmsg.ACLOperationWrite),
		aclDeleteFilter(groupRT, nil, anyPT, str("User:nobody"), kmsg.ACLOperationAny),
	)
	return s.steps(
		step{"scram_describe", "DescribeUserScramCredentials: a user, an unknown user, a user named twice", scramDescribe("alice", "nobody", "bob", "bob"), -1},
		step{"scram_describe_all", "DescribeUserScramCredentials: every user", scramDescribe(), -1},
		step{"acl_describe_all", "DescribeAcls: every ACL, grouped by resource", aclDescribe(anyRT, nil, anyPT, nil), -1},
		step{"acl_describe_match", "DescribeAcls: MATCH for topic payments (prefixed pay, wildcard *)", aclDescribe(topicRT, str("payments"), matchPT, nil), -1},
		step{"acl_describe_literal", "DescribeAcls: LITERAL filter for topic orders (not the wildcard)", aclDescribe(topicRT, str("orders"), litPT, nil), -1},
		step{"acl_delete", "DeleteAcls: alice's ACLs, WRITE ACLs matching topic payments, a filter matching nothing", del, -1},
	)
}

func securityOffSteps(s *session) error {
	creates := kmsg.NewPtrCreateACLsRequest()
	creates.Creations = append(creates.Creations, aclCreation(topicRT, "orders", litPT, "User:alice", "*", kmsg.ACLOperationRead, allowP))
	del := kmsg.NewPtrDeleteACLsRequest()
	del.Filters = append(del.Filters, aclDeleteFilter(anyRT, nil, anyPT, nil, kmsg.ACLOperationAny))
	upsert := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	upsert.Upsertions = append(upsert.Upsertions, scramUpsert("alice", 1, 4096))
	return s.steps(
		step{"acl_create_disabled", "CreateAcls without authorizer.class.name", creates, -1},
		step{"acl_describe_disabled", "DescribeAcls without authorizer.class.name", aclDescribe(anyRT, nil, anyPT, nil), -1},
		step{"acl_delete_disabled", "DeleteAcls without authorizer.class.name", del, -1},
		step{"scram_alter_no_authorizer", "AlterUserScramCredentials needs no authorizer", upsert, -1},
	)
}
