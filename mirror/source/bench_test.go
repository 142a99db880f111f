package source

import (
	"crypto/rand"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/internal/testkit"
	"github.com/fjordhq/fjord/internal/testkit/connectkit"
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

// BenchmarkMirrorThroughput mirrors mirrorBenchRecords records of 100 B
// (4 partitions, tasks.max 4, as `fjord bench mirror`) between two
// in-process brokers on a Connect worker in this process, each iteration
// on a fresh flow (a new source alias, so a new remote topic and no
// stored offsets), timed from the connector's creation until the remote
// topic's end offsets sum to every record. The brokers run in the same
// process: a CPU profile (-cpuprofile) shows the mirror's share beside
// theirs. Figures are rec/s.
func BenchmarkMirrorThroughput(b *testing.B) {
	const partitions, records = 4, mirrorBenchRecords
	src := &cluster{alias: "src"}
	sb := testkit.StartBroker(b, nil)
	src.addr, src.adm = sb.Addr, testkit.Admin(b, sb.Addr)
	dst := &cluster{alias: "dst"}
	db := testkit.StartBroker(b, nil)
	dst.addr, dst.adm = db.Addr, testkit.Admin(b, db.Addr)
	ctx := testkit.Context(b, 5*time.Minute)
	if _, err := src.adm.CreateTopic(ctx, partitions, 1, nil, "bench"); err != nil {
		b.Fatal(err)
	}
	pcl := testkit.Client(b, src.addr, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(5*time.Millisecond))
	value := make([]byte, 100)
	rand.Read(value)
	for i := range records {
		pcl.Produce(ctx, &kgo.Record{Topic: "bench", Partition: int32(i % partitions), Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				b.Error(err)
			}
		})
	}
	if err := pcl.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	w := connectkit.Start(b, dst.addr, connectkit.Options{Props: map[string]string{"offset.flush.interval.ms": "60000"}})
	var elapsed time.Duration
	run := 0
	for b.Loop() {
		run++
		src.alias = fmt.Sprintf("src%d", run)
		name := "bench-" + src.alias
		start := time.Now()
		w.Create(b, mirrorConfig(name, src, dst, "topics", "bench", "tasks.max", "4",
			"sync.topic.acls.enabled", "false", "consumer.poll.timeout.ms", "1000"))
		remote := src.alias + ".bench"
		for {
			ends, err := dst.adm.ListEndOffsets(ctx, remote)
			if err != nil {
				b.Fatal(err)
			}
			var sum int64
			ends.Each(func(o kadm.ListedOffset) {
				if o.Err == nil {
					sum += o.Offset
				}
			})
			if sum >= records {
				break
			}
			if ctx.Err() != nil {
				b.Fatalf("%s holds %d of %d records", remote, sum, records)
			}
			time.Sleep(5 * time.Millisecond)
		}
		elapsed += time.Since(start)
		b.StopTimer()
		w.Delete(b, name)
		b.StartTimer()
	}
	b.ReportMetric(float64(records)*float64(run)/elapsed.Seconds(), "rec/s")
}

// mirrorBenchRecords is BenchmarkMirrorThroughput's record count per run.
const mirrorBenchRecords = 500_000
