package controller

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/fjordhq/fjord/broker/metadata"
)

// heartbeats keeps brokers alive, as their lifecycle loops would.
type heartbeats struct {
	t      *testing.T
	target func() *Quorum // where to send: the active controller
	mu     sync.Mutex
	epochs map[int32]int64
	alive  map[int32]bool
	done   chan struct{}
	wg     sync.WaitGroup
}

func startHeartbeats(t *testing.T, q *Quorum, epochs map[int32]int64) *heartbeats {
	return startHeartbeatsTo(t, func() *Quorum { return q }, epochs)
}

func startHeartbeatsTo(t *testing.T, target func() *Quorum, epochs map[int32]int64) *heartbeats {
	h := &heartbeats{t: t, target: target, epochs: epochs, alive: map[int32]bool{}, done: make(chan struct{})}
	for id := range epochs {
		h.alive[id] = true
	}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		tick := time.NewTicker(40 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-h.done:
				return
			case <-tick.C:
			}
			h.mu.Lock()
			if q := h.target(); q != nil {
				for id, ok := range h.alive {
					if ok {
						q.BrokerHeartbeat(context.Background(), BrokerHeartbeat{ID: id, Epoch: h.epochs[id], MetadataOffset: q.Image().Offset})
					}
				}
			}
			h.mu.Unlock()
		}
	}()
	t.Cleanup(h.stop)
	return h
}

func (h *heartbeats) set(id int32, alive bool) {
	h.mu.Lock()
	h.alive[id] = alive
	h.mu.Unlock()
}

func (h *heartbeats) stop() {
	select {
	case <-h.done:
	default:
		close(h.done)
	}
	h.wg.Wait()
}

// waitFor polls cond on the quorum's image (bounded).
func waitFor(t *testing.T, q *Quorum, what string, cond func(*metadata.Image) bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond(q.Image()) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func oneVoter(t *testing.T, opts func(*QuorumOptions)) *Quorum {
	t.Helper()
	return newTestQuorum(t, 1, opts).active(10 * time.Second)
}

func TestBrokerRegistrationAndHeartbeat(t *testing.T) {
	q := oneVoter(t, nil)
	ctx := context.Background()
	inc := metadata.NewUUID()
	reg := BrokerRegistration{ID: 1, IncarnationID: inc, Host: "h1", Port: 9092, Rack: "r1",
		Listeners: []Listener{{Name: "PLAINTEXT", Host: "h1", Port: 9092}}}
	epoch, err := q.RegisterBroker(ctx, reg)
	if err != nil {
		t.Fatal(err)
	}
	b := q.Image().Brokers[1]
	if b.Epoch != epoch || epoch != q.Image().Offset || !b.Fenced || b.IncarnationID != inc || b.Rack != "r1" ||
		len(b.Listeners) != 1 || b.Listeners[0].Name != "PLAINTEXT" {
		t.Fatalf("registration %+v, epoch %d, offset %d", b, epoch, q.Image().Offset)
	}
	// Not caught up with the registration: stays fenced.
	res, err := q.BrokerHeartbeat(ctx, BrokerHeartbeat{ID: 1, Epoch: epoch, MetadataOffset: epoch - 1})
	if err != nil || !res.IsFenced || res.IsCaughtUp {
		t.Fatalf("behind: %+v %v", res, err)
	}
	// Caught up but still wants to be fenced (loading its logs).
	res, err = q.BrokerHeartbeat(ctx, BrokerHeartbeat{ID: 1, Epoch: epoch, MetadataOffset: epoch, WantFence: true})
	if err != nil || !res.IsFenced || !res.IsCaughtUp {
		t.Fatalf("want fence: %+v %v", res, err)
	}
	res, err = q.BrokerHeartbeat(ctx, BrokerHeartbeat{ID: 1, Epoch: epoch, MetadataOffset: epoch})
	if err != nil || res.IsFenced || !res.IsCaughtUp || q.Image().Brokers[1].Fenced {
		t.Fatalf("unfence: %+v %v fenced=%v", res, err, q.Image().Brokers[1].Fenced)
	}
	// The same incarnation registering again keeps its epoch and state;
	// an identical registration writes nothing.
	off := q.Image().Offset
	if e, err := q.RegisterBroker(ctx, reg); err != nil || e != epoch || q.Image().Offset != off {
		t.Fatalf("identical re-registration: epoch %d (want %d) err %v, offset %d -> %d", e, epoch, err, off, q.Image().Offset)
	}
	reg.Host = "h1b"
	if e, err := q.RegisterBroker(ctx, reg); err != nil || e != epoch || q.Image().Brokers[1].Host != "h1b" || q.Image().Brokers[1].Fenced {
		t.Fatalf("amended registration: epoch %d err %v broker %+v", e, err, q.Image().Brokers[1])
	}
	// A new incarnation while the old one's session is live is refused.
	reg2 := reg
	reg2.IncarnationID = metadata.NewUUID()
	if _, err := q.RegisterBroker(ctx, reg2); errCode(err) != kerr.DuplicateBrokerRegistration {
		t.Fatalf("duplicate registration: %v", err)
	}
	if _, err := q.BrokerHeartbeat(ctx, BrokerHeartbeat{ID: 1, Epoch: epoch - 1, MetadataOffset: off}); errCode(err) != kerr.StaleBrokerEpoch {
		t.Fatalf("stale epoch: %v", err)
	}
	if _, err := q.BrokerHeartbeat(ctx, BrokerHeartbeat{ID: 42, Epoch: 1}); errCode(err) != kerr.BrokerIDNotRegistered {
		t.Fatalf("unknown broker: %v", err)
	}
	// Once fenced (here: asked to be), a new incarnation gets a new epoch.
	if res, err := q.BrokerHeartbeat(ctx, BrokerHeartbeat{ID: 1, Epoch: epoch, MetadataOffset: off, WantFence: true}); err != nil || !res.IsFenced {
		t.Fatalf("fence on request: %+v %v", res, err)
	}
	e2, err := q.RegisterBroker(ctx, reg2)
	if err != nil || e2 <= epoch || q.Image().Brokers[1].Epoch != e2 || q.Image().Brokers[1].IncarnationID != reg2.IncarnationID {
		t.Fatalf("new incarnation: epoch %d (old %d) err %v", e2, epoch, err)
	}
}

// partitionsOf returns a topic's partitions from an image.
func partitionsOf(img *metadata.Image, topic string) []*metadata.Partition {
	return img.Topics[topic].Partitions
}

func TestSessionExpiryFencesAndMovesLeadership(t *testing.T) {
	q := oneVoter(t, func(o *QuorumOptions) { o.BrokerSessionTimeout = 400 * time.Millisecond })
	ctx := context.Background()
	epochs := registerLive(t, q, 1, 2, 3)
	hb := startHeartbeats(t, q, epochs)
	if r := q.CreateTopics(ctx, []CreateTopic{
		{Name: "f", Partitions: 6, ReplicationFactor: 3},
		{Name: "solo", Assignment: [][]int32{{2}}, Partitions: -1, ReplicationFactor: -1},
	}, false); r[0].Err != nil || r[1].Err != nil {
		t.Fatalf("create: %v %v", r[0].Err, r[1].Err)
	}
	before := q.Image()
	led := 0
	for _, p := range partitionsOf(before, "f") {
		if p.Leader == 1 {
			led++
		}
	}
	if led == 0 {
		t.Fatal("placement gave broker 1 no leadership; the test needs one")
	}

	stopped := time.Now()
	hb.set(1, false)
	waitFor(t, q, "broker 1 fenced", func(img *metadata.Image) bool { return img.Brokers[1].Fenced })
	// The last heartbeat went out up to one beat (40ms) before stopped.
	if el := time.Since(stopped); el < 350*time.Millisecond || el > 2*time.Second {
		t.Errorf("fenced %v after the last heartbeat, session timeout 400ms", el)
	}
	after := q.Image()
	for i, p := range partitionsOf(after, "f") {
		old := partitionsOf(before, "f")[i]
		if slices.Contains(p.ISR, 1) || !slices.Equal(p.ISR, without(old.ISR, 1)) {
			t.Fatalf("f-%d: ISR %v after fencing broker 1 (was %v)", i, p.ISR, old.ISR)
		}
		if p.PartitionEpoch != old.PartitionEpoch+1 {
			t.Fatalf("f-%d: partition epoch %d, was %d", i, p.PartitionEpoch, old.PartitionEpoch)
		}
		if old.Leader == 1 {
			// The first live ISR member in replica order takes over.
			want := without(old.Replicas, 1)[0]
			if p.Leader != want || p.LeaderEpoch != old.LeaderEpoch+1 {
				t.Fatalf("f-%d: leader %d epoch %d, want %d epoch %d", i, p.Leader, p.LeaderEpoch, want, old.LeaderEpoch+1)
			}
		} else if p.Leader != old.Leader || p.LeaderEpoch != old.LeaderEpoch {
			t.Fatalf("f-%d: leader changed %d -> %d", i, old.Leader, p.Leader)
		}
	}

	// Record by record: one metadata entry fenced broker 1, holding the
	// new state of each partition whose ISR it was in, then the fencing.
	entries, err := q.ReadLog(before.Offset+1, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var fencing []metadata.Record
	for _, e := range entries {
		for _, r := range e.Records {
			if r.BrokerChange != nil && r.BrokerChange.ID == 1 {
				fencing = e.Records
			}
		}
	}
	if len(fencing) != 7 || fencing[6].BrokerChange == nil || !*fencing[6].BrokerChange.Fenced || fencing[6].BrokerChange.Epoch != epochs[1] {
		t.Fatalf("fencing entry: %+v", fencing)
	}
	for i, r := range fencing[:6] {
		if r.Partition == nil || r.Partition.TopicID != after.Topics["f"].ID || r.Partition.Index != int32(i) ||
			!slices.Equal(r.Partition.ISR, partitionsOf(after, "f")[i].ISR) {
			t.Fatalf("fencing entry record %d: %+v", i, r)
		}
	}

	// Broker 1 comes back: unfenced, but it rejoins no ISR by itself.
	hb.set(1, true)
	waitFor(t, q, "broker 1 unfenced", func(img *metadata.Image) bool { return !img.Brokers[1].Fenced })
	for i, p := range partitionsOf(q.Image(), "f") {
		if q := partitionsOf(after, "f")[i]; slices.Contains(p.ISR, 1) || p.PartitionEpoch != q.PartitionEpoch {
			t.Fatalf("f-%d changed on unfence: %+v", i, p)
		}
	}

	// The last ISR member of solo-0 is fenced: the partition goes offline
	// with ISR [2], and comes back under broker 2 when it returns.
	solo := q.Image().Partition("solo", 0)
	hb.set(2, false)
	waitFor(t, q, "broker 2 fenced", func(img *metadata.Image) bool { return img.Brokers[2].Fenced })
	p := q.Image().Partition("solo", 0)
	if p.Leader != -1 || !slices.Equal(p.ISR, []int32{2}) || p.LeaderEpoch != solo.LeaderEpoch+1 {
		t.Fatalf("solo-0 after fencing its only replica: %+v", p)
	}
	if off := q.Image().Offline(); len(off) != 1 || off[0] != (metadata.TopicPartition{Topic: "solo", Partition: 0}) {
		t.Fatalf("offline partitions %v", off)
	}
	if ur := q.Image().UnderReplicated(); len(ur) != 6 {
		t.Fatalf("under-replicated %v, want the 6 partitions of f", ur)
	}
	hb.set(2, true)
	waitFor(t, q, "solo-0 back online", func(img *metadata.Image) bool { return img.Partition("solo", 0).Leader == 2 })
	if p := q.Image().Partition("solo", 0); p.LeaderEpoch != solo.LeaderEpoch+2 || len(q.Image().Offline()) != 0 {
		t.Fatalf("solo-0 after broker 2 returned: %+v offline %v", p, q.Image().Offline())
	}
}

func TestControlledShutdown(t *testing.T) {
	q := oneVoter(t, nil)
	ctx := context.Background()
	epochs := registerLive(t, q, 1, 2, 3)
	if r := q.CreateTopics(ctx, []CreateTopic{
		{Name: "c", Assignment: [][]int32{{1, 2}, {2, 1}}, Partitions: -1, ReplicationFactor: -1},
		{Name: "c1", Assignment: [][]int32{{1}}, Partitions: -1, ReplicationFactor: -1},
	}, false); r[0].Err != nil || r[1].Err != nil {
		t.Fatal(r[0].Err, r[1].Err)
	}
	res, err := q.BrokerHeartbeat(ctx, BrokerHeartbeat{ID: 1, Epoch: epochs[1], MetadataOffset: q.Image().Offset, WantShutdown: true})
	if err != nil || res.IsFenced || res.ShouldShutdown {
		t.Fatalf("controlled shutdown start: %+v %v", res, err)
	}
	img := q.Image()
	if !img.Brokers[1].InControlledShutdown {
		t.Fatal("broker 1 not in controlled shutdown")
	}
	// Leaderships move to the other ISR member; the broker leaves ISRs
	// that have others, and a partition it alone holds goes offline.
	for i, want := range []struct {
		tp     TopicPartition
		leader int32
		isr    []int32
	}{{TopicPartition{"c", 0}, 2, []int32{2}}, {TopicPartition{"c", 1}, 2, []int32{2}}, {TopicPartition{"c1", 0}, -1, []int32{1}}} {
		p := img.Partition(want.tp.Topic, want.tp.Partition)
		if p.Leader != want.leader || !slices.Equal(p.ISR, want.isr) {
			t.Fatalf("case %d %v: leader %d ISR %v, want %d %v", i, want.tp, p.Leader, p.ISR, want.leader, want.isr)
		}
	}
	// A broker shutting down takes no new replicas and cannot rejoin an ISR.
	if r := q.CreateTopics(ctx, []CreateTopic{{Name: "rf3", Partitions: 1, ReplicationFactor: 3}}, false); errCode(r[0].Err) != kerr.InvalidReplicationFactor {
		t.Fatalf("RF 3 with a broker shutting down: %v", r[0].Err)
	}
	// A manual assignment may name it, but it starts outside the ISR.
	r := q.CreateTopics(ctx, []CreateTopic{
		{Name: "m", Assignment: [][]int32{{1, 2}}, Partitions: -1, ReplicationFactor: -1},
		{Name: "m1", Assignment: [][]int32{{1}}, Partitions: -1, ReplicationFactor: -1},
	}, false)
	if r[0].Err != nil || errCode(r[1].Err) != kerr.InvalidReplicaAssignment {
		t.Fatalf("manual assignments naming a broker in controlled shutdown: %v / %v", r[0].Err, r[1].Err)
	}
	if p := q.Image().Partition("m", 0); p.Leader != 2 || !slices.Equal(p.ISR, []int32{2}) || !slices.Equal(p.Replicas, []int32{1, 2}) {
		t.Fatalf("m-0: %+v", p)
	}
	p := img.Partition("c", 0)
	if _, err := q.AlterPartition(ctx, AlterPartitionRequest{BrokerID: 2, BrokerEpoch: epochs[2], TopicID: img.Topics["c"].ID,
		Partition: 0, LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch, NewISR: []int32{2, 1}}); errCode(err) != kerr.IneligibleReplica {
		t.Fatalf("adding a broker in controlled shutdown: %v", err)
	}
	// It leads nothing now, but brokers 2 and 3 have not reported the
	// entry that made 2 the leader: Kafka's controller holds the shutdown
	// until every active broker has (lowestActiveOffset), so the new
	// leaders lead before the old one stops.
	res, err = q.BrokerHeartbeat(ctx, BrokerHeartbeat{ID: 1, Epoch: epochs[1], MetadataOffset: q.Image().Offset, WantShutdown: true})
	if err != nil || res.IsFenced || res.ShouldShutdown {
		t.Fatalf("controlled shutdown before the others caught up: %+v %v", res, err)
	}
	if _, err := q.BrokerHeartbeat(ctx, BrokerHeartbeat{ID: 2, Epoch: epochs[2], MetadataOffset: q.Image().Offset}); err != nil {
		t.Fatal(err)
	}
	res, err = q.BrokerHeartbeat(ctx, BrokerHeartbeat{ID: 1, Epoch: epochs[1], MetadataOffset: q.Image().Offset, WantShutdown: true})
	if err != nil || res.ShouldShutdown {
		t.Fatalf("controlled shutdown with broker 3 behind: %+v %v", res, err)
	}
	if _, err := q.BrokerHeartbeat(ctx, BrokerHeartbeat{ID: 3, Epoch: epochs[3], MetadataOffset: q.Image().Offset}); err != nil {
		t.Fatal(err)
	}
	// Now the next heartbeat lets it go, fenced.
	res, err = q.BrokerHeartbeat(ctx, BrokerHeartbeat{ID: 1, Epoch: epochs[1], MetadataOffset: q.Image().Offset, WantShutdown: true})
	if err != nil || !res.IsFenced || !res.ShouldShutdown || !q.Image().Brokers[1].Fenced {
		t.Fatalf("controlled shutdown end: %+v %v", res, err)
	}
}

func TestFollowerVoterRefusesBrokerRequests(t *testing.T) {
	tq := newTestQuorum(t, 3, nil)
	leader := tq.active(10 * time.Second)
	ctx := context.Background()
	for _, q := range tq.nodes {
		if q == leader {
			continue
		}
		if _, err := q.RegisterBroker(ctx, BrokerRegistration{ID: 1, IncarnationID: metadata.NewUUID()}); errCode(err) != kerr.NotController {
			t.Fatalf("register on follower: %v", err)
		}
		if _, err := q.BrokerHeartbeat(ctx, BrokerHeartbeat{ID: 1}); errCode(err) != kerr.NotController {
			t.Fatalf("heartbeat on follower: %v", err)
		}
		if _, err := q.AlterPartition(ctx, AlterPartitionRequest{BrokerID: 1}); errCode(err) != kerr.NotController {
			t.Fatalf("alter partition on follower: %v", err)
		}
		if r := q.ElectLeaders(ctx, false, []TopicPartition{{"x", 0}}); len(r) != 1 || errCode(r[0].Err) != kerr.NotController {
			t.Fatalf("elect on follower: %+v", r)
		}
		if r := q.AlterPartitionReassignments(ctx, []Reassignment{{TopicPartition: TopicPartition{"x", 0}}}); errCode(r[0]) != kerr.NotController {
			t.Fatalf("reassign on follower: %v", r[0])
		}
		if e := q.DeleteTopics(ctx, []string{"x"}); errCode(e[0]) != kerr.NotController {
			t.Fatalf("delete on follower: %v", e[0])
		}
	}
}

// A new active controller gives every broker a fresh session: brokers that
// keep heartbeating (to it) stay unfenced, one that died with the old
// controller is fenced by the new one after its session times out.
func TestSessionsAcrossControllerFailover(t *testing.T) {
	const session = 800 * time.Millisecond
	tq := newTestQuorum(t, 3, func(o *QuorumOptions) { o.BrokerSessionTimeout = session })
	leader := tq.active(10 * time.Second)
	epochs := registerLive(t, leader, 1, 2)
	var mu sync.Mutex
	var current *Quorum = leader
	hb := startHeartbeatsTo(t, func() *Quorum {
		mu.Lock()
		defer mu.Unlock()
		return current
	}, epochs)
	if r := leader.CreateTopics(context.Background(), []CreateTopic{{Name: "s", Assignment: [][]int32{{2, 1}}, Partitions: -1, ReplicationFactor: -1}}, false); r[0].Err != nil {
		t.Fatal(r[0].Err)
	}
	hb.set(2, false)
	mu.Lock()
	current = nil
	mu.Unlock()
	tq.stop(leader.opts.NodeID)
	next := tq.active(10 * time.Second)
	mu.Lock()
	current = next
	mu.Unlock()
	// Broker 2 is fenced by the new controller, one session after it
	// took over; broker 1 never is.
	waitFor(t, next, "broker 2 fenced by the new controller", func(img *metadata.Image) bool { return img.Brokers[2].Fenced })
	img := next.Image()
	if img.Brokers[1].Fenced {
		t.Fatal("broker 1 fenced although it kept heartbeating")
	}
	if p := img.Partition("s", 0); p.Leader != 1 || !slices.Equal(p.ISR, []int32{1}) {
		t.Fatalf("s-0 after broker 2 was fenced: %+v", p)
	}
	hb.stop()
}
