package controller

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/fjordhq/fjord/broker/metadata"
)

type wFenceLog struct {
	mu     sync.Mutex
	states []bool
}

func (f *wFenceLog) add(fenced bool) {
	f.mu.Lock()
	f.states = append(f.states, fenced)
	f.mu.Unlock()
}

func (f *wFenceLog) get() []bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]bool(nil), f.states...)
}

// TestLifecycleRegistersUnfencesAndShutsDown: a broker registers, stays
// fenced while its metadata is behind its registration, is unfenced once
// caught up, re-registers when the controller loses its registration, and
// shuts down in a controlled way.
func TestLifecycleRegistersUnfencesAndShutsDown(t *testing.T) {
	fc, voters, _ := fakeVoters(t, 3)
	fc.setActive(2)
	cl := wNewClient(t, voters)
	var mu sync.Mutex
	metaOffset := int64(-1)
	setOffset := func(o int64) { mu.Lock(); metaOffset = o; mu.Unlock() }
	fences := &wFenceLog{}
	lc := StartBrokerLifecycle(LifecycleOptions{
		Client:            cl,
		Registration:      BrokerRegistration{ID: 7, IncarnationID: metadata.NewUUID(), Host: "b7", Port: 9092},
		HeartbeatInterval: 200 * time.Millisecond,
		MetadataOffset:    func() int64 { mu.Lock(); defer mu.Unlock(); return metaOffset },
		Logger:            wLogger(t),
		OnStateChange:     fences.add,
	})
	t.Cleanup(lc.Close)

	wEventually(t, 5*time.Second, "registration", func() bool { return lc.Epoch() > 0 })
	epoch := lc.Epoch()
	if b := fc.image().Brokers[7]; b == nil || b.Epoch != epoch || !b.Fenced {
		t.Fatalf("registered broker %+v, epoch %d", b, epoch)
	}
	// Behind its own registration: heartbeats ask to stay fenced.
	time.Sleep(400 * time.Millisecond)
	if !lc.Fenced() || fc.image().Brokers[7].Fenced == false {
		t.Fatal("unfenced before catching up")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	setOffset(epoch)
	if err := lc.WaitUnfenced(ctx); err != nil {
		t.Fatal(err)
	}
	if fc.image().Brokers[7].Fenced {
		t.Fatal("controller still has the broker fenced")
	}

	// The controller forgets the registration (e.g. a rebuilt cluster
	// state): BROKER_ID_NOT_REGISTERED, then the broker registers again.
	fc.mu.Lock()
	fc.forgotten = map[int32]bool{7: true}
	fc.mu.Unlock()
	wEventually(t, 5*time.Second, "re-registration", func() bool {
		b := fc.image().Brokers[7]
		return b != nil && lc.Epoch() == b.Epoch && lc.Epoch() > epoch
	})
	setOffset(lc.Epoch())
	wEventually(t, 5*time.Second, "unfenced again", func() bool { return !lc.Fenced() && !fc.image().Brokers[7].Fenced })

	// Controlled shutdown: WantShutdown until ShouldShutdown.
	if err := lc.ControlledShutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if !fc.image().Brokers[7].InControlledShutdown {
		t.Fatal("controller never saw the shutdown request")
	}
	if got := fences.get(); len(got) != 3 || got[0] || !got[1] || got[2] {
		t.Fatalf("fencing changes %v, want [false true false]", got)
	}
	lc.Close()
	if err := lc.WaitUnfenced(ctx); err != nil {
		// Unfenced already: WaitUnfenced answers from state, closed or not.
		t.Fatal(err)
	}
}

// TestLifecycleRegistrationWaitsForController: with no active controller
// registration is retried until one appears.
func TestLifecycleRegistrationWaitsForController(t *testing.T) {
	fc, voters, _ := fakeVoters(t, 3)
	fc.setActive(-1)
	lc := StartBrokerLifecycle(LifecycleOptions{
		Client:            wNewClient(t, voters),
		Registration:      BrokerRegistration{ID: 8, Host: "b8", Port: 9092},
		HeartbeatInterval: 100 * time.Millisecond,
		MetadataOffset:    func() int64 { return 1 << 40 },
		Logger:            wLogger(t),
	})
	t.Cleanup(lc.Close)
	time.Sleep(300 * time.Millisecond)
	if lc.Epoch() != -1 {
		t.Fatal("registered without a controller")
	}
	fc.setActive(1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := lc.WaitUnfenced(ctx); err != nil {
		t.Fatal(err)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel2()
	lc.Close()
	// After Close a controlled shutdown cannot be answered.
	if err := lc.ControlledShutdown(ctx2); err == nil {
		t.Fatal("controlled shutdown after Close succeeded")
	}
}
