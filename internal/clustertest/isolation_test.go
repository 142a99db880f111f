package clustertest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/batch"
	"github.com/fjordhq/fjord/internal/testkit"
)

// TestIsolatedLeader: the leader of an RF 3, min.insync.replicas=2
// partition is cut off from the other two nodes (fault proxies on every
// node-to-node link; clients still reach it). A client on its side of the
// partition writes acks=all to it: nothing may be acknowledged, since the
// isolated leader cannot replicate. The other two elect a new leader and
// acknowledge writes. After healing, the old leader truncates its
// unreplicated records, and all three replicas are byte-identical.
func TestIsolatedLeader(t *testing.T) {
	if testing.Short() {
		t.Skip("process cluster test; skipped with -short")
	}
	c := testkit.StartProcessCluster(t, testkit.ProcessClusterOptions{Nodes: 3, Faults: true, Props: fjordTimeouts})
	c.WaitReady(t, 60*time.Second)
	const topic, partitions = "isolated", int32(1)
	adm := kadm.NewClient(testkit.Client(t, c.Bootstrap(), clientOpts()...))
	createTopic(t, adm, topic, partitions, 3, map[string]string{"min.insync.replicas": "2"})
	waitFullISR(t, c.Seeds(), 30*time.Second, topic)

	l := newLedger()
	all := testkit.Client(t, c.Bootstrap(), clientOpts(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	for i := range 50 {
		if err := probeWrite(testkit.Context(t, 30*time.Second), all, l, topic, 0, fmt.Sprintf("before-%d", i)); err != nil {
			dumpState(t, c, topic)
			t.Fatalf("write %d before the partition: %v", i, err)
		}
	}

	old := c.LeaderOf(t, topic, 0)
	var rest []string
	for _, n := range c.Nodes() {
		if n.ID != old {
			rest = append(rest, n.ClientAddr)
		}
	}
	t.Logf("isolating node %d, leader of %s-0", old, topic)
	c.Node(old).Isolate()
	t0 := time.Now()

	// Writes sent to the isolated leader itself, as a client on its side
	// of the cut would: raw Produce requests (acks=all, 3 s timeout) so no
	// client library retries them elsewhere. The leader cannot replicate,
	// so none may be acknowledged, before or after the others fence it.
	divergent := make(chan error, 1)
	oldAddr := c.Node(old).ClientAddr
	go func() {
		var codes []string
		for i := range 4 {
			key := fmt.Sprintf("divergent-%d", i)
			l.attempt(key)
			code, err := rawProduce(oldAddr, topic, 0, key, 3*time.Second)
			switch {
			case err != nil:
				codes = append(codes, err.Error())
			case code == 0:
				divergent <- fmt.Errorf("the isolated leader acknowledged %s (acks=all)", key)
				return
			default:
				codes = append(codes, kerr.ErrorForCode(code).Error())
			}
		}
		t.Logf("acks=all writes to the isolated leader were refused as they must be: %s", strings.Join(codes, "; "))
		divergent <- nil
	}()

	// The majority side fences the old leader and elects a new one.
	var newLeader int32 = -1
	testkit.CheckFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		for _, addr := range rest {
			st, err := partitionStates(addr, topic)
			if err != nil {
				return err
			}
			if st[0].leader == old || st[0].leader < 0 {
				return fmt.Errorf("%s sees leader %d isr %v", addr, st[0].leader, st[0].isr)
			}
			newLeader = st[0].leader
		}
		return nil
	})
	t.Logf("majority side: node %d leads %s-0 %v after the isolation", newLeader, topic, time.Since(t0).Round(time.Millisecond))
	// A client of the majority side writes through the new leader. Its
	// produce timeout is short: a client whose metadata still names the
	// old leader waits that long for the isolated node's refusal.
	majority := testkit.Client(t, strings.Join(rest, ","), clientOpts(
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProduceRequestTimeout(3*time.Second),
	)...)
	for i := range 50 {
		if err := probeWrite(testkit.Context(t, 60*time.Second), majority, l, topic, 0, fmt.Sprintf("after-%d", i)); err != nil {
			dumpState(t, c, topic)
			t.Fatalf("majority side: write %d: %v", i, err)
		}
		if i == 0 {
			t.Logf("majority side: first acks=all write acknowledged %v after the isolation", time.Since(t0).Round(time.Millisecond))
		}
	}
	select {
	case err := <-divergent:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(90 * time.Second):
		t.Fatal("raw writes to the isolated leader unanswered after 90 s")
	}
	oldLog, err := readSegments(fmt.Sprintf("%s/%s-0", c.Node(old).LogDir(), topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("isolated node %d's log before healing: %s", old, describeLog(oldLog))

	c.Node(old).Heal()
	t.Logf("healed node %d", old)
	c.WaitReady(t, 60*time.Second)
	waitFullISR(t, c.Seeds(), 60*time.Second, topic)

	log := readAll(t, c.Bootstrap(), topic, partitions)
	for _, r := range log[0] {
		if strings.HasPrefix(r.key, "divergent-") {
			t.Errorf("unacknowledged write %s to the isolated leader is in the log at offset %d", r.key, r.offset)
		}
	}
	checkLedger(t, l, log)
	sizes := sameReplicaLogs(t, processDirs(c), topic, partitions, 3, 30*time.Second)
	newLog, err := readSegments(fmt.Sprintf("%s/%s-0", c.Node(old).LogDir(), topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("replicas byte-identical (%v bytes); node %d's log now: %s", sizes, old, describeLog(newLog))
}

// rawProduce sends one acks=all record to addr in a Produce request of its
// own (timeout: the produce timeout; the connection waits 5 s more) and
// returns the partition's error code.
func rawProduce(addr, topic string, partition int32, key string, timeout time.Duration) (int16, error) {
	md := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(topic)
	md.Topics = append(md.Topics, mt)
	resp, err := testkit.RawRequest(addr, md, 5*time.Second)
	if err != nil {
		return 0, err
	}
	var id [16]byte
	for _, t := range resp.(*kmsg.MetadataResponse).Topics {
		if t.Topic != nil && *t.Topic == topic {
			id = t.TopicID
		}
	}
	recs, err := batch.Build(nil, batch.BuildHeader{PartitionLeaderEpoch: -1},
		[]batch.Record{{Timestamp: time.Now().UnixMilli(), Key: []byte(key), Value: []byte("isolated")}}, batch.CodecNone)
	if err != nil {
		return 0, err
	}
	req := kmsg.NewPtrProduceRequest()
	req.Acks = -1
	req.TimeoutMillis = int32(timeout.Milliseconds())
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic, rt.TopicID = topic, id
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = partition, recs
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	presp, err := testkit.RawRequest(addr, req, timeout+5*time.Second)
	if err != nil {
		return 0, err
	}
	for _, t := range presp.(*kmsg.ProduceResponse).Topics {
		for _, p := range t.Partitions {
			if p.Partition == partition {
				return p.ErrorCode, nil
			}
		}
	}
	return 0, fmt.Errorf("produce response without %s-%d", topic, partition)
}

// TestIsolatedFollower: a follower of an RF 3, min.insync.replicas=2
// partition is cut off from the other nodes under an acks=all load. Its
// session with the controller expires, the controller fences it and takes
// it out of the ISR (KRaft does this on fencing, without waiting for
// replica.lag.time.max.ms), and writes are acknowledged again while it is
// still cut off. After healing it catches up and rejoins the ISR, and the
// replicas are byte-identical.
func TestIsolatedFollower(t *testing.T) {
	if testing.Short() {
		t.Skip("process cluster test; skipped with -short")
	}
	c := testkit.StartProcessCluster(t, testkit.ProcessClusterOptions{Nodes: 3, Faults: true, Props: fjordTimeouts})
	c.WaitReady(t, 60*time.Second)
	const topic, partitions = "isolated-follower", int32(1)
	adm := kadm.NewClient(testkit.Client(t, c.Bootstrap(), clientOpts()...))
	createTopic(t, adm, topic, partitions, 3, map[string]string{"min.insync.replicas": "2"})
	waitFullISR(t, c.Seeds(), 30*time.Second, topic)

	leader := c.LeaderOf(t, topic, 0)
	var follower int32 = -1
	var leaderSide []string
	for _, n := range c.Nodes() {
		if n.ID != leader && follower < 0 {
			follower = n.ID
			continue
		}
		leaderSide = append(leaderSide, n.ClientAddr)
	}
	l := newLedger()
	cl := testkit.Client(t, strings.Join(leaderSide, ","), clientOpts(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	for i := range 20 {
		if err := probeWrite(testkit.Context(t, 30*time.Second), cl, l, topic, 0, fmt.Sprintf("before-%d", i)); err != nil {
			t.Fatal(err)
		}
	}

	t.Logf("isolating node %d, follower of %s-0 (leader %d)", follower, topic, leader)
	c.Node(follower).Isolate()
	t0 := time.Now()
	// Writes go on while the follower is away; the first may wait for the
	// ISR to shrink.
	var stall time.Duration
	for i := range 50 {
		w0 := time.Now()
		if err := probeWrite(testkit.Context(t, 30*time.Second), cl, l, topic, 0, fmt.Sprintf("during-%d", i)); err != nil {
			dumpState(t, c, topic)
			t.Fatalf("write %d with follower %d isolated: %v", i, follower, err)
		}
		stall = max(stall, time.Since(w0))
	}
	st, err := partitionStates(c.Node(leader).ClientAddr, topic)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("50 acks=all writes with the follower isolated in %v, longest %v; leader %d isr %v",
		time.Since(t0).Round(time.Millisecond), stall.Round(time.Millisecond), st[0].leader, st[0].isr)
	if st[0].leader != leader {
		t.Errorf("leader moved from %d to %d though only a follower was isolated", leader, st[0].leader)
	}

	c.Node(follower).Heal()
	c.WaitReady(t, 60*time.Second)
	waitFullISR(t, c.Seeds(), 60*time.Second, topic)
	for i := range 20 {
		if err := probeWrite(testkit.Context(t, 30*time.Second), cl, l, topic, 0, fmt.Sprintf("after-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	checkLedger(t, l, readAll(t, c.Bootstrap(), topic, partitions))
	sameReplicaLogs(t, processDirs(c), topic, partitions, 3, 30*time.Second)
}
