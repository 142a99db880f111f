package group

import (
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestSimpleCommitAndFetchAllVersions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testConfig(), nil)
		defer h.c.Close()
		for v := int16(0); v <= 9; v++ {
			wantCode(t, "simple commit", h.commit(v, "s", "", -1, int32(v), 100+int64(v)), 0)
		}
		d := h.describe("s")
		if d.State != "Empty" || d.ProtocolType != "" || len(d.Members) != 0 {
			t.Fatalf("simple group: %+v", d)
		}
		for v := int16(0); v <= 9; v++ {
			got, code := h.fetch("s", int32(v))
			if code != 0 || got != 100+int64(v) {
				t.Fatalf("partition %d: offset %d %s", v, got, errName(code))
			}
		}
		// Single-group form, named partitions, every version up to 7.
		for v := int16(0); v <= 7; v++ {
			r := kmsg.NewPtrOffsetFetchRequest()
			r.Version, r.Group = v, "s"
			rt := kmsg.NewOffsetFetchRequestTopic()
			rt.Topic, rt.Partitions = "t", []int32{3, 42}
			r.Topics = append(r.Topics, rt)
			resp := h.c.OffsetFetch(h.ctx, r)
			ps := resp.Topics[0].Partitions
			if resp.ErrorCode != 0 || len(ps) != 2 || ps[0].Offset != 103 || *ps[0].Metadata != "meta" || ps[1].Offset != -1 || ps[1].ErrorCode != 0 {
				t.Fatalf("fetch v%d: %+v", v, resp)
			}
		}
		// Null topics: everything (v2+ and the v8 group form).
		r := kmsg.NewPtrOffsetFetchRequest()
		r.Version, r.Group = 5, "s"
		resp := h.c.OffsetFetch(h.ctx, r)
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 10 || resp.Topics[0].Partitions[9].Offset != 109 {
			t.Fatalf("fetch all v5: %+v", resp)
		}
		r8 := kmsg.NewPtrOffsetFetchRequest()
		r8.Version = 8
		for _, g := range []string{"s", "unknown-group"} {
			rg := kmsg.NewOffsetFetchRequestGroup()
			rg.Group = g
			r8.Groups = append(r8.Groups, rg)
		}
		resp8 := h.c.OffsetFetch(h.ctx, r8)
		if len(resp8.Groups) != 2 || len(resp8.Groups[0].Topics[0].Partitions) != 10 || len(resp8.Groups[1].Topics) != 0 || resp8.Groups[1].ErrorCode != 0 {
			t.Fatalf("fetch all v8: %+v", resp8)
		}
		// The empty group id is a group like any other for offsets.
		wantCode(t, "empty group id commit", h.commit(9, "", "", -1, 0, 7), 0)
		if got, _ := h.fetch("", 0); got != 7 {
			t.Fatalf("empty group id offset %d", got)
		}
	})
}

func TestCommitFieldsByVersion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testConfig(), nil)
		defer h.c.Close()
		start := time.Now()
		mk := func(v int16, group string) *kmsg.OffsetCommitRequest {
			r := kmsg.NewPtrOffsetCommitRequest()
			r.Version, r.Group = v, group
			rt := kmsg.NewOffsetCommitRequestTopic()
			rt.Topic = "t"
			rp := kmsg.NewOffsetCommitRequestTopicPartition()
			rp.Offset, rp.LeaderEpoch, rp.Timestamp = 9, 4, 12345
			rt.Partitions = append(rt.Partitions, rp)
			r.Topics = append(r.Topics, rt)
			return r
		}
		v1 := mk(1, "v1") // explicit commit timestamp
		v2 := mk(2, "v2") // retention time
		v2.RetentionTimeMillis = 60000
		v7 := mk(7, "v7") // leader epoch, broker retention
		for _, r := range []*kmsg.OffsetCommitRequest{v1, v2, v7} {
			wantCode(t, "commit", h.c.OffsetCommit(h.ctx, r).Topics[0].Partitions[0].ErrorCode, 0)
		}
		get := func(group string) *offsetEntry {
			g, _, _ := h.c.lookup(group, false)
			defer g.mu.Unlock()
			return g.offsets["t"][0]
		}
		if o := get("v1"); o.commitMs != 12345 || o.expireMs != -1 || o.leaderEpoch != -1 {
			t.Fatalf("v1 offset: %+v", o)
		}
		if o := get("v2"); o.commitMs != start.UnixMilli() || o.expireMs != start.UnixMilli()+60000 {
			t.Fatalf("v2 offset: %+v", o)
		}
		if o := get("v7"); o.leaderEpoch != 4 || o.expireMs != -1 {
			t.Fatalf("v7 offset: %+v", o)
		}
		// What reached the log: value version 1 only for the retention commit.
		for _, rec := range h.store.Records(PartitionFor("v2", testPartitions)) {
			if d, _ := decodeRecord(rec.Key, rec.Value); d.group == "v2" && d.isOffset {
				if rec.Value[1] != 1 {
					t.Fatalf("retention commit written as value version %d", rec.Value[1])
				}
			}
		}
		for _, rec := range h.store.Records(PartitionFor("v7", testPartitions)) {
			if d, _ := decodeRecord(rec.Key, rec.Value); d.group == "v7" && d.isOffset && rec.Value[1] != 4 {
				t.Fatalf("commit written as value version %d, want 4", rec.Value[1])
			}
		}
		// v2 retention: gone a minute later, at the next retention check.
		time.Sleep(time.Minute)
		h.c.expireOffsets()
		synctest.Wait()
		if off, _ := h.fetch("v2", 0); off != -1 {
			t.Fatalf("v2 offset with a 60s retention still there: %d", off)
		}
		if off, _ := h.fetch("v7", 0); off != 9 {
			t.Fatalf("v7 offset expired early: %d", off)
		}
	})
}

func TestCommitErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testConfig(), nil)
		defer h.c.Close()
		wantCode(t, "v8 generation for an unknown group", h.commit(8, "nogroup", "", 3, 0, 1), kerr.IllegalGeneration.Code)
		wantCode(t, "v9 generation for an unknown group", h.commit(9, "nogroup", "", 3, 0, 1), kerr.GroupIDNotFound.Code)
		if d := h.describe("nogroup"); d.State != "Dead" {
			t.Fatalf("failed commit created the group: %+v", d)
		}

		big := kmsg.NewPtrOffsetCommitRequest()
		big.Version, big.Group, big.Generation = 9, "s", -1
		bt := kmsg.NewOffsetCommitRequestTopic()
		bt.Topic = "t"
		bp := kmsg.NewOffsetCommitRequestTopicPartition()
		bp.Metadata = kmsg.StringPtr(strings.Repeat("x", 4097))
		bt.Partitions = append(bt.Partitions, bp)
		bp.Partition, bp.Metadata = 1, kmsg.StringPtr(strings.Repeat("x", 4096))
		bt.Partitions = append(bt.Partitions, bp)
		big.Topics = append(big.Topics, bt)
		resp := h.c.OffsetCommit(h.ctx, big)
		wantCode(t, "metadata too large", resp.Topics[0].Partitions[0].ErrorCode, kerr.OffsetMetadataTooLarge.Code)
		wantCode(t, "metadata at the limit", resp.Topics[0].Partitions[1].ErrorCode, 0)

		ids, gen := h.stableGroup("g", 2)
		wantCode(t, "simple commit to a live group", h.commit(9, "g", "", -1, 0, 1), kerr.UnknownMemberID.Code)
		wantCode(t, "unknown member", h.commit(9, "g", "ghost", gen, 0, 1), kerr.UnknownMemberID.Code)
		wantCode(t, "stale generation", h.commit(9, "g", ids[1], gen-1, 0, 1), kerr.IllegalGeneration.Code)
		wantCode(t, "member commit", h.commit(9, "g", ids[1], gen, 0, 11), 0)
		if off, _ := h.fetch("g", 0); off != 11 {
			t.Fatalf("member commit not visible: %d", off)
		}
	})
}

// fakeTopics is the broker's topic metadata for tests.
type fakeTopics map[string]struct {
	id    [16]byte
	parts int32
}

func (f fakeTopics) Topic(name string) ([16]byte, int32, bool) {
	t, ok := f[name]
	return t.id, t.parts, ok
}

func (f fakeTopics) TopicName(id [16]byte) (string, bool) {
	for n, t := range f {
		if t.id == id {
			return n, true
		}
	}
	return "", false
}

func TestCommitTopicChecksAndIDs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		topics := fakeTopics{"t": {id: [16]byte{1, 2, 3}, parts: 2}}
		store := NewMemStore()
		c := New(testConfig(), store, Options{Logger: quietLogger(), Topics: topics})
		defer c.Close()
		for p := int32(0); p < testPartitions; p++ {
			if err := c.Load(p); err != nil {
				t.Fatal(err)
			}
		}
		h := &harness{t: t, c: c, store: store, ctx: t.Context()}

		r := kmsg.NewPtrOffsetCommitRequest()
		r.Version, r.Group, r.Generation = 9, "s", -1
		for _, name := range []string{"t", "nope"} {
			rt := kmsg.NewOffsetCommitRequestTopic()
			rt.Topic = name
			for _, p := range []int32{0, 5} {
				rp := kmsg.NewOffsetCommitRequestTopicPartition()
				rp.Partition, rp.Offset = p, 3
				rt.Partitions = append(rt.Partitions, rp)
			}
			r.Topics = append(r.Topics, rt)
		}
		resp := c.OffsetCommit(h.ctx, r)
		codes := []int16{resp.Topics[0].Partitions[0].ErrorCode, resp.Topics[0].Partitions[1].ErrorCode,
			resp.Topics[1].Partitions[0].ErrorCode, resp.Topics[1].Partitions[1].ErrorCode}
		want := []int16{0, kerr.UnknownTopicOrPartition.Code, kerr.UnknownTopicOrPartition.Code, kerr.UnknownTopicOrPartition.Code}
		for i := range codes {
			wantCode(t, "topic check", codes[i], want[i])
		}
		// The record carries the topic id, as Kafka 4.4 writes it.
		for _, rec := range store.Records(PartitionFor("s", testPartitions)) {
			if d, _ := decodeRecord(rec.Key, rec.Value); d.isOffset && d.offset.topicID != topics["t"].id {
				t.Fatalf("offset record topic id %x", d.offset.topicID)
			}
		}

		// v10 names topics by id, in commits and fetches.
		r10 := kmsg.NewPtrOffsetCommitRequest()
		r10.Version, r10.Group, r10.Generation = 10, "s", -1
		for _, id := range [][16]byte{topics["t"].id, {9}} {
			rt := kmsg.NewOffsetCommitRequestTopic()
			rt.TopicID = id
			rp := kmsg.NewOffsetCommitRequestTopicPartition()
			rp.Partition, rp.Offset = 1, 8
			rt.Partitions = append(rt.Partitions, rp)
			r10.Topics = append(r10.Topics, rt)
		}
		resp10 := c.OffsetCommit(h.ctx, r10)
		wantCode(t, "v10 known id", resp10.Topics[0].Partitions[0].ErrorCode, 0)
		wantCode(t, "v10 unknown id", resp10.Topics[1].Partitions[0].ErrorCode, kerr.UnknownTopicID.Code)

		f := kmsg.NewPtrOffsetFetchRequest()
		f.Version = 10
		fg := kmsg.NewOffsetFetchRequestGroup()
		fg.Group = "s"
		ft := kmsg.NewOffsetFetchRequestGroupTopic()
		ft.TopicID, ft.Partitions = topics["t"].id, []int32{0, 1}
		fg.Topics = append(fg.Topics, ft)
		f.Groups = append(f.Groups, fg)
		all := kmsg.NewOffsetFetchRequestGroup()
		all.Group = "s"
		f.Groups = append(f.Groups, all)
		fr := c.OffsetFetch(h.ctx, f)
		named := fr.Groups[0].Topics[0]
		if named.TopicID != topics["t"].id || named.Partitions[0].Offset != 3 || named.Partitions[1].Offset != 8 {
			t.Fatalf("v10 fetch by id: %+v", fr.Groups[0])
		}
		if at := fr.Groups[1].Topics; len(at) != 1 || at[0].TopicID != topics["t"].id || len(at[0].Partitions) != 2 {
			t.Fatalf("v10 fetch all: %+v", fr.Groups[1])
		}
	})
}

func TestOffsetsVisibleOnlyWhenDurable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testConfig(), nil)
		defer h.c.Close()
		wantCode(t, "first commit", h.commit(9, "s", "", -1, 0, 1), 0)

		release := make(chan struct{})
		h.store.SetFailAppend(func(int32, []Record) error {
			<-release
			return nil
		})
		done := make(chan int16, 1)
		go func() { done <- h.commit(9, "s", "", -1, 0, 2) }()
		synctest.Wait()
		pending(t, "commit while the append is blocked", done)
		if off, _ := h.fetch("s", 0); off != 1 {
			t.Fatalf("uncommitted offset visible: %d", off)
		}
		close(release)
		wantCode(t, "second commit", recv(t, "commit", done), 0)
		if off, _ := h.fetch("s", 0); off != 2 {
			t.Fatalf("committed offset not visible: %d", off)
		}

		// A failed append fails the commit and changes nothing.
		h.store.SetFailAppend(func(int32, []Record) error { return kerr.NotLeaderForPartition })
		wantCode(t, "failed commit", h.commit(9, "s", "", -1, 0, 3), kerr.NotCoordinator.Code)
		h.store.SetFailAppend(func(int32, []Record) error { return errors.New("disk on fire") })
		wantCode(t, "failed commit", h.commit(9, "s", "", -1, 0, 3), kerr.NotCoordinator.Code)
		h.store.SetFailAppend(func(int32, []Record) error { return kerr.RequestTimedOut })
		wantCode(t, "timed out commit", h.commit(9, "s", "", -1, 0, 3), kerr.CoordinatorNotAvailable.Code)
		h.store.SetFailAppend(nil)
		if off, _ := h.fetch("s", 0); off != 2 {
			t.Fatalf("failed commit changed the offset: %d", off)
		}
		// A simple group whose first commit fails does not exist.
		h.store.SetFailAppend(func(int32, []Record) error { return errors.New("no") })
		h.commit(9, "never", "", -1, 0, 3)
		h.store.SetFailAppend(nil)
		wantCode(t, "commit after failure", h.commit(9, "s", "", -1, 0, 4), 0)
	})
}

func TestConcurrentCommitsAreOrderedAndBatched(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, testConfig(), nil)
		defer h.c.Close()
		var appends int
		release := make(chan struct{})
		first := true
		h.store.SetFailAppend(func(int32, []Record) error {
			appends++
			if first {
				first = false
				<-release
			}
			return nil
		})
		// One commit holds the writer; 50 more queue up behind it.
		done := make(chan int16, 51)
		go func() { done <- h.commit(9, "s", "", -1, 0, 0) }()
		synctest.Wait()
		for i := 1; i <= 50; i++ {
			go func() { done <- h.commit(9, "s", "", -1, int32(i%5), int64(i)) }()
		}
		synctest.Wait()
		close(release)
		for i := 0; i < 51; i++ {
			wantCode(t, "commit", recv(t, "commit", done), 0)
		}
		if appends != 2 {
			t.Fatalf("%d appends for 51 commits, want 2 (the queued ones merged)", appends)
		}
	})
}
