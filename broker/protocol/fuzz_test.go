package protocol

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// FuzzDecodeRequest feeds arbitrary frames to the request decoder: it
// must return a request or an error, never panic, for every API we serve.
func FuzzDecodeRequest(f *testing.F) {
	versions := map[int16]VersionRange{}
	for _, k := range []kmsg.Key{kmsg.Produce, kmsg.Fetch, kmsg.ListOffsets, kmsg.Metadata, kmsg.OffsetCommit,
		kmsg.OffsetFetch, kmsg.FindCoordinator, kmsg.JoinGroup, kmsg.Heartbeat, kmsg.LeaveGroup, kmsg.SyncGroup,
		kmsg.DescribeGroups, kmsg.ListGroups, kmsg.ApiVersions, kmsg.CreateTopics, kmsg.DeleteTopics,
		kmsg.DeleteRecords, kmsg.InitProducerID, kmsg.OffsetForLeaderEpoch, kmsg.DescribeConfigs,
		kmsg.AlterConfigs, kmsg.DescribeLogDirs, kmsg.CreatePartitions, kmsg.DeleteGroups,
		kmsg.IncrementalAlterConfigs, kmsg.OffsetDelete, kmsg.DescribeCluster, kmsg.DescribeProducers} {
		versions[int16(k)] = VersionRange{0, kmsg.RequestForKey(int16(k)).MaxVersion()}
	}
	srv := NewServer(Config{Versions: versions}, nil)
	c := &Conn{srv: srv}
	// Seeds: a valid request of each kind at its lowest and highest version.
	for k, vr := range versions {
		for _, v := range []int16{vr.Min, vr.Max} {
			r := kmsg.RequestForKey(k)
			if d, ok := r.(interface{ Default() }); ok {
				d.Default()
			}
			f.Add(frame(r, v, 1)[4:])
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		req, err := c.decode(b)
		if err == nil && req.Body == nil {
			t.Fatal("decode returned neither a body nor an error")
		}
	})
}

func FuzzSkipTags(f *testing.F) {
	f.Add([]byte{0})
	f.Add([]byte{1, 0, 2, 'a', 'b'})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		rest, err := skipTags(b)
		if err == nil && len(rest) > len(b) {
			t.Fatal("skipTags grew its input")
		}
	})
}
