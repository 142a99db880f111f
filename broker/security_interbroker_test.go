package broker_test

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/fjordhq/fjord/broker/wire"
	"github.com/fjordhq/fjord/internal/testkit"
)

// Brokers replicate over a SASL_SSL inter-broker listener: followers dial
// the leader with TLS (the listener's truststore) and SASL PLAIN with the
// JAAS line's username/password. With min.insync.replicas=3 an acks=all
// produce succeeds only once both followers have fetched over it.
func TestInterBrokerSASLSSL(t *testing.T) {
	pki := newTestPKI(t)
	c := testkit.StartInProcCluster(t, 3, map[string]string{
		// The listener named PLAINTEXT by the cluster helper runs SASL_SSL.
		"listener.security.protocol.map":                 "PLAINTEXT:SASL_SSL,CONTROLLER:PLAINTEXT",
		"ssl.keystore.type":                              "PEM",
		"ssl.keystore.location":                          pki.Server,
		"ssl.truststore.type":                            "PEM",
		"ssl.truststore.location":                        pki.CA,
		"sasl.enabled.mechanisms":                        "PLAIN",
		"sasl.mechanism.inter.broker.protocol":           "PLAIN",
		"listener.name.plaintext.plain.sasl.jaas.config": plainJAAS,
		"min.insync.replicas":                            "3",
	})
	lc := listenerCases()[3] // SASL PLAIN
	lc.protocol = "SASL_SSL"
	ctx := testkit.Context(t, 90*time.Second)
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(strings.Split(c.Bootstrap(), ",")...), kgo.RequiredAcks(kgo.AllISRAcks())},
		lc.franzOpts(t, pki, "alice", "alice-secret")...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 3, 3, nil, "replicated"); err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "replicated", Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatalf("acks=all produce %d with min.insync.replicas=3: %v", i, err)
		}
	}
	td, err := adm.ListTopics(ctx, "replicated")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range td["replicated"].Partitions {
		if len(p.ISR) != 3 {
			t.Fatalf("partition %d ISR %v, want all three replicas in sync over SASL_SSL", p.Partition, p.ISR)
		}
	}
}

// The node-to-node client authenticates with SCRAM over TLS, reports a
// wrong password as Kafka's error, and retires its connection before
// the broker's session lifetime runs out (callers redial broken ones).
func TestWireDialerSCRAMOverTLS(t *testing.T) {
	pki := newTestPKI(t)
	lc := listenerCases()[4] // SASL_SSL SCRAM-SHA-256
	props := lc.props(pki)
	props["connections.max.reauth.ms"] = "1000"
	addr := startSecureBroker(t, props, newMemScram(t, testUsers)).Addr().String()
	ca, _ := os.ReadFile(pki.CA)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	ctx := testkit.Context(t, 30*time.Second)

	bad := &wire.Dialer{TLS: &tls.Config{RootCAs: pool}, SASL: scram.Auth{User: "admin", Pass: "nope"}.AsSha256Mechanism()}
	if _, err := bad.Dial(ctx, addr, "test"); !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("wrong password: want SASL_AUTHENTICATION_FAILED, got %v", err)
	}
	d := &wire.Dialer{TLS: &tls.Config{RootCAs: pool}, SASL: scram.Auth{User: "admin", Pass: "admin-secret"}.AsSha256Mechanism()}
	c, err := d.Dial(ctx, addr, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	md := kmsg.NewPtrMetadataRequest()
	md.SetVersion(9)
	if _, err := c.Request(ctx, md); err != nil {
		t.Fatalf("Metadata after SCRAM: %v", err)
	}
	if c.Broken() {
		t.Fatal("fresh connection reported broken")
	}
	time.Sleep(900 * time.Millisecond)
	if !c.Broken() {
		t.Fatal("connection still in use at 90% of its 1 s SASL session")
	}
}
