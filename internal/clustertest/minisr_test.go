package clustertest

import (
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/internal/testkit"
)

// createAssigned creates a one-partition topic on the given replicas, in
// that order (the first leads), with configs, failing the test on error.
func createAssigned(t *testing.T, cl *kgo.Client, topic string, replicas []int32, configs map[string]string) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 30000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, -1, -1
	ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
	ra.Partition, ra.Replicas = 0, replicas
	rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
	for k, v := range configs {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = k, kmsg.StringPtr(v)
		rt.Configs = append(rt.Configs, c)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(testkit.Context(t, 30*time.Second), cl)
	if err != nil {
		t.Fatalf("create %s: %v", topic, err)
	}
	if err := kerr.ErrorForCode(resp.Topics[0].ErrorCode); err != nil {
		t.Fatalf("create %s: %v", topic, err)
	}
}

// waitState waits until the broker at addr reports topic's partition 0 in
// a state ok accepts, and returns it.
func waitState(t *testing.T, addr, topic string, wait time.Duration, what string, ok func(isrState) bool) isrState {
	t.Helper()
	var st isrState
	testkit.CheckFor(t, wait, 50*time.Millisecond, func() error {
		s, err := partitionStates(addr, topic)
		if err != nil {
			return err
		}
		st = s[0]
		if !ok(st) {
			return fmt.Errorf("%s-0 at %s: leader %d isr %v, want %s", topic, addr, st.leader, st.isr, what)
		}
		return nil
	})
	return st
}

// waitUnfenced waits until the broker at addr sees every broker in ids
// registered and unfenced.
func waitUnfenced(t *testing.T, addr string, wait time.Duration, ids ...int32) {
	t.Helper()
	testkit.CheckFor(t, wait, 100*time.Millisecond, func() error {
		brokers, err := testkit.DescribeClusterBrokers(addr, 2*time.Second)
		if err != nil {
			return err
		}
		live := map[int32]bool{}
		for _, b := range brokers {
			live[b.NodeID] = !b.IsFenced
		}
		for _, id := range ids {
			if !live[id] {
				return fmt.Errorf("%s: broker %d not registered and unfenced (%v)", addr, id, live)
			}
		}
		return nil
	})
}

// TestMinISRAndUncleanElection: one controller and three brokers (2, 3,
// 4), three topics on replicas [2 3 4] led by 2: "misr" with
// min.insync.replicas=2, "clean" and "unclean" with min.insync.replicas=1
// and unclean.leader.election.enable false and true.
//
//   - Brokers 3 and 4 are SIGKILLed: the ISR shrinks to [2]; acks=all to
//     misr answers NOT_ENOUGH_REPLICAS; clean and unclean accept writes,
//     now only on broker 2.
//   - Broker 2 is killed and 3 and 4 come back, out of sync: clean stays
//     offline (no leader, writes refused) until its ISR member returns;
//     unclean elects 3 or 4 and accepts writes, losing what only 2 had.
//   - Broker 2 returns: it leads clean again with every acknowledged
//     record; on unclean it follows, truncating the records only it had,
//     and the replicas end byte-identical.
//
// A process cluster with a separate controller, not an in-process one:
// in-process nodes all combine broker and controller, and two of three
// down would take the metadata quorum with them.
func TestMinISRAndUncleanElection(t *testing.T) {
	if testing.Short() {
		t.Skip("process cluster test; skipped with -short")
	}
	props := maps.Clone(fjordTimeouts)
	c := testkit.StartProcessCluster(t, testkit.ProcessClusterOptions{
		Nodes: 4, Roles: "broker", NodeRoles: map[int32]string{1: "controller"}, Props: props,
	})
	c.WaitReady(t, 60*time.Second)
	b2, b3, b4 := c.Node(2), c.Node(3), c.Node(4)
	admin := testkit.Client(t, c.Bootstrap(), clientOpts()...)
	replicas := []int32{2, 3, 4}
	createAssigned(t, admin, "misr", replicas, map[string]string{"min.insync.replicas": "2"})
	createAssigned(t, admin, "clean", replicas, map[string]string{"min.insync.replicas": "1", "unclean.leader.election.enable": "false"})
	createAssigned(t, admin, "unclean", replicas, map[string]string{"min.insync.replicas": "1", "unclean.leader.election.enable": "true"})
	waitFullISR(t, c.Seeds(), 30*time.Second, "misr", "clean", "unclean")

	producer := func(bootstrap string) *kgo.Client {
		return testkit.Client(t, bootstrap, clientOpts(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	}
	cleanL, uncleanL := newLedger(), newLedger()
	all := producer(c.Bootstrap())
	write := func(cl *kgo.Client, l *ledger, topic, prefix string, n int) {
		t.Helper()
		for i := range n {
			if err := probeWrite(testkit.Context(t, 30*time.Second), cl, l, topic, 0, fmt.Sprintf("%s-%d", prefix, i)); err != nil {
				dumpState(t, c, topic)
				t.Fatalf("%s: write %s-%d: %v", topic, prefix, i, err)
			}
		}
	}
	write(all, cleanL, "clean", "all3", 20)
	write(all, uncleanL, "unclean", "all3", 20)
	if code, err := rawProduce(b2.ClientAddr, "misr", 0, "all3", 5*time.Second); err != nil || code != 0 {
		t.Fatalf("misr with a full ISR: code %d err %v", code, err)
	}

	// Two of three brokers down.
	b3.Kill()
	b4.Kill()
	for _, topic := range []string{"misr", "clean", "unclean"} {
		waitState(t, b2.ClientAddr, topic, 30*time.Second, "isr [2]", func(s isrState) bool {
			return s.leader == 2 && len(s.isr) == 1
		})
	}
	code, err := rawProduce(b2.ClientAddr, "misr", 0, "one-left", 5*time.Second)
	if err != nil || code != kerr.NotEnoughReplicas.Code {
		t.Errorf("acks=all to misr (min.insync.replicas=2) with ISR [2]: code %d (%v) err %v, want NOT_ENOUGH_REPLICAS", code, kerr.ErrorForCode(code), err)
	}
	solo := producer(b2.ClientAddr)
	write(solo, cleanL, "clean", "solo", 10)
	write(solo, uncleanL, "unclean", "solo", 10)
	t.Logf("with ISR [2]: misr refused acks=all with NOT_ENOUGH_REPLICAS; clean and unclean took 10 writes each")

	// The last in-sync replica goes; two out-of-sync ones come back.
	b2.Kill()
	b3.Restart()
	b4.Restart()
	waitUnfenced(t, b3.ClientAddr, 60*time.Second, 3, 4)
	t0 := time.Now()
	st := waitState(t, b3.ClientAddr, "unclean", 30*time.Second, "a leader among 3 and 4", func(s isrState) bool {
		return s.leader == 3 || s.leader == 4
	})
	t.Logf("unclean: node %d elected %v after 3 and 4 were unfenced (isr %v)", st.leader, time.Since(t0).Round(time.Millisecond), st.isr)
	// clean stays offline as long as its only ISR member is down: watched
	// on both live brokers for a few seconds past the unclean election.
	for end := time.Now().Add(4 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		for _, n := range []*testkit.ClusterNode{b3, b4} {
			s, err := partitionStates(n.ClientAddr, "clean")
			if err != nil {
				t.Fatalf("clean at node %d: %v", n.ID, err)
			}
			if s[0].leader >= 0 {
				t.Fatalf("clean (unclean.leader.election.enable=false) got leader %d (isr %v) while its only ISR member 2 is down", s[0].leader, s[0].isr)
			}
		}
	}
	for _, n := range []*testkit.ClusterNode{b3, b4} {
		if code, err := rawProduce(n.ClientAddr, "clean", 0, "offline", 3*time.Second); err != nil || code == 0 {
			t.Errorf("write to offline clean at node %d: code %d err %v, want an error code", n.ID, code, err)
		}
	}
	rest := producer(b3.ClientAddr + "," + b4.ClientAddr)
	write(rest, uncleanL, "unclean", "after", 20)

	// The ISR member returns.
	t0 = time.Now()
	b2.Restart()
	c.WaitReady(t, 60*time.Second)
	st = waitState(t, b3.ClientAddr, "clean", 30*time.Second, "leader 2", func(s isrState) bool { return s.leader == 2 })
	t.Logf("clean: node 2 leads again %v after its restart", time.Since(t0).Round(time.Millisecond))
	waitFullISR(t, c.Seeds(), 60*time.Second, "misr", "clean", "unclean")
	if code, err := rawProduce(b2.ClientAddr, "misr", 0, "healed", 5*time.Second); err != nil || code != 0 {
		t.Errorf("misr with a full ISR again: code %d err %v", code, err)
	}

	checkLedger(t, cleanL, readAll(t, c.Bootstrap(), "clean", 1))
	// unclean: what only broker 2 had is gone (the price of an unclean
	// election); everything acknowledged after the election is there.
	uncleanLog := readAll(t, c.Bootstrap(), "unclean", 1)
	lost := 0
	for _, r := range uncleanLog[0] {
		if strings.HasPrefix(r.key, "solo-") {
			t.Errorf("unclean: %s, written only to broker 2 before the unclean election, is still at offset %d", r.key, r.offset)
		}
	}
	uncleanL.mu.Lock()
	for _, acks := range uncleanL.acks {
		kept := acks[0][:0]
		for _, a := range acks[0] {
			if strings.HasPrefix(a.key, "solo-") {
				lost++
				continue
			}
			kept = append(kept, a)
		}
		acks[0] = kept
	}
	uncleanL.mu.Unlock()
	checkLedger(t, uncleanL, uncleanLog)
	dirs := processDirs(c)
	delete(dirs, 1)
	for _, topic := range []string{"misr", "clean", "unclean"} {
		sameReplicaLogs(t, dirs, topic, 1, 3, 30*time.Second)
	}
	t.Logf("unclean: %d acknowledged records lost to the unclean election, as expected; replicas byte-identical", lost)
}
