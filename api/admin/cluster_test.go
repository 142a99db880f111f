package admin

import (
	"crypto/rand"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect/herder"
	_ "github.com/fjordhq/fjord/connectors/file"
	_ "github.com/fjordhq/fjord/converters/header"
	_ "github.com/fjordhq/fjord/converters/str"
	"github.com/fjordhq/fjord/internal/testkit"
	"github.com/fjordhq/fjord/internal/testkit/connectkit"
)

func TestClusterAndBrokers(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	e := kxStartOn(t, b.Addr, Options{})
	e.createTopic(t, "a", 3)
	e.createTopic(t, "b", 1)
	if _, err := e.adm.CommitOffsets(testkit.Context(t, 10*time.Second), "g", offsetsOf("a", 0, 0)); err != nil {
		t.Fatal(err) // creates __consumer_offsets (50 partitions in testkit brokers)
	}

	var c clusterInfo
	e.do(t, "GET", "/cluster", nil, http.StatusOK, &c)
	if c.ClusterID == "" || c.ControllerID != 0 || c.Topics != 2 || c.InternalTopics != 1 || c.Partitions != 3+1+50 ||
		c.UnderReplicated != 0 || c.Offline != 0 {
		t.Fatalf("cluster: %+v", c)
	}
	host, port, _ := strings.Cut(b.Addr, ":")
	if len(c.Brokers) != 1 {
		t.Fatalf("brokers: %+v", c.Brokers)
	}
	br := c.Brokers[0]
	if br.NodeID != 0 || br.Host != host || strconv.Itoa(int(br.Port)) != port || br.Rack != nil || !br.IsController || br.LogDirBytes < 0 {
		t.Fatalf("broker: %+v (broker at %s)", br, b.Addr)
	}
	// No Connect worker here, no samples yet.
	if c.Connect.Available || len(c.Connect.Connectors) != 0 || c.Connect.Tasks == nil || c.Throughput != (throughput{}) {
		t.Fatalf("connect %+v, throughput %+v", c.Connect, c.Throughput)
	}

	// The log dir bytes count what is written (random: franz-go
	// compresses batches).
	before := br.LogDirBytes
	value := make([]byte, 10_000)
	rand.Read(value)
	e.produce(t, &kgo.Record{Topic: "a", Value: value})
	var brokers []brokerInfo
	e.do(t, "GET", "/brokers", nil, http.StatusOK, &brokers)
	if len(brokers) != 1 || brokers[0].NodeID != 0 || !brokers[0].IsController || brokers[0].LogDirBytes < before+10_000 {
		t.Fatalf("brokers after writing 10 kB (%d bytes before): %+v", before, brokers)
	}
}

func TestClusterUnreachable(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	e := kxStartOn(t, b.Addr, Options{})
	e.do(t, "GET", "/brokers", nil, http.StatusOK, nil)
	b.Close()
	// Each answers 503 once a metadata request has gone unanswered for
	// metadataTimeout, not after the calls' own retries.
	for _, r := range [][2]string{{"GET", "/cluster"}, {"POST", "/topics"}, {"GET", "/groups"}} {
		start := time.Now()
		e.wantError(t, r[0], r[1], map[string]any{"name": "x"}, http.StatusServiceUnavailable, "the Kafka cluster could not be reached")
		if d := time.Since(start); d > metadataTimeout+3*time.Second {
			t.Fatalf("%s %s: 503 after %v", r[0], r[1], d)
		}
	}
}

// kxStartWorker starts a standalone Connect worker (the runtime Worker
// under the standalone herder, as fjord connect-standalone runs them)
// on the broker at addr.
func kxStartWorker(t *testing.T, addr string) *herder.Standalone {
	t.Helper()
	const conv = "org.apache.kafka.connect.storage.StringConverter"
	return connectkit.Start(t, addr, connectkit.Options{
		Props:         map[string]string{"key.converter": conv, "value.converter": conv},
		TopicTracking: true,
	}).H
}

func TestClusterConnect(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	h := kxStartWorker(t, b.Addr)
	e := kxStartOn(t, b.Addr, Options{Herder: h})
	e.createTopic(t, "lines", 1)
	ctx := testkit.Context(t, 30*time.Second)
	for _, name := range []string{"running", "paused"} {
		file := filepath.Join(t.TempDir(), name+".txt")
		if err := os.WriteFile(file, []byte("one\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := h.PutConnectorConfig(ctx, name, map[string]string{"name": name, "connector.class": "FileStreamSource",
			"file": file, "topic": "lines", "tasks.max": "1"}, "", false); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.PauseConnector(ctx, "paused"); err != nil {
		t.Fatal(err)
	}
	testkit.CheckFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		var c clusterInfo
		e.do(t, "GET", "/cluster", nil, http.StatusOK, &c)
		if got := fmt.Sprint(c.Connect); got != "{true map[PAUSED:1 RUNNING:1] map[PAUSED:1 RUNNING:1]}" {
			return fmt.Errorf("connect: %s", got)
		}
		return nil
	})
}
