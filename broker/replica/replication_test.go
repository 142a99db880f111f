package replica

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/fjordhq/fjord/broker/batch"
	"github.com/fjordhq/fjord/broker/log"
)

// TestFollowerCatchesUpFromEmpty: a follower outside the ISR with an
// empty log fetches everything over TCP, ends byte-identical, learns the
// high watermark, and the leader adds it to the ISR through the
// controller once it caught up.
func TestFollowerCatchesUpFromEmpty(t *testing.T) {
	var cl addrs
	a, b := newNode(t, 1, &cl, nil), newNode(t, 2, &cl, nil)
	ctl := newController(part([]int32{1, 2}, []int32{1}, 1, 3, 7))
	var leaderHW hwRecorder
	ld := a.lead(LeaderOptions{State: ctl.get(), ReplicaLagTime: 10 * time.Second, AlterPartition: ctl.alter, OnHighWatermark: leaderHW.leader})
	last := a.produce(50, 10, 100)
	if hw := ld.HighWatermark(); hw != last+1 {
		t.Fatalf("single-member ISR: high watermark %d, want %d", hw, last+1)
	}

	var followerHW hwRecorder
	o := fetcherOpts(2, &cl)
	o.PartitionMaxBytes = 8 << 10 // several rounds
	o.OnHighWatermark = followerHW.follower
	fm := startFetchers(t, o)
	fm.Set(Follow{Topic: testTopic, TopicID: testTopicID, Partition: 0, Log: b.log, LeaderID: 1, LeaderEpoch: 3})

	waitFor(t, 10*time.Second, "follower to catch up", func() bool { return b.log.LogEndOffset() == last+1 })
	waitFor(t, 5*time.Second, "ISR expansion", func() bool { return slices.Equal(ld.State().ISR, []int32{1, 2}) })
	if st := ld.State(); st.PartitionEpoch != 8 {
		t.Fatalf("leader state after expansion %+v, want ISR [1 2] partition epoch 8", st)
	}
	if got := ctl.get(); !slices.Equal(got.ISR, []int32{1, 2}) {
		t.Fatalf("controller ISR %v", got.ISR)
	}
	waitFor(t, 5*time.Second, "follower high watermark", func() bool { return followerHW.get() == last+1 })
	if !bytes.Equal(logBytes(t, a.log, 0, last+1), logBytes(t, b.log, 0, last+1)) {
		t.Fatal("follower log differs from the leader's")
	}
	if e, o := b.log.EndOffsetForEpoch(3); e != 3 || o != last+1 {
		t.Fatalf("follower epoch cache: epoch 3 ends at (%d, %d)", e, o)
	}

	// New records propagate, and both high watermarks follow.
	last = a.produce(5, 3, 10)
	waitFor(t, 5*time.Second, "follower to replicate new records", func() bool { return b.log.LogEndOffset() == last+1 })
	waitFor(t, 5*time.Second, "leader high watermark", func() bool { return ld.HighWatermark() == last+1 && leaderHW.get() == last+1 })
	waitFor(t, 5*time.Second, "follower high watermark", func() bool { return followerHW.get() == last+1 })
}

// TestAcksAllWaitsForFollower: WaitReplicated returns only once the
// follower has fetched past the offset; with the follower stopped it
// waits until the leader drops it from the ISR, and then answers
// NOT_ENOUGH_REPLICAS_AFTER_APPEND for min.insync.replicas=2.
func TestAcksAllWaitsForFollower(t *testing.T) {
	var cl addrs
	a, b := newNode(t, 1, &cl, nil), newNode(t, 2, &cl, nil)
	ctl := newController(part([]int32{1, 2}, []int32{1, 2}, 1, 1, 1))
	ld := a.lead(LeaderOptions{State: ctl.get(), ReplicaLagTime: 600 * time.Millisecond, AlterPartition: ctl.alter})
	fm := startFetchers(t, fetcherOpts(2, &cl))
	follow := Follow{Topic: testTopic, TopicID: testTopicID, Partition: 0, Log: b.log, LeaderID: 1, LeaderEpoch: 1}
	fm.Set(follow)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := range 20 {
		last := a.produce(1, 5, 50)
		if err := ld.WaitReplicated(ctx, last, 2); err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		if leo := b.log.LogEndOffset(); leo <= last {
			t.Fatalf("round %d: acked offset %d but the follower has only %d", i, last, leo)
		}
	}
	if ld.InSyncCount() != 2 || ld.CheckMinISR(2) != nil || !ld.InSync(2) {
		t.Fatalf("ISR %v", ld.ISR())
	}

	// Stop the follower: the write cannot be acknowledged until the ISR
	// shrinks, and then only as under-replicated.
	fm.Remove(testTopic, 0)
	last := a.produce(1, 5, 50)
	short, cancelShort := context.WithTimeout(context.Background(), 200*time.Millisecond)
	err := ld.WaitReplicated(short, last, 2)
	cancelShort()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("acks=all with a stalled ISR member: %v, want a timeout", err)
	}
	start := time.Now()
	err = ld.WaitReplicated(ctx, last, 2)
	if !errors.Is(err, kerr.NotEnoughReplicasAfterAppend) {
		t.Fatalf("after the shrink: %v, want NOT_ENOUGH_REPLICAS_AFTER_APPEND", err)
	}
	if waited := time.Since(start); waited > 3*time.Second {
		t.Fatalf("shrink took %v with replica.lag.time.max.ms 600ms", waited)
	}
	if !slices.Equal(ld.ISR(), []int32{1}) || !slices.Equal(ctl.get().ISR, []int32{1}) {
		t.Fatalf("ISR after shrink: leader %v controller %v", ld.ISR(), ctl.get().ISR)
	}
	if ld.InSync(2) {
		t.Fatal("replica 2 still in sync")
	}
	if err := ld.CheckMinISR(2); !errors.Is(err, kerr.NotEnoughReplicas) {
		t.Fatalf("CheckMinISR(2) with ISR [1]: %v", err)
	}
	if err := ld.WaitReplicated(ctx, last, 1); err != nil {
		t.Fatalf("min.insync.replicas=1: %v", err)
	}

	// The follower comes back, catches up and rejoins.
	fm.Set(follow)
	waitFor(t, 5*time.Second, "ISR expansion", func() bool { return slices.Equal(ld.ISR(), []int32{1, 2}) })
	if b.log.LogEndOffset() < ld.HighWatermark() {
		t.Fatalf("rejoined with end %d below the high watermark %d", b.log.LogEndOffset(), ld.HighWatermark())
	}
	last = a.produce(1, 5, 50)
	if err := ld.WaitReplicated(ctx, last, 2); err != nil {
		t.Fatal(err)
	}
}

// TestStopWakesWaiters: a produce waiting for replication gets
// NOT_LEADER_OR_FOLLOWER when leadership ends.
func TestStopWakesWaiters(t *testing.T) {
	var cl addrs
	a := newNode(t, 1, &cl, nil)
	ctl := newController(part([]int32{1, 2}, []int32{1, 2}, 1, 1, 1))
	ld := a.lead(LeaderOptions{State: ctl.get(), AlterPartition: ctl.alter})
	last := a.produce(1, 1, 10)
	errc := make(chan error, 3)
	for range 3 {
		go func() { errc <- ld.WaitReplicated(context.Background(), last, 2) }()
	}
	time.Sleep(50 * time.Millisecond)
	select {
	case err := <-errc:
		t.Fatalf("returned before any follower fetched: %v", err)
	default:
	}
	a.resign()
	for range 3 {
		select {
		case err := <-errc:
			if !errors.Is(err, kerr.NotLeaderForPartition) {
				t.Fatalf("after Stop: %v", err)
			}
		case <-time.After(2 * time.Second):
			t.Fatal("Stop did not wake a waiter")
		}
	}
	if _, err := ld.FollowerFetch(2, -1, 0, -1); !errors.Is(err, kerr.NotLeaderForPartition) {
		t.Fatalf("fetch after Stop: %v", err)
	}
}

// TestDivergenceTruncation is the KIP-101 scenario: leader A wrote
// offsets 10-14 at epoch 1 that follower B never got; B becomes leader at
// epoch 2 and writes 10-12; A, now a follower, truncates to 10 through
// OffsetForLeaderEpoch and ends byte-identical to B.
func TestDivergenceTruncation(t *testing.T) {
	testDivergence(t, false)
}

// TestDivergingEpochOnFetch: the same, but the leader's
// OffsetForLeaderEpoch answer hides the divergence, so the fetch's
// DivergingEpoch must find it.
func TestDivergingEpochOnFetch(t *testing.T) {
	testDivergence(t, true)
}

func testDivergence(t *testing.T, lie bool) {
	var cl addrs
	a, b := newNode(t, 1, &cl, nil), newNode(t, 2, &cl, nil)
	ctl := newController(part([]int32{1, 2}, []int32{1, 2}, 1, 1, 1))
	ldA := a.lead(LeaderOptions{State: ctl.get(), ReplicaLagTime: 10 * time.Second, AlterPartition: ctl.alter})
	fmB := startFetchers(t, fetcherOpts(2, &cl))
	fmB.Set(Follow{Topic: testTopic, TopicID: testTopicID, Partition: 0, Log: b.log, LeaderID: 1, LeaderEpoch: 1})
	for range 10 {
		a.produce(1, 1, 20)
	}
	waitFor(t, 5*time.Second, "B to replicate 0-9", func() bool { return b.log.LogEndOffset() == 10 && ldA.HighWatermark() == 10 })

	// B stops fetching; A writes 10-14 that only it has.
	fmB.Remove(testTopic, 0)
	for range 5 {
		a.produce(1, 1, 20)
	}
	if a.log.LogEndOffset() != 15 || ldA.HighWatermark() != 10 {
		t.Fatalf("A: end %d high watermark %d", a.log.LogEndOffset(), ldA.HighWatermark())
	}
	a.resign()

	// B is elected at epoch 2 (A still in the ISR, as an unclean-free
	// election after A's crash would leave it) and writes 10-12.
	ctl.mu.Lock()
	ctl.state = part([]int32{1, 2}, []int32{1, 2}, 2, 2, 2)
	ctl.mu.Unlock()
	ldB := b.lead(LeaderOptions{State: ctl.get(), HighWatermark: 10, ReplicaLagTime: 10 * time.Second, AlterPartition: ctl.alter})
	b.lieEpochs.Store(lie)
	for range 3 {
		b.produce(1, 1, 30)
	}
	if ldB.HighWatermark() != 10 {
		t.Fatalf("B's high watermark %d before A fetched, want 10", ldB.HighWatermark())
	}

	var hwA hwRecorder
	o := fetcherOpts(1, &cl)
	o.OnHighWatermark = hwA.follower
	fmA := startFetchers(t, o)
	fmA.Set(Follow{Topic: testTopic, TopicID: testTopicID, Partition: 0, Log: a.log, LeaderID: 2, LeaderEpoch: 2, HighWatermark: 10})

	waitFor(t, 5*time.Second, "A to converge on B", func() bool {
		return a.log.LogEndOffset() == 13 && ldB.HighWatermark() == 13
	})
	if !bytes.Equal(logBytes(t, a.log, 0, 13), logBytes(t, b.log, 0, 13)) {
		t.Fatal("A's log differs from B's up to the high watermark")
	}
	if e, off := a.log.EndOffsetForEpoch(1); e != 1 || off != 10 {
		t.Fatalf("A: epoch 1 ends at (%d, %d), want (1, 10)", e, off)
	}
	if a.log.LatestEpoch() != 2 {
		t.Fatalf("A: latest epoch %d", a.log.LatestEpoch())
	}
	// A's records 10-14 of epoch 1 are gone: every batch past 10 is epoch 2.
	data := logBytes(t, a.log, 10, 13)
	for rest := data; len(rest) > 0; {
		bt, r, err := batch.Next(rest)
		if err != nil {
			t.Fatal(err)
		}
		if bt.LeaderEpoch() != 2 {
			t.Fatalf("batch at %d has epoch %d", bt.BaseOffset(), bt.LeaderEpoch())
		}
		rest = r
	}
	waitFor(t, 5*time.Second, "A's high watermark", func() bool { return hwA.get() == 13 })
}

// TestFollowerBehindLeaderLogStart: the leader deleted records (log start
// 55, inside a batch) while the follower was away with an empty log; the
// fetch at 0 is out of range, the follower starts over at the leader's
// log start and replicates the rest.
func TestFollowerBehindLeaderLogStart(t *testing.T) {
	var cl addrs
	a, b := newNode(t, 1, &cl, nil), newNode(t, 2, &cl, nil)
	ctl := newController(part([]int32{1, 2}, []int32{1}, 1, 1, 1))
	ld := a.lead(LeaderOptions{State: ctl.get(), AlterPartition: ctl.alter})
	last := a.produce(10, 10, 20) // offsets 0-99, batches of 10
	if err := a.log.DeleteRecordsBefore(55); err != nil {
		t.Fatal(err)
	}
	fm := startFetchers(t, fetcherOpts(2, &cl))
	fm.Set(Follow{Topic: testTopic, TopicID: testTopicID, Partition: 0, Log: b.log, LeaderID: 1, LeaderEpoch: 1})
	waitFor(t, 5*time.Second, "follower to catch up", func() bool { return b.log.LogEndOffset() == last+1 })
	waitFor(t, 5*time.Second, "follower log start to follow the leader's", func() bool { return b.log.LogStartOffset() == 55 })
	// The follower starts at the batch holding 55 (50-59), like the leader's read.
	if !bytes.Equal(logBytes(t, a.log, 55, last+1), logBytes(t, b.log, 55, last+1)) {
		t.Fatal("follower log differs")
	}
	waitFor(t, 5*time.Second, "ISR expansion", func() bool { return len(ld.ISR()) == 2 })
}

// TestFollowerAheadOfLeaderEnd: after an unclean election the follower's
// log is longer than the new leader's and carries no epochs to compare
// (old-format batches): the fetch is out of range and the follower
// truncates to the leader's end offset.
func TestFollowerAheadOfLeaderEnd(t *testing.T) {
	var cl addrs
	a, b := newNode(t, 1, &cl, nil), newNode(t, 2, &cl, nil)
	// Both start with the same 10 records written without epochs
	// (partitionLeaderEpoch -1, as pre-KIP-101 data); the follower has 10 more.
	var common []byte
	for range 10 {
		common = append(common, mkBatch(1, 10)...)
	}
	setOffsets(common, 0)
	for _, l := range []*log.Log{a.log, b.log} {
		if _, err := l.Append(common, log.AppendOptions{AssignOffsets: false}); err != nil {
			t.Fatal(err)
		}
	}
	extra := mkBatch(10, 10)
	setOffsets(extra, 10)
	if _, err := b.log.Append(extra, log.AppendOptions{AssignOffsets: false}); err != nil {
		t.Fatal(err)
	}
	if b.log.LatestEpoch() != -1 {
		t.Fatalf("follower epochs: %d", b.log.LatestEpoch())
	}
	ctl := newController(part([]int32{1, 2}, []int32{1}, 1, 5, 1))
	a.lead(LeaderOptions{State: ctl.get(), HighWatermark: 10, AlterPartition: ctl.alter})

	fm := startFetchers(t, fetcherOpts(2, &cl))
	// The follower believes 20 is committed: its high watermark cannot
	// help, only the out-of-range answer can.
	fm.Set(Follow{Topic: testTopic, TopicID: testTopicID, Partition: 0, Log: b.log, LeaderID: 1, LeaderEpoch: 5, HighWatermark: 20})
	waitFor(t, 5*time.Second, "truncation to the leader's end", func() bool { return b.log.LogEndOffset() == 10 })
	last := a.produce(2, 2, 10)
	waitFor(t, 5*time.Second, "replication after truncation", func() bool { return b.log.LogEndOffset() == last+1 })
	if !bytes.Equal(logBytes(t, a.log, 0, last+1), logBytes(t, b.log, 0, last+1)) {
		t.Fatal("follower log differs")
	}
}

// setOffsets renumbers consecutive batches from base (outside the CRC).
func setOffsets(data []byte, base int64) {
	for rest := data; len(rest) > 0; {
		bt, r, _ := batch.Next(rest)
		bt.SetBaseOffset(base)
		base = bt.NextOffset()
		rest = r
	}
}

// TestFencedFollowerPauses: a follower fetching with an older epoch than
// the leader's is fenced and stays paused until Set gives the new epoch;
// one with a newer epoch (the leader has not seen its own election yet)
// retries until the leader catches up.
func TestFencedFollowerPauses(t *testing.T) {
	var cl addrs
	a, b := newNode(t, 1, &cl, nil), newNode(t, 2, &cl, nil)
	ctl := newController(part([]int32{1, 2}, []int32{1}, 1, 4, 1))
	ld := a.lead(LeaderOptions{State: ctl.get(), AlterPartition: ctl.alter})
	last := a.produce(3, 3, 10)
	fm := startFetchers(t, fetcherOpts(2, &cl))
	follow := Follow{Topic: testTopic, TopicID: testTopicID, Partition: 0, Log: b.log, LeaderID: 1, LeaderEpoch: 3}
	fm.Set(follow)
	waitFor(t, 5*time.Second, "the fetch to be fenced", func() bool {
		_, _, paused, _ := fm.Following(testTopic, 0)
		return paused
	})
	served := a.fetches.Load()
	time.Sleep(200 * time.Millisecond)
	if b.log.LogEndOffset() != 0 || a.fetches.Load() != served {
		t.Fatalf("fenced follower kept fetching: end %d, fetches %d -> %d", b.log.LogEndOffset(), served, a.fetches.Load())
	}
	fm.Set(follow) // the same epoch again changes nothing
	if _, _, paused, _ := fm.Following(testTopic, 0); !paused {
		t.Fatal("same-epoch Set resumed a fenced partition")
	}

	// Epoch 5 is ahead of the leader: UNKNOWN_LEADER_EPOCH, retried.
	follow.LeaderEpoch = 5
	fm.Set(follow)
	time.Sleep(200 * time.Millisecond)
	if b.log.LogEndOffset() != 0 {
		t.Fatal("fetched from a leader at an older epoch")
	}
	ctl.mu.Lock()
	ctl.state.LeaderEpoch, ctl.state.PartitionEpoch = 5, 2
	ctl.mu.Unlock()
	ld.Update(ctl.get())
	waitFor(t, 5*time.Second, "follower to fetch at epoch 5", func() bool { return b.log.LogEndOffset() == last+1 })
}

// TestFetcherReconnects: the leader's listener goes away and comes back
// on another address; the fetcher backs off, resolves again and resumes.
func TestFetcherReconnects(t *testing.T) {
	var cl addrs
	a, b := newNode(t, 1, &cl, nil), newNode(t, 2, &cl, nil)
	ctl := newController(part([]int32{1, 2}, []int32{1, 2}, 1, 1, 1))
	ld := a.lead(LeaderOptions{State: ctl.get(), ReplicaLagTime: 10 * time.Second, AlterPartition: ctl.alter})
	fm := startFetchers(t, fetcherOpts(2, &cl))
	fm.Set(Follow{Topic: testTopic, TopicID: testTopicID, Partition: 0, Log: b.log, LeaderID: 1, LeaderEpoch: 1})
	last := a.produce(2, 2, 10)
	waitFor(t, 5*time.Second, "replication", func() bool { return b.log.LogEndOffset() == last+1 })

	a.srv.Close()
	last = a.produce(2, 2, 10)
	time.Sleep(150 * time.Millisecond)
	a.serve(&cl)
	waitFor(t, 5*time.Second, "replication after reconnect", func() bool { return b.log.LogEndOffset() == last+1 })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := ld.WaitReplicated(ctx, last, 2); err != nil {
		t.Fatal(err)
	}
}

// TestLeaderMoves: Set with a new leader moves the partition to a
// fetcher for that broker; the old one goes away.
func TestLeaderMoves(t *testing.T) {
	var cl addrs
	a, b, c := newNode(t, 1, &cl, nil), newNode(t, 2, &cl, nil), newNode(t, 3, &cl, nil)
	ctl := newController(part([]int32{1, 2, 3}, []int32{1, 2, 3}, 1, 1, 1))
	ldA := a.lead(LeaderOptions{State: ctl.get(), ReplicaLagTime: 10 * time.Second, AlterPartition: ctl.alter})
	fmB, fmC := startFetchers(t, fetcherOpts(2, &cl)), startFetchers(t, fetcherOpts(3, &cl))
	fmB.Set(Follow{Topic: testTopic, TopicID: testTopicID, Partition: 0, Log: b.log, LeaderID: 1, LeaderEpoch: 1})
	fmC.Set(Follow{Topic: testTopic, TopicID: testTopicID, Partition: 0, Log: c.log, LeaderID: 1, LeaderEpoch: 1})
	last := a.produce(4, 2, 10)
	waitFor(t, 5*time.Second, "replication to B and C", func() bool {
		return b.log.LogEndOffset() == last+1 && c.log.LogEndOffset() == last+1 && ldA.HighWatermark() == last+1
	})

	// A fails; B leads at epoch 2 with ISR [2 3]; C follows B.
	a.resign()
	ctl.mu.Lock()
	ctl.state = part([]int32{1, 2, 3}, []int32{2, 3}, 2, 2, 2)
	ctl.mu.Unlock()
	fmB.Remove(testTopic, 0)
	ldB := b.lead(LeaderOptions{State: ctl.get(), HighWatermark: last + 1, ReplicaLagTime: 10 * time.Second, AlterPartition: ctl.alter})
	fmC.Set(Follow{Topic: testTopic, TopicID: testTopicID, Partition: 0, Log: c.log, LeaderID: 2, LeaderEpoch: 2})
	if l, e, _, ok := fmC.Following(testTopic, 0); !ok || l != 2 || e != 2 {
		t.Fatalf("C follows %d at %d", l, e)
	}
	fmC.mu.Lock()
	nf := len(fmC.fetchers)
	fmC.mu.Unlock()
	if nf != 1 {
		t.Fatalf("C runs %d fetchers, want 1", nf)
	}
	last = b.produce(3, 2, 10)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := ldB.WaitReplicated(ctx, last, 2); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(logBytes(t, b.log, 0, last+1), logBytes(t, c.log, 0, last+1)) {
		t.Fatal("C differs from B")
	}
}

// TestConcurrentAcksAll: four producers append and wait for acks=all on
// a three-replica partition; every acknowledged record is on every
// replica, the logs are identical, and the ack latency is reported.
func TestConcurrentAcksAll(t *testing.T) {
	var cl addrs
	a, b, c := newNode(t, 1, &cl, nil), newNode(t, 2, &cl, nil), newNode(t, 3, &cl, nil)
	ctl := newController(part([]int32{1, 2, 3}, []int32{1, 2, 3}, 1, 1, 1))
	ld := a.lead(LeaderOptions{State: ctl.get(), ReplicaLagTime: 10 * time.Second, AlterPartition: ctl.alter})
	for _, n := range []*node{b, c} {
		fm := startFetchers(t, fetcherOpts(n.id, &cl))
		fm.Set(Follow{Topic: testTopic, TopicID: testTopicID, Partition: 0, Log: n.log, LeaderID: 1, LeaderEpoch: 1})
	}
	const producers, perProducer = 4, 100
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lat := make(chan time.Duration, producers*perProducer)
	errc := make(chan error, producers)
	for range producers {
		go func() {
			for range perProducer {
				start := time.Now()
				res, err := a.log.Append(mkBatch(2, 100), log.AppendOptions{LeaderEpoch: 1, AssignOffsets: true})
				if err != nil {
					errc <- err
					return
				}
				ld.OnAppend()
				a.mu.Lock()
				close(a.appended)
				a.appended = make(chan struct{})
				a.mu.Unlock()
				if err := ld.WaitReplicated(ctx, res.LastOffset, 2); err != nil {
					errc <- err
					return
				}
				if b.log.LogEndOffset() <= res.LastOffset || c.log.LogEndOffset() <= res.LastOffset {
					errc <- errors.New("acknowledged before every ISR member had the record")
					return
				}
				lat <- time.Since(start)
			}
			errc <- nil
		}()
	}
	for range producers {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	close(lat)
	var ds []time.Duration
	for d := range lat {
		ds = append(ds, d)
	}
	slices.Sort(ds)
	t.Logf("acks=all latency over %d appends: p50 %v p99 %v max %v", len(ds), ds[len(ds)/2], ds[len(ds)*99/100], ds[len(ds)-1])
	end := a.log.LogEndOffset()
	if end != producers*perProducer*2 || ld.HighWatermark() != end {
		t.Fatalf("leader end %d high watermark %d", end, ld.HighWatermark())
	}
	waitFor(t, 5*time.Second, "both followers complete", func() bool {
		return b.log.LogEndOffset() == end && c.log.LogEndOffset() == end
	})
	want := logBytes(t, a.log, 0, end)
	for _, n := range []*node{b, c} {
		if !bytes.Equal(want, logBytes(t, n.log, 0, end)) {
			t.Fatalf("replica %d differs", n.id)
		}
	}
}
