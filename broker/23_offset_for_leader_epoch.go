package broker

// OffsetForLeaderEpoch, v2-v4: the end offset of a leader epoch from the
// partition's leader-epoch cache (KIP-101/KIP-279), which consumers use
// to detect log truncation after a leader change (KIP-320).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (s *Server) handleOffsetForLeaderEpoch(r *kmsg.OffsetForLeaderEpochRequest) *kmsg.OffsetForLeaderEpochResponse {
	resp := r.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	table := s.parts.Load()
	img := s.image()
	for _, rt := range r.Topics {
		st := kmsg.NewOffsetForLeaderEpochResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.LeaderEpoch, sp.EndOffset = -1, -1
			p := table.get(rt.Topic, rp.Partition)
			epoch := int32(0)
			if p != nil {
				epoch = p.leaderEpoch.Load()
			}
			switch {
			case p == nil:
				sp.ErrorCode = s.notHostedCode(img, rt.Topic, rp.Partition)
			case !p.isLeader():
				sp.ErrorCode = kerr.NotLeaderForPartition.Code
			case rp.CurrentLeaderEpoch >= 0 && rp.CurrentLeaderEpoch < epoch:
				sp.ErrorCode = kerr.FencedLeaderEpoch.Code
			case rp.CurrentLeaderEpoch > epoch:
				sp.ErrorCode = kerr.UnknownLeaderEpoch.Code
			default:
				sp.LeaderEpoch, sp.EndOffset = p.log.EndOffsetForEpoch(rp.LeaderEpoch)
				if hw := p.highWatermark(); r.ReplicaID < 0 && sp.EndOffset > hw {
					sp.EndOffset = hw // consumers never learn of offsets past the high watermark
				}
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}
