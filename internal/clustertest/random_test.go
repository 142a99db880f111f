package clustertest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/internal/testkit"
)

// faultKinds are the faults the randomized test injects, one at a time
// (always a minority: one node of three).
var faultKinds = []string{
	"kill-leader",     // SIGKILL the leader of a random partition
	"kill-controller", // SIGKILL the active controller
	"kill-node",       // SIGKILL a random node
	"stop-node",       // SIGTERM a random node (controlled shutdown)
	"isolate-leader",  // cut the leader of a random partition off the others
	"isolate-node",    // cut a random node off the others
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
// exactly once at its acknowledged offset and the replicas byte-identical.
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

	c := testkit.StartProcessCluster(t, testkit.ProcessClusterOptions{Nodes: 3, Faults: true, Props: fjordTimeouts})
	c.WaitReady(t, 60*time.Second)
	const topic, partitions = "random", int32(3)
	adm := kadm.NewClient(testkit.Client(t, c.Bootstrap(), clientOpts()...))
	createTopic(t, adm, topic, partitions, 3, map[string]string{"min.insync.replicas": "2"})
	waitFullISR(t, c.Seeds(), 30*time.Second, topic)

	l := newLedger()
	load := startLoad(t, c.Bootstrap(), topic, partitions, "load", l, 300)
	probe := testkit.Client(t, c.Bootstrap(), clientOpts(
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProduceRequestTimeout(3*time.Second),
	)...)
	var recovery durations
	for round := range rounds {
		kind := faultKinds[rng.IntN(len(faultKinds))]
		partition := int32(rng.IntN(int(partitions)))
		node := int32(1 + rng.IntN(3))
		hold := time.Duration(500+rng.IntN(3500)) * time.Millisecond

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
		t.Logf("round %d: %s on node %d (partition %d), held %v", round, kind, victim, partition, hold)
		before := l.acked()
		t0 := time.Now()
		switch kind {
		case "kill-leader", "kill-controller", "kill-node":
			n.Kill()
		case "stop-node":
			if err := n.Stop(); err != nil {
				t.Errorf("round %d: SIGTERM of node %d: %v", round, victim, err)
			}
		case "isolate-leader", "isolate-node":
			n.Isolate()
		}
		time.Sleep(hold)
		switch kind {
		case "isolate-leader", "isolate-node":
			n.Heal()
		default:
			n.Restart()
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
		if l.acked() <= before+int(partitions) {
			t.Errorf("round %d: the load got no acknowledgement across the fault", round)
		}

		// Invariants, with the load quiet.
		load.Pause(60 * time.Second)
		log := readAll(t, c.Bootstrap(), topic, partitions)
		checked := checkLedger(t, l, log)
		sizes := sameReplicaLogs(t, processDirs(c), topic, partitions, 3, 30*time.Second)
		acked, failed, lastErr := l.stats()
		t.Logf("round %d: recovered %v after undoing the fault; %d acknowledged records checked (%d failed writes, last %v); replicas identical %v",
			round, (time.Since(t0) - hold).Round(time.Millisecond), checked, failed, lastErr, sizes)
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
