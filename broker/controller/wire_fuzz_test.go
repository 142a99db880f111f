package controller

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/metadata"
)

// FuzzDecodeMetadataRecords: whatever bytes a controller (or a corrupted
// stream) sends as the metadata log or a snapshot, decoding returns an
// error or entries, never panics.
func FuzzDecodeMetadataRecords(f *testing.F) {
	c := newFakeCluster()
	c.createTopic(f, "t", 2, []int32{1, 2})
	b, err := encodeEntries(c.entries, 1<<20)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	s, err := encodeSnapshot(c.image())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(s)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		if entries, err := decodeEntries(b); err == nil {
			img := metadata.Empty()
			for _, e := range entries {
				if n, err := img.ApplyEntry(e.Offset, e.Records); err == nil {
					img = n
				}
			}
		}
		decodeSnapshot(b, 10)
	})
}

// FuzzServeControllerRequest: any request that decodes is answered with
// a response that encodes at the request's version, without panicking.
func FuzzServeControllerRequest(f *testing.F) {
	seed := func(r kmsg.Request, v int16) {
		r.SetVersion(v)
		f.Add(r.Key(), v, r.AppendTo(nil))
	}
	seed(registrationRequest(BrokerRegistration{ID: 1, Host: "h", Port: 1, Rack: "r"}, "fake-cluster"), 4)
	hb := kmsg.NewPtrBrokerHeartbeatRequest()
	hb.BrokerID, hb.BrokerEpoch = 1, 2
	seed(hb, 1)
	seed(metadataFetch(17, 1, 10), 17)
	seed(metadataFetch(12, 0, 10), 12)
	ap := kmsg.NewPtrAlterPartitionRequest()
	ap.Topics = []kmsg.AlterPartitionRequestTopic{{Partitions: []kmsg.AlterPartitionRequestTopicPartition{{NewISR: []int32{1}}}}}
	seed(ap, 2)
	seed(ap, 3)
	seed(kmsg.NewPtrAllocateProducerIDsRequest(), 0)
	dq := kmsg.NewPtrDescribeQuorumRequest()
	dq.Topics = []kmsg.DescribeQuorumRequestTopic{{Topic: MetadataTopic, Partitions: []kmsg.DescribeQuorumRequestTopicPartition{{}}}}
	seed(dq, 2)
	fs := kmsg.NewPtrFetchSnapshotRequest()
	fs.Topics = []kmsg.FetchSnapshotRequestTopic{{Topic: MetadataTopic, Partitions: []kmsg.FetchSnapshotRequestTopicPartition{{Position: 3}}}}
	seed(fs, 1)
	f.Fuzz(func(t *testing.T, key int16, version int16, body []byte) {
		req := kmsg.RequestForKey(key)
		if req == nil || version < 0 || version > req.MaxVersion() {
			return
		}
		req.SetVersion(version)
		if req.ReadFrom(body) != nil {
			return
		}
		c := newFakeCluster()
		c.voters = map[int32]string{1: "127.0.0.1:1", 2: "bad"}
		q := &fakeQuorum{c: c, id: 1}
		q.RegisterBroker(context.Background(), BrokerRegistration{ID: 1, Host: "h", Port: 1})
		c.createTopic(t, "t", 1, []int32{1})
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		resp, ok := ServeControllerRequest(ctx, q, req)
		if !ok {
			return
		}
		if resp.GetVersion() != version {
			t.Fatalf("answered v%d to v%d", resp.GetVersion(), version)
		}
		resp.AppendTo(nil)
	})
}
