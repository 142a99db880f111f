package replica

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/fjordhq/fjord/broker/log"
	"github.com/fjordhq/fjord/broker/metadata"
)

// Unit tests of the Leader's own logic: a real log, FollowerFetch called
// directly, a fake controller and a fake clock.

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Unix(1_700_000_000, 0)} }

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// unitLeader returns a leader over a fresh log holding n records.
func unitLeader(t *testing.T, n int, p metadata.Partition, o LeaderOptions) (*node, *Leader) {
	t.Helper()
	var cl addrs
	nd := newNode(t, p.Leader, &cl, nil)
	o.State = p
	if o.AlterPartition == nil {
		o.AlterPartition = newController(p).alter
	}
	ld := nd.lead(o)
	if n > 0 {
		nd.produce(n, 1, 10)
	}
	return nd, ld
}

func mustFetch(t *testing.T, ld *Leader, id int32, offset int64) FetchState {
	t.Helper()
	st, err := ld.FollowerFetch(id, -1, offset, -1)
	if err != nil {
		t.Fatalf("fetch by %d at %d: %v", id, offset, err)
	}
	return st
}

// TestHighWatermarkRules: the high watermark is the minimum end offset
// over the ISR, held back by ISR members that have not fetched in this
// epoch, and never moves backwards.
func TestHighWatermarkRules(t *testing.T) {
	p := part([]int32{1, 2, 3}, []int32{1, 2, 3}, 1, 1, 1)
	ctl := newController(p)
	ctl.block = make(chan struct{}) // no ISR change completes in this test
	defer close(ctl.block)
	_, ld := unitLeader(t, 0, p, LeaderOptions{AlterPartition: ctl.alter, HighWatermark: 0})
	ld.log.Append(mkBatch(10, 5), log.AppendOptions{LeaderEpoch: 1, AssignOffsets: true})
	ld.OnAppend()
	if hw := ld.HighWatermark(); hw != 0 {
		t.Fatalf("high watermark %d before any follower fetched", hw)
	}
	mustFetch(t, ld, 2, 6)
	if hw := ld.HighWatermark(); hw != 0 {
		t.Fatalf("high watermark %d with follower 3 unknown", hw)
	}
	if st := mustFetch(t, ld, 3, 4); st.HighWatermark != 4 {
		t.Fatalf("fetch answer high watermark %d, want 4", st.HighWatermark)
	}
	mustFetch(t, ld, 3, 10)
	if hw := ld.HighWatermark(); hw != 6 {
		t.Fatalf("high watermark %d, want 6 (follower 2)", hw)
	}
	mustFetch(t, ld, 2, 10)
	if hw := ld.HighWatermark(); hw != 10 {
		t.Fatalf("high watermark %d, want 10", hw)
	}
	// A reassignment adds replica 4 to the ISR (as the image would say):
	// its unknown position cannot pull the high watermark back.
	ld.Update(part([]int32{1, 2, 3, 4}, []int32{1, 2, 3, 4}, 1, 1, 2))
	if hw := ld.HighWatermark(); hw != 10 {
		t.Fatalf("high watermark went to %d", hw)
	}
	ld.log.Append(mkBatch(2, 5), log.AppendOptions{LeaderEpoch: 1, AssignOffsets: true})
	ld.OnAppend()
	mustFetch(t, ld, 2, 12)
	mustFetch(t, ld, 3, 12)
	if hw := ld.HighWatermark(); hw != 10 {
		t.Fatalf("high watermark %d moved without replica 4", hw)
	}
	mustFetch(t, ld, 4, 12)
	if hw := ld.HighWatermark(); hw != 12 {
		t.Fatalf("high watermark %d, want 12", hw)
	}
}

// TestFollowerFetchErrors: replicas outside the assignment, stale broker
// epochs, offsets outside the log, and a diverging last fetched epoch.
func TestFollowerFetchErrors(t *testing.T) {
	p := part([]int32{1, 2}, []int32{1, 2}, 1, 3, 1)
	epochs := map[int32]int64{2: 50}
	_, ld := unitLeader(t, 5, p, LeaderOptions{BrokerEpoch: func(id int32) (int64, bool) {
		e, ok := epochs[id]
		return e, ok
	}})
	if _, err := ld.FollowerFetch(7, -1, 0, -1); !errors.Is(err, kerr.UnknownLeaderEpoch) {
		t.Fatalf("unknown replica: %v", err)
	}
	if _, err := ld.FollowerFetch(2, 49, 0, -1); !errors.Is(err, kerr.NotLeaderForPartition) {
		t.Fatalf("stale broker epoch: %v", err)
	}
	if _, err := ld.FollowerFetch(2, 50, 6, -1); !errors.Is(err, kerr.OffsetOutOfRange) {
		t.Fatalf("offset past the end: %v", err)
	}
	if _, err := ld.FollowerFetch(2, 50, 5, 3); err != nil {
		t.Fatal(err)
	}
	// The follower claims epoch 3 up to offset 7: we end epoch 3 at 5.
	st, err := ld.FollowerFetch(2, 50, 7, 3)
	if err != nil || st.Diverging == nil || *st.Diverging != (EpochEndOffset{3, 5}) {
		t.Fatalf("diverging: %+v, %v", st, err)
	}
	// An epoch older than any we have ends where our first epoch starts.
	st, err = ld.FollowerFetch(2, 50, 5, 2)
	if err != nil || st.Diverging == nil || st.Diverging.EndOffset != 0 {
		t.Fatalf("older epoch: %+v, %v", st, err)
	}
	if err := ld.CheckEpoch(2); !errors.Is(err, kerr.FencedLeaderEpoch) {
		t.Fatalf("older epoch: %v", err)
	}
	if err := ld.CheckEpoch(4); !errors.Is(err, kerr.UnknownLeaderEpoch) {
		t.Fatalf("newer epoch: %v", err)
	}
	if err := ld.CheckEpoch(-1); err != nil {
		t.Fatal(err)
	}
}

// TestBrokerEpochEligibility: a follower only joins the ISR when the
// image says its broker may (KIP-841/903).
func TestBrokerEpochEligibility(t *testing.T) {
	p := part([]int32{1, 2}, []int32{1}, 1, 1, 1)
	ctl := newController(p)
	var mu sync.Mutex
	eligible := false
	_, ld := unitLeader(t, 3, p, LeaderOptions{AlterPartition: ctl.alter, BrokerEpoch: func(int32) (int64, bool) {
		mu.Lock()
		defer mu.Unlock()
		return 9, eligible
	}})
	mustFetch(t, ld, 2, 3)
	time.Sleep(50 * time.Millisecond)
	if ctl.numCalls() != 0 || len(ld.ISR()) != 1 {
		t.Fatalf("ineligible follower proposed: ISR %v, %d calls", ld.ISR(), ctl.numCalls())
	}
	mu.Lock()
	eligible = true
	mu.Unlock()
	if _, err := ld.FollowerFetch(2, 9, 3, -1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 2*time.Second, "expansion", func() bool { return slices.Equal(ld.State().ISR, []int32{1, 2}) })
}

// TestAlterPartitionErrors follows Kafka's handling of each answer:
// INVALID_UPDATE_VERSION waits for the image; a transient error retries;
// OPERATION_NOT_ATTEMPTED reverts so the next fetch proposes again; a
// proposal overtaken by an Update is ignored.
func TestAlterPartitionErrors(t *testing.T) {
	p := part([]int32{1, 2}, []int32{1}, 1, 1, 1)
	ctl := newController(p)
	nd, ld := unitLeader(t, 3, p, LeaderOptions{AlterPartition: ctl.alter, RetryBackoff: 10 * time.Millisecond})

	// INVALID_UPDATE_VERSION: the proposal stays pending, unsent again.
	ctl.mu.Lock()
	ctl.errs = []error{&Error{Code: kerr.InvalidUpdateVersion, Message: "stale"}}
	ctl.mu.Unlock()
	mustFetch(t, ld, 2, 3)
	waitFor(t, 2*time.Second, "the AlterPartition", func() bool { return ctl.numCalls() == 1 })
	mustFetch(t, ld, 2, 3)
	time.Sleep(50 * time.Millisecond)
	if n := ctl.numCalls(); n != 1 {
		t.Fatalf("%d AlterPartition calls while awaiting metadata", n)
	}
	if !slices.Equal(ld.ISR(), []int32{1, 2}) || !slices.Equal(ld.State().ISR, []int32{1}) {
		t.Fatalf("pending expansion: maximal %v committed %v", ld.ISR(), ld.State().ISR)
	}
	// The image arrives (nothing changed but the partition epoch).
	ld.Update(part([]int32{1, 2}, []int32{1}, 1, 1, 2))
	ctl.mu.Lock()
	ctl.state.PartitionEpoch = 2
	// Transient failures, then success.
	ctl.errs = []error{errors.New("connection refused"), kerr.RequestTimedOut}
	ctl.mu.Unlock()
	mustFetch(t, ld, 2, 3)
	waitFor(t, 2*time.Second, "retried expansion", func() bool { return slices.Equal(ld.State().ISR, []int32{1, 2}) })
	if n := ctl.numCalls(); n != 4 {
		t.Fatalf("%d calls, want 4 (1 + 2 failures + success)", n)
	}
	if st := ld.State(); st.PartitionEpoch != 3 {
		t.Fatalf("partition epoch %d, want 3", st.PartitionEpoch)
	}

	// OPERATION_NOT_ATTEMPTED on a shrink reverts it.
	ctl.mu.Lock()
	ctl.errs = []error{kerr.OperationNotAttempted}
	ctl.mu.Unlock()
	nd.produce(1, 1, 10) // follower 2 is behind now
	ld.maybeShrinkAt(ld.o.Now().Add(time.Hour))
	ld.poke()
	waitFor(t, 2*time.Second, "the rejected shrink", func() bool { return ctl.numCalls() == 5 })
	waitFor(t, 2*time.Second, "the revert", func() bool {
		ld.mu.Lock()
		defer ld.mu.Unlock()
		return ld.pending == nil
	})
	if !slices.Equal(ld.State().ISR, []int32{1, 2}) {
		t.Fatalf("ISR %v after a rejected shrink", ld.State().ISR)
	}

	// An Update while the shrink is in flight wins; the answer is dropped.
	ctl.mu.Lock()
	ctl.block = make(chan struct{})
	ctl.mu.Unlock()
	ld.maybeShrinkAt(ld.o.Now().Add(time.Hour))
	ld.poke()
	time.Sleep(20 * time.Millisecond)
	ld.Update(part([]int32{1, 2}, []int32{1, 2}, 1, 1, 9))
	ctl.mu.Lock()
	close(ctl.block)
	ctl.block = nil
	ctl.mu.Unlock()
	waitFor(t, 2*time.Second, "the dropped answer", func() bool { return ctl.numCalls() == 6 })
	time.Sleep(20 * time.Millisecond)
	if st := ld.State(); !slices.Equal(st.ISR, []int32{1, 2}) || st.PartitionEpoch != 9 {
		t.Fatalf("state %+v, want the Update's", st)
	}
}

// TestCaughtUpTime checks Kafka's lastCaughtUpTime rule: a follower that
// keeps reaching the leader's end as of its previous fetch stays in the
// ISR even though the leader keeps appending; one that stops fetching, or
// falls further behind, leaves after the lag time.
func TestCaughtUpTime(t *testing.T) {
	clk := newClock()
	p := part([]int32{1, 2, 3}, []int32{1, 2, 3}, 1, 1, 1)
	ctl := newController(p)
	ctl.block = make(chan struct{})
	defer close(ctl.block)
	nd, ld := unitLeader(t, 0, p, LeaderOptions{AlterPartition: ctl.alter, Now: clk.now, ReplicaLagTime: 10 * time.Second})
	for i := range 6 {
		nd.produce(1, 10, 5) // the leader is always 10 ahead
		end := nd.log.LogEndOffset()
		mustFetch(t, ld, 2, end-10)
		if i < 2 {
			mustFetch(t, ld, 3, end-10)
		}
		clk.advance(4 * time.Second)
	}
	ld.maybeShrinkAt(clk.now())
	ld.mu.Lock()
	pending := ld.pending
	ld.mu.Unlock()
	if pending == nil || !slices.Equal(pending.isr, []int32{1, 2}) {
		t.Fatalf("shrink proposal %+v, want ISR [1 2]", pending)
	}
	if !slices.Equal(ld.ISR(), []int32{1, 2, 3}) {
		t.Fatalf("maximal ISR during a shrink %v: removed members count until committed", ld.ISR())
	}
}

// TestReelectedLeader: an Update with a higher leader epoch and this
// broker still leader starts a new epoch in the log and resets followers.
func TestReelectedLeader(t *testing.T) {
	p := part([]int32{1, 2}, []int32{1, 2}, 1, 1, 1)
	nd, ld := unitLeader(t, 4, p, LeaderOptions{})
	mustFetch(t, ld, 2, 4)
	ld.Update(part([]int32{1, 2}, []int32{1, 2}, 1, 2, 2))
	if ld.LeaderEpoch() != 2 {
		t.Fatalf("epoch %d", ld.LeaderEpoch())
	}
	if e, off := nd.log.EndOffsetForEpoch(1); e != 1 || off != 4 {
		t.Fatalf("epoch 1 ends at (%d, %d), want (1, 4)", e, off)
	}
	if nd.log.LatestEpoch() != 2 {
		t.Fatalf("latest epoch %d", nd.log.LatestEpoch())
	}
	// A stale Update (older epochs) is ignored.
	ld.Update(part([]int32{1, 2}, []int32{1}, 1, 1, 1))
	if st := ld.State(); st.LeaderEpoch != 2 || len(st.ISR) != 2 {
		t.Fatalf("stale update applied: %+v", st)
	}
	// Another leader in the image ends leadership.
	ld.Update(part([]int32{1, 2}, []int32{2}, 2, 3, 3))
	if err := ld.WaitReplicated(context.Background(), 0, 1); !errors.Is(err, kerr.NotLeaderForPartition) {
		t.Fatalf("after losing leadership: %v", err)
	}
}

// TestTruncationFor covers every branch of Kafka's
// getOffsetTruncationState.
func TestTruncationFor(t *testing.T) {
	// The follower: epochs 1@0, 3@10, 4@20, end 30.
	f := fakeLog{leo: 30, epochs: []EpochEndOffset{{1, 0}, {3, 10}, {4, 20}}}
	cases := []struct {
		name    string
		epoch   int32
		end, hw int64
		want    truncation
	}{
		{"leader does not know the epoch", 4, -1, 12, truncation{12, true}},
		{"leader answers without epoch", -1, 25, 0, truncation{25, true}},
		{"same epoch, leader ends first", 4, 25, 0, truncation{25, true}},
		{"same epoch, follower ends first", 3, 15, 0, truncation{15, true}},
		{"same epoch, leader ends later", 3, 40, 0, truncation{20, true}},
		{"leader epoch unknown here", 2, 12, 0, truncation{10, false}},
		{"below every follower epoch", 0, 7, 0, truncation{0, true}},
		{"leader ahead of our end", 4, 99, 0, truncation{30, true}},
	}
	for _, tc := range cases {
		if got := truncationFor(f, tc.epoch, tc.end, tc.hw); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
	// An empty follower cache: the leader's offset.
	if got := truncationFor(fakeLog{leo: 30}, 2, 12, 0); got != (truncation{12, true}) {
		t.Errorf("no local epochs: %+v", got)
	}
}

// fakeLog answers EndOffsetForEpoch like broker/log's epoch cache.
type fakeLog struct {
	leo    int64
	epochs []EpochEndOffset // epoch and start offset
}

func (f fakeLog) LogEndOffset() int64 { return f.leo }

func (f fakeLog) EndOffsetForEpoch(req int32) (int32, int64) {
	n := len(f.epochs)
	if req < 0 || n == 0 {
		return -1, -1
	}
	if f.epochs[n-1].Epoch == req {
		return req, f.leo
	}
	h := 0
	for h < n && f.epochs[h].Epoch <= req {
		h++
	}
	switch {
	case h == n:
		return -1, -1
	case h == 0:
		return req, f.epochs[0].EndOffset
	}
	return f.epochs[h-1].Epoch, f.epochs[h].EndOffset
}
