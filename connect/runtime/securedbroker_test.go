package runtime

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/broker"
	"github.com/fjordhq/fjord/broker/auth"
	"github.com/fjordhq/fjord/broker/protocol"
	"github.com/fjordhq/fjord/connect/runtime/runtimetest"
	"github.com/fjordhq/fjord/connect/storage"
	"github.com/fjordhq/fjord/internal/testkit"
)

// scramUsers is a SCRAM credential store for the test broker.
type scramUsers map[string]auth.ScramCredential

func (s scramUsers) ScramCredential(user string, m auth.ScramMechanism) (auth.ScramCredential, bool) {
	c, ok := s[m.Name()+"/"+user]
	return c, ok
}

// startSASLSSLBroker starts a Fjord broker whose only listener is
// SASL_SSL with PLAIN (users from the JAAS line) and SCRAM-SHA-512.
func startSASLSSLBroker(t *testing.T, pki *testPKI, users map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	keystore := filepath.Join(dir, "broker.pem")
	if err := os.WriteFile(keystore, append(append([]byte{}, pki.serverKey...), pki.serverCert...), 0o600); err != nil {
		t.Fatal(err)
	}
	jaas := `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-pw"`
	scram := scramUsers{}
	for u, p := range users {
		jaas += fmt.Sprintf(` user_%s="%s"`, u, p)
		c, err := protocol.NewScramCredential(auth.ScramSHA512, p, nil, 4096)
		if err != nil {
			t.Fatal(err)
		}
		scram[auth.ScramSHA512.Name()+"/"+u] = c
	}
	props := map[string]string{
		"node.id": "0", "log.dirs": t.TempDir(), "offsets.topic.replication.factor": "1",
		"offsets.topic.num.partitions": "4", "group.initial.rebalance.delay.ms": "0",
		"listeners": "SASL_SSL://127.0.0.1:0", "inter.broker.listener.name": "SASL_SSL",
		"sasl.enabled.mechanisms":                       "PLAIN,SCRAM-SHA-512",
		"listener.name.sasl_ssl.plain.sasl.jaas.config": jaas + ";",
		"ssl.keystore.type":                             "PEM", "ssl.keystore.location": keystore,
	}
	cfg, err := broker.ConfigFromProperties(props, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	cfg.ScramStore = scram
	s, err := broker.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve() }()
	t.Cleanup(func() {
		s.Close()
		<-done
	})
	return s.Addr().String()
}

// A Connect worker reaches a SASL_SSL Fjord broker with the settings a
// Kafka Connect user writes: its own clients with SCRAM-SHA-512 and a
// JAAS line from a config provider, its task producers with PLAIN
// (producer.*), its sink consumers with SCRAM (consumer.*), all trusting
// the broker's CA from a PEM trust store. Records flow from a source
// task through the broker to a sink task. A connector whose client
// override has a wrong password fails, and its trace does not show it.
func TestWorkerOnSASLSSLBroker(t *testing.T) {
	pki := newTestPKI(t, []string{"localhost"}, []net.IP{net.ParseIP("127.0.0.1")})
	addr := startSASLSSLBroker(t, pki, map[string]string{"connect": "connect-pw-1", "tasks": "tasks-pw-2"})
	creds := filepath.Join(t.TempDir(), "creds.properties")
	if err := os.WriteFile(creds, []byte(`worker.jaas=org.apache.kafka.common.security.scram.ScramLoginModule required username="connect" password="connect-pw-1";`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tlsKeys := func(prefix string) []string {
		return []string{prefix + "security.protocol", "SASL_SSL", prefix + "ssl.truststore.type", "PEM", prefix + "ssl.truststore.location", pki.caFile}
	}
	extra := []string{"config.providers", "file", "config.providers.file.class", "FileConfigProvider",
		"sasl.mechanism", "SCRAM-SHA-512", "sasl.jaas.config", "${file:" + creds + ":worker.jaas}",
		"producer.sasl.mechanism", "PLAIN",
		"producer.sasl.jaas.config", `org.apache.kafka.common.security.plain.PlainLoginModule required username="tasks" password="tasks-pw-2";`,
		"producer.delivery.timeout.ms", "5000",
		"consumer.sasl.mechanism", "SCRAM-SHA-512",
		"consumer.sasl.jaas.config", `org.apache.kafka.common.security.scram.ScramLoginModule required username="tasks" password="tasks-pw-2";`}
	extra = append(extra, tlsKeys("")...)
	extra = append(extra, tlsKeys("producer.")...)
	extra = append(extra, tlsKeys("consumer.")...)
	props := workerProps(addr, extra...)
	w := newTestWorker(t, props, storage.NewMemoryOffsetStore())
	ctx := testkit.Context(t, time.Minute)

	// The worker's own admin client is authenticated: it can create the
	// topic and read the cluster id.
	adm, err := w.adminClient()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, "secured"); err != nil {
		t.Fatalf("create a topic through the worker's SASL_SSL admin client: %v", err)
	}
	if id, err := w.KafkaClusterID(ctx); err != nil || id == "" {
		t.Fatalf("cluster id %q: %v", id, err)
	}

	ev := newEvents()
	id := runtimetest.TestID(t)
	const n = 50
	run(t, w, ev, runtimetest.SourceConfig("src", id, "secured", n))
	run(t, w, ev, runtimetest.SinkConfig("sink", id, "secured"))
	awaitDistinct(t, runtimetest.Collector(id), n)

	// A client with the connector's wrong password is refused by the
	// broker; the task fails and its trace hides the password.
	const wrong = "not-the-tasks-password"
	bad := runtimetest.SourceConfig("bad", id, "secured", n,
		"producer.override.sasl.jaas.config", `org.apache.kafka.common.security.plain.PlainLoginModule required username="tasks" password="`+wrong+`";`)
	run(t, w, ev, bad)
	err = ev.await(t, "bad", 0, storage.StateFailed)
	if err == nil {
		t.Fatal("the task with a wrong password failed without an error")
	}
	trace := err.Error()
	if tr, ok := err.(interface{ Trace() string }); ok {
		trace = tr.Trace()
	}
	t.Logf("trace of the task with the wrong password: %s", trace)
	if strings.Contains(trace, wrong) {
		t.Errorf("the trace shows the wrong password: %s", trace)
	}
	if !strings.Contains(strings.ToUpper(trace), "SASL") && !strings.Contains(strings.ToLower(trace), "authentication") {
		t.Errorf("the trace does not say authentication failed: %s", trace)
	}

	// A plain client cannot reach the broker at all: the listener needs
	// TLS and SASL.
	opts, err := KafkaClientOpts(AdminClient, map[string]string{"bootstrap.servers": addr}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(append(opts, kgo.RequestRetries(0), kgo.RetryTimeout(time.Second))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	short, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if _, err := kadm.NewClient(cl).ListTopics(short); err == nil {
		t.Error("a PLAINTEXT client listed topics on the SASL_SSL listener")
	}
}

// Mutual TLS against Fjord's SSL listener with ssl.client.auth=required:
// a client with a PEM key store (file, or inline key and chain) gets in,
// one without a certificate does not.
func TestClientMTLSOnFjordBroker(t *testing.T) {
	pki := newTestPKI(t, []string{"localhost"}, []net.IP{net.ParseIP("127.0.0.1")})
	keystore := filepath.Join(t.TempDir(), "broker.pem")
	if err := os.WriteFile(keystore, append(append([]byte{}, pki.serverKey...), pki.serverCert...), 0o600); err != nil {
		t.Fatal(err)
	}
	b := testkit.StartBroker(t, map[string]string{
		"listeners": "SSL://127.0.0.1:0", "inter.broker.listener.name": "SSL",
		"ssl.keystore.type": "PEM", "ssl.keystore.location": keystore,
		"ssl.client.auth": "required", "ssl.truststore.type": "PEM", "ssl.truststore.location": pki.caFile,
	})
	base := map[string]string{"bootstrap.servers": b.Addr, "security.protocol": "SSL", "ssl.truststore.location": pki.caFile}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	if err := tryClient(t, with("ssl.keystore.type", "PEM", "ssl.keystore.location", pki.clientStore)); err != nil {
		t.Errorf("key store file: %v", err)
	}
	if err := tryClient(t, with("ssl.keystore.type", "PEM", "ssl.keystore.key", string(pki.clientKey),
		"ssl.keystore.certificate.chain", string(pki.clientCert))); err != nil {
		t.Errorf("inline key and chain: %v", err)
	}
	if err := tryClient(t, with()); err == nil {
		t.Error("a client without a certificate got in")
	}
}
