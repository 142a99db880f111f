package bench

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/internal/bench/s3records"
)

// s3Record is record i (1-based): key the id as a string
// (StringConverter), value the JsonConverter envelope (s3records).
func s3Record(i int64, buf []byte) (key, value []byte) {
	return strconv.AppendInt(nil, i, 10), s3records.Envelope(i, buf)
}

// s3PartitionRecords is how many of n records go to each of p
// partitions: record i (1-based) to partition (i-1) mod p.
func s3PartitionRecords(n, p int) []int64 {
	out := make([]int64, p)
	for q := range p {
		out[q] = int64(n / p)
		if q < n%p {
			out[q]++
		}
	}
	return out
}

// createS3Topic creates the topic with p partitions and waits until each
// has a leader.
func createS3Topic(ctx context.Context, adm *kadm.Client, topic string, p int) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	resp, err := adm.CreateTopic(ctx, int32(p), 1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	for {
		md, err := adm.Metadata(ctx, topic)
		if err == nil {
			td := md.Topics[topic]
			switch {
			case td.Err != nil:
				err = td.Err
			case len(td.Partitions) != p:
				err = fmt.Errorf("%d partitions, want %d", len(td.Partitions), p)
			default:
				for _, pd := range td.Partitions {
					if pd.Err != nil || pd.Leader < 0 {
						err = fmt.Errorf("partition %d has no leader yet", pd.Partition)
					}
				}
			}
		}
		if err == nil {
			return nil
		}
		if !sleepCtx(ctx, 50*time.Millisecond) { // polling metadata
			return fmt.Errorf("topic %s not ready: %w", topic, err)
		}
	}
}

// produceS3Records writes records 1..n to topic, record i to partition
// (i-1) mod p, and waits for every ack. Batched and snappy-compressed
// (the envelope's schema repeats in every record), as a Connect worker's
// producer with compression.type=snappy would write them.
func produceS3Records(ctx context.Context, addr, topic string, n, p int, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(10*time.Millisecond), kgo.ProducerBatchMaxBytes(1<<20),
		kgo.ProducerBatchCompression(kgo.SnappyCompression()), kgo.MaxBufferedRecords(100_000))
	if err != nil {
		return err
	}
	defer cl.Close()
	var pc produceCounter
	for i := int64(1); i <= int64(n); i++ {
		k, v := s3Record(i, make([]byte, 0, 1100))
		cl.Produce(ctx, &kgo.Record{Key: k, Value: v, Partition: int32((i - 1) % int64(p))}, pc.promise)
	}
	if err := cl.Flush(ctx); err != nil {
		return fmt.Errorf("produce the records: %w", err)
	}
	if err := pc.err(); err != nil {
		return fmt.Errorf("produce the records: %w", err)
	}
	return nil
}
