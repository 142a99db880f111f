package log

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/fjordhq/fjord/broker/batch"
)

// loadParams carry what the log dir's checkpoints know about a partition.
type loadParams struct {
	// clean: the dir had a clean-shutdown marker, so no data is rescanned.
	clean bool
	// recoveryPoint: after an unclean shutdown, segments from the one
	// holding this offset on are validated (everything before it was
	// fsynced).
	recoveryPoint int64
	// logStartOffset from log-start-offset-checkpoint, if known.
	logStartOffset int64
}

// openLog loads a log as Kafka's LogLoader does:
//
//  1. delete leftovers (.deleted, .cleaned, .tmp) and finish an interrupted
//     compaction swap: a .swap segment replaces the segments it covers;
//  2. open every .log; index files load lazily, missing ones are rebuilt;
//  3. after an unclean shutdown validate segments from the recovery point,
//     truncate at the first invalid batch and drop later segments;
//     after a clean one only read the active segment's index tail;
//  4. restore the leader epoch cache and producer state (latest snapshot,
//     then batch headers after it).
func openLog(dir string, cfg Config, opts Options, p loadParams) (*Log, error) {
	opts = opts.withDefaults()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create log dir: %w", err)
	}
	tp, ok := parsePartitionDir(filepath.Base(dir))
	if !ok {
		tp = TopicPartition{Topic: filepath.Base(dir), Partition: -1}
	}
	l := &Log{dir: dir, tp: tp, opts: opts, logger: opts.Logger}
	l.cfg.Store(&cfg)
	l.hw.Store(-1)
	l.cleanedTo.Store(-1)
	l.lastFlushMs.Store(l.nowMs())
	if b, err := os.ReadFile(filepath.Join(dir, partitionMetaFile)); err == nil {
		if id, err := decodePartitionMetadata(b); err == nil {
			l.topicID.Store(&id)
		} else {
			l.logger.Warn("ignoring malformed partition.metadata", "partition", tp.String(), "err", err)
		}
	}
	if err := l.load(&cfg, p); err != nil {
		for _, s := range l.loadedSegments() {
			s.close()
		}
		return nil, fmt.Errorf("load log %s: %w", dir, err)
	}
	return l, nil
}

func (l *Log) loadedSegments() []*segment {
	if p := l.segs.Load(); p != nil {
		return *p
	}
	return nil
}

func (l *Log) load(cfg *Config, p loadParams) error {
	if err := l.completeSwaps(); err != nil {
		return err
	}
	segs, needRecover, err := l.openSegments()
	if err != nil {
		return err
	}
	epochs, err := loadEpochCache(l.dir)
	if err != nil {
		return err
	}
	l.epochs = epochs
	now := l.nowMs()
	interval := int64(cfg.IndexIntervalBytes)

	// Which segments to validate: after an unclean shutdown everything from
	// the segment holding the recovery point; always those whose index
	// files are missing.
	from := len(segs)
	if !p.clean {
		from = sort.Search(len(segs), func(i int) bool { return segs[i].base > p.recoveryPoint }) - 1
		from = max(from, 0)
	}
	epochsChanged := false
	onBatch := func(h batch.Batch) {
		if e := h.LeaderEpoch(); e >= 0 {
			if last, ok := l.epochs.latest(); !ok || e > last.epoch {
				l.epochs.mu.Lock()
				l.epochs.assignLocked(epochEntry{e, h.BaseOffset()})
				l.epochs.mu.Unlock()
				epochsChanged = true
			}
		}
	}
	recovered := map[*segment]recoverResult{}
	prev := int64(-1) // next offset after the last recovered segment
	recoverStart := time.Now()
	var scanned, scannedSegs int64
	defer func() {
		if scannedSegs > 0 {
			l.logger.Info("recovered partition", "partition", l.tp.String(), "segments", scannedSegs,
				"bytes", scanned, "took", time.Since(recoverStart).Round(time.Microsecond))
		}
	}()
	for i := 0; i < len(segs); i++ {
		s := segs[i]
		if i < from && !needRecover[s] {
			continue
		}
		if st, err := s.f.Stat(); err == nil {
			scanned += st.Size()
		}
		scannedSegs++
		res, err := s.recover(interval, max(prev, s.base), onBatch)
		if err != nil {
			return fmt.Errorf("recover segment %d: %w", s.base, err)
		}
		recovered[s] = res
		prev = res.next
		if res.truncated > 0 {
			l.logger.Warn("truncated invalid data during recovery", "partition", l.tp.String(), "segment", s.base,
				"bytes", res.truncated, "next_offset", res.next)
			// Everything after a corrupt batch is suspect: drop later segments.
			for _, later := range segs[i+1:] {
				later.close()
				if err := later.removeFiles(); err != nil {
					return err
				}
				l.logger.Warn("deleted segment after corruption", "partition", l.tp.String(), "segment", later.base)
			}
			segs = segs[:i+1]
			break
		}
	}

	lsoCheckpoint := p.logStartOffset
	if len(segs) == 0 {
		s, err := createSegment(l.dir, lsoCheckpoint, "", now)
		if err != nil {
			return err
		}
		segs = append(segs, s)
		recovered[s] = recoverResult{next: lsoCheckpoint}
	}
	l.setSegments(segs)
	active := segs[len(segs)-1]
	leo := int64(0)
	if res, ok := recovered[active]; ok {
		leo = res.next
	} else if leo, err = active.readNextOffset(); err != nil {
		// The marker said clean but the tail does not parse: validate it.
		l.logger.Warn("active segment unreadable after clean shutdown, recovering it", "partition", l.tp.String(), "err", err)
		res, rerr := active.recover(interval, active.base, onBatch)
		if rerr != nil {
			return rerr
		}
		leo = res.next
	}
	if leo < lsoCheckpoint {
		// Data vanished below the checkpointed log start (files deleted by
		// hand): start empty at the checkpoint, as Kafka does.
		l.logger.Warn("log end below checkpointed log start, deleting all segments", "partition", l.tp.String(),
			"log_end", leo, "log_start", lsoCheckpoint)
		for _, s := range segs {
			s.close()
			if err := s.removeFiles(); err != nil {
				return err
			}
		}
		s, err := createSegment(l.dir, lsoCheckpoint, "", now)
		if err != nil {
			return err
		}
		segs = []*segment{s}
		l.setSegments(segs)
		active, leo = s, lsoCheckpoint
		l.epochs.clear()
	}
	active.firstKnown = false
	l.leo.Store(leo)
	lso := max(lsoCheckpoint, segs[0].base)
	l.lso.Store(lso)
	if p.clean {
		l.recoveryPoint.Store(leo)
	} else {
		l.recoveryPoint.Store(min(p.recoveryPoint, leo))
	}

	if epochsChanged {
		l.epochs.mu.Lock()
		l.epochs.dirty = true
		l.epochs.mu.Unlock()
	}
	l.epochs.truncateFromEnd(leo)
	l.epochs.truncateFromStart(lso)
	if err := l.epochs.persistIfDirty(); err != nil {
		return err
	}

	pm, err := newProducerStateManager(l.dir, l.opts.ProducerIDExpirationMs)
	if err != nil {
		return err
	}
	l.producers = pm
	bases := make([]int64, len(segs))
	for i, s := range segs {
		bases[i] = s.base
	}
	pm.removeStraySnapshots(bases)
	return l.rebuildProducerStateLocked(lso, leo, p.clean, true)
}

// rebuildProducerStateLocked is Kafka's rebuildProducerState: load the
// newest snapshot at or below end and replay the batch headers between it
// and end. sync fsyncs the snapshot written at end (at load; a truncation
// holding Log.mu skips it: a torn snapshot fails its CRC and is rebuilt).
func (l *Log) rebuildProducerStateLocked(lso, end int64, clean, sync bool) error {
	pm := l.producers
	segs := l.segments()
	var toSnapshot []int64
	if len(segs) > 1 {
		toSnapshot = append(toSnapshot, segs[len(segs)-2].base)
	}
	toSnapshot = append(toSnapshot, segs[len(segs)-1].base)
	if len(pm.snapshots) == 0 && clean {
		// No snapshot after a clean shutdown: nothing ever wrote producer
		// state here (Kafka's upgrade path). Write empty snapshots instead
		// of scanning the whole log.
		for _, o := range append(toSnapshot, end) {
			pm.mapEnd = o
			if _, err := pm.takeSnapshot(); err != nil {
				return err
			}
		}
		pm.mapEnd = end
		return nil
	}
	pm.truncateAndReload(lso, end, l.nowMs())
	if pm.mapEnd < end {
		start := max(pm.mapEnd, lso)
		r := newHeaderReader(nil)
		defer r.release()
		for i, s := range segs {
			segEnd := end
			if i+1 < len(segs) {
				segEnd = segs[i+1].base
			}
			if segEnd <= start || s.base >= end {
				continue
			}
			for _, o := range toSnapshot {
				if o == s.base && s.base >= pm.mapEnd {
					pm.mapEnd = s.base
					if _, err := pm.takeSnapshot(); err != nil {
						return err
					}
				}
			}
			if err := s.scanHeaders(r, max(start, s.base), end, pm.replay); err != nil {
				return fmt.Errorf("rebuild producer state: %w", err)
			}
		}
	}
	pm.mapEnd = end
	snap, err := pm.takeSnapshot()
	if err != nil {
		return err
	}
	if snap != "" && sync {
		if f, err := os.Open(snap); err == nil {
			_ = f.Sync()
			f.Close()
		}
	}
	return nil
}

// scanHeaders calls fn for each batch header of s, from the batch holding
// offset `from` up to (excluding) batches at or after end.
func (s *segment) scanHeaders(r *headerReader, from, end int64, fn func(h batch.Batch)) error {
	if err := s.ensureLoaded(); err != nil {
		return err
	}
	limit := s.size.Load()
	r.f, r.start = s.f, -1
	s.mu.RLock()
	pos := s.idx.lookup(from)
	s.mu.RUnlock()
	for pos < limit {
		h, err := r.at(pos, limit)
		if err != nil {
			return err
		}
		if h.BaseOffset() >= end {
			return nil
		}
		if h.LastOffset() >= from {
			fn(h)
		}
		pos += int64(batch.Size(h))
	}
	return nil
}

// completeSwaps deletes leftovers and finishes a compaction swap that a
// crash interrupted (Kafka's removeTempFilesAndCollectSwapFiles and the
// swap passes of LogLoader.load). A .swap segment is complete — it was
// fsynced before being renamed to .swap — so it replaces every segment
// in its offset range.
func (l *Log) completeSwaps() error {
	ents, err := os.ReadDir(l.dir)
	if err != nil {
		return fmt.Errorf("list %s: %w", l.dir, err)
	}
	var swaps []string
	minCleaned := int64(-1)
	for _, e := range ents {
		name := e.Name()
		if !e.Type().IsRegular() {
			continue
		}
		path := filepath.Join(l.dir, name)
		switch {
		case strings.HasSuffix(name, deletedSuffix), strings.HasSuffix(name, ".tmp"):
			if err := os.Remove(path); err != nil {
				return fmt.Errorf("remove leftover %s: %w", path, err)
			}
		case strings.HasSuffix(name, cleanedSuffix):
			if o, ok := offsetFromFileName(name); ok && (minCleaned < 0 || o < minCleaned) {
				minCleaned = o
			}
			if err := os.Remove(path); err != nil {
				return fmt.Errorf("remove leftover %s: %w", path, err)
			}
		case strings.HasSuffix(name, swapSuffix):
			swaps = append(swaps, name)
		}
	}
	type span struct{ from, to int64 }
	var spans []span
	var valid []string
	for _, name := range swaps {
		o, ok := offsetFromFileName(name)
		if !ok || (minCleaned >= 0 && o >= minCleaned) {
			if err := os.Remove(filepath.Join(l.dir, name)); err != nil {
				return err
			}
			continue
		}
		valid = append(valid, name)
		if strings.TrimSuffix(name, swapSuffix) != segmentName(o)+logSuffix {
			continue
		}
		next, err := swapNextOffset(filepath.Join(l.dir, name), o)
		if err != nil {
			return err
		}
		spans = append(spans, span{o, next})
	}
	if len(spans) > 0 {
		lo, hi := spans[0].from, spans[0].to
		for _, s := range spans[1:] {
			lo, hi = min(lo, s.from), max(hi, s.to)
		}
		ents, err := os.ReadDir(l.dir)
		if err != nil {
			return err
		}
		for _, e := range ents {
			name := e.Name()
			if !e.Type().IsRegular() || strings.HasSuffix(name, swapSuffix) || strings.HasSuffix(name, snapshotSuffix) {
				continue
			}
			if o, ok := offsetFromFileName(name); ok && o >= lo && o < hi {
				l.logger.Info("deleting segment replaced by an interrupted compaction swap", "partition", l.tp.String(), "file", name)
				if err := os.Remove(filepath.Join(l.dir, name)); err != nil {
					return err
				}
			}
		}
	}
	for _, name := range valid {
		from := filepath.Join(l.dir, name)
		if err := os.Rename(from, strings.TrimSuffix(from, swapSuffix)); err != nil {
			return fmt.Errorf("finish swap of %s: %w", from, err)
		}
	}
	if len(valid) > 0 {
		return syncDir(l.dir)
	}
	return nil
}

// swapNextOffset returns the offset after the last batch of a .swap log.
func swapNextOffset(path string, base int64) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	r := newHeaderReader(f)
	defer r.release()
	next := base
	for pos := int64(0); pos < st.Size(); {
		h, err := r.at(pos, st.Size())
		if err != nil {
			break
		}
		n := int64(batch.Size(h))
		if n < batch.HeaderSize {
			break
		}
		next = h.NextOffset()
		pos += n
	}
	return next, nil
}

// openSegments opens every segment, deleting index files without a log.
// It reports the segments whose index files are missing (to be rebuilt).
func (l *Log) openSegments() ([]*segment, map[*segment]bool, error) {
	ents, err := os.ReadDir(l.dir)
	if err != nil {
		return nil, nil, fmt.Errorf("list %s: %w", l.dir, err)
	}
	now := l.nowMs()
	var segs []*segment
	need := map[*segment]bool{}
	for _, e := range ents {
		name := e.Name()
		if !e.Type().IsRegular() {
			continue
		}
		o, ok := offsetFromFileName(name)
		if !ok {
			continue
		}
		switch name[20:] {
		case indexSuffix, timeIndexSuffix:
			if _, err := os.Stat(filepath.Join(l.dir, segmentName(o)+logSuffix)); errors.Is(err, os.ErrNotExist) {
				l.logger.Warn("deleting orphaned index file", "partition", l.tp.String(), "file", name)
				if err := os.Remove(filepath.Join(l.dir, name)); err != nil {
					return nil, nil, err
				}
			}
		case logSuffix:
			s, err := openSegment(l.dir, o, now)
			if err != nil {
				for _, s := range segs {
					s.close()
				}
				return nil, nil, err
			}
			if !s.indexFilesExist() {
				need[s] = true
			}
			segs = append(segs, s)
		}
	}
	sort.Slice(segs, func(i, j int) bool { return segs[i].base < segs[j].base })
	return segs, need, nil
}
