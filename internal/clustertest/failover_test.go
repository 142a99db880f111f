package clustertest

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/internal/testkit"
)

// processDirs maps a process cluster's node ids to their log dirs.
func processDirs(c *testkit.ProcessCluster) map[int32]string {
	out := map[int32]string{}
	for _, n := range c.Nodes() {
		if n.IsBroker() {
			out[n.ID] = n.LogDir()
		}
	}
	return out
}

// fjordTimeouts puts back Fjord's own failure-detection defaults
// (broker/config.go) over the process harness's slower 3 s session, so
// the failover times measured are the ones a user gets.
var fjordTimeouts = map[string]string{
	"broker.session.timeout.ms":    "2000",
	"broker.heartbeat.interval.ms": "500",
}

// createTopic creates topic with partitions and replication factor rf and
// the given configs, failing the test on any error.
func createTopic(t *testing.T, adm *kadm.Client, topic string, partitions int32, rf int16, configs map[string]string) {
	t.Helper()
	ctx := testkit.Context(t, 30*time.Second)
	cfg := map[string]*string{}
	for k, v := range configs {
		cfg[k] = kadm.StringPtr(v)
	}
	res, err := adm.CreateTopic(ctx, partitions, rf, cfg, topic)
	if err == nil {
		err = res.Err
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
}

// TestFailoverUnderLoad: three combined `fjord broker` processes, a topic
// with RF 3 and min.insync.replicas=2 under an idempotent acks=all load.
// Each round SIGKILLs the leader of every partition in turn and then the
// active controller, restarting each victim and waiting for a full ISR
// before the next kill. Afterwards every acknowledged record is in the
// log exactly once at the offset it was acknowledged at, and the three
// replicas of every partition are byte-identical. The time from each kill
// to the first acknowledged acks=all write to the partition it led is
// logged (p50/max). FJORD_FAILOVER_ROUNDS sets the rounds (default 1).
func TestFailoverUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("process cluster test; skipped with -short")
	}
	rounds := envInt(t, "FJORD_FAILOVER_ROUNDS", 1)
	c := testkit.StartProcessCluster(t, testkit.ProcessClusterOptions{Nodes: 3, Props: fjordTimeouts})
	c.WaitReady(t, 60*time.Second)
	const topic, partitions = "failover", int32(3)
	adm := kadm.NewClient(testkit.Client(t, c.Bootstrap(), clientOpts()...))
	createTopic(t, adm, topic, partitions, 3, map[string]string{"min.insync.replicas": "2"})
	waitFullISR(t, c.Seeds(), 30*time.Second, topic)

	l := newLedger()
	load := startLoad(t, c.Bootstrap(), topic, partitions, "load", l, 500)
	probe := testkit.Client(t, c.Bootstrap(), clientOpts(
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
	)...)
	// Warm the probe's metadata and connections so the first kill does
	// not also measure a cold client.
	for p := range partitions {
		if err := probeWrite(testkit.Context(t, 30*time.Second), probe, l, topic, p, fmt.Sprintf("probe-warm-%d", p)); err != nil {
			t.Fatalf("warm-up write to partition %d: %v", p, err)
		}
	}

	var leaderTimes, controllerTimes durations
	kills := 0
	for round := range rounds {
		for target := range partitions + 1 {
			var victim int32
			partition := target
			what := ""
			if target < partitions {
				victim = c.LeaderOf(t, topic, partition)
				what = fmt.Sprintf("leader of %s-%d", topic, partition)
			} else {
				victim = c.ActiveController(t)
				what = "active controller"
				// Measure on a partition the controller also leads, if any:
				// then the write needs a new controller and a new leader.
				partition = 0
				for p := range partitions {
					if c.LeaderOf(t, topic, p) == victim {
						partition = p
						break
					}
				}
			}
			if victim < 0 {
				t.Fatalf("round %d: no %s", round, what)
			}
			before := l.ackedOn(partition)
			t0 := time.Now()
			c.Node(victim).Kill()
			t.Logf("round %d: killing node %d at %s", round, victim, t0.UTC().Format("15:04:05.000"))
			kills++
			ctx := testkit.Context(t, 60*time.Second)
			if err := probeWrite(ctx, probe, l, topic, partition, fmt.Sprintf("probe-%d-%d", round, target)); err != nil {
				t.Fatalf("round %d: no acks=all write to %s-%d within 60 s of killing node %d (%s): %v", round, topic, partition, victim, what, err)
			}
			took := time.Since(t0)
			if target < partitions {
				leaderTimes = append(leaderTimes, took)
			} else {
				controllerTimes = append(controllerTimes, took)
			}
			t.Logf("round %d: killed node %d (%s); first acks=all write to partition %d after %v; new leader %d",
				round, victim, what, partition, took.Round(time.Millisecond), c.LeaderOf(t, topic, partition))
			c.Node(victim).Restart()
			c.WaitReady(t, 60*time.Second)
			waitFullISR(t, c.Seeds(), 60*time.Second, topic)
			// The load keeps flowing through every failover: the partition
			// got acknowledged writes of the load producer, not only the probe's.
			testkit.CheckFor(t, 30*time.Second, 50*time.Millisecond, func() error {
				if n := l.ackedOn(partition); n <= before+1 {
					return fmt.Errorf("partition %d: %d acks since the kill", partition, n-before)
				}
				return nil
			})
		}
	}
	load.Stop()
	acked, failed, lastErr := l.stats()
	t.Logf("%d kills: %d records acknowledged, %d failed (last error %v)", kills, acked, failed, lastErr)
	t.Logf("failover (kill → first acks=all write): partition leaders %s; active controller %s", leaderTimes.summary(), controllerTimes.summary())

	log := readAll(t, c.Bootstrap(), topic, partitions)
	if n := checkLedger(t, l, log); n != acked {
		t.Fatalf("checked %d acknowledged records, ledger has %d", n, acked)
	}
	sizes := sameReplicaLogs(t, processDirs(c), topic, partitions, 3, 30*time.Second)
	t.Logf("replica logs byte-identical: %v bytes per partition", sizes)
	logOutputs(t, c)
}
