package controller

// ControllerClient is a node's connection to the active controller, as
// Kafka's NodeToControllerChannelManager: it finds the active controller
// by asking any voter (DescribeQuorum names the leader), sends requests
// there, and on a broken connection or a NOT_CONTROLLER answer looks the
// controller up again and retries, with a bounded backoff, until the
// caller's context ends.
//
// Each voter has two connections ("lanes"): one for ordinary requests and
// one for the metadata follower's long-poll Fetch. A controller listener
// answers one request at a time per connection, so a heartbeat or an
// AlterPartition queued behind a Fetch waiting MaxWait would be delayed
// by it; ISR changes sit on the acks=all path.
//
// Retried requests may be applied twice if a connection broke after the
// controller applied one and before its answer arrived (a CreateTopics
// then answers TOPIC_ALREADY_EXISTS, an AllocateProducerIds skips a
// block). Kafka's forwarding has the same window.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/metadata"
	"github.com/fjordhq/fjord/broker/wire"
)

// ClientOptions configures a ControllerClient.
type ClientOptions struct {
	// NodeID is this node's id: the client id is "fjord-node-<id>" and
	// metadata fetches carry it as the replica id.
	NodeID int32
	// Voters is controller.quorum.voters: node id -> host:port.
	Voters map[int32]string
	Logger *slog.Logger
	// RequestTimeout bounds one attempt (dial + request + answer) on one
	// controller; the caller's context bounds the whole retry loop.
	// Default 30 s (Kafka's controller channel request.timeout.ms).
	RequestTimeout time.Duration
	// Dialer secures connections to the controller listener (TLS and
	// SASL per its security protocol); nil dials PLAINTEXT.
	Dialer *wire.Dialer
	// ClusterID, if set, is sent with broker registrations and metadata
	// fetches; a controller of another cluster answers
	// INCONSISTENT_CLUSTER_ID.
	ClusterID string
}

// Retry backoff after a failed attempt: doubles from min to max.
const (
	retryBackoffMin = 50 * time.Millisecond
	retryBackoffMax = 500 * time.Millisecond
	dialTimeout     = 3 * time.Second
)

type lane int

const (
	laneRequest lane = iota
	laneFetch
	numLanes
)

// ControllerClient sends requests to the active controller. It is safe
// for concurrent use.
type ControllerClient struct {
	opts     ClientOptions
	log      *slog.Logger
	clientID string
	ids      []int32 // voter ids, sorted

	active atomic.Int32 // -1: unknown

	mu     sync.Mutex
	conns  map[connKey]*wire.Conn
	closed bool
}

type connKey struct {
	id   int32
	lane lane
}

// ErrClientClosed is returned by requests on a closed ControllerClient.
var ErrClientClosed = errors.New("controller client closed")

// NewControllerClient returns a client; it connects lazily.
func NewControllerClient(opts ClientOptions) *ControllerClient {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = 30 * time.Second
	}
	c := &ControllerClient{
		opts:     opts,
		log:      opts.Logger,
		clientID: "fjord-node-" + strconv.Itoa(int(opts.NodeID)),
		ids:      sortedIDs(opts.Voters),
		conns:    map[connKey]*wire.Conn{},
	}
	c.active.Store(-1)
	return c
}

// ActiveID is the active controller as last learned, -1 if unknown.
func (c *ControllerClient) ActiveID() int32 { return c.active.Load() }

// NodeID is the node id the client was made with.
func (c *ControllerClient) NodeID() int32 { return c.opts.NodeID }

// Close closes every connection; later requests fail with ErrClientClosed.
func (c *ControllerClient) Close() error {
	c.mu.Lock()
	c.closed = true
	conns := c.conns
	c.conns = map[connKey]*wire.Conn{}
	c.mu.Unlock()
	for _, cn := range conns {
		cn.Close()
	}
	return nil
}

// Request sends a controller API request (its version is set here) to the
// active controller, retrying as the type doc says, and returns the
// controller's answer (which may still carry other errors).
func (c *ControllerClient) Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	if v, ok := clientVersions[kmsg.Key(req.Key())]; ok {
		req.SetVersion(v)
	}
	return c.do(ctx, laneRequest, req, c.opts.RequestTimeout)
}

// forwardable are the admin APIs Forward accepts.
var forwardable = map[kmsg.Key]bool{
	kmsg.CreateTopics: true, kmsg.DeleteTopics: true, kmsg.CreatePartitions: true,
	kmsg.AlterConfigs: true, kmsg.IncrementalAlterConfigs: true, kmsg.ElectLeaders: true,
	kmsg.AlterPartitionAssignments: true, kmsg.ListPartitionReassignments: true,
	kmsg.UnregisterBroker: true,
	kmsg.CreateACLs:       true, kmsg.DeleteACLs: true, kmsg.AlterUserSCRAMCredentials: true,
	kmsg.AlterClientQuotas: true,
	// Answered by the active controller for admin clients
	// (kafka-metadata-quorum.sh --bootstrap-server).
	kmsg.DescribeQuorum: true,
}

// Forward sends an admin request, at the version the client sent it, to
// the active controller and returns the answer as is. Answers naming
// NOT_CONTROLLER anywhere are retried like Request's.
func (c *ControllerClient) Forward(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	if !forwardable[kmsg.Key(req.Key())] {
		return nil, fmt.Errorf("controller client: %s is not forwarded to the controller", kmsg.NameForKey(req.Key()))
	}
	return c.do(ctx, laneRequest, req, c.opts.RequestTimeout)
}

// do is the retry loop: find the active controller, send, and start over
// on a connection error or a not-controller answer. One attempt on one
// controller lasts at most attempt: a controller that went silent (cut
// off, not crashed) is given up on after that and the others asked.
func (c *ControllerClient) do(ctx context.Context, ln lane, req kmsg.Request, attempt time.Duration) (kmsg.Response, error) {
	backoff := retryBackoffMin
	var lastErr error
	for try := 0; ; try++ {
		if try > 0 {
			t := time.NewTimer(backoff)
			select {
			case <-ctx.Done():
				t.Stop()
				if lastErr != nil {
					return nil, fmt.Errorf("%w (last error: %v)", ctx.Err(), lastErr)
				}
				return nil, ctx.Err()
			case <-t.C:
			}
			backoff = min(2*backoff, retryBackoffMax)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		id := c.active.Load()
		if id < 0 {
			var err error
			if id, err = c.discover(ctx, attempt); err != nil {
				if errors.Is(err, ErrClientClosed) {
					return nil, err
				}
				lastErr = err
				continue
			}
		}
		resp, err := c.send(ctx, id, ln, req, attempt)
		if err != nil {
			if errors.Is(err, ErrClientClosed) {
				return nil, err
			}
			lastErr = fmt.Errorf("controller %d: %w", id, err)
			c.active.CompareAndSwap(id, -1)
			continue
		}
		if notController(resp) {
			lastErr = fmt.Errorf("controller %d: %s", id, kerr.NotController.Message)
			// A leader hint (Fetch's CurrentLeader) saves a discovery.
			if hint := leaderHint(resp); hint >= 0 && hint != id && c.opts.Voters[hint] != "" {
				c.active.CompareAndSwap(id, hint)
				backoff = retryBackoffMin
			} else {
				c.active.CompareAndSwap(id, -1)
			}
			continue
		}
		return resp, nil
	}
}

// send makes one attempt on voter id, bounded by timeout (and, for long
// polls, by the request's own wait on top).
func (c *ControllerClient) send(ctx context.Context, id int32, ln lane, req kmsg.Request, timeout time.Duration) (kmsg.Response, error) {
	if f, ok := req.(*kmsg.FetchRequest); ok {
		timeout += time.Duration(f.MaxWaitMillis) * time.Millisecond
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cn, err := c.conn(actx, id, ln)
	if err != nil {
		return nil, err
	}
	return cn.Request(actx, req)
}

// conn returns the connection to voter id on lane ln, dialling a new one
// if there is none or the last one broke.
func (c *ControllerClient) conn(ctx context.Context, id int32, ln lane) (*wire.Conn, error) {
	k := connKey{id, ln}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, ErrClientClosed
	}
	if cn := c.conns[k]; cn != nil && !cn.Broken() {
		c.mu.Unlock()
		return cn, nil
	}
	c.mu.Unlock()
	addr := c.opts.Voters[id]
	if addr == "" {
		return nil, fmt.Errorf("node %d is not a controller.quorum.voters entry", id)
	}
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	cn, err := c.opts.Dialer.Dial(dctx, addr, c.clientID)
	cancel()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		cn.Close()
		return nil, ErrClientClosed
	}
	// Another goroutine may have dialled meanwhile: keep one connection.
	if old := c.conns[k]; old != nil && !old.Broken() {
		cn.Close()
		return old, nil
	}
	c.conns[k] = cn
	return cn, nil
}

// discover asks the voters, in random order, who the active controller
// is. A voter's own word that it leads is taken first; otherwise the
// leader most voters name.
func (c *ControllerClient) discover(ctx context.Context, attempt time.Duration) (int32, error) {
	ids := slices.Clone(c.ids)
	rand.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	var errs []error
	for _, id := range ids {
		req := kmsg.NewPtrDescribeQuorumRequest()
		req.SetVersion(clientVersions[kmsg.DescribeQuorum])
		t := kmsg.NewDescribeQuorumRequestTopic()
		t.Topic = MetadataTopic
		t.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{{Partition: 0}}
		req.Topics = append(req.Topics, t)
		// A short attempt: a dead voter must not hold discovery up.
		actx, cancel := context.WithTimeout(ctx, min(attempt, 2*time.Second))
		cn, err := c.conn(actx, id, laneRequest)
		var resp kmsg.Response
		if err == nil {
			resp, err = cn.Request(actx, req)
		}
		cancel()
		if err != nil {
			if errors.Is(err, ErrClientClosed) {
				return -1, err
			}
			errs = append(errs, fmt.Errorf("voter %d: %w", id, err))
			continue
		}
		dq := resp.(*kmsg.DescribeQuorumResponse)
		if len(dq.Topics) != 1 || len(dq.Topics[0].Partitions) != 1 {
			errs = append(errs, fmt.Errorf("voter %d: malformed DescribeQuorum answer", id))
			continue
		}
		p := dq.Topics[0].Partitions[0]
		if dq.ErrorCode == 0 && p.ErrorCode == 0 && p.LeaderID == id {
			c.setActive(id)
			return id, nil
		}
		if p.LeaderID >= 0 && c.opts.Voters[p.LeaderID] != "" {
			// A follower's view of the leader; the leader itself confirms
			// by answering (or redirects us with NOT_CONTROLLER).
			c.setActive(p.LeaderID)
			return p.LeaderID, nil
		}
		errs = append(errs, fmt.Errorf("voter %d knows no leader", id))
	}
	return -1, fmt.Errorf("no active controller found: %w", errors.Join(errs...))
}

func (c *ControllerClient) setActive(id int32) {
	if old := c.active.Swap(id); old != id {
		c.log.Debug("active controller", "id", id, "was", old)
	}
}

// notController reports whether resp says the node is not the active
// controller: NOT_CONTROLLER in any error field, or KRaft's
// NOT_LEADER_OR_FOLLOWER for __cluster_metadata.
func notController(resp kmsg.Response) bool {
	nc := kerr.NotController.Code
	switch r := resp.(type) {
	case *kmsg.BrokerRegistrationResponse:
		return r.ErrorCode == nc
	case *kmsg.BrokerHeartbeatResponse:
		return r.ErrorCode == nc
	case *kmsg.AlterPartitionResponse:
		return r.ErrorCode == nc
	case *kmsg.AllocateProducerIDsResponse:
		return r.ErrorCode == nc
	case *kmsg.FetchResponse:
		if r.ErrorCode == nc {
			return true
		}
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				if p.ErrorCode == nc || p.ErrorCode == kerr.NotLeaderForPartition.Code {
					return true
				}
			}
		}
	case *kmsg.FetchSnapshotResponse:
		if r.ErrorCode == nc {
			return true
		}
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				if p.ErrorCode == nc || p.ErrorCode == kerr.NotLeaderForPartition.Code {
					return true
				}
			}
		}
	case *kmsg.CreateTopicsResponse:
		return slices.ContainsFunc(r.Topics, func(t kmsg.CreateTopicsResponseTopic) bool { return t.ErrorCode == nc })
	case *kmsg.DeleteTopicsResponse:
		return slices.ContainsFunc(r.Topics, func(t kmsg.DeleteTopicsResponseTopic) bool { return t.ErrorCode == nc })
	case *kmsg.CreatePartitionsResponse:
		return slices.ContainsFunc(r.Topics, func(t kmsg.CreatePartitionsResponseTopic) bool { return t.ErrorCode == nc })
	case *kmsg.AlterConfigsResponse:
		return slices.ContainsFunc(r.Resources, func(t kmsg.AlterConfigsResponseResource) bool { return t.ErrorCode == nc })
	case *kmsg.IncrementalAlterConfigsResponse:
		return slices.ContainsFunc(r.Resources, func(t kmsg.IncrementalAlterConfigsResponseResource) bool { return t.ErrorCode == nc })
	case *kmsg.ElectLeadersResponse:
		if r.ErrorCode == nc {
			return true
		}
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				if p.ErrorCode == nc {
					return true
				}
			}
		}
	case *kmsg.AlterPartitionAssignmentsResponse:
		return r.ErrorCode == nc
	case *kmsg.ListPartitionReassignmentsResponse:
		return r.ErrorCode == nc
	case *kmsg.UnregisterBrokerResponse:
		return r.ErrorCode == nc
	case *kmsg.CreateACLsResponse:
		return slices.ContainsFunc(r.Results, func(x kmsg.CreateACLsResponseResult) bool { return x.ErrorCode == nc })
	case *kmsg.DeleteACLsResponse:
		return slices.ContainsFunc(r.Results, func(x kmsg.DeleteACLsResponseResult) bool { return x.ErrorCode == nc })
	case *kmsg.AlterUserSCRAMCredentialsResponse:
		return slices.ContainsFunc(r.Results, func(x kmsg.AlterUserSCRAMCredentialsResponseResult) bool { return x.ErrorCode == nc })
	case *kmsg.AlterClientQuotasResponse:
		return slices.ContainsFunc(r.Entries, func(x kmsg.AlterClientQuotasResponseEntry) bool { return x.ErrorCode == nc })
	}
	return false
}

// leaderHint is the leader a not-the-leader answer names, or -1.
func leaderHint(resp kmsg.Response) int32 {
	switch r := resp.(type) {
	case *kmsg.FetchResponse:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				return p.CurrentLeader.LeaderID
			}
		}
	case *kmsg.FetchSnapshotResponse:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				return p.CurrentLeader.LeaderID
			}
		}
	}
	return -1
}

// transportError turns a failed Request (the caller's context ended, or
// the client closed) into an *Error for the typed wrappers.
func transportError(err error) *Error {
	return &Error{Code: kerr.RequestTimedOut, Message: err.Error()}
}

func codeError(code int16, msg *string) *Error {
	if code == 0 {
		return nil
	}
	ke, ok := kerr.ErrorForCode(code).(*kerr.Error)
	if !ok {
		ke = kerr.UnknownServerError
	}
	e := &Error{Code: ke}
	if msg != nil {
		e.Message = *msg
	}
	return e
}

// RegisterBroker registers the broker and returns its epoch.
func (c *ControllerClient) RegisterBroker(ctx context.Context, reg BrokerRegistration) (int64, *Error) {
	resp, err := c.Request(ctx, registrationRequest(reg, c.opts.ClusterID))
	if err != nil {
		return -1, transportError(err)
	}
	r := resp.(*kmsg.BrokerRegistrationResponse)
	if e := codeError(r.ErrorCode, nil); e != nil {
		return -1, e
	}
	return r.BrokerEpoch, nil
}

// Heartbeat sends one broker heartbeat.
func (c *ControllerClient) Heartbeat(ctx context.Context, h BrokerHeartbeat) (HeartbeatResult, *Error) {
	return c.heartbeat(ctx, h, c.opts.RequestTimeout)
}

func (c *ControllerClient) heartbeat(ctx context.Context, h BrokerHeartbeat, attempt time.Duration) (HeartbeatResult, *Error) {
	req := kmsg.NewPtrBrokerHeartbeatRequest()
	req.SetVersion(clientVersions[kmsg.BrokerHeartbeat])
	req.BrokerID, req.BrokerEpoch = h.ID, h.Epoch
	req.CurrentMetadataOffset = h.MetadataOffset
	req.WantFence, req.WantShutdown = h.WantFence, h.WantShutdown
	resp, err := c.do(ctx, laneRequest, req, min(attempt, c.opts.RequestTimeout))
	if err != nil {
		return HeartbeatResult{IsFenced: true}, transportError(err)
	}
	r := resp.(*kmsg.BrokerHeartbeatResponse)
	if e := codeError(r.ErrorCode, nil); e != nil {
		return HeartbeatResult{IsFenced: true}, e
	}
	return HeartbeatResult{IsCaughtUp: r.IsCaughtUp, IsFenced: r.IsFenced, ShouldShutdown: r.ShouldShutdown}, nil
}

// AlterPartition sends one partition's ISR change and returns the
// partition state the controller answered: leader, leader epoch, ISR and
// partition epoch (AlterPartition's answer does not carry the replicas,
// so Replicas is nil; they are in the metadata image).
func (c *ControllerClient) AlterPartition(ctx context.Context, a AlterPartitionRequest) (metadata.Partition, *Error) {
	req := kmsg.NewPtrAlterPartitionRequest()
	req.BrokerID, req.BrokerEpoch = a.BrokerID, a.BrokerEpoch
	t := kmsg.NewAlterPartitionRequestTopic()
	t.TopicID = a.TopicID
	p := kmsg.NewAlterPartitionRequestTopicPartition()
	p.Partition, p.LeaderEpoch, p.PartitionEpoch = a.Partition, a.LeaderEpoch, a.PartitionEpoch
	p.NewISR = slices.Clone(a.NewISR)
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	resp, err := c.Request(ctx, req)
	if err != nil {
		return metadata.Partition{}, transportError(err)
	}
	r := resp.(*kmsg.AlterPartitionResponse)
	if e := codeError(r.ErrorCode, nil); e != nil {
		return metadata.Partition{}, e
	}
	if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
		return metadata.Partition{}, &Error{Code: kerr.UnknownServerError, Message: "malformed AlterPartition answer"}
	}
	rp := r.Topics[0].Partitions[0]
	if e := codeError(rp.ErrorCode, nil); e != nil {
		return metadata.Partition{}, e
	}
	return metadata.Partition{
		Index:          rp.Partition,
		ISR:            rp.ISR,
		Leader:         rp.LeaderID,
		LeaderEpoch:    rp.LeaderEpoch,
		PartitionEpoch: rp.PartitionEpoch,
	}, nil
}

// AllocateProducerIDs asks for a block of producer ids: [first, first+count).
func (c *ControllerClient) AllocateProducerIDs(ctx context.Context, brokerID int32, brokerEpoch int64) (first, count int64, err error) {
	req := kmsg.NewPtrAllocateProducerIDsRequest()
	req.BrokerID, req.BrokerEpoch = brokerID, brokerEpoch
	resp, err := c.Request(ctx, req)
	if err != nil {
		return 0, 0, err
	}
	r := resp.(*kmsg.AllocateProducerIDsResponse)
	if e := codeError(r.ErrorCode, nil); e != nil {
		return 0, 0, e
	}
	return r.ProducerIDStart, int64(r.ProducerIDLen), nil
}

func sortedIDs(m map[int32]string) []int32 {
	return slices.Sorted(maps.Keys(m))
}

func splitHostPort(addr string) (string, int, error) {
	host, ps, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("bad port in %q", addr)
	}
	return host, port, nil
}
