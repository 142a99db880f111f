package clustertest

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/fjordhq/fjord/internal/testkit"
)

// inprocDirs maps an in-process cluster's node ids to their log dirs.
func inprocDirs(c *testkit.InProcCluster) map[int32]string {
	out := map[int32]string{}
	for _, n := range c.Nodes {
		out[n.ID] = n.DataDir
	}
	return out
}

// inprocSeeds are the client addresses of an in-process cluster's
// running nodes.
func inprocSeeds(c *testkit.InProcCluster) []string {
	var out []string
	for _, n := range c.Nodes {
		if n.Server != nil {
			out = append(out, n.Addr)
		}
	}
	return out
}

// TestRollingRestart: every node of a three-node cluster is stopped
// cleanly (controlled shutdown) and started again, one after the other,
// while an idempotent acks=all producer writes and a consumer group reads
// and commits. The only thing the "operator" waits for between nodes is
// what Kafka's rolling-restart procedure waits for: no under-replicated
// partition. No write may fail, every acknowledged record is in the log
// exactly once and consumed, and the replicas end byte-identical.
func TestRollingRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster test; skipped with -short")
	}
	props := map[string]string{"offsets.topic.num.partitions": "3"}
	t.Run("inproc", func(t *testing.T) {
		c := testkit.StartInProcCluster(t, 3, props)
		var nodes []rollNode
		for _, n := range c.Nodes {
			nodes = append(nodes, rollNode{id: n.ID,
				stop:  func() error { n.Stop(); return nil },
				start: n.Start,
			})
		}
		rollingRestart(t, nodes, c.Bootstrap(), func() []string { return inprocSeeds(c) }, inprocDirs(c))
	})
	// The same against `fjord broker` processes: SIGTERM must run the
	// controlled shutdown and exit cleanly.
	t.Run("process", func(t *testing.T) {
		maps.Copy(props, fjordTimeouts)
		c := testkit.StartProcessCluster(t, testkit.ProcessClusterOptions{Nodes: 3, Props: props})
		c.WaitReady(t, 60*time.Second)
		var nodes []rollNode
		for _, n := range c.Nodes() {
			nodes = append(nodes, rollNode{id: n.ID,
				stop: n.Stop,
				start: func() {
					n.Restart()
					c.WaitReady(t, 60*time.Second)
				},
			})
		}
		rollingRestart(t, nodes, c.Bootstrap(), c.Seeds, processDirs(c))
	})
}

// rollNode is one node of a cluster under rolling restart.
type rollNode struct {
	id    int32
	stop  func() error // clean stop
	start func()       // start, and return once the node is unfenced
}

func rollingRestart(t *testing.T, nodes []rollNode, bootstrap string, seeds func() []string, dirs map[int32]string) {
	const topic, group, partitions = "rolling", "rolling-group", int32(3)
	adm := kadm.NewClient(testkit.Client(t, bootstrap, clientOpts()...))
	createTopic(t, adm, topic, partitions, 3, map[string]string{"min.insync.replicas": "2"})
	waitFullISR(t, seeds(), 30*time.Second, topic)

	l := newLedger()
	load := startLoad(t, bootstrap, topic, partitions, "load", l, 300)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	member := startGroupConsumer(t, ctx, bootstrap, group, topic)
	watch := watchCommitted(ctx, bootstrap, group, topic)
	testkit.CheckFor(t, 60*time.Second, 100*time.Millisecond, func() error {
		if n := watch.total(); n < 100 {
			return fmt.Errorf("group committed %d records so far", n)
		}
		return nil
	})

	for _, n := range nodes {
		before := l.acked()
		t0 := time.Now()
		if err := n.stop(); err != nil {
			t.Errorf("node %d: clean stop: %v", n.id, err)
		}
		stopped := time.Since(t0)
		n.start()
		t.Logf("node %d: controlled shutdown %v, back and unfenced after %v", n.id, stopped.Round(time.Millisecond), time.Since(t0).Round(time.Millisecond))
		waitFullISR(t, seeds(), 60*time.Second, topic, "__consumer_offsets")
		testkit.CheckFor(t, 30*time.Second, 50*time.Millisecond, func() error {
			if a := l.acked(); a < before+100 {
				return fmt.Errorf("%d acks since stopping node %d", a-before, n.id)
			}
			return nil
		})
	}
	load.Stop()
	acked, failed, lastErr := l.stats()
	t.Logf("%d records acknowledged, %d failed (last error %v)", acked, failed, lastErr)
	if failed > 0 {
		t.Errorf("%d writes failed during the rolling restart (last: %v); the idempotent producer should ride through controlled shutdowns", failed, lastErr)
	}

	checkGroupCaughtUp(t, bootstrap, topic, partitions, watch, []*groupConsumer{member}, l, 60*time.Second)
	cancel()
	<-member.done
	member.mu.Lock()
	t.Logf("consumer: %d distinct keys, %d commit errors (last %v)", len(member.seen), member.commitErrs, member.lastErr)
	member.mu.Unlock()

	checkLedger(t, l, readAll(t, bootstrap, topic, partitions))
	sizes := sameReplicaLogs(t, dirs, topic, partitions, 3, 30*time.Second)
	t.Logf("replica logs byte-identical: %v bytes per partition", sizes)
}
