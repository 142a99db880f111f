package group

import (
	"context"
	"fmt"
	"sync"
)

// Record is one __consumer_offsets record. A nil Value is a tombstone.
type Record struct {
	Key, Value []byte
}

// Store is how the coordinator persists to __consumer_offsets; the broker
// backs it with real partition logs.
type Store interface {
	// Append writes the records to partition p as one batch and returns
	// once they are durable/committed.
	Append(ctx context.Context, partition int32, records []Record) error
	// Replay calls fn for each record of partition p from its log start,
	// in offset order.
	Replay(partition int32, fn func(offset int64, key, value []byte) error) error
}

var _ Store = (*MemStore)(nil)

// MemStore is the in-memory twin of the broker's __consumer_offsets logs:
// every appended record is kept (no compaction), so a Coordinator built on
// the same MemStore after a "restart" replays exactly what was written.
// SetFailAppend injects errors, for tests of the coordinator's error paths.
type MemStore struct {
	mu    sync.Mutex
	parts map[int32][]memRecord
	// failAppend, when set, is called before each Append; a non-nil
	// error fails that Append without storing anything.
	failAppend func(partition int32, records []Record) error
}

type memRecord struct {
	offset     int64
	key, value []byte
}

// NewMemStore returns an empty MemStore.
func NewMemStore() *MemStore { return &MemStore{parts: make(map[int32][]memRecord)} }

// Append stores copies of the records at the end of partition p.
func (s *MemStore) Append(_ context.Context, p int32, records []Record) error {
	s.mu.Lock()
	fail := s.failAppend
	s.mu.Unlock()
	if fail != nil {
		if err := fail(p, records); err != nil {
			return fmt.Errorf("memstore append to partition %d: %w", p, err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.parts == nil {
		s.parts = make(map[int32][]memRecord)
	}
	log := s.parts[p]
	for _, r := range records {
		var v []byte
		if r.Value != nil {
			v = append([]byte{}, r.Value...)
		}
		log = append(log, memRecord{offset: int64(len(log)), key: append([]byte(nil), r.Key...), value: v})
	}
	s.parts[p] = log
	return nil
}

// Replay calls fn with every record of partition p in offset order. It
// works on a snapshot, so fn may call Append.
func (s *MemStore) Replay(p int32, fn func(offset int64, key, value []byte) error) error {
	s.mu.Lock()
	log := append([]memRecord(nil), s.parts[p]...)
	s.mu.Unlock()
	for _, r := range log {
		if err := fn(r.offset, r.key, r.value); err != nil {
			return err
		}
	}
	return nil
}

// Records returns a copy of partition p's records, for tests that inspect
// what was written.
func (s *MemStore) Records(p int32) []Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Record, 0, len(s.parts[p]))
	for _, r := range s.parts[p] {
		out = append(out, Record{Key: r.key, Value: r.value})
	}
	return out
}

// SetFailAppend installs (or, with nil, removes) the Append fault hook.
func (s *MemStore) SetFailAppend(fn func(partition int32, records []Record) error) {
	s.mu.Lock()
	s.failAppend = fn
	s.mu.Unlock()
}
