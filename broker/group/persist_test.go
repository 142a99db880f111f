package group

import (
	"context"
	"encoding/hex"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestGroupsAndOffsetsSurviveRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testConfig(), nil)
		ids, gen := h.stableGroup("g", 2, withTimeouts(30*time.Second, 60*time.Second))
		sids, sgen := h.staticGroup("st", 1)
		wantCode(t, "commit", h.commit(9, "g", ids[0], gen, 0, 42), 0)
		wantCode(t, "simple commit", h.commit(9, "simple", "", -1, 1, 7), 0)
		before := h.describe("g")

		h.restart()
		defer h.c.Close()

		after := h.describe("g")
		if after.State != "Stable" || after.Protocol != "range" || len(after.Members) != 2 {
			t.Fatalf("reloaded group: %+v", after)
		}
		for i := range before.Members {
			b, a := before.Members[i], after.Members[i]
			if a.MemberID != b.MemberID || a.ClientID != b.ClientID || a.ClientHost != b.ClientHost ||
				string(a.MemberAssignment) != string(b.MemberAssignment) || string(a.ProtocolMetadata) != string(b.ProtocolMetadata) {
				t.Fatalf("member %d: before %+v after %+v", i, b, a)
			}
		}
		if off, _ := h.fetch("g", 0); off != 42 {
			t.Fatalf("offset after restart %d", off)
		}
		if off, _ := h.fetch("simple", 1); off != 7 {
			t.Fatalf("simple offset after restart %d", off)
		}
		// Members carry on with their generation, static ones too...
		wantCode(t, "heartbeat after restart", h.heartbeat("g", ids[0], gen), 0)
		wantCode(t, "static heartbeat after restart", staticHeartbeat(h, "st", "i0", sids["i0"], sgen), 0)
		sr := h.c.SyncGroup(h.ctx, syncReq("g", ids[1], gen, nil))
		if sr.ErrorCode != 0 || string(sr.MemberAssignment) != "a-"+ids[1] {
			t.Fatalf("sync after restart: %+v", sr)
		}
		// ...and their sessions restarted at load: a silent member goes.
		for i := 0; i < 4; i++ {
			time.Sleep(10 * time.Second)
			h.heartbeat("g", ids[0], gen)
		}
		wantCode(t, "survivor sees the rebalance", h.heartbeat("g", ids[0], gen), kerr.RebalanceInProgress.Code)
		jr := recv(t, "rejoin", h.joinAsync(joinReq("g", ids[0], withTimeouts(30*time.Second, 60*time.Second))))
		if jr.ErrorCode != 0 || jr.Generation != gen+1 || len(jr.Members) != 1 {
			t.Fatalf("rejoin after restart: %+v", jr)
		}
	})
}

func TestRebalanceInProgressAtRestartResumesFromLastStableGeneration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testConfig(), nil)
		ids, gen := h.stableGroup("g", 2)
		// A third member starts a rebalance that never completes.
		r := joinReq("g", "")
		h.newMemberID(r)
		h.joinAsync(r)
		synctest.Wait()
		h.restart()
		defer h.c.Close()
		d := h.describe("g")
		if d.State != "Stable" || len(d.Members) != 2 {
			t.Fatalf("group after restart: %+v", d)
		}
		wantCode(t, "heartbeat", h.heartbeat("g", ids[1], gen), 0)
	})
}

func TestLoadInProgressAndNotCoordinator(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &blockingStore{MemStore: NewMemStore(), release: make(chan struct{})}
		c := New(testConfig(), store, Options{Logger: quietLogger()})
		defer c.Close()
		ctx := context.Background()
		p := PartitionFor("g", testPartitions)
		loaded := make(chan error, 1)
		go func() { loaded <- c.Load(p) }()
		synctest.Wait()
		if !c.Owns("g") {
			t.Fatal("Owns is false while loading")
		}
		wantCode(t, "join while loading", c.JoinGroup(ctx, joinReq("g", "")).ErrorCode, kerr.CoordinatorLoadInProgress.Code)
		wantCode(t, "heartbeat while loading", c.Heartbeat(ctx, &kmsg.HeartbeatRequest{Group: "g", MemberID: "m"}).ErrorCode, 0)
		lr := c.ListGroups(ctx, kmsg.NewPtrListGroupsRequest())
		wantCode(t, "list while loading", lr.ErrorCode, kerr.CoordinatorLoadInProgress.Code)
		close(store.release)
		if err := recv(t, "load", loaded); err != nil {
			t.Fatal(err)
		}
		wantCode(t, "join after load", c.JoinGroup(ctx, joinReq("g", "")).ErrorCode, kerr.MemberIDRequired.Code)

		other := "x"
		for PartitionFor(other, testPartitions) == p {
			other += "x"
		}
		if c.Owns(other) {
			t.Fatal("Owns a partition that was never loaded")
		}
		wantCode(t, "join elsewhere", c.JoinGroup(ctx, joinReq(other, "")).ErrorCode, kerr.NotCoordinator.Code)
		wantCode(t, "sync elsewhere", c.SyncGroup(ctx, syncReq(other, "m", 1, nil)).ErrorCode, kerr.NotCoordinator.Code)
		wantCode(t, "heartbeat elsewhere", c.Heartbeat(ctx, &kmsg.HeartbeatRequest{Group: other}).ErrorCode, kerr.NotCoordinator.Code)
		f := kmsg.NewPtrOffsetFetchRequest()
		f.Version, f.Group = 5, other
		wantCode(t, "fetch elsewhere", c.OffsetFetch(ctx, f).ErrorCode, kerr.NotCoordinator.Code)
		f.Version = 1
		f.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "t", Partitions: []int32{0}}}
		if fr := c.OffsetFetch(ctx, f); fr.Topics[0].Partitions[0].ErrorCode != kerr.NotCoordinator.Code {
			t.Fatalf("v1 fetch elsewhere: %+v", fr)
		}
		dg := c.DescribeGroups(ctx, &kmsg.DescribeGroupsRequest{Groups: []string{other}})
		wantCode(t, "describe elsewhere", dg.Groups[0].ErrorCode, kerr.NotCoordinator.Code)
		del := c.DeleteGroups(ctx, &kmsg.DeleteGroupsRequest{Groups: []string{other}})
		wantCode(t, "delete elsewhere", del.Groups[0].ErrorCode, kerr.NotCoordinator.Code)
		// Loading again is a no-op.
		if err := c.Load(p); err != nil {
			t.Fatal(err)
		}
		if err := c.Load(testPartitions); err == nil {
			t.Fatal("loading a partition out of range succeeded")
		}
	})
}

type blockingStore struct {
	*MemStore
	release chan struct{}
}

func (s *blockingStore) Replay(p int32, fn func(int64, []byte, []byte) error) error {
	<-s.release
	return s.MemStore.Replay(p, fn)
}

type failingReplayStore struct{ *MemStore }

func (failingReplayStore) Replay(int32, func(int64, []byte, []byte) error) error {
	return errors.New("read error")
}

func TestLoadFailureLeavesPartitionUnowned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := New(testConfig(), failingReplayStore{NewMemStore()}, Options{Logger: quietLogger()})
		defer c.Close()
		if err := c.Load(0); err == nil {
			t.Fatal("load succeeded on a failing store")
		}
		if c.Owns("polygenelubricants") {
			t.Fatal("partition owned after a failed load")
		}
	})
}

func TestUnloadAnswersParkedRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testConfig(), nil)
		defer h.c.Close()
		ids, gen := h.stableGroup("g", 2)
		chJ := h.joinAsync(joinReq("g", ids[0])) // leader rejoins: rebalance, parked
		synctest.Wait()
		chS := h.syncAsync(syncReq("g", ids[1], gen, nil))
		wantCode(t, "sync during rebalance", recv(t, "sync", chS).ErrorCode, kerr.RebalanceInProgress.Code)
		h.c.Unload(PartitionFor("g", testPartitions))
		wantCode(t, "parked join", recv(t, "join", chJ).ErrorCode, kerr.NotCoordinator.Code)
		wantCode(t, "heartbeat after unload", h.heartbeat("g", ids[1], gen), kerr.NotCoordinator.Code)
		if h.c.Owns("g") {
			t.Fatal("still owns the group after unload")
		}
		// Loading it back restores the last stable generation.
		if err := h.c.Load(PartitionFor("g", testPartitions)); err != nil {
			t.Fatal(err)
		}
		wantCode(t, "heartbeat after reload", h.heartbeat("g", ids[1], gen), 0)
	})
}

func TestCloseAnswersParkedJoinsPromptly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testConfig(), nil)
		ids, _ := h.stableGroup("g", 2)
		chJ := h.joinAsync(joinReq("g", ids[0]))
		chF := h.joinAsync(joinReq("g", ids[1], withProtocols("consumer", proto("range", consumerMeta("x")))))
		synctest.Wait()
		// Both joined: the group is completing; leader syncs nothing yet.
		jr := recv(t, "join", chJ)
		recv(t, "join", chF)
		chS := h.syncAsync(syncReq("g", ids[1], jr.Generation, nil))
		synctest.Wait()
		start := time.Now()
		h.c.Close()
		wantCode(t, "parked sync", recv(t, "sync", chS).ErrorCode, kerr.NotCoordinator.Code)
		if time.Since(start) != 0 {
			t.Fatal("Close waited")
		}
		wantCode(t, "join after close", h.c.JoinGroup(h.ctx, joinReq("g", "")).ErrorCode, kerr.NotCoordinator.Code)
		if err := h.c.Load(0); err == nil {
			t.Fatal("load after close succeeded")
		}
	})
}

func TestSyncAppendFailureRebalances(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testConfig(), nil)
		defer h.c.Close()
		a, b := joinReq("g", ""), joinReq("g", "")
		h.newMemberID(a)
		h.newMemberID(b)
		chA, chB := h.joinAsync(a), h.joinAsync(b)
		ja, jb := recv(t, "a", chA), recv(t, "b", chB)
		leader, follower := ja, jb
		if jb.LeaderID == jb.MemberID {
			leader, follower = jb, ja
		}
		chF := h.syncAsync(syncReq("g", follower.MemberID, follower.Generation, nil))
		synctest.Wait()
		h.store.SetFailAppend(func(int32, []Record) error { return kerr.NotEnoughReplicas })
		sl := h.c.SyncGroup(h.ctx, syncReq("g", leader.MemberID, leader.Generation, map[string][]byte{leader.MemberID: []byte("x")}))
		wantCode(t, "leader sync", sl.ErrorCode, kerr.CoordinatorNotAvailable.Code)
		wantCode(t, "follower sync", recv(t, "follower", chF).ErrorCode, kerr.CoordinatorNotAvailable.Code)
		h.store.SetFailAppend(nil)
		if st := h.describe("g").State; st != "PreparingRebalance" {
			t.Fatalf("state after a failed assignment write: %s", st)
		}
	})
}

// TestRecordsMatchKafka44 compares our encodings with bytes read back from
// a Kafka 4.4.0 broker's __consumer_offsets (scripts/kafka.sh, a kgo group
// member with instance id "inst1" committing, then kmsg-level commits).
func TestRecordsMatchKafka44(t *testing.T) {
	unhex := func(s string) []byte {
		b, err := hex.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	topicID := [16]byte(unhex("8eac8a5b0314441e80c9e36bb2cd78f7"))

	// OffsetCommit v9, group "s9", no metadata, leader epoch -1.
	if got := offsetKey("s9", "t", 0); hex.EncodeToString(got) != "00010002733900017400000000" {
		t.Errorf("offset key %x", got)
	}
	o := &offsetEntry{offset: 5, leaderEpoch: -1, commitMs: 0x1a226594be4, expireMs: -1, topicID: topicID}
	if got, want := hex.EncodeToString(offsetValue(o)), "00040000000000000005ffffffff01000001a226594be40100108eac8a5b0314441e80c9e36bb2cd78f7"; got != want {
		t.Errorf("offset value\n got %s\nwant %s", got, want)
	}
	// OffsetCommit v2 with a retention time: value version 1.
	o = &offsetEntry{offset: 5, leaderEpoch: -1, metadata: "m", commitMs: 1795939716056, expireMs: 1795939776056}
	d, err := decodeRecord(offsetKey("s2", "t", 0), offsetValue(o))
	if err != nil || d.offset.expireMs != o.expireMs || d.offset.metadata != "m" || offsetValue(o)[1] != 1 {
		t.Errorf("retention offset round trip: %+v %v", d.offset, err)
	}

	// The group record Kafka wrote after the leader's sync.
	kafkaGroup := unhex("00030008636f6e73756d6572000000010012636f6f70657261746976652d737469636b79002a696e7374312d31646331373237642d643266332d343632622d613638612d646531653163643463376530000001a22658393f00000001002a696e7374312d31646331373237642d643266332d343632622d613638612d6465316531636434633765300005696e73743100036b676f000a2f3132372e302e302e310000ea600000afc80000001b000300000001000174000000040000000000000000ffffffffffff0000001d00000000000100017400000003000000000000000100000002ffffffff")
	d, err = decodeRecord(unhex("000200026731"), kafkaGroup)
	if err != nil {
		t.Fatal(err)
	}
	g := newGroup(&Coordinator{log: quietLogger(), now: time.Now}, "g1", 0, nil)
	g.applyMetadata(d.meta)
	if got := groupValue(g, nil); hex.EncodeToString(got) != hex.EncodeToString(kafkaGroup) {
		t.Errorf("group value re-encoded differently\n got %x\nwant %x", got, kafkaGroup)
	}
	if hex.EncodeToString(groupKey("g1")) != "000200026731" {
		t.Errorf("group key %x", groupKey("g1"))
	}
	// The empty record of a new group.
	if got := hex.EncodeToString(emptyGroupValue(0x1a226583930)); got != "0003000000000000ffffffff000001a22658393000000000" {
		t.Errorf("empty group value %s", got)
	}
	// Keys of consumer (KIP-848) groups are skipped, not errors.
	if _, err := decodeRecord([]byte{0, 3, 0, 1, 'x'}, []byte{0, 0}); !errors.Is(err, errSkipRecord) {
		t.Errorf("KIP-848 record: %v", err)
	}
}
