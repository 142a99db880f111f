package clustertest

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/internal/testkit"
)

// groupConsumer is one member of a consumer group that commits after
// every poll (at-least-once) and records every key it saw.
type groupConsumer struct {
	cl         *kgo.Client
	mu         sync.Mutex
	seen       map[string]int
	commitErrs int
	lastErr    error
	done       chan struct{}
}

func startGroupConsumer(t *testing.T, ctx context.Context, bootstrap, group, topic string) *groupConsumer {
	t.Helper()
	g := &groupConsumer{seen: map[string]int{}, done: make(chan struct{})}
	g.cl = testkit.Client(t, bootstrap, clientOpts(
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(),
		kgo.SessionTimeout(10*time.Second),
		kgo.HeartbeatInterval(500*time.Millisecond),
	)...)
	go func() {
		defer close(g.done)
		for ctx.Err() == nil {
			pctx, cancel := context.WithTimeout(ctx, time.Second)
			fs := g.cl.PollFetches(pctx)
			cancel()
			fs.EachRecord(func(r *kgo.Record) {
				g.mu.Lock()
				g.seen[string(r.Key)]++
				g.mu.Unlock()
			})
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			err := g.cl.CommitUncommittedOffsets(cctx)
			cancel()
			if err != nil && ctx.Err() == nil {
				g.mu.Lock()
				g.commitErrs++
				g.lastErr = err
				g.mu.Unlock()
			}
		}
	}()
	return g
}

// committedWatch polls the group's committed offsets (OffsetFetch through
// the coordinator, wherever it is) and remembers, per partition, the
// highest offset seen and every time one went backwards.
type committedWatch struct {
	mu        sync.Mutex
	high      map[int32]int64
	backwards []string
	polls     int
	lastErr   error
}

func watchCommitted(ctx context.Context, bootstrap, group, topic string) *committedWatch {
	w := &committedWatch{high: map[int32]int64{}}
	// franz-go keeps a group's coordinator cached and re-dials it while it
	// refuses connections (the members find the new one through their
	// heartbeats' errors; a bare OffsetFetch does not), so after an error
	// the watch starts over with a fresh client that asks FindCoordinator.
	newAdm := func() *kadm.Client {
		cl, err := kgo.NewClient(clientOpts(kgo.SeedBrokers(strings.Split(bootstrap, ",")...))...)
		if err != nil {
			panic(err) // only option errors, none here
		}
		return kadm.NewClient(cl)
	}
	adm := newAdm()
	go func() {
		defer func() { adm.Close() }()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			fctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			offs, err := adm.FetchOffsets(fctx, group)
			cancel()
			if err != nil {
				w.mu.Lock()
				w.lastErr = err
				w.mu.Unlock()
				adm.Close()
				adm = newAdm()
				continue // the coordinator is moving
			}
			w.mu.Lock()
			w.polls++
			offs.Each(func(o kadm.OffsetResponse) {
				if o.Topic != topic || o.Err != nil || o.At < 0 {
					return
				}
				if prev, ok := w.high[o.Partition]; ok && o.At < prev {
					w.backwards = append(w.backwards, fmt.Sprintf("partition %d: %d after %d", o.Partition, o.At, prev))
				}
				w.high[o.Partition] = max(w.high[o.Partition], o.At)
			})
			w.mu.Unlock()
		}
	}()
	return w
}

func (w *committedWatch) total() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	var n int64
	for _, o := range w.high {
		n += o
	}
	return n
}

// logGroupState logs what the members and the watch saw, for failures.
func logGroupState(t *testing.T, members []*groupConsumer, w *committedWatch) {
	t.Helper()
	for i, m := range members {
		m.mu.Lock()
		t.Logf("member %d: %d keys seen, %d commit errors (last %v)", i, len(m.seen), m.commitErrs, m.lastErr)
		m.mu.Unlock()
	}
	w.mu.Lock()
	t.Logf("watch: %d OffsetFetch polls, last error %v, committed %v", w.polls, w.lastErr, w.high)
	w.mu.Unlock()
}

// coordinatorOf asks the cluster which broker coordinates group.
func coordinatorOf(t *testing.T, adm *kadm.Client, group string) int32 {
	t.Helper()
	var id int32 = -1
	testkit.CheckFor(t, 30*time.Second, 100*time.Millisecond, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		resp := adm.FindGroupCoordinators(ctx, group)
		r, ok := resp[group]
		if !ok {
			return fmt.Errorf("no FindCoordinator answer for %s", group)
		}
		if r.Err != nil {
			return r.Err
		}
		id = r.NodeID
		return nil
	})
	return id
}

// TestGroupCoordinatorFailover: two members of a group consume an RF 3
// topic under load and commit after every poll while the coordinator
// (the leader of the group's __consumer_offsets partition) is SIGKILLed,
// twice. The group goes on consuming and committing through a new
// coordinator; the committed offsets, watched through OffsetFetch, never
// go backwards; every acknowledged record is consumed (at-least-once) and
// the final commits reach the end of every partition.
func TestGroupCoordinatorFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("process cluster test; skipped with -short")
	}
	props := maps.Clone(fjordTimeouts)
	props["offsets.topic.num.partitions"] = "5"
	c := testkit.StartProcessCluster(t, testkit.ProcessClusterOptions{Nodes: 3, Props: props})
	c.WaitReady(t, 60*time.Second)
	const topic, group, partitions = "grouped", "failover-group", int32(3)
	adm := kadm.NewClient(testkit.Client(t, c.Bootstrap(), clientOpts()...))
	createTopic(t, adm, topic, partitions, 3, map[string]string{"min.insync.replicas": "2"})
	waitFullISR(t, c.Seeds(), 30*time.Second, topic)

	l := newLedger()
	load := startLoad(t, c.Bootstrap(), topic, partitions, "load", l, 300)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	members := []*groupConsumer{
		startGroupConsumer(t, ctx, c.Bootstrap(), group, topic),
		startGroupConsumer(t, ctx, c.Bootstrap(), group, topic),
	}
	watch := watchCommitted(ctx, c.Bootstrap(), group, topic)
	testkit.CheckFor(t, 60*time.Second, 100*time.Millisecond, func() error {
		if n := watch.total(); n < 300 {
			return fmt.Errorf("group committed %d records so far", n)
		}
		return nil
	})

	var resumed durations
	for kill := range 2 {
		coord := coordinatorOf(t, adm, group)
		waitFullISR(t, c.Seeds(), 60*time.Second, "__consumer_offsets", topic)
		before := watch.total()
		t0 := time.Now()
		c.Node(coord).Kill()
		// The group goes on: commits beyond what was committed at the kill.
		deadline := time.Now().Add(60 * time.Second)
		for watch.total() <= before+100 {
			if time.Now().After(deadline) {
				logGroupState(t, members, watch)
				dumpState(t, c, "__consumer_offsets", topic)
				t.Fatalf("committed %d records in 60 s since killing coordinator %d", watch.total()-before, coord)
			}
			time.Sleep(50 * time.Millisecond)
		}
		resumed = append(resumed, time.Since(t0))
		t.Logf("kill %d: coordinator %d killed; commits advancing again after %v; new coordinator %d",
			kill, coord, time.Since(t0).Round(time.Millisecond), coordinatorOf(t, adm, group))
		c.Node(coord).Restart()
		c.WaitReady(t, 60*time.Second)
	}
	load.Stop()
	acked, failed, lastErr := l.stats()
	t.Logf("%d records acknowledged, %d failed (last error %v)", acked, failed, lastErr)

	// Drain: the members read and commit up to the end of every partition.
	consumed := checkGroupCaughtUp(t, c.Bootstrap(), topic, partitions, watch, members, l, 60*time.Second)
	cancel()
	for _, m := range members {
		<-m.done
	}
	again := 0
	for i, m := range members {
		m.mu.Lock()
		t.Logf("member %d: %d records, %d commit errors (last %v)", i, len(m.seen), m.commitErrs, m.lastErr)
		for _, n := range m.seen {
			if n > 1 {
				again++
			}
		}
		m.mu.Unlock()
	}
	watch.mu.Lock()
	t.Logf("%d OffsetFetch polls, final commits %v", watch.polls, watch.high)
	watch.mu.Unlock()
	t.Logf("group consumed %d distinct keys, %d of them again in one member (at-least-once redelivery); commits resumed after coordinator kills: %s",
		consumed, again, resumed.summary())
	checkLedger(t, l, readAll(t, c.Bootstrap(), topic, partitions))
}

// checkGroupCaughtUp waits (up to wait) until the group's commits reach the
// end offsets of topic's partitions, then checks the members consumed
// every acknowledged record and the commits never went backwards. It
// returns the number of keys the members saw.
func checkGroupCaughtUp(t *testing.T, bootstrap, topic string, partitions int32, w *committedWatch, members []*groupConsumer, l *ledger, wait time.Duration) int {
	t.Helper()
	adm := kadm.NewClient(testkit.Client(t, bootstrap, clientOpts()...))
	var ends kadm.ListedOffsets
	testkit.CheckFor(t, 30*time.Second, 200*time.Millisecond, func() error {
		var err error
		ends, err = adm.ListEndOffsets(testkit.Context(t, 10*time.Second), topic)
		if err == nil {
			err = ends.Error()
		}
		return err
	})
	deadline := time.Now().Add(wait)
	for {
		behind := ""
		w.mu.Lock()
		for p := range partitions {
			end, _ := ends.Lookup(topic, p)
			if w.high[p] < end.Offset {
				behind += fmt.Sprintf(" %d: %d < %d", p, w.high[p], end.Offset)
			}
		}
		w.mu.Unlock()
		if behind == "" {
			break
		}
		if time.Now().After(deadline) {
			logGroupState(t, members, w)
			t.Fatalf("group commits behind the end offsets after %v:%s", wait, behind)
		}
		time.Sleep(100 * time.Millisecond)
	}
	w.mu.Lock()
	if len(w.backwards) > 0 {
		t.Errorf("committed offsets went backwards: %v", w.backwards)
	}
	w.mu.Unlock()
	seen := map[string]bool{}
	for _, m := range members {
		m.mu.Lock()
		for k := range m.seen {
			seen[k] = true
		}
		m.mu.Unlock()
	}
	missing := 0
	l.mu.Lock()
	for _, parts := range l.acks {
		for _, acks := range parts {
			for _, a := range acks {
				if !seen[a.key] {
					if missing < 5 {
						t.Errorf("acknowledged %s (offset %d) committed past but never consumed", a.key, a.offset)
					}
					missing++
				}
			}
		}
	}
	l.mu.Unlock()
	if missing > 0 {
		t.Errorf("%d acknowledged records skipped by the group", missing)
	}
	return len(seen)
}
