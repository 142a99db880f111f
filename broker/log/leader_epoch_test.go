package log

import (
	"errors"
	"path/filepath"
	"testing"
)

// TestAssignEpochStartOffset: a new leader records its epoch at its log
// end offset before any append; OffsetForLeaderEpoch then answers a
// follower's later, unknown epoch with the new leader's start offset, the
// entry survives a reopen, and the first append in that epoch adds none.
func TestAssignEpochStartOffset(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a-0")
	l := mustOpen(t, dir, testConfig(), testOpts(nil), false)
	for i := range 3 {
		if _, err := l.Append(tsBatch(int64(i), 5), AppendOptions{LeaderEpoch: 1, AssignOffsets: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.AssignEpochStartOffset(4, 3); err != nil {
		t.Fatal(err)
	}
	// A follower holding epoch 2 (never seen here) must truncate to 3.
	if e, o := l.EndOffsetForEpoch(2); e != 1 || o != 3 {
		t.Fatalf("EndOffsetForEpoch(2) = %d, %d; want 1, 3", e, o)
	}
	if e, o := l.EndOffsetForEpoch(4); e != 4 || o != 3 {
		t.Fatalf("EndOffsetForEpoch(4) = %d, %d; want 4, 3", e, o)
	}
	if err := l.AssignEpochStartOffset(5, 4); !errors.Is(err, ErrInvalidOffsets) {
		t.Fatalf("assign past the end: %v", err)
	}
	if _, err := l.Append(tsBatch(3, 5), AppendOptions{LeaderEpoch: 4, AssignOffsets: true}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if got := string(mustRead(t, filepath.Join(dir, leaderEpochFile))); got != "0\n2\n1 0\n4 3\n" {
		t.Fatalf("leader-epoch-checkpoint %q", got)
	}
	l = mustOpen(t, dir, testConfig(), testOpts(nil), false)
	defer l.Close()
	if l.LatestEpoch() != 4 {
		t.Fatalf("latest epoch after reopen %d", l.LatestEpoch())
	}
}
