package controller

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/metadata"
)

// TestUnregisterBroker: unregistering a live broker that leads and
// follows partitions drops it from every ISR and moves its leaderships in
// the same metadata entry as the UnregisterBrokerRecord; the image no
// longer lists it, its heartbeats answer BROKER_ID_NOT_REGISTERED, a
// second unregister too, and it can register again as a new incarnation.
func TestUnregisterBroker(t *testing.T) {
	q := oneVoter(t, nil)
	ctx := context.Background()
	epochs := registerLive(t, q, 1, 2, 3)
	hb := startHeartbeats(t, q, map[int32]int64{2: epochs[2], 3: epochs[3]})
	defer hb.stop()
	if r := q.CreateTopics(ctx, []CreateTopic{{Name: "u", Partitions: 6, ReplicationFactor: 3}}, false); r[0].Err != nil {
		t.Fatal(r[0].Err)
	}
	before := q.Image()
	if !slices.ContainsFunc(partitionsOf(before, "u"), func(p *metadata.Partition) bool { return p.Leader == 1 }) {
		t.Fatal("placement gave broker 1 no leadership; the test needs one")
	}

	if err := q.UnregisterBroker(ctx, 1); err != nil {
		t.Fatal(err)
	}
	after := q.Image()
	if after.Brokers[1] != nil {
		t.Fatalf("broker 1 still registered: %+v", after.Brokers[1])
	}
	for i, p := range partitionsOf(after, "u") {
		old := partitionsOf(before, "u")[i]
		if slices.Contains(p.ISR, 1) || p.Leader == 1 || p.Leader < 0 {
			t.Errorf("u-%d after unregistering broker 1: %+v", i, p)
		}
		// Replicas are reassignment's business, not unregistration's.
		if !slices.Equal(p.Replicas, old.Replicas) {
			t.Errorf("u-%d replicas %v, were %v", i, p.Replicas, old.Replicas)
		}
	}
	entries, err := q.ReadLog(before.Offset+1, 100)
	if err != nil || len(entries) != 1 {
		t.Fatalf("entries after unregister: %+v %v", entries, err)
	}
	recs := entries[0].Records
	last := recs[len(recs)-1].UnregisterBroker
	if last == nil || last.ID != 1 || last.Epoch != epochs[1] || len(recs) != 7 {
		t.Fatalf("unregister entry: %+v", recs)
	}

	_, herr := q.BrokerHeartbeat(ctx, BrokerHeartbeat{ID: 1, Epoch: epochs[1], MetadataOffset: after.Offset})
	if errCode(herr) != kerr.BrokerIDNotRegistered {
		t.Errorf("heartbeat of the unregistered broker: %v", herr)
	}
	if err := q.UnregisterBroker(ctx, 1); errCode(err) != kerr.BrokerIDNotRegistered {
		t.Errorf("second unregister: %v", err)
	}
	if err := q.UnregisterBroker(ctx, 42); errCode(err) != kerr.BrokerIDNotRegistered {
		t.Errorf("unregister of an unknown id: %v", err)
	}

	// A process still running registers again: a new epoch, fenced until
	// it heartbeats caught up.
	epoch, rerr := q.RegisterBroker(ctx, BrokerRegistration{ID: 1, IncarnationID: metadata.NewUUID(), Host: "127.0.0.1", Port: 9001})
	if rerr != nil || epoch <= epochs[1] || !q.Image().Brokers[1].Fenced {
		t.Fatalf("register again: epoch %d (was %d) %v %+v", epoch, epochs[1], rerr, q.Image().Brokers[1])
	}
}

// TestUnregisterBrokerOverTheWire: UnregisterBroker sent to a follower
// voter answers NOT_CONTROLLER; forwarded by a broker's ControllerClient
// it reaches the active controller. The unregistered broker's lifecycle,
// still running, registers again by itself and is unfenced.
func TestUnregisterBrokerOverTheWire(t *testing.T) {
	tq := startWireQuorum(t, 3, nil)
	b1 := startWireBroker(t, tq.voters, 10)
	b2 := startWireBroker(t, tq.voters, 11)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, b := range []*wireBroker{b1, b2} {
		if err := b.lc.WaitUnfenced(ctx); err != nil {
			t.Fatalf("broker %d: %v", b.id, err)
		}
	}
	a := tq.active()
	for _, v := range tq.nodes {
		if v == a {
			continue
		}
		req := kmsg.NewPtrUnregisterBrokerRequest()
		req.BrokerID = 10
		resp, ok := ServeControllerRequest(ctx, v.q, req)
		if !ok || resp.(*kmsg.UnregisterBrokerResponse).ErrorCode != kerr.NotController.Code {
			t.Fatalf("voter %d (not active): %+v %v", v.id, resp, ok)
		}
		break
	}

	oldEpoch := b1.lc.Epoch()
	req := kmsg.NewPtrUnregisterBrokerRequest()
	req.BrokerID = 10
	resp, err := b2.cl.Forward(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if code := resp.(*kmsg.UnregisterBrokerResponse).ErrorCode; code != 0 {
		t.Fatalf("forwarded unregister: %v", kerr.ErrorForCode(code))
	}
	req.BrokerID = 99
	resp, err = b2.cl.Forward(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if r := resp.(*kmsg.UnregisterBrokerResponse); r.ErrorCode != kerr.BrokerIDNotRegistered.Code || r.ErrorMessage == nil {
		t.Fatalf("unregister of an unknown id: %v %v", kerr.ErrorForCode(r.ErrorCode), r.ErrorMessage)
	}
	// Broker 10 is still running: its next heartbeat finds no
	// registration and it registers again with a new epoch.
	wEventually(t, 10*time.Second, "broker 10 registered again and unfenced", func() bool {
		b := a.q.Image().Brokers[10]
		return b != nil && b.Epoch > oldEpoch && !b.Fenced && b1.lc.Epoch() == b.Epoch
	})
}
