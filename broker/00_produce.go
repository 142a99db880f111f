package broker

// Produce, v3-v13 (v13 names topics by id). Batches (format v2) are
// validated — size, magic, CRC-32C, and for uncompressed batches the
// record framing — and appended as received, with only the base offset
// and leader epoch rewritten. The batch is decoded only when the topic
// forces it: compression.type other than "producer" (recompressed to the
// topic's codec) or a compacted topic (every record needs a key).
// message.timestamp.type=LogAppendTime rewrites the batch's max timestamp
// and CRC in place.
//
// acks=0 gets no response; acks=1 and acks=-1 are the same on a single
// node once the append returns (the ISR is this broker), except that
// acks=-1 checks min.insync.replicas against the ISR size.
//
// Not supported: transactional batches (no transaction coordinator yet):
// they are refused with TRANSACTIONAL_ID_AUTHORIZATION_FAILED's sibling,
// INVALID_TXN_STATE.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/batch"
	"github.com/fjordhq/fjord/broker/log"
	"github.com/fjordhq/fjord/broker/protocol"
	"github.com/fjordhq/fjord/broker/replica"
)

func (s *Server) handleProduce(r *kmsg.ProduceRequest) protocol.Response {
	resp := r.ResponseKind().(*kmsg.ProduceResponse)
	acksOK := r.Acks == 0 || r.Acks == 1 || r.Acks == -1
	table := s.parts.Load()
	img := s.image()
	var waits []replicationWait
	var leaders map[int32]bool // brokers named in CurrentLeader (v10+ NodeEndpoints)
	for i := range r.Topics {
		rt := &r.Topics[i]
		st := kmsg.NewProduceResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		name := rt.Topic
		if r.Version >= 13 {
			if t := img.TopicsByID[rt.TopicID]; t != nil {
				name = t.Name
			} else {
				name = ""
			}
		}
		for j := range rt.Partitions {
			rp := &rt.Partitions[j]
			sp := kmsg.NewProduceResponseTopicPartition()
			sp.Partition = rp.Partition
			switch p := table.get(name, rp.Partition); {
			case !acksOK:
				sp.ErrorCode = kerr.InvalidRequiredAcks.Code
			case name == "" && r.Version >= 13:
				sp.ErrorCode = kerr.UnknownTopicID.Code
			case p == nil:
				sp.ErrorCode = s.notHostedCode(img, name, rp.Partition)
				s.currentLeader(img, name, rp.Partition, &sp.CurrentLeader, &leaders)
			case !p.isLeader():
				sp.ErrorCode = kerr.NotLeaderForPartition.Code
				s.currentLeader(img, name, rp.Partition, &sp.CurrentLeader, &leaders)
			default:
				if w := s.produceTo(p, r, rp.Records, &sp); w != nil && r.Acks == -1 {
					w.topic, w.partition = i, j
					waits = append(waits, *w)
				}
			}
			s.metrics.produced(name, len(rp.Records), sp.ErrorCode)
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	if r.Acks == 0 {
		// Kafka closes the connection on an acks=0 error so the client
		// notices something went wrong; do the same.
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if p.ErrorCode != 0 {
					return protocol.Response{None: true, Close: true}
				}
			}
		}
		return protocol.Response{None: true}
	}
	if r.Version >= 10 {
		resp.Brokers = s.nodeEndpoints(img, leaders)
	}
	if len(waits) > 0 {
		timeout := time.Duration(max(r.TimeoutMillis, 0)) * time.Millisecond
		return protocol.Response{Msg: resp, Wait: func() protocol.Response {
			s.awaitReplication(resp, waits, timeout)
			return protocol.Response{Msg: resp}
		}}
	}
	return protocol.Response{Msg: resp}
}

// replicationWait is an acks=all answer waiting for the ISR.
type replicationWait struct {
	topic, partition int // indexes into the response
	repl             *replica.Leader
	offset           int64 // last offset appended
	minISR           int
}

// awaitReplication waits, up to timeout in all, until each appended
// batch is below its partition's high watermark, and turns failures into
// the answers Kafka gives: the ISR shrank below min.insync.replicas
// after the append, leadership moved, or the request timed out.
func (s *Server) awaitReplication(resp *kmsg.ProduceResponse, waits []replicationWait, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(s.ctx, timeout)
	defer cancel()
	for _, w := range waits {
		sp := &resp.Topics[w.topic].Partitions[w.partition]
		err := w.repl.WaitReplicated(ctx, w.offset, w.minISR)
		var ke *kerr.Error
		switch {
		case err == nil:
		case errors.As(err, &ke):
			sp.ErrorCode = ke.Code
			if msg := err.Error(); msg != ke.Error() {
				sp.ErrorMessage = ptr(msg)
			}
		default:
			sp.ErrorCode = kerr.RequestTimedOut.Code
		}
	}
}

// produceTo validates and appends one partition's records. With followers
// it returns what an acks=all answer has to wait for.
func (s *Server) produceTo(p *partition, r *kmsg.ProduceRequest, records []byte, out *kmsg.ProduceResponseTopicPartition) *replicationWait {
	st := p.settings.Load()
	repl := p.replication()
	if r.Acks == -1 && st.MinInsyncReplicas > 1 {
		isr := 1 // a single node's ISR is this broker alone
		if repl != nil {
			isr = repl.InSyncCount()
		} else if s.cfg.Cluster.Enabled() {
			isr = s.isrSize(p)
		}
		if int32(isr) < st.MinInsyncReplicas {
			out.ErrorCode = kerr.NotEnoughReplicas.Code
			out.ErrorMessage = ptr("The size of the current ISR is below min.insync.replicas")
			return nil
		}
	}
	if len(records) == 0 {
		out.ErrorCode = kerr.CorruptMessage.Code
		return nil
	}
	p.appendMu.Lock()
	defer p.appendMu.Unlock()
	data, code, msg := s.prepareBatches(records, st)
	if code != 0 {
		out.ErrorCode = code
		out.ErrorMessage = msg
		if code == kerr.CorruptMessage.Code || code == kerr.MessageTooLarge.Code || code == kerr.InvalidRecord.Code {
			s.log.Debug("produce rejected", "topic", p.topic, "partition", p.index, "err", kerr.ErrorForCode(code), "msg", deref(msg))
		}
		return nil
	}
	res, err := p.log.Append(data, log.AppendOptions{LeaderEpoch: p.leaderEpoch.Load(), AssignOffsets: true})
	if err != nil {
		out.ErrorCode = errorCode(err)
		if out.ErrorCode == kerr.UnknownServerError.Code || out.ErrorCode == kerr.KafkaStorageError.Code {
			s.log.Error("append failed", "topic", p.topic, "partition", p.index, "err", err)
		}
		return nil
	}
	if !res.Duplicate {
		// Kafka's BytesInPerSec and MessagesInPerSec count what was
		// appended, once per partition and request.
		p.tm.bytesIn.Add(float64(len(records)))
		p.tm.messagesIn.Add(float64(res.LastOffset - res.FirstOffset + 1))
	}
	out.BaseOffset = res.FirstOffset
	out.LogStartOffset = res.LogStartOffset
	if st.LogAppendTime {
		out.LogAppendTime = res.MaxTimestamp
	}
	if repl == nil {
		if !res.Duplicate {
			p.advance(p.log.LogEndOffset())
		}
		return nil
	}
	if !res.Duplicate {
		repl.OnAppend()
		p.notify() // followers long-polling for the new records
	}
	return &replicationWait{repl: repl, offset: res.LastOffset, minISR: int(st.MinInsyncReplicas)}
}

// prepareBatches validates the partition's record set and applies the
// topic's rules. It returns the bytes to append (records itself unless a
// rewrite was needed) or a Kafka error code with a message.
func (s *Server) prepareBatches(records []byte, st *TopicSettings) ([]byte, int16, *string) {
	now := time.Now().UnixMilli()
	var rewritten []byte
	recompress := st.CompressionType != "producer"
	target := codecFor(st.CompressionType)
	for off := 0; off < len(records); {
		rest := records[off:]
		if n := batch.Size(rest); n > int(st.MaxMessageBytes)+batch.LogOverhead {
			return nil, kerr.MessageTooLarge.Code, ptrf("The batch size %d bytes exceeds max.message.bytes %d", n-batch.LogOverhead, st.MaxMessageBytes)
		}
		b, _, err := batch.Next(rest)
		if err != nil {
			return nil, kerr.CorruptMessage.Code, ptr(err.Error())
		}
		off += len(b)
		if err := b.Validate(); err != nil {
			if errors.Is(err, batch.ErrMagic) {
				return nil, kerr.UnsupportedForMessageFormat.Code, ptr(err.Error())
			}
			return nil, kerr.CorruptMessage.Code, ptr(err.Error())
		}
		if b.Control() {
			return nil, kerr.InvalidRecord.Code, ptr("Clients may not produce control batches")
		}
		if b.Transactional() {
			return nil, kerr.InvalidTxnState.Code, ptr("Fjord does not support transactions yet")
		}
		if !st.LogAppendTime {
			if d := st.TimestampAfterMs; d >= 0 && d < math.MaxInt64-now && b.MaxTimestamp() > now+d {
				return nil, kerr.InvalidTimestamp.Code, ptrf("Timestamp %d of a record is more than message.timestamp.after.max.ms=%d in the future", b.MaxTimestamp(), d)
			}
			if d := st.TimestampBeforeMs; d >= 0 && d < now && b.BaseTimestamp() < now-d {
				return nil, kerr.InvalidTimestamp.Code, ptrf("Timestamp %d of a record is more than message.timestamp.before.max.ms=%d in the past", b.BaseTimestamp(), d)
			}
		}
		// Uncompressed batches get an allocation-free framing walk;
		// compressed ones are opened only when a rule needs their records
		// (keys for compaction, or recompression), since the CRC already
		// vouches for their bytes.
		var sum batch.Summary
		needInside := st.Log.Compact || (recompress && b.Codec() != target)
		switch {
		case b.Codec() == batch.CodecNone:
			sum, err = b.CheckRecords()
		case needInside:
			d := decoders.Get().(*batch.Decoder)
			d.MaxSize = max(int(st.MaxMessageBytes)*8, 1<<20)
			if recompress && b.Codec() != target {
				var nb []byte
				nb, sum, err = d.Recompress(nil, b, target)
				if err == nil {
					if rewritten == nil {
						rewritten = append(make([]byte, 0, len(records)), records[:off-len(b)]...)
					}
					b = batch.Batch(nb)
				}
			} else {
				sum, err = d.Check(b)
			}
			decoders.Put(d)
		default:
			sum.Contiguous = true
		}
		if err != nil {
			return nil, kerr.CorruptMessage.Code, ptr(err.Error())
		}
		if !sum.Contiguous {
			return nil, kerr.InvalidRecord.Code, ptr("Inconsistent batch offset range: offset deltas must be 0..n-1")
		}
		if st.Log.Compact && sum.NullKeys > 0 {
			return nil, kerr.InvalidRecord.Code, ptr("Compacted topic cannot accept message without key.")
		}
		if recompress && b.Codec() != target {
			// Uncompressed input to a compressing topic.
			nb, err := batch.Recompress(nil, b, target)
			if err != nil {
				return nil, kerr.CorruptMessage.Code, ptr(err.Error())
			}
			if rewritten == nil {
				rewritten = append(make([]byte, 0, len(records)), records[:off-len(b)]...)
			}
			b = batch.Batch(nb)
		}
		if st.LogAppendTime {
			b.SetLogAppendTime(now)
		}
		if rewritten != nil {
			rewritten = append(rewritten, b...)
		}
	}
	if rewritten != nil {
		return rewritten, 0, nil
	}
	return records, 0, nil
}

// decoders are reused across produce requests: decompression state is
// expensive to build.
var decoders = sync.Pool{New: func() any { return new(batch.Decoder) }}

func codecFor(compressionType string) batch.Codec {
	switch compressionType {
	case "gzip":
		return batch.CodecGzip
	case "snappy":
		return batch.CodecSnappy
	case "lz4":
		return batch.CodecLZ4
	case "zstd":
		return batch.CodecZstd
	}
	return batch.CodecNone
}

func (s *Server) isrSize(p *partition) int {
	if mp := s.image().Partition(p.topic, p.index); mp != nil {
		return len(mp.ISR)
	}
	return 0
}

func ptr[T any](v T) *T { return &v }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func ptrf(format string, args ...any) *string { return ptr(fmt.Sprintf(format, args...)) }
