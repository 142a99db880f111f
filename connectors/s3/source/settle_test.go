package source

import (
	"slices"
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect"
)

func TestSettleHoldsBackYoungObjects(t *testing.T) {
	now := time.Now()
	s := settle{minAge: 10 * time.Second}
	q := []objectRef{
		{Key: "a", Start: 0, Modified: now.Add(-time.Minute)},
		{Key: "b", Start: 5, Modified: now.Add(-3 * time.Second)}, // young: it and all after it wait
		{Key: "c", Start: 9, Modified: now.Add(-time.Minute)},
	}
	ready, at := s.ready(q, now)
	if got := keysOf(ready); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("ready %v, want [a]", got)
	}
	if want := now.Add(7 * time.Second); !at.Equal(want) {
		t.Fatalf("ready at %v, want %v (b's age by the store's clock)", at, want)
	}
	if ready, _ := s.ready(q, now.Add(7*time.Second)); len(ready) != 3 {
		t.Fatalf("7 s later: %v, want all", keysOf(ready))
	}

	// The store's clock runs an hour ahead: its times say "young"
	// forever; our own clock since the first listing decides.
	ahead := []objectRef{{Key: "d", Modified: now.Add(time.Hour)}}
	if ready, at := s.ready(ahead, now); len(ready) != 0 || !at.Equal(now.Add(10*time.Second)) {
		t.Fatalf("clock ahead, first listing: ready %v at %v", keysOf(ready), at)
	}
	if ready, _ := s.ready(ahead, now.Add(5*time.Second)); len(ready) != 0 {
		t.Fatal("clock ahead: ready before min age on our clock")
	}
	if ready, _ := s.ready(ahead, now.Add(10*time.Second)); len(ready) != 1 {
		t.Fatal("clock ahead: not ready after min age on our clock")
	}
	if len(s.seen) != 0 {
		t.Fatalf("ready objects still tracked: %v", s.seen)
	}
	off := settle{}
	if ready, at := off.ready(q, now); len(ready) != 3 || !at.IsZero() {
		t.Fatalf("min age 0 holds back %v", keysOf(ready))
	}
}

// A task following a sink: the object appears before its .keys file;
// the task waits for the object to settle and restores the keys.
func TestTaskWaitsForSideFilesOfNewObjects(t *testing.T) {
	s := testSettings(10)
	s.minAge = 300 * time.Millisecond
	b := newFakeBucket()
	obj := objKey(s, "t", 0, 0)
	keys, _ := namingOf(s).sideKeys(obj)
	b.putAt(obj, lines("v", 0, 2), time.Now())
	task := startTask(t, b, s, memOffsets{}, connect.TopicPartition{Topic: "t", Partition: 0})
	if recs, err := task.Poll(t.Context()); err != nil || len(recs) != 0 {
		t.Fatalf("young object read at once: %d records, %v", len(recs), err)
	}
	b.putAt(keys, lines("k", 0, 2), time.Now()) // the side file lands a moment later
	start := time.Now()
	recs := pollN(t, task, 2)
	if waited := time.Since(start); waited < 200*time.Millisecond {
		t.Fatalf("read after %v, before the object settled", waited)
	}
	for i, r := range recs {
		if r.Key != seq("k", i, 1)[0] {
			t.Fatalf("record %d: key %v, want k-%d", i, r.Key, i)
		}
	}
}
