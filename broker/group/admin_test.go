package group

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestDeleteGroups(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testConfig(), nil)
		defer h.c.Close()
		h.stableGroup("live", 1)
		for p := int32(0); p < 3; p++ {
			wantCode(t, "commit", h.commit(9, "idle", "", -1, p, 10), 0)
		}
		resp := h.c.DeleteGroups(h.ctx, &kmsg.DeleteGroupsRequest{Version: 2, Groups: []string{"idle", "live", "ghost"}})
		wantCode(t, "delete idle", resp.Groups[0].ErrorCode, 0)
		wantCode(t, "delete live", resp.Groups[1].ErrorCode, kerr.NonEmptyGroup.Code)
		wantCode(t, "delete ghost", resp.Groups[2].ErrorCode, kerr.GroupIDNotFound.Code)
		if d := h.describe("idle"); d.State != "Dead" {
			t.Fatalf("deleted group: %+v", d)
		}
		if off, _ := h.fetch("idle", 0); off != -1 {
			t.Fatalf("offset of a deleted group: %d", off)
		}
		// Tombstones for the three offsets, then for the group.
		recs := h.store.Records(PartitionFor("idle", testPartitions))
		var tomb []string
		for _, r := range recs {
			if d, _ := decodeRecord(r.Key, r.Value); d.group == "idle" && r.Value == nil {
				if d.isOffset {
					tomb = append(tomb, "offset")
				} else {
					tomb = append(tomb, "group")
				}
			}
		}
		if len(tomb) != 4 || tomb[3] != "group" {
			t.Fatalf("tombstones %v", tomb)
		}
		h.restart()
		defer h.c.Close()
		if d := h.describe("idle"); d.State != "Dead" {
			t.Fatalf("deleted group back after restart: %+v", d)
		}
		if d := h.describe("live"); d.State != "Stable" {
			t.Fatalf("live group after restart: %+v", d)
		}
		// A new group can take the deleted one's id.
		wantCode(t, "commit after delete", h.commit(9, "idle", "", -1, 0, 1), 0)
	})
}

func TestDeleteGroupFailureRestoresIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testConfig(), nil)
		defer h.c.Close()
		wantCode(t, "commit", h.commit(9, "idle", "", -1, 0, 10), 0)
		h.store.SetFailAppend(func(int32, []Record) error { return kerr.KafkaStorageError })
		resp := h.c.DeleteGroups(h.ctx, &kmsg.DeleteGroupsRequest{Groups: []string{"idle"}})
		wantCode(t, "failed delete", resp.Groups[0].ErrorCode, kerr.NotCoordinator.Code)
		h.store.SetFailAppend(nil)
		if off, _ := h.fetch("idle", 0); off != 10 {
			t.Fatalf("offset after a failed delete: %d", off)
		}
		if d := h.describe("idle"); d.State != "Empty" {
			t.Fatalf("group after a failed delete: %+v", d)
		}
	})
}

func TestOffsetDelete(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testConfig(), nil)
		defer h.c.Close()
		ids, gen := h.stableGroup("g", 1) // subscribed to "t"
		wantCode(t, "commit", h.commit(9, "g", ids[0], gen, 0, 5), 0)
		other := kmsg.NewPtrOffsetCommitRequest()
		other.Version, other.Group, other.MemberID, other.Generation = 9, "g", ids[0], gen
		ot := kmsg.NewOffsetCommitRequestTopic()
		ot.Topic = "u"
		ot.Partitions = []kmsg.OffsetCommitRequestTopicPartition{kmsg.NewOffsetCommitRequestTopicPartition()}
		other.Topics = append(other.Topics, ot)
		wantCode(t, "commit u", h.c.OffsetCommit(h.ctx, other).Topics[0].Partitions[0].ErrorCode, 0)

		req := func(group string, topics ...string) *kmsg.OffsetDeleteRequest {
			r := kmsg.NewPtrOffsetDeleteRequest()
			r.Group = group
			for _, tn := range topics {
				rt := kmsg.NewOffsetDeleteRequestTopic()
				rt.Topic = tn
				rt.Partitions = []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}
				r.Topics = append(r.Topics, rt)
			}
			return r
		}
		resp := h.c.OffsetDelete(h.ctx, req("g", "t", "u"))
		wantCode(t, "group error", resp.ErrorCode, 0)
		wantCode(t, "subscribed topic", resp.Topics[0].Partitions[0].ErrorCode, kerr.GroupSubscribedToTopic.Code)
		wantCode(t, "unsubscribed topic", resp.Topics[1].Partitions[0].ErrorCode, 0)
		if off, _ := h.fetch("g", 0); off != 5 {
			t.Fatalf("subscribed offset deleted: %d", off)
		}
		wantCode(t, "unknown group", h.c.OffsetDelete(h.ctx, req("ghost", "t")).ErrorCode, kerr.GroupIDNotFound.Code)
		wantCode(t, "empty group id", h.c.OffsetDelete(h.ctx, req("", "t")).ErrorCode, kerr.InvalidGroupID.Code)

		// An Empty group can delete anything.
		wantCode(t, "simple commit", h.commit(9, "s", "", -1, 0, 1), 0)
		resp = h.c.OffsetDelete(h.ctx, req("s", "t"))
		if resp.ErrorCode != 0 || resp.Topics[0].Partitions[0].ErrorCode != 0 {
			t.Fatalf("delete from simple group: %+v", resp)
		}
		if off, _ := h.fetch("s", 0); off != -1 {
			t.Fatalf("deleted offset still there: %d", off)
		}
		h.restart()
		defer h.c.Close()
		if off, _ := h.fetch("s", 0); off != -1 {
			t.Fatalf("deleted offset back after restart: %d", off)
		}
	})
}

func TestListAndDescribeGroups(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testConfig(), nil)
		defer h.c.Close()
		h.stableGroup("stable", 1)
		wantCode(t, "commit", h.commit(9, "simple", "", -1, 0, 1), 0)
		h.stableGroup("conn", 1, withProtocols("connect", proto("default", []byte("w"))))

		list := func(v int16, states, types []string) map[string]kmsg.ListGroupsResponseGroup {
			r := kmsg.NewPtrListGroupsRequest()
			r.Version, r.StatesFilter, r.TypesFilter = v, states, types
			resp := h.c.ListGroups(h.ctx, r)
			wantCode(t, "list", resp.ErrorCode, 0)
			out := make(map[string]kmsg.ListGroupsResponseGroup)
			for _, g := range resp.Groups {
				out[g.Group] = g
			}
			return out
		}
		all := list(3, nil, nil)
		if len(all) != 3 || all["stable"].ProtocolType != "consumer" || all["simple"].ProtocolType != "" || all["conn"].ProtocolType != "connect" {
			t.Fatalf("list: %+v", all)
		}
		if got := list(4, []string{" EMPTY "}, nil); len(got) != 1 || got["simple"].GroupState != "Empty" {
			t.Fatalf("list empty: %+v", got)
		}
		if got := list(4, []string{"Stable"}, nil); len(got) != 2 {
			t.Fatalf("list stable: %+v", got)
		}
		if got := list(4, []string{"bogus"}, nil); len(got) != 0 {
			t.Fatalf("list bogus state: %+v", got)
		}
		if got := list(5, nil, []string{"Classic"}); len(got) != 3 || got["stable"].GroupType != "classic" {
			t.Fatalf("list classic: %+v", got)
		}
		if got := list(5, nil, []string{"consumer"}); len(got) != 0 {
			t.Fatalf("list consumer type: %+v", got)
		}

		r := kmsg.NewPtrDescribeGroupsRequest()
		r.Groups = []string{"stable", "nope"}
		r.IncludeAuthorizedOperations = true
		for _, v := range []int16{0, 5, 6} {
			r.Version = v
			resp := h.c.DescribeGroups(h.ctx, r)
			s, n := resp.Groups[0], resp.Groups[1]
			if s.State != "Stable" || s.AuthorizedOperations != groupOperations {
				t.Fatalf("describe v%d: %+v", v, s)
			}
			wantErr := int16(0)
			if v >= 6 {
				wantErr = kerr.GroupIDNotFound.Code
			}
			if n.State != "Dead" || n.ErrorCode != wantErr || (v >= 6) != (n.ErrorMessage != nil) {
				t.Fatalf("describe v%d of a missing group: %+v", v, n)
			}
		}
	})
}

func TestOffsetExpiration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig()
		cfg.OffsetsRetention = time.Hour
		cfg.OffsetsRetentionCheckInterval = time.Minute
		h := newHarness(t, cfg, nil)
		defer h.c.Close()

		// A simple group: its offsets expire an hour after their commit.
		wantCode(t, "commit", h.commit(9, "simple", "", -1, 0, 1), 0)
		// A consumer group subscribed to "t" that commits "t" and "u".
		opts := withTimeouts(time.Minute, time.Minute)
		ids, gen := h.stableGroup("cg", 1, opts)
		wantCode(t, "commit t", h.commit(9, "cg", ids[0], gen, 0, 5), 0)
		cu := kmsg.NewPtrOffsetCommitRequest()
		cu.Version, cu.Group, cu.MemberID, cu.Generation = 9, "cg", ids[0], gen
		cu.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "u", Partitions: []kmsg.OffsetCommitRequestTopicPartition{kmsg.NewOffsetCommitRequestTopicPartition()}}}
		wantCode(t, "commit u", h.c.OffsetCommit(h.ctx, cu).Topics[0].Partitions[0].ErrorCode, 0)

		// The member heartbeats for two hours.
		for i := 0; i < 2*60/1*2; i++ {
			time.Sleep(30 * time.Second)
			wantCode(t, "heartbeat", h.heartbeat("cg", ids[0], gen), 0)
		}
		synctest.Wait()
		if d := h.describe("simple"); d.State != "Dead" {
			t.Fatalf("simple group with expired offsets still there: %+v", d)
		}
		if off, _ := h.fetch("cg", 0); off != 5 {
			t.Fatalf("subscribed offset expired: %d", off)
		}
		fu := kmsg.NewPtrOffsetFetchRequest()
		fu.Version, fu.Group = 5, "cg"
		fu.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "u", Partitions: []int32{0}}}
		if got := h.c.OffsetFetch(h.ctx, fu).Topics[0].Partitions[0].Offset; got != -1 {
			t.Fatalf("unsubscribed offset of a stable consumer group not expired: %d", got)
		}

		// The member leaves: the Empty group's offsets expire an hour later
		// (counted from when it became Empty), and then the group goes.
		lv := kmsg.NewPtrLeaveGroupRequest()
		lv.Group, lv.MemberID = "cg", ids[0]
		wantCode(t, "leave", h.c.LeaveGroup(h.ctx, lv).ErrorCode, 0)
		synctest.Wait()
		time.Sleep(59 * time.Minute)
		if off, _ := h.fetch("cg", 0); off != 5 {
			t.Fatalf("offset expired before the retention passed: %d", off)
		}
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		if d := h.describe("cg"); d.State != "Dead" {
			t.Fatalf("empty group with expired offsets: %+v", d)
		}
		h.restart()
		defer h.c.Close()
		if d := h.describe("cg"); d.State != "Dead" {
			t.Fatalf("expired group back after restart: %+v", d)
		}
	})
}

func TestNonConsumerGroupKeepsOffsetsWhileActive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := testConfig()
		cfg.OffsetsRetention = time.Hour
		cfg.OffsetsRetentionCheckInterval = time.Minute
		h := newHarness(t, cfg, nil)
		defer h.c.Close()
		opts := []joinOpt{withTimeouts(time.Minute, time.Minute), withProtocols("connect", proto("default", nil))}
		ids, gen := h.stableGroup("w", 1, opts...)
		wantCode(t, "commit", h.commit(9, "w", ids[0], gen, 0, 5), 0)
		for i := 0; i < 3*60*2; i++ {
			time.Sleep(30 * time.Second)
			h.heartbeat("w", ids[0], gen)
		}
		if off, _ := h.fetch("w", 0); off != 5 {
			t.Fatalf("connect group's offset expired while it was active: %d", off)
		}
	})
}
