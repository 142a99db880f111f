package clustertest

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/internal/testkit"
	"github.com/fjordhq/fjord/internal/testkit/faultproxy"
)

// faultKinds are the faults the randomized test injects, one at a time,
// each on one node of three except kill-two, which takes a majority down
// (no writes are acknowledged then, but none acknowledged before may be
// lost).
var faultKinds = []string{
	"kill-leader",     // SIGKILL the leader of a random partition
	"kill-controller", // SIGKILL the active controller
	"kill-node",       // SIGKILL a random node
	"stop-node",       // SIGTERM a random node (controlled shutdown)
	"isolate-leader",  // cut the leader of a random partition off the others
	"isolate-node",    // cut a random node off the others
	"slow-node",       // 50-250 ms of latency each way on a node's links
	"lossy-node",      // a node's links reset 2% of their chunks
	"kill-two",        // SIGKILL two nodes: the quorum and min ISR are lost until they return
}

// nodeLinks are the proxies of every link to or from node id.
func nodeLinks(c *testkit.ProcessCluster, id int32) []*faultproxy.Proxy {
	var out []*faultproxy.Proxy
	for _, other := range c.Nodes() {
		if other.ID == id {
			continue
		}
		for _, pair := range [][2]int32{{id, other.ID}, {other.ID, id}} {
			ctl, br := c.Link(pair[0], pair[1])
			for _, p := range []*faultproxy.Proxy{ctl, br} {
				if p != nil {
					out = append(out, p)
				}
			}
		}
	}
	return out
}

// TestRandomFaults injects a seeded random sequence of faults into a
// three-node process cluster (fault proxies on every link) under an
// idempotent acks=all load: SIGKILL or SIGTERM of a node, a partition
// leader or the active controller, network isolation of a node or a
// leader, each held for a random time (sometimes shorter than the broker
// session, so no failover happens) and then undone. After every round the
// cluster must recover on its own (all brokers unfenced, every partition
// with a full ISR, an acks=all write accepted on every partition) and,
// with the load paused, every acknowledged record must be in the log
// exactly once at its acknowledged offset, the replicas byte-identical,
// and a consumer group reading along must have consumed every
// acknowledged record and committed up to the end, its commits never
// having gone backwards.
//
// One round in three goes on to the next fault without waiting, so faults
// also land on a cluster still recovering from the last one.
//
// The seed is logged; FJORD_FAULT_SEED=<seed> replays the same schedule
// (the same faults on the same targets; timing on a shared machine still
// varies), FJORD_FAULT_ROUNDS sets the rounds (default 5).
func TestRandomFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("process cluster test; skipped with -short")
	}
	rounds := envInt(t, "FJORD_FAULT_ROUNDS", 5)
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("FJORD_FAULT_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("FJORD_FAULT_SEED=%q: %v", v, err)
		}
		seed = s
	}
	t.Logf("seed %d (replay: FJORD_FAULT_SEED=%d FJORD_FAULT_ROUNDS=%d)", seed, seed, rounds)
	rng := rand.New(rand.NewPCG(seed, 0x666a6f7264))

	props := maps.Clone(fjordTimeouts)
	props["offsets.topic.num.partitions"] = "5"
	c := testkit.StartProcessCluster(t, testkit.ProcessClusterOptions{Nodes: 3, Faults: true, Props: props})
	c.WaitReady(t, 60*time.Second)
	const topic, partitions = "random", int32(3)
	adm := kadm.NewClient(testkit.Client(t, c.Bootstrap(), clientOpts()...))
	createTopic(t, adm, topic, partitions, 3, map[string]string{"min.insync.replicas": "2"})
	waitFullISR(t, c.Seeds(), 30*time.Second, topic)

	l := newLedger()
	load := startLoad(t, c.Bootstrap(), topic, partitions, "load", l, 300)
	// A consumer group reads along; its commits are watched through
	// OffsetFetch and must never go backwards.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	members := []*groupConsumer{
		startGroupConsumer(t, ctx, c.Bootstrap(), "random-group", topic),
		startGroupConsumer(t, ctx, c.Bootstrap(), "random-group", topic),
	}
	watch := watchCommitted(ctx, c.Bootstrap(), "random-group", topic)
	probe := testkit.Client(t, c.Bootstrap(), clientOpts(
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProduceRequestTimeout(3*time.Second),
	)...)
	testkit.CheckFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		if a := l.acked(); a < 100 {
			return fmt.Errorf("%d records acknowledged so far", a)
		}
		return nil
	})
	var recovery durations
	quick := false // the previous fault was undone but not waited out
	for round := range rounds {
		kind := faultKinds[rng.IntN(len(faultKinds))]
		if quick {
			// While the cluster is still recovering, leaders and the
			// controller may be unknown: hit a random node instead.
			switch kind {
			case "kill-leader":
				kind = "kill-node"
			case "isolate-leader":
				kind = "isolate-node"
			case "kill-controller":
				kind = "kill-node"
			}
		}
		partition := int32(rng.IntN(int(partitions)))
		node := int32(1 + rng.IntN(3))
		hold := time.Duration(500+rng.IntN(3500)) * time.Millisecond
		delay := time.Duration(50+rng.IntN(200)) * time.Millisecond
		second := int32(1 + (int(node)+rng.IntN(2))%3) // another node than node

		var victim int32
		switch kind {
		case "kill-leader", "isolate-leader":
			victim = c.LeaderOf(t, topic, partition)
		case "kill-controller":
			victim = c.ActiveController(t)
		default:
			victim = node
		}
		if victim < 0 {
			dumpState(t, c, topic)
			t.Fatalf("round %d: %s: no target", round, kind)
		}
		n := c.Node(victim)
		switch kind {
		case "slow-node":
			t.Logf("round %d: %s on node %d (%v each way), held %v", round, kind, victim, delay, hold)
		case "kill-two":
			t.Logf("round %d: %s: nodes %d and %d, held %v", round, kind, victim, second, hold)
		default:
			t.Logf("round %d: %s on node %d (partition %d), held %v", round, kind, victim, partition, hold)
		}
		before := l.acked()
		t0 := time.Now()
		switch kind {
		case "kill-leader", "kill-controller", "kill-node":
			n.Kill()
		case "stop-node":
			// `fjord broker` handles SIGTERM only once it serves: a node
			// still starting (after a quick round) would die of the signal
			// instead of shutting down (see the package doc).
			waitUnfenced(t, n.ClientAddr, 60*time.Second, victim)
			if err := n.Stop(); err != nil {
				t.Errorf("round %d: SIGTERM of node %d: %v", round, victim, err)
			}
		case "isolate-leader", "isolate-node":
			n.Isolate()
		case "slow-node":
			for _, p := range nodeLinks(c, victim) {
				p.Delay(delay)
			}
		case "lossy-node":
			for _, p := range nodeLinks(c, victim) {
				p.Drop(0.02)
			}
		case "kill-two":
			n.Kill()
			c.Node(second).Kill()
		}
		time.Sleep(hold)
		switch kind {
		case "isolate-leader", "isolate-node":
			n.Heal()
		case "slow-node", "lossy-node":
			for _, p := range nodeLinks(c, victim) {
				p.Delay(0)
				p.Drop(0)
			}
		case "kill-two":
			n.Restart()
			c.Node(second).Restart()
		default:
			n.Restart()
		}

		// Some rounds go straight on to the next fault, so faults also
		// hit a cluster that is still catching up (a restarted node not
		// yet in the ISR, a leader just elected); the next round checks.
		quick = round < rounds-1 && rng.IntN(3) == 0
		if quick {
			t.Logf("round %d: next fault without waiting for recovery", round)
			continue
		}

		// The cluster recovers by itself.
		c.WaitReady(t, 60*time.Second)
		waitFullISR(t, c.Seeds(), 60*time.Second, topic)
		for p := range partitions {
			if err := probeWrite(testkit.Context(t, 60*time.Second), probe, l, topic, p, fmt.Sprintf("probe-%d-%d", round, p)); err != nil {
				dumpState(t, c, topic)
				t.Fatalf("round %d: no acks=all write to partition %d after recovery: %v", round, p, err)
			}
		}
		recovery = append(recovery, time.Since(t0)-hold)
		// The load flows again: records acknowledged after the fault.
		testkit.CheckFor(t, 30*time.Second, 50*time.Millisecond, func() error {
			if a := l.acked(); a <= before+int(partitions)+50 {
				return fmt.Errorf("round %d: only %d acknowledgements since the fault", round, a-before)
			}
			return nil
		})

		// Invariants, with the load quiet.
		load.Pause(60 * time.Second)
		log := readAll(t, c.Bootstrap(), topic, partitions)
		checked := checkLedger(t, l, log)
		sizes := sameReplicaLogs(t, processDirs(c), topic, partitions, 3, 30*time.Second)
		consumed := checkGroupCaughtUp(t, c.Bootstrap(), topic, partitions, watch, members, l, 60*time.Second)
		acked, failed, lastErr := l.stats()
		t.Logf("round %d: recovered %v after undoing the fault; %d acknowledged records checked (%d failed writes, last %v); replicas identical %v; group consumed %d keys and committed to the end",
			round, (time.Since(t0) - hold).Round(time.Millisecond), checked, failed, lastErr, sizes, consumed)
		if checked != acked {
			t.Errorf("round %d: checked %d acknowledged records, ledger has %d", round, checked, acked)
		}
		if t.Failed() {
			t.Fatalf("round %d broke an invariant; replay with FJORD_FAULT_SEED=%d", round, seed)
		}
		load.Resume()
	}
	load.Stop()
	t.Logf("%d rounds; recovery after undoing a fault (full ISR, a write on every partition): %s", rounds, recovery.summary())
}
