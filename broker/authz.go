package broker

// Authorization of client requests, as Kafka's KafkaApis does it: each
// API key has a rule (authzRules) naming the operation and resource it
// checks. A rule either refuses the whole request (the answer Kafka gives
// then), or removes the entities the principal may not touch from the
// request, lets the handler (or the active controller, for forwarded admin
// requests) answer the rest, and adds the refused entities' errors to the
// answer. Forwarded requests are authorized here, on the broker the client
// is connected to: the controller listener runs them as sent.
//
// Without authorizer.class.name, s.authz is nil and Handle skips all of
// this. With it, each topic, group or resource named in a request is
// checked once per request, never per record or per partition.

import (
	"net"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/auth"
	"github.com/fjordhq/fjord/broker/metadata"
	"github.com/fjordhq/fjord/broker/protocol"
)

// clusterResource is the name of Kafka's one CLUSTER resource.
const clusterResource = "kafka-cluster"

// authzReq is one request's authorization context.
type authzReq struct {
	s    *Server
	az   auth.Authorizer
	p    auth.Principal
	host string
}

// authzRule authorizes a request. It returns a complete answer when the
// whole request is refused; otherwise it may trim req in place and return
// post, which adds the refused entities to the handler's answer.
type authzRule func(a *authzReq, req kmsg.Request) (deny *protocol.Response, post func(kmsg.Response))

// authorize applies the request's rule. A key without a rule is refused
// outright (the table test keeps that from happening).
func (s *Server) authorize(c *protocol.Conn, req *protocol.Request) (*protocol.Response, func(kmsg.Response)) {
	rule, ok := authzRules[req.Key]
	if !ok {
		s.log.Error("no authorization rule for API; refusing it", "key", req.Key)
		return &protocol.Response{None: true, Close: true}, nil
	}
	a := &authzReq{s: s, az: s.authz, p: c.Principal()}
	if ta, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		a.host = ta.IP.String()
	}
	return rule(a, req.Body)
}

func (a *authzReq) allowed(op auth.Operation, rt auth.ResourceType, name string) bool {
	return a.az.Authorize(a.p, a.host, []auth.Action{{Operation: op, ResourceType: rt, ResourceName: name}})[0]
}

func (a *authzReq) cluster(op auth.Operation) bool {
	return a.allowed(op, auth.ResourceCluster, clusterResource)
}

// allowedNames authorizes op on each distinct name in one call.
func (a *authzReq) allowedNames(op auth.Operation, rt auth.ResourceType, names []string) map[string]bool {
	seen := make(map[string]bool, len(names))
	actions := make([]auth.Action, 0, len(names))
	for _, n := range names {
		if _, ok := seen[n]; !ok {
			seen[n] = false
			actions = append(actions, auth.Action{Operation: op, ResourceType: rt, ResourceName: n})
		}
	}
	for i, ok := range a.az.Authorize(a.p, a.host, actions) {
		seen[actions[i].ResourceName] = ok
	}
	return seen
}

// Operations Kafka reports in authorized-operation bitfields, by resource
// type (AclEntry.supportedOperations).
var supportedOps = map[auth.ResourceType][]auth.Operation{
	auth.ResourceTopic:   {auth.OpRead, auth.OpWrite, auth.OpCreate, auth.OpDescribe, auth.OpDelete, auth.OpAlter, auth.OpDescribeConfigs, auth.OpAlterConfigs},
	auth.ResourceGroup:   {auth.OpRead, auth.OpDescribe, auth.OpDelete},
	auth.ResourceCluster: {auth.OpCreate, auth.OpClusterAction, auth.OpDescribeConfigs, auth.OpAlterConfigs, auth.OpIdempotentWrite, auth.OpAlter, auth.OpDescribe},
}

// authorizedOps is the bitfield of the operations p may do on a resource.
func (a *authzReq) authorizedOps(rt auth.ResourceType, name string) int32 {
	ops := supportedOps[rt]
	actions := make([]auth.Action, len(ops))
	for i, op := range ops {
		actions[i] = auth.Action{Operation: op, ResourceType: rt, ResourceName: name}
	}
	var bits int32
	for i, ok := range a.az.Authorize(a.p, a.host, actions) {
		if ok {
			bits |= 1 << ops[i]
		}
	}
	return bits
}

// anyTopicAllowed is Kafka's authorizeByResourceType(op, TOPIC): whether
// some ALLOW ACL for p on a topic pattern grants op (or ALL) and is not
// overridden by a DENY on that pattern. Super users pass via the cluster
// check done first by the caller; allow.everyone.if.no.acl.found is
// honoured by checking the pattern through the authorizer.
func (a *authzReq) anyTopicAllowed(op auth.Operation) bool {
	for _, e := range a.s.image().ACLList() {
		acl := e.ACL
		if acl.ResourceType != auth.ResourceTopic || acl.Permission != auth.PermissionAllow ||
			(acl.Operation != op && acl.Operation != auth.OpAll) ||
			(acl.Principal != a.p.String() && acl.Principal != "User:*") ||
			(acl.Host != "*" && acl.Host != a.host) {
			continue
		}
		if a.allowed(op, auth.ResourceTopic, acl.ResourceName) {
			return true
		}
	}
	return false
}

func errMsg(e *kerr.Error) *string { return kmsg.StringPtr(e.Description) }

var (
	errTopicAuth   = kerr.TopicAuthorizationFailed
	errGroupAuth   = kerr.GroupAuthorizationFailed
	errClusterAuth = kerr.ClusterAuthorizationFailed
	errTxnAuth     = kerr.TransactionalIDAuthorizationFailed
)

func answer(m kmsg.Response) *protocol.Response { return &protocol.Response{Msg: m} }

// topicName resolves a topic named by name, or (v13+ style) by id.
func topicName(img *metadata.Image, name string, id [16]byte, byID bool) (string, bool) {
	if !byID {
		return name, true
	}
	if t := img.TopicsByID[metadata.UUID(id)]; t != nil {
		return t.Name, true
	}
	return "", false // unknown id: the handler answers UNKNOWN_TOPIC_ID
}

// none is the rule of APIs Kafka does not authorize (ApiVersions, SASL).
func none(*authzReq, kmsg.Request) (*protocol.Response, func(kmsg.Response)) { return nil, nil }

// clusterOp refuses the whole request unless p has op on the CLUSTER;
// refuse builds the API's refusal.
func clusterOp(op auth.Operation, refuse func(kmsg.Request) kmsg.Response) authzRule {
	return func(a *authzReq, req kmsg.Request) (*protocol.Response, func(kmsg.Response)) {
		if a.cluster(op) {
			return nil, nil
		}
		return answer(refuse(req)), nil
	}
}

// groupOp refuses the whole request unless p has op on the group.
func groupOp(op auth.Operation, group func(kmsg.Request) string, refuse func(kmsg.Request) kmsg.Response) authzRule {
	return func(a *authzReq, req kmsg.Request) (*protocol.Response, func(kmsg.Response)) {
		if a.allowed(op, auth.ResourceGroup, group(req)) {
			return nil, nil
		}
		return answer(refuse(req)), nil
	}
}
