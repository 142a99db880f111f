package replica

// The test harness: nodes with a real log in t.TempDir() and a real
// Kafka-protocol listener on 127.0.0.1 (broker/protocol) that answers
// Fetch, OffsetForLeaderEpoch and ListOffsets from the node's Leader, the
// way the broker's handlers will. The controller is a fake that commits
// every valid AlterPartition and bumps the partition epoch: the boundary
// of this package's logic.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/batch"
	"github.com/fjordhq/fjord/broker/log"
	"github.com/fjordhq/fjord/broker/metadata"
	"github.com/fjordhq/fjord/broker/protocol"
)

const testTopic = "orders"

var testTopicID = metadata.UUID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}

func testLogger() *slog.Logger {
	if os.Getenv("REPLICA_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// addrs resolves broker ids to listener addresses, like the image does.
type addrs struct {
	mu sync.Mutex
	m  map[int32]string
}

func (a *addrs) set(id int32, addr string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m == nil {
		a.m = map[int32]string{}
	}
	a.m[id] = addr
}

func (a *addrs) resolve(id int32) (string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.m[id]
	return s, ok
}

// node is one broker: a log for partition 0 of testTopic, a listener,
// and the Leader when it leads.
type node struct {
	t    *testing.T
	id   int32
	log  *log.Log
	srv  *protocol.Server
	addr string

	mu       sync.Mutex
	leader   *Leader
	appended chan struct{} // closed and replaced on every leader append

	// lieEpochs makes OffsetForLeaderEpoch claim the follower's epoch
	// ends far ahead, so only the fetch's DivergingEpoch can find a
	// divergence.
	lieEpochs atomic.Bool
	// fetches counts Fetch requests served.
	fetches atomic.Int64
}

func newNode(t *testing.T, id int32, cl *addrs, cfg *log.Config) *node {
	t.Helper()
	c := log.DefaultConfig()
	if cfg != nil {
		c = *cfg
	}
	dir := fmt.Sprintf("%s/%s-0", t.TempDir(), testTopic)
	l, err := log.Open(dir, c, log.Options{Logger: testLogger()}, false)
	if err != nil {
		t.Fatal(err)
	}
	n := &node{t: t, id: id, log: l, appended: make(chan struct{})}
	n.serve(cl)
	t.Cleanup(func() {
		n.srv.Close()
		n.mu.Lock()
		ld := n.leader
		n.mu.Unlock()
		if ld != nil {
			ld.Stop()
		}
		l.Close()
	})
	return n
}

// serve starts (or restarts, on a new port) the node's listener.
func (n *node) serve(cl *addrs) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		n.t.Fatal(err)
	}
	n.srv = protocol.NewServer(protocol.Config{
		Versions: map[int16]protocol.VersionRange{
			int16(kmsg.Fetch):                {Min: 4, Max: 17},
			int16(kmsg.OffsetForLeaderEpoch): {Min: 2, Max: 4},
			int16(kmsg.ListOffsets):          {Min: 1, Max: 10},
		},
		Logger: testLogger(),
	}, n)
	go n.srv.Serve(ln)
	n.addr = ln.Addr().String()
	cl.set(n.id, n.addr)
}

// lead makes the node the partition's leader.
func (n *node) lead(o LeaderOptions) *Leader {
	o.LocalID, o.Log, o.Topic, o.TopicID = n.id, n.log, testTopic, testTopicID
	if o.Logger == nil {
		o.Logger = testLogger()
	}
	ld := NewLeader(o)
	n.mu.Lock()
	n.leader = ld
	n.mu.Unlock()
	return ld
}

// resign stops the node's leadership.
func (n *node) resign() {
	n.mu.Lock()
	ld := n.leader
	n.leader = nil
	n.mu.Unlock()
	if ld != nil {
		ld.Stop()
	}
}

func (n *node) currentLeader() *Leader {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.leader
}

// produce appends batches of recs records of size bytes each as the
// leader, and returns the last offset.
func (n *node) produce(batches, recs, size int) int64 {
	n.t.Helper()
	ld := n.currentLeader()
	if ld == nil {
		n.t.Fatal("produce on a non-leader")
	}
	var last int64
	for range batches {
		res, err := n.log.Append(mkBatch(recs, size), log.AppendOptions{LeaderEpoch: ld.LeaderEpoch(), AssignOffsets: true})
		if err != nil {
			n.t.Fatal(err)
		}
		last = res.LastOffset
		ld.OnAppend()
	}
	n.mu.Lock()
	close(n.appended)
	n.appended = make(chan struct{})
	n.mu.Unlock()
	return last
}

var valueSeq atomic.Int64

// mkBatch builds an uncompressed batch with distinct values.
func mkBatch(recs, size int) []byte {
	rs := make([]batch.Record, recs)
	ts := time.Now().UnixMilli()
	for i := range rs {
		v := bytes.Repeat([]byte{byte('a' + valueSeq.Add(1)%26)}, size)
		rs[i] = batch.Record{Offset: int64(i), Timestamp: ts, Key: fmt.Appendf(nil, "k%d", valueSeq.Load()), Value: v}
	}
	b, err := batch.Build(nil, batch.BuildHeader{PartitionLeaderEpoch: -1}, rs, batch.CodecNone)
	if err != nil {
		panic(err)
	}
	return b
}

func (n *node) Handle(ctx context.Context, _ *protocol.Conn, req *protocol.Request) protocol.Response {
	switch r := req.Body.(type) {
	case *kmsg.FetchRequest:
		n.fetches.Add(1)
		return protocol.Response{Msg: n.handleFetch(ctx, r)}
	case *kmsg.OffsetForLeaderEpochRequest:
		return protocol.Response{Msg: n.handleOffsetForEpoch(r)}
	case *kmsg.ListOffsetsRequest:
		return protocol.Response{Msg: n.handleListOffsets(r)}
	}
	return protocol.Response{Close: true}
}

func errCode(err error) int16 {
	if ke := codeOf(err); ke != nil {
		return ke.Code
	}
	return kerr.UnknownServerError.Code
}

// handleFetch answers a replica fetch as the broker will: per partition
// CheckEpoch, FollowerFetch, then a read up to the log end; long-polls
// until data arrives or MaxWait passes.
func (n *node) handleFetch(ctx context.Context, r *kmsg.FetchRequest) *kmsg.FetchResponse {
	deadline := time.Now().Add(time.Duration(r.MaxWaitMillis) * time.Millisecond)
	replicaID, replicaEpoch := r.ReplicaID, int64(-1)
	if r.Version >= 15 {
		replicaID, replicaEpoch = r.ReplicaState.ID, r.ReplicaState.Epoch
	}
	for {
		n.mu.Lock()
		ld, woken := n.leader, n.appended
		n.mu.Unlock()
		resp := r.ResponseKind().(*kmsg.FetchResponse)
		size, done := 0, false
		for _, rt := range r.Topics {
			st := kmsg.NewFetchResponseTopic()
			st.Topic, st.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				sp := kmsg.NewFetchResponseTopicPartition()
				sp.Partition = rp.Partition
				sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = -1, -1, -1
				known := rp.Partition == 0 && (r.Version >= 13 && rt.TopicID == testTopicID || r.Version < 13 && rt.Topic == testTopic)
				var err error
				switch {
				case !known:
					err = kerr.UnknownTopicOrPartition
				case ld == nil:
					err = kerr.NotLeaderForPartition
				default:
					err = ld.CheckEpoch(rp.CurrentLeaderEpoch)
				}
				var fs FetchState
				if err == nil {
					fs, err = ld.FollowerFetch(replicaID, replicaEpoch, rp.FetchOffset, rp.LastFetchedEpoch)
				}
				switch {
				case err != nil:
					sp.ErrorCode = errCode(err)
					done = true
				case fs.Diverging != nil:
					sp.DivergingEpoch.Epoch, sp.DivergingEpoch.EndOffset = fs.Diverging.Epoch, fs.Diverging.EndOffset
					sp.HighWatermark, sp.LogStartOffset = fs.HighWatermark, n.log.LogStartOffset()
					done = true
				default:
					rr, rerr := n.log.Read(rp.FetchOffset, int(rp.PartitionMaxBytes), n.log.LogEndOffset(), true)
					if rerr == nil {
						sp.RecordBatches, rerr = rr.AppendTo(nil)
					}
					if rerr != nil {
						sp.ErrorCode = kerr.OffsetOutOfRange.Code
						done = true
					}
					size += len(sp.RecordBatches)
					sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = fs.HighWatermark, fs.HighWatermark, n.log.LogStartOffset()
				}
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		wait := time.Until(deadline)
		if done || size >= int(r.MinBytes) || wait <= 0 {
			return resp
		}
		t := time.NewTimer(wait)
		select {
		case <-woken:
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
}

func (n *node) handleOffsetForEpoch(r *kmsg.OffsetForLeaderEpochRequest) *kmsg.OffsetForLeaderEpochResponse {
	resp := r.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	ld := n.currentLeader()
	for _, rt := range r.Topics {
		st := kmsg.NewOffsetForLeaderEpochResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			sp.Partition, sp.LeaderEpoch, sp.EndOffset = rp.Partition, -1, -1
			switch {
			case rt.Topic != testTopic || rp.Partition != 0:
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			case ld == nil:
				sp.ErrorCode = kerr.NotLeaderForPartition.Code
			default:
				if err := ld.CheckEpoch(rp.CurrentLeaderEpoch); err != nil {
					sp.ErrorCode = errCode(err)
				} else if n.lieEpochs.Load() {
					sp.LeaderEpoch, sp.EndOffset = rp.LeaderEpoch, 1<<40
				} else {
					sp.LeaderEpoch, sp.EndOffset = n.log.EndOffsetForEpoch(rp.LeaderEpoch)
				}
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

func (n *node) handleListOffsets(r *kmsg.ListOffsetsRequest) *kmsg.ListOffsetsResponse {
	resp := r.ResponseKind().(*kmsg.ListOffsetsResponse)
	ld := n.currentLeader()
	for _, rt := range r.Topics {
		st := kmsg.NewListOffsetsResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewListOffsetsResponseTopicPartition()
			sp.Partition = rp.Partition
			var err error
			if ld == nil {
				err = kerr.NotLeaderForPartition
			} else {
				err = ld.CheckEpoch(rp.CurrentLeaderEpoch)
			}
			switch {
			case err != nil:
				sp.ErrorCode = errCode(err)
			case rp.Timestamp == -2:
				sp.Offset = n.log.LogStartOffset()
			default: // a replica's latest is the log end offset
				sp.Offset = n.log.LogEndOffset()
			}
			sp.LeaderEpoch = -1
			if ld != nil {
				sp.LeaderEpoch = ld.LeaderEpoch()
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

// controller is a fake of the controller's AlterPartition: it commits a
// proposal made at the current epochs and bumps the partition epoch, and
// can be told to fail the next calls.
type controller struct {
	mu    sync.Mutex
	state metadata.Partition
	calls [][]int32
	errs  []error
	block chan struct{} // if set, calls wait on it
}

func newController(p metadata.Partition) *controller {
	return &controller{state: p}
}

func (c *controller) alter(ctx context.Context, isr []int32, leaderEpoch, partitionEpoch int32) (metadata.Partition, error) {
	c.mu.Lock()
	block := c.block
	c.mu.Unlock()
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return metadata.Partition{}, ctx.Err()
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, slices.Clone(isr))
	if len(c.errs) > 0 {
		err := c.errs[0]
		c.errs = c.errs[1:]
		return metadata.Partition{}, err
	}
	switch {
	case leaderEpoch != c.state.LeaderEpoch:
		return metadata.Partition{}, kerr.FencedLeaderEpoch
	case partitionEpoch != c.state.PartitionEpoch:
		return metadata.Partition{}, kerr.InvalidUpdateVersion
	}
	c.state.ISR = slices.Clone(isr)
	c.state.PartitionEpoch++
	return c.clone(), nil
}

func (c *controller) clone() metadata.Partition {
	p := c.state
	p.Replicas, p.ISR = slices.Clone(p.Replicas), slices.Clone(p.ISR)
	return p
}

func (c *controller) get() metadata.Partition {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.clone()
}

func (c *controller) numCalls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.calls)
}

// hwRecorder collects OnHighWatermark values.
type hwRecorder struct {
	mu sync.Mutex
	hw int64
	n  int
}

func (r *hwRecorder) leader(hw int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hw = max(r.hw, hw)
	r.n++
}

func (r *hwRecorder) follower(_ string, _ int32, hw int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hw = hw
	r.n++
}

func (r *hwRecorder) get() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.hw
}

// fetcherOpts are fast settings for tests.
func fetcherOpts(id int32, cl *addrs) FetcherOptions {
	return FetcherOptions{
		LocalID:        id,
		BrokerEpoch:    func() int64 { return 100 + int64(id) },
		Resolve:        cl.resolve,
		MaxWait:        200 * time.Millisecond,
		BackoffOnError: 50 * time.Millisecond,
		RequestTimeout: 5 * time.Second,
		Logger:         testLogger(),
	}
}

func startFetchers(t *testing.T, o FetcherOptions) *FetcherManager {
	m := NewFetcherManager(o)
	t.Cleanup(m.Close)
	return m
}

// waitFor polls cond every 5 ms for up to d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// logBytes returns the log's batches in [from, to) as bytes.
func logBytes(t *testing.T, l *log.Log, from, to int64) []byte {
	t.Helper()
	rr, err := l.Read(from, 1<<30, to, true)
	if err != nil {
		t.Fatal(err)
	}
	b, err := rr.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func part(replicas, isr []int32, leader, epoch, partitionEpoch int32) metadata.Partition {
	return metadata.Partition{Replicas: replicas, ISR: isr, Leader: leader, LeaderEpoch: epoch, PartitionEpoch: partitionEpoch}
}
