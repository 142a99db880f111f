package log

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"

	"github.com/fjordhq/fjord/broker/batch"
)

// Producer state follows Kafka's ProducerStateManager and
// ProducerAppendInfo: per producer id the epoch, the metadata of the last
// five batches (duplicate detection returns the original offsets of a
// retried batch) and the last timestamp (expiry). Only the appender, under
// Log.mu, touches it.
//
// Snapshots <offset>.snapshot hold the state as of that offset in Kafka's
// format (version 1):
//
//	version int16 | crc uint32 (CRC-32C of the rest) | count int32 |
//	count × { producerId int64, epoch int16, lastSequence int32,
//	          lastOffset int64, offsetDelta int32, timestamp int64,
//	          coordinatorEpoch int32, currentTxnFirstOffset int64 }
//
// One is written at every roll (named by the new segment's base offset)
// and at close (the log end offset). Loading takes the newest one not
// beyond the log end and replays batch headers after it.

const (
	numBatchesToRetain   = 5
	snapshotVersion      = 1
	snapshotHeaderSize   = 2 + 4 + 4
	snapshotEntrySize    = 8 + 2 + 4 + 8 + 4 + 8 + 4 + 8
	noProducerEpoch      = -1
	noSequence           = -1
	errSnapshotCorruptID = "corrupt producer snapshot"
)

var errCorruptSnapshot = errors.New(errSnapshotCorruptID)

type batchMeta struct {
	lastSeq     int32
	lastOffset  int64
	offsetDelta int32
	timestamp   int64
}

func (m batchMeta) firstSeq() int32 { return decSequence(m.lastSeq, m.offsetDelta) }
func (m batchMeta) firstOffset() int64 {
	return m.lastOffset - int64(m.offsetDelta)
}

// decSequence is Kafka's DefaultRecordBatch.decrementSequence.
func decSequence(seq, n int32) int32 {
	if seq < n {
		return 1<<31 - 1 - (n - seq) + 1
	}
	return seq - n
}

type producerEntry struct {
	id               int64
	epoch            int16
	coordinatorEpoch int32
	lastTimestamp    int64
	txnFirstOffset   int64 // -1: none
	batches          [numBatchesToRetain]batchMeta
	n                int // batches[0:n], oldest first
}

func emptyProducer(id int64) producerEntry {
	return producerEntry{id: id, epoch: noProducerEpoch, coordinatorEpoch: -1, lastTimestamp: -1, txnFirstOffset: -1}
}

func (e *producerEntry) lastSeq() int32 {
	if e.n == 0 {
		return noSequence
	}
	return e.batches[e.n-1].lastSeq
}

func (e *producerEntry) last() (batchMeta, bool) {
	if e.n == 0 {
		return batchMeta{}, false
	}
	return e.batches[e.n-1], true
}

// maybeUpdateEpoch clears the batch history when the epoch changes.
func (e *producerEntry) maybeUpdateEpoch(epoch int16) {
	if e.epoch != epoch {
		e.n = 0
		e.epoch = epoch
	}
}

func (e *producerEntry) addBatch(epoch int16, m batchMeta) {
	e.maybeUpdateEpoch(epoch)
	if e.n == numBatchesToRetain {
		copy(e.batches[:], e.batches[1:])
		e.n--
	}
	e.batches[e.n] = m
	e.n++
	e.lastTimestamp = m.timestamp
}

func (e *producerEntry) findDuplicate(h batch.Batch) (batchMeta, bool) {
	if h.ProducerEpoch() != e.epoch {
		return batchMeta{}, false
	}
	first, last := h.BaseSequence(), h.LastSequence()
	for i := 0; i < e.n; i++ {
		if m := e.batches[i]; m.firstSeq() == first && m.lastSeq == last {
			return m, true
		}
	}
	return batchMeta{}, false
}

type producerStateManager struct {
	dir          string
	expirationMs int64
	producers    map[int64]*producerEntry
	mapEnd       int64   // offset up to which batches are reflected (lastMapOffset)
	snapOffset   int64   // offset of the latest snapshot taken (lastSnapOffset)
	snapshots    []int64 // offsets of snapshot files on disk, ascending

	// pending holds the updates of the append in progress, applied by
	// commit once the data is written. A slice, not a map: appends carry
	// one batch per producer almost always.
	pending []producerEntry
}

func newProducerStateManager(dir string, expirationMs int64) (*producerStateManager, error) {
	m := &producerStateManager{dir: dir, expirationMs: expirationMs, producers: map[int64]*producerEntry{}}
	if err := m.listSnapshots(); err != nil {
		return nil, err
	}
	return m, nil
}

func snapshotPath(dir string, offset int64) string {
	return filepath.Join(dir, segmentName(offset)+snapshotSuffix)
}

func (m *producerStateManager) listSnapshots() error {
	ents, err := os.ReadDir(m.dir)
	if err != nil {
		return fmt.Errorf("list producer snapshots in %s: %w", m.dir, err)
	}
	m.snapshots = m.snapshots[:0]
	for _, e := range ents {
		name := e.Name()
		if filepath.Ext(name) != snapshotSuffix || !e.Type().IsRegular() {
			continue
		}
		if o, ok := offsetFromFileName(name); ok && len(name) == 20+len(snapshotSuffix) {
			m.snapshots = append(m.snapshots, o)
		}
	}
	sort.Slice(m.snapshots, func(i, j int) bool { return m.snapshots[i] < m.snapshots[j] })
	return nil
}

func (m *producerStateManager) entry(id int64) producerEntry {
	for i := range m.pending {
		if m.pending[i].id == id {
			return m.pending[i]
		}
	}
	if e := m.producers[id]; e != nil {
		return *e
	}
	return emptyProducer(id)
}

func (m *producerStateManager) setPending(e producerEntry) {
	for i := range m.pending {
		if m.pending[i].id == e.id {
			m.pending[i] = e
			return
		}
	}
	m.pending = append(m.pending, e)
}

// checkDuplicate is run first for client appends: a batch equal (epoch,
// sequence range) to one of the last five is a retry; the caller returns
// the original offsets and writes nothing.
func (m *producerStateManager) checkDuplicate(h batch.Batch) (batchMeta, bool) {
	if e := m.producers[h.ProducerID()]; e != nil {
		return e.findDuplicate(h)
	}
	return batchMeta{}, false
}

// prepare validates one idempotent batch (already given its offsets) and
// stages the producer's new state. client: leader append from a producer,
// which gets Kafka's full epoch and sequence checks; otherwise replication,
// which is trusted.
func (m *producerStateManager) prepare(h batch.Batch, client bool) error {
	pid := h.ProducerID()
	cur := m.entry(pid)
	epoch := h.ProducerEpoch()
	if h.Control() {
		// A transaction marker: bumps the epoch and ends the transaction.
		// Its coordinator epoch is in the record, which idempotence does
		// not need; transactions are not served yet.
		if epoch < cur.epoch && client {
			return fmt.Errorf("%w: producer %d epoch %d is older than %d", ErrInvalidProducerEpoch, pid, epoch, cur.epoch)
		}
		cur.maybeUpdateEpoch(epoch)
		cur.lastTimestamp = h.MaxTimestamp()
		cur.txnFirstOffset = -1
		m.setPending(cur)
		return nil
	}
	if epoch < cur.epoch && client {
		return fmt.Errorf("%w: producer %d at offset %d has epoch %d, smaller than the last seen epoch %d",
			ErrInvalidProducerEpoch, pid, h.BaseOffset(), epoch, cur.epoch)
	}
	if client {
		first := h.BaseSequence()
		if epoch != cur.epoch {
			// A new (bumped) epoch must start at sequence 0, unless the log
			// knows nothing of this producer (KIP-360: its state may have
			// been removed by retention).
			if first != 0 && cur.epoch != noProducerEpoch {
				return fmt.Errorf("%w: producer %d new epoch %d must start at sequence 0, got %d (current epoch %d)",
					ErrOutOfOrderSequence, pid, epoch, first, cur.epoch)
			}
		} else if last := cur.lastSeq(); !m.unknownEpoch(pid) && !inSequence(last, first) {
			return fmt.Errorf("%w: producer %d at offset %d: sequence %d does not follow %d",
				ErrOutOfOrderSequence, pid, h.BaseOffset(), first, last)
		}
	}
	cur.addBatch(epoch, batchMeta{
		lastSeq:     h.LastSequence(),
		lastOffset:  h.LastOffset(),
		offsetDelta: h.LastOffsetDelta(),
		timestamp:   h.MaxTimestamp(),
	})
	if h.Transactional() && cur.txnFirstOffset < 0 {
		cur.txnFirstOffset = h.BaseOffset()
	}
	m.setPending(cur)
	return nil
}

// unknownEpoch: the committed state has no epoch for pid, so any sequence
// is accepted (Kafka checks the state from before the append).
func (m *producerStateManager) unknownEpoch(pid int64) bool {
	e := m.producers[pid]
	return e == nil || e.epoch == noProducerEpoch
}

func inSequence(last, next int32) bool {
	return int64(next) == int64(last)+1 || (next == 0 && last == 1<<31-1)
}

func (m *producerStateManager) abort() { m.pending = m.pending[:0] }

// commit applies the staged updates; end is the new log end offset.
func (m *producerStateManager) commit(end int64) {
	for i := range m.pending {
		e := &m.pending[i]
		if p := m.producers[e.id]; p != nil {
			*p = *e
		} else {
			ne := new(producerEntry)
			*ne = *e
			m.producers[e.id] = ne
		}
	}
	m.pending = m.pending[:0]
	m.mapEnd = end
}

// replay applies one batch header found while loading or recovering.
func (m *producerStateManager) replay(h batch.Batch) {
	if h.ProducerID() >= 0 {
		if err := m.prepare(h, false); err == nil {
			m.commit(h.NextOffset())
			return
		}
		m.abort()
	}
	m.mapEnd = h.NextOffset()
}

func (m *producerStateManager) expired(e *producerEntry, nowMs int64) bool {
	return e.txnFirstOffset < 0 && nowMs-e.lastTimestamp >= m.expirationMs
}

// removeExpired drops producers idle for producer.id.expiration.ms.
func (m *producerStateManager) removeExpired(nowMs int64) int {
	n := 0
	for id, e := range m.producers {
		if m.expired(e, nowMs) {
			delete(m.producers, id)
			n++
		}
	}
	return n
}

func (m *producerStateManager) list() []ProducerState {
	out := make([]ProducerState, 0, len(m.producers))
	for _, e := range m.producers {
		out = append(out, ProducerState{
			ProducerID:       e.id,
			Epoch:            e.epoch,
			LastSequence:     e.lastSeq(),
			LastTimestamp:    e.lastTimestamp,
			CoordinatorEpoch: e.coordinatorEpoch,
			TxnStartOffset:   e.txnFirstOffset,
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ProducerID < out[j].ProducerID })
	return out
}

// lastDataOffsets maps each producer to the last offset of its last data
// batch (-1 if it has none): the cleaner keeps those batches.
func (m *producerStateManager) lastDataOffsets() map[int64]int64 {
	out := make(map[int64]int64, len(m.producers))
	for id, e := range m.producers {
		if b, ok := e.last(); ok {
			out[id] = b.lastOffset
		} else {
			out[id] = -1
		}
	}
	return out
}

func encodeSnapshot(producers map[int64]*producerEntry) []byte {
	ids := make([]int64, 0, len(producers))
	for id := range producers {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	b := make([]byte, snapshotHeaderSize+len(ids)*snapshotEntrySize)
	binary.BigEndian.PutUint16(b[0:], snapshotVersion)
	binary.BigEndian.PutUint32(b[6:], uint32(len(ids)))
	p := b[snapshotHeaderSize:]
	for _, id := range ids {
		e := producers[id]
		last, ok := e.last()
		if !ok {
			last = batchMeta{lastSeq: noSequence, lastOffset: -1}
		}
		binary.BigEndian.PutUint64(p[0:], uint64(id))
		binary.BigEndian.PutUint16(p[8:], uint16(e.epoch))
		binary.BigEndian.PutUint32(p[10:], uint32(last.lastSeq))
		binary.BigEndian.PutUint64(p[14:], uint64(last.lastOffset))
		binary.BigEndian.PutUint32(p[22:], uint32(last.offsetDelta))
		binary.BigEndian.PutUint64(p[26:], uint64(e.lastTimestamp))
		binary.BigEndian.PutUint32(p[34:], uint32(e.coordinatorEpoch))
		binary.BigEndian.PutUint64(p[38:], uint64(e.txnFirstOffset))
		p = p[snapshotEntrySize:]
	}
	binary.BigEndian.PutUint32(b[2:], crc32.Checksum(b[6:], castagnoli))
	return b
}

func decodeSnapshot(b []byte) ([]producerEntry, error) {
	if len(b) < snapshotHeaderSize {
		return nil, fmt.Errorf("%w: %d bytes", errCorruptSnapshot, len(b))
	}
	if v := binary.BigEndian.Uint16(b); v != snapshotVersion {
		return nil, fmt.Errorf("%w: unknown version %d", errCorruptSnapshot, v)
	}
	if crc32.Checksum(b[6:], castagnoli) != binary.BigEndian.Uint32(b[2:]) {
		return nil, fmt.Errorf("%w: CRC mismatch", errCorruptSnapshot)
	}
	n := int32(binary.BigEndian.Uint32(b[6:]))
	if n < 0 || int64(len(b)) != snapshotHeaderSize+int64(n)*snapshotEntrySize {
		return nil, fmt.Errorf("%w: %d entries in %d bytes", errCorruptSnapshot, n, len(b))
	}
	out := make([]producerEntry, n)
	p := b[snapshotHeaderSize:]
	for i := range out {
		e := emptyProducer(int64(binary.BigEndian.Uint64(p[0:])))
		e.epoch = int16(binary.BigEndian.Uint16(p[8:]))
		m := batchMeta{
			lastSeq:     int32(binary.BigEndian.Uint32(p[10:])),
			lastOffset:  int64(binary.BigEndian.Uint64(p[14:])),
			offsetDelta: int32(binary.BigEndian.Uint32(p[22:])),
			timestamp:   int64(binary.BigEndian.Uint64(p[26:])),
		}
		e.lastTimestamp = m.timestamp
		e.coordinatorEpoch = int32(binary.BigEndian.Uint32(p[34:]))
		e.txnFirstOffset = int64(binary.BigEndian.Uint64(p[38:]))
		if m.lastOffset >= 0 {
			e.batches[0], e.n = m, 1
		}
		out[i] = e
		p = p[snapshotEntrySize:]
	}
	return out, nil
}

// takeSnapshot writes the state at mapEnd unless a snapshot there exists.
// It does not fsync: callers that need durability sync the file later
// (after a roll, together with the segment) or at close.
func (m *producerStateManager) takeSnapshot() (string, error) {
	if m.mapEnd <= m.snapOffset && m.hasSnapshot(m.mapEnd) {
		return "", nil
	}
	path := snapshotPath(m.dir, m.mapEnd)
	if err := os.WriteFile(path, encodeSnapshot(m.producers), 0o644); err != nil {
		return "", fmt.Errorf("write producer snapshot: %w", err)
	}
	m.snapOffset = m.mapEnd
	if !m.hasSnapshot(m.mapEnd) {
		m.snapshots = append(m.snapshots, m.mapEnd)
		sort.Slice(m.snapshots, func(i, j int) bool { return m.snapshots[i] < m.snapshots[j] })
	}
	return path, nil
}

func (m *producerStateManager) hasSnapshot(off int64) bool {
	i := sort.Search(len(m.snapshots), func(i int) bool { return m.snapshots[i] >= off })
	return i < len(m.snapshots) && m.snapshots[i] == off
}

func (m *producerStateManager) deleteSnapshot(off int64) {
	for i, o := range m.snapshots {
		if o == off {
			m.snapshots = append(m.snapshots[:i], m.snapshots[i+1:]...)
			break
		}
	}
	_ = os.Remove(snapshotPath(m.dir, off))
}

// deleteSnapshotsBefore removes snapshots older than off.
func (m *producerStateManager) deleteSnapshotsBefore(off int64) {
	for len(m.snapshots) > 0 && m.snapshots[0] < off {
		m.deleteSnapshot(m.snapshots[0])
	}
}

// removeStraySnapshots keeps snapshots at segment bases plus the newest
// stray one if it is beyond every segment (the one written at close), as
// Kafka's removeStraySnapshots.
func (m *producerStateManager) removeStraySnapshots(bases []int64) {
	isBase := make(map[int64]bool, len(bases))
	maxBase := int64(-1)
	for _, b := range bases {
		isBase[b] = true
		maxBase = max(maxBase, b)
	}
	stray := int64(-1)
	for _, o := range append([]int64(nil), m.snapshots...) {
		if isBase[o] {
			continue
		}
		if stray >= 0 {
			m.deleteSnapshot(stray)
		}
		stray = o
	}
	if stray >= 0 && stray < maxBase {
		m.deleteSnapshot(stray)
	}
}

// truncateAndReload rebuilds the in-memory state from the newest valid
// snapshot in (logStart, end] after dropping snapshots outside it; the
// caller then replays batches from mapEnd to end.
func (m *producerStateManager) truncateAndReload(logStart, end, nowMs int64) {
	for _, o := range append([]int64(nil), m.snapshots...) {
		if o > end || o <= logStart {
			m.deleteSnapshot(o)
		}
	}
	clear(m.producers)
	m.pending = m.pending[:0]
	for len(m.snapshots) > 0 {
		off := m.snapshots[len(m.snapshots)-1]
		b, err := os.ReadFile(snapshotPath(m.dir, off))
		var entries []producerEntry
		if err == nil {
			entries, err = decodeSnapshot(b)
		}
		if err != nil {
			m.deleteSnapshot(off)
			continue
		}
		for i := range entries {
			if !m.expired(&entries[i], nowMs) {
				e := entries[i]
				m.producers[e.id] = &e
			}
		}
		m.snapOffset, m.mapEnd = off, off
		return
	}
	m.snapOffset, m.mapEnd = logStart, logStart
}

// truncateFully resets to an empty state at offset (TruncateFullyAndStartAt).
func (m *producerStateManager) truncateFully(offset int64) {
	clear(m.producers)
	m.pending = m.pending[:0]
	for len(m.snapshots) > 0 {
		m.deleteSnapshot(m.snapshots[0])
	}
	m.snapOffset, m.mapEnd = 0, offset
}
