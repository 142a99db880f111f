package group_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/internal/testkit"
)

// End-to-end: consumer groups of real clients (franz-go, kafka-python,
// confluent-kafka/librdkafka, kcat) against an in-process Fjord broker.
// They take seconds of real time each; -short skips them.

func e2eBroker(t *testing.T) (*testkit.Broker, *kadm.Client) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end consumer group tests take real time; run without -short")
	}
	b := testkit.StartBroker(t, nil)
	return b, testkit.Admin(t, b.Addr)
}

func createTopic(t *testing.T, adm *kadm.Client, topic string, partitions int32) {
	t.Helper()
	ctx := testkit.Context(t, 30*time.Second)
	resp, err := adm.CreateTopic(ctx, partitions, 1, nil, topic)
	if err != nil || resp.Err != nil {
		t.Fatalf("create topic %s: %v %v", topic, err, resp.Err)
	}
}

func produce(t *testing.T, addr, topic string, n, from int) {
	t.Helper()
	// No compression: kafka-python on Debian lacks snappy.
	cl := testkit.Client(t, addr, kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(kgo.NoCompression()))
	ctx := testkit.Context(t, 30*time.Second)
	recs := make([]*kgo.Record, 0, n)
	for i := from; i < from+n; i++ {
		recs = append(recs, &kgo.Record{Key: []byte(strconv.Itoa(i)), Value: []byte(strconv.Itoa(i))})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

// committedTotal sums a group's committed offsets on topic.
func committedTotal(ctx context.Context, adm *kadm.Client, group, topic string) (int64, error) {
	offs, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		return 0, err
	}
	if err := offs.Error(); err != nil {
		return 0, err
	}
	var sum int64
	offs.Each(func(o kadm.OffsetResponse) {
		if o.Topic == topic {
			sum += o.At
		}
	})
	return sum, nil
}

// seen collects consumed values across consumers.
type seen struct {
	mu sync.Mutex
	m  map[string]int
}

func (s *seen) add(v string) {
	s.mu.Lock()
	s.m[v]++
	s.mu.Unlock()
}

func (s *seen) distinct() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// TestE2EBrokerWiring checks what the broker must give the coordinator:
// topic metadata (OffsetCommit/OffsetFetch v10 name topics by id, which
// franz-go uses) and the client id and host of each request.
func TestE2EBrokerWiring(t *testing.T) {
	b, adm := e2eBroker(t)
	const topic, group = "wiring", "wiring-group"
	createTopic(t, adm, topic, 2)
	ctx := testkit.Context(t, 30*time.Second)
	td, err := adm.ListTopics(ctx, topic)
	if err != nil || td[topic].Err != nil {
		t.Fatalf("list topics: %v", err)
	}
	id := td[topic].ID

	cl := testkit.Client(t, b.Addr, kgo.ClientID("wiring-client"))
	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Version, commit.Group, commit.Generation = 10, group, -1
	ct := kmsg.NewOffsetCommitRequestTopic()
	ct.TopicID = id
	cp := kmsg.NewOffsetCommitRequestTopicPartition()
	cp.Partition, cp.Offset = 1, 17
	ct.Partitions = append(ct.Partitions, cp)
	commit.Topics = append(commit.Topics, ct)
	cresp, err := commit.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if cresp.Version == 10 {
		if code := cresp.Topics[0].Partitions[0].ErrorCode; code != 0 {
			t.Fatalf("OffsetCommit v10 by topic id: error %d; the broker must pass group.Options.Topics", code)
		}
		fetch := kmsg.NewPtrOffsetFetchRequest()
		fg := kmsg.NewOffsetFetchRequestGroup()
		fg.Group = group
		ft := kmsg.NewOffsetFetchRequestGroupTopic()
		ft.TopicID, ft.Partitions = id, []int32{1}
		fg.Topics = append(fg.Topics, ft)
		fetch.Groups = append(fetch.Groups, fg)
		fresp, err := fetch.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		if p := fresp.Groups[0].Topics[0].Partitions[0]; p.ErrorCode != 0 || p.Offset != 17 {
			t.Fatalf("OffsetFetch v%d by topic id: offset %d error %d", fresp.Version, p.Offset, p.ErrorCode)
		}
	}

	member := testkit.Client(t, b.Addr, kgo.ClientID("wiring-member"), kgo.ConsumerGroup(group+"-2"), kgo.ConsumeTopics(topic))
	go member.PollFetches(ctx)
	testkit.CheckFor(t, 20*time.Second, 100*time.Millisecond, func() error {
		d, err := adm.DescribeGroups(ctx, group+"-2")
		if err != nil {
			return err
		}
		ms := d[group+"-2"].Members
		if len(ms) != 1 {
			return fmt.Errorf("%d members", len(ms))
		}
		if ms[0].ClientID != "wiring-member" || ms[0].ClientHost != "/127.0.0.1" {
			t.Fatalf("member client id %q host %q; the broker must wrap the request context with group.WithClient",
				ms[0].ClientID, ms[0].ClientHost)
		}
		return nil
	})
}

func TestE2EKgoConsumerGroup(t *testing.T) {
	b, adm := e2eBroker(t)
	const topic, group = "kgo-e2e", "kgo-group"
	createTopic(t, adm, topic, 6)
	produce(t, b.Addr, topic, 600, 0)

	got := &seen{m: make(map[string]int)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	clients := make([]*kgo.Client, 3)
	for i := range clients {
		cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.AutoCommitInterval(200*time.Millisecond),
			kgo.ClientID(fmt.Sprintf("kgo-%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		clients[i] = cl
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				fs := cl.PollFetches(ctx)
				fs.EachRecord(func(r *kgo.Record) { got.add(string(r.Value)) })
			}
		}()
	}
	defer func() {
		cancel()
		wg.Wait()
		for _, cl := range clients {
			if cl != nil {
				cl.Close()
			}
		}
	}()

	testkit.CheckFor(t, 60*time.Second, 100*time.Millisecond, func() error {
		if n := got.distinct(); n != 600 {
			return fmt.Errorf("consumed %d of 600 distinct records", n)
		}
		return nil
	})
	testkit.CheckFor(t, 30*time.Second, 200*time.Millisecond, func() error {
		sum, err := committedTotal(ctx, adm, group, topic)
		if err != nil {
			return err
		}
		if sum != 600 {
			return fmt.Errorf("committed %d of 600", sum)
		}
		return nil
	})
	// Members joined one by one: wait for the last rebalance to settle.
	testkit.CheckFor(t, 30*time.Second, 100*time.Millisecond, func() error {
		described, err := adm.DescribeGroups(ctx, group)
		if err != nil {
			return err
		}
		dg := described[group]
		if dg.State != "Stable" || len(dg.Members) != 3 || dg.ProtocolType != "consumer" {
			return fmt.Errorf("group %s with %d members, type %s", dg.State, len(dg.Members), dg.ProtocolType)
		}
		partitions := 0
		for _, m := range dg.Members {
			if !strings.HasPrefix(m.ClientID, "kgo-") {
				t.Fatalf("member client id %q", m.ClientID)
			}
			if ca, ok := m.Assigned.AsConsumer(); ok {
				for _, tp := range ca.Topics {
					partitions += len(tp.Partitions)
				}
			}
		}
		if partitions != 6 {
			return fmt.Errorf("%d partitions assigned across members, want 6", partitions)
		}
		return nil
	})

	// One member leaves: the others take over its partitions.
	clients[2].Close()
	clients[2] = nil
	produce(t, b.Addr, topic, 60, 600)
	testkit.CheckFor(t, 60*time.Second, 100*time.Millisecond, func() error {
		if n := got.distinct(); n != 660 {
			return fmt.Errorf("consumed %d of 660 distinct records", n)
		}
		described, err := adm.DescribeGroups(ctx, group)
		if err != nil {
			return err
		}
		if dg := described[group]; dg.State != "Stable" || len(dg.Members) != 2 {
			return fmt.Errorf("group %s with %d members", dg.State, len(dg.Members))
		}
		return nil
	})
	testkit.CheckFor(t, 30*time.Second, 200*time.Millisecond, func() error {
		sum, err := committedTotal(ctx, adm, group, topic)
		if err == nil && sum != 660 {
			err = fmt.Errorf("committed %d of 660", sum)
		}
		return err
	})

	// Stop consuming, restart the broker: the group and offsets are back.
	cancel()
	wg.Wait()
	for i, cl := range clients {
		if cl != nil {
			cl.Close()
			clients[i] = nil
		}
	}
	b.Restart()
	adm2 := testkit.Admin(t, b.Addr)
	ctx2 := testkit.Context(t, 30*time.Second)
	testkit.CheckFor(t, 30*time.Second, 200*time.Millisecond, func() error {
		sum, err := committedTotal(ctx2, adm2, group, topic)
		if err == nil && sum != 660 {
			err = fmt.Errorf("committed %d of 660 after restart", sum)
		}
		return err
	})
	lag, err := adm2.Lag(ctx2, group)
	if err != nil {
		t.Fatal(err)
	}
	if l := lag[group]; l.Error() != nil || l.Lag.Total() != 0 {
		t.Fatalf("lag after restart: %+v %v", l.Lag.Total(), l.Error())
	}
}

func TestE2EKgoStaticMemberRestartsWithoutRebalance(t *testing.T) {
	b, adm := e2eBroker(t)
	const topic, group = "static-e2e", "static-group"
	createTopic(t, adm, topic, 4)

	var mu sync.Mutex
	assigned := map[string]int{}
	newMember := func(instance, name string) *kgo.Client {
		cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
			kgo.InstanceID(instance), kgo.SessionTimeout(30*time.Second),
			kgo.OnPartitionsAssigned(func(context.Context, *kgo.Client, map[string][]int32) {
				mu.Lock()
				assigned[name]++
				mu.Unlock()
			}))
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for {
				fs := cl.PollFetches(context.Background())
				if fs.IsClientClosed() {
					return
				}
			}
		}()
		return cl
	}
	ctx := testkit.Context(t, 60*time.Second)
	stable := func(members int) func() error {
		return func() error {
			d, err := adm.DescribeGroups(ctx, group)
			if err != nil {
				return err
			}
			if dg := d[group]; dg.State != "Stable" || len(dg.Members) != members {
				return fmt.Errorf("group %s with %d members", dg.State, len(dg.Members))
			}
			return nil
		}
	}
	// a joins first and leads; b follows. A restarted static leader is
	// told to skip assignment (KIP-814), which franz-go answers with a
	// rebalance of its own when its plan differs, so restart the follower.
	a := newMember("a", "a")
	defer a.Close()
	testkit.CheckFor(t, 30*time.Second, 100*time.Millisecond, stable(1))
	bm := newMember("b", "b")

	// Cooperative-sticky takes two rebalances to balance the partitions:
	// wait until each member owns two.
	testkit.CheckFor(t, 30*time.Second, 100*time.Millisecond, func() error {
		if err := stable(2)(); err != nil {
			return err
		}
		d, err := adm.DescribeGroups(ctx, group)
		if err != nil {
			return err
		}
		for _, m := range d[group].Members {
			ca, _ := m.Assigned.AsConsumer()
			n := 0
			for _, tp := range ca.Topics {
				n += len(tp.Partitions)
			}
			if n != 2 {
				return fmt.Errorf("member %s owns %d partitions", m.MemberID, n)
			}
		}
		return nil
	})
	mu.Lock()
	aBefore := assigned["a"]
	mu.Unlock()
	before, _ := adm.DescribeGroups(ctx, group)

	// Static members do not leave the group when they close; the same
	// instance id coming back takes its place without a rebalance.
	bm.Close()
	b2 := newMember("b", "b2")
	defer b2.Close()
	testkit.CheckFor(t, 30*time.Second, 100*time.Millisecond, func() error {
		d, err := adm.DescribeGroups(ctx, group)
		if err != nil {
			return err
		}
		for _, m := range d[group].Members {
			for _, old := range before[group].Members {
				if m.InstanceID != nil && *m.InstanceID == "b" && old.InstanceID != nil && *old.InstanceID == "b" && m.MemberID == old.MemberID {
					return fmt.Errorf("instance b still has its old member id")
				}
			}
		}
		return stable(2)()
	})
	// The new process gets its partitions back; a is never reassigned.
	testkit.CheckFor(t, 30*time.Second, 100*time.Millisecond, func() error {
		mu.Lock()
		defer mu.Unlock()
		if assigned["b2"] == 0 {
			return fmt.Errorf("the restarted member has no assignment yet")
		}
		return nil
	})
	// A rebalance would reach a within the next rebalance round trip;
	// watch for one for a bounded time.
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		mu.Lock()
		n := assigned["a"]
		mu.Unlock()
		if n != aBefore {
			t.Fatalf("member a was reassigned (%d -> %d): the static rejoin caused a rebalance", aBefore, n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestE2EKafkaPythonGroup(t *testing.T) {
	b, adm := e2eBroker(t)
	const topic, group = "py-e2e", "py-group"
	createTopic(t, adm, topic, 3)
	produce(t, b.Addr, topic, 90, 0)
	out := testkit.Python(t, 90*time.Second, `
import sys
from kafka import KafkaConsumer
c = KafkaConsumer(sys.argv[2], bootstrap_servers=sys.argv[1], group_id=sys.argv[3],
                  auto_offset_reset="earliest", enable_auto_commit=False, consumer_timeout_ms=20000)
seen = set()
for m in c:
    seen.add(m.value)
    if len(seen) == 90:
        break
c.commit()
c.close()
print(len(seen))
`, b.Addr, topic, group)
	if strings.TrimSpace(out) != "90" {
		t.Fatalf("kafka-python consumed %q", out)
	}
	ctx := testkit.Context(t, 30*time.Second)
	if sum, err := committedTotal(ctx, adm, group, topic); err != nil || sum != 90 {
		t.Fatalf("kafka-python committed %d (%v)", sum, err)
	}
}

func TestE2EConfluentKafkaGroup(t *testing.T) {
	b, adm := e2eBroker(t)
	const topic, group = "ck-e2e", "ck-group"
	createTopic(t, adm, topic, 3)
	produce(t, b.Addr, topic, 90, 0)
	out := testkit.Python(t, 90*time.Second, `
import sys, time
from confluent_kafka import Consumer
c = Consumer({"bootstrap.servers": sys.argv[1], "group.id": sys.argv[3],
              "auto.offset.reset": "earliest", "enable.auto.commit": False})
c.subscribe([sys.argv[2]])
seen = set()
deadline = time.time() + 60
while len(seen) < 90 and time.time() < deadline:
    m = c.poll(0.5)
    if m is None or m.error():
        continue
    seen.add(m.value())
c.commit(asynchronous=False)
c.close()
print(len(seen))
`, b.Addr, topic, group)
	if strings.TrimSpace(out) != "90" {
		t.Fatalf("confluent-kafka consumed %q", out)
	}
	ctx := testkit.Context(t, 30*time.Second)
	if sum, err := committedTotal(ctx, adm, group, topic); err != nil || sum != 90 {
		t.Fatalf("confluent-kafka committed %d (%v)", sum, err)
	}
}

func TestE2EKcatGroup(t *testing.T) {
	b, adm := e2eBroker(t)
	const topic, group = "kcat-e2e", "kcat-group"
	createTopic(t, adm, topic, 2)
	produce(t, b.Addr, topic, 20, 0)
	stdout, stderr, err := testkit.Kcat(t, 60*time.Second, "",
		"-b", b.Addr, "-G", group, "-o", "beginning", "-c", "20", "-f", "%s\n",
		"-X", "enable.auto.commit=true", "-X", "auto.commit.interval.ms=100", topic)
	if err != nil {
		t.Fatalf("kcat -G: %v\n%s", err, stderr)
	}
	if n := len(strings.Fields(stdout)); n != 20 {
		t.Fatalf("kcat consumed %d records:\n%s\n%s", n, stdout, stderr)
	}
	// kcat commits on close; the offsets cover what it printed.
	ctx := testkit.Context(t, 30*time.Second)
	testkit.CheckFor(t, 20*time.Second, 200*time.Millisecond, func() error {
		sum, err := committedTotal(ctx, adm, group, topic)
		if err == nil && sum != 20 {
			err = fmt.Errorf("kcat committed %d of 20", sum)
		}
		return err
	})
	// Empty now: it can be deleted.
	resp, err := adm.DeleteGroups(ctx, group)
	if err != nil || resp[group].Err != nil {
		t.Fatalf("delete group: %v %v", err, resp[group].Err)
	}
	if sum, err := committedTotal(ctx, adm, group, topic); err != nil || sum != 0 {
		t.Fatalf("offsets after delete: %d %v", sum, err)
	}
}

// TestE2EMemberSessionTimeout: a member that stops heartbeating (a raw
// client here) is removed after its session timeout and a franz-go member
// takes over its partitions.
func TestE2EMemberSessionTimeout(t *testing.T) {
	b, adm := e2eBroker(t)
	const topic, group = "timeout-e2e", "timeout-group"
	createTopic(t, adm, topic, 4)
	ctx := testkit.Context(t, 90*time.Second)

	y := testkit.Client(t, b.Addr, kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.Balancers(kgo.RangeBalancer()),
		kgo.SessionTimeout(6*time.Second), kgo.HeartbeatInterval(500*time.Millisecond))
	go func() {
		for ctx.Err() == nil {
			if fs := y.PollFetches(ctx); fs.IsClientClosed() {
				return
			}
		}
	}()
	stableWith := func(n int) error {
		d, err := adm.DescribeGroups(ctx, group)
		if err != nil {
			return err
		}
		if dg := d[group]; dg.State != "Stable" || len(dg.Members) != n {
			return fmt.Errorf("group %s with %d members", dg.State, len(dg.Members))
		}
		return nil
	}
	testkit.CheckFor(t, 30*time.Second, 100*time.Millisecond, func() error { return stableWith(1) })

	// x joins by hand, syncs, and then goes silent.
	x := testkit.Client(t, b.Addr, kgo.ClientID("silent"))
	join := kmsg.NewPtrJoinGroupRequest()
	join.Group, join.SessionTimeoutMillis, join.RebalanceTimeoutMillis, join.ProtocolType = group, 6000, 10000, "consumer"
	meta := kmsg.ConsumerMemberMetadata{Version: 0, Topics: []string{topic}}
	join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: meta.AppendTo(nil)}}
	var jr *kmsg.JoinGroupResponse
	for i := 0; i < 3; i++ {
		resp, err := join.RequestWith(ctx, x)
		if err != nil {
			t.Fatal(err)
		}
		jr = resp
		if jr.ErrorCode != kerr.MemberIDRequired.Code {
			break
		}
		join.MemberID = jr.MemberID
	}
	if jr.ErrorCode != 0 || jr.LeaderID == jr.MemberID {
		t.Fatalf("silent member join: %+v", jr)
	}
	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Group, sync.MemberID, sync.Generation = group, jr.MemberID, jr.Generation
	sync.ProtocolType, sync.Protocol = jr.ProtocolType, jr.Protocol
	sr, err := sync.RequestWith(ctx, x)
	if err != nil || sr.ErrorCode != 0 {
		t.Fatalf("silent member sync: %v %+v", err, sr)
	}
	var got kmsg.ConsumerMemberAssignment
	if err := got.ReadFrom(sr.MemberAssignment); err != nil || len(got.Topics) != 1 || len(got.Topics[0].Partitions) != 2 {
		t.Fatalf("silent member assignment: %+v %v", got, err)
	}
	silentAt := time.Now()
	testkit.CheckFor(t, 10*time.Second, 100*time.Millisecond, func() error { return stableWith(2) })

	// After its 6s session the silent member is gone and y owns all four.
	testkit.CheckFor(t, 30*time.Second, 200*time.Millisecond, func() error {
		if err := stableWith(1); err != nil {
			return err
		}
		d, err := adm.DescribeGroups(ctx, group)
		if err != nil {
			return err
		}
		ca, _ := d[group].Members[0].Assigned.AsConsumer()
		if len(ca.Topics) != 1 || len(ca.Topics[0].Partitions) != 4 {
			return fmt.Errorf("remaining member owns %+v", ca.Topics)
		}
		return nil
	})
	if took := time.Since(silentAt); took < 6*time.Second {
		t.Fatalf("silent member removed after %v, before its 6s session timeout", took)
	}
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Group, hb.MemberID, hb.Generation = group, jr.MemberID, jr.Generation
	hr, err := hb.RequestWith(ctx, x)
	if err != nil || hr.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("heartbeat of the expired member: %v %+v", err, hr)
	}
}
