package broker_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/internal/testkit"
)

// produceCounted writes n records keyed "<prefix>-<i>" with acks=all and
// fails the test on any error.
func produceCounted(t *testing.T, cl *kgo.Client, topic, prefix string, n int) {
	t.Helper()
	ctx := testkit.Context(t, 60*time.Second)
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, &kgo.Record{Topic: topic, Key: []byte(fmt.Sprintf("%s-%d", prefix, i)), Value: bytes.Repeat([]byte{byte(i)}, 100)})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce %s: %v", prefix, err)
	}
}

// consumeKeys reads topic from the start until want records arrived and
// returns how often each key was seen.
func consumeKeys(t *testing.T, bootstrap, topic string, want int) map[string]int {
	t.Helper()
	cl := testkit.Client(t, bootstrap, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	defer cl.Close()
	ctx := testkit.Context(t, 60*time.Second)
	seen := map[string]int{}
	total := 0
	for total < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records of %s", total, want, topic)
		}
		fs.EachRecord(func(r *kgo.Record) {
			seen[string(r.Key)]++
			total++
		})
	}
	return seen
}

// sameReplicaLogs waits until every replica of each partition of topic
// has the same log end and then compares their segment files byte for
// byte: replication must copy batches verbatim (offsets, epochs, CRCs).
func sameReplicaLogs(t *testing.T, c *testkit.InProcCluster, topic string, partitions int) {
	t.Helper()
	for p := range partitions {
		dir := fmt.Sprintf("%s-%d", topic, p)
		testkit.CheckFor(t, 20*time.Second, 50*time.Millisecond, func() error {
			var ref []byte
			for _, n := range c.Nodes {
				data, err := readSegments(filepath.Join(n.DataDir, dir))
				if err != nil {
					return fmt.Errorf("node %d: %w", n.ID, err)
				}
				if ref == nil {
					ref = data
					continue
				}
				if !bytes.Equal(ref, data) {
					return fmt.Errorf("%s: node %d has %d bytes, node 1 has %d", dir, n.ID, len(data), len(ref))
				}
			}
			if len(ref) == 0 {
				return fmt.Errorf("%s: no data", dir)
			}
			return nil
		})
	}
}

// readSegments concatenates a partition dir's .log files in name order.
func readSegments(dir string) ([]byte, error) {
	logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil || len(logs) == 0 {
		return nil, fmt.Errorf("no segments in %s", dir)
	}
	var all []byte
	for _, f := range logs {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		all = append(all, b...)
	}
	return all, nil
}

// TestClusterReplication: three combined nodes, a topic with RF 3 and
// min.insync.replicas 2; acks=all writes are readable, every replica's
// log is byte-identical, and a leader that stops cleanly (controlled
// shutdown) hands over without losing or duplicating an acknowledged
// record, also after it comes back.
func TestClusterReplication(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster test; skipped with -short")
	}
	c := testkit.StartInProcCluster(t, 3, nil)
	adm := testkit.Admin(t, c.Bootstrap())
	ctx := testkit.Context(t, 30*time.Second)
	const topic, partitions = "repl", 3
	res, err := adm.CreateTopic(ctx, partitions, 3, map[string]*string{"min.insync.replicas": kadm.StringPtr("2")}, topic)
	if err != nil || res.Err != nil {
		t.Fatalf("create topic: %v %v", err, res.Err)
	}
	cl := testkit.Client(t, c.Bootstrap(), kgo.RequiredAcks(kgo.AllISRAcks()))
	produceCounted(t, cl, topic, "a", 3000)
	seen := consumeKeys(t, c.Bootstrap(), topic, 3000)
	if len(seen) != 3000 {
		t.Fatalf("consumed %d distinct keys, want 3000", len(seen))
	}
	sameReplicaLogs(t, c, topic, partitions)

	// Stop the leader of partition 0; writes go on through the others.
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	leader := md.Topics[topic].Partitions[0].Leader
	t.Logf("stopping node %d, leader of %s-0", leader, topic)
	c.Node(leader).Stop()
	produceCounted(t, cl, topic, "b", 3000)
	c.Node(leader).Start()
	produceCounted(t, cl, topic, "c", 1000)
	seen = consumeKeys(t, c.Bootstrap(), topic, 7000)
	for _, prefix := range []string{"a", "b", "c"} {
		n := map[string]int{"a": 3000, "b": 3000, "c": 1000}[prefix]
		for i := range n {
			if k := prefix + "-" + strconv.Itoa(i); seen[k] != 1 {
				t.Fatalf("key %s seen %d times, want once", k, seen[k])
			}
		}
	}
	sameReplicaLogs(t, c, topic, partitions)
}
