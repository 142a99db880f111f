package broker

import (
	"context"
	"fmt"
	"time"

	"github.com/fjordhq/fjord/broker/batch"
	"github.com/fjordhq/fjord/broker/group"
	"github.com/fjordhq/fjord/broker/log"
)

// offsetsStore backs the group coordinator with the __consumer_offsets
// partition logs: each Append is one uncompressed batch, durable when it
// returns: in the log and below the high watermark, which in a cluster
// means replicated to the ISR.
type offsetsStore struct{ s *Server }

var _ group.Store = (*offsetsStore)(nil)

func (o *offsetsStore) partition(p int32) (*partition, error) {
	part := o.s.partition(offsetsTopic, p)
	if part == nil {
		return nil, fmt.Errorf("%s-%d is not hosted here", offsetsTopic, p)
	}
	return part, nil
}

func (o *offsetsStore) Append(ctx context.Context, p int32, records []group.Record) error {
	part, err := o.partition(p)
	if err != nil {
		return err
	}
	now := time.Now().UnixMilli()
	recs := make([]batch.Record, len(records))
	for i, r := range records {
		recs[i] = batch.Record{Offset: int64(i), Timestamp: now, Key: r.Key, Value: r.Value}
	}
	b, err := batch.Build(nil, batch.BuildHeader{PartitionLeaderEpoch: -1}, recs, batch.CodecNone)
	if err != nil {
		return fmt.Errorf("encode offsets batch: %w", err)
	}
	if !part.isLeader() {
		return fmt.Errorf("%s-%d: %w", offsetsTopic, p, errNotLeader)
	}
	part.appendMu.Lock()
	res, err := part.log.Append(b, log.AppendOptions{LeaderEpoch: part.leaderEpoch.Load(), AssignOffsets: true})
	part.appendMu.Unlock()
	if err != nil {
		return fmt.Errorf("append to %s-%d: %w", offsetsTopic, p, err)
	}
	repl := part.replication()
	if repl == nil {
		part.advance(part.log.LogEndOffset())
		return nil
	}
	// As Kafka's coordinator writes with acks=all: a commit is answered
	// only once the ISR has it, so a coordinator failover never loses it.
	repl.OnAppend()
	part.notify()
	if err := repl.WaitReplicated(ctx, res.LastOffset, 1); err != nil {
		return fmt.Errorf("replicate %s-%d: %w", offsetsTopic, p, err)
	}
	return nil
}

func (o *offsetsStore) Replay(p int32, fn func(offset int64, key, value []byte) error) error {
	part, err := o.partition(p)
	if err != nil {
		return err
	}
	l := part.log
	end := l.LogEndOffset()
	var buf []byte
	for off := l.LogStartOffset(); off < end; {
		res, err := l.Read(off, 1<<20, end, true)
		if err != nil {
			return fmt.Errorf("read %s-%d at %d: %w", offsetsTopic, p, off, err)
		}
		if res.Size == 0 {
			break
		}
		buf, err = res.AppendTo(buf[:0])
		if err != nil {
			return err
		}
		for rest := buf; len(rest) > 0; {
			b, tail, err := batch.Next(rest)
			if err != nil {
				return fmt.Errorf("%s-%d at %d: %w", offsetsTopic, p, off, err)
			}
			rest = tail
			if b.Control() {
				off = b.NextOffset()
				continue
			}
			err = b.Records(func(r *batch.Record) error {
				if r.Offset < off {
					return nil // before the requested offset, inside a batch already seen
				}
				return fn(r.Offset, r.Key, r.Value)
			})
			if err != nil {
				return err
			}
			off = b.NextOffset()
		}
	}
	return nil
}
