package broker_test

// Broker listeners with Java key and trust stores (JKS, PKCS12) and
// ssl.principal.mapping.rules, against franz-go clients. The stores are
// internal/keystore's fixtures, made by keytool (gen.sh there), so the
// tests need neither Java nor Kafka.

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/broker"
	"github.com/fjordhq/fjord/internal/testkit"
)

const stores = "../internal/keystore/testdata/"

// dukeDN is the fixtures' client certificate subject as Kafka names it.
const dukeDN = "CN=Duke,OU=ServiceUsers,O=Fjord"

// storeTLS is the client side: the fixtures' CA, and the client
// certificate (CN=Duke) when withCert.
func storeTLS(t testing.TB, withCert bool) kgo.Opt {
	t.Helper()
	ca, err := os.ReadFile(stores + "ca.pem")
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if withCert {
		cert, err := tls.LoadX509KeyPair(stores+"client.pem", stores+"client.pem")
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return kgo.DialTLSConfig(cfg)
}

// A franz-go client produces and consumes over SSL to a broker whose
// keystore is JKS (type left at Kafka's default, and set) or PKCS12.
func TestSecurityKeystoreJKSAndPKCS12(t *testing.T) {
	for _, c := range []struct {
		name  string
		props map[string]string
	}{
		{"JKS_default_type", map[string]string{"ssl.keystore.location": stores + "server.jks",
			"ssl.keystore.password": "serverpass", "ssl.key.password": "serverkey"}},
		{"JKS", map[string]string{"ssl.keystore.type": "JKS", "ssl.keystore.location": stores + "server.jks",
			"ssl.keystore.password": "serverpass", "ssl.key.password": "serverkey"}},
		{"PKCS12", map[string]string{"ssl.keystore.type": "PKCS12", "ssl.keystore.location": stores + "server.p12",
			"ssl.keystore.password": "serverpass"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.props["listeners"] = "SSL://127.0.0.1:0"
			c.props["inter.broker.listener.name"] = "SSL"
			s := startSecureBroker(t, c.props, nil)
			ctx := testkit.Context(t, 30*time.Second)
			if err := franzRoundTrip(ctx, s.Addr().String(), "ks-"+strings.ToLower(c.name), 3, []kgo.Opt{storeTLS(t, false)}); err != nil {
				t.Fatalf("SSL round trip: %v", err)
			}
		})
	}
}

// mtlsBroker is an SSL listener requiring client certificates, verified
// with the JKS trust store, beside a PLAINTEXT listener whose anonymous
// user is the super user (the administrator), with ACLs enforced. It
// returns the SSL and PLAINTEXT addresses.
func mtlsBroker(t *testing.T, extra map[string]string) (sslAddr, adminAddr string) {
	t.Helper()
	props := map[string]string{
		"listeners":                  "SSL://127.0.0.1:0,PLAINTEXT://127.0.0.1:0",
		"inter.broker.listener.name": "PLAINTEXT",
		"ssl.keystore.type":          "PKCS12", "ssl.keystore.location": stores + "server.p12", "ssl.keystore.password": "serverpass",
		"ssl.truststore.location": stores + "truststore.jks", "ssl.truststore.password": "trustpass",
		"ssl.client.auth":                "required",
		"authorizer.class.name":          "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users":                    "User:ANONYMOUS",
		"allow.everyone.if.no.acl.found": "false",
	}
	for k, v := range extra {
		props[k] = v
	}
	addrs := startSecureBroker(t, props, nil).Addrs()
	return addrs[0].String(), addrs[1].String()
}

// setupTopics creates the topics on the administrator's listener and
// lets principal write to the first.
func setupTopics(t *testing.T, adminAddr, principal string, topics ...string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(adminAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx := testkit.Context(t, 20*time.Second)
	for _, tp := range topics {
		if _, err := adm.CreateTopic(ctx, 1, 1, nil, tp); err != nil {
			t.Fatal(err)
		}
	}
	mustACL(t, adm, kadm.NewACLs().Allow(principal).Topics(topics[0]).Operations(kadm.OpWrite))
}

// produce is one record to topic over mTLS with the client certificate.
func produce(t *testing.T, sslAddr, topic string) error {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(sslAddr), storeTLS(t, true), kgo.RetryTimeout(5*time.Second),
		kgo.RequestTimeoutOverhead(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	return cl.ProduceSync(testkit.Context(t, 15*time.Second), &kgo.Record{Topic: topic, Value: []byte("v")}).FirstErr()
}

// With a JKS trust store the client certificate is verified and the
// principal is its subject DN (DEFAULT rules): an ACL on that DN lets it
// produce, and nothing else is allowed.
func TestSecurityKeystoreMTLSJKSTruststorePrincipal(t *testing.T) {
	sslAddr, adminAddr := mtlsBroker(t, nil)
	setupTopics(t, adminAddr, "User:"+dukeDN, "dn-allowed", "dn-other")
	if err := produce(t, sslAddr, "dn-allowed"); err != nil {
		t.Fatalf("produce with an ACL on User:%s: %v", dukeDN, err)
	}
	if err := produce(t, sslAddr, "dn-other"); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("produce without an ACL: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
	// No client certificate: the handshake is refused.
	cl, err := kgo.NewClient(kgo.SeedBrokers(sslAddr), storeTLS(t, false), kgo.RetryTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).ListTopics(testkit.Context(t, 10*time.Second)); err == nil {
		t.Fatal("no client certificate: got in")
	}
}

// ssl.principal.mapping.rules name the principal: Kafka's example rule
// maps CN=Duke,OU=ServiceUsers,... to "duke", so an ACL on User:duke lets
// the client produce and one on the DN no longer does.
func TestSecurityKeystorePrincipalMappingRules(t *testing.T) {
	sslAddr, adminAddr := mtlsBroker(t, map[string]string{
		"listener.name.ssl.ssl.principal.mapping.rules": `RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L,DEFAULT`,
	})
	setupTopics(t, adminAddr, "User:duke", "mapped")
	setupTopics(t, adminAddr, "User:"+dukeDN, "by-dn")
	if err := produce(t, sslAddr, "mapped"); err != nil {
		t.Fatalf("produce as the mapped User:duke: %v", err)
	}
	if err := produce(t, sslAddr, "by-dn"); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("produce with an ACL on the unmapped DN only: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
}

// A certificate no rule applies to is refused (Kafka fails the
// connection); a malformed rule or an unusable store refuses to start,
// with Kafka's message or one naming the setting.
func TestSecurityKeystoreRefusals(t *testing.T) {
	sslAddr, _ := mtlsBroker(t, map[string]string{"ssl.principal.mapping.rules": `RULE:^CN=nobody,.*$/nobody/`})
	cl, err := kgo.NewClient(kgo.SeedBrokers(sslAddr), storeTLS(t, true), kgo.RetryTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).ListTopics(testkit.Context(t, 10*time.Second)); err == nil {
		t.Fatal("a certificate no mapping rule applies to: got in")
	}

	ssl := func(kv ...string) map[string]string {
		m := map[string]string{"listeners": "SSL://127.0.0.1:0", "inter.broker.listener.name": "SSL"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, c := range []struct {
		props map[string]string
		want  string
	}{
		{ssl("ssl.keystore.location", stores+"server.jks", "ssl.keystore.password", "wrong", "ssl.key.password", "serverkey"), "wrong store password"},
		{ssl("ssl.keystore.location", stores+"server.jks", "ssl.keystore.password", "serverpass", "ssl.key.password", "wrong"), "wrong ssl.key.password"},
		{ssl("ssl.keystore.type", "PKCS12", "ssl.keystore.location", stores+"server.p12", "ssl.keystore.password", "wrong"), "wrong password"},
		{ssl("ssl.keystore.location", stores+"truststore.jks", "ssl.keystore.password", "trustpass"), "no private key entry"},
		{ssl("ssl.keystore.type", "JCEKS", "ssl.keystore.location", stores+"server.jks"), "ssl.keystore.type=JCEKS is not supported"},
		{ssl("ssl.keystore.type", "PEM", "ssl.keystore.location", stores+"server.pem", "ssl.principal.mapping.rules", "DEFAULT/L"),
			"Invalid rule: `DEFAULT/L`, unmatched substring: `/L`"},
	} {
		if err := startErr(t, c.props); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.props, err, c.want)
		}
	}
}

// startErr is the error a broker with props fails to start with.
func startErr(t *testing.T, props map[string]string) error {
	props["node.id"], props["log.dirs"] = "0", t.TempDir()
	cfg, err := broker.ConfigFromProperties(props, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	s, err := broker.New(cfg)
	if err == nil {
		s.Close()
		return errors.New("started")
	}
	return err
}
