package broker

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/batch"
)

// benchBroker starts a single-node broker with one topic of one
// partition and returns it; the handlers are then driven directly, so the
// benchmarks measure the broker's work per request and nothing of the
// network or a client.
func benchBroker(b *testing.B, topic string) *Server {
	b.Helper()
	cfg, err := ConfigFromProperties(map[string]string{
		"node.id": "0", "listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": b.TempDir(),
		"offsets.topic.replication.factor": "1",
	}, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	s, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	go s.Serve()
	b.Cleanup(func() { s.Close() })
	cl, err := kgo.NewClient(kgo.SeedBrokers(s.Addr().String()))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, topic); err != nil {
		b.Fatal(err)
	}
	for s.partition(topic, 0) == nil {
		time.Sleep(time.Millisecond)
	}
	return s
}

// benchBatch is a batch of n records of size bytes each.
func benchBatch(b *testing.B, n, size int) []byte {
	recs := make([]batch.Record, n)
	now := time.Now().UnixMilli()
	for i := range recs {
		recs[i] = batch.Record{Offset: int64(i), Timestamp: now, Value: make([]byte, size)}
	}
	out, err := batch.Build(nil, batch.BuildHeader{PartitionLeaderEpoch: -1}, recs, batch.CodecNone)
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// BenchmarkProduceHandler is one acks=1 produce request of one batch (10
// records of 100 bytes) to one partition, handled in process: the path
// the per-topic byte and message counters sit on.
func BenchmarkProduceHandler(b *testing.B) {
	const topic = "bench-produce"
	s := benchBroker(b, topic)
	records := benchBatch(b, 10, 100)
	req := kmsg.NewPtrProduceRequest()
	req.Version = 9
	req.Acks = 1
	req.TimeoutMillis = 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = records
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	b.SetBytes(int64(len(records)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		resp := s.handleProduce(req)
		if code := resp.Msg.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode; code != 0 {
			b.Fatalf("produce error %d", code)
		}
	}
}

// BenchmarkFetchHandler is one consumer fetch of a partition's first
// 64 KiB, handled in process (the records are file ranges, not read):
// the path the per-topic bytes-out counter sits on.
func BenchmarkFetchHandler(b *testing.B) {
	const topic = "bench-fetch"
	s := benchBroker(b, topic)
	records := benchBatch(b, 10, 100)
	p := s.partition(topic, 0)
	for range 200 {
		out := kmsg.NewProduceResponseTopicPartition()
		req := kmsg.NewPtrProduceRequest()
		req.Acks = 1
		s.produceTo(p, req, records, &out)
		if out.ErrorCode != 0 {
			b.Fatalf("produce error %d", out.ErrorCode)
		}
	}
	req := kmsg.NewPtrFetchRequest()
	req.Version = 12
	req.ReplicaID = -1
	req.MaxBytes = 1 << 20
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = topic
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.PartitionMaxBytes = 64 << 10
	fp.CurrentLeaderEpoch = -1
	fp.LastFetchedEpoch = -1
	ft.Partitions = append(ft.Partitions, fp)
	req.Topics = append(req.Topics, ft)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		resp := s.handleFetch(ctx, req)
		if len(resp.Parts) < 2 {
			b.Fatalf("fetch returned no records")
		}
	}
}

// BenchmarkTopicCounters is what the per-topic counters add to a produce
// of one partition: two counter adds on counters resolved beforehand,
// from every CPU at once (the worst case: one hot topic).
func BenchmarkTopicCounters(b *testing.B) {
	tm := newMetrics(prometheus.NewRegistry()).topic("hot")
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			tm.bytesIn.Add(1060)
			tm.messagesIn.Add(10)
		}
	})
}
