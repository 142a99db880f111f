package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/internal/testkit"
)

// mirrorHubProperties is a hub-and-spoke mm2.properties: spokes a and b
// into hub, on single-broker clusters.
func mirrorHubProperties(a, b, hub string) string {
	return fmt.Sprintf(`clusters = a, b, hub
a.bootstrap.servers = %s
b.bootstrap.servers = %s
hub.bootstrap.servers = %s
a->hub.enabled = true
b->hub.enabled = true
a->hub.topics = orders
b->hub.topics = orders
# Only the two flows: no heartbeat-only pairs (four more worker groups).
emit.heartbeats.enabled = false
tasks.max = 2
replication.factor = 1
offset-syncs.topic.replication.factor = 1
checkpoints.topic.replication.factor = 1
heartbeats.topic.replication.factor = 1
offset.storage.replication.factor = 1
config.storage.replication.factor = 1
status.storage.replication.factor = 1
refresh.topics.interval.seconds = 1
# The hub's workers: commit source offsets every second, notice a dead
# member soon and hand its tasks over at once.
hub.offset.flush.interval.ms = 1000
hub.session.timeout.ms = 6000
hub.heartbeat.interval.ms = 1000
hub.scheduled.rebalance.max.delay.ms = 0
`, a, b, hub)
}

// TestMirrorHubAndSpokeCrash runs `fjord mirror` as a process on two
// spokes and a hub while producers write to both spokes' orders topic,
// SIGKILLs it mid-stream and starts it again: every record arrives on
// the hub as a.orders / b.orders in its source partition, in order
// (duplicates from the replay after the crash allowed and counted), and
// the restarted mirror resumes from its committed offsets instead of
// copying everything again.
func TestMirrorHubAndSpokeCrash(t *testing.T) {
	testkit.SkipShort(t, "mirror process crash test")
	a := testkit.StartBroker(t, nil)
	b := testkit.StartBroker(t, nil)
	hub := testkit.StartBroker(t, nil)
	ctx := testkit.Context(t, 2*time.Minute)
	const partitions, perSpoke = 2, 6000
	for _, addr := range []string{a.Addr, b.Addr} {
		if _, err := testkit.Admin(t, addr).CreateTopics(ctx, partitions, 1, nil, "orders"); err != nil {
			t.Fatal(err)
		}
	}
	path := writeMM2(t, "mm2.properties", mirrorHubProperties(a.Addr, b.Addr, hub.Addr))
	mirror := testkit.StartProcess(t, "mirror", path)

	// Producers write "<spoke>-<partition>-<seq>" with a header, paced so
	// the crash falls in the middle of the stream.
	var wg sync.WaitGroup
	produced := make(chan struct{})
	for _, s := range []struct{ name, addr string }{{"a", a.Addr}, {"b", b.Addr}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := testkit.Client(t, s.addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
			for i := range perSpoke {
				p := int32(i % partitions)
				r := &kgo.Record{Topic: "orders", Partition: p, Key: []byte(fmt.Sprint(i)),
					Value:   fmt.Appendf(nil, "%s-%d-%d", s.name, p, i/partitions),
					Headers: []kgo.RecordHeader{{Key: "spoke", Value: []byte(s.name)}}}
				cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
					if err != nil && ctx.Err() == nil {
						t.Errorf("produce to %s: %v", s.name, err)
					}
				})
				if i%100 == 99 {
					time.Sleep(100 * time.Millisecond) // ~1000 records/s per spoke
				}
			}
			if err := cl.Flush(ctx); err != nil {
				t.Error(err)
			}
		}()
	}
	go func() { wg.Wait(); close(produced) }()

	// Read the hub's copies as they arrive.
	hubCl := testkit.Client(t, hub.Addr, kgo.ConsumeTopics("a.orders", "b.orders"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.MetadataMinAge(200*time.Millisecond))
	seen := map[string]int{} // value → copies
	last := map[string]int{} // "<topic>/<partition>" → last new sequence number
	var total, outOfOrder int
	// read polls the hub at least once, then until until() holds.
	read := func(until func() bool, wait time.Duration) {
		t.Helper()
		deadline := time.Now().Add(wait)
		for first := true; first || !until(); first = false {
			if time.Now().After(deadline) {
				t.Fatalf("hub has %d distinct of %d records after %v (%d copies)\nmirror output:\n%s",
					len(seen), 2*perSpoke, wait, total, mirror.Output())
			}
			pctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
			fs := hubCl.PollFetches(pctx)
			cancel()
			fs.EachRecord(func(r *kgo.Record) {
				total++
				v := string(r.Value)
				var spoke string
				var p, seq int
				if _, err := fmt.Sscanf(strings.ReplaceAll(v, "-", " "), "%s %d %d", &spoke, &p, &seq); err != nil {
					t.Fatalf("record %q on %s: %v", v, r.Topic, err)
				}
				if r.Topic != spoke+".orders" || int(r.Partition) != p {
					t.Errorf("%q arrived on %s-%d", v, r.Topic, r.Partition)
				}
				if len(r.Headers) != 1 || r.Headers[0].Key != "spoke" || string(r.Headers[0].Value) != spoke {
					t.Errorf("%q lost its header: %v", v, r.Headers)
				}
				seen[v]++
				if seen[v] > 1 {
					return // a replayed copy
				}
				k := fmt.Sprintf("%s/%d", r.Topic, r.Partition)
				if prev, ok := last[k]; ok && seq != prev+1 {
					outOfOrder++
				} else if !ok && seq != 0 {
					outOfOrder++
				}
				last[k] = seq
			})
		}
	}

	// Let the mirror copy a good part and commit its offsets, then kill
	// it mid-stream.
	read(func() bool { return len(seen) >= 1500 }, 45*time.Second)
	hubAdm := testkit.Admin(t, hub.Addr)
	testkit.CheckFor(t, 20*time.Second, 100*time.Millisecond, func() error {
		ends, err := hubAdm.ListEndOffsets(ctx, "mm2-offsets.a.internal", "mm2-offsets.b.internal")
		if err != nil {
			return err
		}
		for _, topic := range []string{"mm2-offsets.a.internal", "mm2-offsets.b.internal"} {
			n := int64(0)
			for _, o := range ends[topic] {
				n += max(o.Offset, 0)
			}
			if n == 0 {
				return fmt.Errorf("no source offsets committed to %s yet", topic)
			}
		}
		return nil
	})
	read(func() bool { return true }, time.Second) // one more poll: count what arrived meanwhile
	select {
	case <-produced:
		t.Fatal("the producers finished before the crash; slow them down")
	default:
	}
	mirror.Kill()
	copiedBeforeCrash := total
	t.Logf("killed the mirror after %d records reached the hub", copiedBeforeCrash)
	mirror.Restart()

	<-produced
	read(func() bool { return len(seen) == 2*perSpoke }, 60*time.Second)
	dups := total - len(seen)
	t.Logf("all %d records arrived; %d duplicates from the replay", len(seen), dups)
	if outOfOrder > 0 {
		t.Errorf("%d records arrived out of their partition's order", outOfOrder)
	}
	// The restarted mirror resumed near where it stopped: a restart from
	// the beginning would copy everything it had copied again.
	if dups >= copiedBeforeCrash {
		t.Errorf("%d duplicates for %d records copied before the crash: the mirror did not resume from its offsets", dups, copiedBeforeCrash)
	}
	for v, n := range seen {
		if n > 2 {
			t.Errorf("%q arrived %d times", v, n)
		}
	}

	// status agrees: nothing left to copy.
	testkit.CheckFor(t, 20*time.Second, 500*time.Millisecond, func() error {
		out, err := runMirrorCmd(ctx, "status", "--timeout", "10s", path)
		if err != nil {
			return fmt.Errorf("%v\n%s", err, out)
		}
		for _, f := range []string{"a", "b"} {
			if !strings.Contains(normalizeSpaces(out), fmt.Sprintf("%s->hub orders %s.orders %d 0 0.0", f, f, partitions)) {
				return fmt.Errorf("status does not show %s->hub caught up:\n%s", f, out)
			}
		}
		return nil
	})
	if err := mirror.Stop(30 * time.Second); err != nil {
		t.Errorf("mirror did not stop cleanly: %v\n%s", err, mirror.Output())
	}
	if out := mirror.Output(); !strings.Contains(out, "a->hub: MirrorSourceConnector RUNNING") || !strings.Contains(out, "b->hub: MirrorSourceConnector RUNNING") {
		t.Errorf("mirror output lacks the connectors' progress:\n%s", out)
	}
}

func normalizeSpaces(s string) string { return strings.Join(strings.Fields(s), " ") }
