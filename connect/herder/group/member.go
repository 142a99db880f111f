package group

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Config configures a Member. Durations left zero take Kafka Connect's
// defaults (session.timeout.ms 10000, rebalance.timeout.ms 60000,
// heartbeat.interval.ms 3000, retry.backoff.ms 100).
type Config struct {
	// Client talks to the cluster; the Member only issues requests
	// through it (it need not consume or produce).
	Client *kgo.Client
	// Group is the worker group id (Connect's group.id).
	Group   string
	Handler Handler

	SessionTimeout    time.Duration
	RebalanceTimeout  time.Duration
	HeartbeatInterval time.Duration
	RetryBackoff      time.Duration
	// RetryBackoffMax caps the exponential backoff between failed
	// attempts (retry.backoff.max.ms, default 1s).
	RetryBackoffMax time.Duration
	Logger          *slog.Logger
}

// Handler is what the group needs from the worker.
type Handler interface {
	// Protocols returns the sub-protocols and metadata to join with, most
	// preferred first. It is called for every JoinGroup attempt so the
	// metadata carries the latest config offset and assignment.
	Protocols() []Protocol
	// Assign is called on the leader with every member's metadata for the
	// chosen protocol; it returns each member's assignment bytes. An
	// error aborts the rebalance: Join returns it.
	Assign(ctx context.Context, gen AssignContext, members []MemberMetadata) (map[string][]byte, error)
}

// Protocol is one JoinGroup protocol: a name and its metadata.
type Protocol struct {
	Name     string
	Metadata []byte
}

// MemberMetadata is one member as the leader sees it.
type MemberMetadata struct {
	MemberID string
	Metadata []byte
}

// AssignContext tells the leader's Assign which rebalance it is in.
type AssignContext struct {
	LeaderID   string
	Protocol   string
	Generation int32
}

// Generation is the result of a successful Join.
type Generation struct {
	ID       int32
	MemberID string
	LeaderID string
	Protocol string
	// Assignment is this member's SyncGroup assignment bytes.
	Assignment []byte
}

// IsLeader reports whether this member is the group leader.
func (g Generation) IsLeader() bool { return g.MemberID == g.LeaderID }

// Notice says why a joined member must act; see Member.Notices.
type Notice int

const (
	// NoticeRebalance: the group is rebalancing; rejoin soon, keeping the
	// current assignment running (cooperative protocols).
	NoticeRebalance Notice = iota + 1
	// NoticeFenced: the coordinator no longer knows this member or
	// generation (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, or the member
	// failed to rejoin in time); rejoin. Others may run its work now.
	NoticeFenced
	// NoticeCoordinatorLost: no coordinator answered a heartbeat for a
	// whole session timeout; the group has surely moved on, so stop all
	// work, then rejoin.
	NoticeCoordinatorLost
)

func (n Notice) String() string {
	switch n {
	case NoticeRebalance:
		return "rebalance"
	case NoticeFenced:
		return "fenced"
	case NoticeCoordinatorLost:
		return "coordinator lost"
	}
	return fmt.Sprintf("notice(%d)", int(n))
}

// FatalError is a group error retrying cannot fix (bad configuration,
// authorization, an inconsistent protocol); Join returns it.
type FatalError struct {
	Op  string
	Err error
}

func (e *FatalError) Error() string { return e.Op + ": " + e.Err.Error() }
func (e *FatalError) Unwrap() error { return e.Err }

// Member is one worker's membership in the group. Join, Leave and Close
// are called from one goroutine; Notices may be read from any.
type Member struct {
	cfg Config
	log *slog.Logger

	mu          sync.Mutex
	memberID    string
	generation  int32
	coordinator int32 // -1 when unknown
	hbStop      chan struct{}
	hbDone      chan struct{}

	notices chan Notice
}

// NewMember returns a member that has not joined yet.
func NewMember(cfg Config) *Member {
	if cfg.SessionTimeout <= 0 {
		cfg.SessionTimeout = 10 * time.Second
	}
	if cfg.RebalanceTimeout <= 0 {
		cfg.RebalanceTimeout = 60 * time.Second
	}
	if cfg.HeartbeatInterval <= 0 {
		cfg.HeartbeatInterval = 3 * time.Second
	}
	if cfg.RetryBackoff <= 0 {
		cfg.RetryBackoff = 100 * time.Millisecond
	}
	if cfg.RetryBackoffMax < cfg.RetryBackoff {
		cfg.RetryBackoffMax = max(time.Second, cfg.RetryBackoff)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Member{
		cfg:         cfg,
		log:         log.With("group", cfg.Group),
		coordinator: -1,
		generation:  -1,
		notices:     make(chan Notice, 4),
	}
}

// Notices delivers what the heartbeat learns after a Join: at most one
// notice per generation (the heartbeat of that generation stops after a
// fencing or a lost coordinator, and reports a rebalance only once).
func (m *Member) Notices() <-chan Notice { return m.notices }

// MemberID returns the member id the coordinator gave (empty before the
// first join or after being fenced).
func (m *Member) MemberID() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.memberID
}

// Join (re)joins the group and returns the new generation. It retries
// whatever the coordinator or the network can recover from (coordinator
// moves and outages, MEMBER_ID_REQUIRED, UNKNOWN_MEMBER_ID,
// ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS) with backoff until ctx ends;
// it returns a *FatalError for the rest. On success heartbeats start.
func (m *Member) Join(ctx context.Context) (Generation, error) {
	m.stopHeartbeat()
	m.drainNotices()
	reason := "joining"
	backoff := m.cfg.RetryBackoff
	wait := func() error {
		t := time.NewTimer(backoff)
		defer t.Stop()
		backoff = min(2*backoff, m.cfg.RetryBackoffMax)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return nil
		}
	}
	for {
		if err := ctx.Err(); err != nil {
			return Generation{}, fmt.Errorf("join group %s: %w", m.cfg.Group, err)
		}
		gen, retry, err := m.joinOnce(ctx, reason)
		if err == nil {
			m.startHeartbeat(gen)
			return gen, nil
		}
		var fatal *FatalError
		if errors.As(err, &fatal) {
			return Generation{}, err
		}
		if ctx.Err() != nil {
			return Generation{}, fmt.Errorf("join group %s: %w (last error: %v)", m.cfg.Group, ctx.Err(), err)
		}
		reason = err.Error()
		m.log.Debug("group join attempt failed; retrying", "err", err, "immediately", retry)
		if !retry {
			if err := wait(); err != nil {
				return Generation{}, fmt.Errorf("join group %s: %w", m.cfg.Group, err)
			}
		}
	}
}

// joinOnce runs one JoinGroup + SyncGroup. retry=true means try again at
// once (the coordinator told us what to change).
func (m *Member) joinOnce(ctx context.Context, reason string) (gen Generation, retry bool, err error) {
	coord, err := m.findCoordinator(ctx)
	if err != nil {
		return Generation{}, false, err
	}
	m.mu.Lock()
	memberID := m.memberID
	m.mu.Unlock()

	join := kmsg.NewPtrJoinGroupRequest()
	join.Group = m.cfg.Group
	join.SessionTimeoutMillis = int32(m.cfg.SessionTimeout.Milliseconds())
	join.RebalanceTimeoutMillis = int32(m.cfg.RebalanceTimeout.Milliseconds())
	join.MemberID = memberID
	join.ProtocolType = ProtocolType
	join.Reason = kmsg.StringPtr(reason)
	for _, p := range m.cfg.Handler.Protocols() {
		jp := kmsg.NewJoinGroupRequestProtocol()
		jp.Name, jp.Metadata = p.Name, p.Metadata
		join.Protocols = append(join.Protocols, jp)
	}
	raw, err := m.cfg.Client.Broker(int(coord)).Request(ctx, join)
	if err != nil {
		m.coordinatorFailed(coord)
		return Generation{}, false, fmt.Errorf("JoinGroup to coordinator %d: %w", coord, err)
	}
	jr := raw.(*kmsg.JoinGroupResponse)
	if err := kerr.ErrorForCode(jr.ErrorCode); err != nil {
		switch {
		case errors.Is(err, kerr.MemberIDRequired):
			// KIP-394: the coordinator assigned us an id; join with it.
			m.setMember(jr.MemberID, -1)
			return Generation{}, true, err
		case errors.Is(err, kerr.UnknownMemberID):
			m.setMember("", -1)
			return Generation{}, true, err
		case errors.Is(err, kerr.RebalanceInProgress):
			return Generation{}, true, err
		case m.coordinatorError(coord, err):
			return Generation{}, false, err
		case errors.Is(err, kerr.CoordinatorLoadInProgress), errors.Is(err, kerr.UnstableOffsetCommit):
			return Generation{}, false, err
		}
		return Generation{}, false, &FatalError{Op: "join group " + m.cfg.Group, Err: err}
	}
	protocol := ""
	if jr.Protocol != nil {
		protocol = *jr.Protocol
	}
	m.setMember(jr.MemberID, jr.Generation)
	gen = Generation{ID: jr.Generation, MemberID: jr.MemberID, LeaderID: jr.LeaderID, Protocol: protocol}
	m.log.Info("joined group", "generation", gen.ID, "member", gen.MemberID, "leader", gen.LeaderID,
		"protocol", protocol, "members", len(jr.Members))

	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Group = m.cfg.Group
	sync.Generation = jr.Generation
	sync.MemberID = jr.MemberID
	sync.ProtocolType = kmsg.StringPtr(ProtocolType)
	sync.Protocol = jr.Protocol
	if gen.IsLeader() {
		members := make([]MemberMetadata, 0, len(jr.Members))
		for _, mem := range jr.Members {
			members = append(members, MemberMetadata{MemberID: mem.MemberID, Metadata: mem.ProtocolMetadata})
		}
		assignments, err := m.cfg.Handler.Assign(ctx, AssignContext{LeaderID: jr.LeaderID, Protocol: protocol, Generation: jr.Generation}, members)
		if err != nil {
			return Generation{}, false, &FatalError{Op: "assign group " + m.cfg.Group, Err: err}
		}
		for id, a := range assignments {
			sa := kmsg.NewSyncGroupRequestGroupAssignment()
			sa.MemberID, sa.MemberAssignment = id, a
			sync.GroupAssignment = append(sync.GroupAssignment, sa)
		}
	}
	raw, err = m.cfg.Client.Broker(int(coord)).Request(ctx, sync)
	if err != nil {
		m.coordinatorFailed(coord)
		return Generation{}, false, fmt.Errorf("SyncGroup to coordinator %d: %w", coord, err)
	}
	sr := raw.(*kmsg.SyncGroupResponse)
	if err := kerr.ErrorForCode(sr.ErrorCode); err != nil {
		switch {
		case errors.Is(err, kerr.RebalanceInProgress):
			return Generation{}, true, err
		case errors.Is(err, kerr.UnknownMemberID):
			m.setMember("", -1)
			return Generation{}, true, err
		case errors.Is(err, kerr.IllegalGeneration):
			m.setMember(jr.MemberID, -1)
			return Generation{}, true, err
		case m.coordinatorError(coord, err):
			return Generation{}, false, err
		}
		return Generation{}, false, &FatalError{Op: "sync group " + m.cfg.Group, Err: err}
	}
	gen.Assignment = sr.MemberAssignment
	return gen, false, nil
}

// Leave stops heartbeating and leaves the group so the others rebalance
// at once instead of after the session timeout. A member that has not
// joined does nothing.
func (m *Member) Leave(ctx context.Context) error {
	m.stopHeartbeat()
	m.mu.Lock()
	memberID := m.memberID
	m.memberID, m.generation = "", -1
	m.mu.Unlock()
	if memberID == "" {
		return nil
	}
	coord, err := m.findCoordinator(ctx)
	if err != nil {
		return fmt.Errorf("leave group %s: %w", m.cfg.Group, err)
	}
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Group = m.cfg.Group
	req.MemberID = memberID // v0-v2
	lm := kmsg.NewLeaveGroupRequestMember()
	lm.MemberID = memberID
	lm.Reason = kmsg.StringPtr("the worker is shutting down")
	req.Members = []kmsg.LeaveGroupRequestMember{lm} // v3+
	raw, err := m.cfg.Client.Broker(int(coord)).Request(ctx, req)
	if err != nil {
		return fmt.Errorf("leave group %s: %w", m.cfg.Group, err)
	}
	resp := raw.(*kmsg.LeaveGroupResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return fmt.Errorf("leave group %s: %w", m.cfg.Group, err)
	}
	for _, mr := range resp.Members {
		if err := kerr.ErrorForCode(mr.ErrorCode); err != nil && !errors.Is(err, kerr.UnknownMemberID) {
			return fmt.Errorf("leave group %s: %w", m.cfg.Group, err)
		}
	}
	m.log.Info("left group", "member", memberID)
	return nil
}

// Close stops heartbeating without leaving (the coordinator expires the
// member after the session timeout), as a crashed worker would.
func (m *Member) Close() { m.stopHeartbeat() }

func (m *Member) setMember(id string, generation int32) {
	m.mu.Lock()
	m.memberID, m.generation = id, generation
	m.mu.Unlock()
}

func (m *Member) drainNotices() {
	for {
		select {
		case <-m.notices:
		default:
			return
		}
	}
}

func (m *Member) notify(n Notice) {
	select {
	case m.notices <- n:
	default: // a notice is already pending; the herder rejoins anyway
	}
}

// findCoordinator returns the known coordinator or asks any broker.
func (m *Member) findCoordinator(ctx context.Context) (int32, error) {
	m.mu.Lock()
	coord := m.coordinator
	m.mu.Unlock()
	if coord >= 0 {
		return coord, nil
	}
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorKey = m.cfg.Group // v0-v3
	req.CoordinatorKeys = []string{m.cfg.Group}
	raw, err := m.cfg.Client.Request(ctx, req)
	if err != nil {
		return -1, fmt.Errorf("find coordinator for group %s: %w", m.cfg.Group, err)
	}
	resp := raw.(*kmsg.FindCoordinatorResponse)
	code, node := resp.ErrorCode, resp.NodeID
	if len(resp.Coordinators) > 0 { // v4+
		code, node = resp.Coordinators[0].ErrorCode, resp.Coordinators[0].NodeID
	}
	if err := kerr.ErrorForCode(code); err != nil {
		if errors.Is(err, kerr.GroupAuthorizationFailed) || errors.Is(err, kerr.InvalidRequest) {
			return -1, &FatalError{Op: "find coordinator for group " + m.cfg.Group, Err: err}
		}
		return -1, fmt.Errorf("find coordinator for group %s: %w", m.cfg.Group, err)
	}
	m.mu.Lock()
	m.coordinator = node
	m.mu.Unlock()
	m.log.Debug("found group coordinator", "node", node)
	return node, nil
}

// coordinatorError reports whether err means the coordinator moved or is
// down, forgetting it so the next attempt looks it up again.
func (m *Member) coordinatorError(coord int32, err error) bool {
	if errors.Is(err, kerr.NotCoordinator) || errors.Is(err, kerr.CoordinatorNotAvailable) {
		m.coordinatorFailed(coord)
		return true
	}
	return false
}

func (m *Member) coordinatorFailed(coord int32) {
	m.mu.Lock()
	if m.coordinator == coord {
		m.coordinator = -1
	}
	m.mu.Unlock()
}

func (m *Member) startHeartbeat(gen Generation) {
	stop, done := make(chan struct{}), make(chan struct{})
	m.mu.Lock()
	m.hbStop, m.hbDone = stop, done
	m.mu.Unlock()
	go m.heartbeat(gen, stop, done)
}

func (m *Member) stopHeartbeat() {
	m.mu.Lock()
	stop, done := m.hbStop, m.hbDone
	m.hbStop, m.hbDone = nil, nil
	m.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

// heartbeat keeps one generation's membership alive until stopped. It
// retries a failing coordinator every retry backoff, and gives the
// membership up when nothing succeeded for a session timeout.
func (m *Member) heartbeat(gen Generation, stop, done chan struct{}) {
	defer close(done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	lastOK := time.Now()
	rebalancing := false
	next := m.cfg.HeartbeatInterval
	for {
		t := time.NewTimer(next)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		err := m.heartbeatOnce(ctx, gen)
		if ctx.Err() != nil {
			return
		}
		next = m.cfg.HeartbeatInterval
		switch {
		case err == nil:
			lastOK = time.Now()
		case errors.Is(err, kerr.RebalanceInProgress):
			// Still a member until the rebalance completes: keep the
			// session alive while the herder finishes what it is doing.
			lastOK = time.Now()
			if !rebalancing {
				rebalancing = true
				m.log.Info("group is rebalancing; rejoining", "generation", gen.ID)
				m.notify(NoticeRebalance)
			}
		case errors.Is(err, kerr.UnknownMemberID):
			m.setMember("", -1)
			m.log.Warn("fenced out of the group (unknown member id); rejoining", "generation", gen.ID, "member", gen.MemberID)
			m.notify(NoticeFenced)
			return
		case errors.Is(err, kerr.IllegalGeneration), errors.Is(err, kerr.FencedInstanceID):
			m.setMember(gen.MemberID, -1)
			m.log.Warn("fenced out of the group (stale generation); rejoining", "generation", gen.ID, "err", err)
			m.notify(NoticeFenced)
			return
		default:
			// Coordinator moved, down or unreachable: look it up again
			// soon; the session only ends when it expires.
			if time.Since(lastOK) >= m.cfg.SessionTimeout {
				m.log.Warn("no group coordinator answered for a session timeout; giving up the assignment",
					"generation", gen.ID, "session_timeout", m.cfg.SessionTimeout, "err", err)
				m.notify(NoticeCoordinatorLost)
				return
			}
			m.log.Debug("heartbeat failed; retrying", "err", err)
			next = m.cfg.RetryBackoff
		}
	}
}

func (m *Member) heartbeatOnce(ctx context.Context, gen Generation) error {
	// A heartbeat (and the coordinator lookup before it, which kgo
	// retries) must not outlive the session it is keeping alive.
	ctx, cancel := context.WithTimeout(ctx, m.cfg.SessionTimeout)
	defer cancel()
	coord, err := m.findCoordinator(ctx)
	if err != nil {
		return err
	}
	req := kmsg.NewPtrHeartbeatRequest()
	req.Group = m.cfg.Group
	req.Generation = gen.ID
	req.MemberID = gen.MemberID
	raw, err := m.cfg.Client.Broker(int(coord)).Request(ctx, req)
	if err != nil {
		m.coordinatorFailed(coord)
		return fmt.Errorf("heartbeat to coordinator %d: %w", coord, err)
	}
	err = kerr.ErrorForCode(raw.(*kmsg.HeartbeatResponse).ErrorCode)
	if err != nil {
		m.coordinatorError(coord, err)
	}
	return err
}
