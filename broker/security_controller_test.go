package broker_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/fjordhq/fjord/broker"
	"github.com/fjordhq/fjord/broker/controller"
	"github.com/fjordhq/fjord/broker/wire"
	"github.com/fjordhq/fjord/internal/testkit"
)

// A cluster whose controller listener runs SASL_SSL with an authorizer:
// raft and the brokers' controller traffic go over TLS with SASL PLAIN
// as the super user (the quorum forms and brokers register), admin
// requests forwarded by a broker succeed for an allowed client, and the
// controller listener itself refuses what the principal may not do —
// a client that reaches the controllers directly gets no more than on a
// broker listener, and a raft connection needs valid credentials and
// CLUSTER_ACTION.
func TestControllerListenerSASLSSL(t *testing.T) {
	pki := newTestPKI(t)
	c := testkit.StartInProcCluster(t, 3, map[string]string{
		"listener.security.protocol.map":                   "PLAINTEXT:SASL_SSL,CONTROLLER:SASL_SSL",
		"ssl.keystore.type":                                "PEM",
		"ssl.keystore.location":                            pki.Server,
		"ssl.truststore.type":                              "PEM",
		"ssl.truststore.location":                          pki.CA,
		"sasl.enabled.mechanisms":                          "PLAIN",
		"sasl.mechanism.inter.broker.protocol":             "PLAIN",
		"sasl.mechanism.controller.protocol":               "PLAIN",
		"listener.name.plaintext.plain.sasl.jaas.config":   plainJAAS,
		"listener.name.controller.plain.sasl.jaas.config":  plainJAAS,
		"authorizer.class.name":                            "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users":                                      "User:admin",
		"allow.everyone.if.no.acl.found":                   "false",
		"listener.name.controller.sasl.enabled.mechanisms": "PLAIN",
	})
	ctx := testkit.Context(t, 90*time.Second)
	tlsCfg := clientTLS(t, pki, false)
	dial := func(addr, user, pass string) *wire.Conn {
		t.Helper()
		d := &wire.Dialer{TLS: tlsCfg, SASL: plain.Auth{User: user, Pass: pass}.AsMechanism()}
		cn, err := d.Dial(ctx, addr, "security-controller-test")
		if err != nil {
			t.Fatalf("dial %s as %s: %v", addr, user, err)
		}
		t.Cleanup(func() { cn.Close() })
		return cn
	}
	createTopic := func(cn *wire.Conn, name string) int16 {
		t.Helper()
		req := kmsg.NewPtrCreateTopicsRequest()
		req.SetVersion(7)
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, 1, 3
		req.Topics = append(req.Topics, rt)
		req.TimeoutMillis = 30000
		resp, err := cn.Request(ctx, req)
		if err != nil {
			t.Fatalf("CreateTopics %s: %v", name, err)
		}
		return resp.(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode
	}

	// Through every broker: at least two of them forward to the active
	// controller, which authorizes the forwarding broker's principal.
	for i, n := range c.Nodes {
		name := "admin-topic-" + string(rune('a'+i))
		if code := createTopic(dial(n.Addr, "admin", "admin-secret"), name); code != 0 {
			t.Fatalf("CreateTopics by the super user through node %d: %v", n.ID, kerr.ErrorForCode(code))
		}
		if code := createTopic(dial(n.Addr, "alice", "alice-secret"), name+"-alice"); code != kerr.TopicAuthorizationFailed.Code {
			t.Fatalf("CreateTopics by alice (no ACL) through node %d: %v, want TOPIC_AUTHORIZATION_FAILED", n.ID, kerr.ErrorForCode(code))
		}
	}

	// Straight to the active controller's listener.
	active := activeController(t, ctx, c, &wire.Dialer{TLS: tlsCfg, SASL: plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism()})
	if code := createTopic(dial(active.CtrlAddr, "alice", "alice-secret"), "alice-direct"); code != kerr.TopicAuthorizationFailed.Code {
		t.Fatalf("CreateTopics sent by alice to the controller listener: %v, want TOPIC_AUTHORIZATION_FAILED", kerr.ErrorForCode(code))
	}
	if code := createTopic(dial(active.CtrlAddr, "admin", "admin-secret"), "admin-direct"); code != 0 {
		t.Fatalf("CreateTopics sent by the super user to the controller listener: %v", kerr.ErrorForCode(code))
	}
	reg := kmsg.NewPtrBrokerRegistrationRequest()
	reg.SetVersion(4)
	reg.BrokerID, reg.ClusterID = 99, "whatever"
	resp, err := dial(active.CtrlAddr, "alice", "alice-secret").Request(ctx, reg)
	if err != nil {
		t.Fatal(err)
	}
	if code := resp.(*kmsg.BrokerRegistrationResponse).ErrorCode; code != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("BrokerRegistration by alice: %v, want CLUSTER_AUTHORIZATION_FAILED", kerr.ErrorForCode(code))
	}
	if _, err := (&wire.Dialer{TLS: tlsCfg, SASL: plain.Auth{User: "alice", Pass: "wrong"}.AsMechanism()}).Dial(ctx, active.CtrlAddr, "x"); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("wrong password on the controller listener: %v, want SASL_AUTHENTICATION_FAILED", err)
	}

	// Plain TCP on a TLS controller listener gets nothing back.
	raw, err := net.Dial("tcp", active.CtrlAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	apiVersions := []byte{0, 0, 0, 14, 0, 18, 0, 0, 0, 0, 0, 1, 0, 4, 't', 'e', 's', 't'}
	raw.Write(apiVersions)
	raw.SetReadDeadline(time.Now().Add(15 * time.Second))
	if n, err := raw.Read(make([]byte, 64)); err == nil {
		t.Fatalf("a plaintext ApiVersions on the SASL_SSL controller listener got %d bytes back", n)
	}

	// Raft: TLS, the magic, then SASL before raft reads a byte.
	raftDial := func(user, pass string) (net.Conn, error) {
		nc, err := tls.Dial("tcp", active.CtrlAddr, tlsCfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		var magic [4]byte
		binary.BigEndian.PutUint32(magic[:], controller.RaftMagic)
		nc.Write(magic[:])
		actx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		return nc, wire.AuthenticateStream(actx, nc, plain.Auth{User: user, Pass: pass}.AsMechanism(), "127.0.0.1")
	}
	if _, err := raftDial("admin", "wrong"); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("raft connection with a wrong password: %v, want SASL_AUTHENTICATION_FAILED", err)
	}
	nc, err := raftDial("alice", "alice-secret")
	if err != nil {
		t.Fatalf("alice's SASL exchange on the raft half: %v", err)
	}
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := nc.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("raft connection of alice (no CLUSTER_ACTION): read %v, want the controller to close it", err)
	}
	nc, err = raftDial("admin", "admin-secret")
	if err != nil {
		t.Fatalf("the super user's SASL exchange on the raft half: %v", err)
	}
	nc.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := nc.Read(make([]byte, 1)); !isTimeout(err) {
		t.Fatalf("raft connection of the super user: read %v, want it kept open for raft", err)
	}
}

// An SSL controller listener with ssl.client.auth=required: the nodes
// authenticate with their certificate (a super user), a client
// certificate of another subject may connect but not act as a broker or
// a raft peer, and a client without a certificate is refused.
func TestControllerListenerMutualTLS(t *testing.T) {
	pki := newTestPKI(t)
	c := testkit.StartInProcCluster(t, 3, map[string]string{
		"listener.security.protocol.map":           "PLAINTEXT:PLAINTEXT,CONTROLLER:SSL",
		"listener.name.controller.ssl.client.auth": "required",
		"ssl.keystore.type":                        "PEM",
		"ssl.keystore.location":                    pki.Server,
		"ssl.truststore.type":                      "PEM",
		"ssl.truststore.location":                  pki.CA,
		"authorizer.class.name":                    "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		// The nodes' own certificate; clients of the PLAINTEXT listener
		// are ANONYMOUS and may do what the ACLs allow (none here).
		"super.users": "User:CN=localhost,O=Fjord",
	})
	ctx := testkit.Context(t, 90*time.Second)
	active := activeController(t, ctx, c, &wire.Dialer{TLS: clientTLS(t, pki, true)})

	alice := &wire.Dialer{TLS: clientTLS(t, pki, true)}
	cn, err := alice.Dial(ctx, active.CtrlAddr, "alice")
	if err != nil {
		t.Fatalf("alice's certificate on the controller listener: %v", err)
	}
	defer cn.Close()
	reg := kmsg.NewPtrBrokerRegistrationRequest()
	reg.SetVersion(4)
	reg.BrokerID, reg.ClusterID = 99, "whatever"
	resp, err := cn.Request(ctx, reg)
	if err != nil {
		t.Fatal(err)
	}
	if code := resp.(*kmsg.BrokerRegistrationResponse).ErrorCode; code != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("BrokerRegistration by CN=alice: %v, want CLUSTER_AUTHORIZATION_FAILED", kerr.ErrorForCode(code))
	}

	noCert := &wire.Dialer{TLS: clientTLS(t, pki, false)}
	if cn, err := noCert.Dial(ctx, active.CtrlAddr, "anonymous"); err == nil {
		// TLS 1.3 reports a missing client certificate on the first read.
		_, err = cn.Request(ctx, kmsg.NewPtrApiVersionsRequest())
		cn.Close()
		if err == nil {
			t.Fatal("a client without a certificate was served by a controller listener with ssl.client.auth=required")
		}
	}

	nc, err := tls.Dial("tcp", active.CtrlAddr, clientTLS(t, pki, true))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var magic [4]byte
	binary.BigEndian.PutUint32(magic[:], controller.RaftMagic)
	nc.Write(magic[:])
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := nc.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("raft connection with CN=alice's certificate: read %v, want the controller to close it", err)
	}
}

// Nodes refuse to start with an authorizer that would refuse their own
// controller traffic, instead of waiting minutes for a quorum that can
// never form.
func TestControllerPrincipalMustBeAllowed(t *testing.T) {
	props := map[string]string{
		"node.id":                        "1",
		"process.roles":                  "broker,controller",
		"controller.quorum.voters":       "1@127.0.0.1:19093",
		"controller.listener.names":      "CONTROLLER",
		"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
		"listeners":                      "PLAINTEXT://127.0.0.1:19092,CONTROLLER://127.0.0.1:19093",
		"log.dirs":                       t.TempDir(),
		"authorizer.class.name":          "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users":                    "User:admin",
	}
	_, err := broker.ConfigFromProperties(props, nil)
	if err == nil || !strings.Contains(err.Error(), "add User:ANONYMOUS to super.users") {
		t.Fatalf("PLAINTEXT controller listener without User:ANONYMOUS as super user: %v, want an error naming the fix", err)
	}
	props["super.users"] = "User:admin;User:ANONYMOUS"
	if _, err := broker.ConfigFromProperties(props, nil); err != nil {
		t.Fatal(err)
	}
	props["allow.everyone.if.no.acl.found"] = "true"
	props["super.users"] = "User:admin"
	if _, err := broker.ConfigFromProperties(props, nil); err != nil {
		t.Fatalf("allow.everyone.if.no.acl.found=true lets the controllers in before ACLs exist: %v", err)
	}
	props["sasl.mechanism.controller.protocol"] = "SCRAM-SHA-256"
	props["listener.security.protocol.map"] = "PLAINTEXT:PLAINTEXT,CONTROLLER:SASL_PLAINTEXT"
	props["listener.name.controller.sasl.enabled.mechanisms"] = "SCRAM-SHA-256"
	props["listener.name.controller.scram-sha-256.sasl.jaas.config"] = `org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="x";`
	if _, err := broker.ConfigFromProperties(props, nil); err == nil || !strings.Contains(err.Error(), "use PLAIN") {
		t.Fatalf("SCRAM between controllers: %v, want an error saying to use PLAIN", err)
	}
}

// activeController asks a controller listener which voter is active.
func activeController(t *testing.T, ctx context.Context, c *testkit.InProcCluster, d *wire.Dialer) *testkit.InProcNode {
	t.Helper()
	for ctx.Err() == nil {
		cn, err := d.Dial(ctx, c.Nodes[0].CtrlAddr, "find-active")
		if err != nil {
			t.Fatal(err)
		}
		req := kmsg.NewPtrDescribeClusterRequest()
		req.SetVersion(1)
		req.EndpointType = 2
		resp, err := cn.Request(ctx, req)
		cn.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range c.Nodes {
			if n.ID == resp.(*kmsg.DescribeClusterResponse).ControllerID {
				return n
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("no active controller")
	return nil
}

// clientTLS trusts the test CA and, with cert, presents alice's
// certificate.
func clientTLS(t *testing.T, pki *testPKI, cert bool) *tls.Config {
	t.Helper()
	ca, err := os.ReadFile(pki.CA)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	cfg := &tls.Config{RootCAs: pool, ServerName: "localhost", MinVersion: tls.VersionTLS12}
	if cert {
		kp, err := tls.LoadX509KeyPair(pki.ClientCert, pki.ClientKey)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{kp}
	}
	return cfg
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
