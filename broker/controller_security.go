package broker

// Security of the controller listener. Its security protocol comes from
// listener.security.protocol.map like any listener's; TLS wraps the whole
// port (controller.MuxListenerWith completes the handshake before it tells
// raft from the Kafka protocol), and SASL authenticates both halves: the
// Kafka half as any SASL listener does, the raft half with the same
// mechanisms before raft reads a byte (protocol.AuthenticateStream).
//
// With an authorizer, the controller checks what Kafka's ControllerApis
// check: the controller APIs (registration, heartbeats, AlterPartition,
// the metadata log) need CLUSTER_ACTION on the cluster, as does a raft
// peer; admin requests sent to the controller listener — a broker
// forwarding its client's request, or a client given the controllers'
// addresses — are authorized as the connection's principal with the same
// rules as on a broker listener. A broker authorizes its client before
// forwarding, so forwarding needs the broker's principal to be a super
// user (or allowed CLUSTER_ACTION and the admin operations), exactly as
// Kafka's brokers need for the controller's Envelope check; with a
// PLAINTEXT controller listener that principal is User:ANONYMOUS.

import (
	"crypto/tls"
	"fmt"
	"net"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/auth"
	"github.com/fjordhq/fjord/broker/authorizer"
	"github.com/fjordhq/fjord/broker/config"
	"github.com/fjordhq/fjord/broker/controller"
	"github.com/fjordhq/fjord/broker/metadata"
	"github.com/fjordhq/fjord/broker/protocol"
)

// checkControllerPrincipal refuses to start with an authorizer that
// would refuse this node's own controller connections: raft peers and
// brokers need CLUSTER_ACTION before any ACL can be read from the
// metadata log, so only super.users (or allow.everyone.if.no.acl.found)
// can grant it. Without the check the quorum would never form and the
// node would wait for minutes before failing.
func checkControllerPrincipal(props map[string]string, b *config.Broker, saslUser string) error {
	az, err := authorizer.FromProperties(props, metadata.Empty)
	if err != nil || az == nil || len(b.ControllerListenerNames) == 0 {
		return err
	}
	name, proto := b.ControllerListenerNames[0], controllerProtocol(b)
	p := auth.Anonymous
	switch proto {
	case "SASL_PLAINTEXT", "SASL_SSL":
		p = auth.User(saslUser)
	case "SSL":
		if newListenerProps(props, name).withDefault("ssl.client.auth", "none") != "none" {
			return nil // the certificate names the principal
		}
	}
	if az.Authorize(p, "", []auth.Action{{Operation: auth.OpClusterAction, ResourceType: auth.ResourceCluster, ResourceName: clusterResource}})[0] {
		return nil
	}
	return fmt.Errorf("the authorizer would refuse this node's own controller traffic: it connects to the %s controller listener %s as %s, which needs CLUSTER_ACTION on the cluster before any ACL is readable; add %s to super.users",
		proto, name, p, p)
}

// controllerMuxOptions secures the controller listener's two halves.
func (s *Server) controllerMuxOptions() controller.MuxOptions {
	sec := s.cfg.Cluster.ControllerSecurity
	var o controller.MuxOptions
	if sec != nil {
		o.TLS = sec.TLS
	}
	if sec != nil && sec.SASL != nil || s.authz != nil {
		o.AuthenticateRaft = func(nc net.Conn) error { return s.admitRaftPeer(nc, sec) }
	}
	return o
}

// admitRaftPeer authenticates a raft connection (its certificate, then
// SASL on a SASL listener) and, with an authorizer, checks that its
// principal may act as a controller.
func (s *Server) admitRaftPeer(nc net.Conn, sec *protocol.Security) error {
	p := auth.Anonymous
	if tc, ok := nc.(*tls.Conn); ok {
		var err error
		if p, err = protocol.TLSPrincipal(sec, tc.ConnectionState()); err != nil {
			s.log.Warn("raft connection refused: its certificate maps to no principal (ssl.principal.mapping.rules)", "remote", nc.RemoteAddr().String(), "err", err)
			return err
		}
	}
	if sec != nil && sec.SASL != nil {
		var err error
		if p, err = protocol.AuthenticateStream(nc, sec.SASL); err != nil {
			s.log.Warn("raft connection refused: SASL authentication failed", "remote", nc.RemoteAddr().String(), "err", err)
			return err
		}
	}
	if s.authz != nil && !s.clusterAllowed(p, nc.RemoteAddr(), auth.OpClusterAction) {
		s.log.Warn("raft connection refused: the principal may not act as a controller (add it to super.users or allow it CLUSTER_ACTION on the cluster)",
			"principal", p.String(), "remote", nc.RemoteAddr().String())
		return fmt.Errorf("%s is not allowed CLUSTER_ACTION", p)
	}
	return nil
}

func (s *Server) clusterAllowed(p auth.Principal, addr net.Addr, op auth.Operation) bool {
	host := ""
	if ta, ok := addr.(*net.TCPAddr); ok {
		host = ta.IP.String()
	}
	return s.authz.Authorize(p, host, []auth.Action{{Operation: op, ResourceType: auth.ResourceCluster, ResourceName: clusterResource}})[0]
}

// controllerAPIOperation is the cluster operation Kafka's ControllerApis
// checks for each controller API.
func controllerAPIOperation(key int16) (auth.Operation, bool) {
	switch kmsg.Key(key) {
	case kmsg.BrokerRegistration, kmsg.BrokerHeartbeat, kmsg.AlterPartition,
		kmsg.AllocateProducerIDs, kmsg.FetchSnapshot, kmsg.Fetch:
		return auth.OpClusterAction, true
	case kmsg.DescribeQuorum:
		return auth.OpDescribe, true
	case kmsg.UnregisterBroker:
		return auth.OpAlter, true
	}
	return 0, false
}

// authorizeControllerAPI refuses a controller API request whose principal
// lacks the cluster operation it needs, with CLUSTER_AUTHORIZATION_FAILED
// in the response's error code; nil when allowed (or not a controller API).
func (s *Server) authorizeControllerAPI(c *protocol.Conn, req *protocol.Request) *protocol.Response {
	op, ok := controllerAPIOperation(req.Key)
	if !ok || s.clusterAllowed(c.Principal(), c.RemoteAddr(), op) {
		return nil
	}
	s.log.Warn("controller request refused: principal lacks the cluster permission",
		"api", kmsg.NameForKey(req.Key), "principal", c.Principal().String(), "operation", op.String(), "remote", c.RemoteAddr().String())
	code := kerr.ClusterAuthorizationFailed.Code
	resp := req.Body.ResponseKind()
	switch r := resp.(type) {
	case *kmsg.BrokerRegistrationResponse:
		r.ErrorCode = code
	case *kmsg.BrokerHeartbeatResponse:
		r.ErrorCode = code
	case *kmsg.AlterPartitionResponse:
		r.ErrorCode = code
	case *kmsg.AllocateProducerIDsResponse:
		r.ErrorCode = code
	case *kmsg.DescribeQuorumResponse:
		r.ErrorCode = code
	case *kmsg.FetchSnapshotResponse:
		r.ErrorCode = code
	case *kmsg.FetchResponse:
		r.ErrorCode = code
	case *kmsg.UnregisterBrokerResponse:
		r.ErrorCode = code
	default:
		return &protocol.Response{None: true, Close: true}
	}
	return &protocol.Response{Msg: resp}
}
