package source

import "time"

// settle holds back objects written too recently. A sink uploads an
// object and its .keys and .headers side files one after the other (and
// Fjord's sink a commit's objects side by side), so a task following a
// running sink could list an object before the rest of its commit: read
// then, it would be restored without its keys, or a later object would
// pass an earlier one still uploading, which the cursor would then skip.
// An object is read once it is object.min.age.ms old: by the store's
// clock (its last-modified time), or, when that clock runs ahead of
// ours, by ours (since a listing first saw it).
type settle struct {
	minAge time.Duration
	seen   map[string]time.Time // young objects: when a listing first saw them
}

// ready returns the longest prefix of q (in read order) that is old
// enough — an object after a young one waits for it — and when the first
// held-back object will be (zero when none is held back).
func (s *settle) ready(q []objectRef, now time.Time) ([]objectRef, time.Time) {
	if s.minAge <= 0 {
		return q, time.Time{}
	}
	if s.seen == nil {
		s.seen = map[string]time.Time{}
	}
	for i, o := range q {
		if now.Sub(o.Modified) >= s.minAge {
			delete(s.seen, o.Key)
			continue
		}
		first, ok := s.seen[o.Key]
		if !ok {
			first = now
			s.seen[o.Key] = now
		}
		if now.Sub(first) >= s.minAge {
			delete(s.seen, o.Key)
			continue
		}
		at := first.Add(s.minAge)
		if byStore := o.Modified.Add(s.minAge); byStore.After(now) && byStore.Before(at) {
			at = byStore
		}
		return q[:i], at
	}
	return q, time.Time{}
}
