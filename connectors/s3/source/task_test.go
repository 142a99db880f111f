package source

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect"
)

// Two partitions, several objects each, read into the right partitions,
// in offset order, in batches of at most record.batch.max.size, with
// offsets naming the object and the record's index.
func TestTaskReadsPartitionsInOrder(t *testing.T) {
	s := testSettings(7)
	b := newFakeBucket()
	for _, p := range []int32{0, 1} {
		for i, start := range []int64{0, 10, 20} {
			b.put(objKey(s, "orders", p, start), lines(partName(p), i*10, 10))
		}
	}
	// Not the sink's objects: other extension, unparsable name, another
	// topic whose name has ours as prefix.
	b.put("topics/orders/partition=0/notes.md", []byte("x\n"))
	b.put("topics/orders/partition=0/orders+0+0000000099.json", []byte("x\n"))
	b.put(objKey(s, "orders2", 0, 0), []byte("other-topic\n"))

	task := startTask(t, b, s, memOffsets{}, connect.TopicPartition{Topic: "orders", Partition: 0}, connect.TopicPartition{Topic: "orders", Partition: 1})
	recs := pollN(t, task, 60)
	got := values(recs)
	for _, p := range []int32{0, 1} {
		if want := seq(partName(p), 0, 30); !slices.Equal(got[p], want) {
			t.Fatalf("partition %d:\n got %v\nwant %v", p, got[p], want)
		}
	}
	for _, r := range recs {
		p, _ := connect.OffsetLong(r.SourcePartition[PartitionField])
		if r.Topic != "orders" || int64(r.Partition) != p {
			t.Fatalf("record %v went to %s-%d, want orders-%d", r.Value, r.Topic, r.Partition, p)
		}
	}
	last := recs[len(recs)-1]
	if last.SourceOffset[ObjectField] != objKey(s, "orders", 1, 20) || last.SourceOffset[RecordField] != int64(9) ||
		last.SourceOffset[StartField] != int64(20) {
		t.Fatalf("last record's offset %v", last.SourceOffset)
	}
	// Everything read: the next polls wait and return nothing.
	if recs, err := task.Poll(context.Background()); err != nil || len(recs) != 0 {
		t.Fatalf("poll after the end: %d records, %v", len(recs), err)
	}
}

func partName(p int32) string { return "p" + string(rune('0'+p)) }

// restore.partitions=false leaves the partition to the producer.
func TestTaskProducerPartitioner(t *testing.T) {
	s := testSettings(10)
	s.restorePartitions = false
	b := newFakeBucket()
	b.put(objKey(s, "t", 3, 0), lines("a", 0, 2))
	task := startTask(t, b, s, memOffsets{}, connect.TopicPartition{Topic: "t", Partition: 3})
	for _, r := range pollN(t, task, 2) {
		if r.Partition != -1 {
			t.Fatalf("partition %d, want -1", r.Partition)
		}
		if p, _ := connect.OffsetLong(r.SourcePartition[PartitionField]); p != 3 {
			t.Fatalf("source partition %v, want the stored partition 3", r.SourcePartition)
		}
	}
}

// A task that starts again with the offsets committed so far emits
// exactly the records after them: no duplicate, no gap — wherever the
// commit stopped (inside an object, at its last record, before anything).
func TestTaskResumesAfterCommittedRecord(t *testing.T) {
	s := testSettings(4)
	b := newFakeBucket()
	for i, start := range []int64{0, 5, 10} {
		b.put(objKey(s, "t", 0, start), lines("r", i*5, 5))
	}
	tp := connect.TopicPartition{Topic: "t", Partition: 0}
	all := seq("r", 0, 15)
	for committed := 0; committed <= 15; committed++ {
		offsets := memOffsets{}
		first := startTask(t, b, s, offsets, tp)
		recs := pollN(t, first, committed)
		offsets.commit(recs[:committed])
		first.Stop()

		second := startTask(t, b, s, offsets, tp)
		rest := pollN(t, second, 15-committed)
		got := append(values(recs[:committed])[0], values(rest)[0]...)
		if !slices.Equal(got, all) {
			t.Fatalf("committed %d: restored %v", committed, got)
		}
		if recs, _ := second.Poll(context.Background()); len(recs) != 0 {
			t.Fatalf("committed %d: %d extra records after the end", committed, len(recs))
		}
	}
}

// Objects the sink writes after everything was read are picked up at the
// next listing.
func TestTaskPicksUpNewObjects(t *testing.T) {
	s := testSettings(100)
	b := newFakeBucket()
	b.put(objKey(s, "t", 0, 0), lines("r", 0, 3))
	task := startTask(t, b, s, memOffsets{}, connect.TopicPartition{Topic: "t", Partition: 0})
	first := pollN(t, task, 3)
	b.put(objKey(s, "t", 0, 3), lines("r", 3, 2))
	second := pollN(t, task, 2)
	if got := values(append(first, second...))[0]; !slices.Equal(got, seq("r", 0, 5)) {
		t.Fatalf("records %v", got)
	}
}

// S3 unreachable: polls return nothing while the task backs off, then
// the task goes on where it was; a stream that breaks mid-object is
// reopened after the records already emitted.
func TestTaskRetriesS3Failures(t *testing.T) {
	s := testSettings(3)
	b := newFakeBucket()
	b.put(objKey(s, "t", 0, 0), lines("r", 0, 10))
	b.failLists = 2
	task := startTask(t, b, s, memOffsets{}, connect.TopicPartition{Topic: "t", Partition: 0})
	for i := 0; i < 2; i++ {
		recs, err := task.Poll(context.Background())
		if err != nil || len(recs) != 0 {
			t.Fatalf("poll %d while S3 is down: %d records, %v", i, len(recs), err)
		}
	}
	got := pollN(t, task, 3)
	// The stream breaks after the fourth line: the next poll emits what
	// it decoded, the one after that reopens the object past them.
	b.mu.Lock()
	b.breakAt = int64(len(lines("r", 0, 4)))
	b.mu.Unlock()
	task.closeObject() // the break must hit a fresh stream
	got = append(got, pollN(t, task, 7)...)
	if v := values(got)[0]; !slices.Equal(v, seq("r", 0, 10)) {
		t.Fatalf("records %v", v)
	}
	if b.lists < 3 {
		t.Fatalf("%d listings, want the failures retried", b.lists)
	}
}

// A corrupt object fails the task with its key in the message, after the
// records before the bad one were emitted.
func TestTaskFailsOnCorruptObject(t *testing.T) {
	s := testSettings(10)
	b := newFakeBucket()
	bad := objKey(s, "t", 0, 0)
	b.put(bad, []byte("r-0\nr-1\n!bad\nr-3\n"))
	task := startTask(t, b, s, memOffsets{}, connect.TopicPartition{Topic: "t", Partition: 0})
	recs, err := task.Poll(context.Background())
	if err != nil || len(recs) != 2 {
		t.Fatalf("first poll: %d records, %v; want the 2 good ones", len(recs), err)
	}
	_, err = task.Poll(context.Background())
	if err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("error %v does not name %s", err, bad)
	}
}

// Keys and headers come from the side files, record by record; a side
// file shorter than its object fails the task naming the side file.
func TestTaskRestoresKeysAndHeaders(t *testing.T) {
	s := testSettings(10)
	b := newFakeBucket()
	obj := objKey(s, "t", 0, 0)
	keys, headers := namingOf(s).sideKeys(obj)
	b.put(obj, lines("v", 0, 2))
	b.put(keys, lines("k", 0, 2))
	b.put(headers, []byte("H:a=1,b=2\nH:c=3\n"))
	short := objKey(s, "t", 0, 2)
	shortKeys, _ := namingOf(s).sideKeys(short)
	b.put(short, lines("v", 2, 2))
	b.put(shortKeys, lines("k", 2, 1))

	task := startTask(t, b, s, memOffsets{}, connect.TopicPartition{Topic: "t", Partition: 0})
	recs, err := task.Poll(context.Background())
	if err != nil || len(recs) < 2 {
		t.Fatalf("poll: %d records, %v", len(recs), err)
	}
	for i, want := range []struct {
		key     string
		headers connect.Headers
	}{
		{"k-0", connect.Headers{{Key: "a", Schema: connect.StringSchema, Value: "1"}, {Key: "b", Schema: connect.StringSchema, Value: "2"}}},
		{"k-1", connect.Headers{{Key: "c", Schema: connect.StringSchema, Value: "3"}}},
	} {
		r := recs[i]
		if r.Key != want.key || r.KeySchema != connect.StringSchema {
			t.Errorf("record %d key %v (%v), want %s", i, r.Key, r.KeySchema, want.key)
		}
		if len(r.Headers) != len(want.headers) {
			t.Fatalf("record %d headers %v, want %v", i, r.Headers, want.headers)
		}
		for j := range want.headers {
			if r.Headers[j].Key != want.headers[j].Key || r.Headers[j].Value != want.headers[j].Value {
				t.Errorf("record %d header %d: %+v, want %+v", i, j, r.Headers[j], want.headers[j])
			}
		}
	}
	for len(recs) < 3 && err == nil {
		var more []*connect.SourceRecord
		more, err = task.Poll(context.Background())
		recs = append(recs, more...)
	}
	if err == nil {
		_, err = task.Poll(context.Background())
	}
	if err == nil || !strings.Contains(err.Error(), shortKeys) {
		t.Fatalf("short keys file: error %v does not name %s", err, shortKeys)
	}
}

// Stop wakes a Poll waiting for new objects.
func TestTaskStopWakesPoll(t *testing.T) {
	s := testSettings(10)
	s.pollInterval = time.Hour
	b := newFakeBucket()
	task := startTask(t, b, s, memOffsets{}, connect.TopicPartition{Topic: "t", Partition: 0})
	if recs, err := task.Poll(context.Background()); err != nil || len(recs) != 0 {
		t.Fatalf("empty bucket: %d records, %v", len(recs), err)
	}
	done := make(chan struct{})
	go func() {
		task.Poll(context.Background())
		close(done)
	}()
	time.Sleep(20 * time.Millisecond)
	task.Stop()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Poll still waiting after Stop")
	}
}
