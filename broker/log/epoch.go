package log

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// epochCache is Kafka's LeaderEpochFileCache: the start offset of every
// leader epoch seen in the log, in leader-epoch-checkpoint. It answers
// OffsetForLeaderEpoch, which followers and consumers use to detect
// divergence after a leader change.
//
// New epochs come from the appender (holding Log.mu) and are written to
// the file before the append returns, as Kafka's assign does, so the file
// never misses an epoch whose data may be on disk. Truncations are written
// after the log lock is released. Reads take only the cache's own lock.
type epochCache struct {
	path      string
	persistMu sync.Mutex // one file write at a time; taken before mu
	mu        sync.RWMutex
	entries   []epochEntry // epochs and start offsets both strictly increasing
	dirty     bool         // changed since the file was written
}

func loadEpochCache(dir string) (*epochCache, error) {
	c := &epochCache{path: filepath.Join(dir, leaderEpochFile)}
	b, err := os.ReadFile(c.path)
	if os.IsNotExist(err) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", c.path, err)
	}
	entries, err := decodeEpochCheckpoint(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.path, err)
	}
	for _, e := range entries {
		c.assignLocked(e)
	}
	return c, nil
}

func (c *epochCache) latest() (epochEntry, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if len(c.entries) == 0 {
		return epochEntry{}, false
	}
	return c.entries[len(c.entries)-1], true
}

// needsAssign is the cheap check done on every append.
func (c *epochCache) needsAssign(epoch int32, start int64) bool {
	if epoch < 0 || start < 0 {
		return false
	}
	last, ok := c.latest()
	return !ok || epoch != last.epoch || start < last.start
}

// assign records that epoch starts at start, dropping entries that would
// break monotonicity (a new leader overwriting a divergent tail), and
// persists the cache.
func (c *epochCache) assign(epoch int32, start int64) error {
	if !c.needsAssign(epoch, start) {
		return nil
	}
	c.mu.Lock()
	c.assignLocked(epochEntry{epoch, start})
	c.mu.Unlock()
	return c.persist()
}

func (c *epochCache) assignLocked(e epochEntry) {
	n := len(c.entries)
	for n > 0 && (c.entries[n-1].epoch >= e.epoch || c.entries[n-1].start >= e.start) {
		n--
	}
	c.entries = append(c.entries[:n], e)
}

// truncateFromEnd removes epochs starting at or after end (log
// truncated). Like Kafka it persists later (persistIfDirty), outside the
// log lock: a stale file is corrected by the same truncation at load.
func (c *epochCache) truncateFromEnd(end int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.entries)
	for n > 0 && c.entries[n-1].start >= end {
		n--
	}
	if n != len(c.entries) {
		c.entries = c.entries[:n]
		c.dirty = true
	}
}

// truncateFromStart drops epochs that ended before start and moves the
// epoch holding start to begin there (log start offset moved). Persisted
// later, as truncateFromEnd.
func (c *epochCache) truncateFromStart(start int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := 0
	for i < len(c.entries) && c.entries[i].start <= start {
		i++
	}
	if i > 0 {
		keep := c.entries[i-1]
		if i > 1 || keep.start != start {
			c.dirty = true
		}
		keep.start = start
		c.entries = append([]epochEntry{keep}, c.entries[i:]...)
	}
}

func (c *epochCache) clear() {
	c.mu.Lock()
	c.entries = nil
	c.dirty = true
	c.mu.Unlock()
}

func (c *epochCache) persist() error {
	c.persistMu.Lock()
	defer c.persistMu.Unlock()
	c.mu.Lock()
	b := encodeEpochCheckpoint(c.entries)
	c.dirty = false
	c.mu.Unlock()
	return writeFileAtomic(c.path, b)
}

// persistIfDirty writes the file if a truncation changed the cache.
func (c *epochCache) persistIfDirty() error {
	c.mu.RLock()
	dirty := c.dirty
	c.mu.RUnlock()
	if !dirty {
		return nil
	}
	return c.persist()
}

// endOffsetFor is Kafka's endOffsetFor: the largest epoch <= requested and
// the start offset of the next epoch (or leo for the latest epoch).
// (-1, -1) when unknown.
func (c *epochCache) endOffsetFor(requested int32, leo int64) (int32, int64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	n := len(c.entries)
	if requested < 0 || n == 0 {
		return -1, -1
	}
	if c.entries[n-1].epoch == requested {
		return requested, leo
	}
	// higher: first entry with epoch > requested
	h := 0
	for h < n && c.entries[h].epoch <= requested {
		h++
	}
	if h == n {
		return -1, -1
	}
	if h == 0 {
		return requested, c.entries[0].start
	}
	return c.entries[h-1].epoch, c.entries[h].start
}

// epochForOffset returns the epoch that offset belongs to, or -1.
func (c *epochCache) epochForOffset(offset int64) int32 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	prev := int32(-1)
	for _, e := range c.entries {
		if e.start == offset {
			return e.epoch
		}
		if e.start > offset {
			return prev
		}
		prev = e.epoch
	}
	return prev
}

func (c *epochCache) snapshot() []epochEntry {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return append([]epochEntry(nil), c.entries...)
}
