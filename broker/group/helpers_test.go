package group

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Tests run inside testing/synctest bubbles: time.Now, timers and sleeps
// are virtual, so session and rebalance timeouts of minutes take no real
// time, and synctest.Wait tells when every goroutine (parked JoinGroups,
// the partition writers) is blocked.

const testPartitions = 4

func testConfig() Config {
	cfg := DefaultConfig()
	cfg.OffsetsTopicPartitions = testPartitions
	// A short initial delay lets tests start several members in one
	// generation, as group.initial.rebalance.delay.ms does for clients.
	cfg.InitialRebalanceDelay = 100 * time.Millisecond
	cfg.MinSessionTimeout = time.Second
	return cfg
}

func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

type harness struct {
	t     *testing.T
	c     *Coordinator
	store *MemStore
	cfg   Config
	ctx   context.Context
}

// newHarness starts a coordinator on store with every partition loaded.
func newHarness(t *testing.T, cfg Config, store *MemStore) *harness {
	t.Helper()
	if store == nil {
		store = NewMemStore()
	}
	h := &harness{t: t, store: store, cfg: cfg, ctx: WithClient(context.Background(), "test-client", "/127.0.0.1")}
	h.c = New(cfg, store, Options{Logger: testLogger()})
	for p := int32(0); p < cfg.OffsetsTopicPartitions; p++ {
		if err := h.c.Load(p); err != nil {
			t.Fatalf("load partition %d: %v", p, err)
		}
	}
	return h
}

// restart closes the coordinator and builds a new one on the same store.
func (h *harness) restart() {
	h.t.Helper()
	h.c.Close()
	n := newHarness(h.t, h.cfg, h.store)
	h.c = n.c
}

func consumerMeta(topics ...string) []byte {
	m := kmsg.ConsumerMemberMetadata{Version: 0, Topics: topics}
	return m.AppendTo(nil)
}

type joinOpt func(*kmsg.JoinGroupRequest)

func withInstance(id string) joinOpt {
	return func(r *kmsg.JoinGroupRequest) { r.InstanceID = kmsg.StringPtr(id) }
}

func withVersion(v int16) joinOpt { return func(r *kmsg.JoinGroupRequest) { r.Version = v } }

func withTimeouts(session, rebalance time.Duration) joinOpt {
	return func(r *kmsg.JoinGroupRequest) {
		r.SessionTimeoutMillis = int32(session.Milliseconds())
		r.RebalanceTimeoutMillis = int32(rebalance.Milliseconds())
	}
}

func withProtocols(ptype string, ps ...kmsg.JoinGroupRequestProtocol) joinOpt {
	return func(r *kmsg.JoinGroupRequest) { r.ProtocolType, r.Protocols = ptype, ps }
}

func proto(name string, meta []byte) kmsg.JoinGroupRequestProtocol {
	p := kmsg.NewJoinGroupRequestProtocol()
	p.Name, p.Metadata = name, meta
	return p
}

// joinReq is a v9 consumer JoinGroup subscribing to topic "t".
func joinReq(group, memberID string, opts ...joinOpt) *kmsg.JoinGroupRequest {
	r := kmsg.NewPtrJoinGroupRequest()
	r.Version = 9
	r.Group = group
	r.MemberID = memberID
	r.SessionTimeoutMillis = 10000
	r.RebalanceTimeoutMillis = 30000
	r.ProtocolType = "consumer"
	r.Protocols = []kmsg.JoinGroupRequestProtocol{proto("range", consumerMeta("t"))}
	for _, o := range opts {
		o(r)
	}
	return r
}

// joinAsync sends a JoinGroup on its own goroutine.
func (h *harness) joinAsync(r *kmsg.JoinGroupRequest) <-chan *kmsg.JoinGroupResponse {
	ch := make(chan *kmsg.JoinGroupResponse, 1)
	go func() { ch <- h.c.JoinGroup(h.ctx, r) }()
	return ch
}

// join joins, doing the MEMBER_ID_REQUIRED round trip, and waits for the
// join phase to complete (the caller must make that happen without this
// goroutine: use joinAsync for multi-member choreography).
func (h *harness) join(r *kmsg.JoinGroupRequest) *kmsg.JoinGroupResponse {
	h.t.Helper()
	resp := h.c.JoinGroup(h.ctx, r)
	if resp.ErrorCode == kerr.MemberIDRequired.Code {
		r.MemberID = resp.MemberID
		resp = h.c.JoinGroup(h.ctx, r)
	}
	return resp
}

// newMemberID does the first half of a v4+ join: it returns the member id
// the coordinator assigns.
func (h *harness) newMemberID(r *kmsg.JoinGroupRequest) string {
	h.t.Helper()
	resp := h.c.JoinGroup(h.ctx, r)
	if resp.ErrorCode != kerr.MemberIDRequired.Code || resp.MemberID == "" {
		h.t.Fatalf("first join: want MEMBER_ID_REQUIRED with a member id, got %v %q", errName(resp.ErrorCode), resp.MemberID)
	}
	r.MemberID = resp.MemberID
	return resp.MemberID
}

func syncReq(group, memberID string, gen int32, assignments map[string][]byte) *kmsg.SyncGroupRequest {
	r := kmsg.NewPtrSyncGroupRequest()
	r.Version = 5
	r.Group, r.MemberID, r.Generation = group, memberID, gen
	r.ProtocolType, r.Protocol = kmsg.StringPtr("consumer"), kmsg.StringPtr("range")
	for id, a := range assignments {
		ga := kmsg.NewSyncGroupRequestGroupAssignment()
		ga.MemberID, ga.MemberAssignment = id, a
		r.GroupAssignment = append(r.GroupAssignment, ga)
	}
	return r
}

func (h *harness) syncAsync(r *kmsg.SyncGroupRequest) <-chan *kmsg.SyncGroupResponse {
	ch := make(chan *kmsg.SyncGroupResponse, 1)
	go func() { ch <- h.c.SyncGroup(h.ctx, r) }()
	return ch
}

func (h *harness) heartbeat(group, memberID string, gen int32) int16 {
	r := kmsg.NewPtrHeartbeatRequest()
	r.Version = 4
	r.Group, r.MemberID, r.Generation = group, memberID, gen
	return h.c.Heartbeat(h.ctx, r).ErrorCode
}

func (h *harness) describe(group string) kmsg.DescribeGroupsResponseGroup {
	h.t.Helper()
	r := kmsg.NewPtrDescribeGroupsRequest()
	r.Version = 5
	r.Groups = []string{group}
	resp := h.c.DescribeGroups(h.ctx, r)
	if len(resp.Groups) != 1 {
		h.t.Fatalf("describe %s: %d groups", group, len(resp.Groups))
	}
	return resp.Groups[0]
}

// commit commits offset for topic "t" partition p.
func (h *harness) commit(version int16, group, memberID string, gen int32, p int32, offset int64) int16 {
	h.t.Helper()
	r := kmsg.NewPtrOffsetCommitRequest()
	r.Version = version
	r.Group, r.MemberID, r.Generation = group, memberID, gen
	t := kmsg.NewOffsetCommitRequestTopic()
	t.Topic = "t"
	pp := kmsg.NewOffsetCommitRequestTopicPartition()
	pp.Partition, pp.Offset = p, offset
	pp.Metadata = kmsg.StringPtr("meta")
	t.Partitions = append(t.Partitions, pp)
	r.Topics = append(r.Topics, t)
	resp := h.c.OffsetCommit(h.ctx, r)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		h.t.Fatalf("commit response shape: %+v", resp)
	}
	return resp.Topics[0].Partitions[0].ErrorCode
}

// fetch returns the committed offset of topic "t" partition p (v8 form).
func (h *harness) fetch(group string, p int32) (int64, int16) {
	h.t.Helper()
	r := kmsg.NewPtrOffsetFetchRequest()
	r.Version = 8
	rg := kmsg.NewOffsetFetchRequestGroup()
	rg.Group = group
	rt := kmsg.NewOffsetFetchRequestGroupTopic()
	rt.Topic, rt.Partitions = "t", []int32{p}
	rg.Topics = append(rg.Topics, rt)
	r.Groups = append(r.Groups, rg)
	resp := h.c.OffsetFetch(h.ctx, r)
	g := resp.Groups[0]
	if g.ErrorCode != 0 {
		return -1, g.ErrorCode
	}
	part := g.Topics[0].Partitions[0]
	return part.Offset, part.ErrorCode
}

func errName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	if e := kerr.ErrorForCode(code); e != nil {
		return e.(*kerr.Error).Message
	}
	return fmt.Sprintf("error %d", code)
}

func wantCode(t *testing.T, what string, got, want int16) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: got %s, want %s", what, errName(got), errName(want))
	}
}

// recv waits (in virtual time) for a response that must arrive.
func recv[T any](t *testing.T, what string, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(24 * time.Hour):
		t.Fatalf("%s: no response", what)
		panic("unreachable")
	}
}

// pending asserts that ch has nothing yet.
func pending[T any](t *testing.T, what string, ch <-chan T) {
	t.Helper()
	select {
	case v := <-ch:
		t.Fatalf("%s: unexpected response %+v", what, v)
	default:
	}
}

func testLogger() *slog.Logger {
	if os.Getenv("GROUP_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return quietLogger()
}
