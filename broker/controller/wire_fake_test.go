package controller

// A fake ControllerQuorum for testing the wire side's own logic (request
// and response shapes, retries, the follower's offset bookkeeping) without
// raft: one shared log and image, and per-node views of it whose IsActive
// follows a switchable "active" id. The real Quorum is exercised in
// wire_quorum_test.go.

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/metadata"
	"github.com/fjordhq/fjord/broker/protocol"
)

type fakeCluster struct {
	mu      sync.Mutex
	entries []LogEntry // retained entries, contiguous
	first   int64      // offset of entries[0] (raft's first index is 1)
	img     *metadata.Image
	active  int32
	voters  map[int32]string
	changed chan struct{}
	// forgotten brokers get BROKER_ID_NOT_REGISTERED until they register
	// again (as after a controller lost their registration).
	forgotten map[int32]bool
}

func newFakeCluster() *fakeCluster {
	c := &fakeCluster{first: 1, img: metadata.Empty(), active: 1, changed: make(chan struct{})}
	c.append([]metadata.Record{{Cluster: &metadata.ClusterRecord{ClusterID: "fake-cluster", ControllerID: 1}}})
	return c
}

// append commits one entry and returns its offset. Caller may hold mu
// or not: append locks itself, so callers must not.
func (c *fakeCluster) append(recs []metadata.Record) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.appendLocked(recs)
}

func (c *fakeCluster) appendLocked(recs []metadata.Record) int64 {
	off := c.img.Offset + 1
	if off < c.first {
		off = c.first
	}
	img, err := c.img.ApplyEntry(off, recs)
	if err != nil {
		panic(err)
	}
	c.entries = append(c.entries, LogEntry{Offset: off, Records: recs})
	c.img = img
	close(c.changed)
	c.changed = make(chan struct{})
	return off
}

// compact drops every entry: later fetches from below need a snapshot.
func (c *fakeCluster) compact() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.first = c.img.Offset + 1
	c.entries = nil
}

func (c *fakeCluster) setActive(id int32) {
	c.mu.Lock()
	c.active = id
	c.mu.Unlock()
}

func (c *fakeCluster) image() *metadata.Image {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.img
}

func (c *fakeCluster) createTopic(t testing.TB, name string, parts int, replicas []int32) metadata.UUID {
	t.Helper()
	id := metadata.NewUUID()
	recs := []metadata.Record{{Topic: &metadata.TopicRecord{Name: name, ID: id}}}
	for i := range parts {
		recs = append(recs, metadata.Record{Partition: &metadata.PartitionRecord{TopicID: id, Partition: metadata.Partition{
			Index: int32(i), Replicas: replicas, ISR: replicas, Leader: replicas[0], LeaderEpoch: 0, PartitionEpoch: 0}}})
	}
	c.append(recs)
	return id
}

type fakeQuorum struct {
	c  *fakeCluster
	id int32
}

var _ ControllerQuorum = (*fakeQuorum)(nil)

func notControllerErr() *Error { return &Error{Code: kerr.NotController} }

func (q *fakeQuorum) Image() *metadata.Image { return q.c.image() }
func (q *fakeQuorum) IsActive() bool {
	q.c.mu.Lock()
	defer q.c.mu.Unlock()
	return q.c.active == q.id
}
func (q *fakeQuorum) ActiveID() int32 {
	q.c.mu.Lock()
	defer q.c.mu.Unlock()
	return q.c.active
}
func (q *fakeQuorum) LeaderEpoch() int32       { return 7 }
func (q *fakeQuorum) Voters() map[int32]string { return q.c.voters }

func (q *fakeQuorum) RegisterBroker(ctx context.Context, r BrokerRegistration) (int64, *Error) {
	c := q.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.active != q.id {
		return -1, notControllerErr()
	}
	if b := c.img.Brokers[r.ID]; b != nil && b.IncarnationID == r.IncarnationID && !c.forgotten[r.ID] {
		return b.Epoch, nil
	}
	delete(c.forgotten, r.ID)
	off := max(c.img.Offset+1, c.first)
	var ls []metadata.Listener
	for _, l := range r.Listeners {
		ls = append(ls, metadata.Listener{Name: l.Name, Host: l.Host, Port: l.Port})
	}
	c.appendLocked([]metadata.Record{{Broker: &metadata.RegisterBrokerRecord{Broker: metadata.Broker{
		ID: r.ID, Host: r.Host, Port: r.Port, Rack: r.Rack, Fenced: true, Epoch: off,
		IncarnationID: r.IncarnationID, Listeners: ls}}}})
	return off, nil
}

func (q *fakeQuorum) BrokerHeartbeat(ctx context.Context, h BrokerHeartbeat) (HeartbeatResult, *Error) {
	c := q.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.active != q.id {
		return HeartbeatResult{}, notControllerErr()
	}
	b := c.img.Brokers[h.ID]
	if b == nil || c.forgotten[h.ID] {
		return HeartbeatResult{}, &Error{Code: kerr.BrokerIDNotRegistered}
	}
	if b.Epoch != h.Epoch {
		return HeartbeatResult{}, &Error{Code: kerr.StaleBrokerEpoch}
	}
	res := HeartbeatResult{IsCaughtUp: h.MetadataOffset >= b.Epoch, IsFenced: b.Fenced}
	switch {
	case h.WantShutdown:
		if !b.InControlledShutdown {
			t := true
			c.appendLocked([]metadata.Record{{BrokerChange: &metadata.BrokerChangeRecord{ID: h.ID, Epoch: b.Epoch, InControlledShutdown: &t}}})
		}
		res.ShouldShutdown = true
	case b.Fenced && !h.WantFence && res.IsCaughtUp:
		f := false
		c.appendLocked([]metadata.Record{{BrokerChange: &metadata.BrokerChangeRecord{ID: h.ID, Epoch: b.Epoch, Fenced: &f}}})
		res.IsFenced = false
	}
	return res, nil
}

func (q *fakeQuorum) AlterPartition(ctx context.Context, r AlterPartitionRequest) (metadata.Partition, *Error) {
	c := q.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.active != q.id {
		return metadata.Partition{}, notControllerErr()
	}
	if b := c.img.Brokers[r.BrokerID]; b == nil || b.Epoch != r.BrokerEpoch {
		return metadata.Partition{}, &Error{Code: kerr.StaleBrokerEpoch}
	}
	t := c.img.TopicsByID[r.TopicID]
	if t == nil || int(r.Partition) >= len(t.Partitions) {
		return metadata.Partition{}, &Error{Code: kerr.UnknownTopicID}
	}
	p := t.Partitions[r.Partition].Clone()
	if r.LeaderEpoch != p.LeaderEpoch {
		return metadata.Partition{}, &Error{Code: kerr.FencedLeaderEpoch}
	}
	if r.PartitionEpoch != p.PartitionEpoch {
		return metadata.Partition{}, &Error{Code: kerr.InvalidUpdateVersion}
	}
	p.ISR = slices.Clone(r.NewISR)
	p.PartitionEpoch++
	c.appendLocked([]metadata.Record{{Partition: &metadata.PartitionRecord{TopicID: t.ID, Partition: *p}}})
	return *p, nil
}

func (q *fakeQuorum) AllocateProducerIDs(ctx context.Context, n int64) (int64, error) {
	c := q.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.active != q.id {
		return 0, notControllerErr()
	}
	first := c.img.NextProducerID
	c.appendLocked([]metadata.Record{{ProducerIDs: &metadata.ProducerIDsRecord{NextProducerID: first + n}}})
	return first, nil
}

func (q *fakeQuorum) ReadLog(from int64, max int) ([]LogEntry, error) {
	c := q.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if from < c.first {
		return nil, ErrSnapshotNeeded
	}
	i := int(from - c.first)
	if i >= len(c.entries) {
		return nil, nil
	}
	return slices.Clone(c.entries[i:min(len(c.entries), i+max)]), nil
}

func (q *fakeQuorum) WaitApplied(ctx context.Context, offset int64) error {
	for {
		q.c.mu.Lock()
		off, ch := q.c.img.Offset, q.c.changed
		q.c.mu.Unlock()
		if off >= offset {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

// controllerHandler serves a controller listener the way the broker's
// handler will: controller APIs through ServeControllerRequest, and
// (when set) admin requests through admin.
type controllerHandler struct {
	q     ControllerQuorum
	admin func(ctx context.Context, req kmsg.Request) kmsg.Response
}

func (h *controllerHandler) Handle(ctx context.Context, c *protocol.Conn, req *protocol.Request) protocol.Response {
	if resp, ok := ServeControllerRequest(ConnectionContext(ctx), h.q, req.Body); ok {
		return protocol.Response{Msg: resp}
	}
	if h.admin != nil {
		if resp := h.admin(ctx, req.Body); resp != nil {
			return protocol.Response{Msg: resp}
		}
	}
	return protocol.Response{None: true, Close: true}
}

func controllerServerVersions() map[int16]protocol.VersionRange {
	m := map[int16]protocol.VersionRange{int16(kmsg.CreateTopics): {Min: 2, Max: 7}}
	for k, v := range ControllerVersions {
		m[int16(k)] = protocol.VersionRange{Min: v.Min, Max: v.Max}
	}
	return m
}

// serveKafka serves h on l until the test ends; stop closes it early
// (a killed controller).
func wServeKafka(t *testing.T, l net.Listener, h protocol.Handler) (stop func()) {
	t.Helper()
	srv := protocol.NewServer(protocol.Config{Versions: controllerServerVersions(), Logger: wLogger(t)}, h)
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Serve(l)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			srv.Close()
			l.Close()
			<-done
		})
	}
	t.Cleanup(stop)
	return stop
}

func wLogger(t *testing.T) *slog.Logger {
	if testing.Verbose() {
		return slog.Default()
	}
	return slog.New(slog.DiscardHandler)
}

func wListen(t *testing.T) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// fakeVoters starts n voters (ids 1..n) over one fake cluster, each on its
// own 127.0.0.1 listener; stops[id] kills voter id's listener.
func fakeVoters(t *testing.T, n int) (*fakeCluster, map[int32]string, map[int32]func()) {
	c := newFakeCluster()
	voters := map[int32]string{}
	stops := map[int32]func(){}
	ls := map[int32]net.Listener{}
	for id := int32(1); id <= int32(n); id++ {
		l := wListen(t)
		ls[id] = l
		voters[id] = l.Addr().String()
	}
	c.voters = voters
	for id, l := range ls {
		stops[id] = wServeKafka(t, l, &controllerHandler{q: &fakeQuorum{c: c, id: id}})
	}
	return c, voters, stops
}

// imageKey is an image's content in a comparable form: the records that
// rebuild it, and its offset.
func wImageKey(t *testing.T, img *metadata.Image) string {
	t.Helper()
	b, err := json.Marshal(struct {
		Offset int64
		Recs   []metadata.Record
	}{img.Offset, snapshotRecords(img)})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// eventually polls cond every 10 ms for at most d.
func wEventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
