package source

import (
	"crypto/rand"
	"fmt"
	"syscall"
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

// The task's per-record work: converting a poll's fetched records (100 B
// values) and acknowledging them (metrics, offset-sync spacing, the
// batch's reuse). An op is a poll of perPoll records.
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
	part.syncState = task.syncs.state(tp)
	r := &kgo.Record{Topic: "orders", Value: make([]byte, 100), Key: []byte("key"), Timestamp: time.Now()}
	md := &connect.RecordMetadata{}
	b.ReportAllocs()
	const perPoll = 500
	offset := int64(0)
	for b.Loop() {
		bt := task.batches.get(perPoll, 0)
		shared := wrapOffset(offset - 1)
		for range perPoll {
			r.Offset = offset
			bt.convertRecord(part, r, "a", "b", shared)
			offset++
		}
		out := bt.ptrs
		task.batches.track(bt)
		for _, sr := range out {
			md.Offset++
			_ = task.CommitRecord(sr, md)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(offset), "ns/record")
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
	pcl := testkit.Client(b, src.addr, kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(5*time.Millisecond), kgo.ProducerBatchCompression(kgo.NoCompression()))
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
	var elapsed, cpu, first time.Duration
	run := 0
	for b.Loop() {
		run++
		src.alias = fmt.Sprintf("src%d", run)
		name := "bench-" + src.alias
		start, cpuStart := time.Now(), processCPU(b)
		w.Create(b, mirrorConfig(name, src, dst, "topics", "bench", "tasks.max", "4",
			"sync.topic.acls.enabled", "false", "consumer.poll.timeout.ms", "1000"))
		remote := src.alias + ".bench"
		seen := false
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
			if sum > 0 && !seen {
				seen = true
				first += time.Since(start)
			}
			if sum >= records {
				break
			}
			if ctx.Err() != nil {
				b.Fatalf("%s holds %d of %d records", remote, sum, records)
			}
			time.Sleep(5 * time.Millisecond)
		}
		elapsed += time.Since(start)
		cpu += processCPU(b) - cpuStart
		b.StopTimer()
		w.Delete(b, name)
		b.StartTimer()
	}
	b.ReportMetric(float64(records)*float64(run)/elapsed.Seconds(), "rec/s")
	// CPU per record of the whole process (the brokers' share included):
	// steadier than rec/s when other work shares the cores.
	b.ReportMetric(float64(cpu.Microseconds())/float64(records*run), "cpu-µs/rec")
	// From the connector's creation to the first records on the target.
	b.ReportMetric(float64(first.Milliseconds())/float64(run), "first-ms")
}

// processCPU is the CPU time (user and system) the process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// mirrorBenchRecords is BenchmarkMirrorThroughput's record count per run.
const mirrorBenchRecords = 500_000
