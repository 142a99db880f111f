package controller

import (
	"context"
	"errors"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/metadata"
)

func wNewClient(t *testing.T, voters map[int32]string) *ControllerClient {
	t.Helper()
	c := NewControllerClient(ClientOptions{NodeID: 100, Voters: voters, Logger: wLogger(t), RequestTimeout: 2 * time.Second})
	t.Cleanup(func() { c.Close() })
	return c
}

func TestClientFindsActiveAndFollowsFailover(t *testing.T) {
	fc, voters, stops := fakeVoters(t, 3)
	fc.setActive(2)
	cl := wNewClient(t, voters)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	reg := BrokerRegistration{ID: 100, IncarnationID: metadata.NewUUID(), Host: "b", Port: 1}
	epoch, err := cl.RegisterBroker(ctx, reg)
	if err != nil {
		t.Fatal(err)
	}
	if cl.ActiveID() != 2 {
		t.Fatalf("active %d, want 2", cl.ActiveID())
	}
	// Registering the same incarnation again returns the same epoch.
	if e2, err := cl.RegisterBroker(ctx, reg); err != nil || e2 != epoch {
		t.Fatalf("re-register: %d %v, want %d", e2, err, epoch)
	}

	// The active controller moves: the old one answers NOT_CONTROLLER
	// and the client finds the new one by itself.
	fc.setActive(3)
	res, err := cl.Heartbeat(ctx, BrokerHeartbeat{ID: 100, Epoch: epoch, MetadataOffset: epoch})
	if err != nil || res.IsFenced {
		t.Fatalf("heartbeat after move: %+v %v", res, err)
	}
	if cl.ActiveID() != 3 {
		t.Fatalf("active %d, want 3", cl.ActiveID())
	}

	// The active controller dies and another takes over: connection
	// errors, then discovery through the survivors.
	stops[3]()
	fc.setActive(1)
	first, n, aerr := cl.AllocateProducerIDs(ctx, 100, epoch)
	if aerr != nil || n != ProducerIDBlockSize {
		t.Fatalf("allocate after kill: %d %d %v", first, n, aerr)
	}
	if cl.ActiveID() != 1 {
		t.Fatalf("active %d, want 1", cl.ActiveID())
	}

	// Typed errors come back as *Error with Kafka's code.
	_, herr := cl.Heartbeat(ctx, BrokerHeartbeat{ID: 100, Epoch: epoch + 50})
	if herr == nil || herr.Code != kerr.StaleBrokerEpoch {
		t.Fatalf("stale heartbeat: %v", herr)
	}
	_, _, aerr = cl.AllocateProducerIDs(ctx, 100, epoch+50)
	var ce *Error
	if !errors.As(aerr, &ce) || ce.Code != kerr.StaleBrokerEpoch {
		t.Fatalf("stale allocate: %v", aerr)
	}
}

func TestClientAlterPartition(t *testing.T) {
	fc, voters, _ := fakeVoters(t, 1)
	cl := wNewClient(t, voters)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	epoch, err := cl.RegisterBroker(ctx, BrokerRegistration{ID: 100, Host: "b", Port: 1})
	if err != nil {
		t.Fatal(err)
	}
	tid := fc.createTopic(t, "t", 1, []int32{100, 2, 3})
	p, aerr := cl.AlterPartition(ctx, AlterPartitionRequest{BrokerID: 100, BrokerEpoch: epoch, TopicID: tid, Partition: 0, NewISR: []int32{100, 3}})
	if aerr != nil || !slices.Equal(p.ISR, []int32{100, 3}) || p.PartitionEpoch != 1 || p.Leader != 100 || p.Index != 0 {
		t.Fatalf("alter: %+v %v", p, aerr)
	}
	_, aerr = cl.AlterPartition(ctx, AlterPartitionRequest{BrokerID: 100, BrokerEpoch: epoch, TopicID: tid, Partition: 0, NewISR: []int32{100}})
	if aerr == nil || aerr.Code != kerr.InvalidUpdateVersion {
		t.Fatalf("stale partition epoch: %v", aerr)
	}
	_, aerr = cl.AlterPartition(ctx, AlterPartitionRequest{BrokerID: 100, BrokerEpoch: epoch + 1, TopicID: tid, Partition: 0, PartitionEpoch: 1, NewISR: []int32{100}})
	if aerr == nil || aerr.Code != kerr.StaleBrokerEpoch {
		t.Fatalf("stale broker epoch: %v", aerr)
	}
}

// TestClientGivesUpWithContext: with no controller reachable, requests
// retry until the caller's context ends, then fail with its error.
func TestClientGivesUpWithContext(t *testing.T) {
	l := wListen(t)
	addr := l.Addr().String()
	l.Close() // nothing listens here
	cl := wNewClient(t, map[int32]string{1: addr})
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := cl.Request(ctx, kmsg.NewPtrBrokerHeartbeatRequest())
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("gave up after %v", el)
	}
	cl.Close()
	if _, err := cl.Request(context.Background(), kmsg.NewPtrBrokerHeartbeatRequest()); !errors.Is(err, ErrClientClosed) {
		t.Fatalf("after close: %v", err)
	}
}

// TestClientNoLeaderKnown: voters that know no leader make the client
// wait and retry; once one is elected the request goes through.
func TestClientNoLeaderKnown(t *testing.T) {
	fc, voters, _ := fakeVoters(t, 3)
	fc.setActive(-1)
	cl := wNewClient(t, voters)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() {
		time.Sleep(300 * time.Millisecond)
		fc.setActive(2)
	}()
	if _, err := cl.RegisterBroker(ctx, BrokerRegistration{ID: 100, Host: "b", Port: 1}); err != nil {
		t.Fatal(err)
	}
	if cl.ActiveID() != 2 {
		t.Fatalf("active %d", cl.ActiveID())
	}
}

// TestForward: admin requests go to the active controller's listener at
// the client's version and come back as the controller answered; a
// NOT_CONTROLLER answer makes the client look again.
func TestForward(t *testing.T) {
	fc := newFakeCluster()
	voters := map[int32]string{}
	ls := map[int32]net.Listener{}
	for id := int32(1); id <= 2; id++ {
		ls[id] = wListen(t)
		voters[id] = ls[id].Addr().String()
	}
	fc.voters = voters
	var mu sync.Mutex
	var seen []int32
	for id, l := range ls {
		q := &fakeQuorum{c: fc, id: id}
		wServeKafka(t, l, &controllerHandler{q: q, admin: func(ctx context.Context, req kmsg.Request) kmsg.Response {
			ct, ok := req.(*kmsg.CreateTopicsRequest)
			if !ok {
				return nil
			}
			resp := ct.ResponseKind().(*kmsg.CreateTopicsResponse)
			resp.SetVersion(ct.Version)
			for _, rt := range ct.Topics {
				t := kmsg.NewCreateTopicsResponseTopic()
				t.Topic = rt.Topic
				if !q.IsActive() {
					t.ErrorCode = kerr.NotController.Code
				} else {
					mu.Lock()
					seen = append(seen, id)
					mu.Unlock()
					msg := "created on " + string(rune('0'+id))
					t.ErrorMessage = &msg
					t.NumPartitions = rt.NumPartitions
				}
				resp.Topics = append(resp.Topics, t)
			}
			return resp
		}})
	}
	fc.setActive(2)
	cl := wNewClient(t, voters)
	cl.active.Store(1) // stale knowledge: the first answer is NOT_CONTROLLER
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.SetVersion(5)
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "fwd", 3, 1
	req.Topics = append(req.Topics, rt)
	resp, err := cl.Forward(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	cr := resp.(*kmsg.CreateTopicsResponse)
	if cr.Version != 5 || len(cr.Topics) != 1 || cr.Topics[0].ErrorCode != 0 || cr.Topics[0].NumPartitions != 3 ||
		cr.Topics[0].ErrorMessage == nil || *cr.Topics[0].ErrorMessage != "created on 2" {
		t.Fatalf("forwarded answer %+v", cr)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(seen, []int32{2}) {
		t.Fatalf("served by %v", seen)
	}
	if _, err := cl.Forward(ctx, kmsg.NewPtrMetadataRequest()); err == nil {
		t.Fatal("Metadata forwarded")
	}
}

// TestClientLeavesSilentController: a controller that accepts
// connections but never answers (cut off by a partition, not crashed)
// holds a heartbeat for one attempt only; the client then finds the
// active controller among the others.
func TestClientLeavesSilentController(t *testing.T) {
	fc, voters, _ := fakeVoters(t, 1)
	silent := wListen(t)
	t.Cleanup(func() { silent.Close() })
	go func() {
		var held []net.Conn // keep them open, read nothing
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	voters[2] = silent.Addr().String()
	fc.voters = voters
	cl := wNewClient(t, voters)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	epoch, err := cl.RegisterBroker(ctx, BrokerRegistration{ID: 100, Host: "b", Port: 1})
	if err != nil {
		t.Fatal(err)
	}
	cl.active.Store(2) // it was the active controller a moment ago
	start := time.Now()
	res, herr := cl.heartbeat(ctx, BrokerHeartbeat{ID: 100, Epoch: epoch, MetadataOffset: epoch}, 300*time.Millisecond)
	if herr != nil || res.IsFenced {
		t.Fatalf("heartbeat: %+v %v", res, herr)
	}
	if el := time.Since(start); el < 300*time.Millisecond || el > 3*time.Second {
		t.Fatalf("heartbeat took %v", el)
	}
	if cl.ActiveID() != 1 {
		t.Fatalf("active %d", cl.ActiveID())
	}
}
