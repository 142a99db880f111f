package source

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/mirror/policy"
	"github.com/fjordhq/fjord/mirror/records"
)

func testPartition(t *testing.T, policyClass, topic string) *partition {
	t.Helper()
	p, err := policy.New(map[string]string{policy.ClassConfig: policyClass})
	if err != nil {
		t.Fatal(err)
	}
	tp := connect.TopicPartition{Topic: topic, Partition: 2}
	remote := p.FormatRemoteTopic("a", topic)
	return &partition{source: tp, sourcePartition: wrapPartition(tp, "a"), remote: remote, identity: remote == topic}
}

func TestConvertRecord(t *testing.T) {
	p := testPartition(t, policy.DefaultClass, "orders")
	ts := time.UnixMilli(1_700_000_000_123)
	r := &kgo.Record{Topic: "orders", Partition: 2, Offset: 41, Timestamp: ts, Key: []byte("k"), Value: []byte("v"),
		Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("1")}, {Key: "h", Value: nil}, {Key: "e", Value: []byte{}}}}
	got := newBatch(1, 8).convertRecord(p, r, "a", "b", nil)
	want := &connect.SourceRecord{
		Topic: "a.orders", Partition: 2,
		KeySchema: connect.OptionalBytesSchema, Key: []byte("k"),
		ValueSchema: connect.BytesSchema, Value: []byte("v"),
		Timestamp: 1_700_000_000_123,
		Headers: connect.Headers{
			{Key: "h", Schema: connect.BytesSchema, Value: []byte("1")},
			{Key: "h", Schema: connect.BytesSchema, Value: nil},
			{Key: "e", Schema: connect.BytesSchema, Value: []byte{}},
		},
		SourcePartition: map[string]any{"cluster": "a", "topic": "orders", "partition": int32(2)},
		SourceOffset:    map[string]any{"offset": int64(41)},
		Offset:          -1, TimestampType: connect.NoTimestampType,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("convertRecord =\n%+v\nwant\n%+v", got, want)
	}
	// Every record of the partition shares one source partition map.
	if reflect.ValueOf(got.SourcePartition).Pointer() != reflect.ValueOf(p.sourcePartition).Pointer() {
		t.Error("the source partition map is not shared")
	}

	// Null key and tombstone stay null.
	got = newBatch(1, 8).convertRecord(p, &kgo.Record{Topic: "orders", Partition: 2, Offset: 42, Timestamp: ts}, "a", "b", nil)
	if got.Key != nil || got.Value != nil || got.Headers != nil {
		t.Errorf("null key/value/headers became %v/%v/%v", got.Key, got.Value, got.Headers)
	}
	if !got.ValueSchema.Optional {
		t.Error("a tombstone's value schema must be optional")
	}
}

func TestConvertRecordProvenance(t *testing.T) {
	p := testPartition(t, policy.IdentityClass, "orders")
	if !p.identity || p.remote != "orders" {
		t.Fatalf("identity policy named the remote topic %q", p.remote)
	}
	prov := func(r *connect.SourceRecord) []byte {
		h, ok := r.Headers.Last(policy.ProvenanceHeader)
		if !ok {
			t.Fatal("no provenance header")
		}
		return h.Value.([]byte)
	}
	// A producer's record: stamped with the source alias, other headers kept.
	got := newBatch(1, 8).convertRecord(p, &kgo.Record{Topic: "orders", Partition: 2, Value: []byte("v"),
		Headers: []kgo.RecordHeader{{Key: "x", Value: []byte("y")}}}, "a", "b", nil)
	if got == nil || !bytes.Equal(prov(got), []byte("a")) || got.Headers[0].Key != "x" || len(got.Headers) != 2 {
		t.Fatalf("stamped record: %+v", got)
	}
	// A record that came from c through a: the header grows in place.
	got = newBatch(1, 8).convertRecord(p, &kgo.Record{Topic: "orders", Partition: 2, Value: []byte("v"),
		Headers: []kgo.RecordHeader{{Key: policy.ProvenanceHeader, Value: []byte("c")}, {Key: "x", Value: []byte("y")}}}, "a", "b", nil)
	if got == nil || !bytes.Equal(prov(got), []byte("c,a")) || got.Headers[0].Key != policy.ProvenanceHeader || len(got.Headers) != 2 {
		t.Fatalf("extended record: %+v", got)
	}
	// A record that came from b: not sent back to b.
	if got := newBatch(1, 8).convertRecord(p, &kgo.Record{Topic: "orders", Partition: 2, Value: []byte("v"),
		Headers: []kgo.RecordHeader{{Key: policy.ProvenanceHeader, Value: []byte("b")}}}, "a", "b", nil); got != nil {
		t.Fatalf("a record from the target was replicated back: %+v", got)
	}
	// Default naming never stamps: names stop the loops there.
	d := testPartition(t, policy.DefaultClass, "orders")
	got = newBatch(1, 8).convertRecord(d, &kgo.Record{Topic: "orders", Partition: 2, Value: []byte("v"),
		Headers: []kgo.RecordHeader{{Key: policy.ProvenanceHeader, Value: []byte("b")}}}, "a", "b", nil)
	if got == nil || !bytes.Equal(prov(got), []byte("b")) {
		t.Fatalf("default policy touched the header: %+v", got)
	}
}

// Records of one batch share its header array: each keeps its own.
func TestBatchKeepsRecordsApart(t *testing.T) {
	p := testPartition(t, policy.IdentityClass, "orders")
	b := newBatch(3, 2) // fewer headers than needed: the array grows
	var out []*connect.SourceRecord
	for i := range 3 {
		r := &kgo.Record{Topic: "orders", Partition: 2, Offset: int64(i), Value: []byte{byte(i)},
			Headers: []kgo.RecordHeader{{Key: "n", Value: []byte{byte(i)}}}}
		if i == 1 {
			r.Headers = append(r.Headers, kgo.RecordHeader{Key: policy.ProvenanceHeader, Value: []byte("c")})
		}
		out = append(out, b.convertRecord(p, r, "a", "b", nil))
	}
	want := []string{"a", "c,a", "a"}
	for i, r := range out {
		if len(r.Headers) != 2 || r.Headers[0].Key != "n" || r.Headers[0].Value.([]byte)[0] != byte(i) {
			t.Errorf("record %d headers %+v", i, r.Headers)
			continue
		}
		if h, _ := r.Headers.Last(policy.ProvenanceHeader); string(h.Value.([]byte)) != want[i] {
			t.Errorf("record %d provenance %q, want %q", i, h.Value, want[i])
		}
		if r.Value.([]byte)[0] != byte(i) || unwrapOffset(r.SourceOffset) != int64(i) {
			t.Errorf("record %d is %+v", i, r)
		}
	}
}

// A partition's records polled together share the source offset before
// the first of them, except the last, which has its own: a commit of
// part of them stores an offset that copies them again, never one past
// a record not acknowledged. Acknowledgements still see each record's
// own offset (offset syncs, metrics), and the batch is given back once
// all of its records were acknowledged.
func TestPollSharesSourceOffsets(t *testing.T) {
	p := testPartition(t, policy.IdentityClass, "orders")
	p.key = metricKey{source: "a", target: "b", topic: "orders", partition: 2}
	p.m = metrics.acquire(p.key)
	defer metrics.release(p.key)
	var synced []records.OffsetSync
	task := &Task{s: &settings{sourceAlias: "a", targetAlias: "b"}, parts: map[connect.TopicPartition]*partition{p.source: p},
		syncs: newOffsetSyncWriter(100, func(s records.OffsetSync, done func()) { synced = append(synced, s); done() }, nil)}
	p.syncState = task.syncs.state(p.source)
	rec := func(offset int64, from string) *kgo.Record {
		r := &kgo.Record{Topic: "orders", Partition: 2, Offset: offset, Value: []byte{byte(offset)}}
		if from != "" {
			r.Headers = []kgo.RecordHeader{{Key: policy.ProvenanceHeader, Value: []byte(from)}}
		}
		return r
	}
	b := task.batches.get(4, 4)
	// 13 came from b (identity naming): held back, so 12 is the last sent.
	task.convertFetched(b, p, []*kgo.Record{rec(10, ""), rec(11, ""), rec(12, "c"), rec(13, "b")}, 0)
	out := b.ptrs
	task.batches.track(b)
	if len(out) != 3 {
		t.Fatalf("%d records, want 3", len(out))
	}
	for i, want := range []int64{9, 9, 12} {
		if got := unwrapOffset(out[i].SourceOffset); got != want {
			t.Errorf("record %d: source offset %d, want %d", i, got, want)
		}
	}
	for i, r := range out {
		if err := task.CommitRecord(r, &connect.RecordMetadata{Topic: "orders", Partition: 2, Offset: int64(100 + i)}); err != nil {
			t.Fatal(err)
		}
	}
	// The first record's sync (first of the task's lifetime) has its own
	// upstream offset, not the shared one.
	if len(synced) == 0 || synced[0].UpstreamOffset != 10 || synced[0].DownstreamOffset != 100 {
		t.Errorf("offset syncs %+v, want the first 10 -> 100", synced)
	}
	// Every record acknowledged: the batch is emptied and no longer live
	// (it went to freeBatches for another poll).
	if len(b.recs) != 0 || b.pending.Load() != 0 {
		t.Errorf("acknowledged batch: %d records, %d pending", len(b.recs), b.pending.Load())
	}
	if live := task.batches.live.Load(); live != nil && len(*live) != 0 {
		t.Errorf("%d batches still live", len(*live))
	}
	// A single record has its own offset.
	b2 := task.batches.get(1, 1)
	task.convertFetched(b2, p, []*kgo.Record{rec(20, "")}, 0)
	if got := unwrapOffset(b2.ptrs[0].SourceOffset); got != 20 {
		t.Errorf("single record: source offset %d, want 20", got)
	}
	// Set up for exactly once, every record has its own.
	task.exactOffsets = true
	b3 := task.batches.get(2, 2)
	task.convertFetched(b3, p, []*kgo.Record{rec(21, ""), rec(22, "")}, 0)
	if a, b := unwrapOffset(b3.ptrs[0].SourceOffset), unwrapOffset(b3.ptrs[1].SourceOffset); a != 21 || b != 22 {
		t.Errorf("exact offsets: %d, %d, want 21, 22", a, b)
	}
}
