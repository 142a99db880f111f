package log

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fjordhq/fjord/broker/batch"
)

// File name suffixes, as Kafka names them.
const (
	logSuffix       = ".log"
	indexSuffix     = ".index"
	timeIndexSuffix = ".timeindex"
	snapshotSuffix  = ".snapshot"
	deletedSuffix   = ".deleted"
	cleanedSuffix   = ".cleaned"
	swapSuffix      = ".swap"
)

func segmentName(base int64) string { return fmt.Sprintf("%020d", base) }

// offsetFromFileName parses the base offset of "00000000000000000042.log"
// (any suffixes after the first dot are ignored).
func offsetFromFileName(name string) (int64, bool) {
	i := strings.IndexByte(name, '.')
	if i != 20 {
		return 0, false
	}
	o, err := strconv.ParseInt(name[:20], 10, 64)
	return o, err == nil && o >= 0
}

// segment is one .log file with its .index and .timeindex.
//
// The .log is opened when the segment is loaded; the indexes of closed
// segments are read lazily (first lookup), so opening a log after a clean
// shutdown costs a stat per segment, not a read of its data or indexes.
type segment struct {
	base   int64
	dir    string
	suffix string // "" or cleanedSuffix/swapSuffix while compaction builds it
	f      *os.File
	// size is the byte length of the whole batches in f, published after
	// each write so concurrent readers never see a partial batch.
	size atomic.Int64

	// mu guards everything below. Readers take it shared for index lookups;
	// the appender (holding Log.mu) takes it exclusively only to publish
	// new index entries, never across I/O except for the one-time lazy load.
	mu       sync.RWMutex
	loaded   bool
	idx      offsetIndex
	tidx     timeIndex
	maxTs    int64 // largest batch max timestamp, -1 none
	maxTsOff int64 // last offset of the batch holding maxTs
	maxKnown bool  // maxTs was computed (lazily for closed segments)

	// lastUsed is when a reader last needed the indexes (ms): indexes of
	// closed segments idle for a while are dropped from memory.
	lastUsed atomic.Int64

	// Only the appender, holding Log.mu, touches these.
	firstTs    int64 // max timestamp of the first append (segment.ms roll), see firstTimestamp
	firstKnown bool
	created    int64 // ms; time-based roll for segments without timestamps
	sinceIndex int64 // bytes appended since the last offset index entry
}

func (s *segment) path(suffix string) string {
	return filepath.Join(s.dir, segmentName(s.base)+suffix+s.suffix)
}

// createSegment makes a new empty segment, replacing leftover files.
func createSegment(dir string, base int64, suffix string, nowMs int64) (*segment, error) {
	s := &segment{base: base, dir: dir, suffix: suffix, loaded: true, maxTs: -1, maxTsOff: base, maxKnown: true, created: nowMs}
	var err error
	if s.f, err = os.OpenFile(s.path(logSuffix), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644); err != nil {
		return nil, fmt.Errorf("create segment: %w", err)
	}
	if s.idx.f, err = os.OpenFile(s.path(indexSuffix), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644); err != nil {
		s.f.Close()
		return nil, fmt.Errorf("create segment index: %w", err)
	}
	if s.tidx.f, err = os.OpenFile(s.path(timeIndexSuffix), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644); err != nil {
		s.f.Close()
		s.idx.f.Close()
		return nil, fmt.Errorf("create segment time index: %w", err)
	}
	s.idx.base, s.tidx.base = base, base
	return s, nil
}

// openSegment opens an existing segment's .log; indexes load lazily.
func openSegment(dir string, base int64, nowMs int64) (*segment, error) {
	s := &segment{base: base, dir: dir, maxTs: -1, maxTsOff: base, created: nowMs}
	s.idx.base, s.tidx.base = base, base
	f, err := os.OpenFile(s.path(logSuffix), os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("open segment: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("stat segment: %w", err)
	}
	s.f = f
	s.size.Store(st.Size())
	return s, nil
}

// indexFilesExist reports whether both index files are present.
func (s *segment) indexFilesExist() bool {
	_, err1 := os.Stat(s.path(indexSuffix))
	_, err2 := os.Stat(s.path(timeIndexSuffix))
	return err1 == nil && err2 == nil
}

// ensureLoaded reads the indexes of a closed segment on first use. A
// missing or corrupt index is rebuilt from the .log, which a clean shutdown
// left intact (recovery validates the tail of the log otherwise).
func (s *segment) ensureLoaded() error {
	s.lastUsed.Store(time.Now().UnixMilli())
	s.mu.RLock()
	ok := s.loaded
	s.mu.RUnlock()
	if ok {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.loaded {
		return nil
	}
	err := s.loadIndexesLocked()
	if errors.Is(err, errCorruptIndex) || errors.Is(err, os.ErrNotExist) {
		err = s.rebuildIndexesLocked(4096)
	}
	if err != nil {
		return err
	}
	s.loaded = true
	return nil
}

func (s *segment) openIndexFiles() error {
	var err error
	if s.idx.f == nil {
		if s.idx.f, err = os.OpenFile(s.path(indexSuffix), os.O_RDWR|os.O_CREATE, 0o644); err != nil {
			return fmt.Errorf("open offset index: %w", err)
		}
	}
	if s.tidx.f == nil {
		if s.tidx.f, err = os.OpenFile(s.path(timeIndexSuffix), os.O_RDWR|os.O_CREATE, 0o644); err != nil {
			return fmt.Errorf("open time index: %w", err)
		}
	}
	return nil
}

func (s *segment) loadIndexesLocked() error {
	if !s.indexFilesExist() {
		if err := s.openIndexFiles(); err != nil {
			return err
		}
		return fmt.Errorf("segment %s: %w", s.path(indexSuffix), os.ErrNotExist)
	}
	if err := s.openIndexFiles(); err != nil {
		return err
	}
	size := s.size.Load()
	b, err := readAll(s.idx.f)
	if err != nil {
		return err
	}
	entries, err := decodeOffsetIndex(b, size)
	if err != nil {
		return fmt.Errorf("%s: %w", s.idx.f.Name(), err)
	}
	tb, err := readAll(s.tidx.f)
	if err != nil {
		return err
	}
	tentries, err := decodeTimeIndex(tb)
	if err != nil {
		return fmt.Errorf("%s: %w", s.tidx.f.Name(), err)
	}
	s.idx.entries, s.tidx.entries = entries, tentries
	if !s.maxKnown {
		s.maxTs, s.maxTsOff = s.tidx.last()
		s.maxKnown = true
	}
	return nil
}

func readAll(f *os.File) ([]byte, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", f.Name(), err)
	}
	b := make([]byte, st.Size())
	if _, err := f.ReadAt(b, 0); err != nil && !(errors.Is(err, io.EOF) && len(b) == 0) {
		return nil, fmt.Errorf("read %s: %w", f.Name(), err)
	}
	return b, nil
}

// rebuildIndexesLocked rebuilds both indexes from the batch headers of a
// segment whose data is trusted (closed cleanly). It stops at the first
// batch that does not parse and leaves the data alone: recovery, not index
// loading, decides about truncating data.
func (s *segment) rebuildIndexesLocked(interval int64) error {
	if err := s.openIndexFiles(); err != nil {
		return err
	}
	s.idx.entries, s.tidx.entries = s.idx.entries[:0], s.tidx.entries[:0]
	if err := s.idx.truncateEntries(0); err != nil {
		return err
	}
	if err := s.tidx.truncateTo(s.base); err != nil {
		return err
	}
	s.maxTs, s.maxTsOff = -1, s.base
	r := newHeaderReader(s.f)
	defer r.release()
	var pos, since int64
	size := s.size.Load()
	for pos < size {
		h, err := r.at(pos, size)
		if err != nil {
			break
		}
		n := int64(batch.Size(h))
		if n < batch.HeaderSize || pos+n > size {
			break
		}
		if err := s.indexBatchLocked(h, pos, n, &since, interval); err != nil {
			return err
		}
		pos += n
	}
	if err := s.tidx.maybeAppend(s.maxTs, s.maxTsOff); err != nil {
		return err
	}
	s.maxKnown = true
	return nil
}

// indexBatchLocked does Kafka's per-batch index bookkeeping: track the max
// timestamp; after more than interval bytes, add an offset index entry for
// this batch and a time index entry for the max so far.
func (s *segment) indexBatchLocked(h batch.Batch, pos, n int64, since *int64, interval int64) error {
	if ts := h.MaxTimestamp(); ts > s.maxTs {
		s.maxTs, s.maxTsOff = ts, h.LastOffset()
	}
	if *since > interval {
		if err := s.idx.append(h.LastOffset(), pos); err != nil {
			return err
		}
		if err := s.tidx.maybeAppend(s.maxTs, s.maxTsOff); err != nil {
			return err
		}
		*since = 0
	}
	*since += n
	return nil
}

// unloadIndexes drops a closed segment's in-memory indexes; the next
// reader loads them again. A reader racing with it finds no entries and
// scans from the segment start, which is slower but still right.
func (s *segment) unloadIndexes() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.loaded {
		return
	}
	s.loaded = false
	s.idx.entries, s.tidx.entries = nil, nil
	for _, f := range []**os.File{&s.idx.f, &s.tidx.f} {
		if *f != nil {
			(*f).Close()
			*f = nil
		}
	}
}

// maxTimestamp returns the segment's largest timestamp and the offset
// where it was reached. For an unloaded closed segment it reads only the
// last time index entry.
func (s *segment) maxTimestamp() (int64, int64) {
	s.mu.RLock()
	if s.maxKnown {
		ts, off := s.maxTs, s.maxTsOff
		s.mu.RUnlock()
		return ts, off
	}
	s.mu.RUnlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.maxKnown {
		s.maxTs, s.maxTsOff = -1, s.base
		if f, err := os.Open(s.path(timeIndexSuffix)); err == nil {
			if st, err := f.Stat(); err == nil && st.Size() >= timeEntrySize && st.Size()%timeEntrySize == 0 {
				var b [timeEntrySize]byte
				if _, err := f.ReadAt(b[:], st.Size()-timeEntrySize); err == nil {
					if e, err := decodeTimeIndex(b[:]); err == nil {
						s.maxTs, s.maxTsOff = e[0].ts, s.base+int64(e[0].rel)
					}
				}
			}
			f.Close()
		}
		s.maxKnown = true
	}
	return s.maxTs, s.maxTsOff
}

// largestTimestamp is what time-based retention compares: the max
// timestamp, or the file's modification time if no batch has one (Kafka's
// LogSegment.largestTimestamp).
func (s *segment) largestTimestamp() int64 {
	if ts, _ := s.maxTimestamp(); ts >= 0 {
		return ts
	}
	if st, err := s.f.Stat(); err == nil {
		return st.ModTime().UnixMilli()
	}
	return 0
}

// firstTimestamp returns the max timestamp of the segment's first batch,
// which segment.ms counts from, or -1. Appender only.
func (s *segment) firstTimestamp() int64 {
	if !s.firstKnown {
		s.firstTs = -1
		if s.size.Load() > 0 {
			r := newHeaderReader(s.f)
			if h, err := r.at(0, s.size.Load()); err == nil {
				s.firstTs = h.MaxTimestamp()
			}
			r.release()
		}
		s.firstKnown = true
	}
	return s.firstTs
}

// finalize is Kafka's onBecomeInactiveSegment: record the segment's max
// timestamp as the last time index entry, which retention reads later.
func (s *segment) finalize() error {
	if err := s.ensureLoaded(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tidx.maybeAppend(s.maxTs, s.maxTsOff)
}

func (s *segment) sync() error {
	if err := s.f.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", s.f.Name(), err)
	}
	s.mu.RLock()
	idx, tidx := s.idx.f, s.tidx.f
	s.mu.RUnlock()
	for _, f := range []*os.File{idx, tidx} {
		if f != nil {
			if err := f.Sync(); err != nil {
				return fmt.Errorf("fsync %s: %w", f.Name(), err)
			}
		}
	}
	return nil
}

func (s *segment) close() error {
	var errs []error
	for _, f := range []*os.File{s.f, s.idx.f, s.tidx.f} {
		if f != nil {
			if err := f.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// files lists the segment's current paths.
func (s *segment) files() []string {
	return []string{s.path(logSuffix), s.path(indexSuffix), s.path(timeIndexSuffix)}
}

// rename changes the segment's suffix (Kafka's changeFileSuffixes). Open
// files stay valid across the rename.
func (s *segment) rename(newSuffix string) error {
	for _, name := range []string{logSuffix, indexSuffix, timeIndexSuffix} {
		from := s.path(name)
		to := filepath.Join(s.dir, segmentName(s.base)+name+newSuffix)
		if err := os.Rename(from, to); err != nil && !(errors.Is(err, os.ErrNotExist) && name != logSuffix) {
			return fmt.Errorf("rename %s: %w", from, err)
		}
	}
	s.suffix = newSuffix
	return nil
}

func (s *segment) removeFiles() error {
	var errs []error
	for _, p := range s.files() {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// headerReader reads batch headers through a small buffer, so scanning a
// run of small batches costs one pread per few KiB.
type headerReader struct {
	f      *os.File
	pooled *[]byte
	buf    []byte
	start  int64 // file position of buf[0]
	n      int   // valid bytes in buf
}

var headerBufPool = sync.Pool{New: func() any { b := make([]byte, 8192); return &b }}

func newHeaderReader(f *os.File) *headerReader {
	p := headerBufPool.Get().(*[]byte)
	return &headerReader{f: f, pooled: p, buf: *p, start: -1}
}

func (r *headerReader) release() {
	r.buf = nil
	headerBufPool.Put(r.pooled)
}

// at returns a view of the HeaderSize bytes at pos, which must end before
// limit. The view is valid until the next call.
func (r *headerReader) at(pos, limit int64) (batch.Batch, error) {
	if pos+batch.HeaderSize > limit {
		return nil, io.ErrUnexpectedEOF
	}
	if r.start < 0 || pos < r.start || pos+batch.HeaderSize > r.start+int64(r.n) {
		want := min(int64(len(r.buf)), limit-pos)
		n, err := r.f.ReadAt(r.buf[:want], pos)
		if n < batch.HeaderSize {
			r.start = -1
			if err == nil || errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		r.start, r.n = pos, n
	}
	off := pos - r.start
	return batch.Batch(r.buf[off : off+batch.HeaderSize]), nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// batchReader reads whole batches sequentially for recovery, validating
// each one. Batches larger than its buffer are checked by streaming their
// CRC, so a corrupt length cannot make recovery allocate a gigabyte.
type batchReader struct {
	f     *os.File
	buf   []byte
	start int64
	n     int
	limit int64
}

func newBatchReader(f *os.File, limit int64) *batchReader {
	return &batchReader{f: f, buf: make([]byte, 1<<20), start: -1, limit: limit}
}

// validateAt checks the batch at pos and returns its header (valid until
// the next call) and size. Any error means the log is invalid from pos on.
func (r *batchReader) validateAt(pos int64) (batch.Batch, int64, error) {
	if pos+batch.LogOverhead > r.limit {
		return nil, 0, batch.ErrTruncated
	}
	if err := r.fill(pos, batch.HeaderSize); err != nil {
		return nil, 0, err
	}
	off := pos - r.start
	n := int64(batch.Size(r.buf[off:]))
	if n < batch.HeaderSize {
		return nil, 0, fmt.Errorf("%w: batch length %d", batch.ErrCorrupt, n-batch.LogOverhead)
	}
	if pos+n > r.limit {
		return nil, 0, batch.ErrTruncated
	}
	if n <= int64(len(r.buf)) {
		if err := r.fill(pos, int(n)); err != nil {
			return nil, 0, err
		}
		off = pos - r.start
		b := batch.Batch(r.buf[off : off+n])
		if err := b.Validate(); err != nil {
			return nil, 0, err
		}
		return b.Header(), n, nil
	}
	// Too big for the buffer: check the header fields, then stream the CRC.
	h := batch.Batch(append([]byte(nil), r.buf[off:off+batch.HeaderSize]...))
	if h.Magic() != 2 {
		return nil, 0, fmt.Errorf("%w %d", batch.ErrMagic, h.Magic())
	}
	if h.LastOffsetDelta() < 0 || h.NumRecords() < 0 || h.Codec() > batch.CodecZstd {
		return nil, 0, fmt.Errorf("%w: bad header fields", batch.ErrCorrupt)
	}
	crc := uint32(0)
	for p, end := pos+21, pos+n; p < end; { // 21: attributes, where the CRC starts
		k := min(int64(len(r.buf)), end-p)
		m, err := r.f.ReadAt(r.buf[:k], p)
		if int64(m) < k {
			r.start = -1
			return nil, 0, fmt.Errorf("read batch at %d: %w", p, errOr(err, io.ErrUnexpectedEOF))
		}
		crc = crc32.Update(crc, castagnoli, r.buf[:k])
		p += k
	}
	r.start = -1
	if crc != h.CRC() {
		return nil, 0, batch.ErrCRC
	}
	return h, n, nil
}

// fill makes [pos, pos+n) available in buf.
func (r *batchReader) fill(pos int64, n int) error {
	if r.start >= 0 && pos >= r.start && pos+int64(n) <= r.start+int64(r.n) {
		return nil
	}
	want := int(min(int64(len(r.buf)), r.limit-pos))
	// Keep the part of the window already read from pos on, so recovery
	// reads each byte of the segment once.
	keep := 0
	if r.start >= 0 && pos >= r.start && pos < r.start+int64(r.n) {
		keep = copy(r.buf, r.buf[pos-r.start:r.n])
	}
	m, err := keep, error(nil)
	if keep < want {
		var k int
		k, err = r.f.ReadAt(r.buf[keep:want], pos+int64(keep))
		m += k
	}
	if m < n {
		r.start = -1
		return fmt.Errorf("read batch at %d: %w", pos, errOr(err, io.ErrUnexpectedEOF))
	}
	r.start, r.n = pos, m
	return nil
}

func errOr(err, def error) error {
	if err == nil || errors.Is(err, io.EOF) {
		return def
	}
	return err
}

// recoverResult is what recovering one segment found.
type recoverResult struct {
	truncated int64 // bytes cut off the end
	next      int64 // offset after the last valid batch (base if none)
}

// recover validates every batch of the segment (length, CRC, offsets
// increasing from prev and within a 4-byte relative offset), truncates the
// file at the first invalid one and rebuilds both indexes, as Kafka's
// LogSegment.recover. onBatch sees each valid batch header in order.
func (s *segment) recover(interval int64, prev int64, onBatch func(h batch.Batch)) (recoverResult, error) {
	st, err := s.f.Stat()
	if err != nil {
		return recoverResult{}, fmt.Errorf("stat %s: %w", s.f.Name(), err)
	}
	size := st.Size()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.openIndexFiles(); err != nil {
		return recoverResult{}, err
	}
	s.idx.entries, s.tidx.entries = nil, nil
	if err := s.idx.truncateEntries(0); err != nil {
		return recoverResult{}, err
	}
	if err := s.tidx.truncateTo(s.base); err != nil {
		return recoverResult{}, err
	}
	s.maxTs, s.maxTsOff, s.maxKnown = -1, s.base, true
	s.firstKnown = false
	next := max(prev, s.base)
	r := newBatchReader(s.f, size)
	var pos, since int64
	var reason error
	for pos < size {
		h, n, err := r.validateAt(pos)
		if err == nil {
			switch {
			case h.BaseOffset() < next:
				err = fmt.Errorf("%w: batch offset %d below %d", batch.ErrCorrupt, h.BaseOffset(), next)
			case h.LastOffset()-s.base > 1<<31-1:
				err = fmt.Errorf("%w: batch last offset %d overflows segment %d", batch.ErrCorrupt, h.LastOffset(), s.base)
			}
		}
		if err != nil {
			reason = err
			break
		}
		if err := s.indexBatchLocked(h, pos, n, &since, interval); err != nil {
			return recoverResult{}, err
		}
		if onBatch != nil {
			onBatch(h)
		}
		next = h.NextOffset()
		pos += n
	}
	s.sinceIndex = since
	res := recoverResult{truncated: size - pos, next: next}
	if res.truncated > 0 {
		if err := s.f.Truncate(pos); err != nil {
			return res, fmt.Errorf("truncate %s to %d: %w", s.f.Name(), pos, err)
		}
		_ = reason // reported by the caller, who knows the partition
	}
	s.size.Store(pos)
	if pos == 0 {
		res.next = max(prev, s.base)
	}
	if err := s.tidx.maybeAppend(s.maxTs, s.maxTsOff); err != nil {
		return res, err
	}
	s.loaded = true
	return res, nil
}

// readNextOffset returns the offset after the segment's last batch by
// scanning from the last offset index entry (Kafka's readNextOffset): a
// bounded read of the tail. It also restores the appender's count of bytes
// since that entry. Used on the active segment after a clean shutdown.
func (s *segment) readNextOffset() (int64, error) {
	if err := s.ensureLoaded(); err != nil {
		return 0, err
	}
	s.mu.RLock()
	var pos int64
	if n := len(s.idx.entries); n > 0 {
		pos = int64(s.idx.entries[n-1].pos)
	}
	s.mu.RUnlock()
	size := s.size.Load()
	s.sinceIndex = size - pos
	next := s.base
	r := newHeaderReader(s.f)
	defer r.release()
	for pos < size {
		h, err := r.at(pos, size)
		if err != nil {
			return 0, fmt.Errorf("read batch header at %d of %s: %w", pos, s.f.Name(), err)
		}
		n := int64(batch.Size(h))
		if n < batch.HeaderSize || pos+n > size {
			return 0, fmt.Errorf("%w: batch at %d of %s has length %d", batch.ErrCorrupt, pos, s.f.Name(), n)
		}
		next = h.NextOffset()
		pos += n
	}
	return next, nil
}
