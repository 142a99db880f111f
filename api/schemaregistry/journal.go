package schemaregistry

import (
	"context"
	"sync"
)

// Journal is the ordered, durable log the registry keeps its records
// in: the compacted _schemas topic (KafkaJournal), or memory
// (MemJournal) for tests and for a registry without Kafka.
type Journal interface {
	// Start delivers every record, from the first, to apply in log order
	// and keeps delivering new ones until Close. It returns once the
	// records that existed when it was called have been delivered.
	Start(ctx context.Context, apply func(Record)) error
	// Append writes records durably (acks=all) and returns the offset of
	// the last one.
	Append(ctx context.Context, recs ...Record) (int64, error)
	// EndOffset is the offset the next record will get: once every
	// record below it was applied, the reader is up to date.
	EndOffset(ctx context.Context) (int64, error)
	Close() error
}

// Elector says which registry instance writes. Only the leader appends
// to the journal, so ids and versions are assigned by one instance at a
// time; the others forward writes to it over HTTP.
type Elector interface {
	Leader() Leader
}

// Leader is the current writer.
type Leader struct {
	Known bool
	Self  bool
	// URL is the leader's advertised registry URL (for forwarding).
	URL string
}

// SelfElector makes its instance the writer: for a single registry.
type SelfElector struct{}

func (SelfElector) Leader() Leader { return Leader{Known: true, Self: true} }

var (
	_ Journal = (*MemJournal)(nil)
	_ Elector = SelfElector{}
)

// MemJournal is an in-memory Journal, the twin of KafkaJournal for unit
// tests. Several registries may share one to act as instances of one
// cluster. Records are delivered synchronously from Append; the lock
// order is MemJournal.mu, then whatever apply takes.
type MemJournal struct {
	mu      sync.Mutex
	records []Record
	subs    []func(Record)
	// FailAppend, when set, fails every Append (fault injection).
	FailAppend error
}

// NewMemJournal returns an empty journal.
func NewMemJournal() *MemJournal { return &MemJournal{} }

func (j *MemJournal) Start(ctx context.Context, apply func(Record)) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, r := range j.records {
		apply(r)
	}
	j.subs = append(j.subs, apply)
	return nil
}

func (j *MemJournal) Append(ctx context.Context, recs ...Record) (int64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.FailAppend != nil {
		return 0, j.FailAppend
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	var last int64
	for _, r := range recs {
		r.Offset = int64(len(j.records))
		last = r.Offset
		j.records = append(j.records, r)
		for _, s := range j.subs {
			s(r)
		}
	}
	return last, nil
}

func (j *MemJournal) EndOffset(ctx context.Context) (int64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return int64(len(j.records)), nil
}

// Records returns a copy of everything appended.
func (j *MemJournal) Records() []Record {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]Record(nil), j.records...)
}

// Close stops deliveries to every subscriber (the records stay for a
// new Start). A registry given a journal in its Config does not close
// it, so instances sharing one are closed by their test.
func (j *MemJournal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.subs = nil
	return nil
}
