package source

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	_ "github.com/fjordhq/fjord/converters/bytearray"
	_ "github.com/fjordhq/fjord/converters/header"
	_ "github.com/fjordhq/fjord/converters/json"
	"github.com/fjordhq/fjord/internal/testkit"
	"github.com/fjordhq/fjord/internal/testkit/connectkit"
)

const byteArray = "org.apache.kafka.connect.converters.ByteArrayConverter"

// cluster is an in-process broker standing for one datacenter.
type cluster struct {
	alias string
	addr  string
	adm   *kadm.Client
}

func startCluster(t *testing.T, alias string) *cluster {
	t.Helper()
	b := testkit.StartBroker(t, nil)
	return &cluster{alias: alias, addr: b.Addr, adm: testkit.Admin(t, b.Addr)}
}

// startWorker runs a Connect worker on the target cluster. Its own
// converters are JSON (connectkit's default) and SimpleHeaderConverter:
// the connectors set ByteArrayConverter in their configs, as MM2's
// dedicated mode does, and the bytes arrive unchanged only if the
// runtime honours those connector-level keys.
func startWorker(t *testing.T, target *cluster, offsetsFile string) *connectkit.Worker {
	t.Helper()
	return connectkit.Start(t, target.addr, connectkit.Options{OffsetsFile: offsetsFile})
}

// mirrorConfig is a MirrorSourceConnector config for source → target
// with test-sized intervals and replication factors; extra is key,
// value pairs.
func mirrorConfig(name string, source, target *cluster, extra ...string) map[string]string {
	cfg := map[string]string{
		"name": name, "connector.class": "MirrorSourceConnector", "tasks.max": "2",
		"source.cluster.alias": source.alias, "target.cluster.alias": target.alias,
		"source.cluster.bootstrap.servers": source.addr, "target.cluster.bootstrap.servers": target.addr,
		"replication.factor": "1", "offset-syncs.topic.replication.factor": "1",
		"key.converter": byteArray, "value.converter": byteArray, "header.converter": byteArray,
		"refresh.topics.interval.seconds": "1", "sync.topic.configs.interval.seconds": "1",
		"consumer.poll.timeout.ms": "200",
	}
	for i := 0; i+1 < len(extra); i += 2 {
		cfg[extra[i]] = extra[i+1]
	}
	return cfg
}

func (c *cluster) createTopic(t *testing.T, topic string, partitions int32, configs map[string]*string) {
	t.Helper()
	if _, err := c.adm.CreateTopic(testkit.Context(t, 10*time.Second), partitions, 1, configs, topic); err != nil {
		t.Fatalf("create %s on %s: %v", topic, c.alias, err)
	}
}

// produce writes records synchronously, each to the partition it names.
func (c *cluster) produce(t *testing.T, rs ...*kgo.Record) {
	t.Helper()
	cl := testkit.Client(t, c.addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := cl.ProduceSync(testkit.Context(t, 10*time.Second), rs...).FirstErr(); err != nil {
		t.Fatalf("produce to %s: %v", c.alias, err)
	}
}

// readAll reads a topic from the start to its current end, by partition.
func (c *cluster) readAll(t *testing.T, topic string) (map[int32][]*kgo.Record, error) {
	t.Helper()
	ctx := testkit.Context(t, 10*time.Second)
	ends, err := c.adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, err
	}
	if err := ends.Error(); err != nil {
		return nil, err
	}
	want := map[int32]int64{}
	total := int64(0)
	ends.Each(func(o kadm.ListedOffset) {
		want[o.Partition] = o.Offset
		total += o.Offset
	})
	out := map[int32][]*kgo.Record{}
	for p := range want {
		out[p] = nil
	}
	if total == 0 {
		return out, nil
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.addr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	got := int64(0)
	for got < total {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("read %s on %s: %d of %d records: %w", topic, c.alias, got, total, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset < want[r.Partition] {
				out[r.Partition] = append(out[r.Partition], r)
				got++
			}
		})
	}
	return out, nil
}

// partitions returns a topic's partition count, 0 when it does not exist.
func (c *cluster) partitions(t *testing.T, topic string) int {
	t.Helper()
	td, err := c.adm.ListTopics(context.Background(), topic)
	if err != nil || td[topic].Err != nil {
		return 0
	}
	return len(td[topic].Partitions)
}

// topicConfig returns a topic's config value and whether it is set on
// the topic itself.
func (c *cluster) topicConfig(t *testing.T, topic, key string) (string, bool) {
	t.Helper()
	rcs, err := c.adm.DescribeTopicConfigs(context.Background(), topic)
	if err != nil || len(rcs) == 0 || rcs[0].Err != nil {
		return "", false
	}
	for _, cfg := range rcs[0].Configs {
		if cfg.Key == key {
			return cfg.MaybeValue(), cfg.Source == 1 // DYNAMIC_TOPIC_CONFIG
		}
	}
	return "", false
}

func (c *cluster) topics(t *testing.T) []string {
	t.Helper()
	td, err := c.adm.ListTopics(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return slices.Sorted(maps.Keys(td))
}

// sameRecord compares what mirroring must keep.
func sameRecord(a, b *kgo.Record) error {
	if string(a.Key) != string(b.Key) || (a.Key == nil) != (b.Key == nil) {
		return fmt.Errorf("key %q, want %q", b.Key, a.Key)
	}
	if string(a.Value) != string(b.Value) || (a.Value == nil) != (b.Value == nil) {
		return fmt.Errorf("value %q, want %q", b.Value, a.Value)
	}
	if !a.Timestamp.Equal(b.Timestamp) {
		return fmt.Errorf("timestamp %v, want %v", b.Timestamp, a.Timestamp)
	}
	if len(a.Headers) != len(b.Headers) {
		return fmt.Errorf("headers %v, want %v", b.Headers, a.Headers)
	}
	for i := range a.Headers {
		ha, hb := a.Headers[i], b.Headers[i]
		if ha.Key != hb.Key || string(ha.Value) != string(hb.Value) {
			return fmt.Errorf("header %d %s=%q, want %s=%q", i, hb.Key, hb.Value, ha.Key, ha.Value)
		}
	}
	return nil
}
