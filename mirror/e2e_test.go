package mirror_test

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/internal/testkit"
)

// offsetLagMax is the source connectors' offset.lag.max in the failover
// test: how many already-processed records a failed-over group may read
// again.
const offsetLagMax = 10

// TestConsumerFailover mirrors a → b with the real MirrorSourceConnector
// and MirrorCheckpointConnector (sync.group.offsets.enabled) on a worker
// of b. A consumer group processes part of a's records and stops, more
// records arrive on a and are mirrored, a fails; the same group on b
// must read every record it had not processed on a, in order and once,
// and before them at most offset.lag.max it had processed.
func TestConsumerFailover(t *testing.T) {
	testkit.SkipShort(t, "two brokers, a Connect worker and the mirror connectors")
	t.Run("DefaultReplicationPolicy", func(t *testing.T) {
		failover(t, "a.orders")
	})
	t.Run("IdentityReplicationPolicy", func(t *testing.T) {
		failover(t, "orders", "replication.policy.class", "IdentityReplicationPolicy")
	})
}

// failover runs one failover; remote is orders' name on b under the
// replication policy policy (key, value pairs for both connectors).
func failover(t *testing.T, remote string, policy ...string) {
	const partitions = 3
	// before: records written while the group consumed on a; after:
	// records written once it had stopped, before a failed — enough that
	// the offset syncs kept near the group's position thin out (see
	// below).
	const before, after = 40, 60
	a, b := startCluster(t, "a"), startCluster(t, "b")
	a.createTopic(t, "orders", partitions)
	w := startWorker(t, b)
	w.Create(t, sourceConfig("a->b", a, b, append([]string{"topics", "orders", "offset.lag.max", strconv.Itoa(offsetLagMax)}, policy...)...))
	w.Create(t, checkpointConfig("a->b checkpoints", a, b, append([]string{"topics", "orders"}, policy...)...))

	a.produce(t, ordersRecords("orders", "a", partitions, 0, before)...)
	waitSequences(t, b, remote, partitions, before)

	// The application processes all of partition 0, all but the last
	// record of partition 1 and all but nine of partition 2, commits and
	// stops. It is near the end of the stream, where a live group is and
	// where the kept offset syncs are dense: MM2's OffsetSyncStore keeps
	// them exponentially sparser further back, so that only there is the
	// translation within offset.lag.max.
	consumed := map[int32]int64{0: before, 1: before - 1, 2: before - 9}
	consumeOnSource(t, a, "app", "orders", consumed)
	if got, err := groupOffsets(a, "app", "orders"); err != nil || !maps.Equal(got, consumed) {
		t.Fatalf("group app on a committed %v (%v), want %v", got, err, consumed)
	}

	// The checkpoint connector finds the group, translates its offsets
	// and writes them to the group on b, which does not exist there yet.
	testkit.CheckFor(t, 20*time.Second, 200*time.Millisecond, func() error {
		noFailures(t, w)
		got, err := groupOffsets(b, "app", remote)
		if err != nil || len(got) != partitions {
			return fmt.Errorf("group app on b has offsets %v (%v), want all %d partitions of %s", got, err, partitions, remote)
		}
		return nil
	})

	// a keeps taking writes until it fails; they are mirrored but the
	// group never sees them on a. With their offset syncs the store keeps
	// only sparse syncs around the group's position (partition 2's offset
	// 31 would now translate to about 1): a checkpoint that followed the
	// translation back would make the group read ~30 records again.
	// Checkpoints only move forward, so it must not.
	a.produce(t, ordersRecords("orders", "a", partitions, before, after)...)
	waitSequences(t, b, remote, partitions, before+after)
	time.Sleep(1500 * time.Millisecond) // a checkpoint and a group sync at least
	noFailures(t, w)
	logFreshTranslation(t, a, 2, consumed[2])
	a.broker.Close()

	end := map[int32]int64{}
	for p := range int32(partitions) {
		end[p] = before + after
	}
	seqs := consumeAfterFailover(t, b, "app", remote, end)
	for p := range int32(partitions) {
		reread, err := checkResumed(seqs[p], consumed[p], end[p], offsetLagMax)
		if err != nil {
			t.Errorf("group app on b, %s-%d (it had processed %d records on a): %v", remote, p, consumed[p], err)
			continue
		}
		t.Logf("%s-%d: processed %d on a, read %d again on b", remote, p, consumed[p], reread)
	}
}

// TestActiveActiveDefaultPolicy mirrors a ⇄ b with DefaultReplicationPolicy,
// both sides writing "orders": a ends with orders and b.orders, b with
// orders and a.orders, each record exactly once where it belongs, in its
// partition and order, headers intact. Neither connector has a topics
// filter (MM2's default ".*"), so only cycle detection keeps b.orders on
// a from going back to b as a.b.orders.
func TestActiveActiveDefaultPolicy(t *testing.T) {
	testkit.SkipShort(t, "two brokers, two Connect workers and the mirror connectors")
	a, b := startCluster(t, "a"), startCluster(t, "b")
	clusters := []*cluster{a, b}
	written := map[string][]*kgo.Record{}
	write := func(c *cluster, first, n int) {
		rs := ordersRecords("orders", c.alias, 3, first, n)
		c.produce(t, rs...)
		written[c.alias] = append(written[c.alias], rs...)
	}
	for _, c := range clusters {
		c.createTopic(t, "orders", 3)
	}
	write(a, 0, 20)
	write(b, 0, 30)

	wa, wb := startWorker(t, a), startWorker(t, b)
	wb.Create(t, sourceConfig("a->b", a, b))
	wa.Create(t, sourceConfig("b->a", b, a))

	check := func(wait time.Duration) {
		t.Helper()
		for i, c := range clusters {
			other := clusters[1-i]
			waitHolds(t, c, "orders", byPartition(written[c.alias]), wait)
			waitHolds(t, c, other.alias+".orders", byPartition(written[other.alias]), wait)
		}
	}
	check(20 * time.Second)
	// Records written while both flows run follow.
	write(a, 20, 15)
	write(b, 30, 5)
	check(15 * time.Second)
	noFailures(t, wa, wb)

	// Let a loop show: after a few more topic refreshes each side still
	// has exactly its own topic and the other's, and no record came back.
	time.Sleep(2500 * time.Millisecond)
	check(0)
	for i, c := range clusters {
		want := []string{clusters[1-i].alias + ".orders", "orders"}
		if got := c.userTopics(t); !slices.Equal(got, want) {
			t.Errorf("topics on %s: %v, want %v", c.alias, got, want)
		}
	}
	noFailures(t, wa, wb)
}

// TestHubAndSpokeConnectors mirrors two spokes into one hub with two
// MirrorSourceConnectors (source aliases a and b) on one worker of the
// hub: the spokes' orders arrive as a.orders and b.orders, each record
// once, in its partition and order, headers intact, and nothing else
// reaches the hub (the spokes' audit topics are outside topics) or goes
// back to a spoke.
func TestHubAndSpokeConnectors(t *testing.T) {
	testkit.SkipShort(t, "three brokers, a Connect worker and the mirror connectors")
	a, b, hub := startCluster(t, "a"), startCluster(t, "b"), startCluster(t, "hub")
	spokes := []*cluster{a, b}
	written := map[string][]*kgo.Record{}
	write := func(c *cluster, first, n int) {
		rs := ordersRecords("orders", c.alias, 2, first, n)
		c.produce(t, rs...)
		written[c.alias] = append(written[c.alias], rs...)
	}
	for _, c := range spokes {
		c.createTopic(t, "orders", 2)
		c.createTopic(t, "audit", 1)
		c.produce(t, ordersRecords("audit", c.alias, 1, 0, 5)...)
	}
	write(a, 0, 25)
	write(b, 0, 15)

	w := startWorker(t, hub)
	for _, c := range spokes {
		w.Create(t, sourceConfig(c.alias+"->hub", c, hub, "topics", "orders"))
	}
	check := func(wait time.Duration) {
		t.Helper()
		for _, c := range spokes {
			waitHolds(t, hub, c.alias+".orders", byPartition(written[c.alias]), wait)
		}
	}
	check(20 * time.Second)
	write(b, 15, 20)
	write(a, 25, 5)
	check(15 * time.Second)
	noFailures(t, w)

	time.Sleep(2500 * time.Millisecond) // a few more topic refreshes
	check(0)
	if got, want := hub.userTopics(t), []string{"a.orders", "b.orders"}; !slices.Equal(got, want) {
		t.Errorf("topics on the hub: %v, want %v", got, want)
	}
	for _, c := range spokes {
		if got, want := c.userTopics(t), []string{"audit", "orders"}; !slices.Equal(got, want) {
			t.Errorf("topics on %s: %v, want %v", c.alias, got, want)
		}
		waitHolds(t, c, "orders", byPartition(written[c.alias]), 0)
	}
	noFailures(t, w)
}
