package mirror_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	_ "github.com/fjordhq/fjord/converters/bytearray"
	_ "github.com/fjordhq/fjord/converters/header"
	_ "github.com/fjordhq/fjord/converters/json"
	"github.com/fjordhq/fjord/internal/testkit"
	"github.com/fjordhq/fjord/internal/testkit/connectkit"
	_ "github.com/fjordhq/fjord/mirror/checkpoint"
	_ "github.com/fjordhq/fjord/mirror/source"
)

// The end-to-end tests run the real connectors, registered by the blank
// imports above, on Connect workers in the test process, between
// in-process brokers that stand for datacenters.

const byteArray = "org.apache.kafka.connect.converters.ByteArrayConverter"

// cluster is an in-process broker standing for one datacenter.
type cluster struct {
	alias  string
	addr   string
	broker *testkit.Broker
	adm    *kadm.Client
}

func startCluster(t *testing.T, alias string) *cluster {
	t.Helper()
	b := testkit.StartBroker(t, nil)
	return &cluster{alias: alias, addr: b.Addr, broker: b, adm: testkit.Admin(t, b.Addr)}
}

// startWorker runs a Connect worker on c. Its own converters are JSON
// (connectkit's default): the mirror connectors carry ByteArrayConverter
// in their configs, as on Kafka Connect, so bytes arrive unchanged only
// if the runtime honours those.
func startWorker(t *testing.T, c *cluster) *connectkit.Worker {
	t.Helper()
	return connectkit.Start(t, c.addr, connectkit.Options{})
}

// flowConfig holds the keys every mirror connector of source → target
// takes, with test-sized intervals and replication factors; extra is
// key, value pairs that override them.
func flowConfig(name, class string, source, target *cluster, extra ...string) map[string]string {
	cfg := map[string]string{
		"name": name, "connector.class": class, "tasks.max": "2",
		"source.cluster.alias": source.alias, "target.cluster.alias": target.alias,
		"source.cluster.bootstrap.servers": source.addr, "target.cluster.bootstrap.servers": target.addr,
		"key.converter": byteArray, "value.converter": byteArray, "header.converter": byteArray,
		"replication.factor": "1", "offset-syncs.topic.replication.factor": "1",
		"checkpoints.topic.replication.factor": "1",
	}
	for i := 0; i+1 < len(extra); i += 2 {
		cfg[extra[i]] = extra[i+1]
	}
	return cfg
}

// sourceConfig is a MirrorSourceConnector that notices new topics and
// partitions within a second.
func sourceConfig(name string, source, target *cluster, extra ...string) map[string]string {
	base := []string{"refresh.topics.interval.seconds", "1", "sync.topic.configs.interval.seconds", "1",
		"consumer.poll.timeout.ms", "200"}
	return flowConfig(name, "MirrorSourceConnector", source, target, append(base, extra...)...)
}

// checkpointConfig is a MirrorCheckpointConnector that finds new groups,
// emits checkpoints and syncs group offsets every second.
func checkpointConfig(name string, source, target *cluster, extra ...string) map[string]string {
	base := []string{"refresh.groups.interval.seconds", "1", "emit.checkpoints.interval.seconds", "1",
		"sync.group.offsets.enabled", "true", "sync.group.offsets.interval.seconds", "1"}
	return flowConfig(name, "MirrorCheckpointConnector", source, target, append(base, extra...)...)
}

func (c *cluster) createTopic(t *testing.T, topic string, partitions int32) {
	t.Helper()
	resp, err := c.adm.CreateTopic(testkit.Context(t, 10*time.Second), partitions, 1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create %s on %s: %v", topic, c.alias, err)
	}
}

// produce writes records synchronously, each to the partition it names.
func (c *cluster) produce(t *testing.T, rs ...*kgo.Record) {
	t.Helper()
	cl := testkit.Client(t, c.addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	defer cl.Close()
	if err := cl.ProduceSync(testkit.Context(t, 10*time.Second), rs...).FirstErr(); err != nil {
		t.Fatalf("produce to %s: %v", c.alias, err)
	}
}

// readAll reads a topic from the start to its current end, by partition.
func (c *cluster) readAll(t *testing.T, topic string) (map[int32][]*kgo.Record, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ends, err := c.adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, err
	}
	if err := ends.Error(); err != nil {
		return nil, fmt.Errorf("%s on %s: %w", topic, c.alias, err)
	}
	end := map[int32]int64{}
	total := int64(0)
	ends.Each(func(o kadm.ListedOffset) {
		end[o.Partition] = o.Offset
		total += o.Offset
	})
	out := map[int32][]*kgo.Record{}
	for p := range end {
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
	for got := int64(0); got < total; {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("read %s on %s: %d of %d records: %w", topic, c.alias, got, total, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset < end[r.Partition] {
				out[r.Partition] = append(out[r.Partition], r)
				got++
			}
		})
	}
	return out, nil
}

// userTopics lists c's topics without the internal ones (Kafka's and
// the mirror's *.internal topics).
func (c *cluster) userTopics(t *testing.T) []string {
	t.Helper()
	td, err := c.adm.ListTopics(testkit.Context(t, 10*time.Second))
	if err != nil {
		t.Fatalf("list topics on %s: %v", c.alias, err)
	}
	var out []string
	for _, name := range slices.Sorted(maps.Keys(td)) {
		if !strings.HasPrefix(name, "__") && !strings.HasSuffix(name, ".internal") {
			out = append(out, name)
		}
	}
	return out
}

// ordersRecords makes records first..first+n-1 of each of partitions
// partitions of topic, written at origin. Values are
// "<origin>-<partition>-<seq>"; keys, timestamps and headers (a repeated
// key and a null value among them) are per record, so that a mirror that
// mixes up or drops any of them shows.
func ordersRecords(topic, origin string, partitions int32, first, n int) []*kgo.Record {
	base := time.UnixMilli(1_700_000_000_000)
	var rs []*kgo.Record
	for p := range partitions {
		for i := first; i < first+n; i++ {
			rs = append(rs, &kgo.Record{Topic: topic, Partition: p,
				Key:       fmt.Appendf(nil, "k-%d", i),
				Value:     fmt.Appendf(nil, "%s-%d-%d", origin, p, i),
				Timestamp: base.Add(time.Duration(int(p)*100_000+i) * time.Millisecond),
				Headers: []kgo.RecordHeader{{Key: "origin", Value: []byte(origin)},
					{Key: "seq", Value: fmt.Appendf(nil, "%d", i)}, {Key: "origin", Value: nil}},
			})
		}
	}
	return rs
}

// byPartition groups records as readAll returns them.
func byPartition(rs []*kgo.Record) map[int32][]*kgo.Record {
	out := map[int32][]*kgo.Record{}
	for _, r := range rs {
		out[r.Partition] = append(out[r.Partition], r)
	}
	return out
}

// sameRecords compares what a topic holds with what it must hold:
// the same partitions, each with the same records in the same order.
func sameRecords(got, want map[int32][]*kgo.Record) error {
	for p := range got {
		if _, ok := want[p]; !ok && len(got[p]) > 0 {
			return fmt.Errorf("partition %d holds %d records, want none", p, len(got[p]))
		}
	}
	for p, ws := range want {
		gs := got[p]
		if len(gs) != len(ws) {
			return fmt.Errorf("partition %d holds %d records, want %d", p, len(gs), len(ws))
		}
		for i := range ws {
			if err := sameRecord(ws[i], gs[i]); err != nil {
				return fmt.Errorf("partition %d record %d: %w", p, i, err)
			}
		}
	}
	return nil
}

// sameRecord compares what mirroring must keep: key, value, timestamp
// and headers (order, repeated keys and null values included).
func sameRecord(want, got *kgo.Record) error {
	if string(want.Key) != string(got.Key) || (want.Key == nil) != (got.Key == nil) {
		return fmt.Errorf("key %q, want %q", got.Key, want.Key)
	}
	if string(want.Value) != string(got.Value) || (want.Value == nil) != (got.Value == nil) {
		return fmt.Errorf("value %q, want %q", got.Value, want.Value)
	}
	if !want.Timestamp.Equal(got.Timestamp) {
		return fmt.Errorf("%s: timestamp %v, want %v", want.Value, got.Timestamp, want.Timestamp)
	}
	if len(want.Headers) != len(got.Headers) {
		return fmt.Errorf("%s: headers %v, want %v", want.Value, got.Headers, want.Headers)
	}
	for i, hw := range want.Headers {
		hg := got.Headers[i]
		if hw.Key != hg.Key || string(hw.Value) != string(hg.Value) || (hw.Value == nil) != (hg.Value == nil) {
			return fmt.Errorf("%s: header %d %s=%q, want %s=%q", want.Value, i, hg.Key, hg.Value, hw.Key, hw.Value)
		}
	}
	return nil
}

// waitHolds waits until topic on c holds exactly want.
func waitHolds(t *testing.T, c *cluster, topic string, want map[int32][]*kgo.Record, wait time.Duration) {
	t.Helper()
	testkit.CheckFor(t, wait, 200*time.Millisecond, func() error {
		got, err := c.readAll(t, topic)
		if err != nil {
			return err
		}
		if err := sameRecords(got, want); err != nil {
			return fmt.Errorf("%s on %s: %w", topic, c.alias, err)
		}
		return nil
	})
}

// noFailures fails t if a connector or task of any worker has failed.
func noFailures(t *testing.T, ws ...*connectkit.Worker) {
	t.Helper()
	for _, w := range ws {
		if err := w.Failed(); err != nil {
			t.Fatal(err)
		}
	}
}
