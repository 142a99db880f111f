package controller

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/metadata"
)

// roundTrip encodes resp at its version and decodes it again, as the wire
// does: a handler answer kmsg cannot encode at that version would break
// the connection.
func wRoundTrip(t *testing.T, resp kmsg.Response) kmsg.Response {
	t.Helper()
	b := resp.AppendTo(nil)
	fresh := kmsg.ResponseForKey(resp.Key())
	fresh.SetVersion(resp.GetVersion())
	if err := fresh.ReadFrom(b); err != nil {
		t.Fatalf("%s v%d does not decode: %v", kmsg.NameForKey(resp.Key()), resp.GetVersion(), err)
	}
	return fresh
}

func wServe(t *testing.T, q ControllerQuorum, req kmsg.Request) kmsg.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, ok := ServeControllerRequest(ctx, q, req)
	if !ok {
		t.Fatalf("%s not served", kmsg.NameForKey(req.Key()))
	}
	if resp.GetVersion() != req.GetVersion() {
		t.Fatalf("%s answered at v%d, asked v%d", kmsg.NameForKey(req.Key()), resp.GetVersion(), req.GetVersion())
	}
	return wRoundTrip(t, resp)
}

func metadataFetch(version int16, offset int64, maxWait int32) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(version)
	req.ReplicaID = 9
	req.MaxWaitMillis = maxWait
	req.MaxBytes = 1 << 20
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic, ft.TopicID = MetadataTopic, MetadataTopicID
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.FetchOffset = offset
	fp.PartitionMaxBytes = 1 << 20
	ft.Partitions = append(ft.Partitions, fp)
	req.Topics = append(req.Topics, ft)
	return req
}

func TestMetadataTopicID(t *testing.T) {
	if s := MetadataTopicID.String(); s != "AAAAAAAAAAAAAAAAAAAAAQ" {
		t.Fatalf("metadata topic id %s", s)
	}
}

func TestServeRegistrationHeartbeatAllocate(t *testing.T) {
	c := newFakeCluster()
	q := &fakeQuorum{c: c, id: 1}
	inc := metadata.NewUUID()
	reg := BrokerRegistration{ID: 4, IncarnationID: inc, Host: "h4", Port: 9092, Rack: "r1",
		Listeners: []Listener{{Name: "INTERNAL", Host: "i4", Port: 9093}, {Name: "EXTERNAL", Host: "h4", Port: 9092}}}

	for _, v := range []int16{0, 4} {
		req := registrationRequest(reg, "fake-cluster")
		req.SetVersion(v)
		resp := wServe(t, q, req).(*kmsg.BrokerRegistrationResponse)
		if resp.ErrorCode != 0 || resp.BrokerEpoch <= 0 {
			t.Fatalf("v%d: registration: code %d epoch %d", v, resp.ErrorCode, resp.BrokerEpoch)
		}
	}
	b := c.image().Brokers[4]
	if b == nil || b.Host != "h4" || b.Port != 9092 || b.Rack != "r1" || b.IncarnationID != inc ||
		len(b.Listeners) != 2 || b.Listeners[0].Name != "EXTERNAL" || b.Listeners[1].Name != "INTERNAL" {
		t.Fatalf("registered broker %+v", b)
	}
	epoch := b.Epoch

	// Another cluster's broker is refused.
	req := registrationRequest(reg, "other-cluster")
	req.SetVersion(4)
	if r := wServe(t, q, req).(*kmsg.BrokerRegistrationResponse); r.ErrorCode != kerr.InconsistentClusterID.Code || r.BrokerEpoch != -1 {
		t.Fatalf("foreign cluster id: %+v", r)
	}

	hb := func(v int16, epoch, off int64, wantFence bool) *kmsg.BrokerHeartbeatResponse {
		req := kmsg.NewPtrBrokerHeartbeatRequest()
		req.SetVersion(v)
		req.BrokerID, req.BrokerEpoch, req.CurrentMetadataOffset, req.WantFence = 4, epoch, off, wantFence
		return wServe(t, q, req).(*kmsg.BrokerHeartbeatResponse)
	}
	if r := hb(0, epoch, epoch-1, true); r.ErrorCode != 0 || !r.IsFenced || r.IsCaughtUp {
		t.Fatalf("behind: %+v", r)
	}
	if r := hb(1, epoch, epoch, false); r.ErrorCode != 0 || r.IsFenced || !r.IsCaughtUp {
		t.Fatalf("caught up: %+v", r)
	}
	if r := hb(1, epoch-1, epoch, false); r.ErrorCode != kerr.StaleBrokerEpoch.Code || !r.IsFenced {
		t.Fatalf("stale epoch: %+v", r)
	}

	alloc := func(epoch int64) *kmsg.AllocateProducerIDsResponse {
		req := kmsg.NewPtrAllocateProducerIDsRequest()
		req.BrokerID, req.BrokerEpoch = 4, epoch
		return wServe(t, q, req).(*kmsg.AllocateProducerIDsResponse)
	}
	a1, a2 := alloc(epoch), alloc(epoch)
	if a1.ErrorCode != 0 || a2.ErrorCode != 0 || a1.ProducerIDLen != ProducerIDBlockSize || a2.ProducerIDStart != a1.ProducerIDStart+ProducerIDBlockSize {
		t.Fatalf("producer id blocks %+v %+v", a1, a2)
	}
	if r := alloc(epoch + 100); r.ErrorCode != kerr.StaleBrokerEpoch.Code {
		t.Fatalf("stale allocate: %+v", r)
	}

	// Not the active controller: NOT_CONTROLLER in each API's error field.
	c.setActive(2)
	if r := hb(1, epoch, epoch, false); r.ErrorCode != kerr.NotController.Code {
		t.Fatalf("heartbeat on inactive: %+v", r)
	}
	req = registrationRequest(reg, "")
	req.SetVersion(4)
	if r := wServe(t, q, req).(*kmsg.BrokerRegistrationResponse); r.ErrorCode != kerr.NotController.Code {
		t.Fatalf("register on inactive: %+v", r)
	}
	c.setActive(1)
	if r := alloc(epoch); r.ErrorCode != 0 {
		t.Fatalf("allocate: %+v", r)
	}
}

func TestServeAlterPartition(t *testing.T) {
	c := newFakeCluster()
	q := &fakeQuorum{c: c, id: 1}
	epoch, _ := q.RegisterBroker(context.Background(), BrokerRegistration{ID: 1, Host: "h", Port: 1})
	tid := c.createTopic(t, "t", 2, []int32{1, 2, 3})

	req := func(v int16, brokerEpoch int64, parts ...kmsg.AlterPartitionRequestTopicPartition) *kmsg.AlterPartitionRequest {
		r := kmsg.NewPtrAlterPartitionRequest()
		r.SetVersion(v)
		r.BrokerID, r.BrokerEpoch = 1, brokerEpoch
		rt := kmsg.NewAlterPartitionRequestTopic()
		rt.TopicID = tid
		rt.Partitions = parts
		r.Topics = append(r.Topics, rt)
		return r
	}
	part := func(p, partEpoch int32, isr ...int32) kmsg.AlterPartitionRequestTopicPartition {
		rp := kmsg.NewAlterPartitionRequestTopicPartition()
		rp.Partition, rp.PartitionEpoch, rp.NewISR = p, partEpoch, isr
		for _, id := range isr {
			rp.NewEpochISR = append(rp.NewEpochISR, kmsg.AlterPartitionRequestTopicPartitionNewEpochISR{BrokerID: id, BrokerEpoch: -1})
		}
		return rp
	}

	// v2 (ISR as ids) and v3 (ISR with broker epochs), one good and one
	// stale partition epoch in one request: per-partition errors.
	r := wServe(t, q, req(2, epoch, part(0, 0, 1, 2), part(1, 5, 1))).(*kmsg.AlterPartitionResponse)
	if r.ErrorCode != 0 || len(r.Topics) != 1 || r.Topics[0].TopidID != tid || len(r.Topics[0].Partitions) != 2 {
		t.Fatalf("alter partition: %+v", r)
	}
	p0, p1 := r.Topics[0].Partitions[0], r.Topics[0].Partitions[1]
	if p0.ErrorCode != 0 || !slices.Equal(p0.ISR, []int32{1, 2}) || p0.PartitionEpoch != 1 || p0.LeaderID != 1 {
		t.Fatalf("partition 0: %+v", p0)
	}
	if p1.ErrorCode != kerr.InvalidUpdateVersion.Code {
		t.Fatalf("partition 1: %+v", p1)
	}
	r = wServe(t, q, req(3, epoch, part(0, 1, 1, 3))).(*kmsg.AlterPartitionResponse)
	if p := r.Topics[0].Partitions[0]; p.ErrorCode != 0 || !slices.Equal(p.ISR, []int32{1, 3}) || p.PartitionEpoch != 2 {
		t.Fatalf("v3: %+v", p)
	}
	if got := c.image().Partition("t", 0); !slices.Equal(got.ISR, []int32{1, 3}) || got.PartitionEpoch != 2 {
		t.Fatalf("image partition %+v", got)
	}
	// A stale broker epoch fails the whole request, as Kafka does.
	if ar := wServe(t, q, req(2, epoch+9, part(0, 2, 1))).(*kmsg.AlterPartitionResponse); ar.ErrorCode != kerr.StaleBrokerEpoch.Code || len(ar.Topics) != 0 {
		t.Fatalf("stale broker epoch: %+v", ar)
	}
	c.setActive(3)
	if ar := wServe(t, q, req(2, epoch, part(0, 2, 1))).(*kmsg.AlterPartitionResponse); ar.ErrorCode != kerr.NotController.Code {
		t.Fatalf("inactive: %+v", ar)
	}
}

func TestServeDescribeQuorum(t *testing.T) {
	c := newFakeCluster()
	c.voters = map[int32]string{1: "127.0.0.1:9101", 2: "127.0.0.1:9102", 3: "127.0.0.1:9103"}
	for _, v := range []int16{0, 1, 2} {
		req := kmsg.NewPtrDescribeQuorumRequest()
		req.SetVersion(v)
		rt := kmsg.NewDescribeQuorumRequestTopic()
		rt.Topic = MetadataTopic
		rt.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{{Partition: 0}}
		req.Topics = append(req.Topics, rt)

		r := wServe(t, &fakeQuorum{c: c, id: 1}, req).(*kmsg.DescribeQuorumResponse)
		p := r.Topics[0].Partitions[0]
		if p.ErrorCode != 0 || p.LeaderID != 1 || p.LeaderEpoch != 7 || p.HighWatermark != c.image().Offset+1 || len(p.CurrentVoters) != 3 {
			t.Fatalf("v%d leader: %+v", v, p)
		}
		if v >= 2 && (len(r.Nodes) != 3 || r.Nodes[1].NodeID != 2 || r.Nodes[1].Listeners[0].Port != 9102) {
			t.Fatalf("v%d nodes: %+v", v, r.Nodes)
		}
		// A follower voter names the leader but says it is not it.
		p = wServe(t, &fakeQuorum{c: c, id: 2}, req).(*kmsg.DescribeQuorumResponse).Topics[0].Partitions[0]
		if p.ErrorCode != kerr.NotLeaderForPartition.Code || p.LeaderID != 1 {
			t.Fatalf("v%d follower: %+v", v, p)
		}
	}
}

func TestServeIgnoresOtherAPIs(t *testing.T) {
	q := &fakeQuorum{c: newFakeCluster(), id: 1}
	ctx := context.Background()
	if _, ok := ServeControllerRequest(ctx, q, kmsg.NewPtrMetadataRequest()); ok {
		t.Fatal("Metadata served as a controller API")
	}
	if _, ok := ServeControllerRequest(ctx, q, kmsg.NewPtrCreateTopicsRequest()); ok {
		t.Fatal("CreateTopics served as a controller API")
	}
	// A Fetch of an ordinary topic is the broker's.
	f := metadataFetch(13, 0, 0)
	f.Topics[0].TopicID = metadata.NewUUID()
	if _, ok := ServeControllerRequest(ctx, q, f); ok {
		t.Fatal("Fetch of a data topic served as metadata")
	}
	f = metadataFetch(12, 0, 0)
	f.Topics[0].Topic = "data"
	if _, ok := ServeControllerRequest(ctx, q, f); ok {
		t.Fatal("Fetch v12 of a data topic served as metadata")
	}
	for _, k := range []kmsg.Key{kmsg.DescribeQuorum, kmsg.FetchSnapshot} {
		if !slices.Contains(ControllerAPIs, k) {
			t.Errorf("ControllerAPIs lacks %s", kmsg.NameForKey(int16(k)))
		}
	}
	for _, k := range ControllerAPIs {
		if _, ok := ControllerVersions[k]; !ok {
			t.Errorf("no served versions for %s", kmsg.NameForKey(int16(k)))
		}
	}
}

func TestServeMetadataFetch(t *testing.T) {
	c := newFakeCluster()
	q := &fakeQuorum{c: c, id: 1}
	c.createTopic(t, "a", 2, []int32{1})
	c.createTopic(t, "b", 1, []int32{1})
	last := c.image().Offset // entries 1..last

	for _, v := range []int16{12, 13, 17} {
		f := metadataFetch(v, 1, 0)
		if v < 13 {
			f.Topics[0].Topic = MetadataTopic
		}
		r := wServe(t, q, f).(*kmsg.FetchResponse)
		p := r.Topics[0].Partitions[0]
		if p.ErrorCode != 0 || p.HighWatermark != last+1 || p.SnapshotID.EndOffset != -1 {
			t.Fatalf("v%d: %+v", v, p)
		}
		entries, err := decodeEntries(p.RecordBatches)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != int(last) || entries[0].Offset != 1 || entries[len(entries)-1].Offset != last {
			t.Fatalf("v%d: entries %+v", v, entries)
		}
		// The decoded entries rebuild the controller's image.
		img := metadata.Empty()
		for _, e := range entries {
			if img, err = img.ApplyEntry(e.Offset, e.Records); err != nil {
				t.Fatal(err)
			}
		}
		if wImageKey(t, img) != wImageKey(t, c.image()) {
			t.Fatalf("v%d: fetched log rebuilds a different image", v)
		}
	}

	// Byte limits cut whole entries but always return at least one.
	f := metadataFetch(17, 2, 0)
	f.Topics[0].Partitions[0].PartitionMaxBytes = 1
	entries, err := decodeEntries(wServe(t, q, f).(*kmsg.FetchResponse).Topics[0].Partitions[0].RecordBatches)
	if err != nil || len(entries) != 1 || entries[0].Offset != 2 {
		t.Fatalf("one-byte fetch: %+v %v", entries, err)
	}

	// Long poll: a fetch at the end waits for the next entry.
	got := make(chan *kmsg.FetchResponse, 1)
	go func() {
		resp, _ := ServeControllerRequest(context.Background(), q, metadataFetch(17, last+1, 5000))
		got <- resp.(*kmsg.FetchResponse)
	}()
	time.Sleep(50 * time.Millisecond)
	select {
	case r := <-got:
		t.Fatalf("long poll answered before data: %+v", r)
	default:
	}
	c.createTopic(t, "c", 1, []int32{1})
	select {
	case r := <-got:
		entries, err := decodeEntries(r.Topics[0].Partitions[0].RecordBatches)
		if err != nil || len(entries) != 1 || entries[0].Offset != last+1 {
			t.Fatalf("long poll: %+v %v", entries, err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("long poll not woken by a new entry")
	}
	// And answers empty at the deadline.
	start := time.Now()
	r := wServe(t, q, metadataFetch(17, last+2, 100)).(*kmsg.FetchResponse)
	if el := time.Since(start); el < 90*time.Millisecond || len(r.Topics[0].Partitions[0].RecordBatches) != 0 {
		t.Fatalf("empty long poll after %v: %+v", el, r.Topics[0].Partitions[0])
	}

	// Another cluster's fetch is refused, as KRaft does.
	f = metadataFetch(17, 1, 0)
	other := "other-cluster"
	f.ClusterID = &other
	if r := wServe(t, q, f).(*kmsg.FetchResponse); r.ErrorCode != kerr.InconsistentClusterID.Code {
		t.Fatalf("foreign cluster fetch: %+v", r)
	}
	same := "fake-cluster"
	f.ClusterID = &same
	if r := wServe(t, q, f).(*kmsg.FetchResponse); r.ErrorCode != 0 || len(r.Topics[0].Partitions[0].RecordBatches) == 0 {
		t.Fatalf("own cluster fetch: %+v", r)
	}

	// Two partitions of the metadata topic: KRaft answers INVALID_REQUEST.
	f = metadataFetch(17, 1, 0)
	f.Topics[0].Partitions = append(f.Topics[0].Partitions, kmsg.FetchRequestTopicPartition{Partition: 1})
	if r := wServe(t, q, f).(*kmsg.FetchResponse); r.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("two partitions: %+v", r)
	}

	// Not the active controller: NOT_LEADER_OR_FOLLOWER naming the leader.
	c.setActive(2)
	p := wServe(t, q, metadataFetch(17, 1, 1000)).(*kmsg.FetchResponse).Topics[0].Partitions[0]
	if p.ErrorCode != kerr.NotLeaderForPartition.Code || p.CurrentLeader.LeaderID != 2 || len(p.RecordBatches) != 0 {
		t.Fatalf("inactive fetch: %+v", p)
	}
}

func TestServeSnapshot(t *testing.T) {
	c := newFakeCluster()
	q := &fakeQuorum{c: c, id: 1}
	for i := range 30 {
		c.createTopic(t, string(rune('a'+i%26))+string(rune('a'+i/26)), 3, []int32{1, 2})
	}
	c.compact()
	hw := c.image().Offset + 1

	p := wServe(t, q, metadataFetch(17, 1, 1000)).(*kmsg.FetchResponse).Topics[0].Partitions[0]
	if p.ErrorCode != 0 || p.SnapshotID.EndOffset != hw || p.SnapshotID.Epoch != 7 || len(p.RecordBatches) != 0 {
		t.Fatalf("fetch below the log start: %+v", p)
	}

	snap := func(v int16, pos int64, maxBytes int32, end int64) kmsg.FetchSnapshotResponseTopicPartition {
		req := kmsg.NewPtrFetchSnapshotRequest()
		req.SetVersion(v)
		req.MaxBytes = maxBytes
		rt := kmsg.NewFetchSnapshotRequestTopic()
		rt.Topic = MetadataTopic
		rp := kmsg.NewFetchSnapshotRequestTopicPartition()
		rp.SnapshotID.EndOffset, rp.SnapshotID.Epoch = end, 7
		rp.Position = pos
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return wServe(t, q, req).(*kmsg.FetchSnapshotResponse).Topics[0].Partitions[0]
	}
	// Whole, at both versions.
	for _, v := range []int16{0, 1} {
		sp := snap(v, 0, 1<<30, hw)
		if sp.ErrorCode != 0 || sp.SnapshotID.EndOffset != hw || sp.Size != int64(len(sp.Bytes)) {
			t.Fatalf("v%d snapshot: code %d id %+v size %d len %d", v, sp.ErrorCode, sp.SnapshotID, sp.Size, len(sp.Bytes))
		}
		img, err := decodeSnapshot(sp.Bytes, sp.SnapshotID.EndOffset)
		if err != nil {
			t.Fatal(err)
		}
		if wImageKey(t, img) != wImageKey(t, c.image()) {
			t.Fatal("snapshot rebuilds a different image")
		}
	}
	// In 1000-byte chunks.
	var data []byte
	size := int64(-1)
	for i := 0; size < 0 || int64(len(data)) < size; i++ {
		if i > 1000 {
			t.Fatal("snapshot chunks never end")
		}
		sp := snap(1, int64(len(data)), 1000, hw)
		if sp.ErrorCode != 0 || sp.Position != int64(len(data)) || len(sp.Bytes) == 0 || len(sp.Bytes) > 1000 {
			t.Fatalf("chunk at %d: code %d pos %d len %d", len(data), sp.ErrorCode, sp.Position, len(sp.Bytes))
		}
		size = sp.Size
		data = append(data, sp.Bytes...)
	}
	if img, err := decodeSnapshot(data, hw); err != nil || wImageKey(t, img) != wImageKey(t, c.image()) {
		t.Fatalf("chunked snapshot: %v", err)
	}
	// Once the image moves on, a continuation of the old snapshot is gone.
	c.createTopic(t, "later", 1, []int32{1})
	if sp := snap(1, 1000, 1000, hw); sp.ErrorCode != kerr.SnapshotNotFound.Code {
		t.Fatalf("stale continuation: code %d", sp.ErrorCode)
	}
	// Position 0 always gets the current image.
	if sp := snap(1, 0, 1<<30, hw); sp.ErrorCode != 0 || sp.SnapshotID.EndOffset != hw+1 {
		t.Fatalf("new snapshot: %+v", sp.SnapshotID)
	}
	c.setActive(2)
	if sp := snap(1, 0, 1<<30, hw); sp.ErrorCode != kerr.NotLeaderForPartition.Code || sp.CurrentLeader.LeaderID != 2 {
		t.Fatalf("inactive snapshot: %+v", sp)
	}
}
