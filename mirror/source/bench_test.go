package source

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/mirror/policy"
	"github.com/fjordhq/fjord/mirror/records"
)

// The task's per-record work: converting a fetched record (100 B value)
// and acknowledging it (metrics, offset-sync spacing).
func BenchmarkRecordPath(b *testing.B) {
	p, err := policy.New(nil)
	if err != nil {
		b.Fatal(err)
	}
	tp := connect.TopicPartition{Topic: "orders", Partition: 0}
	key := metricKey{source: "a", target: "b", topic: "a.orders", partition: 0}
	part := &partition{source: tp, sourcePartition: wrapPartition(tp, "a"), remote: p.FormatRemoteTopic("a", "orders"), key: key, m: metrics.acquire(key)}
	defer metrics.release(key)
	task := &Task{parts: map[connect.TopicPartition]*partition{tp: part},
		syncs: newOffsetSyncWriter(100, func(_ records.OffsetSync, done func()) { done() }, nil)}
	r := &kgo.Record{Topic: "orders", Value: make([]byte, 100), Key: []byte("key"), Timestamp: time.Now()}
	md := &connect.RecordMetadata{}
	b.ReportAllocs()
	const perPoll = 500
	var bt *batch
	for i := 0; b.Loop(); i++ {
		if i%perPoll == 0 {
			bt = newBatch(perPoll, perPoll)
		}
		r.Offset = int64(i)
		sr := bt.convertRecord(part, r, "a", "b")
		md.Offset = int64(i)
		_ = task.CommitRecord(sr, md)
	}
}
