package checkpoint_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	_ "github.com/fjordhq/fjord/converters/bytearray"
	"github.com/fjordhq/fjord/internal/testkit"
	"github.com/fjordhq/fjord/internal/testkit/connectkit"
	"github.com/fjordhq/fjord/mirror/checkpoint"
	"github.com/fjordhq/fjord/mirror/records"
)

func createTopic(t *testing.T, adm *kadm.Client, topic string, parts int32, configs map[string]*string) {
	t.Helper()
	r, err := adm.CreateTopic(testkit.Context(t, 10*time.Second), parts, 1, configs, topic)
	if err == nil {
		err = r.Err
	}
	if err != nil {
		t.Fatalf("create %s: %v", topic, err)
	}
}

func commit(t *testing.T, adm *kadm.Client, group, topic string, offsets map[int32]int64) {
	t.Helper()
	offs := kadm.Offsets{}
	for p, at := range offsets {
		offs.Add(kadm.Offset{Topic: topic, Partition: p, At: at, LeaderEpoch: -1})
	}
	resp, err := adm.CommitOffsets(testkit.Context(t, 10*time.Second), group, offs)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("commit %s: %v", group, err)
	}
}

func configValue(cs []kadm.Config, name string) string {
	for _, c := range cs {
		if c.Key == name && c.Value != nil {
			return *c.Value
		}
	}
	return ""
}

func committedOn(t *testing.T, adm *kadm.Client, group, topic string, p int32) (int64, error) {
	got, err := adm.FetchOffsets(testkit.Context(t, 5*time.Second), group)
	if err != nil {
		return 0, err
	}
	o, ok := got.Lookup(topic, p)
	if !ok {
		return -1, nil
	}
	return o.At, o.Err
}

// readCheckpoints reads the checkpoints topic to its end and returns the
// latest checkpoint per "group/topic/partition".
func readCheckpoints(t *testing.T, addr, topic string) map[string]records.Checkpoint {
	t.Helper()
	cl := testkit.Client(t, addr, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	defer cl.Close()
	ctx := testkit.Context(t, 10*time.Second)
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	end, _ := ends.Lookup(topic, 0)
	out := map[string]records.Checkpoint{}
	for next := int64(0); next < end.Offset; {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading %s: %v", topic, ctx.Err())
		}
		fs.EachRecord(func(r *kgo.Record) {
			cp, err := records.DecodeCheckpoint(r.Key, r.Value)
			if err != nil {
				t.Fatalf("checkpoint at %d does not decode: %v", r.Offset, err)
			}
			out[fmt.Sprintf("%s/%s/%d", cp.ConsumerGroupID, cp.Topic, cp.Partition)] = cp
			next = r.Offset + 1
		})
	}
	return out
}

// waitCheckpoint waits until the checkpoint of key satisfies ok.
func waitCheckpoint(t *testing.T, w *connectkit.Worker, addr, key string, ok func(records.Checkpoint) bool) records.Checkpoint {
	t.Helper()
	var cp records.Checkpoint
	testkit.CheckFor(t, 20*time.Second, 200*time.Millisecond, func() error {
		if err := w.Failed(); err != nil {
			t.Fatal(err)
		}
		cps := readCheckpoints(t, addr, "a.checkpoints.internal")
		var found bool
		if cp, found = cps[key]; !found || !ok(cp) {
			return fmt.Errorf("checkpoint %s: %+v (found %v)", key, cp, found)
		}
		return nil
	})
	return cp
}

// TestCheckpointsAndFailover runs the checkpoint connector on a Connect
// worker of cluster b against hand-made offset syncs on cluster a: the
// checkpoints decode to translations that never skip a record, new
// syncs and new groups are picked up while it runs, and with
// sync.group.offsets.enabled a consumer of the group on b resumes from
// them, missing nothing and re-reading at most offset.lag.max records
// where the group had caught up.
func TestCheckpointsAndFailover(t *testing.T) {
	testkit.SkipShort(t, "two brokers and a Connect worker")
	a := testkit.StartBroker(t, nil)
	b := testkit.StartBroker(t, nil)
	aAdm, bAdm := testkit.Admin(t, a.Addr), testkit.Admin(t, b.Addr)
	compact := "compact"
	createTopic(t, aAdm, "orders", partitions, nil)
	createTopic(t, aAdm, syncsTopic, 1, map[string]*string{"cleanup.policy": &compact})
	createTopic(t, bAdm, "a.orders", partitions, nil)
	rp := newReplica(t, a.Addr, b.Addr)
	for p := int32(0); p < partitions; p++ {
		rp.produce(t, p, 100)
	}

	// A one-off translation from the syncs topic (what `fjord mirror
	// status` may do).
	store, err := checkpoint.LoadOffsetSyncs(testkit.Context(t, 10*time.Second), testkit.Client(t, a.Addr), syncsTopic)
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := checkpoint.TranslateOffset(store, "orders", 0, rp.end(0)); !ok || d != rp.lastSync[0].DownstreamOffset+1 {
		t.Fatalf("TranslateOffset(end of orders-0) = %d, %v; want %d", d, ok, rp.lastSync[0].DownstreamOffset+1)
	}
	if _, ok := checkpoint.TranslateOffset(store, "orders", 7, 0); ok {
		t.Fatal("translated a partition without syncs")
	}

	// The application consumed all of partition 0 and part of partition
	// 1 on a; connect-* groups are excluded by default.
	groupAt := map[int32]int64{0: rp.end(0), 1: 57}
	commit(t, aAdm, "app", "orders", groupAt)
	commit(t, aAdm, "connect-sink", "orders", map[int32]int64{0: 50})

	w := connectkit.Start(t, b.Addr, connectkit.Options{})
	w.Create(t, map[string]string{
		"name":                                 "a->b checkpoints",
		"connector.class":                      checkpoint.ConnectorClass,
		"tasks.max":                            "2",
		"source.cluster.alias":                 "a",
		"target.cluster.alias":                 "b",
		"source.cluster.bootstrap.servers":     a.Addr,
		"target.cluster.bootstrap.servers":     b.Addr,
		"key.converter":                        "org.apache.kafka.connect.converters.ByteArrayConverter",
		"value.converter":                      "org.apache.kafka.connect.converters.ByteArrayConverter",
		"header.converter":                     "org.apache.kafka.connect.converters.ByteArrayConverter",
		"emit.checkpoints.interval.seconds":    "1",
		"refresh.groups.interval.seconds":      "1",
		"sync.group.offsets.enabled":           "true",
		"sync.group.offsets.interval.seconds":  "1",
		"checkpoints.topic.replication.factor": "1",
	})

	cps := map[int32]records.Checkpoint{}
	for p := int32(0); p < partitions; p++ {
		cps[p] = waitCheckpoint(t, w, b.Addr, fmt.Sprintf("app/a.orders/%d", p), func(records.Checkpoint) bool { return true })
		if cps[p].UpstreamOffset != groupAt[p] {
			t.Errorf("partition %d: checkpoint upstream %d, want the group's %d", p, cps[p].UpstreamOffset, groupAt[p])
		}
		if first := rp.firstAtOrAfter(p, groupAt[p]); cps[p].DownstreamOffset > first {
			t.Errorf("partition %d: checkpoint %d -> %d skips downstream record %d", p, cps[p].UpstreamOffset, cps[p].DownstreamOffset, first)
		}
	}
	// At the end of partition 0 the last sync translates: one past it.
	if s := rp.lastSync[0]; cps[0].DownstreamOffset != s.DownstreamOffset+1 {
		t.Errorf("partition 0: checkpoint %+v, want downstream %d (one past the last sync %+v)", cps[0], s.DownstreamOffset+1, s)
	}
	// The connector created the checkpoints topic compacted, as MM2.
	cfgs, err := bAdm.DescribeTopicConfigs(testkit.Context(t, 5*time.Second), "a.checkpoints.internal")
	if err != nil {
		t.Fatal(err)
	}
	if c, err := cfgs.On("a.checkpoints.internal", nil); err != nil {
		t.Fatal(err)
	} else if v := configValue(c.Configs, "cleanup.policy"); v != "compact" {
		t.Errorf("checkpoints topic cleanup.policy %q, want compact", v)
	}
	for k := range readCheckpoints(t, b.Addr, "a.checkpoints.internal") {
		if strings.HasPrefix(k, "connect-sink/") {
			t.Errorf("checkpoint for an excluded group: %s", k)
		}
	}

	// The group does not exist on b: its translated offsets are written.
	testkit.CheckFor(t, 20*time.Second, 200*time.Millisecond, func() error {
		for p := int32(0); p < partitions; p++ {
			at, err := committedOn(t, bAdm, "app", "a.orders", p)
			if err != nil || at != cps[p].DownstreamOffset {
				return fmt.Errorf("group app on b at a.orders-%d: %d (%v), want %d", p, at, err, cps[p].DownstreamOffset)
			}
		}
		return nil
	})

	// Fail over: the application's group consumes a.orders on b.
	failoverConsume(t, b.Addr, rp, groupAt)

	// Offsets ahead of the translation on b are never moved back.
	commit(t, bAdm, "app", "a.orders", map[int32]int64{1: 70})
	time.Sleep(2500 * time.Millisecond)
	if at, err := committedOn(t, bAdm, "app", "a.orders", 1); err != nil || at != 70 {
		t.Fatalf("group app on b at a.orders-1 moved from 70 to %d (%v)", at, err)
	}

	// The task follows the offset-syncs topic: more records and syncs on
	// partition 1, the group catches up on a, and the next checkpoint is
	// one past the new last sync.
	rp.produce(t, 1, 40)
	commit(t, aAdm, "app", "orders", map[int32]int64{1: rp.end(1)})
	want := rp.lastSync[1].DownstreamOffset + 1
	waitCheckpoint(t, w, b.Addr, "app/a.orders/1", func(cp records.Checkpoint) bool {
		return cp.UpstreamOffset == rp.end(1) && cp.DownstreamOffset == want
	})
	// The group on b was behind (70): it moves forward.
	testkit.CheckFor(t, 20*time.Second, 200*time.Millisecond, func() error {
		if at, err := committedOn(t, bAdm, "app", "a.orders", 1); err != nil || at != want {
			return fmt.Errorf("group app on b at a.orders-1: %d (%v), want %d", at, err, want)
		}
		return nil
	})

	// checkpoint-latency-ms is recorded per group and partition.
	seen := 0
	for _, l := range checkpoint.DefaultMetrics.Latencies() {
		if l.Source == "a" && l.Target == "b" && l.Group == "app" && l.Topic == "a.orders" {
			seen++
			if l.Last < 0 || l.Max < l.Min || l.Avg < l.Min || l.Avg > l.Max {
				t.Errorf("latency %+v", l)
			}
		}
	}
	if seen != partitions {
		t.Errorf("latency series for app: %d, want %d: %+v", seen, partitions, checkpoint.DefaultMetrics.Latencies())
	}

	// A group that appears on a later is found by the refresh (the tasks
	// are reconfigured; their latency series go with the old tasks).
	commit(t, aAdm, "late", "orders", map[int32]int64{0: 30})
	waitCheckpoint(t, w, b.Addr, "late/a.orders/0", func(cp records.Checkpoint) bool { return cp.UpstreamOffset == 30 })
}

// failoverConsume consumes a.orders on b in group "app" from its
// committed offsets until every replicated record the application had
// not consumed on a has been read: none may be missing, and on the
// partition the group had finished no more than offset.lag.max records
// it had already consumed are read again.
func failoverConsume(t *testing.T, addr string, rp *replica, groupAt map[int32]int64) {
	t.Helper()
	cl := testkit.Client(t, addr, kgo.ConsumerGroup("app"), kgo.ConsumeTopics("a.orders"),
		kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	// Leaving the group on return lets it go Empty again.
	defer cl.Close()
	want := 0
	for p := int32(0); p < partitions; p++ {
		want += rp.replicatedFrom(p, groupAt[p])
	}
	seen := map[string]bool{}
	reread := map[int32]int{}
	ctx := testkit.Context(t, 20*time.Second)
	for len(seen) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records after failover", len(seen), want)
		}
		fs.EachRecord(func(r *kgo.Record) {
			var p int32
			var u int64
			if _, err := fmt.Sscanf(string(r.Value), "p%d-u%d", &p, &u); err != nil {
				t.Fatalf("record %q: %v", r.Value, err)
			}
			if u < groupAt[p] {
				reread[p]++
				return
			}
			seen[string(r.Value)] = true
		})
	}
	if reread[0] > offsetLag {
		t.Fatalf("re-read %d records of partition 0, more than offset.lag.max %d", reread[0], offsetLag)
	}
	t.Logf("failover: %d records, re-read %v (partition 1 resumed through an older, sparser sync)", len(seen), reread)
}
