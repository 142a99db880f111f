package controller

// The wire side against a real 3-voter Quorum: raft over real TCP on
// 127.0.0.1, each voter's controller listener split by MuxListener, the
// Kafka half served by broker/protocol with a handler that answers the
// controller APIs through ServeControllerRequest and CreateTopics through
// the local Quorum (what the broker's handler does on a controller node).

import (
	"context"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/metadata"
	"github.com/fjordhq/fjord/broker/wire"
)

type wireVoter struct {
	id   int32
	dir  string
	addr string
	q    *Quorum
	stop func() // closes the Kafka server, the quorum and the listener
}

type wireQuorum struct {
	t      *testing.T
	voters map[int32]string
	nodes  map[int32]*wireVoter
	opts   func(*QuorumOptions)
}

// startWireQuorum starts n voters (ids 1..n); tweak adjusts each voter's
// options (snapshot thresholds, session timeout).
func startWireQuorum(t *testing.T, n int, tweak func(*QuorumOptions)) *wireQuorum {
	t.Helper()
	tq := &wireQuorum{t: t, voters: map[int32]string{}, nodes: map[int32]*wireVoter{}, opts: tweak}
	ls := map[int32]net.Listener{}
	for id := int32(1); id <= int32(n); id++ {
		ls[id] = wListen(t)
		tq.voters[id] = ls[id].Addr().String()
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	var mu sync.Mutex
	for id, l := range ls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := tq.open(id, filepath.Join(t.TempDir(), strconv.Itoa(int(id))), l)
			if err != nil {
				errs <- err
				return
			}
			mu.Lock()
			tq.nodes[id] = v
			mu.Unlock()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, v := range tq.nodes {
			v.stop()
		}
	})
	return tq
}

func (tq *wireQuorum) open(id int32, dir string, l net.Listener) (*wireVoter, error) {
	kafkaL, raftL := MuxListener(l)
	opts := QuorumOptions{
		Options:              Options{NodeID: id, ClusterID: "wire-test-cluster", Logger: wLogger(tq.t)},
		Voters:               tq.voters,
		RaftListener:         raftL,
		BrokerSessionTimeout: 3 * time.Second,
		HeartbeatTimeout:     300 * time.Millisecond,
		ElectionTimeout:      300 * time.Millisecond,
		LeaderLeaseTimeout:   150 * time.Millisecond,
		CommitTimeout:        5 * time.Millisecond,
	}
	if tq.opts != nil {
		tq.opts(&opts)
	}
	q, err := OpenQuorum(dir, opts)
	if err != nil {
		l.Close()
		return nil, err
	}
	stopKafka := wServeKafka(tq.t, kafkaL, &controllerHandler{q: q, admin: func(ctx context.Context, req kmsg.Request) kmsg.Response {
		if ct, ok := req.(*kmsg.CreateTopicsRequest); ok {
			return createTopicsVia(ctx, q, ct)
		}
		return nil
	}})
	var once sync.Once
	v := &wireVoter{id: id, dir: dir, addr: l.Addr().String(), q: q}
	v.stop = func() {
		once.Do(func() {
			stopKafka()
			q.Close()
			l.Close()
		})
	}
	return v, nil
}

// restart reopens a stopped voter from its directory on its address.
func (tq *wireQuorum) restart(id int32) {
	tq.t.Helper()
	old := tq.nodes[id]
	var l net.Listener
	var err error
	for i := 0; i < 50; i++ { // the port may linger briefly after close
		if l, err = net.Listen("tcp", old.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		tq.t.Fatal(err)
	}
	v, err := tq.open(id, old.dir, l)
	if err != nil {
		tq.t.Fatal(err)
	}
	tq.nodes[id] = v
}

// createTopicsVia is a minimal CreateTopics handler over a Controller.
func createTopicsVia(ctx context.Context, c Controller, r *kmsg.CreateTopicsRequest) kmsg.Response {
	var reqs []CreateTopic
	for _, t := range r.Topics {
		reqs = append(reqs, CreateTopic{Name: t.Topic, Partitions: t.NumPartitions, ReplicationFactor: t.ReplicationFactor})
	}
	resp := r.ResponseKind().(*kmsg.CreateTopicsResponse)
	resp.SetVersion(r.Version)
	for i, res := range c.CreateTopics(ctx, reqs, r.ValidateOnly) {
		rt := kmsg.NewCreateTopicsResponseTopic()
		rt.Topic = r.Topics[i].Topic
		if res.Err != nil {
			rt.ErrorCode = res.Err.Code.Code
			msg := res.Err.Message
			rt.ErrorMessage = &msg
		} else {
			rt.TopicID = res.Topic.ID
			rt.NumPartitions = int32(len(res.Topic.Partitions))
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// active waits for an active controller among the running voters.
func (tq *wireQuorum) active() *wireVoter {
	tq.t.Helper()
	var a *wireVoter
	wEventually(tq.t, 10*time.Second, "an active controller", func() bool {
		for _, v := range tq.nodes {
			if v.q != nil && !v.q.closed.Load() && v.q.IsActive() {
				a = v
				return true
			}
		}
		return false
	})
	return a
}

func forwardCreate(t *testing.T, cl *ControllerClient, name string, parts int32, rf int16) *kmsg.CreateTopicsResponseTopic {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.SetVersion(7)
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, parts, rf
	req.Topics = append(req.Topics, rt)
	resp, err := cl.Forward(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	return &resp.(*kmsg.CreateTopicsResponse).Topics[0]
}

// wireBroker is a broker's controller-facing half: client, metadata
// follower and lifecycle, as the broker integration wires them.
type wireBroker struct {
	id  int32
	cl  *ControllerClient
	f   *MetadataFollower
	lc  *BrokerLifecycle
	chg *wChangeLog
}

func startWireBroker(t *testing.T, voters map[int32]string, id int32) *wireBroker {
	t.Helper()
	b := &wireBroker{id: id, chg: &wChangeLog{t: t}}
	b.cl = NewControllerClient(ClientOptions{NodeID: id, Voters: voters, Logger: wLogger(t), RequestTimeout: 2 * time.Second, ClusterID: "wire-test-cluster"})
	b.f = StartMetadataFollower(FollowerOptions{Client: b.cl, Logger: wLogger(t), OnChange: b.chg.onChange, MaxWait: 200 * time.Millisecond})
	b.lc = StartBrokerLifecycle(LifecycleOptions{
		Client:            b.cl,
		Registration:      BrokerRegistration{ID: id, IncarnationID: metadata.NewUUID(), Host: "127.0.0.1", Port: 19000 + id},
		HeartbeatInterval: 200 * time.Millisecond,
		MetadataOffset:    func() int64 { return b.f.Image().Offset },
		Logger:            wLogger(t),
	})
	t.Cleanup(func() {
		b.lc.Close()
		b.f.Close()
		b.cl.Close()
	})
	return b
}

// TestQuorumBrokersRegisterFollowAndSurviveFailover: three brokers
// register with a real 3-voter quorum, follow its log until unfenced,
// create an RF 3 topic through Forward, shrink an ISR with AlterPartition;
// the active controller is killed, a new one takes over, the brokers stay
// unfenced, and their images converge with the quorum's after every step.
func TestQuorumBrokersRegisterFollowAndSurviveFailover(t *testing.T) {
	tq := startWireQuorum(t, 3, nil)
	var bs []*wireBroker
	for id := int32(10); id < 13; id++ {
		bs = append(bs, startWireBroker(t, tq.voters, id))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, b := range bs {
		if err := b.lc.WaitUnfenced(ctx); err != nil {
			t.Fatalf("broker %d: %v", b.id, err)
		}
	}
	a := tq.active()
	img := a.q.Image()
	for _, b := range bs {
		rb := img.Brokers[b.id]
		if rb == nil || rb.Fenced || rb.Epoch != b.lc.Epoch() || rb.Port != 19000+b.id {
			t.Fatalf("broker %d in the quorum's image: %+v (lifecycle epoch %d)", b.id, rb, b.lc.Epoch())
		}
	}

	if r := forwardCreate(t, bs[0].cl, "orders", 3, 3); r.ErrorCode != 0 || r.NumPartitions != 3 {
		t.Fatalf("create: %v %v", kerr.ErrorForCode(r.ErrorCode), r.ErrorMessage)
	}
	if r := forwardCreate(t, bs[1].cl, "too-wide", 1, 4); r.ErrorCode != kerr.InvalidReplicationFactor.Code {
		t.Fatalf("RF 4 on 3 brokers: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	wConvergeAll(t, tq, bs)

	// The leader of orders-0 drops one follower from the ISR.
	p := bs[0].f.Image().Partition("orders", 0)
	leader := bs[slices.IndexFunc(bs, func(b *wireBroker) bool { return b.id == p.Leader })]
	isr := slices.DeleteFunc(slices.Clone(p.ISR), func(id int32) bool { return id != p.Leader })
	isr = append(isr, p.Replicas[slices.IndexFunc(p.Replicas, func(id int32) bool { return id != p.Leader })])
	slices.Sort(isr)
	got, aerr := leader.cl.AlterPartition(ctx, AlterPartitionRequest{
		BrokerID: leader.id, BrokerEpoch: leader.lc.Epoch(), TopicID: bs[0].f.Image().Topic("orders").ID,
		Partition: 0, LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch, NewISR: isr,
	})
	if aerr != nil || !slices.Equal(wSorted(got.ISR), isr) || got.PartitionEpoch != p.PartitionEpoch+1 {
		t.Fatalf("alter partition: %+v %v (want ISR %v)", got, aerr, isr)
	}
	// A stale partition epoch is refused with Kafka's code.
	_, aerr = leader.cl.AlterPartition(ctx, AlterPartitionRequest{
		BrokerID: leader.id, BrokerEpoch: leader.lc.Epoch(), TopicID: bs[0].f.Image().Topic("orders").ID,
		Partition: 0, LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch, NewISR: p.ISR,
	})
	if aerr == nil || aerr.Code != kerr.InvalidUpdateVersion {
		t.Fatalf("stale partition epoch: %v", aerr)
	}
	first, n, err := bs[2].cl.AllocateProducerIDs(ctx, bs[2].id, bs[2].lc.Epoch())
	if err != nil || n != ProducerIDBlockSize {
		t.Fatalf("producer ids: %d %d %v", first, n, err)
	}
	wConvergeAll(t, tq, bs)

	// Kill the active controller.
	killed := a.id
	killedAt := time.Now()
	a.stop()
	// Straight away: the client finds the new controller by itself.
	if r := forwardCreate(t, bs[2].cl, "after-failover", 2, 3); r.ErrorCode != 0 {
		t.Fatalf("create after failover: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	t.Logf("controller %d killed: a forwarded CreateTopics succeeded after %v", killed, time.Since(killedAt))
	a2 := tq.active()
	if a2.id == killed {
		t.Fatal("killed voter still active")
	}
	wConvergeAll(t, tq, bs)
	for _, b := range bs {
		if b.cl.ActiveID() != a2.id {
			t.Errorf("broker %d thinks %d is active, want %d", b.id, b.cl.ActiveID(), a2.id)
		}
	}
	// Heartbeats go on with the new controller: nobody is fenced after
	// more than a session timeout.
	time.Sleep(3500 * time.Millisecond)
	img = a2.q.Image()
	for _, b := range bs {
		if img.Brokers[b.id].Fenced || b.lc.Fenced() {
			t.Fatalf("broker %d fenced after failover", b.id)
		}
	}

	// The killed voter comes back and catches up; the brokers' images
	// still match every voter's.
	tq.restart(killed)
	wConvergeAll(t, tq, bs)

	// Controlled shutdown of one broker through the new controller.
	if err := bs[0].lc.ControlledShutdown(ctx); err != nil {
		t.Fatal(err)
	}
	wConvergeAll(t, tq, bs)
	for _, name := range []string{"orders", "after-failover"} {
		for _, p := range bs[1].f.Image().Topic(name).Partitions {
			if p.Leader == bs[0].id {
				t.Errorf("%s-%d still led by the shut-down broker", name, p.Index)
			}
		}
	}
}

func wSorted(s []int32) []int32 {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// convergeAll waits until every running voter and every broker follower
// hold the same image.
func wConvergeAll(t *testing.T, tq *wireQuorum, bs []*wireBroker) {
	t.Helper()
	wEventually(t, 15*time.Second, "brokers and voters to converge", func() bool {
		want := ""
		for _, v := range tq.nodes {
			if v.q.closed.Load() {
				continue
			}
			k := wImageKey(t, v.q.Image())
			if want == "" {
				want = k
			} else if k != want {
				return false
			}
		}
		for _, b := range bs {
			if wImageKey(t, b.f.Image()) != want {
				return false
			}
		}
		return true
	})
}

// TestQuorumFollowerInstallsSnapshot: the quorum compacts its log (a low
// snapshot threshold); a broker that starts afterwards cannot read the
// log from the start, installs a snapshot over FetchSnapshot, and then
// follows the log from there.
func TestQuorumFollowerInstallsSnapshot(t *testing.T) {
	tq := startWireQuorum(t, 3, func(o *QuorumOptions) {
		o.SnapshotThreshold = 5
		o.SnapshotInterval = 50 * time.Millisecond
		o.TrailingLogs = 2
	})
	early := startWireBroker(t, tq.voters, 20)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := early.lc.WaitUnfenced(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if r := forwardCreate(t, early.cl, "t"+strconv.Itoa(i), 1, 1); r.ErrorCode != 0 {
			t.Fatalf("create: %v", kerr.ErrorForCode(r.ErrorCode))
		}
	}
	// Wait until the active voter's log no longer starts at 1.
	wEventually(t, 10*time.Second, "log compaction", func() bool {
		a := tq.active()
		_, err := a.q.ReadLog(1, 1)
		return err == ErrSnapshotNeeded
	})
	late := startWireBroker(t, tq.voters, 21)
	if err := late.lc.WaitUnfenced(ctx); err != nil {
		t.Fatal(err)
	}
	if late.f.snapshots.Load() == 0 {
		t.Fatal("late broker did not install a snapshot")
	}
	if r := forwardCreate(t, late.cl, "after-snapshot", 2, 2); r.ErrorCode != 0 {
		t.Fatalf("create: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	wConvergeAll(t, tq, []*wireBroker{early, late})
	if late.f.Image().Topic("t0") == nil || late.f.Image().Topic("after-snapshot") == nil {
		t.Fatal("late broker's image lacks topics")
	}
}

// TestQuorumDescribeQuorum: every voter answers DescribeQuorum with the
// same leader and epoch and the three voters; only the leader without an
// error. This is what kafka-metadata-quorum describe and the client's
// discovery read.
func TestQuorumDescribeQuorum(t *testing.T) {
	tq := startWireQuorum(t, 3, nil)
	a := tq.active()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for id, addr := range tq.voters {
		c, err := wire.Dial(ctx, addr, "describe-quorum-test")
		if err != nil {
			t.Fatal(err)
		}
		req := kmsg.NewPtrDescribeQuorumRequest()
		req.SetVersion(2)
		rt := kmsg.NewDescribeQuorumRequestTopic()
		rt.Topic = MetadataTopic
		rt.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{{Partition: 0}}
		req.Topics = append(req.Topics, rt)
		resp, err := c.Request(ctx, req)
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		r := resp.(*kmsg.DescribeQuorumResponse)
		p := r.Topics[0].Partitions[0]
		wantCode := kerr.NotLeaderForPartition.Code
		if id == a.id {
			wantCode = 0
		}
		if p.ErrorCode != wantCode || p.LeaderID != a.id || p.LeaderEpoch < 1 || int64(p.LeaderEpoch) != int64(a.q.LeaderEpoch()) ||
			len(p.CurrentVoters) != 3 || len(r.Nodes) != 3 {
			t.Fatalf("voter %d: %+v nodes %+v (active %d, epoch %d)", id, p, r.Nodes, a.id, a.q.LeaderEpoch())
		}
	}
}
