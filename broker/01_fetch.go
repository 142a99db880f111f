package broker

// Fetch, v4-v18 (v13+ names topics by id). Long polls until min_bytes are
// available or max_wait_ms passes; honours max_bytes and
// partition_max_bytes, returning the first batch whole even when it is
// larger than the limits (as Kafka does since v3, so a consumer never
// gets stuck behind a big batch). Batches are not read by the broker: the
// response carries segment file ranges that the connection writer sends
// with sendfile(2) (fetch_encode.go splices them into kmsg's encoding).
//
// Fetch sessions (KIP-227) are declined: every response carries session
// id 0, which clients treat as "send full fetch requests", and a request
// naming a session gets FETCH_SESSION_ID_NOT_FOUND. Leader epochs are
// checked (KIP-320: FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH, diverging
// epochs from last_fetched_epoch). read_committed sees the same data as
// read_uncommitted: without transactions the last stable offset is the
// high watermark. Followers fetch with their replica id (v15+:
// replica_state): they read up to the log end offset, and their fetch
// offsets move the leader's high watermark (broker/replica).

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/log"
	"github.com/fjordhq/fjord/broker/protocol"
)

func (s *Server) handleFetch(ctx context.Context, r *kmsg.FetchRequest) protocol.Response {
	resp := r.ResponseKind().(*kmsg.FetchResponse)
	if r.Version >= 7 && r.SessionID != 0 {
		resp.ErrorCode = kerr.FetchSessionIDNotFound.Code
		return protocol.Response{Msg: resp}
	}
	var deadline time.Time
	if r.MaxWaitMillis > 0 {
		deadline = time.Now().Add(time.Duration(r.MaxWaitMillis) * time.Millisecond)
	}
	quotaClient := fetchQuotaFrom(ctx) // nil without a consumer quota (quotas.go)
	if quotaClient != nil {
		quotaClient.capMaxBytes(r)
	}
	var w *fetchWaiter
	var waitingOn []*partition
	defer func() {
		for _, p := range waitingOn {
			p.removeWaiter(w)
		}
	}()
	for {
		resp = r.ResponseKind().(*kmsg.FetchResponse)
		var leaders map[int32]bool
		data, total, anyErr := s.fillFetch(r, resp, &leaders)
		if total >= int(r.MinBytes) || anyErr || deadline.IsZero() || !time.Now().Before(deadline) || ctx.Err() != nil {
			if r.Version >= 16 && leaders != nil {
				resp.Brokers = s.fetchNodeEndpoints(s.image(), leaders)
			}
			if s.authz != nil {
				if post, _ := ctx.Value(fetchPostKey{}).(func(kmsg.Response)); post != nil {
					post(resp) // refused topics (authz.go)
				}
			}
			parts, err := encodeFetch(resp, data)
			if err != nil {
				s.log.Error("encode fetch response", "err", err)
				return protocol.Response{None: true, Close: true}
			}
			if quotaClient != nil {
				// Over consumer_byte_rate: Kafka answers without data.
				if d, empty := quotaClient.throttle(r, resp, parts); empty != nil {
					if parts, err = encodeFetch(empty, nil); err != nil {
						return protocol.Response{None: true, Close: true}
					}
					return protocol.Response{Msg: empty, Parts: parts, Throttle: d}
				}
			}
			s.metrics.fetched(total)
			if !isReplicaFetch(r) {
				// Counted on the answer sent, not on the reads of a long
				// poll that came back with too little.
				for i := range data {
					data[i].part.tm.bytesOut.Add(float64(data[i].res.Size))
				}
			}
			return protocol.Response{Msg: resp, Parts: parts}
		}
		// Not enough data yet: park on every requested partition, then
		// re-read everything when one of them grows.
		if w == nil {
			w = newFetchWaiter()
			waitingOn = s.fetchPartitions(r)
			for _, p := range waitingOn {
				p.addWaiter(w)
			}
			// Data may have arrived between the read and registering.
			continue
		}
		wait := time.Until(deadline)
		if isReplicaFetch(r) {
			// A throttled replica fetch is re-read when the leader's
			// replication quota has room again, not only at the deadline.
			if cl := s.cluster; cl != nil && cl.throttles != nil {
				if tw := cl.throttles.leader.Wait(); tw > 0 {
					wait = min(wait, tw)
				}
			}
		}
		timer := time.NewTimer(wait)
		select {
		case <-w.ch:
		case <-timer.C:
		case <-ctx.Done():
		}
		timer.Stop()
	}
}

// fetchPostKey carries authorization's additions to a fetch answer
// (Handle) to handleFetch, which adds them before encoding.
type fetchPostKey struct{}

// isReplicaFetch reports whether a follower sent the fetch (its replica
// id, or v15+ replica state, names a broker).
func isReplicaFetch(r *kmsg.FetchRequest) bool {
	return r.ReplicaID >= 0 || (r.Version >= 15 && r.ReplicaState.ID >= 0)
}

// fetchPartitions returns the local partitions a fetch names.
func (s *Server) fetchPartitions(r *kmsg.FetchRequest) []*partition {
	table := s.parts.Load()
	img := s.image()
	var ps []*partition
	for i := range r.Topics {
		name := r.Topics[i].Topic
		if r.Version >= 13 {
			if t := img.TopicsByID[r.Topics[i].TopicID]; t != nil {
				name = t.Name
			}
		}
		for _, rp := range r.Topics[i].Partitions {
			if p := table.get(name, rp.Partition); p != nil {
				ps = append(ps, p)
			}
		}
	}
	return ps
}

// fillFetch answers every requested partition into resp and returns the
// file ranges to send, the bytes they hold, and whether any partition
// answered with an error (which ends the long poll, as in Kafka).
func (s *Server) fillFetch(r *kmsg.FetchRequest, resp *kmsg.FetchResponse, leaders *map[int32]bool) ([]fetchData, int, bool) {
	replicaID, replicaEpoch := r.ReplicaID, int64(-1)
	if r.Version >= 15 {
		replicaID, replicaEpoch = r.ReplicaState.ID, r.ReplicaState.Epoch
	}
	table := s.parts.Load()
	img := s.image()
	maxBytes := int(r.MaxBytes)
	if maxBytes <= 0 {
		maxBytes = 1<<31 - 1
	}
	total := 0
	anyErr := false
	minOne := true
	var data []fetchData
	for i := range r.Topics {
		rt := &r.Topics[i]
		st := kmsg.NewFetchResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		name := rt.Topic
		unknownID := false
		if r.Version >= 13 {
			if t := img.TopicsByID[rt.TopicID]; t != nil {
				name = t.Name
			} else {
				unknownID = true
			}
		}
		for j := range rt.Partitions {
			rp := &rt.Partitions[j]
			sp := kmsg.NewFetchResponseTopicPartition()
			sp.Partition = rp.Partition
			// Never null: librdkafka rejects a null record set (Kafka
			// always sends an empty one).
			sp.RecordBatches = emptyRecords
			if r.IsolationLevel == 1 {
				sp.AbortedTransactions = []kmsg.FetchResponseTopicPartitionAbortedTransaction{}
			}
			p := table.get(name, rp.Partition)
			switch {
			case unknownID:
				sp.ErrorCode = kerr.UnknownTopicID.Code
			case p == nil:
				sp.ErrorCode = s.notHostedCode(img, name, rp.Partition)
				s.fetchCurrentLeader(img, name, rp.Partition, &sp.CurrentLeader, leaders)
			case !p.isLeader():
				sp.ErrorCode = kerr.NotLeaderForPartition.Code
				s.fetchCurrentLeader(img, name, rp.Partition, &sp.CurrentLeader, leaders)
			default:
				res := s.readPartition(p, replicaID, replicaEpoch, rp, &sp, maxBytes-total, minOne)
				if res.Size > 0 {
					minOne = false
					total += res.Size
					data = append(data, fetchData{topic: len(resp.Topics), partition: len(st.Partitions), res: res, part: p})
				}
			}
			if sp.ErrorCode != 0 {
				anyErr = true
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return data, total, anyErr
}

// readPartition fills one partition's answer and returns the file ranges
// of its batches.
//
// A follower (replicaID >= 0) reads up to the log end offset and its
// fetch offset tells the leader how far it has replicated; consumers read
// up to the high watermark.
func (s *Server) readPartition(p *partition, replicaID int32, replicaEpoch int64, rp *kmsg.FetchRequestTopicPartition, sp *kmsg.FetchResponseTopicPartition, budget int, minOne bool) log.ReadResult {
	epoch := p.leaderEpoch.Load()
	switch {
	case rp.CurrentLeaderEpoch >= 0 && rp.CurrentLeaderEpoch < epoch:
		sp.ErrorCode = kerr.FencedLeaderEpoch.Code
		return log.ReadResult{}
	case rp.CurrentLeaderEpoch > epoch:
		sp.ErrorCode = kerr.UnknownLeaderEpoch.Code
		return log.ReadResult{}
	}
	hw := p.highWatermark()
	limitOffset := hw
	throttled, hold := false, false
	if replicaID >= 0 {
		repl := p.replication()
		if repl == nil {
			sp.ErrorCode = kerr.NotLeaderForPartition.Code
			return log.ReadResult{}
		}
		st, err := repl.FollowerFetch(replicaID, replicaEpoch, rp.FetchOffset, rp.LastFetchedEpoch)
		if err != nil {
			sp.ErrorCode = errorCode(err)
			return log.ReadResult{}
		}
		hw, limitOffset = st.HighWatermark, p.log.LogEndOffset()
		if d := st.Diverging; d != nil {
			sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = hw, hw, p.log.LogStartOffset()
			sp.DivergingEpoch.Epoch, sp.DivergingEpoch.EndOffset = d.Epoch, d.EndOffset
			return log.ReadResult{}
		}
		throttled, hold = s.leaderThrottle(p, repl, replicaID)
	}
	sp.HighWatermark = hw
	sp.LastStableOffset = hw
	sp.LogStartOffset = p.log.LogStartOffset()
	if rp.LastFetchedEpoch >= 0 && replicaID < 0 {
		e, end := p.log.EndOffsetForEpoch(rp.LastFetchedEpoch)
		if e != rp.LastFetchedEpoch || end < rp.FetchOffset {
			sp.DivergingEpoch.Epoch = e
			sp.DivergingEpoch.EndOffset = end
			return log.ReadResult{}
		}
	}
	if rp.FetchOffset == limitOffset {
		return log.ReadResult{}
	}
	limit := min(int(rp.PartitionMaxBytes), budget)
	if (limit <= 0 && !minOne) || hold {
		// hold: leader.replication.throttled.rate is used up; the
		// follower's position still moved the ISR state above.
		return log.ReadResult{}
	}
	res, err := p.log.Read(rp.FetchOffset, max(limit, 0), limitOffset, minOne)
	if err != nil {
		if errors.Is(err, log.ErrOffsetOutOfRange) {
			// An offset between the high watermark and the log end is
			// not out of range, just not readable yet.
			if rp.FetchOffset > limitOffset && rp.FetchOffset <= p.log.LogEndOffset() {
				return log.ReadResult{}
			}
			sp.ErrorCode = kerr.OffsetOutOfRange.Code
			return log.ReadResult{}
		}
		sp.ErrorCode = errorCode(err)
		s.log.Error("fetch read failed", "topic", p.topic, "partition", p.index, "err", err)
		return log.ReadResult{}
	}
	if throttled {
		// As Kafka, every byte of a throttled partition sent to a replica
		// counts, in sync or not; only out-of-sync ones are held back.
		s.cluster.throttles.leader.Record(res.Size)
	}
	return res
}

var emptyRecords = []byte{}
