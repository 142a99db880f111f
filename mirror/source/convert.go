package source

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/mirror/policy"
)

// partition is what a task knows of one assigned source partition.
type partition struct {
	source connect.TopicPartition
	// sourcePartition is the record's source partition map, shared by
	// all of the partition's records (the runtime tracks offsets per map
	// and recognises a repeated map cheaply).
	sourcePartition map[string]any
	remote          string
	// identity: the remote topic has the source's name, so loops are
	// stopped by the provenance header instead of by the name.
	identity bool
	skips    skipRuns
	// syncState is the partition's offset-sync state (offsetSyncWriter.state).
	syncState *partitionState
	m         *partitionMetrics
	key       metricKey
}

// batch holds a poll's records, their headers and what CommitRecord
// needs of each (meta) in one array each rather than one allocation per
// record. Once the target has acknowledged every record of a batch
// (pending reaches 0) the task uses its arrays again for a later poll
// (batches): a poll's records are the bulk of what a task allocates, and
// fresh arrays for every poll cost more in zeroing, page faults and
// garbage collection than copying the records does.
type batch struct {
	recs []connect.SourceRecord
	meta []recordMeta // meta[i] is recs[i]'s
	hdrs []connect.Header
	ptrs []*connect.SourceRecord // what Poll returns: &recs[i]
	// pending counts the records not yet through CommitRecord.
	pending atomic.Int64
}

// recordMeta is what CommitRecord needs of a record: its partition and
// exact upstream offset (the record's SourceOffset may be the run's
// shared one, see Task.Poll).
type recordMeta struct {
	p      *partition
	offset int64
}

// newBatch makes room for n records with headers headers in all (each
// identity-named record may add one).
func newBatch(n, headers int) *batch {
	return &batch{recs: make([]connect.SourceRecord, 0, n), meta: make([]recordMeta, 0, n),
		hdrs: make([]connect.Header, 0, headers), ptrs: make([]*connect.SourceRecord, 0, n)}
}

// fits reports whether the batch has room for n records and headers
// headers without growing.
func (b *batch) fits(n, headers int) bool {
	return cap(b.recs) >= n && cap(b.hdrs) >= headers
}

// reset empties the batch for another poll, dropping its references to
// the records' bytes and maps so that they can be collected meanwhile.
func (b *batch) reset() {
	clear(b.recs)
	clear(b.meta)
	clear(b.hdrs)
	clear(b.ptrs)
	b.recs, b.meta, b.hdrs, b.ptrs = b.recs[:0], b.meta[:0], b.hdrs[:0], b.ptrs[:0]
}

// recordSize is the size of one SourceRecord in a batch's array.
const recordSize = unsafe.Sizeof(connect.SourceRecord{})

// index returns r's index in the batch, or -1 when r is not one of its
// records.
func (b *batch) index(r *connect.SourceRecord) int {
	if len(b.recs) == 0 {
		return -1
	}
	off := uintptr(unsafe.Pointer(r)) - uintptr(unsafe.Pointer(&b.recs[0]))
	if off >= uintptr(len(b.recs))*recordSize || off%recordSize != 0 {
		return -1
	}
	return int(off / recordSize)
}

// batches are a task's batches with records in flight (live).
// CommitRecord finds a record's batch among them by address; live is
// replaced, not changed, so that it reads the list without the lock.
// Batches done with go to freeBatches, shared by the tasks of the
// process, which the garbage collector empties when they are not used:
// a task that goes quiet does not keep its large arrays.
type batches struct {
	mu   sync.Mutex
	live atomic.Pointer[[]*batch]
	last atomic.Pointer[batch] // the batch CommitRecord found last
}

var freeBatches sync.Pool // *batch, reset

// get returns an empty batch with room for n records and headers
// headers, reused when a free one has room.
func (bs *batches) get(n, headers int) *batch {
	for range 2 {
		b, _ := freeBatches.Get().(*batch)
		if b == nil {
			break
		}
		if b.fits(n, headers) {
			return b
		}
		// Too small for this poll: left to the collector.
	}
	// Rounded up, so that a batch fits the next polls of about this size.
	return newBatch(roundUp(n), roundUp(headers))
}

func roundUp(n int) int {
	size := 64
	for size < n {
		size *= 2
	}
	return size
}

// track makes b live with its records pending; an empty batch is put
// back at once.
func (bs *batches) track(b *batch) {
	if len(b.recs) == 0 {
		bs.put(b)
		return
	}
	b.pending.Store(int64(len(b.recs)))
	bs.mu.Lock()
	var live []*batch
	if p := bs.live.Load(); p != nil {
		live = append(live, *p...)
	}
	live = append(live, b)
	bs.live.Store(&live)
	bs.mu.Unlock()
}

// find returns the live batch holding r and r's index in it.
func (bs *batches) find(r *connect.SourceRecord) (*batch, int) {
	if b := bs.last.Load(); b != nil {
		if i := b.index(r); i >= 0 {
			return b, i
		}
	}
	p := bs.live.Load()
	if p == nil {
		return nil, -1
	}
	for _, b := range *p {
		if i := b.index(r); i >= 0 {
			bs.last.Store(b)
			return b, i
		}
	}
	return nil, -1
}

// done notes that one of b's records went through CommitRecord; after
// the last one b is free for another poll.
func (bs *batches) done(b *batch) {
	if b.pending.Add(-1) != 0 {
		return
	}
	bs.last.CompareAndSwap(b, nil)
	bs.mu.Lock()
	if p := bs.live.Load(); p != nil {
		live := make([]*batch, 0, len(*p))
		for _, x := range *p {
			if x != b {
				live = append(live, x)
			}
		}
		bs.live.Store(&live)
	}
	bs.mu.Unlock()
	bs.put(b)
}

func (bs *batches) put(b *batch) {
	b.reset()
	freeBatches.Put(b)
}

// convertRecord is MirrorSourceTask.convertRecord: the record for the
// remote topic's partition of the same number, key, value and headers as
// bytes, the timestamp kept. With identity naming it returns nil for a
// record that came from the target (its provenance says so) and stamps
// the others with the source alias; sourceAlias and targetAlias name the
// flow. The record is appended to b, which must have room for it. Its
// source offset is offset when not nil (a map shared by a run of
// records, see Task.Poll), else its own.
func (b *batch) convertRecord(p *partition, r *kgo.Record, sourceAlias, targetAlias string, offset map[string]any) *connect.SourceRecord {
	var provenance []byte
	seen := false
	if p.identity {
		for _, h := range r.Headers {
			// Only the last one counts, as Headers.Last.
			if h.Key == policy.ProvenanceHeader {
				provenance, seen = h.Value, true
			}
		}
		if seen && policy.LoopsBack(provenance, targetAlias) {
			return nil
		}
	}
	if offset == nil {
		offset = wrapOffset(r.Offset)
	}
	b.recs = append(b.recs, connect.SourceRecord{
		Topic:           p.remote,
		Partition:       r.Partition,
		KeySchema:       connect.OptionalBytesSchema,
		ValueSchema:     connect.BytesSchema,
		Timestamp:       r.Timestamp.UnixMilli(),
		SourcePartition: p.sourcePartition,
		SourceOffset:    offset,
		Offset:          -1,
		TimestampType:   connect.NoTimestampType,
	})
	b.meta = append(b.meta, recordMeta{p: p, offset: r.Offset})
	out := &b.recs[len(b.recs)-1]
	b.ptrs = append(b.ptrs, out)
	if r.Key != nil {
		out.Key = r.Key
	}
	if r.Value != nil {
		out.Value = r.Value
	} else {
		// A tombstone: MM2 keeps BYTES_SCHEMA, which a converter other
		// than ByteArrayConverter refuses for null.
		out.ValueSchema = connect.OptionalBytesSchema
	}
	if len(r.Headers) == 0 && !p.identity {
		return out
	}
	// The record's share of the batch's headers, capped so that nothing
	// appended to it reaches the next record's.
	n := len(r.Headers)
	if p.identity && !seen {
		n++
	}
	start := len(b.hdrs)
	for _, h := range r.Headers {
		var v any
		if h.Value != nil {
			v = h.Value
		}
		b.hdrs = append(b.hdrs, connect.Header{Key: h.Key, Schema: connect.BytesSchema, Value: v})
	}
	out.Headers = b.hdrs[start : len(b.hdrs) : start+n]
	if !p.identity {
		return out
	}
	stamped := policy.AppendProvenance(provenance, sourceAlias)
	if !seen {
		b.hdrs = append(b.hdrs, connect.Header{Key: policy.ProvenanceHeader, Schema: connect.BytesSchema, Value: stamped})
		out.Headers = b.hdrs[start : start+n : start+n]
		return out
	}
	for i := len(out.Headers) - 1; i >= 0; i-- {
		if out.Headers[i].Key == policy.ProvenanceHeader {
			out.Headers[i].Value = stamped
			break
		}
	}
	return out
}
