package source

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/internal/testkit"
	"github.com/fjordhq/fjord/mirror/records"
)

// The remote topics follow the source: configs at creation and when they
// change, new partitions, new topics.
func TestMirrorFollowsSource(t *testing.T) {
	a, b := startCluster(t, "a"), startCluster(t, "b")
	a.createTopic(t, "t1", 1, map[string]*string{
		"retention.ms":        kadm.StringPtr("123456789"),
		"min.insync.replicas": kadm.StringPtr("1"), // in config.properties.exclude's default
	})
	a.produce(t, &kgo.Record{Topic: "t1", Partition: 0, Value: []byte("one")})

	w := startWorker(t, b, "")
	w.Create(t, mirrorConfig("mirror", a, b, "topics", "t.*"))
	checkMirrored(t, a, b, "t1", "a.t1", 15*time.Second)
	if v, set := b.topicConfig(t, "a.t1", "retention.ms"); v != "123456789" || !set {
		t.Errorf("a.t1 retention.ms = %q (set on the topic: %v), want the source's 123456789", v, set)
	}
	if _, set := b.topicConfig(t, "a.t1", "min.insync.replicas"); set {
		t.Error("min.insync.replicas was copied despite config.properties.exclude")
	}

	// A config change on the source reaches the target at the next sync.
	alter := []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: kadm.StringPtr("987654321")}}
	if _, err := a.adm.AlterTopicConfigs(context.Background(), alter, "t1"); err != nil {
		t.Fatal(err)
	}
	testkit.CheckFor(t, 10*time.Second, 200*time.Millisecond, func() error {
		if v, _ := b.topicConfig(t, "a.t1", "retention.ms"); v != "987654321" {
			return fmt.Errorf("a.t1 retention.ms = %q", v)
		}
		return nil
	})

	// New partitions on the source: the remote topic grows, and records of
	// the new partitions land in the partitions of the same number.
	if _, err := a.adm.UpdatePartitions(context.Background(), 3, "t1"); err != nil {
		t.Fatal(err)
	}
	a.produce(t, &kgo.Record{Topic: "t1", Partition: 2, Value: []byte("two")},
		&kgo.Record{Topic: "t1", Partition: 1, Value: []byte("three")})
	checkMirrored(t, a, b, "t1", "a.t1", 15*time.Second)

	// A new topic appears and is mirrored.
	a.createTopic(t, "t2", 2, nil)
	a.produce(t, &kgo.Record{Topic: "t2", Partition: 1, Key: []byte("k"), Value: []byte("new")})
	checkMirrored(t, a, b, "t2", "a.t2", 15*time.Second)
	if err := w.Failed(); err != nil {
		t.Fatal(err)
	}
}

// A restarted worker resumes after the last record it replicated: none
// is lost or written twice after a clean stop.
func TestMirrorResumes(t *testing.T) {
	a, b := startCluster(t, "a"), startCluster(t, "b")
	a.createTopic(t, "orders", 2, nil)
	a.produce(t, ordersRecords(2, 0, 10)...)
	offsets := filepath.Join(t.TempDir(), "connect.offsets")

	w := startWorker(t, b, offsets)
	cfg := mirrorConfig("mirror", a, b, "topics", "orders", "offset-syncs.topic.location", "target")
	w.Create(t, cfg)
	checkMirrored(t, a, b, "orders", "a.orders", 15*time.Second)
	time.Sleep(300 * time.Millisecond) // a few offset flushes (100 ms)
	w.Close()

	a.produce(t, ordersRecords(2, 10, 10)...)
	w = startWorker(t, b, offsets)
	w.Create(t, cfg)
	checkMirrored(t, a, b, "orders", "a.orders", 15*time.Second)
	// Nothing more arrives later (a replay would add duplicates).
	time.Sleep(time.Second)
	checkMirrored(t, a, b, "orders", "a.orders", time.Second)

	// offset-syncs.topic.location=target: the syncs are on the target,
	// named for the source; the second run's first records were synced.
	syncs, err := b.readAll(t, "mm2-offset-syncs.a.internal")
	if err != nil {
		t.Fatal(err)
	}
	resumed := map[int32]bool{}
	for _, r := range syncs[0] {
		s, err := records.DecodeOffsetSync(r.Key, r.Value)
		if err != nil {
			t.Fatal(err)
		}
		if s.UpstreamOffset == 10 {
			resumed[s.Partition] = true
		}
	}
	if len(resumed) != 2 {
		t.Errorf("the resumed task's first records were not synced: %v", syncs[0])
	}
	if slices.Contains(a.topics(t), "mm2-offset-syncs.b.internal") {
		t.Error("offset syncs topic created on the source")
	}
}

// A replication factor the target cannot have fails the connector with a
// message naming it (MM2 only logs it and replicates nothing), for the
// offset-syncs topic and for remote topics; records wait on the source.
func TestMirrorRefusesReplicationFactor(t *testing.T) {
	a, b := startCluster(t, "a"), startCluster(t, "b")
	a.createTopic(t, "orders", 2, nil)
	a.produce(t, ordersRecords(2, 0, 3)...)
	w := startWorker(t, b, "")

	// MM2's defaults: 3 for the offset-syncs topic, 2 for remote topics.
	cfg := mirrorConfig("syncs", a, b, "topics", "orders")
	delete(cfg, "offset-syncs.topic.replication.factor")
	delete(cfg, "replication.factor")
	w.Create(t, cfg)
	trace := w.WaitFailed(t, "syncs", 10*time.Second)
	if !strings.Contains(trace, "mm2-offset-syncs.b.internal") {
		t.Errorf("trace does not name the offset-syncs topic: %s", trace)
	}
	w.Delete(t, "syncs")

	cfg = mirrorConfig("remote", a, b, "topics", "orders")
	delete(cfg, "replication.factor")
	w.Create(t, cfg)
	trace = w.WaitFailed(t, "remote", 10*time.Second)
	if !strings.Contains(trace, "a.orders") || !strings.Contains(trace, "replication.factor=2") {
		t.Errorf("trace does not name the remote topic and setting: %s", trace)
	}
	if slices.Contains(b.topics(t), "a.orders") {
		t.Error("a.orders was created on the target anyway")
	}
}

// A source cluster that is down when the connector starts does not fail
// it: the listing is retried with backoff, and once the source is up its
// topics are created on the target and mirrored without waiting for
// refresh.topics.interval.seconds.
func TestMirrorWaitsForSource(t *testing.T) {
	b := startCluster(t, "b")
	a := &cluster{alias: "a", addr: testkit.FreeAddr(t)}
	w := startWorker(t, b, "")
	w.Create(t, mirrorConfig("mirror", a, b, "topics", "orders", "admin.timeout.ms", "500",
		"refresh.topics.interval.seconds", "600"))
	time.Sleep(1500 * time.Millisecond)
	if err := w.Failed(); err != nil {
		t.Fatalf("an unreachable source failed the connector: %v", err)
	}

	broker := testkit.StartBroker(t, map[string]string{"listeners": "PLAINTEXT://" + a.addr})
	a.adm = testkit.Admin(t, broker.Addr)
	a.createTopic(t, "orders", 2, nil)
	a.produce(t, ordersRecords(2, 0, 5)...)
	checkMirrored(t, a, b, "orders", "a.orders", 20*time.Second)
}
