//go:build interop

// Interop checks that need Java 17 and Kafka's jars (scripts/kafka.sh
// fetch), kcat and /usr/bin/python3 with kafka-python, so they are not in
// the default test run:
//
//	go test -tags interop -run 'TestCaptureGolden|TestJavaReadsOurBatches' ./broker/batch/
//
// TestCaptureGolden regenerates testdata/golden: record batches written by
// client implementations nobody here wrote, captured byte for byte from
// their produce requests to an in-process kfake cluster. The records every
// producer sends are goldenRecords (golden_test.go).
//
// TestJavaReadsOurBatches has Kafka's Java consumer read the batches we
// build, of every codec: the reader our snappy and lz4 framing must please.
package batch

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// kafkaClasspath is where scripts/kafka.sh puts Kafka's jars.
func kafkaClasspath(t *testing.T) string {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, ".cache/kafka-4.4/libs/*")
}

func TestJavaReadsOurBatches(t *testing.T) {
	c := newCluster(t, "ours")
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	want := produceOurBatches(ctx, t, c)
	cmd := exec.CommandContext(ctx, "java", "-cp", kafkaClasspath(t), "org.apache.kafka.tools.consumer.ConsoleConsumer",
		"--bootstrap-server", c.ListenAddrs()[0], "--topic", "ours", "--partition", "0", "--offset", "earliest",
		"--max-messages", fmt.Sprint(len(want)), "--timeout-ms", "30000",
		"--formatter-property", "print.key=true", "--formatter-property", "print.headers=true",
		"--formatter-property", "key.separator=|", "--formatter-property", "headers.separator=,")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("java consumer: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("java read %d records, want %d\n%s", len(lines), len(want), stderr.String())
	}
	for i, line := range lines {
		w := want[i]
		// Headers, key and value, each followed by key.separator.
		if exp := "codec:" + w.header + "|" + w.key + "|" + w.value; line != exp {
			t.Fatalf("java record %d:\n got %q\nwant %q", i, line, exp)
		}
	}
	t.Logf("Kafka's Java consumer read all %d records of %d codecs", len(lines), len(codecs))
}

func TestCaptureGolden(t *testing.T) {
	cp := kafkaClasspath(t)
	input := t.TempDir() + "/input"
	var lines bytes.Buffer
	for _, r := range goldenRecords() {
		fmt.Fprintf(&lines, "%s\t%s\n", r.key, r.value)
	}
	if err := os.WriteFile(input, lines.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var javaLines bytes.Buffer
	for _, r := range goldenRecords() {
		fmt.Fprintf(&javaLines, "source:java\t%s\t%s\n", r.key, r.value)
	}
	javaInput := t.TempDir() + "/java-input"
	if err := os.WriteFile(javaInput, javaLines.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	type producer struct {
		name   string
		codecs []string
		run    func(addr, topic, codec string) *exec.Cmd
	}
	producers := []producer{
		{"librdkafka", []string{"none", "gzip", "snappy", "lz4", "zstd"}, func(addr, topic, codec string) *exec.Cmd {
			c := exec.Command("kcat", "-P", "-b", addr, "-t", topic, "-p", "0", "-K", "\t", "-z", codec,
				"-H", "source=librdkafka", "-X", "linger.ms=200", "-X", "batch.size=1000000", "-l", input)
			return c
		}},
		{"kafka-python", []string{"none", "gzip"}, func(addr, topic, codec string) *exec.Cmd {
			ct := "None"
			if codec != "none" {
				ct = "'" + codec + "'"
			}
			script := fmt.Sprintf(`
from kafka import KafkaProducer
p = KafkaProducer(bootstrap_servers=%q, compression_type=%s, batch_size=1000000, linger_ms=200, api_version=(2, 8, 0))
for line in open(%q, 'rb'):
    k, v = line.rstrip(b'\n').split(b'\t', 1)
    p.send(%q, key=k, value=v, partition=0, headers=[('source', b'kafka-python')])
p.flush()
p.close()
`, addr, ct, input, topic)
			return exec.Command("/usr/bin/python3", "-c", script)
		}},
		{"java", []string{"none", "gzip", "snappy", "lz4", "zstd"}, func(addr, topic, codec string) *exec.Cmd {
			c := exec.Command("java", "-cp", cp, "org.apache.kafka.tools.ConsoleProducer",
				"--bootstrap-server", addr, "--topic", topic,
				"--compression-codec", codec,
				"--reader-property", "parse.key=true", "--reader-property", "key.separator=\t",
				"--reader-property", "parse.headers=true",
				"--producer-property", "batch.size=1000000", "--producer-property", "linger.ms=200",
				"--producer-property", "partitioner.class=org.apache.kafka.clients.producer.RoundRobinPartitioner")
			f, err := os.Open(javaInput)
			if err != nil {
				t.Fatal(err)
			}
			c.Stdin = f
			return c
		}},
	}

	for _, p := range producers {
		for _, codec := range p.codecs {
			t.Run(p.name+"-"+codec, func(t *testing.T) {
				var mu sync.Mutex
				var captured []byte
				c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "golden"), kfake.Ports(0))
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				c.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
					c.KeepControl()
					pr := req.(*kmsg.ProduceRequest)
					mu.Lock()
					defer mu.Unlock()
					for _, tp := range pr.Topics {
						for _, part := range tp.Partitions {
							captured = append(captured, part.Records...)
						}
					}
					return nil, nil, false
				})
				ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
				defer cancel()
				if p.name == "librdkafka" {
					advertiseMinVersionZero(ctx, t, c)
				}
				cmd := p.run(c.ListenAddrs()[0], "golden", codec)
				cmd = exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
				if p.name == "java" {
					f, _ := os.Open(javaInput)
					defer f.Close()
					cmd.Stdin = f
				}
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("%s: %v\n%s", p.name, err, out)
				}
				mu.Lock()
				defer mu.Unlock()
				if len(captured) == 0 {
					t.Fatalf("%s sent no batches\n%s", p.name, out)
				}
				name := filepath.Join("testdata", "golden", fmt.Sprintf("%s-%s.bin", p.name, strings.ReplaceAll(codec, "none", "uncompressed")))
				if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(name, captured, 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("wrote %s: %d bytes", name, len(captured))
			})
		}
	}
}

// advertiseMinVersionZero makes c advertise every API from version 0.
// librdkafka before 2.8 (Debian ships 2.0.2) derives gzip, snappy and lz4
// support from Produce v0-2 and FindCoordinator v0 being advertised, which
// Kafka 4 and kfake no longer do (KIP-896), and silently sends those codecs
// uncompressed (confluentinc/librdkafka#4956). It still picks Produce v7,
// which kfake serves.
func advertiseMinVersionZero(ctx context.Context, t *testing.T, c *kfake.Cluster) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	base, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	c.ControlKey(int16(kmsg.ApiVersions), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		resp := *base
		resp.Version = req.GetVersion()
		resp.ApiKeys = append([]kmsg.ApiVersionsResponseApiKey(nil), base.ApiKeys...)
		for i := range resp.ApiKeys {
			resp.ApiKeys[i].MinVersion = 0
		}
		return &resp, nil, true
	})
}
