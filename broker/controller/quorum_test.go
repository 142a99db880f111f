package controller

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/fjordhq/fjord/broker/metadata"
)

// testQuorum runs real raft voters over real TCP on 127.0.0.1, each behind
// a MuxListener whose Kafka half just closes what it accepts.
type testQuorum struct {
	t      *testing.T
	voters map[int32]string
	dirs   map[int32]string
	nodes  map[int32]*Quorum
	kafka  map[int32]net.Listener
	opts   func(*QuorumOptions)
}

func testLogger() *slog.Logger {
	if os.Getenv("FJORD_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// newTestQuorum starts n voters (ids 1..n); opts adjusts every voter's options.
func newTestQuorum(t *testing.T, n int, opts func(*QuorumOptions)) *testQuorum {
	t.Helper()
	tq := &testQuorum{t: t, voters: map[int32]string{}, dirs: map[int32]string{},
		nodes: map[int32]*Quorum{}, kafka: map[int32]net.Listener{}, opts: opts}
	lns := map[int32]net.Listener{}
	for i := int32(1); i <= int32(n); i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns[i] = l
		tq.voters[i] = l.Addr().String()
		tq.dirs[i] = t.TempDir()
	}
	for id, l := range lns {
		tq.startOn(id, l)
	}
	t.Cleanup(func() {
		for id := range tq.nodes {
			tq.stop(id)
		}
	})
	return tq
}

func (tq *testQuorum) start(id int32) {
	tq.t.Helper()
	var l net.Listener
	var err error
	// The port was ours a moment ago; retry briefly in case the kernel
	// has not released it.
	for i := 0; i < 50; i++ {
		if l, err = net.Listen("tcp", tq.voters[id]); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		tq.t.Fatal(err)
	}
	tq.startOn(id, l)
}

func (tq *testQuorum) startOn(id int32, l net.Listener) {
	tq.t.Helper()
	kafka, raftL := MuxListener(l)
	go func() {
		for {
			c, err := kafka.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	o := QuorumOptions{
		Options: Options{NodeID: id, ClusterID: "test-cluster", Logger: testLogger().With("voter", id),
			DefaultReplicationFactor: 1, DefaultPartitions: 1},
		Voters:               tq.voters,
		RaftListener:         raftL,
		BrokerSessionTimeout: time.Minute,
		HeartbeatTimeout:     300 * time.Millisecond,
		ElectionTimeout:      300 * time.Millisecond,
		LeaderLeaseTimeout:   150 * time.Millisecond,
		CommitTimeout:        5 * time.Millisecond,
	}
	if tq.opts != nil {
		tq.opts(&o)
	}
	q, err := OpenQuorum(tq.dirs[id], o)
	if err != nil {
		kafka.Close()
		raftL.Close()
		tq.t.Fatalf("open voter %d: %v", id, err)
	}
	tq.nodes[id] = q
	tq.kafka[id] = kafka
}

func (tq *testQuorum) stop(id int32) {
	if q := tq.nodes[id]; q != nil {
		q.Close()
		tq.kafka[id].Close()
		delete(tq.nodes, id)
		delete(tq.kafka, id)
	}
}

// active waits (bounded) for an active controller among the running voters.
func (tq *testQuorum) active(timeout time.Duration) *Quorum {
	tq.t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		for _, q := range tq.nodes {
			if q.IsActive() {
				return q
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	tq.t.Fatalf("no active controller within %v", timeout)
	return nil
}

// converge waits until every running voter has applied offset.
func (tq *testQuorum) converge(offset int64) {
	tq.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for id, q := range tq.nodes {
		if err := q.WaitApplied(ctx, offset); err != nil {
			tq.t.Fatalf("voter %d stuck at offset %d, want %d: %v", id, q.Image().Offset, offset, err)
		}
	}
}

func errCode(e *Error) *kerr.Error {
	if e == nil {
		return nil
	}
	return e.Code
}

// registerLive registers brokers and unfences them (one heartbeat after
// catching up), returning their epochs.
func registerLive(t *testing.T, q *Quorum, ids ...int32) map[int32]int64 {
	t.Helper()
	epochs := map[int32]int64{}
	for _, id := range ids {
		epochs[id] = registerRack(t, q, id, "")
	}
	return epochs
}

func registerRack(t *testing.T, q *Quorum, id int32, rack string) int64 {
	t.Helper()
	ctx := context.Background()
	epoch, err := q.RegisterBroker(ctx, BrokerRegistration{ID: id, IncarnationID: metadata.NewUUID(),
		Host: "127.0.0.1", Port: 9000 + id, Rack: rack, Listeners: []Listener{{Name: "PLAINTEXT", Host: "127.0.0.1", Port: 9000 + id}}})
	if err != nil {
		t.Fatalf("register broker %d: %v", id, err)
	}
	res, err := q.BrokerHeartbeat(ctx, BrokerHeartbeat{ID: id, Epoch: epoch, MetadataOffset: q.Image().Offset})
	if err != nil || res.IsFenced {
		t.Fatalf("broker %d not unfenced: %+v %v", id, res, err)
	}
	return epoch
}

func TestQuorumElectionReplicationFailoverRestart(t *testing.T) {
	tq := newTestQuorum(t, 3, nil)
	ctx := context.Background()
	leader := tq.active(10 * time.Second)
	if leader.ActiveID() != leader.opts.NodeID {
		t.Fatalf("active controller %d reports leader %d", leader.opts.NodeID, leader.ActiveID())
	}
	for id, q := range tq.nodes {
		if q == leader {
			continue
		}
		// Followers refuse writes with NOT_CONTROLLER and know the leader.
		res := q.CreateTopics(ctx, []CreateTopic{{Name: "x", Partitions: 1, ReplicationFactor: 1}}, false)
		if errCode(res[0].Err) != kerr.NotController {
			t.Fatalf("voter %d (follower) answered %v, want NOT_CONTROLLER", id, res[0].Err)
		}
		if _, err := q.AllocateProducerIDs(ctx, 10); !errors.Is(err, kerr.NotController) {
			t.Fatalf("follower AllocateProducerIDs: %v", err)
		}
		if q.ActiveID() != leader.opts.NodeID {
			t.Fatalf("voter %d sees leader %d, want %d", id, q.ActiveID(), leader.opts.NodeID)
		}
	}
	registerLive(t, leader, 1, 2, 3)
	res := leader.CreateTopics(ctx, []CreateTopic{
		{Name: "a", Partitions: 3, ReplicationFactor: 3},
		{Name: "b", Partitions: 1, ReplicationFactor: 4}, // more than the live brokers
	}, false)
	if res[0].Err != nil || errCode(res[1].Err) != kerr.InvalidReplicationFactor {
		t.Fatalf("create: %v / %v", res[0].Err, res[1].Err)
	}
	if want := "Unable to replicate the partition 4 time(s): The target replication factor of 4 cannot be reached because only 3 broker(s) are registered or some brokers have all their log directories cordoned."; res[1].Err.Message != want {
		t.Fatalf("message %q", res[1].Err.Message)
	}
	pid, err := leader.AllocateProducerIDs(ctx, 1000)
	if err != nil || pid != 0 {
		t.Fatalf("producer ids: %d %v", pid, err)
	}
	tq.converge(leader.Image().Offset)
	want := leader.Image()
	for id, q := range tq.nodes {
		img := q.Image()
		if img.ClusterID != "test-cluster" || img.Topics["a"] == nil || img.Topics["a"].ID != want.Topics["a"].ID ||
			len(img.Topics["a"].Partitions) != 3 || img.NextProducerID != 1000 || len(img.Brokers) != 3 ||
			img.ControllerID != leader.opts.NodeID {
			t.Fatalf("voter %d image differs: cluster %q topics %v brokers %d pid %d controller %d",
				id, img.ClusterID, img.TopicNames(), len(img.Brokers), img.NextProducerID, img.ControllerID)
		}
	}

	// Kill the leader: another takes over quickly with the state intact.
	oldID := leader.opts.NodeID
	killed := time.Now()
	tq.stop(oldID)
	next := tq.active(10 * time.Second)
	failover := time.Since(killed)
	t.Logf("failover: voter %d active %v after voter %d stopped", next.opts.NodeID, failover, oldID)
	if failover > 5*time.Second {
		t.Errorf("failover took %v", failover)
	}
	if next.Image().Topics["a"] == nil || next.Image().NextProducerID != 1000 {
		t.Fatal("new controller lost state")
	}
	if next.Image().ControllerID != next.opts.NodeID {
		t.Fatalf("image controller id %d, want %d", next.Image().ControllerID, next.opts.NodeID)
	}
	res = next.CreateTopics(ctx, []CreateTopic{{Name: "after-failover", Partitions: 2, ReplicationFactor: 2}}, false)
	if res[0].Err != nil {
		t.Fatalf("write after failover: %v", res[0].Err)
	}
	pid, err = next.AllocateProducerIDs(ctx, 1000)
	if err != nil || pid != 1000 {
		t.Fatalf("producer ids after failover: %d %v", pid, err)
	}

	// Restart the old leader from its directory: it catches up.
	tq.start(oldID)
	tq.converge(next.Image().Offset)
	if img := tq.nodes[oldID].Image(); img.Topics["after-failover"] == nil || img.NextProducerID != 2000 {
		t.Fatalf("restarted voter did not catch up: %v pid %d", img.TopicNames(), img.NextProducerID)
	}
}

func TestQuorumSnapshotInstallAndReadLog(t *testing.T) {
	tq := newTestQuorum(t, 3, func(o *QuorumOptions) {
		o.SnapshotThreshold = 4
		o.TrailingLogs = 2
		o.SnapshotInterval = 50 * time.Millisecond
	})
	ctx := context.Background()
	leader := tq.active(10 * time.Second)
	registerLive(t, leader, 1)
	var follower int32
	for id := range tq.nodes {
		if id != leader.opts.NodeID {
			follower = id
			break
		}
	}
	followerAt := tq.nodes[follower].Image().Offset
	tq.stop(follower)
	for i := 0; i < 20; i++ {
		if r := leader.CreateTopics(ctx, []CreateTopic{{Name: fmt.Sprintf("t%d", i), Partitions: 1, ReplicationFactor: 1}}, false); r[0].Err != nil {
			t.Fatal(r[0].Err)
		}
	}
	if err := leader.raft.Snapshot().Error(); err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	first, _ := leader.logs.FirstIndex()
	if int64(first) <= followerAt+1 {
		// The stopped follower must need entries only the snapshot has.
		t.Fatalf("log not compacted past the follower (first index %d, follower at %d)", first, followerAt)
	}
	// Entries below the compaction point must come from a snapshot.
	if _, err := leader.ReadLog(1, 100); !errors.Is(err, ErrSnapshotNeeded) {
		t.Fatalf("ReadLog(1) after compaction: %v, want ErrSnapshotNeeded", err)
	}
	// From the first retained entry on, the log is readable, contiguous,
	// ends at the image offset, and replaying it onto the snapshot image
	// reproduces the image.
	img := leader.Image()
	entries, err := leader.ReadLog(int64(first), 1000)
	if err != nil || len(entries) == 0 {
		t.Fatalf("ReadLog(%d): %d entries, %v", first, len(entries), err)
	}
	for i, e := range entries {
		if e.Offset != int64(first)+int64(i) {
			t.Fatalf("entry %d has offset %d", i, e.Offset)
		}
	}
	if last := entries[len(entries)-1].Offset; last != img.Offset {
		t.Fatalf("ReadLog ends at %d, image offset %d", last, img.Offset)
	}
	if got, _ := leader.ReadLog(img.Offset+1, 10); len(got) != 0 {
		t.Fatalf("ReadLog past the end returned %d entries", len(got))
	}

	// The stopped follower is behind the compaction point: it gets the
	// snapshot installed, then the rest of the log.
	tq.start(follower)
	tq.converge(img.Offset)
	if got := tq.nodes[follower].Image(); len(got.Topics) != 20 || got.Topics["t19"].ID != img.Topics["t19"].ID {
		t.Fatalf("follower after snapshot install: %v", got.TopicNames())
	}

	// WaitApplied blocks until the offset is applied, and honours ctx.
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := leader.WaitApplied(short, img.Offset+1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitApplied beyond the log: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		done <- tq.nodes[follower].WaitApplied(ctx, img.Offset+1)
	}()
	leader.CreateTopics(ctx, []CreateTopic{{Name: "wake", Partitions: 1, ReplicationFactor: 1}}, false)
	if err := <-done; err != nil {
		t.Fatalf("WaitApplied on follower: %v", err)
	}
	entries, err = leader.ReadLog(img.Offset+1, 10)
	if err != nil || len(entries) != 1 || len(entries[0].Records) == 0 || entries[0].Records[0].Topic == nil || entries[0].Records[0].Topic.Name != "wake" {
		t.Fatalf("ReadLog of the new entry: %+v %v", entries, err)
	}
}

func TestReadLogFromStart(t *testing.T) {
	tq := newTestQuorum(t, 1, nil)
	q := tq.active(10 * time.Second)
	registerLive(t, q, 7)
	entries, err := q.ReadLog(0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	// Replaying the whole log from an empty image rebuilds the image:
	// what a broker's metadata follower does.
	img := metadata.Empty()
	for i, e := range entries {
		if e.Offset != int64(i+1) {
			t.Fatalf("entry %d has offset %d", i, e.Offset)
		}
		if img, err = img.ApplyEntry(e.Offset, e.Records); err != nil {
			t.Fatal(err)
		}
	}
	want := q.Image()
	if img.Offset != want.Offset || img.ClusterID != want.ClusterID || !img.Brokers[7].Equal(want.Brokers[7]) {
		t.Fatalf("replayed image %+v differs from %+v", img.Brokers[7], want.Brokers[7])
	}
	if entries[0].Records != nil {
		t.Fatalf("entry 1 (raft configuration) carries records: %+v", entries[0])
	}
	if got, _ := q.ReadLog(1, 2); len(got) != 2 {
		t.Fatalf("max not honoured: %d entries", len(got))
	}
}

func applyRaft(f *fsm, index uint64, data []byte) any {
	return f.Apply(&raft.Log{Index: index, Type: raft.LogCommand, Data: data})
}

// FuzzFSMApply: any entry bytes either apply or are skipped, never a
// panic, and the offset always advances to the entry's index.
func FuzzFSMApply(f *testing.F) {
	f.Add([]byte(`[{"cluster":{"clusterId":"c","controllerId":1}},{"topic":{"name":"t","id":"AAAAAAAAAAAAAAAAAAAAAQ"}}]`))
	f.Add([]byte(`[{"partition":{"topicId":"AAAAAAAAAAAAAAAAAAAAAQ","index":0,"replicas":[1],"isr":[1],"leader":1}}]`))
	f.Add([]byte(`[{"brokerChange":{"id":1,"epoch":3,"fenced":true}}]`))
	f.Add([]byte(`[{}]`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, b []byte) {
		fs := newFSM(testLogger(), nil)
		applyRaft(fs, 1, []byte(`[{"cluster":{"clusterId":"c","controllerId":1}},{"topic":{"name":"t","id":"AAAAAAAAAAAAAAAAAAAAAQ"}},{"broker":{"id":1,"host":"h","port":1,"epoch":-1}}]`))
		applyRaft(fs, 2, b)
		if got := fs.image.Load().Offset; got != 2 {
			t.Fatalf("offset %d after entry 2", got)
		}
		if fs.image.Load().ClusterID != "c" {
			t.Fatal("earlier state lost")
		}
	})
}

func TestPlaceStripedRackAware(t *testing.T) {
	img := metadata.Empty()
	racks := []string{"r1", "r1", "r2", "r2", "r3", "r3"}
	var recs []metadata.Record
	for i, r := range racks {
		recs = append(recs, metadata.Record{Broker: &metadata.RegisterBrokerRecord{Broker: metadata.Broker{ID: int32(i + 1), Rack: r}}})
	}
	// A fenced broker and one in controlled shutdown never get replicas.
	recs = append(recs,
		metadata.Record{Broker: &metadata.RegisterBrokerRecord{Broker: metadata.Broker{ID: 7, Rack: "r1", Fenced: true}}},
		metadata.Record{Broker: &metadata.RegisterBrokerRecord{Broker: metadata.Broker{ID: 8, Rack: "r2", InControlledShutdown: true}}})
	img, err := img.ApplyEntry(1, recs)
	if err != nil {
		t.Fatal(err)
	}
	rackOf := map[int32]string{}
	for i, r := range racks {
		rackOf[int32(i+1)] = r
	}
	a, perr := placeStriped(img, 60, 3)
	if perr != nil {
		t.Fatal(perr)
	}
	leaders := map[int32]int{}
	for _, replicas := range a {
		seen := map[string]bool{}
		for _, b := range replicas {
			if b == 7 || b == 8 {
				t.Fatalf("replicas %v include an inactive broker", replicas)
			}
			if seen[rackOf[b]] {
				t.Fatalf("replicas %v put two replicas on rack %s", replicas, rackOf[b])
			}
			seen[rackOf[b]] = true
		}
		leaders[replicas[0]]++
	}
	for id := int32(1); id <= 6; id++ {
		if leaders[id] != 10 {
			t.Fatalf("leaders not spread evenly: %v", leaders)
		}
	}
	// More replicas than racks: still no repeated broker, and every rack used.
	a, perr = placeStriped(img, 12, 5)
	if perr != nil {
		t.Fatal(perr)
	}
	for _, replicas := range a {
		s := slices.Clone(replicas)
		slices.Sort(s)
		if len(slices.Compact(s)) != 5 {
			t.Fatalf("replicas %v repeat a broker", replicas)
		}
	}
	if _, perr := placeStriped(img, 1, 7); errCode(perr) != kerr.InvalidReplicationFactor {
		t.Fatalf("rf 7 over 6 active brokers: %v", perr)
	}
}
