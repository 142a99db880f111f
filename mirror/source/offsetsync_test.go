package source

import (
	"reflect"
	"testing"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/mirror/records"
)

// The cases of MM2's OffsetSyncWriterTest.testUpdate and its spacing
// rules, on one partition with offset.lag.max 100.
func TestPartitionStateUpdate(t *testing.T) {
	s := &partitionState{previousUpstream: -1, previousDownstream: -1, lastSyncDownstream: -1}
	step := func(up, down int64, want bool) {
		t.Helper()
		got := s.update(up, down, 100, false)
		if got != want {
			t.Errorf("update(%d, %d) = %v, want %v", up, down, got, want)
		}
		s.shouldSync = false // the writer resets after queueing
	}
	step(0, 1, true)    // first record of the lifetime
	step(1, 2, false)   // consecutive, fresh
	step(2, 101, false) // 99 behind the last sync's translation: not yet
	step(3, 102, true)  // translation would be 100 behind (102-(1+1) >= 100)
	step(4, 103, false) // consecutive again
	step(6, 105, true)  // upstream gap (compacted or skipped records)
	step(7, 106, false)
	step(8, 3, true) // downstream went back: the remote topic was truncated
	step(9, 4, false)
	step(10, 104, true) // 104-(3+1) >= 100
	// Records held back by their provenance are no gap.
	if s.update(15, 105, 100, true) {
		t.Error("a hole of records held back by their provenance asked for a sync")
	}
}

// skipRuns tells the acknowledgements which records follow held back ones.
func TestSkipRuns(t *testing.T) {
	var s skipRuns
	s.kept(0)
	s.skipped()
	s.skipped()
	s.kept(3) // follows 1 and 2
	s.kept(4)
	s.skipped()
	s.kept(6) // follows 5
	s.skipped()
	s.kept(9) // follows 7 and 8; its acknowledgement never comes (dropped)
	s.kept(10)
	for _, c := range []struct {
		offset int64
		want   bool
	}{{0, false}, {3, true}, {4, false}, {6, true}, {10, false}} {
		if got := s.follows(c.offset); got != c.want {
			t.Errorf("follows(%d) = %v, want %v", c.offset, got, c.want)
		}
	}
	if s.pending.Load() != 0 || len(s.after) != 0 {
		t.Errorf("left over: %v", s.after)
	}
}

// syncRecorder is a send func that holds each sync until release.
type syncRecorder struct {
	sent []records.OffsetSync
	done []func()
}

func (r *syncRecorder) send(s records.OffsetSync, done func()) {
	r.sent = append(r.sent, s)
	r.done = append(r.done, done)
}

func (r *syncRecorder) releaseAll() {
	for _, d := range r.done {
		d()
	}
	r.done = nil
}

func TestOffsetSyncWriterQueues(t *testing.T) {
	rec := &syncRecorder{}
	w := newOffsetSyncWriter(100, rec.send, nil)
	tp := connect.TopicPartition{Topic: "t", Partition: 0}

	w.maybeQueueOffsetSyncs(tp, 0, 10, false) // first: pending
	w.maybeQueueOffsetSyncs(tp, 1, 11, false) // fresh: delayed
	w.firePendingOffsetSyncs()
	want := []records.OffsetSync{{Topic: "t", Partition: 0, UpstreamOffset: 0, DownstreamOffset: 10}}
	if !reflect.DeepEqual(rec.sent, want) {
		t.Fatalf("sent %v, want %v", rec.sent, want)
	}
	w.maybeQueueOffsetSyncs(tp, 2, 12, false)
	w.firePendingOffsetSyncs()
	if len(rec.sent) != 1 {
		t.Fatalf("a delayed sync was sent before the commit: %v", rec.sent)
	}
	// The commit promotes the newest delayed sync of the partition.
	w.promoteDelayedOffsetSyncs()
	w.firePendingOffsetSyncs()
	want = append(want, records.OffsetSync{Topic: "t", Partition: 0, UpstreamOffset: 2, DownstreamOffset: 12})
	if !reflect.DeepEqual(rec.sent, want) {
		t.Fatalf("sent %v, want %v", rec.sent, want)
	}
	// Nothing left to promote.
	w.promoteDelayedOffsetSyncs()
	w.firePendingOffsetSyncs()
	if len(rec.sent) != 2 {
		t.Fatalf("sent again: %v", rec.sent)
	}
	// A sync that must go now replaces the delayed one of its partition.
	w.maybeQueueOffsetSyncs(tp, 3, 13, false)
	w.maybeQueueOffsetSyncs(tp, 5, 15, false) // gap
	w.promoteDelayedOffsetSyncs()
	w.firePendingOffsetSyncs()
	want = append(want, records.OffsetSync{Topic: "t", Partition: 0, UpstreamOffset: 5, DownstreamOffset: 15})
	if !reflect.DeepEqual(rec.sent, want) {
		t.Fatalf("sent %v, want %v", rec.sent, want)
	}
}

func TestOffsetSyncWriterBoundsInFlight(t *testing.T) {
	rec := &syncRecorder{}
	w := newOffsetSyncWriter(100, rec.send, nil)
	// 25 partitions, each with a first record: 25 syncs pending.
	for p := int32(0); p < 25; p++ {
		w.maybeQueueOffsetSyncs(connect.TopicPartition{Topic: "t", Partition: p}, 0, 0, false)
	}
	w.firePendingOffsetSyncs()
	if len(rec.sent) != maxOutstandingOffsetSyncs {
		t.Fatalf("%d syncs in flight, want %d", len(rec.sent), maxOutstandingOffsetSyncs)
	}
	rec.releaseAll()
	w.firePendingOffsetSyncs()
	rec.releaseAll()
	w.firePendingOffsetSyncs()
	if len(rec.sent) != 25 {
		t.Fatalf("%d syncs sent, want 25", len(rec.sent))
	}
	// Oldest first.
	for i, s := range rec.sent {
		if s.Partition != int32(i) {
			t.Fatalf("sync %d is for partition %d", i, s.Partition)
		}
	}
	w.close()
	w.maybeQueueOffsetSyncs(connect.TopicPartition{Topic: "u", Partition: 0}, 0, 0, false)
	w.firePendingOffsetSyncs()
	if len(rec.sent) != 25 {
		t.Fatal("a closed writer sent a sync")
	}
}

func TestSyncQueueOrder(t *testing.T) {
	var q syncQueue
	tp := func(p int32) connect.TopicPartition { return connect.TopicPartition{Topic: "t", Partition: p} }
	s := func(p int32, up int64) records.OffsetSync {
		return records.OffsetSync{Topic: "t", Partition: p, UpstreamOffset: up}
	}
	for p := int32(0); p < 6; p++ {
		q.put(tp(p), s(p, 0))
	}
	q.put(tp(2), s(2, 9)) // replaced in place
	q.remove(tp(1))
	var order []int32
	for q.len() > 0 {
		got := q.popFront()
		order = append(order, got.Partition)
		if got.Partition == 2 && got.UpstreamOffset != 9 {
			t.Errorf("partition 2 kept its old sync")
		}
		if got.Partition == 3 {
			q.put(tp(1), s(1, 1)) // re-added: goes to the back
		}
	}
	if want := []int32{0, 2, 3, 4, 5, 1}; !reflect.DeepEqual(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
}
