package broker_test

// Listeners with TLS and SASL against real clients: franz-go, kcat
// (librdkafka) and kafka-python. Each listener type is a broker of its
// own; every client produces and consumes with the right credentials,
// and is refused with Kafka's authentication error with a wrong password.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/fjordhq/fjord/internal/testkit"
)

const plainJAAS = `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";`

// listenerCase is one listener type and how a client reaches it.
type listenerCase struct {
	name       string
	protocol   string // security protocol
	mechanism  string // SASL mechanism, "" without SASL
	clientCert bool   // the client presents its certificate
	props      func(p *testPKI) map[string]string
}

func tlsProps(p *testPKI) map[string]string {
	return map[string]string{"ssl.keystore.type": "PEM", "ssl.keystore.location": p.Server}
}

func listenerCases() []listenerCase {
	with := func(a map[string]string, kv ...string) map[string]string {
		for i := 0; i < len(kv); i += 2 {
			a[kv[i]] = kv[i+1]
		}
		return a
	}
	return []listenerCase{
		{name: "PLAINTEXT", protocol: "PLAINTEXT", props: func(*testPKI) map[string]string {
			return map[string]string{"listeners": "PLAINTEXT://127.0.0.1:0"}
		}},
		{name: "SSL", protocol: "SSL", props: func(p *testPKI) map[string]string {
			return with(tlsProps(p), "listeners", "SSL://127.0.0.1:0", "inter.broker.listener.name", "SSL")
		}},
		{name: "SSL_client_auth", protocol: "SSL", clientCert: true, props: func(p *testPKI) map[string]string {
			return with(tlsProps(p), "listeners", "SSL://127.0.0.1:0", "inter.broker.listener.name", "SSL",
				"ssl.client.auth", "required", "ssl.truststore.type", "PEM", "ssl.truststore.location", p.CA)
		}},
		{name: "SASL_PLAINTEXT_PLAIN", protocol: "SASL_PLAINTEXT", mechanism: "PLAIN", props: func(*testPKI) map[string]string {
			return map[string]string{"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "inter.broker.listener.name": "SASL_PLAINTEXT",
				"sasl.enabled.mechanisms": "PLAIN", "listener.name.sasl_plaintext.plain.sasl.jaas.config": plainJAAS}
		}},
		{name: "SASL_SSL_SCRAM-SHA-256", protocol: "SASL_SSL", mechanism: "SCRAM-SHA-256", props: func(p *testPKI) map[string]string {
			return with(tlsProps(p), "listeners", "SASL_SSL://127.0.0.1:0", "inter.broker.listener.name", "SASL_SSL",
				"sasl.enabled.mechanisms", "SCRAM-SHA-256,SCRAM-SHA-512")
		}},
		{name: "SASL_SSL_SCRAM-SHA-512", protocol: "SASL_SSL", mechanism: "SCRAM-SHA-512", props: func(p *testPKI) map[string]string {
			return with(tlsProps(p), "listeners", "SASL_SSL://127.0.0.1:0", "inter.broker.listener.name", "SASL_SSL",
				"sasl.enabled.mechanisms", "SCRAM-SHA-256,SCRAM-SHA-512")
		}},
	}
}

var testUsers = map[string]string{"alice": "alice-secret", "admin": "admin-secret"}

func (lc listenerCase) start(t *testing.T, pki *testPKI) string {
	t.Helper()
	s := startSecureBroker(t, lc.props(pki), newMemScram(t, testUsers))
	return s.Addr().String()
}

func (lc listenerCase) tls() bool { return strings.HasSuffix(lc.protocol, "SSL") }

// franzOpts are the kgo options for the case, as user/password.
func (lc listenerCase) franzOpts(t testing.TB, pki *testPKI, user, pass string) []kgo.Opt {
	var opts []kgo.Opt
	if lc.tls() {
		pool := x509.NewCertPool()
		ca, _ := os.ReadFile(pki.CA)
		pool.AppendCertsFromPEM(ca)
		cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		if lc.clientCert {
			cert, err := tls.LoadX509KeyPair(pki.ClientCert, pki.ClientKey)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Certificates = []tls.Certificate{cert}
		}
		opts = append(opts, kgo.DialTLSConfig(cfg))
	}
	var m sasl.Mechanism
	switch lc.mechanism {
	case "PLAIN":
		m = plain.Auth{User: user, Pass: pass}.AsMechanism()
	case "SCRAM-SHA-256":
		m = scram.Auth{User: user, Pass: pass}.AsSha256Mechanism()
	case "SCRAM-SHA-512":
		m = scram.Auth{User: user, Pass: pass}.AsSha512Mechanism()
	}
	if m != nil {
		opts = append(opts, kgo.SASL(m))
	}
	return opts
}

// franzRoundTrip creates a topic, produces n records and reads them back.
func franzRoundTrip(ctx context.Context, addr, topic string, n int, opts []kgo.Opt) error {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.RetryTimeout(5 * time.Second)}, opts...)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, topic); err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("create topic: %w", err)
	}
	for i := range n {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: fmt.Appendf(nil, "v%d", i)}).FirstErr(); err != nil {
			return fmt.Errorf("produce: %w", err)
		}
	}
	got := 0
	for got < n {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("consumed %d of %d: %w", got, n, err)
		}
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) { ferr = err })
		if ferr != nil {
			return fmt.Errorf("fetch: %w", ferr)
		}
		got += fs.NumRecords()
	}
	return nil
}

func TestSecureListenersFranzGo(t *testing.T) {
	pki := newTestPKI(t)
	for _, lc := range listenerCases() {
		t.Run(lc.name, func(t *testing.T) {
			addr := lc.start(t, pki)
			ctx := testkit.Context(t, 60*time.Second)
			if err := franzRoundTrip(ctx, addr, "franz", 5, lc.franzOpts(t, pki, "alice", "alice-secret")); err != nil {
				t.Fatalf("right credentials: %v", err)
			}
			if lc.mechanism != "" {
				wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
				defer cancel()
				err := franzRoundTrip(wctx, addr, "franz-wrong", 1, lc.franzOpts(t, pki, "alice", "wrong"))
				if !errors.Is(err, kerr.SaslAuthenticationFailed) {
					t.Fatalf("wrong password: want SASL_AUTHENTICATION_FAILED, got %v", err)
				}
			}
			if lc.clientCert {
				// Without a certificate the TLS handshake is refused.
				nocert := lc
				nocert.clientCert = false
				wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				defer cancel()
				if err := franzRoundTrip(wctx, addr, "franz-nocert", 1, nocert.franzOpts(t, pki, "", "")); err == nil {
					t.Fatal("a client without a certificate was served on a listener with ssl.client.auth=required")
				}
			}
		})
	}
}
