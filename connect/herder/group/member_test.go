package group

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/internal/testkit"
)

// echoHandler joins with the "compatible" protocol, its name as metadata;
// as leader it assigns each member "<generation>:<member's metadata>",
// and records the membership it saw.
type echoHandler struct {
	name string
	mu   sync.Mutex
	seen [][]string // metadata of the members in each assignment made
}

func (h *echoHandler) Protocols() []Protocol {
	return []Protocol{{Name: ProtocolCompatible, Metadata: []byte(h.name)}}
}

func (h *echoHandler) Assign(_ context.Context, gen AssignContext, members []MemberMetadata) (map[string][]byte, error) {
	out := map[string][]byte{}
	var names []string
	for _, m := range members {
		out[m.MemberID] = fmt.Appendf(nil, "%d:%s", gen.Generation, m.Metadata)
		names = append(names, string(m.Metadata))
	}
	slices.Sort(names)
	h.mu.Lock()
	h.seen = append(h.seen, names)
	h.mu.Unlock()
	return out, nil
}

// requestCounter counts requests written to brokers by key.
type requestCounter struct{ counts [100]atomic.Int32 }

func (c *requestCounter) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, _ error) {
	if key >= 0 && int(key) < len(c.counts) {
		c.counts[key].Add(1)
	}
}

type memberEnv struct {
	t      *testing.T
	broker *testkit.Broker
	group  string
}

func newMemberEnv(t *testing.T) *memberEnv {
	b := testkit.StartBroker(t, map[string]string{"group.min.session.timeout.ms": "200"})
	return &memberEnv{t: t, broker: b, group: "connect-" + t.Name()}
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func (e *memberEnv) member(name string, opts ...kgo.Opt) (*Member, *echoHandler) {
	h := &echoHandler{name: name}
	cl := testkit.Client(e.t, e.broker.Addr, opts...)
	m := NewMember(Config{
		Client: cl, Group: e.group, Handler: h,
		SessionTimeout: 1500 * time.Millisecond, RebalanceTimeout: 3 * time.Second,
		HeartbeatInterval: 150 * time.Millisecond, RetryBackoff: 50 * time.Millisecond,
		Logger: quiet(),
	})
	e.t.Cleanup(m.Close)
	return m, h
}

func join(t *testing.T, m *Member) Generation {
	t.Helper()
	gen, err := m.Join(testkit.Context(t, 20*time.Second))
	if err != nil {
		t.Fatalf("join: %v", err)
	}
	return gen
}

// joinAsync starts a Join and returns a channel with its result.
func joinAsync(t *testing.T, m *Member) <-chan Generation {
	ch := make(chan Generation, 1)
	go func() {
		gen, err := m.Join(testkit.Context(t, 20*time.Second))
		if err != nil {
			t.Errorf("join: %v", err)
		}
		ch <- gen
	}()
	return ch
}

func waitNotice(t *testing.T, m *Member, want Notice, within time.Duration) {
	t.Helper()
	select {
	case n := <-m.Notices():
		if n != want {
			t.Fatalf("notice %v, want %v", n, want)
		}
	case <-time.After(within):
		t.Fatalf("no %v notice within %v", want, within)
	}
}

func recv[T any](t *testing.T, ch <-chan T, within time.Duration) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(within):
		t.Fatalf("nothing received within %v", within)
	}
	var zero T
	return zero
}

func TestMemberJoinAlone(t *testing.T) {
	e := newMemberEnv(t)
	var rc requestCounter
	m, _ := e.member("w1", kgo.WithHooks(&rc))
	gen := join(t, m)
	if !gen.IsLeader() || gen.MemberID == "" || gen.ID < 1 || gen.Protocol != ProtocolCompatible {
		t.Fatalf("generation %+v: want a leader with an id, generation >= 1, protocol compatible", gen)
	}
	if got, want := string(gen.Assignment), fmt.Sprintf("%d:w1", gen.ID); got != want {
		t.Errorf("assignment %q, want %q", got, want)
	}
	// KIP-394: the first JoinGroup gets MEMBER_ID_REQUIRED, the second
	// joins with the id it was given.
	if n := rc.counts[11].Load(); n != 2 {
		t.Errorf("%d JoinGroup requests, want 2 (MEMBER_ID_REQUIRED round trip)", n)
	}
	if n := rc.counts[10].Load(); n != 1 {
		t.Errorf("%d FindCoordinator requests, want 1", n)
	}
	// Heartbeats keep it in the group well past the session timeout.
	time.Sleep(2 * m.cfg.SessionTimeout)
	select {
	case n := <-m.Notices():
		t.Fatalf("unexpected notice %v while alone in a stable group", n)
	default:
	}
	if n := rc.counts[12].Load(); n < 5 {
		t.Errorf("%d heartbeats in %v, want several", n, 2*m.cfg.SessionTimeout)
	}
	if err := m.Leave(testkit.Context(t, 5*time.Second)); err != nil {
		t.Fatalf("leave: %v", err)
	}
}

func TestMemberRebalanceOnJoinAndLeave(t *testing.T) {
	e := newMemberEnv(t)
	a, ha := e.member("a")
	b, _ := e.member("b")
	gen1 := join(t, a)

	bJoined := joinAsync(t, b)
	waitNotice(t, a, NoticeRebalance, 5*time.Second)
	genA := join(t, a)
	genB := recv(t, bJoined, 10*time.Second)
	if genA.ID != genB.ID || genA.ID <= gen1.ID {
		t.Fatalf("generations a=%d b=%d after %d: want one newer generation", genA.ID, genB.ID, gen1.ID)
	}
	if genA.LeaderID != genB.LeaderID {
		t.Fatalf("leaders differ: %s vs %s", genA.LeaderID, genB.LeaderID)
	}
	if string(genA.Assignment) != fmt.Sprintf("%d:a", genA.ID) || string(genB.Assignment) != fmt.Sprintf("%d:b", genB.ID) {
		t.Fatalf("assignments a=%q b=%q", genA.Assignment, genB.Assignment)
	}
	ha.mu.Lock()
	last := ha.seen[len(ha.seen)-1]
	ha.mu.Unlock()
	if !genA.IsLeader() || !slices.Equal(last, []string{"a", "b"}) {
		t.Fatalf("leader a saw %v (leader=%v), want [a b]", last, genA.IsLeader())
	}

	// b leaves: a hears of the rebalance at its next heartbeat, not
	// after b's session timeout.
	start := time.Now()
	if err := b.Leave(testkit.Context(t, 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	waitNotice(t, a, NoticeRebalance, time.Second)
	if d := time.Since(start); d > a.cfg.SessionTimeout {
		t.Errorf("rebalance noticed after %v; a LeaveGroup should be seen within a heartbeat", d)
	}
	gen3 := join(t, a)
	if gen3.ID <= genA.ID || !gen3.IsLeader() {
		t.Fatalf("after b left: %+v", gen3)
	}
}

func TestMemberSessionExpiryAndStaleMemberRejoin(t *testing.T) {
	e := newMemberEnv(t)
	a, _ := e.member("a")
	b, _ := e.member("b")
	join(t, a)
	bJoined := joinAsync(t, b)
	waitNotice(t, a, NoticeRebalance, 5*time.Second)
	join(t, a)
	genB := recv(t, bJoined, 10*time.Second)

	// b stops heartbeating without leaving, as a crashed worker: the
	// coordinator expires it after the session timeout.
	b.Close()
	start := time.Now()
	waitNotice(t, a, NoticeRebalance, 3*a.cfg.SessionTimeout)
	if d := time.Since(start); d < a.cfg.SessionTimeout/2 {
		t.Errorf("rebalance after %v, before b's session could expire", d)
	}
	genA := join(t, a)
	if genA.ID <= genB.ID || !genA.IsLeader() {
		t.Fatalf("a after b expired: %+v", genA)
	}

	// b comes back with its stale member id: UNKNOWN_MEMBER_ID, then a
	// fresh id, then it is in.
	staleID := b.MemberID()
	bJoined = joinAsync(t, b)
	waitNotice(t, a, NoticeRebalance, 5*time.Second)
	join(t, a)
	genB2 := recv(t, bJoined, 10*time.Second)
	if genB2.MemberID == staleID || genB2.MemberID == "" {
		t.Fatalf("b rejoined as %q (stale id %q)", genB2.MemberID, staleID)
	}
}

func TestMemberFencedAfterMissingRebalance(t *testing.T) {
	e := newMemberEnv(t)
	a, _ := e.member("a")
	b, _ := e.member("b")
	c, _ := e.member("c")
	join(t, a)
	bJoined := joinAsync(t, b)
	waitNotice(t, a, NoticeRebalance, 5*time.Second)
	join(t, a)
	recv(t, bJoined, 10*time.Second)

	// c joins; a rejoins, b ignores the rebalance. The coordinator
	// completes the rebalance without b after the rebalance timeout and
	// b's heartbeats are then refused: it is fenced.
	cJoined := joinAsync(t, c)
	waitNotice(t, a, NoticeRebalance, 5*time.Second)
	aJoined := joinAsync(t, a)
	waitNotice(t, b, NoticeRebalance, 5*time.Second)
	genA := recv(t, aJoined, 10*time.Second)
	genC := recv(t, cJoined, 10*time.Second)
	if genA.ID != genC.ID {
		t.Fatalf("a and c in generations %d and %d", genA.ID, genC.ID)
	}
	waitNotice(t, b, NoticeFenced, 3*b.cfg.SessionTimeout)
	bJoined = joinAsync(t, b)
	waitNotice(t, a, NoticeRebalance, 5*time.Second)
	waitNotice(t, c, NoticeRebalance, 5*time.Second)
	aJoined, cJoined = joinAsync(t, a), joinAsync(t, c)
	genB := recv(t, bJoined, 10*time.Second)
	genA, genC = recv(t, aJoined, 10*time.Second), recv(t, cJoined, 10*time.Second)
	if genA.ID != genB.ID || genB.ID != genC.ID {
		t.Fatalf("generations a=%d b=%d c=%d after b rejoined", genA.ID, genB.ID, genC.ID)
	}
}

func TestMemberIllegalGenerationHeartbeat(t *testing.T) {
	e := newMemberEnv(t)
	a, _ := e.member("a")
	gen := join(t, a)
	// Heartbeat as an older generation of the same member: the
	// coordinator answers ILLEGAL_GENERATION and the member must rejoin.
	a.stopHeartbeat()
	stale := gen
	stale.ID--
	a.startHeartbeat(stale)
	waitNotice(t, a, NoticeFenced, 3*time.Second)
	if a.MemberID() != gen.MemberID {
		t.Errorf("ILLEGAL_GENERATION dropped the member id; only UNKNOWN_MEMBER_ID should")
	}
	gen2 := join(t, a)
	if gen2.MemberID != gen.MemberID {
		t.Errorf("rejoined as %q, want the same member %q", gen2.MemberID, gen.MemberID)
	}
}

func TestMemberCoordinatorRestart(t *testing.T) {
	e := newMemberEnv(t)
	a, _ := e.member("a")
	b, _ := e.member("b")
	join(t, a)
	bJoined := joinAsync(t, b)
	waitNotice(t, a, NoticeRebalance, 5*time.Second)
	genA := join(t, a)
	recv(t, bJoined, 10*time.Second)

	// A quick broker restart: the group is loaded back from
	// __consumer_offsets and the members find the coordinator again:
	// either their heartbeats go on in the same generation, or (if the
	// sessions lapsed meanwhile) they are told to rejoin and converge. The
	// coordinator is never declared lost: the outage is shorter than a
	// session.
	e.broker.Restart()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case n := <-a.Notices():
			if n == NoticeCoordinatorLost {
				t.Fatalf("coordinator lost across a quick restart")
			}
			aJoined, bJoined := joinAsync(t, a), joinAsync(t, b)
			ga, gb := recv(t, aJoined, 10*time.Second), recv(t, bJoined, 10*time.Second)
			if ga.ID != gb.ID {
				t.Fatalf("after restart: generations %d and %d", ga.ID, gb.ID)
			}
			return
		case <-time.After(200 * time.Millisecond):
		}
		if err := a.heartbeatOnce(testkit.Context(t, 5*time.Second), genA); err == nil {
			return // still a member of the same generation
		}
	}
	t.Fatalf("neither a heartbeat nor a rejoin after the restart")
}

func TestMemberCoordinatorLost(t *testing.T) {
	e := newMemberEnv(t)
	a, _ := e.member("a")
	join(t, a)
	addr := e.broker.Addr
	e.broker.Close()
	start := time.Now()
	waitNotice(t, a, NoticeCoordinatorLost, 4*a.cfg.SessionTimeout)
	if d := time.Since(start); d < a.cfg.SessionTimeout {
		t.Errorf("coordinator declared lost after %v, before a session timeout (%v)", d, a.cfg.SessionTimeout)
	}

	// Join keeps retrying while the broker is down and succeeds once it
	// is back (the same address).
	joined := make(chan error, 1)
	go func() {
		_, err := a.Join(testkit.Context(t, 30*time.Second))
		joined <- err
	}()
	time.Sleep(300 * time.Millisecond)
	select {
	case err := <-joined:
		t.Fatalf("join returned while the broker was down: %v", err)
	default:
	}
	e.broker.Restart()
	if e.broker.Addr != addr {
		t.Fatalf("broker came back on %s, not %s", e.broker.Addr, addr)
	}
	if err := recv(t, joined, 20*time.Second); err != nil {
		t.Fatalf("join after the broker came back: %v", err)
	}
}

func TestMemberFatalErrors(t *testing.T) {
	e := newMemberEnv(t)
	cl := testkit.Client(t, e.broker.Addr)
	// The broker refuses session timeouts below group.min.session.timeout.ms.
	m := NewMember(Config{Client: cl, Group: e.group, Handler: &echoHandler{name: "x"},
		SessionTimeout: 10 * time.Millisecond, Logger: quiet()})
	_, err := m.Join(testkit.Context(t, 10*time.Second))
	var fatal *FatalError
	if !errors.As(err, &fatal) || !errors.Is(err, kerr.InvalidSessionTimeout) {
		t.Fatalf("join with a tiny session timeout: %v, want a FatalError with INVALID_SESSION_TIMEOUT", err)
	}

	// A member whose protocols no member of the group shares.
	a, _ := e.member("a")
	join(t, a)
	other := NewMember(Config{Client: cl, Group: e.group, Handler: otherProtocol{}, Logger: quiet(),
		SessionTimeout: 1500 * time.Millisecond})
	_, err = other.Join(testkit.Context(t, 10*time.Second))
	if !errors.As(err, &fatal) || !errors.Is(err, kerr.InconsistentGroupProtocol) {
		t.Fatalf("join with a foreign protocol: %v, want INCONSISTENT_GROUP_PROTOCOL", err)
	}
}

type otherProtocol struct{}

func (otherProtocol) Protocols() []Protocol { return []Protocol{{Name: "range", Metadata: []byte{0}}} }
func (otherProtocol) Assign(context.Context, AssignContext, []MemberMetadata) (map[string][]byte, error) {
	return nil, errors.New("never the leader")
}

// TestMemberJoinRespectsContext: with no broker at all, Join gives up
// when its context ends.
func TestMemberJoinRespectsContext(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	cl := testkit.Client(t, addr)
	m := NewMember(Config{Client: cl, Group: "g", Handler: &echoHandler{name: "x"}, Logger: quiet()})
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = m.Join(ctx)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("join without a broker: %v, want the context's deadline", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("join took %v to notice its context ended", d)
	}
}

// TestMemberCoordinatorMoves: in a three-broker cluster (franz-go's
// kfake) the group's coordinator moves to another broker, then the
// broker it moved to goes away. Each time the members' heartbeats get
// NOT_COORDINATOR (or lose the connection), they look the coordinator up
// again and carry on in the same generation, and a later rebalance runs on
// the new coordinator.
func TestMemberCoordinatorMoves(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.GroupMinSessionTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const groupID = "connect-moves"
	var finds atomic.Int32
	c.ControlKey(10, func(kmsg.Request) (kmsg.Response, error, bool) {
		finds.Add(1)
		c.KeepControl()
		return nil, nil, false
	})
	newMember := func(name string) *Member {
		cl := testkit.Client(t, c.ListenAddrs()[0], kgo.SeedBrokers(c.ListenAddrs()...))
		m := NewMember(Config{Client: cl, Group: groupID, Handler: &echoHandler{name: name},
			SessionTimeout: 3 * time.Second, RebalanceTimeout: 5 * time.Second,
			HeartbeatInterval: 100 * time.Millisecond, RetryBackoff: 50 * time.Millisecond, Logger: quiet()})
		t.Cleanup(m.Close)
		return m
	}
	a, b := newMember("a"), newMember("b")
	join(t, a)
	bJoined := joinAsync(t, b)
	waitNotice(t, a, NoticeRebalance, 5*time.Second)
	gen := join(t, a)
	recv(t, bJoined, 10*time.Second)

	// moveCoordinator rehashes until the group lives on another broker.
	moveCoordinator := func() int32 {
		before := c.CoordinatorFor(groupID)
		for range 100 {
			c.RehashCoordinators()
			if now := c.CoordinatorFor(groupID); now != before {
				return now
			}
		}
		t.Fatalf("the coordinator of %s never moved from %d", groupID, before)
		return -1
	}
	// stillMember checks a keeps heartbeating in gen without notices
	// for a while, and that it found the coordinator again.
	stillMember := func(coord int32) {
		t.Helper()
		startFinds := finds.Load()
		testkit.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
			select {
			case n := <-a.Notices():
				t.Fatalf("notice %v after the coordinator moved; the generation should live on", n)
			default:
			}
			a.mu.Lock()
			known := a.coordinator
			a.mu.Unlock()
			if known != coord {
				return fmt.Errorf("a still uses coordinator %d, not %d", known, coord)
			}
			if finds.Load() == startFinds {
				return fmt.Errorf("no FindCoordinator since the move")
			}
			return a.heartbeatOnce(testkit.Context(t, 5*time.Second), gen)
		})
	}

	stillMember(moveCoordinator())

	// The broker coordinating the group goes away.
	coord := c.CoordinatorFor(groupID)
	if err := c.RemoveNode(coord); err != nil {
		t.Fatal(err)
	}
	next := c.CoordinatorFor(groupID)
	if next == coord {
		t.Fatalf("coordinator still %d after removing it", coord)
	}
	stillMember(next)

	// A rebalance on the new coordinator: b leaves, a rejoins alone.
	if err := b.Leave(testkit.Context(t, 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	waitNotice(t, a, NoticeRebalance, 5*time.Second)
	if g := join(t, a); g.ID <= gen.ID || !g.IsLeader() {
		t.Fatalf("rejoin on the new coordinator: %+v", g)
	}
}
