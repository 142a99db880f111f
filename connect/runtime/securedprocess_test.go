package runtime_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/api/httpsec/httpsectest"
	"github.com/fjordhq/fjord/connect/runtime"
	"github.com/fjordhq/fjord/internal/testkit"
)

// `fjord connect worker.properties` — a distributed worker process — on
// a SASL_SSL Fjord broker, configured as a Kafka Connect user would: the
// SASL credentials of the worker and of its task clients come from a
// file through the file config provider, the broker's CA from a PEM
// trust store. The worker's internal topics, the REST API, and a
// FileStreamSink whose output path is itself a variable all work; the
// password appears nowhere in what the process prints or the REST API
// returns.
func TestDistributedWorkerProcessOnSASLSSLBroker(t *testing.T) {
	dir := t.TempDir()
	pki := httpsectest.New(t, dir)
	const password = "connect-secret-pw-5150"
	b := testkit.StartBroker(t, map[string]string{
		"listeners": "SASL_SSL://127.0.0.1:0", "inter.broker.listener.name": "SASL_SSL",
		"sasl.enabled.mechanisms":                       "PLAIN",
		"listener.name.sasl_ssl.plain.sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required user_connect="` + password + `";`,
		"ssl.keystore.type":                             "PEM", "ssl.keystore.location": pki.ServerFile,
	})
	out := filepath.Join(dir, "sink-output.txt")
	secrets := filepath.Join(dir, "connect-secrets.properties")
	writeFile(t, secrets, `jaas=org.apache.kafka.common.security.plain.PlainLoginModule required username="connect" password="`+password+`";`+"\n"+
		"sink.file="+out+"\n")
	client := map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN",
		"sasl.jaas.config": "${file:" + secrets + ":jaas}", "ssl.truststore.type": "PEM", "ssl.truststore.location": pki.CAFile}
	addr := testkit.FreeAddr(t)
	lines := []string{
		"bootstrap.servers=" + b.Addr, "group.id=secured", "listeners=http://" + addr,
		"config.storage.topic=secured-configs", "offset.storage.topic=secured-offsets", "status.storage.topic=secured-status",
		"config.storage.replication.factor=1", "offset.storage.replication.factor=1", "status.storage.replication.factor=1",
		"offset.storage.partitions=2", "status.storage.partitions=1",
		"key.converter=org.apache.kafka.connect.storage.StringConverter",
		"value.converter=org.apache.kafka.connect.storage.StringConverter",
		"offset.flush.interval.ms=500", "session.timeout.ms=6000", "heartbeat.interval.ms=1000",
		"config.providers=file",
		"config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider",
		"config.providers.file.param.allowed.paths=" + dir,
	}
	// Kafka's workers need the settings three times: for their own
	// clients, and producer./consumer. prefixed for their tasks'.
	for _, prefix := range []string{"", "producer.", "consumer."} {
		for k, v := range client {
			lines = append(lines, prefix+k+"="+v)
		}
	}
	props := filepath.Join(dir, "worker.properties")
	writeFile(t, props, strings.Join(lines, "\n")+"\n")
	p := testkit.StartProcess(t, "connect", props)

	rest := "http://" + addr
	hc := &http.Client{Timeout: 10 * time.Second}
	call := func(method, path string, body any) (int, string) {
		var r io.Reader
		if body != nil {
			bs, _ := json.Marshal(body)
			r = bytes.NewReader(bs)
		}
		req, _ := http.NewRequestWithContext(context.Background(), method, rest+path, r)
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		bs, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(bs)
	}
	testkit.CheckFor(t, 90*time.Second, 200*time.Millisecond, func() error {
		if p.Exited() {
			t.Fatalf("the worker exited:\n%s", p.Output())
		}
		if code, body := call("GET", "/connectors", nil); code != http.StatusOK {
			return fmt.Errorf("GET /connectors: %d %s", code, body)
		}
		return nil
	})
	sinkFile := "${file:" + secrets + ":sink.file}"
	code, body := call("POST", "/connectors", map[string]any{"name": "secured-sink", "config": map[string]string{
		"connector.class": "FileStreamSink", "tasks.max": "1", "topics": "secured-lines", "file": sinkFile}})
	if code != http.StatusCreated {
		t.Fatalf("create the sink: %d %s", code, body)
	}

	// A client with the same properties, built the way the worker builds
	// its own, writes the records.
	cfg, err := runtime.ParseWorkerConfig(map[string]string{"bootstrap.servers": b.Addr, "group.id": "x",
		"key.converter": "org.apache.kafka.connect.storage.StringConverter", "value.converter": "org.apache.kafka.connect.storage.StringConverter",
		"config.storage.topic": "a", "offset.storage.topic": "b", "status.storage.topic": "c",
		"config.providers": "file", "config.providers.file.class": "file",
		"security.protocol": client["security.protocol"], "sasl.mechanism": client["sasl.mechanism"],
		"sasl.jaas.config": client["sasl.jaas.config"], "ssl.truststore.type": "PEM", "ssl.truststore.location": pki.CAFile,
	}, runtime.Distributed)
	if err != nil {
		t.Fatal(err)
	}
	opts, err := cfg.ClientOpts(nil)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(append(opts, kgo.AllowAutoTopicCreation())...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for i := range 5 {
		if err := cl.ProduceSync(testkit.Context(t, 20*time.Second), &kgo.Record{Topic: "secured-lines", Value: []byte(fmt.Sprintf("line %d", i))}).FirstErr(); err != nil {
			t.Fatalf("produce over SASL_SSL: %v", err)
		}
	}
	testkit.CheckFor(t, 60*time.Second, 200*time.Millisecond, func() error {
		bs, err := os.ReadFile(out)
		if err != nil || !strings.Contains(string(bs), "line 4") {
			_, st := call("GET", "/connectors/secured-sink/status", nil)
			return fmt.Errorf("sink output %q (%v); status %s", bs, err, st)
		}
		return nil
	})

	var answers strings.Builder
	for _, path := range []string{"/connectors/secured-sink", "/connectors/secured-sink/config", "/connectors/secured-sink/tasks",
		"/connectors?expand=info&expand=status"} {
		code, body := call("GET", path, nil)
		if code != http.StatusOK {
			t.Errorf("GET %s: %d %s", path, code, body)
		}
		answers.WriteString(body)
	}
	if !strings.Contains(answers.String(), sinkFile) {
		t.Errorf("the REST API does not show the placeholder %s:\n%s", sinkFile, answers.String())
	}
	for what, secret := range map[string]string{"the password": password, "the resolved sink path": out} {
		if strings.Contains(answers.String(), secret) {
			t.Errorf("the REST API shows %s", what)
		}
	}
	if strings.Contains(p.Output(), password) {
		t.Errorf("the worker printed the password:\n%s", p.Output())
	}
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}
