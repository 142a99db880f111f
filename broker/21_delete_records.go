package broker

// DeleteRecords, v0-v2. Moves a partition's log start offset to the
// requested offset (-1: the high watermark); whole segments below it are
// deleted. Offsets beyond the high watermark are OFFSET_OUT_OF_RANGE.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (s *Server) handleDeleteRecords(r *kmsg.DeleteRecordsRequest) *kmsg.DeleteRecordsResponse {
	resp := r.ResponseKind().(*kmsg.DeleteRecordsResponse)
	table := s.parts.Load()
	for _, rt := range r.Topics {
		st := kmsg.NewDeleteRecordsResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewDeleteRecordsResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.LowWatermark = -1
			p := table.get(rt.Topic, rp.Partition)
			if p == nil {
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			hw := p.highWatermark()
			off := rp.Offset
			if off == -1 {
				off = hw
			}
			switch {
			case off < 0 || off > hw:
				sp.ErrorCode = kerr.OffsetOutOfRange.Code
			default:
				if err := p.log.DeleteRecordsBefore(off); err != nil {
					sp.ErrorCode = errorCode(err)
				} else {
					sp.LowWatermark = p.log.LogStartOffset()
				}
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}
