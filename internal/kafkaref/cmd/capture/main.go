// Command capture starts Apache Kafka 4.4 (scripts/kafka.sh), sends it a
// fixed list of requests with franz-go and writes each exchange as a golden
// JSON file for package kafkaref. It is a tool for people, not part of
// `make test`: run it from the repository root when the reference changes.
//
//	go run ./internal/kafkaref/cmd/capture [-port 19492] [-out internal/kafkaref/testdata]
//
// Each scenario gets a fresh broker in a temporary directory, so the files
// do not depend on the order in which scenarios ran before them.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/fjordhq/fjord/internal/kafkaref"
)

func main() {
	port := flag.Int("port", 19492, "loopback port for the reference broker (controller uses port+1)")
	out := flag.String("out", "internal/kafkaref/testdata", "directory for the golden files")
	script := flag.String("kafka", "scripts/kafka.sh", "script that starts Kafka 4.4")
	only := flag.String("only", "", "run only the scenario with this name")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(log, *script, *port, *out, *only); err != nil {
		log.Error("capture failed", "err", err)
		os.Exit(1)
	}
}

func run(log *slog.Logger, script string, port int, out, only string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("create output dir: %w", err)
	}
	for _, sc := range scenarios {
		if only != "" && sc.name != only {
			continue
		}
		log.Info("scenario", "name", sc.name, "props", sc.props)
		if err := runScenario(log, script, port, out, sc); err != nil {
			return fmt.Errorf("scenario %s: %w", sc.name, err)
		}
	}
	return nil
}

// scenario is one broker lifetime: static properties, then steps in order.
type scenario struct {
	name  string
	props []string // extra server.properties lines
	steps func(s *session) error
}

func runScenario(log *slog.Logger, script string, port int, out string, sc scenario) error {
	// A fixed directory, not MkdirTemp: log.dirs appears in the broker's
	// DescribeConfigs answer, and a random name would change every file
	// on each regeneration.
	dir := filepath.Join(os.TempDir(), "fjord-kafkaref-"+sc.name)
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("clear %s: %w", dir, err)
	}
	defer os.RemoveAll(dir)
	args := append([]string{"start", strconv.Itoa(port), dir}, sc.props...)
	cmd := exec.Command(script, args...)
	cmd.Stderr = os.Stderr
	pidOut, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("start kafka (%s): %w; see %s/kafka.log", script, err, dir)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(pidOut)))
	if err != nil {
		return fmt.Errorf("kafka.sh printed %q, not a pid", pidOut)
	}
	defer stopKafka(log, pid)

	cl, err := kgo.NewClient(kgo.SeedBrokers(fmt.Sprintf("127.0.0.1:%d", port)))
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	defer cl.Close()
	s := &session{log: log, cl: cl, port: port, out: out, scenario: sc.name}
	if err := s.waitReady(); err != nil {
		return err
	}
	return sc.steps(s)
}

// stopKafka ends the broker we started (by its pid only) and waits for it,
// so that the next scenario can bind the same port.
func stopKafka(log *slog.Logger, pid int) {
	_ = syscall.Kill(pid, syscall.SIGTERM)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if syscall.Kill(pid, 0) != nil {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	log.Warn("kafka did not stop on SIGTERM; killing", "pid", pid)
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

type session struct {
	log      *slog.Logger
	cl       *kgo.Client
	port     int
	out      string
	scenario string
}

// request sends req pinned to version (or the highest both sides support
// when version < 0) and returns the response.
func (s *session) request(req kmsg.Request, version int16) (kmsg.Response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := s.cl
	if version >= 0 {
		vs := kversion.Stable()
		vs.SetMaxKeyVersion(req.Key(), version)
		pinned, err := kgo.NewClient(kgo.SeedBrokers(fmt.Sprintf("127.0.0.1:%d", s.port)), kgo.MaxVersions(vs))
		if err != nil {
			return nil, fmt.Errorf("pinned client: %w", err)
		}
		defer pinned.Close()
		cl = pinned
	}
	var resp kmsg.Response
	var err error
	switch req.(type) {
	case *kmsg.DescribeConfigsRequest, *kmsg.AlterConfigsRequest, *kmsg.IncrementalAlterConfigsRequest, *kmsg.ListOffsetsRequest:
		// kgo routes broker resources to the broker they name (and
		// partitions to their leaders, failing unknown ones); the
		// captures deliberately name brokers that do not exist, so these
		// go straight to the one broker we run (node.id=1 in kafka.sh).
		resp, err = cl.Broker(1).Request(ctx, req)
	default:
		resp, err = cl.Request(ctx, req)
	}
	if err != nil {
		return nil, fmt.Errorf("key %d v%d: %w", req.Key(), version, err)
	}
	// kgo splits some requests (DescribeConfigs by broker) and sends
	// copies, so the response, not req, carries the version used.
	if version >= 0 && resp.GetVersion() != version {
		return nil, fmt.Errorf("key %d: asked for v%d, broker negotiated v%d", req.Key(), version, resp.GetVersion())
	}
	return resp, nil
}

// capture sends req and writes the exchange to <out>/<name>.json.
func (s *session) capture(name, note string, req kmsg.Request, version int16) (kmsg.Response, error) {
	resp, err := s.request(req, version)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	req.SetVersion(resp.GetVersion())
	n := newNormalizer()
	n.walk(reflect.ValueOf(req))
	n.walk(reflect.ValueOf(resp))
	reqJSON, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("%s: encode request: %w", name, err)
	}
	respJSON, err := json.Marshal(resp)
	if err != nil {
		return nil, fmt.Errorf("%s: encode response: %w", name, err)
	}
	c := kafkaref.Capture{
		Name:         name,
		Note:         note + " (scenario " + s.scenario + ")",
		KafkaVersion: kafkaref.KafkaVersion,
		Key:          req.Key(),
		Version:      resp.GetVersion(),
		Request:      reqJSON,
		Response:     respJSON,
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("%s: encode: %w", name, err)
	}
	path := filepath.Join(s.out, name+".json")
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	s.log.Info("captured", "file", path, "key", req.Key(), "version", resp.GetVersion())
	return resp, nil
}

// waitReady polls Metadata until the broker lists itself: kafka.sh returns
// once the port accepts connections, which is before the broker has
// registered with its controller.
func (s *session) waitReady() error {
	return s.poll("broker ready", func() error {
		req := kmsg.NewPtrMetadataRequest()
		resp, err := s.request(req, -1)
		if err != nil {
			return err
		}
		if len(resp.(*kmsg.MetadataResponse).Brokers) == 0 {
			return errors.New("no brokers in metadata yet")
		}
		return nil
	})
}

// waitTopic polls until every partition of topic has a leader.
func (s *session) waitTopic(topic string) error {
	return s.poll("topic "+topic, func() error {
		req := kmsg.NewPtrMetadataRequest()
		t := kmsg.NewMetadataRequestTopic()
		t.Topic = kmsg.StringPtr(topic)
		req.Topics = append(req.Topics, t)
		resp, err := s.request(req, -1)
		if err != nil {
			return err
		}
		mt := resp.(*kmsg.MetadataResponse).Topics
		if len(mt) != 1 || mt[0].ErrorCode != 0 || len(mt[0].Partitions) == 0 {
			return fmt.Errorf("topic %s not ready: %+v", topic, mt)
		}
		for _, p := range mt[0].Partitions {
			if p.ErrorCode != 0 || p.Leader < 0 {
				return fmt.Errorf("partition %d has no leader", p.Partition)
			}
		}
		return nil
	})
}

// poll retries fn every 200ms for at most 60s.
func (s *session) poll(what string, fn func() error) error {
	deadline := time.Now().Add(60 * time.Second)
	var err error
	for time.Now().Before(deadline) {
		if err = fn(); err == nil {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("waiting for %s: %w", what, err)
}

// normalizer replaces values that change on every run so that a
// regenerated file differs from the committed one only where Kafka's
// behaviour did: non-zero UUIDs become 00000000-…-000N by order of first
// appearance, and cluster ids a fixed placeholder.
type normalizer struct{ uuids map[[16]byte][16]byte }

func newNormalizer() *normalizer { return &normalizer{uuids: map[[16]byte][16]byte{}} }

func (n *normalizer) walk(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			n.walk(v.Elem())
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < v.NumField(); i++ {
			f := v.Field(i)
			if !t.Field(i).IsExported() {
				continue
			}
			if t.Field(i).Name == "ClusterID" && f.CanSet() {
				switch {
				case f.Kind() == reflect.String && f.String() != "":
					f.SetString("<cluster-id>")
				case f.Kind() == reflect.Pointer && !f.IsNil() && f.Elem().Kind() == reflect.String:
					f.Elem().SetString("<cluster-id>")
				}
				continue
			}
			n.walk(f)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			n.walk(v.Index(i))
		}
	case reflect.Array:
		if v.Type() == reflect.TypeOf([16]byte{}) && v.CanSet() {
			id := v.Interface().([16]byte)
			if id == ([16]byte{}) {
				return
			}
			repl, ok := n.uuids[id]
			if !ok {
				repl[15] = byte(len(n.uuids) + 1)
				n.uuids[id] = repl
			}
			v.Set(reflect.ValueOf(repl))
		}
	}
}
