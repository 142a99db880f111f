package broker

// ListOffsets, v1-v11. Special timestamps: -1 latest (the high watermark;
// for read_committed the last stable offset, which without transactions
// is the same), -2 earliest (log start), -3 max timestamp (v7+), -4
// earliest local (v8+, equal to earliest: no tiered storage), -5 latest
// tiered (v9+, -1: nothing is tiered). A real timestamp returns the first
// offset whose record timestamp is at or after it, or -1 if none is
// below the high watermark.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (s *Server) handleListOffsets(r *kmsg.ListOffsetsRequest) *kmsg.ListOffsetsResponse {
	resp := r.ResponseKind().(*kmsg.ListOffsetsResponse)
	table := s.parts.Load()
	img := s.image()
	for i := range r.Topics {
		rt := &r.Topics[i]
		st := kmsg.NewListOffsetsResponseTopic()
		st.Topic = rt.Topic
		for j := range rt.Partitions {
			rp := &rt.Partitions[j]
			sp := kmsg.NewListOffsetsResponseTopicPartition()
			sp.Partition = rp.Partition
			if p := table.get(rt.Topic, rp.Partition); p == nil {
				sp.ErrorCode = s.notHostedCode(img, rt.Topic, rp.Partition)
			} else if !p.isLeader() && r.ReplicaID != -2 { // -2: a debugging client may read followers
				sp.ErrorCode = kerr.NotLeaderForPartition.Code
			} else {
				s.listOffset(p, r.ReplicaID, rp, &sp)
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

func (s *Server) listOffset(p *partition, replicaID int32, rp *kmsg.ListOffsetsRequestTopicPartition, sp *kmsg.ListOffsetsResponseTopicPartition) {
	epoch := p.leaderEpoch.Load()
	switch {
	case rp.CurrentLeaderEpoch >= 0 && rp.CurrentLeaderEpoch < epoch:
		sp.ErrorCode = kerr.FencedLeaderEpoch.Code
		return
	case rp.CurrentLeaderEpoch > epoch:
		sp.ErrorCode = kerr.UnknownLeaderEpoch.Code
		return
	}
	hw := p.highWatermark()
	sp.Timestamp = -1
	// Kafka answers with the latest epoch of the leader-epoch cache, which
	// holds the current epoch from the moment the replica became leader.
	sp.LeaderEpoch = max(p.log.LatestEpoch(), epoch)
	switch rp.Timestamp {
	case -1: // latest
		sp.Offset = hw
		if replicaID >= 0 {
			sp.Offset = p.log.LogEndOffset() // a follower asks for the log end, as in Kafka
		}
	case -2, -4: // earliest, earliest local
		sp.Offset = p.log.LogStartOffset()
	case -3: // max timestamp
		ts, off := p.log.MaxTimestamp()
		if off < 0 || off >= hw {
			sp.Offset = -1
		} else {
			sp.Offset, sp.Timestamp = off, ts
		}
	case -5: // latest tiered
		sp.Offset = -1
	default:
		if rp.Timestamp < 0 {
			sp.ErrorCode = kerr.InvalidRequest.Code
			return
		}
		off, ts, ok, err := p.log.OffsetForTimestamp(rp.Timestamp)
		switch {
		case err != nil:
			sp.ErrorCode = errorCode(err)
		case !ok || off >= hw:
			sp.Offset = -1
		default:
			sp.Offset, sp.Timestamp = off, ts
		}
	}
	if sp.Offset < 0 {
		sp.LeaderEpoch = -1
	}
}
