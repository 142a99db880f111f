package controller

// Quorum is the cluster controller: a hashicorp/raft voter whose FSM
// (fsm.go) applies metadata records. Only the raft leader that has caught
// up with its term (the active controller, Kafka's QuorumController
// leader) validates requests and proposes records; every voter applies the
// same log and publishes the same images.
//
// Concurrency: q.mu serialises everything the active controller does —
// planning against the current image, proposing, and the in-memory broker
// sessions — so each plan sees the effect of the previous write (propose
// returns once the entry is applied locally). Raft's FSM goroutine
// publishes images and calls OnChange; it never takes q.mu. OnChange must
// therefore not call the Quorum's mutating methods: they wait for the FSM.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/fjordhq/fjord/broker/metadata"
	"github.com/fjordhq/fjord/broker/wire"
)

// ErrSnapshotNeeded is ReadLog's answer when the entries asked for were
// compacted into a snapshot: the reader must load the current image (its
// records: snapshotRecords) and continue from its offset.
var ErrSnapshotNeeded = errors.New("metadata log entries compacted: load a snapshot")

// QuorumOptions configures a controller quorum voter.
type QuorumOptions struct {
	Options
	// Voters is controller.quorum.voters: node id -> host:port. This
	// node's id must be one of them.
	Voters map[int32]string
	// RaftListener is the raft half of MuxListener on this node's
	// controller listener.
	RaftListener net.Listener
	// PeerDialer is how raft connects to the other voters' controller
	// listeners (TLS and SASL per the listener's security protocol);
	// nil dials PLAINTEXT.
	PeerDialer *wire.Dialer
	// BrokerSessionTimeout is broker.session.timeout.ms (default 9 s).
	BrokerSessionTimeout time.Duration
	// BrokerHeartbeatInterval is broker.heartbeat.interval.ms, how often
	// brokers heartbeat (default a quarter of BrokerSessionTimeout, the
	// ratio of Fjord's defaults). It sizes the shorter sessions after a
	// broker's connection closed and after a controller failover.
	BrokerHeartbeatInterval time.Duration
	// BrokerConfigs are this node's static broker configs
	// (server.properties): consulted after the cluster-wide dynamic
	// defaults in the image for the controller's own settings
	// (unclean.leader.election.enable, auto.leader.rebalance.enable,
	// leader.imbalance.check.interval.seconds).
	BrokerConfigs map[string]string

	// Raft timing. Defaults suit a LAN: a follower starts an election
	// 300–600 ms (HeartbeatTimeout, randomised) after it last heard from
	// the leader, and with pre-vote both survivors of a 3-voter quorum
	// must have timed out, so a dead active controller is replaced about
	// 0.55–0.85 s after its death (bench SIGKILLs, derived from the time
	// to fence its broker; with 500 ms it was 1.1–1.3 s, the largest part
	// of the controller-kill failover time after the failover grace). A
	// spurious election under load is cheap: brokers
	// find the new controller within the failover grace and keep their
	// sessions. LeaderLeaseTimeout must not exceed HeartbeatTimeout.
	HeartbeatTimeout   time.Duration // default 300ms
	ElectionTimeout    time.Duration // default 300ms
	LeaderLeaseTimeout time.Duration // default 250ms
	CommitTimeout      time.Duration // default 20ms
	// Snapshots: raft takes one when SnapshotThreshold entries were
	// appended since the last (checked every SnapshotInterval), keeping
	// TrailingLogs entries for followers that lag a little.
	SnapshotThreshold uint64        // default 8192
	SnapshotInterval  time.Duration // default 30s
	TrailingLogs      uint64        // default 10240
	// ApplyTimeout bounds one proposal (default 5s).
	ApplyTimeout time.Duration
}

// Quorum is a controller quorum voter (see the file comment).
type Quorum struct {
	opts  QuorumOptions
	log   *slog.Logger
	plan  *planner
	fsm   *fsm
	raft  *raft.Raft
	trans *raft.NetworkTransport
	store *raftboltdb.BoltStore
	logs  raft.LogStore

	mu         sync.Mutex
	active     atomic.Bool
	activeTerm uint64                   // term in which this node became active; under mu
	sessions   map[int32]*brokerSession // heartbeat state while active; under mu
	lastRebal  time.Time                // last automatic preferred election; under mu

	notify  chan bool
	closing chan struct{}
	wg      sync.WaitGroup
	closed  atomic.Bool
}

// OpenQuorum opens (or creates) this voter's raft state under dir and
// joins the quorum. On first start every voter bootstraps the same voter
// set, which hashicorp/raft allows; later starts recover from the log.
func OpenQuorum(dir string, opts QuorumOptions) (*Quorum, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.DefaultPartitions <= 0 {
		opts.DefaultPartitions = 1
	}
	if opts.DefaultReplicationFactor <= 0 {
		opts.DefaultReplicationFactor = 1
	}
	self, ok := opts.Voters[opts.NodeID]
	if !ok {
		return nil, fmt.Errorf("controller.quorum.voters does not include node.id %d", opts.NodeID)
	}
	if opts.RaftListener == nil {
		return nil, errors.New("controller quorum needs a raft listener")
	}
	setDefault(&opts.BrokerSessionTimeout, 9*time.Second)
	setDefault(&opts.BrokerHeartbeatInterval, opts.BrokerSessionTimeout/4)
	setDefault(&opts.HeartbeatTimeout, 300*time.Millisecond)
	setDefault(&opts.ElectionTimeout, 300*time.Millisecond)
	setDefault(&opts.LeaderLeaseTimeout, 250*time.Millisecond)
	setDefault(&opts.CommitTimeout, 20*time.Millisecond)
	setDefault(&opts.SnapshotInterval, 30*time.Second)
	setDefault(&opts.ApplyTimeout, 5*time.Second)
	if opts.SnapshotThreshold == 0 {
		opts.SnapshotThreshold = 8192
	}
	if opts.TrailingLogs == 0 {
		opts.TrailingLogs = 10240
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create controller dir: %w", err)
	}
	log := opts.Logger.With("node", opts.NodeID)
	q := &Quorum{
		opts:     opts,
		log:      log,
		sessions: map[int32]*brokerSession{},
		notify:   make(chan bool, 1),
		closing:  make(chan struct{}),
	}
	q.plan = q.newPlanner()
	q.fsm = newFSM(log, opts.OnChange)

	store, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(dir, "raft.db")})
	if err != nil {
		return nil, fmt.Errorf("open raft log: %w", err)
	}
	q.store = store
	hl := newHCLogger(log)
	snaps, err := raft.NewFileSnapshotStoreWithLogger(dir, 2, hl)
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("open raft snapshots: %w", err)
	}
	logs, err := raft.NewLogCache(256, store)
	if err != nil {
		store.Close()
		return nil, err
	}
	q.logs = logs
	q.trans = raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream:  &raftStream{Listener: opts.RaftListener, advertised: voterAddr(self), dialer: opts.PeerDialer},
		MaxPool: 3,
		Timeout: 2 * time.Second,
		Logger:  hl,
	})

	cfg := raft.DefaultConfig()
	cfg.LocalID = raft.ServerID(strconv.Itoa(int(opts.NodeID)))
	cfg.Logger = hl
	cfg.HeartbeatTimeout = opts.HeartbeatTimeout
	cfg.ElectionTimeout = opts.ElectionTimeout
	cfg.LeaderLeaseTimeout = opts.LeaderLeaseTimeout
	cfg.CommitTimeout = opts.CommitTimeout
	cfg.SnapshotThreshold = opts.SnapshotThreshold
	cfg.SnapshotInterval = opts.SnapshotInterval
	cfg.TrailingLogs = opts.TrailingLogs
	cfg.NotifyCh = q.notify
	cfg.NoLegacyTelemetry = true

	existing, err := raft.HasExistingState(logs, store, snaps)
	if err != nil {
		q.trans.Close()
		store.Close()
		return nil, err
	}
	if !existing {
		var servers []raft.Server
		for _, id := range slices.Sorted(maps.Keys(opts.Voters)) {
			servers = append(servers, raft.Server{
				Suffrage: raft.Voter,
				ID:       raft.ServerID(strconv.Itoa(int(id))),
				Address:  raft.ServerAddress(opts.Voters[id]),
			})
		}
		if err := raft.BootstrapCluster(cfg, logs, store, snaps, q.trans, raft.Configuration{Servers: servers}); err != nil {
			q.trans.Close()
			store.Close()
			return nil, fmt.Errorf("bootstrap controller quorum: %w", err)
		}
	}
	r, err := raft.NewRaft(cfg, q.fsm, logs, store, snaps, q.trans)
	if err != nil {
		q.trans.Close()
		store.Close()
		return nil, fmt.Errorf("start raft: %w", err)
	}
	q.raft = r
	q.wg.Add(1)
	go q.run()
	return q, nil
}

func setDefault(d *time.Duration, v time.Duration) {
	if *d <= 0 {
		*d = v
	}
}

// Image returns the image applied on this node; Offset is the raft index
// of the last applied command.
func (q *Quorum) Image() *metadata.Image { return q.fsm.image.Load() }

// IsActive reports whether this node is the active controller: the raft
// leader, caught up with everything committed before its term.
func (q *Quorum) IsActive() bool {
	return q.active.Load() && q.raft.State() == raft.Leader
}

// ActiveID returns the raft leader's node id, -1 if unknown.
func (q *Quorum) ActiveID() int32 {
	_, id := q.raft.LeaderWithID()
	if id == "" {
		return -1
	}
	n, err := strconv.ParseInt(string(id), 10, 32)
	if err != nil {
		return -1
	}
	return int32(n)
}

// Close leaves the quorum (without a leadership transfer: the others elect
// a new leader) and closes the raft log.
func (q *Quorum) Close() error {
	if q.closed.Swap(true) {
		return nil
	}
	close(q.closing)
	q.active.Store(false)
	// Shut raft down first: it fails whatever the run loop is waiting on
	// (a barrier, a proposal) at once instead of after ApplyTimeout.
	err := q.raft.Shutdown().Error()
	q.wg.Wait()
	if cerr := q.trans.Close(); err == nil {
		err = cerr
	}
	if cerr := q.store.Close(); err == nil {
		err = cerr
	}
	return err
}

// WaitApplied returns once this node has applied the entry at offset.
func (q *Quorum) WaitApplied(ctx context.Context, offset int64) error {
	for {
		ch := q.fsm.appliedCh()
		if q.Image().Offset >= offset {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-q.closing:
			return raft.ErrRaftShutdown
		}
	}
}

// ReadLog returns up to max entries of the metadata log from offset from,
// all committed and applied on this node (so up to Image().Offset).
// Entries that carry no records (raft's no-ops and configuration changes)
// are returned with empty Records so offsets stay contiguous.
func (q *Quorum) ReadLog(from int64, max int) ([]LogEntry, error) {
	last := q.Image().Offset
	if from < 1 {
		from = 1
	}
	if from > last || max <= 0 {
		return nil, nil
	}
	first, err := q.logs.FirstIndex()
	if err != nil {
		return nil, err
	}
	var out []LogEntry
	if from < int64(first) {
		// The entries below first were compacted into a snapshot. If no
		// command can be among them (every compacted command is at or
		// below the newest snapshot's image offset), they carried no
		// records and the reader may step over them.
		if from <= q.fsm.snapOffset.Load() || first == 0 {
			return nil, ErrSnapshotNeeded
		}
		for ; from < int64(first) && len(out) < max; from++ {
			out = append(out, LogEntry{Offset: from})
		}
	}
	for i := from; i <= last && len(out) < max; i++ {
		var l raft.Log
		if err := q.logs.GetLog(uint64(i), &l); err != nil {
			if errors.Is(err, raft.ErrLogNotFound) {
				// Compacted while we read.
				return nil, ErrSnapshotNeeded
			}
			return nil, err
		}
		e := LogEntry{Offset: i}
		if l.Type == raft.LogCommand {
			recs, err := decodeCommand(l.Data)
			if err != nil {
				return nil, fmt.Errorf("metadata log entry %d: %w", i, err)
			}
			e.Records = recs
		}
		out = append(out, e)
	}
	return out, nil
}

// errNotController is the answer of a voter that is not active.
func errNotController() *Error { return &Error{Code: kerr.NotController} }

// propose appends recs to the metadata log and returns once they are
// applied here. Caller holds q.mu and has checked IsActive.
func (q *Quorum) propose(recs []metadata.Record) *Error {
	if len(recs) == 0 {
		return nil
	}
	// A record that does not apply must never reach the log.
	if _, err := q.Image().ApplyEntry(0, recs); err != nil {
		return errorf(kerr.UnknownServerError, "internal: invalid metadata change: %v", err)
	}
	data, err := json.Marshal(recs)
	if err != nil {
		return errorf(kerr.UnknownServerError, "%v", err)
	}
	f := q.raft.Apply(data, q.opts.ApplyTimeout)
	if err := f.Error(); err != nil {
		switch {
		case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrLeadershipLost),
			errors.Is(err, raft.ErrRaftShutdown), errors.Is(err, raft.ErrLeadershipTransferInProgress):
			q.active.Store(false)
			return errNotController()
		}
		return errorf(kerr.RequestTimedOut, "metadata write: %v", err)
	}
	if err, _ := f.Response().(error); err != nil {
		return errorf(kerr.UnknownServerError, "%v", err)
	}
	return nil
}

// lockActive takes q.mu if this node is the active controller.
func (q *Quorum) lockActive() *Error {
	q.mu.Lock()
	if !q.IsActive() {
		q.mu.Unlock()
		return errNotController()
	}
	return nil
}

// run follows raft leadership: on winning an election it catches up and
// becomes active; while active it fences brokers whose session expired
// and balances leaders.
func (q *Quorum) run() {
	defer q.wg.Done()
	tick := time.NewTicker(q.tickInterval())
	defer tick.Stop()
	for {
		select {
		case <-q.closing:
			return
		case leader := <-q.notify:
			if leader {
				q.becomeActive()
			} else {
				q.active.Store(false)
			}
		case <-tick.C:
			if q.raft.State() == raft.Leader && !q.active.Load() {
				// A failed catch-up (e.g. a barrier timeout) is retried.
				q.becomeActive()
			}
			if q.IsActive() {
				q.tick()
			}
		}
	}
}

// tickInterval is how often the active controller checks sessions: often
// enough that fencing happens within ~1/8 of the session timeout, and
// within a quarter interval of the shorter sessions after a connection
// loss or a failover (with Fjord's defaults 125 ms; the check is a walk
// over the brokers).
func (q *Quorum) tickInterval() time.Duration {
	d := min(q.opts.BrokerSessionTimeout/8, q.opts.BrokerHeartbeatInterval/4)
	return min(max(d, 20*time.Millisecond), 500*time.Millisecond)
}

// becomeActive makes a newly elected leader the active controller: a
// barrier applies everything committed in earlier terms, then it records
// itself as controller (and, in a new cluster, the cluster id and the
// bootstrap configs). Every broker gets a fresh session, as a new Kafka
// controller does, since heartbeats went to the old one — except the
// broker on the previous active controller's node (a combined node: the
// same node id), which gets only the failover grace. A controller that
// stopped leading most likely died, and its broker with it; left a whole
// session, the partitions it led would stay leaderless for that long
// after a new controller took over. If it is alive it finds the new
// controller within the grace, as the other brokers do.
func (q *Quorum) becomeActive() {
	if err := q.raft.Barrier(q.opts.ApplyTimeout).Error(); err != nil {
		q.log.Warn("controller catch-up failed; will retry", "err", err)
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.raft.State() != raft.Leader {
		return
	}
	term := q.raft.CurrentTerm()
	if q.active.Load() && q.activeTerm == term {
		return
	}
	img := q.Image()
	prev := img.ControllerID // not yet overwritten by ours below
	var recs []metadata.Record
	if img.ClusterID == "" {
		id := q.opts.ClusterID
		if id == "" {
			id = metadata.NewUUID().String()
		}
		recs = append(recs, metadata.Record{Cluster: &metadata.ClusterRecord{ClusterID: id, ControllerID: q.opts.NodeID}})
		for _, k := range slices.Sorted(maps.Keys(q.opts.BootstrapConfigs)) {
			v := q.opts.BootstrapConfigs[k]
			recs = append(recs, metadata.Record{Config: &metadata.ConfigRecord{
				Resource: metadata.ConfigResource{Type: metadata.ResourceBroker}, Key: k, Value: &v}})
		}
	} else {
		recs = append(recs, metadata.Record{Cluster: &metadata.ClusterRecord{ClusterID: img.ClusterID, ControllerID: q.opts.NodeID}})
	}
	// propose needs IsActive to hold for its callers only; here we write
	// before declaring ourselves active so no request sees the old image.
	if err := q.propose(recs); err != nil {
		q.log.Warn("controller activation write failed; will retry", "err", err)
		return
	}
	now := time.Now()
	for _, s := range q.sessions {
		s.stopWatch()
	}
	q.sessions = map[int32]*brokerSession{}
	for id, b := range q.Image().Brokers {
		s := &brokerSession{expires: now.Add(q.opts.BrokerSessionTimeout), fenced: b.Fenced, since: now}
		if id == prev && prev != q.opts.NodeID {
			s.expires, s.cut = now.Add(q.failoverGrace()), "no heartbeat since its node stopped being the active controller"
		}
		q.sessions[id] = s
	}
	q.lastRebal = now
	q.activeTerm = term
	q.active.Store(true)
	q.log.Info("active controller", "term", term, "offset", q.Image().Offset)
}

// failoverGrace is the session a new active controller gives the broker
// on the previous controller's node until its first heartbeat: two
// heartbeat intervals, but at least twice the ControllerClient's longest
// retry backoff (with short intervals the backoff, not the interval,
// bounds how soon a broker finds the new controller), and at most the
// session timeout. Live brokers are already retrying their heartbeats
// when the new controller becomes active (those to the dead one fail at
// once, or after half a second if it hangs, and the client asks the
// voters who leads): measured in the bench's SIGKILLs with 500 ms
// intervals, they reached it 15–470 ms after it became active.
func (q *Quorum) failoverGrace() time.Duration {
	return min(max(2*q.opts.BrokerHeartbeatInterval, 2*retryBackoffMax), q.opts.BrokerSessionTimeout)
}

// newPlanner places new partitions on active brokers, rack-aware.
func (q *Quorum) newPlanner() *planner {
	return &planner{
		opts: &q.opts.Options,
		assignable: func(img *metadata.Image) []int32 {
			return img.BrokerIDs()
		},
		place: func(img *metadata.Image, n, rf, firstPartition int) ([][]int32, *Error) {
			return placeStriped(img, n, rf)
		},
		activeISR: true,
	}
}

// CreateTopics validates and creates topics (see Local.CreateTopics).
func (q *Quorum) CreateTopics(ctx context.Context, reqs []CreateTopic, validateOnly bool) []TopicResult {
	if err := q.lockActive(); err != nil {
		results := make([]TopicResult, len(reqs))
		for i := range results {
			results[i].Err = err
		}
		return results
	}
	defer q.mu.Unlock()
	results, recs := q.plan.createTopics(q.Image(), reqs)
	if validateOnly || len(recs) == 0 {
		return results
	}
	if err := q.propose(recs); err != nil {
		failTopics(results, err)
	}
	return results
}

// DeleteTopics deletes topics by name.
func (q *Quorum) DeleteTopics(ctx context.Context, names []string) []*Error {
	if err := q.lockActive(); err != nil {
		errs := make([]*Error, len(names))
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	defer q.mu.Unlock()
	errs, recs := planDeleteTopics(q.Image(), names)
	if err := q.propose(recs); err != nil {
		failAll(errs, err)
	}
	return errs
}

// CreatePartitions grows a topic to count partitions.
func (q *Quorum) CreatePartitions(ctx context.Context, topic string, count int32, assignment [][]int32, validateOnly bool) *Error {
	if err := q.lockActive(); err != nil {
		return err
	}
	defer q.mu.Unlock()
	recs, err := q.plan.createPartitions(q.Image(), topic, count, assignment)
	if err != nil || validateOnly {
		return err
	}
	return q.propose(recs)
}

// AlterConfigs changes one resource's configs (see Local.AlterConfigs).
func (q *Quorum) AlterConfigs(ctx context.Context, res metadata.ConfigResource, mutate func(current map[string]string) (map[string]string, error), validateOnly bool) *Error {
	if err := q.lockActive(); err != nil {
		return err
	}
	defer q.mu.Unlock()
	recs, err := q.plan.alterConfigs(q.Image(), res, mutate)
	if err != nil || validateOnly {
		return err
	}
	return q.propose(recs)
}

// AllocateProducerIDs reserves a block of n producer ids (a
// ProducerIDsRecord through raft) and returns the first.
func (q *Quorum) AllocateProducerIDs(ctx context.Context, n int64) (int64, error) {
	if err := q.lockActive(); err != nil {
		return 0, err
	}
	defer q.mu.Unlock()
	first := q.Image().NextProducerID
	if err := q.propose([]metadata.Record{{ProducerIDs: &metadata.ProducerIDsRecord{NextProducerID: first + n}}}); err != nil {
		return 0, err
	}
	return first, nil
}

var _ Controller = (*Quorum)(nil)

// config returns a cluster-level broker setting: the dynamic cluster
// default in the image, else this node's static config, else def.
func (q *Quorum) config(img *metadata.Image, key, def string) string {
	if v, ok := img.BrokerConfigs("")[key]; ok {
		return v
	}
	if v, ok := q.opts.BrokerConfigs[key]; ok {
		return v
	}
	return def
}

// uncleanEnabled is unclean.leader.election.enable for a topic: its
// override, else the cluster setting, default false.
func (q *Quorum) uncleanEnabled(img *metadata.Image, topic string) bool {
	v, ok := img.TopicConfigs(topic)["unclean.leader.election.enable"]
	if !ok {
		v = q.config(img, "unclean.leader.election.enable", "false")
	}
	return v == "true"
}
