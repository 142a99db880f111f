package replica

import (
	"bytes"
	"testing"
	"time"
)

func TestThrottleBucket(t *testing.T) {
	clk := newClock()
	th := NewThrottle(1000)
	th.now = clk.now
	th.last = clk.now()
	if th.Exceeded() {
		t.Fatal("exceeded before any traffic")
	}
	th.Record(500)
	if w := th.Wait(); w != 500*time.Millisecond {
		t.Fatalf("wait %v after 500 bytes at 1000 B/s", w)
	}
	clk.advance(499 * time.Millisecond)
	if !th.Exceeded() {
		t.Fatal("debt paid early")
	}
	clk.advance(time.Millisecond)
	if th.Exceeded() {
		t.Fatal("debt not paid on time")
	}
	// Idle time accumulates at most burstTime's worth (100 bytes).
	clk.advance(10 * time.Second)
	th.Record(150)
	if w := th.Wait(); w != 50*time.Millisecond {
		t.Fatalf("wait %v after an idle period, want 50ms", w)
	}
	th.SetRate(0)
	th.Record(1 << 20)
	if th.Exceeded() || th.Rate() != 0 {
		t.Fatal("a zero rate throttles")
	}
	var none *Throttle
	none.Record(10)
	if none.Wait() != 0 {
		t.Fatal("nil throttle waits")
	}
}

// TestFollowerThrottle: a throttled partition catching up replicates at
// follower.replication.throttled.rate (±30%); an unthrottled one is not
// held back.
func TestFollowerThrottle(t *testing.T) {
	const (
		rate  = 1 << 20
		total = 2 << 20
	)
	var cl addrs
	a := newNode(t, 1, &cl, nil)
	ctl := newController(part([]int32{1, 2, 3}, []int32{1}, 1, 1, 1))
	a.lead(LeaderOptions{State: ctl.get(), AlterPartition: ctl.alter})
	last := a.produce(total/(16<<10), 16, 1<<10) // 16 KiB batches
	size := a.log.Size()

	// Control: an unthrottled follower.
	free := newNode(t, 3, &cl, nil)
	o := fetcherOpts(3, &cl)
	o.PartitionMaxBytes = 64 << 10
	o.Throttle = NewThrottle(rate)
	o.Throttled = func(string, int32) bool { return false }
	fm := startFetchers(t, o)
	start := time.Now()
	fm.Set(Follow{Topic: testTopic, TopicID: testTopicID, Partition: 0, Log: free.log, LeaderID: 1, LeaderEpoch: 1})
	waitFor(t, 10*time.Second, "unthrottled catch-up", func() bool { return free.log.LogEndOffset() == last+1 })
	unthrottled := time.Since(start)

	b := newNode(t, 2, &cl, nil)
	o = fetcherOpts(2, &cl)
	o.PartitionMaxBytes = 64 << 10
	o.Throttle = NewThrottle(rate)
	o.Throttled = func(topic string, p int32) bool { return topic == testTopic && p == 0 }
	fm = startFetchers(t, o)
	start = time.Now()
	fm.Set(Follow{Topic: testTopic, TopicID: testTopicID, Partition: 0, Log: b.log, LeaderID: 1, LeaderEpoch: 1})
	waitFor(t, 20*time.Second, "throttled catch-up", func() bool { return b.log.LogEndOffset() == last+1 })
	elapsed := time.Since(start)
	got := float64(size) / elapsed.Seconds()
	t.Logf("throttled: %d bytes in %v = %.0f B/s (limit %d); unthrottled %v", size, elapsed, got, rate, unthrottled)
	if got < 0.7*rate || got > 1.3*rate {
		t.Fatalf("throttled rate %.0f B/s, want %d ±30%%", got, rate)
	}
	if unthrottled > elapsed/3 {
		t.Fatalf("unthrottled catch-up took %v, throttled %v", unthrottled, elapsed)
	}
	if !bytes.Equal(logBytes(t, a.log, 0, last+1), logBytes(t, b.log, 0, last+1)) {
		t.Fatal("throttled follower's log differs")
	}
}
