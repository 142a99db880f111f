package runtime

import (
	"context"
	"reflect"
	"sync"

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
type submittedRecords struct {
	mu       sync.Mutex
	parts    map[string]*sourcePartition
	inFlight int
	// lastMap/lastKey cache the key of the partition map seen last:
	// connectors usually pass the same map for a run of records, and
	// encoding it for every record would dominate the cost.
	lastMap uintptr
	lastKey string
}

type sourcePartition struct {
	partition map[string]any
	recs      []*submittedRecord
	head      int
}

type submittedRecord struct {
	part   *sourcePartition
	offset map[string]any
	acked  bool
}

func newSubmittedRecords() *submittedRecords {
	return &submittedRecords{parts: map[string]*sourcePartition{}}
}

// submit records a record about to be sent. A record without a source
// partition is counted (for flushes) but has no offset to commit.
func (s *submittedRecords) submit(partition, offset map[string]any) *submittedRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inFlight++
	if partition == nil {
		return &submittedRecord{}
	}
	ptr := reflect.ValueOf(partition).Pointer()
	var key string
	if ptr == s.lastMap && ptr != 0 {
		key = s.lastKey
	} else {
		key = storage.PartitionKey(partition)
		s.lastMap, s.lastKey = ptr, key
	}
	p := s.parts[key]
	if p == nil {
		p = &sourcePartition{partition: partition}
		s.parts[key] = p
	}
	r := &submittedRecord{part: p, offset: offset}
	p.recs = append(p.recs, r)
	return r
}

// ack marks a record acknowledged (or dropped/skipped: done with).
func (s *submittedRecords) ack(r *submittedRecord) {
	s.mu.Lock()
	r.acked = true
	s.inFlight--
	s.mu.Unlock()
}

// committable removes each partition's acknowledged prefix and returns
// the offset of its last record, per partition.
func (s *submittedRecords) committable() map[string]connect.SourcePartitionOffset {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]connect.SourcePartitionOffset{}
	for key, p := range s.parts {
		i := p.head
		for i < len(p.recs) && p.recs[i].acked {
			i++
		}
		if i == p.head {
			continue
		}
		out[key] = connect.SourcePartitionOffset{Partition: p.partition, Offset: p.recs[i-1].offset}
		for j := p.head; j < i; j++ {
			p.recs[j] = nil
		}
		p.head = i
		if p.head == len(p.recs) {
			p.recs, p.head = p.recs[:0], 0
			if cap(p.recs) > 4096 {
				p.recs = nil
			}
		} else if p.head > len(p.recs)/2 && p.head > 1024 {
			n := copy(p.recs, p.recs[p.head:])
			p.recs, p.head = p.recs[:n], 0
		}
	}
	return out
}

// pending returns how many submitted records are not yet acknowledged.
func (s *submittedRecords) pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inFlight
}
