package source

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect"
)

type connectorContext struct{ reconfigure chan struct{} }

func (c connectorContext) RequestTaskReconfiguration() {
	select {
	case c.reconfigure <- struct{}{}:
	default:
	}
}
func (c connectorContext) RaiseError(error)              {}
func (c connectorContext) Offsets() connect.OffsetReader { return nil }

func startConnector(t *testing.T, b bucket, s *settings) (*Connector, connectorContext) {
	t.Helper()
	c := &Connector{newBucket: func(context.Context, *settings) (bucket, error) { return b, nil }}
	cc := connectorContext{make(chan struct{}, 1)}
	c.Initialize(cc)
	if err := c.start(context.Background(), s, map[string]string{"name": "restore"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop() })
	return c, cc
}

// taskPartitions returns each task config's partitions.
func taskPartitions(t *testing.T, c *Connector, maxTasks int) [][]connect.TopicPartition {
	t.Helper()
	cfgs, err := c.TaskConfigs(maxTasks)
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]connect.TopicPartition, len(cfgs))
	for i, cfg := range cfgs {
		if cfg["name"] != "restore" {
			t.Fatalf("task config %d lost the connector's keys: %v", i, cfg)
		}
		if err := json.Unmarshal([]byte(cfg[taskPartitionsConfig]), &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func tp(topic string, p int32) connect.TopicPartition {
	return connect.TopicPartition{Topic: topic, Partition: p}
}

// The connector finds the stored partitions (ignoring side files and
// foreign objects), splits them over the tasks, and asks for new task
// configs when a partition appears.
func TestConnectorFindsAndSplitsPartitions(t *testing.T) {
	s := testSettings(10)
	b := newFakeBucket()
	for _, p := range []int32{0, 1, 2} {
		b.put(objKey(s, "a", p, 0), lines("x", 0, 1))
	}
	k, h := namingOf(s).sideKeys(objKey(s, "b", 7, 0))
	b.put(k, []byte("side files alone are no partition\n"))
	b.put(h, []byte("H:x=y\n"))
	b.put("topics/b/partition=7/junk.txt", []byte("x\n"))
	b.put("elsewhere/a+9+0000000000.txt", []byte("outside topics.dir\n"))

	c, cc := startConnector(t, b, s)
	got := taskPartitions(t, c, 2)
	want := [][]connect.TopicPartition{{tp("a", 0), tp("a", 2)}, {tp("a", 1)}}
	if len(got) != 2 || !slices.Equal(got[0], want[0]) || !slices.Equal(got[1], want[1]) {
		t.Fatalf("task partitions %v, want %v", got, want)
	}

	b.put(objKey(s, "b", 0, 0), lines("x", 0, 1))
	select {
	case <-cc.reconfigure:
	case <-time.After(5 * time.Second):
		t.Fatal("no reconfiguration after a new partition appeared")
	}
	got = taskPartitions(t, c, 10)
	if len(got) != 4 || !slices.Equal(got[3], []connect.TopicPartition{tp("b", 0)}) {
		t.Fatalf("after the new partition: %v", got)
	}
	// Nothing changed since: no more requests.
	select {
	case <-cc.reconfigure:
		t.Fatal("reconfiguration requested with nothing changed")
	case <-time.After(4 * s.pollInterval):
	}
}

// topics and topics.regex restrict the topics restored.
func TestConnectorTopicFilter(t *testing.T) {
	s := testSettings(10)
	s.topics = map[string]bool{"keep": true}
	s.topicsRe = regexp.MustCompile(`^(?:logs-.*)$`)
	b := newFakeBucket()
	for _, topic := range []string{"keep", "drop", "logs-app", "xlogs-app"} {
		b.put(objKey(s, topic, 0, 0), lines("x", 0, 1))
	}
	c, _ := startConnector(t, b, s)
	got := taskPartitions(t, c, 1)
	if len(got) != 1 || !slices.Equal(got[0], []connect.TopicPartition{tp("keep", 0), tp("logs-app", 0)}) {
		t.Fatalf("restored %v, want keep-0 and logs-app-0", got)
	}
}

// An unreachable store does not fail the connector: it starts with no
// task and reconfigures once the listing works.
func TestConnectorStartsWhileS3IsDown(t *testing.T) {
	s := testSettings(10)
	b := newFakeBucket()
	b.put(objKey(s, "a", 0, 0), lines("x", 0, 1))
	b.failLists = 3
	c, cc := startConnector(t, b, s)
	if got := taskPartitions(t, c, 4); len(got) != 0 {
		t.Fatalf("tasks %v before anything was listed", got)
	}
	select {
	case <-cc.reconfigure:
	case <-time.After(10 * time.Second):
		t.Fatal("no reconfiguration once S3 answered")
	}
	if got := taskPartitions(t, c, 4); len(got) != 1 {
		t.Fatalf("tasks %v, want one for a-0", got)
	}
}
