package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/internal/testkit"
)

// kafkaSampleProperties is Apache Kafka 4.4's config/server.properties for
// a combined node, with ports and paths filled in: what a user pastes.
const kafkaSampleProperties = `############################# Server Basics #############################
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=%[1]s:%[3]d

############################# Socket Server Settings #############################
listeners=PLAINTEXT://%[1]s:%[2]d,CONTROLLER://%[1]s:%[3]d
inter.broker.listener.name=PLAINTEXT
advertised.listeners=PLAINTEXT://%[1]s:%[2]d,CONTROLLER://%[1]s:%[3]d
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL
num.network.threads=3
num.io.threads=8
socket.send.buffer.bytes=102400
socket.receive.buffer.bytes=102400
socket.request.max.bytes=104857600

############################# Log Basics #############################
log.dirs=%[4]s
num.partitions=1
num.recovery.threads.per.data.dir=1

############################# Internal Topic Settings  #############################
offsets.topic.replication.factor=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1

############################# Log Retention Policy #############################
log.retention.hours=168
log.segment.bytes=1073741824
log.retention.check.interval.ms=300000
`

func writeProperties(t *testing.T, extra string) (path, addr string) {
	t.Helper()
	dir := t.TempDir()
	addr = testkit.FreeAddr(t)
	host, port, _ := strings.Cut(addr, ":")
	ctrl := testkit.FreeAddr(t)
	_, cport, _ := strings.Cut(ctrl, ":")
	var p, cp int
	fmt.Sscan(port, &p)
	fmt.Sscan(cport, &cp)
	body := fmt.Sprintf(kafkaSampleProperties, host, p, cp, filepath.Join(dir, "data")) + extra
	path = filepath.Join(dir, "server.properties")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, addr
}

// TestBrokerRunsKafkaSampleConfig: Kafka's own sample config pastes in,
// serves clients, warns about nothing, and stops cleanly on SIGTERM.
func TestBrokerRunsKafkaSampleConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the fjord binary")
	}
	path, addr := writeProperties(t, "")
	p := testkit.StartProcess(t, "broker", "--config", path, "--override", "log.retention.hours=24")
	testkit.WaitForPort(t, addr, 20*time.Second)
	cl := testkit.Client(t, addr, kgo.DefaultProduceTopic("pasted"), kgo.AllowAutoTopicCreation())
	if err := cl.ProduceSync(testkit.Context(t, 10*time.Second), &kgo.Record{Value: []byte("hi")}).FirstErr(); err != nil {
		t.Fatalf("produce to a broker started from Kafka's sample config: %v", err)
	}
	if err := p.Stop(10 * time.Second); err != nil {
		t.Fatalf("SIGTERM: %v\n%s", err, p.Output())
	}
	out := p.Output()
	if strings.Contains(out, "level=WARN") || strings.Contains(out, "level=ERROR") {
		t.Fatalf("Kafka's sample config produced warnings:\n%s", out)
	}
	if !strings.Contains(out, "stopped cleanly") {
		t.Fatalf("no clean stop reported:\n%s", out)
	}
}

func TestBrokerConfigErrorsNameTheKey(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the fjord binary")
	}
	t.Run("unknown key warns", func(t *testing.T) {
		path, addr := writeProperties(t, "log.retention.hourz=5\n")
		p := testkit.StartProcess(t, "broker", "--config", path)
		testkit.WaitForPort(t, addr, 20*time.Second)
		p.Stop(10 * time.Second)
		if out := p.Output(); !strings.Contains(out, "log.retention.hourz") || !strings.Contains(out, "WARN") {
			t.Fatalf("no warning naming the unknown key:\n%s", out)
		}
	})
	t.Run("invalid value refuses to start", func(t *testing.T) {
		path, _ := writeProperties(t, "num.partitions=abc\n")
		p := testkit.StartProcess(t, "broker", "--config", path)
		testkit.CheckFor(t, 20*time.Second, 50*time.Millisecond, func() error {
			if !p.Exited() {
				return fmt.Errorf("still running")
			}
			return nil
		})
		out := p.Output()
		if !strings.Contains(out, "num.partitions") || !strings.Contains(out, "abc") {
			t.Fatalf("error does not name key and value:\n%s", out)
		}
	})
	t.Run("missing --config", func(t *testing.T) {
		p := testkit.StartProcess(t, "broker")
		testkit.CheckFor(t, 20*time.Second, 50*time.Millisecond, func() error {
			if !p.Exited() {
				return fmt.Errorf("still running")
			}
			return nil
		})
		if !strings.Contains(p.Output(), "--config is required") {
			t.Fatalf("unhelpful error:\n%s", p.Output())
		}
	})
}

// TestDevStartsAndStops: `fjord dev` prints where it listens, serves
// /healthz, and stops cleanly on SIGINT-like SIGTERM.
func TestDevStartsAndStops(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the fjord binary")
	}
	dir := t.TempDir()
	kafka, httpAddr := testkit.FreeAddr(t), testkit.FreeAddr(t)
	p := testkit.StartProcess(t, "dev", "--data-dir", dir, "--kafka-addr", kafka, "--http-addr", httpAddr)
	testkit.WaitForPort(t, kafka, 20*time.Second)
	testkit.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		if !strings.Contains(p.Output(), "Fjord dev is running") || !strings.Contains(p.Output(), kafka+"\n") {
			return fmt.Errorf("banner not printed yet")
		}
		return nil
	})
	resp, err := httpGet("http://" + httpAddr + "/healthz")
	if err != nil || !strings.Contains(resp, `"status":"ok"`) {
		t.Fatalf("healthz: %v %s", err, resp)
	}
	metrics, err := httpGet("http://" + httpAddr + "/metrics")
	if err != nil || !strings.Contains(metrics, "fjord_broker_requests_total") {
		t.Fatalf("metrics: %v", err)
	}
	// The Connect worker and the schema registry share the HTTP address.
	if root, err := httpGet("http://" + httpAddr + "/"); err != nil || !strings.Contains(root, `"kafka_cluster_id"`) {
		t.Fatalf("Connect REST root: %v %s", err, root)
	}
	testkit.CheckFor(t, 20*time.Second, 100*time.Millisecond, func() error {
		body, err := httpGet("http://" + httpAddr + "/connectors")
		if err != nil || strings.TrimSpace(body) != "[]" {
			return fmt.Errorf("GET /connectors: %v %s", err, body)
		}
		return nil
	})
	if subjects, err := httpGet("http://" + httpAddr + "/schema-registry/subjects"); err != nil || strings.TrimSpace(subjects) != "[]" {
		t.Fatalf("registry subjects: %v %s", err, subjects)
	}
	if err := p.Stop(10 * time.Second); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "broker", ".kafka_cleanshutdown")); err != nil {
		t.Fatalf("no clean-shutdown marker after SIGTERM: %v", err)
	}
}

func httpGet(url string) (string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}
