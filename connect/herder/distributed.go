package herder

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fjordhq/fjord/connect/herder/group"
	"github.com/fjordhq/fjord/connect/storage"
)

// Distributed is Kafka Connect's DistributedHerder: workers sharing a
// group.id form a group through the brokers' group coordinator (protocol
// type "connect"), the leader assigns connectors and tasks with
// incremental cooperative rebalancing, and every worker runs what it was
// assigned. Configs live in the config topic: only the leader writes
// connector and task configs, so a follower answers such requests with
// *NotLeaderError and the REST layer forwards them. A worker reads the
// config topic to the offset the assignment names before it starts
// anything, so all workers act on the same configs.
//
// One goroutine (run) owns all the herder's state and does all its work:
// it drives the group membership, applies assignments, reacts to config
// changes and executes REST requests, which are queued to it as closures.
// The config store's listener only records what changed (in pending,
// under its own small mutex) and wakes the loop. Nothing but the loop
// touches the fields below the "loop-owned" line.
type Distributed struct {
	cfg      DistributedConfig
	deps     DistributedDeps
	log      *slog.Logger
	now      func() time.Time
	member   *group.Member
	assignor *group.Assignor
	http     *http.Client

	requests chan func()
	wake     chan struct{}
	stopCh   chan struct{}
	done     chan struct{}
	ctx      context.Context // cancelled by Stop: interrupts joins and reads
	cancel   context.CancelFunc
	stopOnce sync.Once
	// killed makes halt vanish like a crashed process (no stops, no
	// LeaveGroup); only tests set it.
	killed atomic.Bool

	pending pendingUpdates

	// genMu guards statusGen, the generation worker goroutines stamp
	// their status writes with.
	genMu     sync.Mutex
	statusGen int32

	// loop-owned
	snapshot      *storage.ConfigSnapshot // the configs this worker acts on
	known         map[string]bool         // connectors as of the last config update handled
	joinSnapshot  *storage.ConfigSnapshot // the configs it joined with (the assignor's view)
	assignment    *group.Assignment       // full assignment (cooperative: running + new)
	running       workSet                 // what was started after the last rebalance
	started       map[string]bool         // connectors the worker accepted
	memberID      string
	generation    int32
	lastCompleted int32
	protocol      string
	needJoin      bool
	resolved      bool // the last assignment has been acted on
	canReadConfig bool
	needsReconfig bool // a config change needs a rebalance
	scheduled     time.Time
	tasksRestart  map[storage.TaskID]bool
	leaderState   *group.AssignResult
	applied       map[string]map[string]string // connector config behind its current task configs
	restarts      map[string]storage.RestartRequest
	retries       map[string]*reconfigRetry
	keyExpiration time.Time
	sessionKey    *storage.SessionKey
}

// workSet is a set of connectors and tasks.
type workSet struct {
	connectors map[string]bool
	tasks      map[storage.TaskID]bool
}

func newWorkSet() workSet {
	return workSet{connectors: map[string]bool{}, tasks: map[storage.TaskID]bool{}}
}

// reconfigRetry paces a connector's task reconfiguration retries.
type reconfigRetry struct {
	at       time.Time // next attempt (zero: none due)
	backoff  time.Duration
	inFlight bool // a hand-over to the leader is under way
}

// pendingUpdates is what the config store's listener reported since the
// loop last looked.
type pendingUpdates struct {
	mu       sync.Mutex
	updated  map[string]bool
	removed  map[string]bool
	tasks    map[storage.TaskID]bool
	targets  map[string]bool
	restarts map[string]storage.RestartRequest
}

func (p *pendingUpdates) take() (updated, removed map[string]bool, tasks map[storage.TaskID]bool, targets map[string]bool, restarts map[string]storage.RestartRequest) {
	p.mu.Lock()
	defer p.mu.Unlock()
	updated, removed, tasks, targets, restarts = p.updated, p.removed, p.tasks, p.targets, p.restarts
	p.updated, p.removed, p.tasks, p.targets, p.restarts = nil, nil, nil, nil, nil
	return
}

// needsRebalance reports whether what is pending will make the worker
// rebalance (new or removed connectors, new task configs), judged against
// the connectors the loop knew.
func (p *pendingUpdates) needsRebalance(known map[string]bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.tasks) > 0 {
		return true
	}
	for c := range p.updated {
		if !known[c] {
			return true
		}
	}
	for c := range p.removed {
		if known[c] {
			return true
		}
	}
	return false
}

// distListener feeds the config store's callbacks to the loop.
type distListener struct{ d *Distributed }

func addTo[K comparable, V any](m *map[K]V, k K, v V) {
	if *m == nil {
		*m = map[K]V{}
	}
	(*m)[k] = v
}

func (l distListener) record(f func(p *pendingUpdates)) {
	l.d.pending.mu.Lock()
	f(&l.d.pending)
	l.d.pending.mu.Unlock()
	l.d.poke()
}

func (l distListener) ConnectorConfigUpdated(name string) {
	l.record(func(p *pendingUpdates) { addTo(&p.updated, name, true) })
}

func (l distListener) ConnectorConfigRemoved(name string) {
	l.record(func(p *pendingUpdates) { addTo(&p.removed, name, true) })
}

func (l distListener) TaskConfigsUpdated(tasks []storage.TaskID) {
	l.record(func(p *pendingUpdates) {
		for _, t := range tasks {
			addTo(&p.tasks, t, true)
		}
	})
}

func (l distListener) TargetStateChanged(name string) {
	l.record(func(p *pendingUpdates) { addTo(&p.targets, name, true) })
}

func (l distListener) RestartRequested(req storage.RestartRequest) {
	l.record(func(p *pendingUpdates) { addTo(&p.restarts, req.Connector, req) })
}

var _ storage.ConfigListener = distListener{}

// NewDistributed returns a herder that has not joined its group yet;
// Start runs it.
func NewDistributed(cfg DistributedConfig, deps DistributedDeps) (*Distributed, error) {
	cfg.withDefaults()
	cfg.Protocol = strings.ToLower(cfg.Protocol) // Kafka accepts EAGER, Sessioned, ...
	switch cfg.Protocol {
	case "eager", "compatible", "sessioned":
	default:
		return nil, fmt.Errorf("connect.protocol %q: want eager, compatible or sessioned", cfg.Protocol)
	}
	if cfg.GroupID == "" {
		return nil, errors.New("group.id is required for a distributed worker")
	}
	if deps.Client == nil || deps.Configs == nil || deps.Statuses == nil || deps.Worker == nil {
		return nil, errors.New("a distributed herder needs a Kafka client, config and status stores and a worker")
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	ctx, cancel := context.WithCancel(context.Background())
	d := &Distributed{
		cfg: cfg, deps: deps, now: deps.Now,
		log:      cfg.Logger.With("group", cfg.GroupID, "worker", cfg.WorkerID),
		requests: make(chan func(), 64),
		wake:     make(chan struct{}, 1),
		stopCh:   make(chan struct{}),
		done:     make(chan struct{}),
		ctx:      ctx, cancel: cancel,
		http:          &http.Client{Timeout: 90 * time.Second},
		running:       newWorkSet(),
		started:       map[string]bool{},
		generation:    -1,
		lastCompleted: -1,
		needJoin:      true,
		canReadConfig: true,
		tasksRestart:  map[storage.TaskID]bool{},
		applied:       map[string]map[string]string{},
		restarts:      map[string]storage.RestartRequest{},
		retries:       map[string]*reconfigRetry{},
	}
	if deps.HTTP != nil {
		d.http = deps.HTTP
	}
	d.assignor = group.NewAssignor(cfg.ScheduledRebalanceMaxDelay, d.now, d.log)
	d.member = group.NewMember(group.Config{
		Client: deps.Client, Group: cfg.GroupID, Handler: distGroupHandler{d},
		SessionTimeout: cfg.SessionTimeout, RebalanceTimeout: cfg.RebalanceTimeout,
		HeartbeatInterval: cfg.HeartbeatInterval, RetryBackoff: cfg.RetryBackoff,
		RetryBackoffMax: cfg.RetryBackoffMax, Logger: cfg.Logger.With("worker", cfg.WorkerID),
	})
	return d, nil
}

// Start reads the config topic and starts the herder's goroutine, which
// joins the group. It returns at once; Stop ends it.
func (d *Distributed) Start() {
	d.deps.Configs.SetListener(distListener{d})
	d.snapshot = d.deps.Configs.Snapshot()
	d.joinSnapshot = d.snapshot
	d.known = knownConnectors(d.snapshot)
	for name := range d.snapshot.Tasks {
		d.applied[name] = d.snapshot.Connectors[name]
	}
	go d.run()
}

// Stop stops every connector and task this worker runs, leaves the group
// and waits for the herder's goroutine to end (or ctx).
func (d *Distributed) Stop(ctx context.Context) error {
	d.stopOnce.Do(func() {
		close(d.stopCh)
		d.cancel()
	})
	select {
	case <-d.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("stop distributed herder: %w", ctx.Err())
	}
}

// KafkaClusterID is the cluster the worker's internal topics live in.
func (d *Distributed) KafkaClusterID() string { return d.cfg.KafkaClusterID }

func (d *Distributed) poke() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

func (d *Distributed) stopping() bool {
	select {
	case <-d.stopCh:
		return true
	default:
		return false
	}
}

func (d *Distributed) run() {
	defer close(d.done)
	for !d.stopping() {
		d.tick()
	}
	d.halt()
}

// tick is one turn of the loop (Kafka's DistributedHerder.tick): make
// sure we are a member with a usable assignment, then serve requests and
// config changes, then wait for something to happen.
func (d *Distributed) tick() {
	if !d.canReadConfig {
		if !d.readConfigToEnd() {
			return
		}
		d.canReadConfig = true
	}
	if d.needJoin {
		if !d.join() {
			return
		}
	}
	if !d.handleRebalanceCompleted() {
		return
	}
	d.maybeRotateSessionKey()
	d.drainRequests()
	d.processRestartRequests()
	if d.updateConfigs() {
		return // a rebalance is needed first
	}
	d.runRetries()
	if d.needJoin || !d.canReadConfig {
		return
	}
	d.wait()
}

// join (re)joins the group and applies the assignment it gets.
func (d *Distributed) join() bool {
	if group.ProtocolVersion(d.protocol) == 0 && d.assignment != nil {
		// Eager: everything stops before every rebalance.
		d.revoke(d.assignment.Connectors, d.assignment.Tasks)
	}
	gen, err := d.member.Join(d.ctx)
	if err != nil {
		if d.stopping() {
			return false
		}
		d.log.Error("could not join the worker group; retrying", "err", err)
		d.sleep(d.cfg.RetryBackoffMax)
		return false
	}
	d.needJoin = false
	d.onAssigned(gen)
	return true
}

// onAssigned applies a new generation's assignment (Kafka's
// WorkerCoordinator.onJoinComplete and RebalanceListener.onAssigned):
// revocations are carried out at once, additions wait for
// handleRebalanceCompleted, which first catches up with the configs.
func (d *Distributed) onAssigned(gen group.Generation) {
	a, err := group.DecodeAssignment(gen.Assignment)
	if err != nil {
		d.log.Error("the leader sent an assignment we cannot decode; rejoining", "err", err)
		a = &group.Assignment{Error: group.ConfigMismatch, ConfigOffset: -1}
	}
	d.protocol = gen.Protocol
	if group.ProtocolVersion(d.protocol) > 0 {
		if len(a.RevokedConnectors)+len(a.RevokedTasks) > 0 {
			d.revoke(a.RevokedConnectors, a.RevokedTasks)
		}
		if prev := d.assignment; prev != nil {
			// The leader sends only what changed: keep what we run.
			a.Connectors = unionStrings(minusStrings(prev.Connectors, a.RevokedConnectors), a.Connectors)
			a.Tasks = unionTasks(minusTasks(prev.Tasks, a.RevokedTasks), a.Tasks)
		}
	}
	d.assignment = a
	d.memberID = gen.MemberID
	d.generation = gen.ID
	d.lastCompleted = gen.ID
	d.genMu.Lock()
	d.statusGen = gen.ID
	d.genMu.Unlock()
	d.resolved = false
	d.scheduled = time.Time{}
	if a.Delay > 0 {
		d.scheduled = d.now().Add(time.Duration(a.Delay) * time.Millisecond)
	}
	d.log.Info("joined the worker group", "generation", gen.ID, "protocol", gen.Protocol, "leader", a.Leader,
		"leader_url", a.LeaderURL, "config_offset", a.ConfigOffset, "connectors", len(a.Connectors), "tasks", len(a.Tasks),
		"revoked_connectors", len(a.RevokedConnectors), "revoked_tasks", len(a.RevokedTasks), "delay_ms", a.Delay, "error", a.Error)
	if d.isLeader() {
		// Statuses of connectors and tasks deleted before this rebalance
		// go now, after their old owners stopped them.
		d.deleteStaleStatuses()
	}
}

// revoke stops connectors and tasks the group took from this worker.
func (d *Distributed) revoke(connectors []string, tasks []group.TaskID) {
	ctx := context.WithoutCancel(d.ctx)
	for _, c := range connectors {
		if d.started[c] {
			d.deps.Worker.StopConnector(ctx, c)
			delete(d.started, c)
		}
		delete(d.running.connectors, c)
	}
	var ids []storage.TaskID
	for _, t := range tasks {
		id := storage.TaskID{Connector: t.Connector, Task: int(t.Task)}
		ids = append(ids, id)
		delete(d.running.tasks, id)
	}
	if len(ids) > 0 {
		d.deps.Worker.StopTasks(ctx, ids)
	}
	if len(connectors)+len(ids) > 0 {
		d.log.Info("stopped revoked work", "connectors", connectors, "tasks", len(ids))
	}
}

// handleRebalanceCompleted acts on the last assignment once (Kafka's
// handleRebalanceCompleted): on a failed assignment or one made with
// configs we have not read yet, catch up and rejoin; otherwise start the
// new work, and rejoin at once if something was revoked (the follow-up
// rebalance that hands it to its new owner).
func (d *Distributed) handleRebalanceCompleted() bool {
	if d.resolved {
		if !d.scheduled.IsZero() && !d.now().Before(d.scheduled) {
			// The leader asked for a rebalance now (delayed reassignment
			// of a departed worker's work).
			d.log.Info("the scheduled rebalance is due")
			d.scheduled = time.Time{}
			d.needJoin = true
			return false
		}
		return true
	}
	a := d.assignment
	needsRead, needsRejoin := false, false
	if a.Failed() {
		needsRejoin = true
		switch {
		case d.isLeader():
			d.log.Warn("assignment failed and we are the leader; reading to the end of the config topic and retrying")
			needsRead = true
		case d.snapshot.Offset < a.ConfigOffset:
			d.log.Warn("assignment failed and we are behind; reading to the end of the config topic and retrying")
			needsRead = true
		default:
			d.log.Warn("assignment failed; we are up to date, so just retrying")
		}
	} else if d.snapshot.Offset < a.ConfigOffset {
		d.log.Info("catching up to the assignment's config offset", "have", d.snapshot.Offset, "want", a.ConfigOffset)
		needsRead = true
	}
	if !d.scheduled.IsZero() && !d.now().Before(d.scheduled) {
		d.log.Info("the scheduled rebalance is due")
		needsRejoin = true
		d.scheduled = time.Time{}
	}
	if needsRead {
		if d.readConfigToEnd() {
			d.canReadConfig = true
		} else {
			d.canReadConfig = false
			needsRejoin = true
		}
	}
	if needsRejoin {
		d.needJoin = true
		return false
	}
	if d.snapshot.Offset != a.ConfigOffset {
		// We went past the assignment's offset: it may be stale.
		d.log.Info("config offset does not match the assignment; rebalancing", "have", d.snapshot.Offset, "assignment", a.ConfigOffset)
		d.needJoin = true
		return false
	}
	d.startWork()
	d.resolved = true
	if len(a.RevokedConnectors)+len(a.RevokedTasks) > 0 {
		a.RevokedConnectors, a.RevokedTasks = nil, nil
		d.needJoin = true
		return false
	}
	return true
}

// readConfigToEnd reads the config topic to its end within
// worker.sync.timeout.ms; if it cannot, it leaves the group (so it does
// not hold up everyone) and backs off for worker.unsync.backoff.ms.
func (d *Distributed) readConfigToEnd() bool {
	if r, ok := d.deps.Configs.(configRefresher); ok {
		ctx, cancel := context.WithTimeout(d.ctx, d.cfg.WorkerSyncTimeout)
		err := r.Refresh(ctx)
		cancel()
		if err != nil {
			if d.stopping() {
				return false
			}
			d.log.Warn("could not read to the end of the config topic; leaving the group and backing off",
				"timeout", d.cfg.WorkerSyncTimeout, "backoff", d.cfg.WorkerUnsyncBackoff, "err", err)
			lctx, lcancel := context.WithTimeout(context.WithoutCancel(d.ctx), 5*time.Second)
			if err := d.member.Leave(lctx); err != nil {
				d.log.Warn("leave group", "err", err)
			}
			lcancel()
			d.needJoin = true
			d.sleep(d.cfg.WorkerUnsyncBackoff)
			return false
		}
	}
	d.snapshot = d.deps.Configs.Snapshot()
	return true
}

// refreshConfigs reads the config topic to its end within
// worker.sync.timeout.ms (Kafka's refreshConfigSnapshot), without leaving
// the group when it cannot.
func (d *Distributed) refreshConfigs() bool {
	if r, ok := d.deps.Configs.(configRefresher); ok {
		ctx, cancel := context.WithTimeout(d.ctx, d.cfg.WorkerSyncTimeout)
		defer cancel()
		if err := r.Refresh(ctx); err != nil {
			d.log.Warn("could not read to the end of the config topic", "err", err)
			return false
		}
	}
	d.snapshot = d.deps.Configs.Snapshot()
	return true
}

// startWork starts what the assignment gives this worker and it does not
// run yet.
func (d *Distributed) startWork() {
	a := d.assignment
	for _, c := range a.Connectors {
		if !d.running.connectors[c] {
			d.startConnector(c)
		}
	}
	for t := range d.tasksRestart {
		delete(d.running.tasks, t)
	}
	clear(d.tasksRestart)
	for _, t := range a.Tasks {
		id := storage.TaskID{Connector: t.Connector, Task: int(t.Task)}
		if !d.running.tasks[id] {
			d.startTask(id)
		}
	}
	d.running = newWorkSet()
	if group.ProtocolVersion(d.protocol) > 0 {
		for _, c := range a.Connectors {
			d.running.connectors[c] = true
		}
		for _, t := range a.Tasks {
			d.running.tasks[storage.TaskID{Connector: t.Connector, Task: int(t.Task)}] = true
		}
	}
	d.log.Info("started assigned work", "config_offset", a.ConfigOffset, "connectors", len(a.Connectors), "tasks", len(a.Tasks))
}

func (d *Distributed) startConnector(name string) {
	config := d.snapshot.Connectors[name]
	if config == nil {
		d.log.Info("not starting connector: its config was removed", "connector", name)
		return
	}
	target := d.snapshot.TargetState(name)
	d.log.Info("starting connector", "connector", name, "target_state", target)
	err := d.deps.Worker.StartConnector(d.ctx, name, config, target, d, func() { d.RequestTaskReconfiguration(name) })
	if err != nil {
		d.log.Error("failed to start connector", "connector", name, "err", err)
		d.Status(name, -1, storage.StateFailed, err)
		return
	}
	d.started[name] = true
	if target == storage.TargetStarted {
		d.reconfigureWithRetry(name)
	}
}

func (d *Distributed) startTask(id storage.TaskID) bool {
	connConfig := d.snapshot.Connectors[id.Connector]
	taskConfig := d.snapshot.TaskConfig(id)
	if connConfig == nil || taskConfig == nil {
		d.log.Info("not starting task: its config was removed", "task", id.String())
		return false
	}
	d.log.Info("starting task", "task", id.String())
	if err := d.deps.Worker.StartTask(d.ctx, id, connConfig, taskConfig, d.snapshot.TargetState(id.Connector), d); err != nil {
		d.log.Error("failed to start task", "task", id.String(), "err", err)
		d.Status(id.Connector, id.Task, storage.StateFailed, err)
		return false
	}
	return true
}

// wait blocks until a request, a config change, a group notice, a
// scheduled action or Stop.
func (d *Distributed) wait() {
	next := d.nextDeadline()
	var timer <-chan time.Time
	if !next.IsZero() {
		t := time.NewTimer(max(next.Sub(d.now()), 0))
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-d.stopCh:
	case fn := <-d.requests:
		fn()
	case <-d.wake:
	case n := <-d.member.Notices():
		d.onNotice(n)
	case <-timer:
	}
}

func (d *Distributed) nextDeadline() time.Time {
	var next time.Time
	consider := func(t time.Time) {
		if !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	consider(d.scheduled)
	for _, r := range d.retries {
		consider(r.at)
	}
	if d.isLeader() && d.protocol == group.ProtocolSessioned {
		consider(d.keyExpiration)
	}
	return next
}

func (d *Distributed) onNotice(n group.Notice) {
	switch n {
	case group.NoticeCoordinatorLost:
		// We cannot be sure we are still a member: stop everything
		// rather than run work the group gave to someone else.
		if d.assignment != nil {
			d.log.Warn("lost the group coordinator; stopping all work until we rejoin")
			d.revoke(slices.Clone(d.assignment.Connectors), slices.Clone(d.assignment.Tasks))
			d.assignment = nil
		}
	default:
		d.log.Info("rejoining the worker group", "reason", n.String())
	}
	d.needJoin = true
}

// drainRequests runs the requests queued when the tick began.
func (d *Distributed) drainRequests() {
	for range len(d.requests) {
		select {
		case fn := <-d.requests:
			fn()
		default:
			return
		}
	}
}

// sleep waits for d or Stop.
func (d *Distributed) sleep(dur time.Duration) {
	t := time.NewTimer(dur)
	defer t.Stop()
	select {
	case <-t.C:
	case <-d.stopCh:
	}
}

// halt stops everything and leaves the group (Kafka's halt).
func (d *Distributed) halt() {
	if d.killed.Load() {
		d.member.Close()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), d.cfg.RebalanceTimeout)
	defer cancel()
	if d.assignment != nil {
		d.revoke(slices.Clone(d.assignment.Connectors), slices.Clone(d.assignment.Tasks))
	}
	for c := range d.started {
		d.deps.Worker.StopConnector(ctx, c)
	}
	if err := d.member.Leave(ctx); err != nil {
		d.log.Warn("leave group on stop", "err", err)
	}
	d.member.Close()
	d.deps.Configs.SetListener(nil)
	// Fail what is still queued: nobody will run it.
	for {
		select {
		case fn := <-d.requests:
			fn()
		default:
			d.log.Info("distributed herder stopped")
			return
		}
	}
}

func (d *Distributed) isLeader() bool {
	return d.assignment != nil && d.memberID != "" && d.memberID == d.assignment.Leader
}

func (d *Distributed) leaderURL() string {
	if d.assignment == nil {
		return ""
	}
	return d.assignment.LeaderURL
}

// maybeRotateSessionKey writes a new KIP-507 session key when this worker
// leads a "sessioned" group and the key is missing or expired.
func (d *Distributed) maybeRotateSessionKey() {
	w, ok := d.deps.Configs.(sessionKeyWriter)
	if !ok || !d.isLeader() || d.protocol != group.ProtocolSessioned {
		return
	}
	if k := d.snapshot.SessionKey; k != nil && (d.sessionKey == nil || k.CreationTimestamp >= d.sessionKey.CreationTimestamp) {
		d.sessionKey = k
		d.keyExpiration = time.UnixMilli(k.CreationTimestamp).Add(d.cfg.KeyRotationInterval)
	}
	if d.sessionKey != nil && d.now().Before(d.keyExpiration) {
		return
	}
	raw, err := generateSessionKey(d.cfg.KeyGenerationAlgorithm, d.cfg.KeySize)
	if err != nil {
		d.log.Error("generate session key", "err", err)
		return
	}
	k := storage.SessionKey{Key: base64.StdEncoding.EncodeToString(raw), Algorithm: d.cfg.KeyGenerationAlgorithm, CreationTimestamp: d.now().UnixMilli()}
	if err := w.PutSessionKey(d.ctx, k); err != nil {
		d.log.Warn("could not write a new session key; reading the config topic before retrying", "err", err)
		d.canReadConfig = false
		return
	}
	d.sessionKey = &k
	d.keyExpiration = time.UnixMilli(k.CreationTimestamp).Add(d.cfg.KeyRotationInterval)
	d.log.Info("distributed a new session key")
}

// configRefresher and sessionKeyWriter are optional abilities of a
// config store (storage.KafkaConfigStore has both).
type configRefresher interface {
	Refresh(ctx context.Context) error
}

type sessionKeyWriter interface {
	PutSessionKey(ctx context.Context, k storage.SessionKey) error
}

// distGroupHandler gives the group member the worker's metadata and, on
// the leader, runs the assignor. Both run on the loop goroutine (inside
// member.Join).
type distGroupHandler struct{ d *Distributed }

func (h distGroupHandler) Protocols() []group.Protocol {
	d := h.d
	d.joinSnapshot = d.deps.Configs.Snapshot()
	state := group.WorkerState{URL: d.cfg.URL, ConfigOffset: d.joinSnapshot.Offset}
	if a := d.assignment; a != nil {
		state.Assignment = &group.Assignment{
			Error: a.Error, Leader: a.Leader, LeaderURL: a.LeaderURL, ConfigOffset: a.ConfigOffset,
			Connectors: a.Connectors, Tasks: a.Tasks,
		}
	}
	var names []string
	switch d.cfg.Protocol {
	case "sessioned":
		names = []string{group.ProtocolSessioned, group.ProtocolCompatible, group.ProtocolDefault}
	case "compatible":
		names = []string{group.ProtocolCompatible, group.ProtocolDefault}
	default:
		names = []string{group.ProtocolDefault}
	}
	var out []group.Protocol
	for _, n := range names {
		md, err := group.EncodeMetadata(n, state)
		if err != nil {
			panic(err) // the names above are all valid
		}
		out = append(out, group.Protocol{Name: n, Metadata: md})
	}
	return out
}

func (h distGroupHandler) Assign(_ context.Context, gen group.AssignContext, members []group.MemberMetadata) (map[string][]byte, error) {
	d := h.d
	res, err := d.assignor.Assign(group.AssignRequest{
		LeaderID: gen.LeaderID, Protocol: gen.Protocol, Generation: gen.Generation, LastCompleted: d.lastCompleted,
		Members: members, Snapshot: assignorSnapshot(d.joinSnapshot),
		Fresh: func() group.Snapshot {
			d.joinSnapshot = d.deps.Configs.Snapshot()
			return assignorSnapshot(d.joinSnapshot)
		},
	})
	if err != nil {
		return nil, err
	}
	d.leaderState = res
	d.log.Info("assigned work as the group leader", "generation", gen.Generation, "members", len(members),
		"config_offset", res.ConfigOffset, "delay_ms", d.assignor.Delay(), "error", res.Error)
	return res.Assignments, nil
}

// assignorSnapshot is what the assignor needs of the configs: each
// connector's task count (none while its task configs are inconsistent).
func assignorSnapshot(s *storage.ConfigSnapshot) group.Snapshot {
	counts := make(map[string]int, len(s.Connectors))
	for c := range s.Connectors {
		if !s.Inconsistent[c] {
			counts[c] = len(s.Tasks[c])
		}
	}
	return group.Snapshot{Offset: s.Offset, TaskCounts: counts}
}

// ownerURL returns the REST URL of the worker running a connector (task
// < 0) or task, as the leader assigned it, or "" when unknown.
func (d *Distributed) ownerURL(connector string, task int) string {
	if d.needJoin || !d.isLeader() || d.leaderState == nil {
		return ""
	}
	for w, cs := range d.leaderState.Cluster.AllAssignedConnectors {
		if task < 0 && slices.Contains(cs, connector) {
			return d.leaderState.Members[w].URL
		}
	}
	if task >= 0 {
		id := group.TaskID{Connector: connector, Task: int32(task)}
		for w, ts := range d.leaderState.Cluster.AllAssignedTasks {
			if slices.Contains(ts, id) {
				return d.leaderState.Members[w].URL
			}
		}
	}
	return ""
}

func unionStrings(a, b []string) []string {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

func minusStrings(a, b []string) []string {
	return slices.DeleteFunc(slices.Clone(a), func(x string) bool { return slices.Contains(b, x) })
}

func unionTasks(a, b []group.TaskID) []group.TaskID {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

func minusTasks(a, b []group.TaskID) []group.TaskID {
	return slices.DeleteFunc(slices.Clone(a), func(x group.TaskID) bool { return slices.Contains(b, x) })
}

func knownConnectors(s *storage.ConfigSnapshot) map[string]bool {
	m := make(map[string]bool, len(s.Connectors))
	for c := range s.Connectors {
		m[c] = true
	}
	return m
}

// sortedKeys returns a map's keys sorted.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
