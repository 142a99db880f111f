package log

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fjordhq/fjord/broker/batch"
)

// Log is one partition's log: a directory of segments.
//
// Concurrency. Appends, rolls, truncation, retention and every change to
// the segment list are serialised by Log.mu. Readers (Read, offsets,
// OffsetForTimestamp) take no Log lock: they load the immutable segment
// list and the published end offset atomically, and each segment's
// published size only ever covers whole batches. A segment removed by
// retention or compaction is closed and unlinked only after
// file.delete.delay.ms, so a reader still holding its *os.File keeps
// working.
//
// Lock order: Log.mu → segment.mu → epochCache.mu. logDir.mu (dir-level
// checkpoints) is never held while taking Log.mu. fsync runs without Log.mu
// (flushes snapshot the segment list, then sync).
type Log struct {
	dir    string
	tp     TopicPartition
	opts   Options
	logger *slog.Logger
	cfg    atomic.Pointer[Config]

	mu        sync.Mutex
	closed    bool
	failed    error
	producers *producerStateManager
	unflushed int64                    // messages appended since the last flush
	pending   map[*segment]*time.Timer // segments waiting for file.delete.delay.ms

	segs          atomic.Pointer[[]*segment] // immutable; replaced on change
	leo           atomic.Int64
	lso           atomic.Int64
	hw            atomic.Int64 // -1: not set, the high watermark follows leo
	recoveryPoint atomic.Int64
	lastFlushMs   atomic.Int64
	epochs        *epochCache

	flushMu  sync.Mutex               // one flush at a time; never held with mu
	bg       sync.WaitGroup           // background flushes started by rolls
	deleting sync.WaitGroup           // segment deletions scheduled, not yet done
	topicID  atomic.Pointer[[16]byte] // nil: no partition.metadata
	// cleanedTo is the cleaner's first dirty offset (-1: not cleaned yet),
	// persisted by the Manager in cleaner-offset-checkpoint.
	cleanedTo atomic.Int64
	onChange  func(l *Log) // the log start offset moved: persist checkpoints
}

// Open opens (or creates) the log in dir, a directory named
// <topic>-<partition>. recover must be true after an unclean shutdown: every
// segment is then validated, since Open alone knows no recovery point (the
// Manager passes the dir's recovery-point checkpoint and validates only
// the unflushed tail).
func Open(dir string, cfg Config, opts Options, recover bool) (*Log, error) {
	return openLog(dir, cfg, opts, loadParams{clean: !recover})
}

func (l *Log) config() *Config { return l.cfg.Load() }

// SetConfig replaces the log's settings; the next append, roll and
// retention check use them.
func (l *Log) SetConfig(cfg Config) { l.cfg.Store(&cfg) }

// Config returns the log's current settings.
func (l *Log) Config() Config { return *l.cfg.Load() }

func (l *Log) Dir() string                    { return l.dir }
func (l *Log) LogStartOffset() int64          { return l.lso.Load() }
func (l *Log) LogEndOffset() int64            { return l.leo.Load() }
func (l *Log) RecoveryPoint() int64           { return l.recoveryPoint.Load() }
func (l *Log) TopicPartition() TopicPartition { return l.tp }

// TopicID returns the id in partition.metadata (ok false if none).
func (l *Log) TopicID() (id [16]byte, ok bool) {
	if p := l.topicID.Load(); p != nil {
		return *p, true
	}
	return id, false
}

// SetTopicID writes partition.metadata.
func (l *Log) SetTopicID(id [16]byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if cur, ok := l.TopicID(); ok && cur == id {
		return nil
	}
	if err := writeFileAtomic(filepath.Join(l.dir, partitionMetaFile), encodePartitionMetadata(id)); err != nil {
		return err
	}
	l.topicID.Store(&id)
	return nil
}

// SetHighWatermark tells the log the partition's high watermark, which
// bounds retention and DeleteRecords. Until it is set the log treats its
// end offset as the high watermark (a single replica).
func (l *Log) SetHighWatermark(hw int64) { l.hw.Store(hw) }

// HighWatermark returns the high watermark last set (or restored from
// replication-offset-checkpoint), capped at the log end offset; ok is
// false when none was ever set (a single replica).
func (l *Log) HighWatermark() (hw int64, ok bool) {
	if hw := l.hw.Load(); hw >= 0 {
		return min(hw, l.leo.Load()), true
	}
	return 0, false
}

func (l *Log) highWatermark() int64 {
	if hw := l.hw.Load(); hw >= 0 {
		return min(hw, l.leo.Load())
	}
	return l.leo.Load()
}

func (l *Log) segments() []*segment { return *l.segs.Load() }

func (l *Log) active() *segment {
	s := l.segments()
	return s[len(s)-1]
}

func (l *Log) setSegments(s []*segment) { l.segs.Store(&s) }

// NumSegments returns the number of segments.
func (l *Log) NumSegments() int { return len(l.segments()) }

// Size returns the bytes in all segments.
func (l *Log) Size() int64 {
	var n int64
	for _, s := range l.segments() {
		n += s.size.Load()
	}
	return n
}

// LatestEpoch returns the latest leader epoch in the log, or -1.
func (l *Log) LatestEpoch() int32 {
	if e, ok := l.epochs.latest(); ok {
		return e.epoch
	}
	return -1
}

// EndOffsetForEpoch answers OffsetForLeaderEpoch: the largest epoch <=
// epoch the log has and the offset where it ends (the next epoch's start,
// or the log end offset for the latest). (-1, -1) if unknown.
func (l *Log) EndOffsetForEpoch(epoch int32) (leaderEpoch int32, endOffset int64) {
	return l.epochs.endOffsetFor(epoch, l.leo.Load())
}

// EpochForOffset returns the leader epoch of the batch holding offset, or
// -1 (ListOffsets reports it with the offset).
func (l *Log) EpochForOffset(offset int64) int32 { return l.epochs.epochForOffset(offset) }

// Producers lists idempotent producers' state (DescribeProducers).
func (l *Log) Producers() []ProducerState {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.producers == nil {
		return nil
	}
	return l.producers.list()
}

func (l *Log) nowMs() int64 { return l.opts.Now().UnixMilli() }

// usable returns an error if the log cannot take writes. Holding mu.
func (l *Log) usable() error {
	if l.closed {
		return fmt.Errorf("%s: %w", l.tp, ErrClosed)
	}
	if l.failed != nil {
		return fmt.Errorf("%s: %w: %v", l.tp, ErrLogFailed, l.failed)
	}
	return nil
}

// Append writes batches (one or more v2 record batches, already validated
// by the caller: length, magic, CRC) with a single write. With
// AssignOffsets it sets each batch's base offset and partition leader
// epoch in place — both outside the CRC — and checks idempotent producers'
// sequences; a duplicate of one of a producer's last five batches writes
// nothing and returns the original offsets with Duplicate set.
func (l *Log) Append(data []byte, o AppendOptions) (AppendResult, error) {
	cfg := l.config()
	l.mu.Lock()
	res, err := l.appendLocked(data, o, cfg)
	flush := err == nil && !res.Duplicate && l.unflushed >= cfg.FlushMessages
	l.mu.Unlock()
	if flush {
		if err := l.Flush(); err != nil {
			return res, err
		}
	}
	return res, err
}

func (l *Log) appendLocked(data []byte, o AppendOptions, cfg *Config) (AppendResult, error) {
	if err := l.usable(); err != nil {
		return AppendResult{}, err
	}
	if len(data) == 0 {
		return AppendResult{}, fmt.Errorf("%s: append of no batches: %w", l.tp, batch.ErrTruncated)
	}
	if int64(len(data)) > cfg.SegmentBytes {
		return AppendResult{}, fmt.Errorf("%s: %d bytes in one append: %w (%d)", l.tp, len(data), ErrRecordBatchTooLarge, cfg.SegmentBytes)
	}
	leo := l.leo.Load()
	res := AppendResult{FirstOffset: -1, MaxTimestamp: -1, OffsetOfMaxTimestamp: -1}
	next := leo
	idempotent := false
	for rest := data; len(rest) > 0; {
		b, r, err := batch.Next(rest)
		if err != nil {
			return AppendResult{}, fmt.Errorf("%s: append: %w", l.tp, err)
		}
		if b.Magic() != 2 {
			return AppendResult{}, fmt.Errorf("%s: append: %w %d", l.tp, batch.ErrMagic, b.Magic())
		}
		if b.LastOffsetDelta() < 0 {
			return AppendResult{}, fmt.Errorf("%s: append: %w: negative lastOffsetDelta", l.tp, batch.ErrCorrupt)
		}
		if o.AssignOffsets {
			b.SetBaseOffset(next)
			b.SetLeaderEpoch(o.LeaderEpoch)
		} else if b.BaseOffset() < next {
			return AppendResult{}, fmt.Errorf("%s: batch at offset %d below %d: %w", l.tp, b.BaseOffset(), next, ErrInvalidOffsets)
		}
		if res.FirstOffset < 0 {
			res.FirstOffset = b.BaseOffset()
		}
		next = b.NextOffset()
		if ts := b.MaxTimestamp(); ts > res.MaxTimestamp {
			res.MaxTimestamp, res.OffsetOfMaxTimestamp = ts, b.LastOffset()
		}
		idempotent = idempotent || b.ProducerID() >= 0
		rest = r
	}
	res.LastOffset = next - 1
	if res.LastOffset-res.FirstOffset > math.MaxInt32 {
		return AppendResult{}, fmt.Errorf("%s: append spans offsets %d..%d, more than a segment can index: %w", l.tp, res.FirstOffset, res.LastOffset, ErrInvalidOffsets)
	}

	if idempotent {
		client := o.AssignOffsets
		for rest := data; len(rest) > 0; {
			b, r, _ := batch.Next(rest)
			rest = r
			if b.ProducerID() < 0 {
				continue
			}
			if client {
				if dup, ok := l.producers.checkDuplicate(b); ok {
					l.producers.abort()
					return AppendResult{
						FirstOffset: dup.firstOffset(), LastOffset: dup.lastOffset,
						LogStartOffset: l.lso.Load(), LogEndOffset: leo,
						MaxTimestamp: dup.timestamp, OffsetOfMaxTimestamp: dup.lastOffset,
						Duplicate: true,
					}, nil
				}
			}
			if err := l.producers.prepare(b, client); err != nil {
				l.producers.abort()
				return AppendResult{}, fmt.Errorf("%s: %w", l.tp, err)
			}
		}
	}

	now := l.nowMs()
	if err := l.maybeRollLocked(cfg, int64(len(data)), res.MaxTimestamp, res.FirstOffset, res.LastOffset, now); err != nil {
		l.producers.abort()
		return AppendResult{}, err
	}
	seg := l.active()
	pos := seg.size.Load()
	if _, err := seg.f.WriteAt(data, pos); err != nil {
		l.producers.abort()
		// Cut off whatever part was written so the next append does not
		// leave garbage between batches; if even that fails, stop writing.
		if terr := seg.f.Truncate(pos); terr != nil {
			l.failed = errors.Join(err, terr)
		}
		return AppendResult{}, fmt.Errorf("%s: write %s: %w", l.tp, seg.f.Name(), err)
	}
	if pos == 0 {
		seg.firstTs, seg.firstKnown = res.MaxTimestamp, true
	}
	if err := l.indexAppendLocked(seg, data, pos, cfg); err != nil {
		l.failed = err
		l.producers.abort()
		return AppendResult{}, err
	}
	if err := l.assignEpochsLocked(data, o); err != nil {
		l.failed = err
		l.producers.abort()
		return AppendResult{}, err
	}
	l.producers.commit(next)
	l.unflushed += next - res.FirstOffset
	// Publish: the size first, then the end offset, so a reader that sees
	// the new end offset also sees the bytes.
	seg.size.Store(pos + int64(len(data)))
	l.leo.Store(next)
	res.LogStartOffset, res.LogEndOffset, res.Bytes = l.lso.Load(), next, len(data)
	return res, nil
}

// indexAppendLocked adds sparse index entries for the batches just
// written at pos. The index files are written first and the new entries
// published under the segment lock afterwards, so readers never wait on
// I/O. Only the appender (holding Log.mu) changes a loaded segment's
// indexes, so it may read them without the segment lock.
func (l *Log) indexAppendLocked(seg *segment, data []byte, pos int64, cfg *Config) error {
	interval := int64(cfg.IndexIntervalBytes)
	maxEntries, maxTimeEntries := cfg.maxOffsetEntries(), cfg.maxTimeEntries()
	maxTs, maxOff := seg.maxTs, seg.maxTsOff
	lastTs, _ := seg.tidx.last()
	var obuf [4]offsetEntry
	var tbuf [4]timeEntry
	oents, tents := obuf[:0], tbuf[:0]
	for rest := data; len(rest) > 0; {
		b, r, _ := batch.Next(rest)
		n := int64(len(b))
		if ts := b.MaxTimestamp(); ts > maxTs {
			maxTs, maxOff = ts, b.LastOffset()
		}
		if seg.sinceIndex > interval && len(seg.idx.entries)+len(oents) < maxEntries {
			e := offsetEntry{rel: uint32(b.LastOffset() - seg.base), pos: uint32(pos)}
			if err := seg.idx.writeSlot(len(seg.idx.entries)+len(oents), e); err != nil {
				return err
			}
			oents = append(oents, e)
			if maxTs > lastTs && len(seg.tidx.entries)+len(tents) < maxTimeEntries {
				te := timeEntry{ts: maxTs, rel: uint32(maxOff - seg.base)}
				if err := seg.tidx.writeSlot(len(seg.tidx.entries)+len(tents), te); err != nil {
					return err
				}
				tents = append(tents, te)
				lastTs = maxTs
			}
			seg.sinceIndex = 0
		}
		seg.sinceIndex += n
		pos += n
		rest = r
	}
	seg.mu.Lock()
	seg.maxTs, seg.maxTsOff = maxTs, maxOff
	seg.idx.entries = append(seg.idx.entries, oents...)
	seg.tidx.entries = append(seg.tidx.entries, tents...)
	seg.mu.Unlock()
	return nil
}

// assignEpochsLocked records new leader epochs. Leader appends carry one
// epoch; replica appends may carry several.
func (l *Log) assignEpochsLocked(data []byte, o AppendOptions) error {
	if o.AssignOffsets {
		b := batch.Batch(data)
		if l.epochs.needsAssign(o.LeaderEpoch, b.BaseOffset()) {
			return l.epochs.assign(o.LeaderEpoch, b.BaseOffset())
		}
		return nil
	}
	for rest := data; len(rest) > 0; {
		b, r, _ := batch.Next(rest)
		if l.epochs.needsAssign(b.LeaderEpoch(), b.BaseOffset()) {
			if last, ok := l.epochs.latest(); !ok || b.LeaderEpoch() > last.epoch {
				if err := l.epochs.assign(b.LeaderEpoch(), b.BaseOffset()); err != nil {
					return err
				}
			}
		}
		rest = r
	}
	return nil
}

// maybeRollLocked rolls to a new segment when the append would not fit
// (segment.bytes), segment.ms has passed since the first batch's timestamp
// (or the segment's creation if batches carry none), an index is full, or
// the offsets would not fit a 4-byte relative offset: Kafka's shouldRoll.
func (l *Log) maybeRollLocked(cfg *Config, size, maxTs, first, last, now int64) error {
	a := l.active()
	asize := a.size.Load()
	var reason string
	switch {
	case asize > cfg.SegmentBytes-size:
		reason = "segment.bytes"
	case asize > 0 && timeWaitedForRoll(a, now, maxTs) > cfg.SegmentMs:
		reason = "segment.ms"
	case len(a.idx.entries) >= cfg.maxOffsetEntries() || len(a.tidx.entries) >= cfg.maxTimeEntries():
		reason = "segment.index.bytes"
	case last-a.base > math.MaxInt32:
		reason = "offset overflow"
	default:
		return nil
	}
	l.logger.Debug("rolling segment", "partition", l.tp.String(), "reason", reason, "base", a.base, "size", asize, "new_base", first)
	return l.rollLocked(first)
}

// timeWaitedForRoll is Kafka's LogSegment.timeWaitedForRoll.
func timeWaitedForRoll(s *segment, now, msgTs int64) int64 {
	if ts := s.firstTimestamp(); ts >= 0 {
		return msgTs - ts
	}
	return now - s.created
}

// rollLocked closes the active segment and starts a new one at base (the
// next offset to be written). The old segment is flushed in the
// background, which then advances the recovery point.
func (l *Log) rollLocked(base int64) error {
	a := l.active()
	base = max(base, l.leo.Load())
	if a.base == base && a.size.Load() == 0 {
		return nil // already an empty segment there
	}
	if base < a.base {
		return fmt.Errorf("%s: roll to %d below active segment %d", l.tp, base, a.base)
	}
	if err := a.finalize(); err != nil {
		l.failed = err
		return err
	}
	ns, err := createSegment(l.dir, base, "", l.nowMs())
	if err != nil {
		l.failed = err
		return fmt.Errorf("%s: roll: %w", l.tp, err)
	}
	old := l.segments()
	segs := make([]*segment, len(old), len(old)+1)
	copy(segs, old)
	l.setSegments(append(segs, ns))
	l.producers.mapEnd = max(l.producers.mapEnd, base)
	snap, err := l.producers.takeSnapshot()
	if err != nil {
		l.logger.Warn("producer snapshot at roll failed", "partition", l.tp.String(), "err", err)
	}
	l.bg.Add(1)
	go func() {
		defer l.bg.Done()
		if err := l.flushTo(base, snap); err != nil {
			l.logger.Warn("flush after roll failed", "partition", l.tp.String(), "err", err)
		}
	}()
	return nil
}

// Roll forces a new segment at the log end offset (if the active one has
// data).
func (l *Log) Roll() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.usable(); err != nil {
		return err
	}
	if l.active().size.Load() == 0 {
		return nil
	}
	return l.rollLocked(l.leo.Load())
}

// Flush fsyncs everything up to the log end offset and advances the
// recovery point.
func (l *Log) Flush() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	leo := l.leo.Load()
	l.unflushed = 0
	l.mu.Unlock()
	return l.flushTo(leo, "")
}

// flushTo fsyncs the segments holding offsets below end (and a producer
// snapshot file), then records end as the recovery point.
func (l *Log) flushTo(end int64, snapshot string) error {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	rp := l.recoveryPoint.Load()
	if end <= rp && snapshot == "" {
		return nil
	}
	segs := l.segments()
	for i, s := range segs {
		if s.base >= end {
			break
		}
		// Segments that end at or before the recovery point are durable.
		if i+1 < len(segs) && segs[i+1].base <= rp {
			continue
		}
		if err := s.sync(); err != nil && !errors.Is(err, os.ErrClosed) {
			return fmt.Errorf("%s: %w", l.tp, err)
		}
	}
	if snapshot != "" {
		if f, err := os.Open(snapshot); err == nil {
			_ = f.Sync()
			f.Close()
		}
	}
	if err := syncDir(l.dir); err != nil {
		return err
	}
	for {
		cur := l.recoveryPoint.Load()
		if end <= cur || l.recoveryPoint.CompareAndSwap(cur, end) {
			break
		}
	}
	l.lastFlushMs.Store(l.nowMs())
	return nil
}

// maybeFlushByTime flushes if flush.ms has passed since the last flush.
func (l *Log) maybeFlushByTime(now int64) error {
	cfg := l.config()
	if cfg.FlushMs == math.MaxInt64 || now-l.lastFlushMs.Load() < cfg.FlushMs {
		return nil
	}
	if l.recoveryPoint.Load() >= l.leo.Load() {
		l.lastFlushMs.Store(now)
		return nil
	}
	return l.Flush()
}

// Read returns whole batches starting with the one containing offset, up
// to maxBytes, never a batch whose base offset is >= maxOffset (the high
// watermark). minOneBatch returns the first batch even if it is larger
// than maxBytes. An offset outside [LogStartOffset, LogEndOffset] is
// ErrOffsetOutOfRange; offset == LogEndOffset is an empty result.
func (l *Log) Read(offset int64, maxBytes int, maxOffset int64, minOneBatch bool) (ReadResult, error) {
	// Load the segment list before the offsets: writers move the log start
	// offset before they drop segments, so a list that lacks old segments
	// comes with a start offset that excludes them.
	segs := l.segments()
	leo := l.leo.Load()
	lso := max(l.lso.Load(), segs[0].base)
	if offset < lso || offset > leo {
		return ReadResult{}, fmt.Errorf("%s: read at %d, log is [%d, %d]: %w", l.tp, offset, lso, leo, ErrOffsetOutOfRange)
	}
	maxOffset = min(maxOffset, leo)
	if offset >= maxOffset {
		return ReadResult{}, nil
	}
	i := sort.Search(len(segs), func(i int) bool { return segs[i].base > offset }) - 1
	i = max(i, 0)
	var res ReadResult
	budget := int64(maxBytes)
	if budget < 0 {
		budget = 0
	}
	r := newHeaderReader(nil)
	defer r.release()
	for ; i < len(segs); i++ {
		s := segs[i]
		// Offsets in s are below segEnd. The active segment's is unknown:
		// a batch may have landed after leo was read.
		segEnd := int64(math.MaxInt64)
		if i+1 < len(segs) {
			segEnd = segs[i+1].base
		}
		start, end, done, err := s.readRange(r, offset, budget, maxOffset, segEnd, minOneBatch && res.Size == 0)
		if err != nil {
			return ReadResult{}, fmt.Errorf("%s: read at %d: %w", l.tp, offset, err)
		}
		if end > start {
			res.Ranges = append(res.Ranges, FileRange{File: s.f, Pos: start, Size: int(end - start)})
			res.Size += int(end - start)
			budget -= end - start
		}
		if done || budget <= 0 || segEnd >= maxOffset {
			break
		}
		offset = segEnd
	}
	return res, nil
}

// readRange finds, in s, the whole batches from the one containing offset:
// at most budget bytes (the first batch regardless if minOne), none with a
// base offset >= maxOffset. done means the caller must not continue into
// the next segment (a limit was hit inside this one).
func (s *segment) readRange(r *headerReader, offset, budget, maxOffset, segEnd int64, minOne bool) (start, end int64, done bool, err error) {
	if err := s.ensureLoaded(); err != nil {
		return 0, 0, true, err
	}
	limit := s.size.Load()
	r.f, r.start = s.f, -1
	s.mu.RLock()
	pos := s.idx.lookup(offset)
	s.mu.RUnlock()
	// Find the first batch whose last offset is >= offset.
	var first batch.Batch
	for pos < limit {
		h, err := r.at(pos, limit)
		if err != nil {
			return 0, 0, true, err
		}
		if h.LastOffset() >= offset {
			first = h
			break
		}
		pos += int64(batch.Size(h))
	}
	if first == nil {
		return 0, 0, false, nil // nothing at or after offset here: try the next segment
	}
	if first.BaseOffset() >= maxOffset {
		return pos, pos, true, nil
	}
	start = pos
	firstSize := int64(batch.Size(first))
	upper := limit
	hitMax := false
	if maxOffset < segEnd {
		// The high watermark falls inside this segment: stop before the
		// first batch whose base offset reaches it, scanning from the
		// last index entry below it.
		s.mu.RLock()
		p := s.idx.lookup(maxOffset - 1)
		s.mu.RUnlock()
		p = max(p, start)
		for p < limit {
			h, err := r.at(p, limit)
			if err != nil {
				return 0, 0, true, err
			}
			if h.BaseOffset() >= maxOffset {
				break
			}
			p += int64(batch.Size(h))
		}
		upper, hitMax = p, true
	}
	if start+budget >= upper {
		return start, upper, hitMax, nil
	}
	// The byte budget ends inside the segment: jump to the last index entry
	// at or before the budget's end (entries mark batch starts), then add
	// whole batches while they fit.
	want := start + budget
	s.mu.RLock()
	p := start
	// Entries may already cover a batch written after limit was read;
	// never jump past upper.
	if j := s.idx.floorPos(min(want, upper)); j >= 0 {
		p = max(p, int64(s.idx.entries[j].pos))
	}
	s.mu.RUnlock()
	for p < upper {
		h, err := r.at(p, limit)
		if err != nil {
			return 0, 0, true, err
		}
		n := int64(batch.Size(h))
		if p+n > want {
			break
		}
		p += n
	}
	if p == start && minOne {
		p = start + firstSize
	}
	return start, p, true, nil
}

// Close flushes the log, writes a producer snapshot at the log end offset
// and closes every file. Segments waiting for deletion are deleted now.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	var errs []error
	if l.failed == nil {
		if err := l.active().finalize(); err != nil {
			errs = append(errs, err)
		}
	}
	pending := l.pending
	l.pending = nil
	l.mu.Unlock()
	l.bg.Wait()

	if l.failed == nil {
		if err := l.flushTo(l.leo.Load(), ""); err != nil {
			errs = append(errs, err)
		}
		l.mu.Lock()
		l.producers.mapEnd = max(l.producers.mapEnd, l.leo.Load())
		snap, err := l.producers.takeSnapshot()
		l.mu.Unlock()
		if err != nil {
			errs = append(errs, err)
		} else if snap != "" {
			if f, err := os.Open(snap); err == nil {
				errs = append(errs, f.Sync())
				f.Close()
			}
		}
	}
	errs = append(errs, l.stopPending(pending, true))
	for _, s := range l.segments() {
		errs = append(errs, s.close())
	}
	return errors.Join(errs...)
}

// Delete closes the log and removes its directory.
func (l *Log) Delete() error {
	err := l.Close()
	if rerr := os.RemoveAll(l.dir); rerr != nil {
		err = errors.Join(err, fmt.Errorf("remove %s: %w", l.dir, rerr))
	}
	return err
}

// deleteSegmentsLocked removes segments from use: their files are renamed
// to .deleted now (so a crash does not resurrect them) and closed and
// unlinked after file.delete.delay.ms, when in-flight reads are done.
// The caller has already removed them from the segment list.
func (l *Log) deleteSegmentsLocked(segs []*segment) { l.retire(segs, true) }

func (l *Log) retire(segs []*segment, deleteSnapshots bool) {
	delay := time.Duration(l.config().FileDeleteDelayMs) * time.Millisecond
	for _, s := range segs {
		if err := s.rename(deletedSuffix); err != nil {
			l.logger.Warn("rename deleted segment", "partition", l.tp.String(), "base", s.base, "err", err)
		}
		if deleteSnapshots {
			l.producers.deleteSnapshot(s.base)
		}
		if l.pending == nil {
			l.pending = map[*segment]*time.Timer{}
		}
		s := s
		l.deleting.Add(1)
		l.pending[s] = time.AfterFunc(delay, func() { l.finishDelete(s) })
	}
}

func (l *Log) finishDelete(s *segment) {
	defer l.deleting.Done()
	l.mu.Lock()
	_, ok := l.pending[s]
	delete(l.pending, s)
	l.mu.Unlock()
	if !ok {
		return // Close got there first
	}
	if err := errors.Join(s.close(), s.removeFiles()); err != nil {
		l.logger.Warn("delete segment files", "partition", l.tp.String(), "base", s.base, "err", err)
	}
}

// stopPending takes over the deletions still waiting for their delay.
func (l *Log) stopPending(pending map[*segment]*time.Timer, remove bool) error {
	var errs []error
	for s, t := range pending {
		if t.Stop() {
			l.deleting.Done() // the callback will not run
		}
		errs = append(errs, s.close())
		if remove {
			errs = append(errs, s.removeFiles())
		}
	}
	l.deleting.Wait() // callbacks already running
	return errors.Join(errs...)
}

// pendingDeletes reports how many segments await file.delete.delay.ms.
func (l *Log) pendingDeletes() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.pending)
}

// abandon stops the log taking requests without closing its files, which
// stay readable until the returned func closes them (Manager.Delete).
func (l *Log) abandon() func() {
	l.mu.Lock()
	l.closed = true
	pending := l.pending
	l.pending = nil
	l.mu.Unlock()
	return func() {
		l.bg.Wait()
		l.stopPending(pending, false)
		for _, s := range l.segments() {
			s.close()
		}
	}
}

// unloadIdleIndexes frees the in-memory indexes of closed segments no
// reader used for idle, so index memory follows the working set rather
// than the data size (Kafka gets the same from evictable mmaps).
func (l *Log) unloadIdleIndexes(idle time.Duration) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	segs := l.segments()
	cutoff := time.Now().Add(-idle).UnixMilli()
	n := 0
	for _, s := range segs[:len(segs)-1] {
		if s.lastUsed.Load() <= cutoff {
			s.mu.RLock()
			loaded := s.loaded
			s.mu.RUnlock()
			if loaded {
				s.unloadIndexes()
				n++
			}
		}
	}
	return n
}
