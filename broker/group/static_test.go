package group

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// staticGroup builds a Stable group of static members i0..i(n-1).
func (h *harness) staticGroup(group string, n int, opts ...joinOpt) (map[string]string, int32) {
	h.t.Helper()
	var chans []<-chan *kmsg.JoinGroupResponse
	for i := 0; i < n; i++ {
		inst := "i" + string(rune('0'+i))
		// Static members need no MEMBER_ID_REQUIRED round trip (KIP-345).
		chans = append(chans, h.joinAsync(joinReq(group, "", append([]joinOpt{withInstance(inst)}, opts...)...)))
		synctest.Wait()
	}
	ids := make(map[string]string)
	var gen int32
	var leader string
	for _, ch := range chans {
		jr := recv(h.t, "static join", ch)
		wantCode(h.t, "static join", jr.ErrorCode, 0)
		inst := jr.MemberID[:2]
		ids[inst] = jr.MemberID
		gen, leader = jr.Generation, jr.LeaderID
	}
	assign := make(map[string][]byte)
	for inst, id := range ids {
		assign[id] = []byte("a-" + inst)
	}
	var syncs []<-chan *kmsg.SyncGroupResponse
	for inst, id := range ids {
		var a map[string][]byte
		if id == leader {
			a = assign
		}
		sr := syncReq(group, id, gen, a)
		sr.InstanceID = kmsg.StringPtr(inst)
		syncs = append(syncs, h.syncAsync(sr))
	}
	for _, ch := range syncs {
		wantCode(h.t, "static sync", recv(h.t, "static sync", ch).ErrorCode, 0)
	}
	return ids, gen
}

func staticHeartbeat(h *harness, group, inst, memberID string, gen int32) int16 {
	r := kmsg.NewPtrHeartbeatRequest()
	r.Version = 4
	r.Group, r.MemberID, r.Generation, r.InstanceID = group, memberID, gen, kmsg.StringPtr(inst)
	return h.c.Heartbeat(h.ctx, r).ErrorCode
}

func TestStaticMemberRejoinWithoutRebalance(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testConfig(), nil)
		defer h.c.Close()
		ids, gen := h.staticGroup("g", 2)
		if !strings.HasPrefix(ids["i0"], "i0-") {
			t.Fatalf("static member id %q does not start with its instance id", ids["i0"])
		}
		leaderResp := h.describe("g")
		_ = leaderResp

		// i1 restarts: it joins with its instance id and no member id.
		jr := h.c.JoinGroup(h.ctx, joinReq("g", "", withInstance("i1")))
		wantCode(t, "static rejoin", jr.ErrorCode, 0)
		if jr.MemberID == ids["i1"] || !strings.HasPrefix(jr.MemberID, "i1-") || jr.Generation != gen {
			t.Fatalf("static rejoin: %+v", jr)
		}
		if st := h.describe("g").State; st != "Stable" {
			t.Fatalf("static rejoin caused a rebalance: %s", st)
		}
		// Its new id works and keeps the assignment; the old one is fenced.
		wantCode(t, "new id heartbeat", staticHeartbeat(h, "g", "i1", jr.MemberID, gen), 0)
		wantCode(t, "old id heartbeat", staticHeartbeat(h, "g", "i1", ids["i1"], gen), kerr.FencedInstanceID.Code)
		sr := syncReq("g", jr.MemberID, gen, nil)
		sr.InstanceID = kmsg.StringPtr("i1")
		if resp := h.c.SyncGroup(h.ctx, sr); resp.ErrorCode != 0 || string(resp.MemberAssignment) != "a-i1" {
			t.Fatalf("sync of the replaced member: %+v", resp)
		}
		wantCode(t, "unknown instance", staticHeartbeat(h, "g", "i9", jr.MemberID, gen), kerr.UnknownMemberID.Code)
		wantCode(t, "other member", h.heartbeat("g", ids["i0"], gen), 0)

		// The replacement is durable: the last group record has the new id.
		synctest.Wait()
		last := decodeLast(t, h.store.Records(PartitionFor("g", testPartitions)), "g")
		found := false
		for _, m := range last.Members {
			if m.MemberID == jr.MemberID && *m.InstanceID == "i1" && string(m.Assignment) == "a-i1" {
				found = true
			}
		}
		if !found {
			t.Fatalf("replacement not persisted: %+v", last.Members)
		}
	})
}

func TestStaticLeaderRejoinSkipsAssignment(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testConfig(), nil)
		defer h.c.Close()
		ids, gen := h.staticGroup("g", 2)
		var leaderInst string
		for inst, id := range ids {
			if h.describe("g").Members[0].MemberID == id {
				leaderInst = inst
			}
		}
		// v9: the leader learns it leads but must not reassign (KIP-814).
		jr := h.c.JoinGroup(h.ctx, joinReq("g", "", withInstance(leaderInst)))
		wantCode(t, "leader rejoin", jr.ErrorCode, 0)
		if !jr.SkipAssignment || jr.LeaderID != jr.MemberID || len(jr.Members) != 2 || jr.Generation != gen {
			t.Fatalf("v9 static leader rejoin: %+v", jr)
		}
		// v8: the old leader id comes back, so the client does not think
		// it leads and does not reassign.
		old := jr.MemberID
		jr8 := h.c.JoinGroup(h.ctx, joinReq("g", "", withInstance(leaderInst), withVersion(8)))
		wantCode(t, "v8 leader rejoin", jr8.ErrorCode, 0)
		if jr8.SkipAssignment || jr8.LeaderID != old || len(jr8.Members) != 0 {
			t.Fatalf("v8 static leader rejoin: %+v", jr8)
		}
		if st := h.describe("g").State; st != "Stable" {
			t.Fatalf("state %s", st)
		}
	})
}

func TestStaticMemberProtocolChangeRebalances(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testConfig(), nil)
		defer h.c.Close()
		_, gen := h.staticGroup("g", 2)
		// i1 comes back supporting only another protocol: not compatible.
		jr := h.c.JoinGroup(h.ctx, joinReq("g", "", withInstance("i1"), withProtocols("consumer", proto("sticky", nil))))
		wantCode(t, "incompatible", jr.ErrorCode, kerr.InconsistentGroupProtocol.Code)
		// With a preference for another protocol that both support, the
		// vote would not change (1:1, first voter wins) so no rebalance;
		// with the same protocol but new metadata, no rebalance either.
		jr = h.c.JoinGroup(h.ctx, joinReq("g", "", withInstance("i1"), withProtocols("consumer", proto("range", consumerMeta("t", "u")))))
		wantCode(t, "new metadata", jr.ErrorCode, 0)
		if jr.Generation != gen {
			t.Fatalf("generation %d", jr.Generation)
		}
	})
}

func TestStaticMembersSurviveRebalanceTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testConfig(), nil)
		defer h.c.Close()
		opts := withTimeouts(60*time.Second, 10*time.Second)
		ids, gen := h.staticGroup("g", 2, opts)
		// A new dynamic member triggers a rebalance; i0 rejoins, i1 does
		// not, but a static member is not dropped at the rebalance timeout.
		r := joinReq("g", "", opts)
		h.newMemberID(r)
		chN := h.joinAsync(r)
		j0 := joinReq("g", ids["i0"], withInstance("i0"), opts)
		ch0 := h.joinAsync(j0)
		jn, jz := recv(t, "new", chN), recv(t, "i0", ch0)
		if jn.ErrorCode != 0 || jz.ErrorCode != 0 || jn.Generation != gen+1 {
			t.Fatalf("joins: %+v %+v", jn, jz)
		}
		d := h.describe("g")
		if len(d.Members) != 3 {
			t.Fatalf("static member dropped at the rebalance timeout: %d members", len(d.Members))
		}
		// i1 then syncs nothing: the pending-sync deadline removes it.
		time.Sleep(11 * time.Second)
		d = h.describe("g")
		for _, m := range d.Members {
			if m.MemberID == ids["i1"] {
				t.Fatalf("silent static member still in the group: %+v", d)
			}
		}
	})
}

func TestStaticMemberFencing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testConfig(), nil)
		defer h.c.Close()
		ids, gen := h.staticGroup("g", 1)
		// Known member id with a different instance's claim: fenced.
		jr := h.c.JoinGroup(h.ctx, joinReq("g", "not-the-member", withInstance("i0")))
		wantCode(t, "join with wrong member id", jr.ErrorCode, kerr.FencedInstanceID.Code)
		c := kmsg.NewPtrOffsetCommitRequest()
		c.Version, c.Group, c.Generation, c.MemberID, c.InstanceID = 8, "g", gen, "not-the-member", kmsg.StringPtr("i0")
		ct := kmsg.NewOffsetCommitRequestTopic()
		ct.Topic = "t"
		cp := kmsg.NewOffsetCommitRequestTopicPartition()
		ct.Partitions = append(ct.Partitions, cp)
		c.Topics = append(c.Topics, ct)
		wantCode(t, "commit fenced", h.c.OffsetCommit(h.ctx, c).Topics[0].Partitions[0].ErrorCode, kerr.FencedInstanceID.Code)
		c.MemberID = ids["i0"]
		wantCode(t, "commit", h.c.OffsetCommit(h.ctx, c).Topics[0].Partitions[0].ErrorCode, 0)

		// Administrative removal by instance id (LeaveGroup v3+).
		lv := kmsg.NewPtrLeaveGroupRequest()
		lv.Version, lv.Group = 4, "g"
		m := kmsg.NewLeaveGroupRequestMember()
		m.InstanceID = kmsg.StringPtr("i0")
		lv.Members = append(lv.Members, m)
		m.InstanceID = kmsg.StringPtr("nope")
		lv.Members = append(lv.Members, m)
		resp := h.c.LeaveGroup(h.ctx, lv)
		if resp.Members[0].ErrorCode != 0 || resp.Members[1].ErrorCode != kerr.UnknownMemberID.Code {
			t.Fatalf("leave by instance id: %+v", resp)
		}
		if d := h.describe("g"); d.State != "Empty" {
			t.Fatalf("state after removing the only member: %s", d.State)
		}
	})
}

func TestStaticRejoinFencesParkedRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testConfig(), nil)
		defer h.c.Close()
		ids, _ := h.staticGroup("g", 2)
		// i1 starts a rebalance by changing its subscription, then a
		// second process with the same instance id appears.
		ch := h.joinAsync(joinReq("g", ids["i1"], withInstance("i1"), withProtocols("consumer", proto("range", consumerMeta("t", "u")))))
		synctest.Wait()
		jr := h.c.JoinGroup(h.ctx, joinReq("g", "", withInstance("i1"), withTimeouts(10*time.Second, 100*time.Millisecond)))
		old := recv(t, "parked join of the fenced id", ch)
		wantCode(t, "old process", old.ErrorCode, kerr.FencedInstanceID.Code)
		_ = jr
	})
}
