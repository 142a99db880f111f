package group

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestStableGroupOfThree(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testConfig(), nil)
		defer h.c.Close()
		ids, gen := h.stableGroup("g", 3)
		if gen != 1 {
			t.Fatalf("generation %d, want 1 (all joined within the initial delay)", gen)
		}
		d := h.describe("g")
		if len(d.Members) != 3 {
			t.Fatalf("%d members", len(d.Members))
		}
		for _, m := range d.Members {
			if string(m.MemberAssignment) != "a-"+m.MemberID {
				t.Fatalf("member %s assignment %q", m.MemberID, m.MemberAssignment)
			}
		}
		_ = ids
	})
}

func TestNewMemberTriggersRebalance(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testConfig(), nil)
		defer h.c.Close()
		ids, gen := h.stableGroup("g", 2)
		leader, follower := ids[0], ids[1]

		nr := joinReq("g", "")
		newID := h.newMemberID(nr)
		chNew := h.joinAsync(nr)
		synctest.Wait()
		pending(t, "new member join", chNew)
		if st := h.describe("g").State; st != "PreparingRebalance" {
			t.Fatalf("state %s", st)
		}
		wantCode(t, "leader heartbeat", h.heartbeat("g", leader, gen), kerr.RebalanceInProgress.Code)
		wantCode(t, "sync during rebalance", h.c.SyncGroup(h.ctx, syncReq("g", follower, gen, nil)).ErrorCode, kerr.RebalanceInProgress.Code)
		wantCode(t, "commit during prepare", h.commit(8, "g", follower, gen, 0, 1), 0)

		chL := h.joinAsync(joinReq("g", leader))
		synctest.Wait()
		pending(t, "leader join before the follower rejoined", chL)
		chF := h.joinAsync(joinReq("g", follower))
		jl, jf, jn := recv(t, "leader", chL), recv(t, "follower", chF), recv(t, "new", chNew)
		for _, jr := range []*kmsg.JoinGroupResponse{jl, jf, jn} {
			wantCode(t, "rejoin", jr.ErrorCode, 0)
			if jr.Generation != gen+1 || jr.LeaderID != leader {
				t.Fatalf("rejoin: generation %d leader %s", jr.Generation, jr.LeaderID)
			}
		}
		if len(jl.Members) != 3 || len(jf.Members) != 0 || len(jn.Members) != 0 {
			t.Fatalf("member lists: leader %d follower %d new %d", len(jl.Members), len(jf.Members), len(jn.Members))
		}
		wantCode(t, "commit while completing", h.commit(8, "g", follower, gen+1, 0, 1), kerr.RebalanceInProgress.Code)
		wantCode(t, "commit with old generation", h.commit(8, "g", follower, gen, 0, 1), kerr.IllegalGeneration.Code)

		// Followers park in SyncGroup until the leader's assignment is in.
		chSF := h.syncAsync(syncReq("g", follower, gen+1, nil))
		chSN := h.syncAsync(syncReq("g", newID, gen+1, nil))
		synctest.Wait()
		pending(t, "follower sync", chSF)
		sl := h.c.SyncGroup(h.ctx, syncReq("g", leader, gen+1, map[string][]byte{leader: []byte("L"), follower: []byte("F")}))
		wantCode(t, "leader sync", sl.ErrorCode, 0)
		if string(sl.MemberAssignment) != "L" {
			t.Fatalf("leader assignment %q", sl.MemberAssignment)
		}
		if sf := recv(t, "follower sync", chSF); sf.ErrorCode != 0 || string(sf.MemberAssignment) != "F" {
			t.Fatalf("follower sync: %+v", sf)
		}
		// A member the leader forgot gets an empty assignment.
		if sn := recv(t, "new sync", chSN); sn.ErrorCode != 0 || len(sn.MemberAssignment) != 0 {
			t.Fatalf("new member sync: %+v", sn)
		}
	})
}

func TestRebalanceTimeoutDropsMembersThatDoNotRejoin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testConfig(), nil)
		defer h.c.Close()
		ids, gen := h.stableGroup("g", 2, withTimeouts(60*time.Second, 20*time.Second))
		leader, follower := ids[0], ids[1]

		start := time.Now()
		chL := h.joinAsync(joinReq("g", leader, withTimeouts(60*time.Second, 20*time.Second)))
		// The follower keeps heartbeating but never rejoins.
		for i := 0; i < 3; i++ {
			time.Sleep(5 * time.Second)
			wantCode(t, "follower heartbeat", h.heartbeat("g", follower, gen), kerr.RebalanceInProgress.Code)
		}
		jl := recv(t, "leader join", chL)
		if took := time.Since(start); took != 20*time.Second {
			t.Fatalf("join phase took %v, want the 20s rebalance timeout", took)
		}
		wantCode(t, "leader join", jl.ErrorCode, 0)
		if jl.Generation != gen+1 || len(jl.Members) != 1 || jl.Members[0].MemberID != leader {
			t.Fatalf("leader join: %+v", jl)
		}
		wantCode(t, "dropped follower heartbeat", h.heartbeat("g", follower, gen+1), kerr.UnknownMemberID.Code)
	})
}

func TestLeaderThatDoesNotRejoinIsReplaced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testConfig(), nil)
		defer h.c.Close()
		ids, _ := h.stableGroup("g", 2)
		leader, follower := ids[0], ids[1]
		// A follower rejoining with unchanged metadata just gets the
		// current generation back; with new metadata it rebalances.
		same := h.c.JoinGroup(h.ctx, joinReq("g", follower))
		if same.ErrorCode != 0 || same.Generation != 1 || same.LeaderID != leader || len(same.Members) != 0 {
			t.Fatalf("unchanged follower rejoin: %+v", same)
		}
		jf := recv(t, "follower rejoin", h.joinAsync(joinReq("g", follower, withProtocols("consumer", proto("range", consumerMeta("t", "u"))))))
		wantCode(t, "follower rejoin", jf.ErrorCode, 0)
		if jf.LeaderID != follower || len(jf.Members) != 1 {
			t.Fatalf("follower should lead alone: %+v", jf)
		}
		wantCode(t, "old leader", h.heartbeat("g", leader, jf.Generation), kerr.UnknownMemberID.Code)
	})
}

func TestSessionTimeoutEmptiesGroup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testConfig(), nil)
		defer h.c.Close()
		ids, gen := h.stableGroup("g", 2, withTimeouts(10*time.Second, 30*time.Second))

		// Member 0 heartbeats every 3s; member 1 goes silent.
		for i := 0; i < 3; i++ {
			time.Sleep(3 * time.Second)
			wantCode(t, "heartbeat", h.heartbeat("g", ids[0], gen), 0)
		}
		time.Sleep(3 * time.Second)
		// 12s in: member 1's session (10s) has expired, a rebalance started.
		wantCode(t, "heartbeat after peer expired", h.heartbeat("g", ids[0], gen), kerr.RebalanceInProgress.Code)
		jr := recv(t, "rejoin", h.joinAsync(joinReq("g", ids[0], withTimeouts(10*time.Second, 30*time.Second))))
		wantCode(t, "rejoin", jr.ErrorCode, 0)
		if jr.Generation != gen+1 || len(jr.Members) != 1 {
			t.Fatalf("rejoin: %+v", jr)
		}
		sr := h.c.SyncGroup(h.ctx, syncReq("g", ids[0], gen+1, map[string][]byte{ids[0]: []byte("x")}))
		wantCode(t, "sync", sr.ErrorCode, 0)

		// Now the last member goes silent: the group becomes Empty.
		time.Sleep(11 * time.Second)
		d := h.describe("g")
		if d.State != "Empty" || len(d.Members) != 0 {
			t.Fatalf("describe after session timeout: %+v", d)
		}
		synctest.Wait()
		recs := h.store.Records(PartitionFor("g", testPartitions))
		last := decodeLast(t, recs, "g")
		if last == nil || len(last.Members) != 0 || last.Generation != gen+2 || last.Protocol != nil || last.ProtocolType != "consumer" {
			t.Fatalf("last group record: %+v", last)
		}
	})
}

// decodeLast returns the last GroupMetadata value written for group.
func decodeLast(t *testing.T, recs []Record, group string) *kmsg.GroupMetadataValue {
	t.Helper()
	var last *kmsg.GroupMetadataValue
	for _, r := range recs {
		d, err := decodeRecord(r.Key, r.Value)
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		if !d.isOffset && d.group == group {
			last = d.meta
		}
	}
	return last
}

func TestPendingSyncTimeoutRemovesMember(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testConfig(), nil)
		defer h.c.Close()
		// Two members join together; only the leader syncs.
		a, b := joinReq("g", "", withTimeouts(60*time.Second, 15*time.Second)), joinReq("g", "", withTimeouts(60*time.Second, 15*time.Second))
		h.newMemberID(a)
		h.newMemberID(b)
		chA, chB := h.joinAsync(a), h.joinAsync(b)
		ja, jb := recv(t, "a", chA), recv(t, "b", chB)
		leader, other := ja, jb
		if jb.LeaderID == jb.MemberID {
			leader, other = jb, ja
		}
		chS := h.syncAsync(syncReq("g", leader.MemberID, leader.Generation, map[string][]byte{leader.MemberID: []byte("L")}))
		wantCode(t, "leader sync", recv(t, "leader sync", chS).ErrorCode, 0)
		// The other member never syncs; it keeps heartbeating though.
		for i := 0; i < 4; i++ {
			time.Sleep(4 * time.Second)
			h.heartbeat("g", other.MemberID, other.Generation)
		}
		wantCode(t, "member that never synced", h.heartbeat("g", other.MemberID, other.Generation), kerr.UnknownMemberID.Code)
		wantCode(t, "leader sees the rebalance", h.heartbeat("g", leader.MemberID, leader.Generation), kerr.RebalanceInProgress.Code)
	})
}

func TestInitialRebalanceDelayIsExtendedByNewMembers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig()
		cfg.InitialRebalanceDelay = 3 * time.Second
		h := newHarness(t, cfg, nil)
		defer h.c.Close()
		opts := withTimeouts(30*time.Second, 10*time.Second)
		start := time.Now()
		a := joinReq("g", "", opts)
		h.newMemberID(a)
		chA := h.joinAsync(a)
		time.Sleep(2 * time.Second)
		b := joinReq("g", "", opts)
		h.newMemberID(b)
		chB := h.joinAsync(b)
		// 3s: B arrived during the delay, so it is extended by another 3s.
		time.Sleep(3*time.Second + 900*time.Millisecond)
		pending(t, "join at 5.9s", chA)
		ja, jb := recv(t, "a", chA), recv(t, "b", chB)
		if took := time.Since(start); took != 6*time.Second {
			t.Fatalf("initial rebalance took %v, want 6s", took)
		}
		if ja.Generation != 1 || jb.Generation != 1 {
			t.Fatalf("generations %d %d", ja.Generation, jb.Generation)
		}

		// Without newcomers the delay is not extended; and it never
		// exceeds the rebalance timeout: 3s + 3s + 1s (10s - 3s - 3s left).
		start = time.Now()
		var chans []<-chan *kmsg.JoinGroupResponse
		for i := 0; i < 4; i++ {
			r := joinReq("g2", "", opts)
			h.newMemberID(r)
			chans = append(chans, h.joinAsync(r))
			time.Sleep(2500 * time.Millisecond)
		}
		for _, ch := range chans {
			wantCode(t, "g2 join", recv(t, "g2", ch).ErrorCode, 0)
		}
		if took := time.Since(start); took != 10*time.Second {
			t.Fatalf("extended initial rebalance took %v, want the 10s rebalance timeout", took)
		}
	})
}

func TestLeaveGroup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testConfig(), nil)
		defer h.c.Close()
		ids, gen := h.stableGroup("g", 3)

		// v0: one member, error at the top level.
		lv := kmsg.NewPtrLeaveGroupRequest()
		lv.Group, lv.MemberID = "g", "ghost"
		wantCode(t, "v0 unknown member", h.c.LeaveGroup(h.ctx, lv).ErrorCode, kerr.UnknownMemberID.Code)
		lv.MemberID = ids[2]
		wantCode(t, "v0 leave", h.c.LeaveGroup(h.ctx, lv).ErrorCode, 0)
		wantCode(t, "remaining member sees the rebalance", h.heartbeat("g", ids[0], gen), kerr.RebalanceInProgress.Code)

		// v3+: a batch, per-member errors.
		lv3 := kmsg.NewPtrLeaveGroupRequest()
		lv3.Version, lv3.Group = 5, "g"
		for _, id := range []string{ids[1], "ghost"} {
			m := kmsg.NewLeaveGroupRequestMember()
			m.MemberID = id
			lv3.Members = append(lv3.Members, m)
		}
		resp := h.c.LeaveGroup(h.ctx, lv3)
		if resp.ErrorCode != 0 || len(resp.Members) != 2 || resp.Members[0].ErrorCode != 0 || resp.Members[1].ErrorCode != kerr.UnknownMemberID.Code {
			t.Fatalf("v5 leave: %+v", resp)
		}
		// The last member rejoins alone.
		jr := recv(t, "rejoin", h.joinAsync(joinReq("g", ids[0])))
		if jr.ErrorCode != 0 || len(jr.Members) != 1 {
			t.Fatalf("rejoin: %+v", jr)
		}
		wantCode(t, "leave unknown group", h.c.LeaveGroup(h.ctx, &kmsg.LeaveGroupRequest{Group: "nogroup", MemberID: "x"}).ErrorCode,
			kerr.UnknownMemberID.Code)
		wantCode(t, "leave empty group id", h.c.LeaveGroup(h.ctx, &kmsg.LeaveGroupRequest{Group: "", MemberID: "x"}).ErrorCode,
			kerr.InvalidGroupID.Code)
	})
}

func TestLeaveAnswersParkedJoin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testConfig(), nil)
		defer h.c.Close()
		ids, _ := h.stableGroup("g", 2)
		ch := h.joinAsync(joinReq("g", ids[1], withProtocols("consumer", proto("range", consumerMeta("t", "u")))))
		synctest.Wait()
		lv := kmsg.NewPtrLeaveGroupRequest()
		lv.Group, lv.MemberID = "g", ids[1]
		wantCode(t, "leave", h.c.LeaveGroup(h.ctx, lv).ErrorCode, 0)
		wantCode(t, "parked join of the leaver", recv(t, "join", ch).ErrorCode, kerr.UnknownMemberID.Code)
	})
}

func TestGroupMaxSize(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig()
		cfg.MaxGroupSize = 2
		h := newHarness(t, cfg, nil)
		defer h.c.Close()
		h.stableGroup("g", 2)
		jr := h.c.JoinGroup(h.ctx, joinReq("g", ""))
		wantCode(t, "third member", jr.ErrorCode, kerr.GroupMaxSizeReached.Code)
		if len(h.describe("g").Members) != 2 {
			t.Fatal("group grew past its max size")
		}
	})
}

func TestNewMemberJoinTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testConfig(), nil)
		defer h.c.Close()
		// A long rebalance timeout keeps the join phase open; a new
		// member's parked join still ends after 5 minutes.
		opts := withTimeouts(10*time.Second, time.Hour)
		ids, gen := h.stableGroup("g", 1, opts)
		r := joinReq("g", "", opts)
		h.newMemberID(r)
		start := time.Now()
		ch := h.joinAsync(r)
		for time.Since(start) < 6*time.Minute {
			time.Sleep(3 * time.Second)
			h.heartbeat("g", ids[0], gen)
		}
		jr := recv(t, "new member", ch)
		wantCode(t, "new member join", jr.ErrorCode, kerr.UnknownMemberID.Code)
	})
}

func TestConnectProtocolType(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testConfig(), nil)
		defer h.c.Close()
		opts := withProtocols("connect", proto("sessioned", []byte("worker-a")), proto("default", []byte("worker-a")))
		ids, gen := h.stableGroup("connect-cluster", 2, opts)
		d := h.describe("connect-cluster")
		if d.ProtocolType != "connect" || d.Protocol != "sessioned" || d.State != "Stable" {
			t.Fatalf("describe: %+v", d)
		}
		wantCode(t, "heartbeat", h.heartbeat("connect-cluster", ids[1], gen), 0)
		// Offsets of a non-consumer group stay while it has members.
		wantCode(t, "commit", h.commit(8, "connect-cluster", ids[0], gen, 0, 5), 0)
		od := kmsg.NewPtrOffsetDeleteRequest()
		od.Group = "connect-cluster"
		wantCode(t, "offset delete", h.c.OffsetDelete(h.ctx, od).ErrorCode, kerr.NonEmptyGroup.Code)
	})
}

func TestPendingMemberThatNeverRejoinsIsDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testConfig(), nil)
		defer h.c.Close()
		ids, gen := h.stableGroup("g", 1, withTimeouts(time.Minute, time.Minute))
		// A new member gets its id but never comes back with it. The
		// leader rejoins meanwhile: the join phase waits for the pending
		// member until its session timeout (10s), not the rebalance one.
		pendingID := h.newMemberID(joinReq("g", "", withTimeouts(10*time.Second, time.Minute)))
		wantCode(t, "pending member heartbeat", h.heartbeat("g", pendingID, gen), kerr.UnknownMemberID.Code)
		start := time.Now()
		jr := recv(t, "leader rejoin", h.joinAsync(joinReq("g", ids[0], withTimeouts(time.Minute, time.Minute))))
		if took := time.Since(start); took != 10*time.Second {
			t.Fatalf("join phase took %v, want the pending member's 10s session", took)
		}
		if jr.ErrorCode != 0 || len(jr.Members) != 1 {
			t.Fatalf("rejoin: %+v", jr)
		}
		wantCode(t, "late pending member", h.c.JoinGroup(h.ctx, joinReq("g", pendingID)).ErrorCode, kerr.UnknownMemberID.Code)
	})
}

func TestParkedJoinReturnsWhenTheClientGoes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testConfig(), nil)
		defer h.c.Close()
		ids, _ := h.stableGroup("g", 2)
		ctx, cancel := context.WithCancel(h.ctx)
		ch := make(chan *kmsg.JoinGroupResponse, 1)
		go func() { ch <- h.c.JoinGroup(ctx, joinReq("g", ids[0])) }()
		synctest.Wait()
		pending(t, "parked join", ch)
		cancel()
		wantCode(t, "join of a gone client", recv(t, "join", ch).ErrorCode, kerr.RebalanceInProgress.Code)
	})
}

func TestCommitsKeepTheSessionAlive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testConfig(), nil)
		defer h.c.Close()
		ids, gen := h.stableGroup("g", 1, withTimeouts(10*time.Second, time.Minute))
		for i := 0; i < 10; i++ {
			time.Sleep(5 * time.Second)
			wantCode(t, "commit", h.commit(9, "g", ids[0], gen, 0, int64(i)), 0)
		}
		wantCode(t, "heartbeat after commits only", h.heartbeat("g", ids[0], gen), 0)
	})
}
