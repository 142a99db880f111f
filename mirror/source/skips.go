package source

import (
	"sync"
	"sync/atomic"
)

// skipRuns remembers, for one partition, which replicated records come
// right after records held back by their provenance (identity naming,
// active-active). MM2's offset-sync rules take any hole in the upstream
// offsets for skipped or compacted records and sync at once; in an
// active-active topic every record mirrored in from the other side is
// such a hole, which would cost an offset sync per replicated record.
// Translation through the syncs never skips records whatever the holes
// (it rounds up to just after the last sync), and offset.lag.max still
// bounds how far behind it can be in downstream records, so those holes
// need no sync of their own.
//
// The poll side (skipped, kept) runs on the task's loop; follows runs on
// the producer's acknowledgements, in offset order.
type skipRuns struct {
	skipping bool // poll side only

	pending atomic.Int32 // len(after), read without the lock
	mu      sync.Mutex
	after   []int64 // upstream offsets of records that follow a run of held back ones, ascending
}

// skipped notes a record held back.
func (s *skipRuns) skipped() { s.skipping = true }

// kept notes a record replicated at upstream offset.
func (s *skipRuns) kept(offset int64) {
	if !s.skipping {
		return
	}
	s.skipping = false
	s.mu.Lock()
	s.after = append(s.after, offset)
	s.mu.Unlock()
	s.pending.Add(1)
}

// follows reports whether the record at offset came right after held
// back records; records acknowledged out of the list (dropped by a
// transformation) are passed over.
func (s *skipRuns) follows(offset int64) bool {
	if s.pending.Load() == 0 {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.after) > 0 && s.after[0] < offset {
		s.after = s.after[1:]
		s.pending.Add(-1)
	}
	if len(s.after) > 0 && s.after[0] == offset {
		s.after = s.after[1:]
		s.pending.Add(-1)
		return true
	}
	return false
}
