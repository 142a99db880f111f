package log

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"time"

	"github.com/fjordhq/fjord/broker/batch"
)

// Compaction follows Kafka's LogCleaner (cleanup.policy=compact):
//
//   - The dirty section starts at the first dirty offset (the
//     cleaner-offset-checkpoint, else the log start) and ends at the first
//     uncleanable offset: the active segment, the high watermark, and with
//     min.compaction.lag.ms the first segment holding a record younger than
//     the lag. A log is cleaned when dirty bytes / total bytes exceeds
//     min.cleanable.dirty.ratio, or when max.compaction.lag.ms says a dirty
//     segment has waited too long.
//   - An offset map (MD5(key) → last offset, bounded) is built over the
//     dirty section; if it fills up, only the mapped part is cleaned.
//   - Every segment from the start of the log up to the end of the mapped
//     part is rewritten, in groups merged up to segment.bytes, keeping a
//     record if its offset is past the map, or it is the latest for its key
//     and either has a value or is a tombstone whose delete horizon has not
//     passed. Records without a key are dropped. A batch whose records all
//     stay is copied byte for byte; otherwise it is rebuilt with the same
//     codec, base offset and last offset (so producers' sequences hold).
//   - The first clean that keeps a tombstone stamps its batch with a delete
//     horizon (KIP-534): now + delete.retention.ms; a later clean past the
//     horizon drops it.
//   - Empty batches stay when they hold an active idempotent producer's last
//     batch (its sequence state) or end the cleaning round.
//   - Each group is written as <base>.log.cleaned, fsynced, renamed to
//     .swap (the commit point), swapped into the segment list, the old
//     segments renamed to .deleted, and the .swap suffix dropped. Loading
//     finishes or discards an interrupted swap (completeSwaps), so a crash
//     at any step leaves either the old segments or the new one.
//
// Cleaning runs without Log.mu, on closed segments only; the swap takes
// Log.mu and gives up if retention or truncation changed the segments.

// errCleanAborted: the segments changed under the cleaner; try next round.
var errCleanAborted = errors.New("log cleaning aborted")

// cleanable is a log's dirty section as the cleaner sees it.
type cleanable struct {
	firstDirty, firstUncleanable int64
	cleanBytes, cleanableBytes   int64
	ratio                        float64
	needNow                      bool // max.compaction.lag.ms exceeded
}

// CleanStats reports one cleaning round.
type CleanStats struct {
	FirstDirty, EndOffset    int64
	BytesRead, BytesWritten  int64
	RecordsRead, RecordsKept int64
	Segments, Groups         int
	MapUtilization           float64
	Duration                 time.Duration
}

// cleanerOffset returns the first dirty offset the cleaner recorded, -1
// if none.
func (l *Log) cleanerOffset() int64 { return l.cleanedTo.Load() }

// cleanableInfo is LogCleanerManager.cleanableOffsets and
// calculateCleanableBytes.
func (l *Log) cleanableInfo(now int64, cfg *Config) cleanable {
	segs := l.segments()
	lso, leo := l.lso.Load(), l.leo.Load()
	firstDirty := l.cleanerOffset()
	if firstDirty < lso || firstDirty > leo {
		firstDirty = lso
	}
	active := segs[len(segs)-1]
	dirtyBase := floorBase(segs, firstDirty)
	uncleanable := min(l.highWatermark(), active.base)
	if cfg.MinCompactionLagMs > 0 {
		for _, s := range segs[:len(segs)-1] {
			if s.base < dirtyBase {
				continue
			}
			if s.largestTimestamp() > now-cfg.MinCompactionLagMs {
				uncleanable = min(uncleanable, s.base)
				break
			}
		}
	}
	uncleanable = max(uncleanable, firstDirty)
	// Snap to the base of the segment holding it (that segment is not
	// cleanable while it holds uncleanable offsets).
	uncleanable = min(floorBase(segs, uncleanable), active.base)
	c := cleanable{firstDirty: firstDirty, firstUncleanable: uncleanable}
	for _, s := range segs {
		if s.base < firstDirty {
			c.cleanBytes += s.size.Load()
		}
	}
	from := floorBase(segs, min(firstDirty, uncleanable))
	for _, s := range segs {
		if s.base >= from && s.base < uncleanable {
			c.cleanableBytes += s.size.Load()
		}
	}
	if total := c.cleanBytes + c.cleanableBytes; total > 0 {
		c.ratio = float64(c.cleanableBytes) / float64(total)
	}
	// max.compaction.lag.ms: the earliest first-batch timestamp of the dirty
	// closed segments.
	lag := max(cfg.MaxCompactionLagMs, 0)
	if lag < math.MaxInt64 && now > lag {
		earliest := int64(math.MaxInt64)
		for _, s := range segs[:len(segs)-1] {
			if s.base >= dirtyBase {
				if ts := s.readFirstBatchTimestamp(); ts > 0 {
					earliest = min(earliest, ts)
				}
			}
		}
		c.needNow = earliest < now-lag
	}
	return c
}

// floorBase is the base offset of the segment holding offset.
func floorBase(segs []*segment, offset int64) int64 {
	i := sort.Search(len(segs), func(i int) bool { return segs[i].base > offset }) - 1
	if i < 0 {
		return segs[0].base
	}
	return segs[i].base
}

func (s *segment) readFirstBatchTimestamp() int64 {
	size := s.size.Load()
	if size == 0 {
		return -1
	}
	r := newHeaderReader(s.f)
	defer r.release()
	h, err := r.at(0, size)
	if err != nil {
		return -1
	}
	return h.MaxTimestamp()
}

// wantsCleaning applies the cleaner's thresholds.
func (c cleanable) wantsCleaning(cfg *Config) bool {
	if c.cleanBytes+c.cleanableBytes == 0 {
		return false
	}
	return (c.needNow && c.cleanableBytes > 0) || c.ratio > cfg.MinCleanableDirtyRatio
}

// Compact cleans the log once if cleanup.policy includes compact and the
// log is dirty enough (always, with force) using an offset map of at most
// mapMemory bytes. It returns what it did; ok false means nothing was due.
// The Manager's cleaner calls it; it is exported for tools and tests.
func (l *Log) Compact(mapMemory int64, force bool) (stats CleanStats, ok bool, err error) {
	return l.compact(newOffsetMap(mapMemory), force, 512<<10)
}

func (l *Log) compact(om *offsetMap, force bool, ioBuf int) (CleanStats, bool, error) {
	cfg := l.config()
	if !cfg.Compact {
		return CleanStats{}, false, nil
	}
	now := l.nowMs()
	c := l.cleanableInfo(now, cfg)
	if !force && !c.wantsCleaning(cfg) || c.firstUncleanable <= l.segments()[0].base {
		return CleanStats{}, false, nil
	}
	st, err := l.clean(context.Background(), om, c, now, cfg, ioBuf)
	if err != nil {
		return st, false, err
	}
	l.cleanedTo.Store(st.EndOffset)
	return st, true, nil
}

// clean is Cleaner.doClean. Cancelling ctx (shutdown) abandons the round
// between segments, leaving the log as it was.
func (l *Log) clean(ctx context.Context, om *offsetMap, c cleanable, now int64, cfg *Config, ioBuf int) (CleanStats, error) {
	start := time.Now()
	st := CleanStats{FirstDirty: c.firstDirty}
	l.mu.Lock()
	if err := l.usable(); err != nil {
		l.mu.Unlock()
		return st, err
	}
	lastData := l.producers.lastDataOffsets()
	segs := l.segments()
	l.mu.Unlock()

	// Map the dirty section.
	om.clear()
	rd := &segReader{bufSize: ioBuf}
	var dec batch.Decoder
	for i, s := range segs {
		if s.base >= c.firstUncleanable {
			break
		}
		next := c.firstUncleanable
		if i+1 < len(segs) {
			next = min(next, segs[i+1].base)
		}
		if next <= c.firstDirty {
			continue
		}
		if err := ctx.Err(); err != nil {
			return st, fmt.Errorf("%s: %w: %w", l.tp, errCleanAborted, err)
		}
		full, err := mapSegment(rd, &dec, s, c.firstDirty, om, &st)
		if err != nil {
			return st, fmt.Errorf("%s: build offset map: %w", l.tp, err)
		}
		if full {
			break
		}
		om.updateLatest(next - 1)
	}
	st.EndOffset = om.latest + 1
	st.MapUtilization = om.utilization()
	if st.EndOffset <= c.firstDirty {
		return st, nil
	}

	var toClean []*segment
	for _, s := range segs[:len(segs)-1] {
		if s.base < st.EndOffset {
			toClean = append(toClean, s)
		}
	}
	groups, err := groupSegmentsBySize(toClean, segs, cfg, c.firstUncleanable)
	if err != nil {
		return st, err
	}
	f := &filter{om: om, now: now, cfg: cfg, lastData: lastData, upper: c.firstUncleanable}
	for _, g := range groups {
		if err := l.cleanGroup(ctx, g, f, rd, &dec, cfg, &st); err != nil {
			return st, err
		}
		st.Groups++
		st.Segments += len(g)
	}
	st.Duration = time.Since(start)
	l.logger.Info("cleaned log", "partition", l.tp.String(), "dirty_from", c.firstDirty, "dirty_to", st.EndOffset,
		"segments", st.Segments, "groups", st.Groups, "bytes_read", st.BytesRead, "bytes_written", st.BytesWritten,
		"records_read", st.RecordsRead, "records_kept", st.RecordsKept, "map_utilization", fmt.Sprintf("%.2f", st.MapUtilization),
		"took", st.Duration.Round(time.Millisecond))
	return st, nil
}

// mapSegment adds the keys of s at or after from to the map. It reports
// whether the map filled up (then om.latest is the last batch fully mapped).
func mapSegment(rd *segReader, dec *batch.Decoder, s *segment, from int64, om *offsetMap, st *CleanStats) (bool, error) {
	if err := s.ensureLoaded(); err != nil {
		return false, err
	}
	s.mu.RLock()
	pos := s.idx.lookup(from)
	s.mu.RUnlock()
	full := false
	err := rd.each(s, pos, func(b batch.Batch) error {
		if b.LastOffset() < from {
			return nil
		}
		if !b.Control() {
			// Check capacity per batch, so a batch is mapped whole or not at all.
			if om.full() || float64(om.used+int(b.NumRecords())) > float64(om.slots())*offsetMapLoadFactor && om.used > 0 {
				full = true
				return io.EOF
			}
			err := dec.Records(b, func(r *batch.Record) error {
				if r.Key != nil && r.Offset >= from {
					om.put(r.Key, r.Offset)
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		om.updateLatest(b.LastOffset())
		return nil
	})
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return full, err
}

// groupSegmentsBySize is Cleaner.groupSegmentsBySize: consecutive segments
// whose data and indexes together fit one segment and whose offsets fit a
// 4-byte relative offset.
func groupSegmentsBySize(toClean, all []*segment, cfg *Config, firstUncleanable int64) ([][]*segment, error) {
	nextBase := func(s *segment) int64 {
		for i, x := range all {
			if x == s && i+1 < len(all) {
				return all[i+1].base
			}
		}
		return firstUncleanable
	}
	var groups [][]*segment
	for i := 0; i < len(toClean); {
		g := []*segment{toClean[i]}
		if err := toClean[i].ensureLoaded(); err != nil {
			return nil, err
		}
		size := toClean[i].size.Load()
		idx, tidx := entriesOf(toClean[i])
		j := i + 1
		for ; j < len(toClean); j++ {
			s := toClean[j]
			if err := s.ensureLoaded(); err != nil {
				return nil, err
			}
			si, st := entriesOf(s)
			if size+s.size.Load() > cfg.SegmentBytes ||
				int64(idx+si)*offsetEntrySize > int64(cfg.SegmentIndexBytes) ||
				int64(tidx+st)*timeEntrySize > int64(cfg.SegmentIndexBytes) ||
				(s.size.Load() > 0 && nextBase(s)-1-g[0].base > math.MaxInt32) {
				break
			}
			g = append(g, s)
			size += s.size.Load()
			idx, tidx = idx+si, tidx+st
		}
		groups = append(groups, g)
		i = j
	}
	return groups, nil
}

func entriesOf(s *segment) (int, int) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.idx.entries), len(s.tidx.entries)
}

// filter decides what a cleaning round keeps.
type filter struct {
	om       *offsetMap
	now      int64
	cfg      *Config
	lastData map[int64]int64 // producer → last data offset
	upper    int64           // first uncleanable offset

	kept []batch.Record
	hdrs []batch.Header
}

// keepRecord is Cleaner.shouldRetainRecord.
func (f *filter) keepRecord(b batch.Batch, r *batch.Record) bool {
	if r.Offset > f.om.latest {
		return true
	}
	if r.Key == nil {
		return false
	}
	if r.Offset < f.om.get(r.Key) {
		return false
	}
	if r.Value != nil {
		return true
	}
	h, ok := b.DeleteHorizon()
	return !ok || f.now < h
}

// filterBatch appends what survives of b to out.
func (f *filter) filterBatch(dec *batch.Decoder, b batch.Batch, out []byte, st *CleanStats) ([]byte, error) {
	if b.Control() {
		// Transaction markers stay: transactions are not served yet, so
		// there is no aborted data to remove them with.
		st.RecordsRead += int64(b.NumRecords())
		st.RecordsKept += int64(b.NumRecords())
		return append(out, b...), nil
	}
	retainEmpty := b.NextOffset() == f.upper
	if pid := b.ProducerID(); pid >= 0 {
		if last, ok := f.lastData[pid]; ok && last == b.LastOffset() {
			retainEmpty = true
		}
	}
	f.kept, f.hdrs = f.kept[:0], f.hdrs[:0]
	all, tombstones := true, false
	err := dec.Records(b, func(r *batch.Record) error {
		st.RecordsRead++
		if !f.keepRecord(b, r) {
			all = false
			return nil
		}
		k := *r
		n := len(f.hdrs)
		f.hdrs = append(f.hdrs, r.Headers...)
		k.Headers = f.hdrs[n:len(f.hdrs):len(f.hdrs)]
		f.kept = append(f.kept, k)
		if r.Value == nil {
			tombstones = true
		}
		return nil
	})
	if err != nil {
		return out, err
	}
	st.RecordsKept += int64(len(f.kept))
	switch {
	case len(f.kept) > 0:
		needHorizon := tombstones && !b.HasDeleteHorizon()
		if all && !needHorizon {
			return append(out, b...), nil
		}
		h := b.BuildHeader()
		if needHorizon {
			h.HasDeleteHorizon, h.DeleteHorizonMs = true, f.now+f.cfg.DeleteRetentionMs
		}
		return batch.Build(out, h, f.kept, b.Codec())
	case retainEmpty:
		h := b.BuildHeader()
		h.HasDeleteHorizon = false
		return batch.Build(out, h, nil, batch.CodecNone)
	}
	return out, nil
}

// cleanGroup is Cleaner.cleanSegments plus UnifiedLog.replaceSegments.
func (l *Log) cleanGroup(ctx context.Context, g []*segment, f *filter, rd *segReader, dec *batch.Decoder, cfg *Config, st *CleanStats) error {
	sizes := make([]int64, len(g))
	for i, s := range g {
		sizes[i] = s.size.Load()
	}
	cleaned, err := createSegment(l.dir, g[0].base, cleanedSuffix, l.nowMs())
	if err != nil {
		return fmt.Errorf("%s: %w", l.tp, err)
	}
	discard := func(err error) error {
		cleaned.close()
		cleaned.removeFiles()
		return err
	}
	w := &cleanedWriter{s: cleaned, interval: int64(cfg.IndexIntervalBytes)}
	var out []byte
	for _, s := range g {
		if err := ctx.Err(); err != nil {
			return discard(fmt.Errorf("%s: %w: %w", l.tp, errCleanAborted, err))
		}
		err := rd.each(s, 0, func(b batch.Batch) error {
			st.BytesRead += int64(len(b))
			var err error
			if out, err = f.filterBatch(dec, b, out, st); err != nil {
				return err
			}
			if len(out) >= rd.bufSize {
				err = w.write(out)
				out = out[:0]
			}
			return err
		})
		if err != nil {
			return discard(fmt.Errorf("%s: clean segment %d: %w", l.tp, s.base, err))
		}
	}
	if err := w.write(out); err != nil {
		return discard(err)
	}
	st.BytesWritten += cleaned.size.Load()
	if err := cleaned.finalize(); err != nil {
		return discard(err)
	}
	if err := cleaned.sync(); err != nil {
		return discard(err)
	}
	// Keep the newest modification time of the originals: retention falls
	// back to it for segments without timestamps.
	if fi, err := g[len(g)-1].f.Stat(); err == nil {
		for _, p := range cleaned.files() {
			_ = os.Chtimes(p, fi.ModTime(), fi.ModTime())
		}
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	segs := l.segments()
	at := -1
	for i, s := range segs {
		if s == g[0] {
			at = i
			break
		}
	}
	ok := at >= 0 && l.usable() == nil && at+len(g) < len(segs)
	for i := 0; ok && i < len(g); i++ {
		ok = segs[at+i] == g[i] && g[i].size.Load() == sizes[i]
	}
	if !ok {
		return discard(fmt.Errorf("%s: %w: segments changed while cleaning", l.tp, errCleanAborted))
	}
	if err := cleaned.rename(swapSuffix); err != nil {
		return discard(err)
	}
	if err := syncDir(l.dir); err != nil {
		return discard(err)
	}
	next := make([]*segment, 0, len(segs)-len(g)+1)
	next = append(next, segs[:at]...)
	next = append(next, cleaned)
	next = append(next, segs[at+len(g):]...)
	l.setSegments(next)
	// As Kafka: the snapshot at the group's base stays (a segment still
	// starts there); the others no longer match a segment.
	l.retire(g[:1], false)
	l.retire(g[1:], true)
	if err := cleaned.rename(""); err != nil {
		l.failed = err
		return err
	}
	return syncDir(l.dir)
}

// cleanedWriter appends retained batches to the segment being built,
// indexing them as appends do.
type cleanedWriter struct {
	s        *segment
	interval int64
	since    int64
}

func (w *cleanedWriter) write(data []byte) error {
	if len(data) == 0 {
		return nil
	}
	pos := w.s.size.Load()
	if _, err := w.s.f.WriteAt(data, pos); err != nil {
		return fmt.Errorf("write cleaned segment: %w", err)
	}
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	for rest := data; len(rest) > 0; {
		b, r, err := batch.Next(rest)
		if err != nil {
			return err
		}
		n := int64(len(b))
		if err := w.s.indexBatchLocked(b, pos, n, &w.since, w.interval); err != nil {
			return err
		}
		pos += n
		rest = r
	}
	w.s.size.Store(pos)
	return nil
}

// segReader reads a segment's batches in large chunks.
type segReader struct {
	bufSize int
	buf     []byte
}

// each calls fn with every batch of s from pos on. A batch is valid until
// fn returns. fn returning io.EOF stops the walk.
func (r *segReader) each(s *segment, pos int64, fn func(b batch.Batch) error) error {
	if r.buf == nil {
		r.buf = make([]byte, r.bufSize)
	}
	limit := s.size.Load()
	for pos < limit {
		n, err := s.f.ReadAt(r.buf[:min(int64(len(r.buf)), limit-pos)], pos)
		if n < batch.LogOverhead {
			return fmt.Errorf("read %s at %d: %w", s.f.Name(), pos, errOr(err, io.ErrUnexpectedEOF))
		}
		chunk := r.buf[:n]
		used := 0
		for len(chunk) >= batch.LogOverhead {
			size := batch.Size(chunk)
			if size < batch.HeaderSize {
				return fmt.Errorf("%w: batch at %d of %s has length %d", batch.ErrCorrupt, pos+int64(used), s.f.Name(), size)
			}
			if size > len(chunk) {
				break
			}
			if err := fn(batch.Batch(chunk[:size:size])); err != nil {
				return err
			}
			chunk = chunk[size:]
			used += size
		}
		if used == 0 {
			// One batch bigger than the buffer: grow to fit it.
			size := batch.Size(r.buf)
			if int64(size) > limit-pos {
				return fmt.Errorf("%w: batch at %d of %s runs past the segment end", batch.ErrCorrupt, pos, s.f.Name())
			}
			r.buf = make([]byte, size)
			continue
		}
		pos += int64(used)
	}
	return nil
}
