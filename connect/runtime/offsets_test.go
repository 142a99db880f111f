package runtime

import (
	"testing"
)

// committable returns, per source partition, the offset of the last
// record of the acknowledged prefix, whether the prefix was removed at
// the commit or earlier while records were submitted (which keeps the
// queue to about the records in flight).
func TestSubmittedRecordsCommittable(t *testing.T) {
	s := newSubmittedRecords()
	part := map[string]any{"p": 1}
	other := map[string]any{"p": 2}
	// Odd records carry lazy offsets (connect.Record.LazyOffset), made
	// only when committed.
	made := 0
	lazy := func(arg int64) map[string]any { made++; return map[string]any{"o": int(arg)} }
	offset := func(i int) offsetRef {
		if i%2 == 1 {
			return offsetRef{fn: lazy, arg: int64(i)}
		}
		return offsetRef{m: map[string]any{"o": i}}
	}
	n := 3*chunkSize + 10
	recs := make([]*submittedRecord, n)
	for i := range n {
		recs[i] = s.submit(part, offset(i))
	}
	tomb := s.submit(other, offsetRef{})
	if got := s.committable(); len(got) != 0 {
		t.Fatalf("nothing acknowledged, committable %v", got)
	}
	// Acknowledged out of order: only the prefix counts.
	s.ack(recs[2])
	s.ack(recs[0])
	if got := s.committable(); got["{\"p\":1}"].Offset["o"] != 0 || len(got) != 1 {
		t.Fatalf("committable %v, want offset 0", got)
	}
	s.ack(recs[1])
	for i := 3; i < 2*chunkSize+5; i++ {
		s.ack(recs[i])
	}
	s.ack(tomb)
	// More submissions cross chunk boundaries and drop the acknowledged
	// prefix before the commit.
	more := make([]*submittedRecord, 2*chunkSize)
	for i := range more {
		more[i] = s.submit(part, offset(n+i))
	}
	p := s.parts["{\"p\":1}"]
	if p == nil {
		t.Fatalf("partitions %v", s.parts)
	}
	queued := 0
	for i, c := range p.chunks {
		if i == 0 {
			queued += len(c) - p.head
		} else {
			queued += len(c)
		}
	}
	if want := n + 2*chunkSize - (2*chunkSize + 5); queued != want {
		t.Errorf("%d records queued, want the %d not acknowledged", queued, want)
	}
	got := s.committable()
	if o := got["{\"p\":1}"].Offset["o"]; o != 2*chunkSize+4 {
		t.Errorf("committable offset %v, want %d", o, 2*chunkSize+4)
	}
	if o, ok := got["{\"p\":2}"]; !ok || o.Offset != nil {
		t.Errorf("a null offset must be committed as null (a tombstone): %v, %v", o, ok)
	}
	if got := s.committable(); len(got) != 0 {
		t.Errorf("nothing new acknowledged, committable %v", got)
	}
	for _, r := range recs[2*chunkSize+5:] {
		s.ack(r)
	}
	for _, r := range more {
		s.ack(r)
	}
	if got := s.committable(); got["{\"p\":1}"].Offset["o"] != n+2*chunkSize-1 {
		t.Errorf("committable %v, want offset %d", got, n+2*chunkSize-1)
	}
	if s.pending() != 0 {
		t.Errorf("pending %d", s.pending())
	}
	if made > 2 {
		t.Errorf("%d lazy offsets made for 3 commits, want one per committed odd offset (2)", made)
	}
}

// Outgoing records leave the queue for reuse once acknowledged, in
// order; those not acknowledged, and records that were never sent, stay
// out of the free list.
func TestSubmittedRecordsFreeOutRecords(t *testing.T) {
	s := newSubmittedRecords()
	part := map[string]any{"p": 1}
	ors := make([]*outRecord, 3)
	s.mu.Lock()
	for i := range ors {
		ors[i] = &outRecord{}
		ors[i].sub.out = ors[i]
		s.submitLocked(&ors[i].sub, part, offsetRef{m: map[string]any{"o": i}})
	}
	s.mu.Unlock()
	skipped := s.submit(part, offsetRef{m: map[string]any{"o": 3}})
	s.ack(&ors[0].sub)
	s.ack(&ors[2].sub)
	s.ack(skipped)
	s.committable()
	if len(s.free) != 1 || s.free[0] != ors[0] {
		t.Fatalf("free %v, want only the first record (the second is not acknowledged)", s.free)
	}
	s.ack(&ors[1].sub)
	s.committable()
	if len(s.free) != 3 || s.free[1] != ors[1] || s.free[2] != ors[2] {
		t.Fatalf("free %v, want the three sent records", s.free)
	}
}
