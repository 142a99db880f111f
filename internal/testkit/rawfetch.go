package testkit

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/batch"
)

// FetchBatches reads partition [from, to) of a topic as the raw record
// batches the broker serves (plain Fetch requests, no client decoding)
// and checks what a consumer relies on: every batch passes CRC and header
// validation, batches follow each other without gap or overlap, the first
// holds `from` and the last ends at `to`. A trailing partial batch, which
// Kafka allows when a size limit cuts one, is dropped and fetched again.
// It is meant for logs without compaction: it also requires every batch
// to hold one record per offset.
//
// topicID is needed because Fetch v13+ names topics by id; the request
// carries both so any negotiated version works.
func FetchBatches(ctx context.Context, cl *kgo.Client, topic string, topicID [16]byte, partition int32, from, to int64) ([]batch.Batch, error) {
	var out []batch.Batch
	next := from
	for next < to {
		req := kmsg.NewPtrFetchRequest()
		req.ReplicaID = -1
		req.MaxWaitMillis = 100
		req.MinBytes = 1
		req.MaxBytes = 4 << 20
		req.SessionEpoch = -1
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = topic, topicID
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition = partition
		rp.FetchOffset = next
		rp.LogStartOffset = -1
		rp.CurrentLeaderEpoch = -1
		rp.PartitionMaxBytes = 1 << 20
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return out, fmt.Errorf("fetch %s[%d] at %d: %w", topic, partition, next, err)
		}
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			return out, fmt.Errorf("fetch %s[%d] at %d: %w", topic, partition, next, err)
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			return out, fmt.Errorf("fetch %s[%d] at %d: response has %d topics, want 1 with 1 partition", topic, partition, next, len(resp.Topics))
		}
		p := resp.Topics[0].Partitions[0]
		if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
			return out, fmt.Errorf("fetch %s[%d] at %d: %w", topic, partition, next, err)
		}
		if len(p.RecordBatches) == 0 {
			return out, fmt.Errorf("fetch %s[%d] at %d: no data below the expected end %d (high watermark %d)", topic, partition, next, to, p.HighWatermark)
		}
		rest := p.RecordBatches
		got := 0
		for len(rest) > 0 {
			b, r, err := batch.Next(rest)
			if errors.Is(err, batch.ErrTruncated) && got > 0 {
				break // partial trailing batch: fetch it again whole
			}
			if err != nil {
				return out, fmt.Errorf("fetch %s[%d] at %d: batch %d of the response: %w", topic, partition, next, got, err)
			}
			rest = r
			if err := b.Validate(); err != nil {
				return out, fmt.Errorf("%s[%d]: batch at offset %d served invalid: %w", topic, partition, b.BaseOffset(), err)
			}
			switch {
			case len(out) == 0 && got == 0 && (b.BaseOffset() > from || b.LastOffset() < from):
				return out, fmt.Errorf("%s[%d]: first batch served for offset %d covers %d-%d", topic, partition, from, b.BaseOffset(), b.LastOffset())
			case (len(out) > 0 || got > 0) && b.BaseOffset() != next:
				return out, fmt.Errorf("%s[%d]: batch at %d follows a batch ending before %d (gap or overlap)", topic, partition, b.BaseOffset(), next)
			}
			if b.NumRecords() != b.LastOffsetDelta()+1 {
				// Only compaction leaves fewer records than offsets; none runs here.
				return out, fmt.Errorf("%s[%d]: batch at %d has %d records for %d offsets", topic, partition, b.BaseOffset(), b.NumRecords(), b.LastOffsetDelta()+1)
			}
			out = append(out, append(batch.Batch(nil), b...))
			next = b.NextOffset()
			got++
			if next >= to {
				break
			}
		}
	}
	if next != to {
		return out, fmt.Errorf("%s[%d]: served batches end at %d, want %d", topic, partition, next, to)
	}
	return out, nil
}
