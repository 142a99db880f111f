package log

import (
	"fmt"

	"github.com/fjordhq/fjord/broker/batch"
)

// Retention follows UnifiedLog.deleteOldSegments: walking from the oldest
// segment, delete while a predicate holds, and never past the high
// watermark. With cleanup.policy=delete the predicates are retention.ms
// (by the segment's largest timestamp) and retention.bytes (whole segments
// while the log stays at or above the limit); for every policy, segments
// entirely below the log start offset. The active segment is not special:
// when it qualifies too, Kafka rolls first (so an empty active segment
// remains) and deletes the old one, and so do we.

// DeleteRecordsBefore moves the log start offset to offset (DeleteRecords)
// and drops the segments wholly below it. The offset may not pass the high
// watermark. The new start offset is persisted (log-start-offset-checkpoint)
// before this returns when the log belongs to a Manager.
func (l *Log) DeleteRecordsBefore(offset int64) error {
	l.mu.Lock()
	if err := l.usable(); err != nil {
		l.mu.Unlock()
		return err
	}
	if hw := l.highWatermark(); offset > hw || offset < 0 {
		l.mu.Unlock()
		return fmt.Errorf("%s: delete records before %d: high watermark is %d: %w", l.tp, offset, hw, ErrOffsetOutOfRange)
	}
	changed, err := l.advanceLogStartLocked(offset)
	if err == nil && changed {
		_, err = l.deleteOldSegmentsLocked(func(s, next *segment) bool { return next != nil && next.base <= l.lso.Load() }, "log start offset")
	}
	l.mu.Unlock()
	if changed {
		l.notifyChange()
	}
	return err
}

// advanceLogStartLocked moves the log start offset forward.
func (l *Log) advanceLogStartLocked(offset int64) (bool, error) {
	if offset <= l.lso.Load() {
		return false, nil
	}
	l.lso.Store(offset)
	l.epochs.truncateFromStart(offset)
	return true, nil
}

// notifyChange persists what moving the log start changed, outside
// Log.mu: the leader epoch file and (through the Manager) the
// log-start-offset checkpoint.
func (l *Log) notifyChange() {
	if err := l.epochs.persistIfDirty(); err != nil {
		l.logger.Warn("write leader epoch checkpoint", "partition", l.tp.String(), "err", err)
	}
	if l.onChange != nil {
		l.onChange(l)
	}
}

// DeleteOldSegments applies retention now and returns how many segments
// it deleted. The Manager calls it every retention check interval.
func (l *Log) DeleteOldSegments() (int, error) {
	now := l.nowMs()
	cfg := l.config()
	l.mu.Lock()
	if err := l.usable(); err != nil {
		l.mu.Unlock()
		return 0, err
	}
	lsoBefore := l.lso.Load()
	total := 0
	var err error
	step := func(n int, e error) {
		total += n
		if err == nil {
			err = e
		}
	}
	if cfg.Delete {
		if cfg.RetentionMs >= 0 {
			step(l.deleteOldSegmentsLocked(func(s, _ *segment) bool {
				return now-s.largestTimestamp() > cfg.RetentionMs
			}, "retention.ms"))
		}
		if cfg.RetentionBytes >= 0 {
			if size := l.Size(); size >= cfg.RetentionBytes {
				diff := size - cfg.RetentionBytes
				step(l.deleteOldSegmentsLocked(func(s, _ *segment) bool {
					if n := s.size.Load(); diff-n >= 0 {
						diff -= n
						return true
					}
					return false
				}, "retention.bytes"))
			}
		}
	}
	step(l.deleteOldSegmentsLocked(func(s, next *segment) bool { return next != nil && next.base <= l.lso.Load() }, "log start offset"))
	if l.producers != nil {
		l.producers.removeExpired(now)
	}
	changed := l.lso.Load() != lsoBefore
	l.mu.Unlock()
	if changed {
		l.notifyChange()
	}
	return total, err
}

// deleteOldSegmentsLocked deletes the oldest segments while pred holds for
// them (Kafka's deletableSegments), never one holding offsets at or above
// the high watermark, nor an empty active segment.
func (l *Log) deleteOldSegmentsLocked(pred func(s, next *segment) bool, reason string) (int, error) {
	segs := l.segments()
	hw := l.highWatermark()
	leo := l.leo.Load()
	var del []*segment
	for i, s := range segs {
		var next *segment
		upper := leo
		if i+1 < len(segs) {
			next, upper = segs[i+1], segs[i+1].base
		}
		if next == nil && s.size.Load() == 0 {
			break
		}
		if hw < upper || !pred(s, next) {
			break
		}
		del = append(del, s)
	}
	if len(del) == 0 {
		return 0, nil
	}
	if len(del) == len(segs) {
		// Everything goes, the active segment too: roll so a (new, empty)
		// active segment remains.
		if err := l.rollLocked(leo); err != nil {
			return 0, err
		}
		if l.active() == del[len(del)-1] {
			del = del[:len(del)-1]
		}
	}
	segs = l.segments()
	rest := append([]*segment(nil), segs[len(del):]...)
	// The start offset moves before the segments go (see Read).
	_, err := l.advanceLogStartLocked(rest[0].base)
	l.setSegments(rest)
	l.deleteSegmentsLocked(del)
	for _, s := range del {
		l.logger.Info("deleted segment", "partition", l.tp.String(), "reason", reason, "base", s.base, "size", s.size.Load())
	}
	return len(del), err
}

// TruncateTo removes everything at or after offset (a follower diverged
// from its leader). The segment holding offset keeps the batches before
// the one containing it; later segments are deleted.
func (l *Log) TruncateTo(offset int64) error {
	if offset < 0 {
		return fmt.Errorf("%s: truncate to negative offset %d", l.tp, offset)
	}
	l.mu.Lock()
	err := l.truncateToLocked(offset)
	l.mu.Unlock()
	if perr := l.epochs.persistIfDirty(); err == nil {
		err = perr
	}
	return err
}

func (l *Log) truncateToLocked(offset int64) error {
	if err := l.usable(); err != nil {
		return err
	}
	if offset >= l.leo.Load() {
		return nil
	}
	segs := l.segments()
	if offset <= segs[0].base {
		return l.truncateFullyLocked(offset)
	}
	keep := len(segs)
	for keep > 0 && segs[keep-1].base > offset {
		keep--
	}
	del := append([]*segment(nil), segs[keep:]...)
	rest := append([]*segment(nil), segs[:keep]...)
	if err := rest[len(rest)-1].truncateTo(offset, l.nowMs()); err != nil {
		l.failed = err
		return err
	}
	l.setSegments(rest)
	l.deleteSegmentsLocked(del)
	l.leo.Store(offset)
	for {
		rp := l.recoveryPoint.Load()
		if rp <= offset || l.recoveryPoint.CompareAndSwap(rp, offset) {
			break
		}
	}
	l.epochs.truncateFromEnd(offset)
	return l.rebuildProducerStateLocked(l.lso.Load(), offset, false, false)
}

// TruncateFullyAndStartAt deletes every segment and restarts the log empty
// at offset (a follower far behind a leader whose log starts later).
func (l *Log) TruncateFullyAndStartAt(offset int64) error {
	if offset < 0 {
		return fmt.Errorf("%s: start at negative offset %d", l.tp, offset)
	}
	l.mu.Lock()
	err := l.usable()
	if err == nil {
		err = l.truncateFullyLocked(offset)
	}
	l.mu.Unlock()
	if err == nil {
		l.notifyChange()
	}
	return err
}

func (l *Log) truncateFullyLocked(offset int64) error {
	old := l.segments()
	// Rename the old files first: the new segment may take a name one of
	// them has.
	l.deleteSegmentsLocked(old)
	s, err := createSegment(l.dir, offset, "", l.nowMs())
	if err != nil {
		l.failed = err
		return fmt.Errorf("%s: %w", l.tp, err)
	}
	l.lso.Store(offset)
	l.leo.Store(offset)
	l.setSegments([]*segment{s})
	l.recoveryPoint.Store(offset)
	if hw := l.hw.Load(); hw >= 0 {
		l.hw.Store(offset)
	}
	l.producers.truncateFully(offset)
	l.epochs.clear()
	return nil
}

// truncateTo cuts the segment before the batch holding offset (Kafka's
// LogSegment.truncateTo) and trims its indexes.
func (s *segment) truncateTo(offset, nowMs int64) error {
	if err := s.ensureLoaded(); err != nil {
		return err
	}
	limit := s.size.Load()
	r := newHeaderReader(s.f)
	defer r.release()
	s.mu.RLock()
	pos := s.idx.lookup(offset)
	s.mu.RUnlock()
	for pos < limit {
		h, err := r.at(pos, limit)
		if err != nil {
			return fmt.Errorf("truncate %s: %w", s.f.Name(), err)
		}
		if h.LastOffset() >= offset {
			break
		}
		pos += int64(batch.Size(h))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.idx.truncateTo(offset); err != nil {
		return err
	}
	if err := s.tidx.truncateTo(offset); err != nil {
		return err
	}
	if pos < limit {
		if err := s.f.Truncate(pos); err != nil {
			return fmt.Errorf("truncate %s to %d: %w", s.f.Name(), pos, err)
		}
		s.size.Store(pos)
	}
	// Recompute the max timestamp: the last time index entry, then any
	// larger batch timestamp after it (Kafka's readLargestTimestamp).
	s.maxTs, s.maxTsOff = s.tidx.last()
	from := s.idx.lookup(s.maxTsOff)
	for p := from; p < pos; {
		h, err := r.at(p, pos)
		if err != nil {
			break
		}
		if h.MaxTimestamp() > s.maxTs {
			s.maxTs, s.maxTsOff = h.MaxTimestamp(), h.LastOffset()
		}
		p += int64(batch.Size(h))
	}
	s.sinceIndex = 0
	if pos == 0 {
		s.created, s.firstKnown = nowMs, false
	}
	return nil
}
