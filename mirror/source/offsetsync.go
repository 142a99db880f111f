package source

import (
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/mirror/records"
)

// maxOutstandingOffsetSyncs bounds the offset syncs in flight, as MM2's
// OffsetSyncWriter: a slow offset-syncs topic must not hold up
// replication, and newer syncs of a partition replace queued ones.
const maxOutstandingOffsetSyncs = 10

// offsetSyncWriter is MM2's OffsetSyncWriter: it decides, per replicated
// record, whether the (upstream, downstream) offset pair must be written
// now (pending), may wait for the next offset commit (delayed), or
// neither, and writes the pending ones with at most
// maxOutstandingOffsetSyncs in flight.
type offsetSyncWriter struct {
	// send writes one sync and calls done when the write finished
	// (whether or not it succeeded).
	send   func(s records.OffsetSync, done func())
	maxLag int64
	log    *slog.Logger

	mu          sync.Mutex
	outstanding int
	// pendingLen is pending.len(), read without the lock by
	// firePendingOffsetSyncs, which runs for every replicated record
	// and has nothing to do for almost all of them.
	pendingLen atomic.Int32
	pending    syncQueue
	delayed    syncQueue
	states     map[connect.TopicPartition]*partitionState
	closed     bool
}

func newOffsetSyncWriter(maxLag int64, send func(records.OffsetSync, func()), log *slog.Logger) *offsetSyncWriter {
	return &offsetSyncWriter{send: send, maxLag: maxLag, log: log, states: map[connect.TopicPartition]*partitionState{}}
}

// maybeQueueOffsetSyncs notes that the record at upstreamOffset of the
// source partition tp landed at downstreamOffset: a sync is queued to go
// now when the downstream is stale enough, else it waits for the next
// commit (promoteDelayedOffsetSyncs). afterSkips says the records
// between the previous one and this were held back by their provenance
// (skipRuns), which is not a gap that needs a sync.
func (w *offsetSyncWriter) maybeQueueOffsetSyncs(tp connect.TopicPartition, upstreamOffset, downstreamOffset int64, afterSkips bool) {
	w.maybeQueueOffsetSyncsOf(w.state(tp), tp, upstreamOffset, downstreamOffset, afterSkips)
}

// state returns tp's state, which a task may keep to spare the lookup
// per record (maybeQueueOffsetSyncsOf).
func (w *offsetSyncWriter) state(tp connect.TopicPartition) *partitionState {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := w.states[tp]
	if st == nil {
		st = &partitionState{previousUpstream: -1, previousDownstream: -1, lastSyncDownstream: -1}
		w.states[tp] = st
	}
	return st
}

// maybeQueueOffsetSyncsOf is maybeQueueOffsetSyncs with tp's state (from
// state).
func (w *offsetSyncWriter) maybeQueueOffsetSyncsOf(st *partitionState, tp connect.TopicPartition, upstreamOffset, downstreamOffset int64, afterSkips bool) {
	sync := records.OffsetSync{Topic: tp.Topic, Partition: tp.Partition, UpstreamOffset: upstreamOffset, DownstreamOffset: downstreamOffset}
	w.mu.Lock()
	defer w.mu.Unlock()
	if st.update(upstreamOffset, downstreamOffset, w.maxLag, afterSkips) {
		w.delayed.remove(tp)
		w.pending.put(tp, sync)
		w.pendingLen.Store(int32(w.pending.len()))
		st.shouldSync = false
	} else {
		w.delayed.putHinted(&st.delayedAt, tp, sync)
	}
}

// promoteDelayedOffsetSyncs makes the delayed syncs pending, so that a
// quiet partition's last offsets are synced at each commit and its
// consumers' translated offsets do not lag behind for good.
func (w *offsetSyncWriter) promoteDelayedOffsetSyncs() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.delayed.each(w.pending.put)
	w.delayed.clear()
	w.pendingLen.Store(int32(w.pending.len()))
}

// firePendingOffsetSyncs sends pending syncs, oldest first, while fewer
// than maxOutstandingOffsetSyncs are in flight; the rest wait for the
// next call.
func (w *offsetSyncWriter) firePendingOffsetSyncs() {
	for {
		if w.pendingLen.Load() == 0 {
			return
		}
		w.mu.Lock()
		if w.closed || w.pending.len() == 0 || w.outstanding >= maxOutstandingOffsetSyncs {
			w.mu.Unlock()
			return
		}
		s := w.pending.popFront()
		w.pendingLen.Store(int32(w.pending.len()))
		w.outstanding++
		w.mu.Unlock()
		w.send(s, w.release)
	}
}

func (w *offsetSyncWriter) release() {
	w.mu.Lock()
	w.outstanding--
	w.mu.Unlock()
}

// close stops sending; syncs still queued are dropped (the next task
// starts a new lifetime, whose first record is synced).
func (w *offsetSyncWriter) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
}

// partitionState is MM2's OffsetSyncWriter.PartitionState for one source
// partition.
type partitionState struct {
	previousUpstream, previousDownstream int64
	lastSyncDownstream                   int64
	shouldSync                           bool
	// delayedAt is where the partition's delayed sync was put last
	// (syncQueue.putHinted).
	delayedAt int
}

// update reports whether a sync must go now: the first record of this
// task's lifetime, a downstream offset that translation would put
// offset.lag.max or more behind, a gap upstream (compacted records,
// transaction markers, a seek; not records held back by their
// provenance), or a downstream that went back (the remote topic was
// recreated or truncated).
func (s *partitionState) update(upstream, downstream, maxLag int64, afterSkips bool) bool {
	first := s.lastSyncDownstream == -1
	// Translation puts a consumer one past the last sync, hence the +1.
	stale := downstream-(s.lastSyncDownstream+1) >= maxLag
	gap := upstream-s.previousUpstream != 1 && !afterSkips
	truncated := downstream < s.previousDownstream
	if first || stale || gap || truncated {
		s.lastSyncDownstream = downstream
		s.shouldSync = true
	}
	s.previousUpstream, s.previousDownstream = upstream, downstream
	return s.shouldSync
}

// syncQueue is an insertion-ordered map of one sync per partition (MM2's
// LinkedHashMap): replacing a partition's sync keeps its place. Removed
// entries are left as holes until the front passes them, so that popping
// and removing cost O(1) however many partitions a task has.
type syncQueue struct {
	items []syncItem
	head  int
	index map[connect.TopicPartition]int // live entries' positions in items
}

type syncItem struct {
	tp   connect.TopicPartition
	sync records.OffsetSync
	dead bool
}

func (q *syncQueue) len() int { return len(q.index) }

func (q *syncQueue) put(tp connect.TopicPartition, s records.OffsetSync) {
	if i, ok := q.index[tp]; ok {
		q.items[i].sync = s
		return
	}
	if q.index == nil {
		q.index = map[connect.TopicPartition]int{}
	}
	q.index[tp] = len(q.items)
	q.items = append(q.items, syncItem{tp: tp, sync: s})
}

// putHinted is put for a partition whose entry was at *hint: most
// replicated records replace their partition's delayed sync, and
// checking that place spares hashing the partition each time. *hint is
// updated when the entry is not there (removed, cleared or moved).
func (q *syncQueue) putHinted(hint *int, tp connect.TopicPartition, s records.OffsetSync) {
	if i := *hint; i >= q.head && i < len(q.items) && !q.items[i].dead && q.items[i].tp == tp {
		q.items[i].sync = s
		return
	}
	q.put(tp, s)
	*hint = q.index[tp]
}

func (q *syncQueue) remove(tp connect.TopicPartition) {
	if i, ok := q.index[tp]; ok {
		q.items[i].dead = true
		delete(q.index, tp)
	}
}

// popFront removes and returns the oldest entry; the queue must not be
// empty.
func (q *syncQueue) popFront() records.OffsetSync {
	for q.items[q.head].dead {
		q.head++
	}
	first := q.items[q.head]
	q.remove(first.tp)
	q.head++
	if q.head > len(q.items)/2 {
		q.compact()
	}
	return first.sync
}

// compact drops the holes.
func (q *syncQueue) compact() {
	live := q.items[:0]
	for _, it := range q.items[q.head:] {
		if !it.dead {
			q.index[it.tp] = len(live)
			live = append(live, it)
		}
	}
	clear(q.items[len(live):])
	q.items, q.head = live, 0
}

// each calls fn for the live entries in order.
func (q *syncQueue) each(fn func(connect.TopicPartition, records.OffsetSync)) {
	for _, it := range q.items[q.head:] {
		if !it.dead {
			fn(it.tp, it.sync)
		}
	}
}

func (q *syncQueue) clear() {
	clear(q.items)
	q.items, q.head = q.items[:0], 0
	clear(q.index)
}
