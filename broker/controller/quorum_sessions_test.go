package controller

// Shorter broker sessions on the active controller, against real voters
// over TCP: a broker whose heartbeat connection closes keeps its session
// for two heartbeat intervals only (connectionLost), and a new active
// controller gives the broker on the previous controller's node only a
// failover grace to heartbeat it. Both must fence dead brokers well
// before a session timeout and never fence live ones.

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/metadata"
	"github.com/fjordhq/fjord/broker/wire"
)

// rawBroker speaks BrokerRegistration and BrokerHeartbeat on connections
// the test picks, so it can close, redial and switch them.
type rawBroker struct {
	t     *testing.T
	id    int32
	epoch int64
	q     *Quorum // for the metadata offset it reports
}

func sDial(t *testing.T, addr string) *wire.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cn, err := wire.Dial(ctx, addr, "session-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cn.Close() })
	return cn
}

// sRegister registers broker id on cn and heartbeats until unfenced.
func sRegister(t *testing.T, q *Quorum, cn *wire.Conn, id int32) *rawBroker {
	t.Helper()
	req := registrationRequest(BrokerRegistration{ID: id, IncarnationID: metadata.NewUUID(), Host: "127.0.0.1", Port: 19500 + id}, "wire-test-cluster")
	req.SetVersion(clientVersions[kmsg.BrokerRegistration])
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := cn.Request(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	r := resp.(*kmsg.BrokerRegistrationResponse)
	if r.ErrorCode != 0 {
		t.Fatalf("register %d: %v", id, kerr.ErrorForCode(r.ErrorCode))
	}
	b := &rawBroker{t: t, id: id, epoch: r.BrokerEpoch, q: q}
	wEventually(t, 5*time.Second, "broker unfenced", func() bool { return !b.heartbeat(cn) })
	return b
}

// heartbeat sends one heartbeat on cn and reports the answer's IsFenced.
func (b *rawBroker) heartbeat(cn *wire.Conn) bool {
	b.t.Helper()
	req := kmsg.NewPtrBrokerHeartbeatRequest()
	req.SetVersion(clientVersions[kmsg.BrokerHeartbeat])
	req.BrokerID, req.BrokerEpoch = b.id, b.epoch
	req.CurrentMetadataOffset = b.q.Image().Offset
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := cn.Request(ctx, req)
	if err != nil {
		b.t.Fatalf("broker %d heartbeat: %v", b.id, err)
	}
	r := resp.(*kmsg.BrokerHeartbeatResponse)
	if r.ErrorCode != 0 {
		b.t.Fatalf("broker %d heartbeat: %v", b.id, kerr.ErrorForCode(r.ErrorCode))
	}
	return r.IsFenced
}

func fenced(q *Quorum, id int32) bool {
	b := q.Image().Brokers[id]
	return b != nil && b.Fenced
}

// waitFenced polls until broker id is fenced and returns when that was
// seen (bounded by d).
func waitFenced(t *testing.T, q *Quorum, id int32, d time.Duration) time.Time {
	t.Helper()
	wEventually(t, d, "broker fenced", func() bool { return fenced(q, id) })
	return time.Now()
}

// TestConnectionLossShortensSession: broker 1's connection closes (as a
// killed process's does) and it is fenced two intervals later, not one
// session timeout later; broker 2's connection breaks and it redials and
// heartbeats at once, so it keeps its session; broker 3 moves its
// heartbeats to a new connection before the old one closes, so the old
// one's closing does not count and only its session timeout fences it.
func TestConnectionLossShortensSession(t *testing.T) {
	const (
		session  = 4 * time.Second
		interval = 150 * time.Millisecond
		grace    = 2 * interval
	)
	tq := startWireQuorum(t, 1, func(o *QuorumOptions) {
		o.BrokerSessionTimeout, o.BrokerHeartbeatInterval = session, interval
	})
	a := tq.active()
	q := a.q
	cn1, cn2, cn3 := sDial(t, a.addr), sDial(t, a.addr), sDial(t, a.addr)
	b1, b2, b3 := sRegister(t, q, cn1, 1), sRegister(t, q, cn2, 2), sRegister(t, q, cn3, 3)

	// Broker 1 dies: its connection closes.
	fence1 := watchFence(q, b1.id, session)
	closed := time.Now()
	cn1.Close()
	// Broker 2's connection breaks; it redials and heartbeats every
	// interval on the new one, longer than the grace and then some.
	cn2.Close()
	cn2b := sDial(t, a.addr)
	// Broker 3 heartbeats on a second connection, then its first one
	// closes; it then falls silent (its process hung, say).
	if b3.heartbeat(sDial(t, a.addr)) {
		t.Fatal("broker 3 fenced on its second connection")
	}
	last3 := time.Now()
	cn3.Close()

	for time.Since(closed) < 3*grace+time.Second {
		if b2.heartbeat(cn2b) {
			t.Fatalf("broker 2 fenced %v after its connection broke although it redialled and kept heartbeating", time.Since(closed))
		}
		time.Sleep(interval)
	}
	if !fenced(q, b1.id) {
		t.Fatalf("broker 1 not fenced %v after its connection closed (grace %v)", time.Since(closed), grace)
	}
	if fenced(q, b3.id) {
		t.Fatalf("broker 3 fenced %v after its last heartbeat: the connection that closed was not its latest", time.Since(last3))
	}
	at := <-fence1
	if d := at.Sub(closed); at.IsZero() || d < grace {
		t.Fatalf("broker 1 fenced %v after its connection closed, before the grace %v", d, grace)
	}
	t.Logf("broker 1 fenced %v after its connection closed (grace %v, session %v)", at.Sub(closed), grace, session)

	// Broker 3 still goes when its session times out.
	at3 := waitFenced(t, q, b3.id, 2*session)
	if d := at3.Sub(last3); d < session {
		t.Fatalf("broker 3 fenced %v after its last heartbeat, before its session %v", d, session)
	}
	if fenced(q, b2.id) && time.Since(closed) < session {
		t.Fatal("broker 2 fenced")
	}
}

// watchFence polls (every 5 ms, for at most d) for broker id to be
// fenced on q and delivers when it saw that (the zero time if never).
func watchFence(q *Quorum, id int32, d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	go func() {
		deadline := time.Now().Add(d)
		for time.Now().Before(deadline) {
			if fenced(q, id) {
				ch <- time.Now()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
		ch <- time.Time{}
	}()
	return ch
}

// fencings lists the brokers fenced by metadata log entries after offset
// from, as read from q.
func fencings(t *testing.T, q *Quorum, from int64) []int32 {
	t.Helper()
	var ids []int32
	for off := from + 1; off <= q.Image().Offset; {
		es, err := q.ReadLog(off, 1000)
		if err != nil {
			t.Fatalf("read metadata log at %d: %v", off, err)
		}
		if len(es) == 0 {
			break
		}
		for _, e := range es {
			for _, r := range e.Records {
				if c := r.BrokerChange; c != nil && c.Fenced != nil && *c.Fenced {
					ids = append(ids, c.ID)
				}
			}
		}
		off = es[len(es)-1].Offset + 1
	}
	return ids
}

// TestFailoverGraceKeepsLiveBrokers: three combined nodes (voter and
// broker with the same id; the brokers are real lifecycles heartbeating
// every 200 ms through ControllerClients). First the active controller
// dies together with its broker: the next controller fences that broker
// about a failover grace after it became active, far sooner than the 3 s
// session timeout. Then the active controller is killed three times more
// with its broker alive: that broker (the one given only the grace) and
// the others find each new controller in time and are never fenced.
func TestFailoverGraceKeepsLiveBrokers(t *testing.T) {
	const (
		session  = 3 * time.Second
		interval = 200 * time.Millisecond
	)
	tq := startWireQuorum(t, 3, func(o *QuorumOptions) {
		o.BrokerSessionTimeout, o.BrokerHeartbeatInterval = session, interval
	})
	grace := tq.active().q.failoverGrace()
	if grace >= session {
		t.Fatalf("failover grace %v not below the session timeout %v", grace, session)
	}
	bs := map[int32]*wireBroker{}
	for id := int32(1); id <= 3; id++ {
		bs[id] = startWireBroker(t, tq.voters, id)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, b := range bs {
		if err := b.lc.WaitUnfenced(ctx); err != nil {
			t.Fatalf("broker %d: %v", b.id, err)
		}
	}
	a := tq.active()
	mark := a.q.Image().Offset

	// The whole node dies: broker first (its heartbeats stop), then the
	// voter.
	dead := a.id
	bs[dead].lc.Close()
	a.stop()
	a = tq.active()
	activeSeen := time.Now()
	at := waitFenced(t, a.q, dead, 2*session)
	// activeSeen is after the activation, so this overstates the time
	// the new controller took.
	if d := at.Sub(activeSeen); d > (grace+session)/2 {
		t.Fatalf("broker %d, dead with the old controller, fenced %v after the new one became active (grace %v, session %v)", dead, d, grace, session)
	} else {
		t.Logf("broker %d, dead with the old controller, fenced %v after the new controller (%d) was seen active (grace %v)", dead, d, a.id, grace)
	}
	tq.restart(dead)

	for round := 1; round <= 3; round++ {
		killed := a.id
		a.stop()
		a = tq.active()
		// Well past the grace: every live broker, the killed voter's
		// included, has heartbeated the new controller, and none was
		// fenced on the way.
		time.Sleep(grace + time.Second)
		if f := fencings(t, a.q, mark); len(f) != 1 || f[0] != dead {
			t.Fatalf("round %d (killed voter %d): fenced since the start: %v, want only the dead broker %d", round, killed, f, dead)
		}
		for id, b := range bs {
			if id != dead && b.lc.Fenced() {
				t.Fatalf("round %d: broker %d's lifecycle says it is fenced", round, id)
			}
		}
		tq.restart(killed)
	}
}
