package controller

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/fjordhq/fjord/broker/metadata"
)

// wChangeLog records OnChange calls and checks they come in order, each
// old image being the previous new one.
type wChangeLog struct {
	t    *testing.T
	mu   sync.Mutex
	last *metadata.Image
	n    int
}

func (c *wChangeLog) onChange(old, new *metadata.Image) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last != nil && old != c.last {
		c.t.Errorf("OnChange old image (offset %d) is not the last published (offset %d)", old.Offset, c.last.Offset)
	}
	if new.Offset < old.Offset {
		c.t.Errorf("OnChange went backwards: %d -> %d", old.Offset, new.Offset)
	}
	c.last = new
	c.n++
}

func wStartFollower(t *testing.T, cl *ControllerClient, cl2 *wChangeLog) *MetadataFollower {
	t.Helper()
	f := StartMetadataFollower(FollowerOptions{Client: cl, Logger: wLogger(t), OnChange: cl2.onChange, MaxWait: 200 * time.Millisecond})
	t.Cleanup(f.Close)
	return f
}

func wWaitSame(t *testing.T, f *MetadataFollower, want func() *metadata.Image) {
	t.Helper()
	wEventually(t, 10*time.Second, "follower to converge", func() bool {
		return wImageKey(t, f.Image()) == wImageKey(t, want())
	})
}

func TestFollowerConvergesAcrossFailoverAndSnapshot(t *testing.T) {
	fc, voters, stops := fakeVoters(t, 3)
	cl := wNewClient(t, voters)
	changes := &wChangeLog{t: t}
	f := wStartFollower(t, cl, changes)
	for i := range 5 {
		fc.createTopic(t, "t"+string(rune('a'+i)), 2, []int32{1, 2})
	}
	wWaitSame(t, f, fc.image)

	// WaitOffset returns at once for a reached offset and waits for a
	// later one.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.WaitOffset(ctx, fc.image().Offset); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- f.WaitOffset(ctx, fc.image().Offset+1) }()
	select {
	case err := <-done:
		t.Fatalf("WaitOffset returned early: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	fc.createTopic(t, "late", 1, []int32{1})
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	// Failover: the active controller dies, another takes over and the
	// log goes on; the follower keeps fetching from the new one.
	stops[1]()
	fc.setActive(3)
	fc.createTopic(t, "after-failover", 3, []int32{2, 3})
	wWaitSame(t, f, fc.image)

	// The log is compacted past the follower while it cannot reach any
	// controller (no one is active): it installs a snapshot afterwards.
	fc.setActive(-1)
	time.Sleep(50 * time.Millisecond)
	fc.createTopic(t, "compacted-1", 1, []int32{2})
	fc.createTopic(t, "compacted-2", 1, []int32{2})
	fc.compact()
	fc.createTopic(t, "after-compaction", 1, []int32{3})
	fc.setActive(2)
	wWaitSame(t, f, fc.image)
	if f.Image().Topic("compacted-2") == nil || f.Image().Topic("after-compaction") == nil {
		t.Fatal("snapshot or following entries missing")
	}

	// A fresh follower starting after compaction begins with a snapshot.
	changes2 := &wChangeLog{t: t}
	f2 := wStartFollower(t, wNewClient(t, voters), changes2)
	wWaitSame(t, f2, fc.image)

	changes.mu.Lock()
	defer changes.mu.Unlock()
	if changes.last != f.Image() {
		t.Fatal("last OnChange is not the current image")
	}
}

// TestFollowerApplyEntries checks the offset bookkeeping directly:
// duplicates are skipped, gaps refused, empty entries still advance.
func TestFollowerApplyEntries(t *testing.T) {
	changes := &wChangeLog{t: t}
	f := &MetadataFollower{opts: FollowerOptions{OnChange: changes.onChange}, log: wLogger(t), changed: make(chan struct{}), done: make(chan struct{})}
	f.image.Store(metadata.Empty())
	ctx := context.Background()
	tid := metadata.NewUUID()
	e1 := LogEntry{Offset: 1, Records: []metadata.Record{{Cluster: &metadata.ClusterRecord{ClusterID: "c", ControllerID: 1}}}}
	e2 := LogEntry{Offset: 2} // a raft no-op
	e3 := LogEntry{Offset: 3, Records: []metadata.Record{{Topic: &metadata.TopicRecord{Name: "x", ID: tid}}}}
	if err := f.applyEntries(ctx, f.Image(), []LogEntry{e1, e2}); err != nil {
		t.Fatal(err)
	}
	if f.Image().Offset != 2 || f.Image().ClusterID != "c" {
		t.Fatalf("after 1,2: %+v", f.Image())
	}
	// An overlapping answer: 1 and 2 again, then 3.
	if err := f.applyEntries(ctx, f.Image(), []LogEntry{e1, e2, e3}); err != nil {
		t.Fatal(err)
	}
	if f.Image().Offset != 3 || f.Image().Topic("x") == nil {
		t.Fatalf("after overlap: offset %d", f.Image().Offset)
	}
	// A gap is refused and nothing is applied.
	before := f.Image()
	if err := f.applyEntries(ctx, f.Image(), []LogEntry{{Offset: 5}}); err == nil {
		t.Fatal("gap accepted")
	}
	if f.Image() != before {
		t.Fatal("image changed on a gap")
	}
	if changes.n != 2 {
		t.Fatalf("%d publishes, want 2", changes.n)
	}
}
