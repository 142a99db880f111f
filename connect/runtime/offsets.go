package runtime

import (
	"context"
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/storage"
)

// offsetReader reads a source connector's committed offsets.
type offsetReader struct {
	store     storage.OffsetStore
	connector string
}

var _ connect.OffsetReader = (*offsetReader)(nil)

func (r *offsetReader) Offset(partition map[string]any) (map[string]any, error) {
	got, err := r.store.Get(context.Background(), r.connector, []map[string]any{partition})
	if err != nil {
		return nil, err
	}
	return got[0], nil
}

func (r *offsetReader) Offsets(partitions []map[string]any) (map[string]map[string]any, error) {
	got, err := r.store.Get(context.Background(), r.connector, partitions)
	if err != nil {
		return nil, err
	}
	out := make(map[string]map[string]any, len(partitions))
	for i, p := range partitions {
		if got[i] != nil {
			out[storage.PartitionKey(p)] = got[i]
		}
	}
	return out, nil
}

// submittedRecords tracks the source records sent to Kafka per source
// partition, in order, so that only offsets of records acknowledged by
// the brokers — and of every record before them in the same partition —
// are committed (Kafka's SubmittedRecords). Records may be acknowledged
// out of order across Kafka partitions; a source partition's committable
// offset is that of the last record of its acknowledged prefix.
//
// The producer callbacks acknowledge lock-free (an atomic flag per
// record); the mutex guards the per-partition queues, which only the
// task's loop (submit) and the committer (committable) change.
type submittedRecords struct {
	mu       sync.Mutex
	parts    map[string]*sourcePartition
	inFlight atomic.Int64
	// lastMap/lastPart cache the partition map seen last and its queue:
	// connectors usually pass the same map for a run of records, and
	// encoding it for every record would dominate the cost.
	lastMap  uintptr
	lastPart *sourcePartition
	// free are outgoing records done with, for the task to use again
	// (sourceTask.outRecord): a record's allocation is most of what the
	// runtime allocates per record, and fresh memory for each costs more
	// (zeroing, page faults, collections) than reusing it.
	free []*outRecord
}

// maxFreeRecords bounds submittedRecords.free (a few MB per task).
const maxFreeRecords = 1 << 14

// sourcePartition is one source partition's records in submission order,
// in fixed-size chunks so that a long queue never copies itself to grow.
type sourcePartition struct {
	partition map[string]any
	chunks    [][]*submittedRecord
	head      int // index of the oldest record in chunks[0]
	// trimmed: records of the acknowledged prefix were removed since the
	// last committable, the last of them with offset trimmedOffset.
	trimmed       bool
	trimmedOffset offsetRef
}

// offsetRef is a record's source offset as the task gave it: a map, or a
// connect.OffsetFunc and its argument, turned into a map only when it is
// committed.
type offsetRef struct {
	m   map[string]any
	fn  connect.OffsetFunc
	arg int64
}

func offsetOf(r *connect.Record) offsetRef {
	return offsetRef{m: r.SourceOffset, fn: r.LazyOffset, arg: r.OffsetArg}
}

func (o offsetRef) value() map[string]any {
	if o.m != nil || o.fn == nil {
		return o.m
	}
	return o.fn(o.arg)
}

const chunkSize = 1024

type submittedRecord struct {
	part   *sourcePartition
	offset offsetRef
	acked  atomic.Bool
	// out is the outgoing record this is part of (nil for records that
	// were not sent): once acknowledged and out of the queue, nothing
	// refers to it any more and the task may use it again (free).
	out *outRecord
}

func newSubmittedRecords() *submittedRecords {
	return &submittedRecords{parts: map[string]*sourcePartition{}}
}

// submit records a record about to be sent. A record without a source
// partition is counted (for flushes) but has no offset to commit.
func (s *submittedRecords) submit(partition map[string]any, offset offsetRef) *submittedRecord {
	r := &submittedRecord{}
	s.mu.Lock()
	s.submitLocked(r, partition, offset)
	s.mu.Unlock()
	return r
}

// submitLocked is submit with a record the caller allocated, under s.mu
// (the task's loop holds it for a whole poll's records).
func (s *submittedRecords) submitLocked(r *submittedRecord, partition map[string]any, offset offsetRef) {
	s.inFlight.Add(1)
	if partition == nil {
		return
	}
	ptr := reflect.ValueOf(partition).Pointer()
	p := s.lastPart
	if ptr != s.lastMap || ptr == 0 || p == nil {
		key := storage.PartitionKey(partition)
		if p = s.parts[key]; p == nil {
			p = &sourcePartition{partition: partition}
			s.parts[key] = p
		}
		s.lastMap, s.lastPart = ptr, p
	}
	r.part, r.offset = p, offset
	last := len(p.chunks) - 1
	if last < 0 || len(p.chunks[last]) == chunkSize {
		if last >= 0 {
			// Drop the acknowledged prefix now rather than at the next
			// offset commit (offset.flush.interval.ms, a minute by
			// default): the queue then holds about the records in
			// flight, not a minute's worth — and with them the records
			// the producer is done with (the runtime's outRecord holds
			// the task's record), which at a million records a second
			// was gigabytes kept alive and scanned by every collection.
			p.popAcked(s)
			last = len(p.chunks) - 1
		}
		if last < 0 || len(p.chunks[last]) == chunkSize {
			p.chunks = append(p.chunks, make([]*submittedRecord, 0, chunkSize))
			last = len(p.chunks) - 1
		}
	}
	p.chunks[last] = append(p.chunks[last], r)
}

// ack marks a record acknowledged (or dropped/skipped: done with).
func (s *submittedRecords) ack(r *submittedRecord) {
	r.acked.Store(true)
	s.inFlight.Add(-1)
}

// committable removes each partition's acknowledged prefix and returns
// the offset of its last record, per partition.
func (s *submittedRecords) committable() map[string]connect.SourcePartitionOffset {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]connect.SourcePartitionOffset{}
	for key, p := range s.parts {
		p.popAcked(s)
		if p.trimmed {
			out[key] = connect.SourcePartitionOffset{Partition: p.partition, Offset: p.trimmedOffset.value()}
			p.trimmed, p.trimmedOffset = false, offsetRef{}
		}
	}
	return out
}

// popAcked removes the partition's acknowledged prefix, noting the
// offset of its last record for the next committable, and gives their
// outgoing records to s.free. Call with s.mu held.
func (p *sourcePartition) popAcked(s *submittedRecords) {
	for len(p.chunks) > 0 {
		c := p.chunks[0]
		for p.head < len(c) && c[p.head].acked.Load() {
			r := c[p.head]
			p.trimmed, p.trimmedOffset = true, r.offset
			if r.out != nil && len(s.free) < maxFreeRecords {
				s.free = append(s.free, r.out)
			}
			c[p.head] = nil
			p.head++
		}
		if p.head < len(c) || len(c) < chunkSize {
			break // an unacknowledged record, or the chunk still fills
		}
		p.chunks, p.head = p.chunks[1:], 0
	}
}

// pending returns how many submitted records are not yet acknowledged.
func (s *submittedRecords) pending() int { return int(s.inFlight.Load()) }
