package controller

// The controller's Kafka-protocol side: ServeControllerRequest answers the
// APIs a controller listener serves itself (KRaft's ControllerApis and the
// raft client's Fetch/FetchSnapshot/DescribeQuorum handling), on top of a
// ControllerQuorum.
//
// The metadata log is served as KRaft serves __cluster_metadata: a Fetch
// of that topic (by Kafka's fixed topic id, or by name before Fetch v13)
// at FetchOffset returns one record batch whose records sit at the log
// entries' offsets (raft indexes), each record's value the JSON
// []metadata.Record of its LogEntry. When the entries below FetchOffset's
// neighbourhood are compacted away, the answer carries a SnapshotID and
// the follower fetches the image with FetchSnapshot: record batches of one
// JSON-encoded []metadata.Record per record, rebuilding the image from
// empty (snapshotRecords, what Local writes when it compacts).
//
// Differences from KRaft, on purpose:
//   - records are our JSON, not Kafka's metadata record schemas: only Fjord
//     nodes read this log;
//   - there is no diverging-epoch check: brokers apply only committed
//     entries (the FSM applies committed raft entries, ReadLog returns
//     applied ones), so a follower's log never diverges from the leader's;
//   - a snapshot is built from the current image when asked for at
//     position 0 (its id is the image's offset), not read from a file, so
//     the follower may get a newer snapshot than the one the Fetch named.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/batch"
	"github.com/fjordhq/fjord/broker/metadata"
)

// ControllerQuorum is what ServeControllerRequest needs from a controller:
// the methods of Quorum it calls (Quorum satisfies it).
type ControllerQuorum interface {
	Image() *metadata.Image
	IsActive() bool
	ActiveID() int32
	RegisterBroker(ctx context.Context, r BrokerRegistration) (epoch int64, err *Error)
	BrokerHeartbeat(ctx context.Context, h BrokerHeartbeat) (HeartbeatResult, *Error)
	AlterPartition(ctx context.Context, r AlterPartitionRequest) (metadata.Partition, *Error)
	AllocateProducerIDs(ctx context.Context, n int64) (int64, error)
	ReadLog(from int64, max int) ([]LogEntry, error)
	WaitApplied(ctx context.Context, offset int64) error
}

// quorumEpoch is optionally implemented by a ControllerQuorum to report
// the raft term, which KRaft reports as the leader epoch of
// __cluster_metadata (DescribeQuorum, Fetch's CurrentLeader). Without it
// the epoch is answered as 0.
type quorumEpoch interface{ LeaderEpoch() int32 }

// quorumVoters is optionally implemented to list the voters
// (DescribeQuorum's CurrentVoters and Nodes).
type quorumVoters interface{ Voters() map[int32]string }

// quorumProgress is optionally implemented by a ControllerQuorum to
// report a voter's progress (DescribeQuorum's LogEndOffset and fetch
// timestamps) where the raft library does not.
type quorumProgress interface {
	VoterProgress(id int32) (offset int64, at time.Time, ok bool)
}

// MetadataTopic is the metadata log's topic name, and MetadataTopicID
// Kafka's fixed id for it (Uuid.METADATA_TOPIC_ID, "AAAAAAAAAAAAAAAAAAAAAQ").
const MetadataTopic = "__cluster_metadata"

var MetadataTopicID = metadata.UUID{15: 1}

// ProducerIDBlockSize is how many producer ids one AllocateProducerIds
// answer hands out (Kafka's ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE).
const ProducerIDBlockSize = 1000

// VersionRange is a served API's version range.
type VersionRange struct{ Min, Max int16 }

// ControllerVersions are the versions of ControllerAPIs a controller
// listener serves (Kafka 4's ranges; the Fetch range is the broker's
// own). The client sends the versions in clientVersions, inside these.
var ControllerVersions = map[kmsg.Key]VersionRange{
	kmsg.BrokerRegistration:  {0, 4},
	kmsg.BrokerHeartbeat:     {0, 1},
	kmsg.AlterPartition:      {2, 3}, // Kafka 4 removed v0-1 (topic names)
	kmsg.AllocateProducerIDs: {0, 0},
	kmsg.DescribeQuorum:      {0, 2},
	kmsg.FetchSnapshot:       {0, 1},
	kmsg.Fetch:               {4, 17},
	kmsg.UnregisterBroker:    {0, 0},
}

// clientVersions are the versions ControllerClient sends.
var clientVersions = map[kmsg.Key]int16{
	kmsg.BrokerRegistration:  4,
	kmsg.BrokerHeartbeat:     1,
	kmsg.AlterPartition:      2,
	kmsg.AllocateProducerIDs: 0,
	kmsg.DescribeQuorum:      2,
	kmsg.FetchSnapshot:       1,
	kmsg.Fetch:               17, // v13+: topic ids; v15+: ReplicaState
	kmsg.UnregisterBroker:    0,
}

// maxFetchEntries caps the log entries one Fetch answer reads.
const maxFetchEntries = 1000

// connCtxKey marks a connection's context (ConnectionContext).
type connCtxKey struct{}

// ConnectionContext marks ctx, the context of one controller-listener
// connection that is done exactly when that connection closes, as such
// for ServeControllerRequest: a broker whose heartbeat connection closes
// then keeps its session for only two heartbeat intervals, so a killed
// broker (whose kernel closes its sockets at once) is fenced about a
// second after its death rather than a session timeout after its last
// heartbeat. Without the mark (a request-scoped context) sessions only
// time out.
func ConnectionContext(ctx context.Context) context.Context {
	return context.WithValue(ctx, connCtxKey{}, ctx)
}

// ServeControllerRequest answers req if it is a controller API (see
// ControllerAPIs; a Fetch only if it is for __cluster_metadata) and
// reports false otherwise, leaving the request to the broker's handlers.
// The response has the request's version. ctx bounds long polls: it should
// end when the client's connection closes (and be marked so with
// ConnectionContext).
func ServeControllerRequest(ctx context.Context, q ControllerQuorum, req kmsg.Request) (kmsg.Response, bool) {
	var resp kmsg.Response
	switch r := req.(type) {
	case *kmsg.BrokerRegistrationRequest:
		resp = serveBrokerRegistration(ctx, q, r)
	case *kmsg.BrokerHeartbeatRequest:
		resp = serveBrokerHeartbeat(ctx, q, r)
	case *kmsg.AlterPartitionRequest:
		resp = serveAlterPartition(ctx, q, r)
	case *kmsg.AllocateProducerIDsRequest:
		resp = serveAllocateProducerIDs(ctx, q, r)
	case *kmsg.DescribeQuorumRequest:
		resp = serveDescribeQuorum(q, r)
	case *kmsg.FetchRequest:
		if !isMetadataFetch(r) {
			return nil, false
		}
		resp = serveMetadataFetch(ctx, q, r)
	case *kmsg.FetchSnapshotRequest:
		resp = serveFetchSnapshot(q, r)
	case *kmsg.UnregisterBrokerRequest:
		resp = serveUnregisterBroker(ctx, q, r)
	default:
		return nil, false
	}
	resp.SetVersion(req.GetVersion())
	return resp, true
}

func leaderEpoch(q QuorumView) int32 {
	if e, ok := q.(quorumEpoch); ok {
		return e.LeaderEpoch()
	}
	return 0
}

// kafkaCode is err's Kafka code: *Error and *kerr.Error (also wrapped) keep
// theirs, a context's end is REQUEST_TIMED_OUT, anything else
// UNKNOWN_SERVER_ERROR.
func kafkaCode(err error) (int16, string) {
	if err == nil {
		return 0, ""
	}
	var ce *Error
	if errors.As(err, &ce) && ce != nil {
		return ce.Code.Code, ce.Message
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code, err.Error()
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return kerr.RequestTimedOut.Code, err.Error()
	}
	return kerr.UnknownServerError.Code, err.Error()
}

// controllerErr is the code of a *Error from a Quorum method (nil: 0).
func controllerErr(e *Error) int16 {
	if e == nil {
		return 0
	}
	return e.Code.Code
}

func serveBrokerRegistration(ctx context.Context, q ControllerQuorum, r *kmsg.BrokerRegistrationRequest) kmsg.Response {
	resp := r.ResponseKind().(*kmsg.BrokerRegistrationResponse)
	resp.BrokerEpoch = -1
	// Kafka's ClusterControlManager refuses a broker formatted for
	// another cluster; an empty id (not yet known) is let through.
	if img := q.Image(); r.ClusterID != "" && img.ClusterID != "" && r.ClusterID != img.ClusterID {
		resp.ErrorCode = kerr.InconsistentClusterID.Code
		return resp
	}
	epoch, err := q.RegisterBroker(ctx, registrationFromRequest(r))
	if err != nil {
		resp.ErrorCode = err.Code.Code
		return resp
	}
	resp.BrokerEpoch = epoch
	return resp
}

// registrationFromRequest reads a BrokerRegistrationRequest. The first
// listener is the advertised client listener (Host, Port): the client
// sends it first.
func registrationFromRequest(r *kmsg.BrokerRegistrationRequest) BrokerRegistration {
	reg := BrokerRegistration{ID: r.BrokerID, IncarnationID: metadata.UUID(r.IncarnationID)}
	if r.Rack != nil {
		reg.Rack = *r.Rack
	}
	for i, l := range r.Listeners {
		if i == 0 {
			reg.Host, reg.Port = l.Host, int32(l.Port)
		}
		reg.Listeners = append(reg.Listeners, Listener{Name: l.Name, Host: l.Host, Port: int32(l.Port)})
	}
	return reg
}

// registrationRequest builds the request for reg: the listener matching
// reg's Host:Port goes first (named PLAINTEXT when reg.Listeners does not
// name it), then the others.
func registrationRequest(reg BrokerRegistration, clusterID string) *kmsg.BrokerRegistrationRequest {
	r := kmsg.NewPtrBrokerRegistrationRequest()
	r.BrokerID = reg.ID
	r.ClusterID = clusterID
	r.IncarnationID = reg.IncarnationID
	if reg.Rack != "" {
		rack := reg.Rack
		r.Rack = &rack
	}
	first := kmsg.BrokerRegistrationRequestListener{Name: "PLAINTEXT", Host: reg.Host, Port: uint16(reg.Port)}
	var rest []kmsg.BrokerRegistrationRequestListener
	found := false
	for _, l := range reg.Listeners {
		kl := kmsg.BrokerRegistrationRequestListener{Name: l.Name, Host: l.Host, Port: uint16(l.Port)}
		if !found && l.Host == reg.Host && l.Port == reg.Port {
			first, found = kl, true
			continue
		}
		rest = append(rest, kl)
	}
	r.Listeners = append([]kmsg.BrokerRegistrationRequestListener{first}, rest...)
	return r
}

func serveBrokerHeartbeat(ctx context.Context, q ControllerQuorum, r *kmsg.BrokerHeartbeatRequest) kmsg.Response {
	resp := r.ResponseKind().(*kmsg.BrokerHeartbeatResponse)
	res, err := q.BrokerHeartbeat(ctx, BrokerHeartbeat{
		ID:             r.BrokerID,
		Epoch:          r.BrokerEpoch,
		MetadataOffset: r.CurrentMetadataOffset,
		WantFence:      r.WantFence,
		WantShutdown:   r.WantShutdown,
	})
	if err != nil {
		resp.ErrorCode = err.Code.Code
		return resp // IsFenced keeps Kafka's default, true
	}
	resp.IsCaughtUp, resp.IsFenced, resp.ShouldShutdown = res.IsCaughtUp, res.IsFenced, res.ShouldShutdown
	return resp
}

// serveAlterPartition applies each partition's change. As in Kafka's
// ReplicationControlManager, a stale broker epoch or an inactive
// controller fails the whole request (top-level error); every other error
// is the partition's.
func serveAlterPartition(ctx context.Context, q ControllerQuorum, r *kmsg.AlterPartitionRequest) kmsg.Response {
	resp := r.ResponseKind().(*kmsg.AlterPartitionResponse)
	resp.SetVersion(r.Version)
	for _, t := range r.Topics {
		rt := kmsg.NewAlterPartitionResponseTopic()
		rt.Topic, rt.TopidID = t.Topic, t.TopicID
		for _, p := range t.Partitions {
			isr := p.NewISR
			if r.Version >= 3 {
				isr = make([]int32, 0, len(p.NewEpochISR))
				for _, e := range p.NewEpochISR {
					isr = append(isr, e.BrokerID)
				}
			}
			rp := kmsg.NewAlterPartitionResponseTopicPartition()
			rp.Partition = p.Partition
			part, err := q.AlterPartition(ctx, AlterPartitionRequest{
				BrokerID:       r.BrokerID,
				BrokerEpoch:    r.BrokerEpoch,
				TopicID:        metadata.UUID(t.TopicID),
				Partition:      p.Partition,
				LeaderEpoch:    p.LeaderEpoch,
				PartitionEpoch: p.PartitionEpoch,
				NewISR:         isr,
			})
			if err != nil {
				if err.Code == kerr.NotController || err.Code == kerr.StaleBrokerEpoch {
					return &kmsg.AlterPartitionResponse{Version: r.Version, ErrorCode: err.Code.Code}
				}
				rp.ErrorCode = err.Code.Code
			} else {
				rp.LeaderID = part.Leader
				rp.LeaderEpoch = part.LeaderEpoch
				rp.ISR = part.ISR
				rp.PartitionEpoch = part.PartitionEpoch
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

func serveAllocateProducerIDs(ctx context.Context, q ControllerQuorum, r *kmsg.AllocateProducerIDsRequest) kmsg.Response {
	resp := r.ResponseKind().(*kmsg.AllocateProducerIDsResponse)
	// Kafka's ProducerIdControlManager: only a live registration may take
	// a block (checkBrokerEpoch).
	if b := q.Image().Brokers[r.BrokerID]; q.IsActive() && (b == nil || b.Epoch != r.BrokerEpoch) {
		resp.ErrorCode = kerr.StaleBrokerEpoch.Code
		return resp
	}
	first, err := q.AllocateProducerIDs(ctx, ProducerIDBlockSize)
	if err != nil {
		resp.ErrorCode, _ = kafkaCode(err)
		return resp
	}
	resp.ProducerIDStart, resp.ProducerIDLen = first, ProducerIDBlockSize
	return resp
}

// QuorumView is what DescribeQuorum reads of a quorum: a raft voter
// (Quorum), or a single node that is its own one-voter quorum. Voters
// (quorumVoters) and the epoch (quorumEpoch) are read when implemented.
type QuorumView interface {
	Image() *metadata.Image
	IsActive() bool
	ActiveID() int32
}

// DescribeQuorum answers KRaft's DescribeQuorum for __cluster_metadata-0
// from q: brokers answer it for admin clients
// (kafka-metadata-quorum.sh --bootstrap-server) as the controllers do.
func DescribeQuorum(q QuorumView, r *kmsg.DescribeQuorumRequest) *kmsg.DescribeQuorumResponse {
	return serveDescribeQuorum(q, r).(*kmsg.DescribeQuorumResponse)
}

// serveDescribeQuorum answers from any voter: the active controller
// without error, the others with NOT_LEADER_OR_FOLLOWER (as KRaft does)
// but still naming the leader they know, which is how ControllerClient
// finds the active controller from whichever voter it reaches.
func serveDescribeQuorum(q QuorumView, r *kmsg.DescribeQuorumRequest) kmsg.Response {
	resp := r.ResponseKind().(*kmsg.DescribeQuorumResponse)
	resp.SetVersion(r.Version)
	img := q.Image()
	var voters map[int32]string
	if v, ok := q.(quorumVoters); ok {
		voters = v.Voters()
	}
	for _, t := range r.Topics {
		rt := kmsg.NewDescribeQuorumResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewDescribeQuorumResponseTopicPartition()
			rp.Partition = p.Partition
			rp.LeaderID = -1
			switch {
			case t.Topic != MetadataTopic || p.Partition != 0:
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			default:
				rp.LeaderID = q.ActiveID()
				rp.LeaderEpoch = leaderEpoch(q)
				rp.HighWatermark = img.Offset + 1
				if !q.IsActive() {
					rp.ErrorCode = kerr.NotLeaderForPartition.Code
				}
				for _, id := range sortedIDs(voters) {
					rs := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
					rs.ReplicaID = id
					rs.LogEndOffset = -1
					if id == q.ActiveID() {
						rs.LogEndOffset = img.Offset + 1
					} else if pq, ok := q.(quorumProgress); ok {
						if off, at, ok := pq.VoterProgress(id); ok {
							rs.LogEndOffset = off + 1
							rs.LastFetchTimestamp = at.UnixMilli()
							if off >= img.Offset {
								rs.LastCaughtUpTimestamp = at.UnixMilli()
							}
						}
					}
					rp.CurrentVoters = append(rp.CurrentVoters, rs)
				}
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	for _, id := range sortedIDs(voters) {
		host, port, err := splitHostPort(voters[id])
		if err != nil {
			continue
		}
		n := kmsg.NewDescribeQuorumResponseNode()
		n.NodeID = id
		n.Listeners = []kmsg.DescribeQuorumResponseNodeListener{{Name: "CONTROLLER", Host: host, Port: uint16(port)}}
		resp.Nodes = append(resp.Nodes, n)
	}
	return resp
}

// sameCluster is KRaft's hasValidClusterId: a metadata fetch naming
// another cluster is refused; one naming none is served.
func sameCluster(q ControllerQuorum, id *string) bool {
	return id == nil || *id == "" || *id == q.Image().ClusterID
}

func isMetadataFetch(r *kmsg.FetchRequest) bool {
	for _, t := range r.Topics {
		if isMetadataTopic(r.Version, t.Topic, t.TopicID) {
			return true
		}
	}
	return false
}

func isMetadataTopic(version int16, name string, id [16]byte) bool {
	if version >= 13 {
		return metadata.UUID(id) == MetadataTopicID
	}
	return name == MetadataTopic
}

// serveMetadataFetch serves KRaft's Fetch of __cluster_metadata-0.
func serveMetadataFetch(ctx context.Context, q ControllerQuorum, r *kmsg.FetchRequest) kmsg.Response {
	resp := r.ResponseKind().(*kmsg.FetchResponse)
	resp.SetVersion(r.Version)
	if !sameCluster(q, r.ClusterID) {
		resp.ErrorCode = kerr.InconsistentClusterID.Code
		return resp
	}
	// KRaft serves exactly one partition of one topic.
	if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 || r.Topics[0].Partitions[0].Partition != 0 {
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp
	}
	rt := kmsg.NewFetchResponseTopic()
	rt.Topic, rt.TopicID = MetadataTopic, MetadataTopicID
	rp := kmsg.NewFetchResponseTopicPartition()
	rp.Partition = 0
	rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = -1, -1, -1
	fp := r.Topics[0].Partitions[0]
	fill := func() {
		rp.CurrentLeader.LeaderID = q.ActiveID()
		rp.CurrentLeader.LeaderEpoch = leaderEpoch(q)
		if !q.IsActive() {
			rp.ErrorCode = kerr.NotLeaderForPartition.Code
			return
		}
		if fp.FetchOffset < 0 {
			rp.ErrorCode = kerr.InvalidRequest.Code
			return
		}
		hw := q.Image().Offset + 1
		rp.HighWatermark, rp.LastStableOffset = hw, hw
		entries, err := q.ReadLog(fp.FetchOffset, maxFetchEntries)
		if errors.Is(err, ErrSnapshotNeeded) {
			rp.SnapshotID.EndOffset = hw
			rp.SnapshotID.Epoch = leaderEpoch(q)
			return
		}
		if err != nil {
			rp.ErrorCode, _ = kafkaCode(err)
			return
		}
		maxBytes := int(min(fp.PartitionMaxBytes, r.MaxBytes))
		if maxBytes <= 0 {
			maxBytes = 1 << 20
		}
		rp.RecordBatches, err = encodeEntries(entries, maxBytes)
		if err != nil {
			rp.ErrorCode, _ = kafkaCode(err)
		}
	}
	fill()
	// Long poll, as KRaft's fetch purgatory: an empty answer without error
	// waits up to MaxWaitMillis for the log to reach FetchOffset.
	if rp.ErrorCode == 0 && len(rp.RecordBatches) == 0 && rp.SnapshotID.EndOffset < 0 && r.MaxWaitMillis > 0 {
		wctx, cancel := context.WithTimeout(ctx, time.Duration(r.MaxWaitMillis)*time.Millisecond)
		err := q.WaitApplied(wctx, fp.FetchOffset)
		cancel()
		if err == nil {
			rp = kmsg.NewFetchResponseTopicPartition()
			rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = -1, -1, -1
			fill()
		}
	}
	rt.Partitions = append(rt.Partitions, rp)
	resp.Topics = append(resp.Topics, rt)
	return resp
}

// encodeEntries builds one record batch of entries (at least one, then as
// many as fit in maxBytes of JSON), record offset = entry offset.
func encodeEntries(entries []LogEntry, maxBytes int) ([]byte, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	now := time.Now().UnixMilli()
	recs := make([]batch.Record, 0, len(entries))
	size := 0
	for i, e := range entries {
		if i > 0 && e.Offset != entries[i-1].Offset+1 {
			break // never hand out a gap; the next fetch continues here
		}
		v, err := json.Marshal(e.Records)
		if err != nil {
			return nil, fmt.Errorf("encode metadata entry %d: %w", e.Offset, err)
		}
		if i > 0 && size+len(v) > maxBytes {
			break
		}
		size += len(v)
		recs = append(recs, batch.Record{Offset: e.Offset, Timestamp: now, Value: v})
	}
	return batch.Build(nil, batch.BuildHeader{BaseOffset: recs[0].Offset, PartitionLeaderEpoch: -1}, recs, batch.CodecNone)
}

// decodeEntries reads record batches written by encodeEntries.
func decodeEntries(b []byte) ([]LogEntry, error) {
	var out []LogEntry
	err := walkRecords(b, func(off int64, v []byte) error {
		var recs []metadata.Record
		if err := json.Unmarshal(v, &recs); err != nil {
			return fmt.Errorf("metadata entry %d: %w", off, err)
		}
		out = append(out, LogEntry{Offset: off, Records: recs})
		return nil
	})
	return out, err
}

// walkRecords calls fn for every record of the batches in b; a partial
// batch at the end (a fetch cut at MaxBytes) is ignored, as consumers do.
func walkRecords(b []byte, fn func(offset int64, value []byte) error) error {
	for len(b) > 0 {
		bt, rest, err := batch.Next(b)
		if errors.Is(err, batch.ErrTruncated) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := bt.Validate(); err != nil {
			return err
		}
		if err := bt.Records(func(r *batch.Record) error { return fn(r.Offset, r.Value) }); err != nil {
			return err
		}
		b = rest
	}
	return nil
}

// snapshotBatchRecords is how many metadata records go in one snapshot
// batch.
const snapshotBatchRecords = 1000

// encodeSnapshot encodes img as record batches: one metadata.Record (as a
// one-element JSON array) per Kafka record, offsets from 0.
func encodeSnapshot(img *metadata.Image) ([]byte, error) {
	recs := snapshotRecords(img)
	now := time.Now().UnixMilli()
	var out []byte
	for start := 0; start < len(recs); start += snapshotBatchRecords {
		end := min(start+snapshotBatchRecords, len(recs))
		brs := make([]batch.Record, 0, end-start)
		for i := start; i < end; i++ {
			v, err := json.Marshal(recs[i : i+1])
			if err != nil {
				return nil, err
			}
			brs = append(brs, batch.Record{Offset: int64(i), Timestamp: now, Value: v})
		}
		var err error
		if out, err = batch.Build(out, batch.BuildHeader{BaseOffset: int64(start), PartitionLeaderEpoch: -1}, brs, batch.CodecNone); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// decodeSnapshot rebuilds the image a snapshot with the given end offset
// (exclusive, as KRaft's snapshot ids) describes.
func decodeSnapshot(b []byte, endOffset int64) (*metadata.Image, error) {
	var recs []metadata.Record
	if err := walkRecords(b, func(off int64, v []byte) error {
		var rs []metadata.Record
		if err := json.Unmarshal(v, &rs); err != nil {
			return fmt.Errorf("metadata snapshot record %d: %w", off, err)
		}
		recs = append(recs, rs...)
		return nil
	}); err != nil {
		return nil, err
	}
	img, err := metadata.Empty().Apply(0, recs)
	if err != nil {
		return nil, err
	}
	img.Offset = endOffset - 1 // not yet published: still ours to set
	return img, nil
}

// serveFetchSnapshot serves the current image as the snapshot. Position 0
// takes a new snapshot of the current image; later positions continue it
// only while the image has not moved on (else SNAPSHOT_NOT_FOUND, and the
// follower starts over).
func serveFetchSnapshot(q ControllerQuorum, r *kmsg.FetchSnapshotRequest) kmsg.Response {
	resp := r.ResponseKind().(*kmsg.FetchSnapshotResponse)
	resp.SetVersion(r.Version)
	if !sameCluster(q, r.ClusterID) {
		resp.ErrorCode = kerr.InconsistentClusterID.Code
		return resp
	}
	if len(r.Topics) != 1 || r.Topics[0].Topic != MetadataTopic || len(r.Topics[0].Partitions) != 1 || r.Topics[0].Partitions[0].Partition != 0 {
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp
	}
	p := r.Topics[0].Partitions[0]
	rt := kmsg.NewFetchSnapshotResponseTopic()
	rt.Topic = MetadataTopic
	rp := kmsg.NewFetchSnapshotResponseTopicPartition()
	rp.CurrentLeader.LeaderID = q.ActiveID()
	rp.CurrentLeader.LeaderEpoch = leaderEpoch(q)
	rp.SnapshotID.EndOffset, rp.SnapshotID.Epoch = p.SnapshotID.EndOffset, p.SnapshotID.Epoch
	defer func() {
		rt.Partitions = append(rt.Partitions, rp)
		resp.Topics = append(resp.Topics, rt)
	}()
	if !q.IsActive() {
		rp.ErrorCode = kerr.NotLeaderForPartition.Code
		return resp
	}
	img := q.Image()
	if p.Position < 0 || (p.Position > 0 && p.SnapshotID.EndOffset != img.Offset+1) {
		rp.ErrorCode = kerr.SnapshotNotFound.Code
		return resp
	}
	data, err := encodeSnapshot(img)
	if err != nil {
		rp.ErrorCode, _ = kafkaCode(err)
		return resp
	}
	if p.Position > int64(len(data)) {
		rp.ErrorCode = kerr.PositionOutOfRange.Code
		return resp
	}
	rp.SnapshotID.EndOffset, rp.SnapshotID.Epoch = img.Offset+1, leaderEpoch(q)
	rp.Size, rp.Position = int64(len(data)), p.Position
	n := int64(len(data)) - p.Position
	if r.MaxBytes > 0 && n > int64(r.MaxBytes) {
		n = int64(r.MaxBytes)
	}
	rp.Bytes = data[p.Position : p.Position+n]
	return resp
}
