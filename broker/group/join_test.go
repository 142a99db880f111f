package group

import (
	"bytes"
	"testing"
	"testing/synctest"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestPartitionForMatchesJava(t *testing.T) {
	// Values from Java: Utils.abs(s.hashCode()) % 50.
	cases := map[string]int32{
		"g1": 42, "my-group": 12, "connect-cluster": 13, "": 0,
		"polygenelubricants": 0, // hashCode is Integer.MIN_VALUE
		"grüße":              23, "日本語": 43, "emoji😀x": 1, "console-consumer-12345": 6,
	}
	for g, want := range cases {
		if got := PartitionFor(g, 50); got != want {
			t.Errorf("PartitionFor(%q, 50) = %d, want %d", g, got, want)
		}
	}
}

func TestSingleMemberJoinSyncHeartbeat(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testConfig(), nil)
		defer h.c.Close()

		r := joinReq("g", "")
		id := h.newMemberID(r)
		if !bytes.HasPrefix([]byte(id), []byte("test-client-")) {
			t.Fatalf("member id %q does not start with the client id", id)
		}
		jr := h.c.JoinGroup(h.ctx, r)
		wantCode(t, "join", jr.ErrorCode, 0)
		if jr.Generation != 1 || jr.LeaderID != id || jr.MemberID != id || *jr.Protocol != "range" || *jr.ProtocolType != "consumer" {
			t.Fatalf("join response: %+v", jr)
		}
		if len(jr.Members) != 1 || !bytes.Equal(jr.Members[0].ProtocolMetadata, consumerMeta("t")) {
			t.Fatalf("leader member list: %+v", jr.Members)
		}
		wantCode(t, "heartbeat while completing", h.heartbeat("g", id, 1), 0)
		if st := h.describe("g").State; st != "CompletingRebalance" {
			t.Fatalf("state %s", st)
		}

		sr := h.c.SyncGroup(h.ctx, syncReq("g", id, 1, map[string][]byte{id: []byte("assign")}))
		wantCode(t, "sync", sr.ErrorCode, 0)
		if string(sr.MemberAssignment) != "assign" || *sr.Protocol != "range" {
			t.Fatalf("sync response: %+v", sr)
		}
		d := h.describe("g")
		if d.State != "Stable" || d.Protocol != "range" || d.ProtocolType != "consumer" || len(d.Members) != 1 {
			t.Fatalf("describe: %+v", d)
		}
		m := d.Members[0]
		if m.MemberID != id || m.ClientID != "test-client" || m.ClientHost != "/127.0.0.1" || string(m.MemberAssignment) != "assign" ||
			!bytes.Equal(m.ProtocolMetadata, consumerMeta("t")) {
			t.Fatalf("described member: %+v", m)
		}
		wantCode(t, "heartbeat", h.heartbeat("g", id, 1), 0)
		wantCode(t, "heartbeat old generation", h.heartbeat("g", id, 0), kerr.IllegalGeneration.Code)
		wantCode(t, "heartbeat unknown member", h.heartbeat("g", "nobody", 1), kerr.UnknownMemberID.Code)
		wantCode(t, "heartbeat unknown group", h.heartbeat("nogroup", id, 1), kerr.UnknownMemberID.Code)

		// A follower's SyncGroup in a Stable group gets its assignment at once.
		sr = h.c.SyncGroup(h.ctx, syncReq("g", id, 1, nil))
		if sr.ErrorCode != 0 || string(sr.MemberAssignment) != "assign" {
			t.Fatalf("sync in stable: %+v", sr)
		}
	})
}

func TestJoinBeforeV4AddsMemberImmediately(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testConfig(), nil)
		defer h.c.Close()
		jr := h.c.JoinGroup(h.ctx, joinReq("g", "", withVersion(3)))
		wantCode(t, "v3 join", jr.ErrorCode, 0)
		if jr.MemberID == "" || jr.Generation != 1 || jr.LeaderID != jr.MemberID {
			t.Fatalf("v3 join: %+v", jr)
		}
		// v0 has no rebalance timeout: the session timeout stands in.
		jr0 := h.c.JoinGroup(h.ctx, joinReq("g0", "", withVersion(0)))
		wantCode(t, "v0 join", jr0.ErrorCode, 0)
		g, _, _ := h.c.lookup("g0", false)
		rt := g.members[jr0.MemberID].rebalanceTimeoutMs
		g.mu.Unlock()
		if rt != 10000 {
			t.Fatalf("v0 rebalance timeout %d, want the session timeout", rt)
		}
	})
}

func TestJoinValidation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testConfig(), nil)
		defer h.c.Close()
		wantCode(t, "empty group id", h.c.JoinGroup(h.ctx, joinReq("", "")).ErrorCode, kerr.InvalidGroupID.Code)
		wantCode(t, "session too short", h.c.JoinGroup(h.ctx, joinReq("g", "", withTimeouts(10*time.Millisecond, time.Second))).ErrorCode,
			kerr.InvalidSessionTimeout.Code)
		wantCode(t, "session too long", h.c.JoinGroup(h.ctx, joinReq("g", "", withTimeouts(time.Hour, time.Second))).ErrorCode,
			kerr.InvalidSessionTimeout.Code)
		wantCode(t, "no protocols", h.c.JoinGroup(h.ctx, joinReq("g", "", withProtocols("consumer"))).ErrorCode,
			kerr.InconsistentGroupProtocol.Code)
		wantCode(t, "no protocol type", h.c.JoinGroup(h.ctx, joinReq("g", "", withProtocols("", proto("range", nil)))).ErrorCode,
			kerr.InconsistentGroupProtocol.Code)
		wantCode(t, "member id for an unknown group", h.c.JoinGroup(h.ctx, joinReq("nogroup", "x")).ErrorCode,
			kerr.UnknownMemberID.Code)

		id := h.newMemberID(joinReq("g", ""))
		r := joinReq("g", id)
		if jr := h.c.JoinGroup(h.ctx, r); jr.ErrorCode != 0 {
			t.Fatalf("join: %v", errName(jr.ErrorCode))
		}
		wantCode(t, "other protocol type", h.c.JoinGroup(h.ctx, joinReq("g", "", withProtocols("connect", proto("range", nil)))).ErrorCode,
			kerr.InconsistentGroupProtocol.Code)
		wantCode(t, "no common protocol", h.c.JoinGroup(h.ctx, joinReq("g", "", withProtocols("consumer", proto("sticky", nil)))).ErrorCode,
			kerr.InconsistentGroupProtocol.Code)
		wantCode(t, "unknown member of a live group", h.c.JoinGroup(h.ctx, joinReq("g", "ghost")).ErrorCode,
			kerr.UnknownMemberID.Code)
	})
}

func TestProtocolSelectionByVote(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testConfig(), nil)
		defer h.c.Close()
		// A prefers range, B and C prefer roundrobin; all support both.
		rr := func(r *kmsg.JoinGroupRequest) {
			r.Protocols = []kmsg.JoinGroupRequestProtocol{proto("roundrobin", consumerMeta("t")), proto("range", consumerMeta("t"))}
		}
		a := joinReq("g", "", withVersion(3), func(r *kmsg.JoinGroupRequest) {
			r.Protocols = []kmsg.JoinGroupRequestProtocol{proto("range", consumerMeta("t")), proto("roundrobin", consumerMeta("t"))}
		})
		b := joinReq("g", "", withVersion(3), rr)
		c := joinReq("g", "", withVersion(3), rr)
		ja := h.c.JoinGroup(h.ctx, a) // completes alone: generation 1
		wantCode(t, "a", ja.ErrorCode, 0)
		chB := h.joinAsync(b)
		chC := h.joinAsync(c)
		synctest.Wait()
		a.MemberID = ja.MemberID
		chA := h.joinAsync(a)
		for _, ch := range []<-chan *kmsg.JoinGroupResponse{chA, chB, chC} {
			jr := recv(t, "join", ch)
			wantCode(t, "join", jr.ErrorCode, 0)
			if *jr.Protocol != "roundrobin" || jr.Generation != 2 {
				t.Fatalf("protocol %s generation %d, want roundrobin 2", *jr.Protocol, jr.Generation)
			}
		}
	})
}

// stableGroup builds a Stable group of n dynamic members and returns their
// ids (the first is the leader) and the generation.
func (h *harness) stableGroup(group string, n int, opts ...joinOpt) ([]string, int32) {
	h.t.Helper()
	var ids []string
	var chans []<-chan *kmsg.JoinGroupResponse
	for i := 0; i < n; i++ {
		r := joinReq(group, "", opts...)
		id := h.newMemberID(r)
		ids = append(ids, id)
		chans = append(chans, h.joinAsync(r))
		synctest.Wait()
	}
	var gen int32
	var leader string
	var ptype, pname *string
	for _, ch := range chans {
		jr := recv(h.t, "join", ch)
		wantCode(h.t, "join", jr.ErrorCode, 0)
		gen, leader, ptype, pname = jr.Generation, jr.LeaderID, jr.ProtocolType, jr.Protocol
	}
	// Rejoins can make a later member's join the one that completed the
	// generation; all answers share it.
	assign := make(map[string][]byte)
	for _, id := range ids {
		assign[id] = []byte("a-" + id)
	}
	var syncs []<-chan *kmsg.SyncGroupResponse
	for _, id := range ids {
		var a map[string][]byte
		if id == leader {
			a = assign
		}
		sr := syncReq(group, id, gen, a)
		sr.ProtocolType, sr.Protocol = ptype, pname
		syncs = append(syncs, h.syncAsync(sr))
	}
	for _, ch := range syncs {
		wantCode(h.t, "sync", recv(h.t, "sync", ch).ErrorCode, 0)
	}
	if st := h.describe(group).State; st != "Stable" {
		h.t.Fatalf("group %s is %s, want Stable", group, st)
	}
	// Put the leader first.
	for i, id := range ids {
		if id == leader {
			ids[0], ids[i] = ids[i], ids[0]
		}
	}
	return ids, gen
}
