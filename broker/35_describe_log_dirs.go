package broker

// DescribeLogDirs, v1-v5: each log dir with its partitions' sizes, and
// (v4+) the file system's total and usable bytes. Offset lag is 0: there
// are no future replicas being moved between dirs.

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (s *Server) handleDescribeLogDirs(r *kmsg.DescribeLogDirsRequest) *kmsg.DescribeLogDirsResponse {
	resp := r.ResponseKind().(*kmsg.DescribeLogDirsResponse)
	want := func(topic string, p int32) bool { return true }
	if r.Topics != nil {
		set := map[partitionKey]bool{}
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				set[partitionKey{t.Topic, p}] = true
			}
		}
		want = func(topic string, p int32) bool { return set[partitionKey{topic, p}] }
	}
	for _, d := range s.logs.DirInfo() {
		rd := kmsg.NewDescribeLogDirsResponseDir()
		rd.Dir = d.Path
		rd.TotalBytes, rd.UsableBytes = d.TotalBytes, d.UsableBytes
		byTopic := map[string]int{}
		for _, p := range d.Partitions {
			if !want(p.Topic, p.Partition) {
				continue
			}
			i, ok := byTopic[p.Topic]
			if !ok {
				i = len(rd.Topics)
				byTopic[p.Topic] = i
				t := kmsg.NewDescribeLogDirsResponseDirTopic()
				t.Topic = p.Topic
				rd.Topics = append(rd.Topics, t)
			}
			rp := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
			rp.Partition, rp.Size = p.Partition, p.Size
			rd.Topics[i].Partitions = append(rd.Topics[i].Partitions, rp)
		}
		resp.Dirs = append(resp.Dirs, rd)
	}
	return resp
}
