package group

import (
	"cmp"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
)

// Snapshot is the part of the config topic the assignor needs: how far it
// was read and how many tasks each connector has (connectors whose task
// configs are inconsistent count 0 tasks, as in Kafka).
type Snapshot struct {
	Offset     int64
	TaskCounts map[string]int
}

// AssignRequest is one leader assignment.
type AssignRequest struct {
	LeaderID string
	Protocol string
	// Generation is the generation being formed; LastCompleted the last
	// one this worker completed (a mismatch means the previous assignment
	// this leader computed may never have been delivered).
	Generation    int32
	LastCompleted int32
	Members       []MemberMetadata
	// Snapshot is the config state the leader joined with; Fresh reads
	// the state it has now, used when a member reported a newer config
	// offset than the leader joined with.
	Snapshot Snapshot
	Fresh    func() Snapshot
}

// AssignResult is the leader's answer: each member's assignment bytes,
// and what it decided (for the leader's own bookkeeping: who runs what,
// at which REST URL).
type AssignResult struct {
	Assignments  map[string][]byte
	Members      map[string]WorkerState
	Cluster      ClusterAssignment
	ConfigOffset int64
	// Snapshot is the config state the assignment was computed from.
	Snapshot Snapshot
	Error    int16
}

// ClusterAssignment is one round of the incremental cooperative assignor:
// per worker, what to start and stop now, and everything it runs after.
type ClusterAssignment struct {
	NewlyAssignedConnectors map[string][]string
	NewlyAssignedTasks      map[string][]TaskID
	NewlyRevokedConnectors  map[string][]string
	NewlyRevokedTasks       map[string][]TaskID
	AllAssignedConnectors   map[string][]string
	AllAssignedTasks        map[string][]TaskID
}

// Workers lists every worker the assignment mentions, sorted.
func (c *ClusterAssignment) Workers() []string {
	set := map[string]bool{}
	for _, m := range []map[string][]string{c.NewlyAssignedConnectors, c.NewlyRevokedConnectors, c.AllAssignedConnectors} {
		for w := range m {
			set[w] = true
		}
	}
	for _, m := range []map[string][]TaskID{c.NewlyAssignedTasks, c.NewlyRevokedTasks, c.AllAssignedTasks} {
		for w := range m {
			set[w] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// Assignor is Kafka's IncrementalCooperativeAssignor (and, for the
// "default" protocol, its EagerAssignor). It keeps state between rounds
// (the previous assignment, a scheduled delayed rebalance), so the leader
// keeps one Assignor for as long as it leads; a new leader starts afresh
// from what the members report they run.
type Assignor struct {
	maxDelay int64 // scheduled.rebalance.max.delay.ms
	now      func() time.Time
	log      *slog.Logger

	previousAssignment   ConnectorsAndTasks
	previousRevocation   ConnectorsAndTasks
	revokedInPrevious    bool
	candidateWorkers     []string // ordered set
	scheduledRebalance   int64    // unix ms; 0 when none
	delay                int32    // ms
	previousGenerationID int32
	previousMembers      map[string]bool
	successiveRevoking   int
}

// NewAssignor returns an assignor with scheduled.rebalance.max.delay.ms =
// maxDelay. now is the clock (time.Now if nil).
func NewAssignor(maxDelay time.Duration, now func() time.Time, log *slog.Logger) *Assignor {
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.Default()
	}
	return &Assignor{maxDelay: maxDelay.Milliseconds(), now: now, log: log, previousGenerationID: -1}
}

// Delay is the delay (ms) of the rebalance the last round scheduled.
func (a *Assignor) Delay() int32 { return a.delay }

// ConnectorsAndTasks is a set of connectors and tasks (insertion ordered).
type ConnectorsAndTasks struct {
	Connectors []string
	Tasks      []TaskID
}

func (c ConnectorsAndTasks) empty() bool { return len(c.Connectors) == 0 && len(c.Tasks) == 0 }

// Assign performs one leader assignment (Kafka's performAssignment).
func (a *Assignor) Assign(req AssignRequest) (*AssignResult, error) {
	version := ProtocolVersion(req.Protocol)
	if version < 0 {
		return nil, fmt.Errorf("assign: unknown Connect protocol %q", req.Protocol)
	}
	members := make(map[string]WorkerState, len(req.Members))
	maxOffset := int64(math.MinInt64)
	for _, m := range req.Members {
		ws, err := DecodeMetadata(req.Protocol, m.Metadata)
		if err != nil {
			return nil, fmt.Errorf("assign: member %s: %w", m.MemberID, err)
		}
		members[m.MemberID] = ws
		maxOffset = max(maxOffset, ws.ConfigOffset)
	}
	leader, ok := members[req.LeaderID]
	if !ok {
		return nil, fmt.Errorf("assign: the leader %s is not among the members", req.LeaderID)
	}
	res := &AssignResult{Members: members, Snapshot: req.Snapshot}

	// The leader must know the newest config any member has seen; if it
	// does not, everyone reads to the end of the config topic and
	// rejoins (CONFIG_MISMATCH).
	if req.Snapshot.Offset < maxOffset {
		fresh := req.Snapshot
		if req.Fresh != nil {
			fresh = req.Fresh()
		}
		if fresh.Offset < maxOffset {
			a.log.Info("selected to assign but behind the newest config a member has seen; asking all to re-sync",
				"leader_offset", fresh.Offset, "max_offset", maxOffset)
			res.Error, res.ConfigOffset = ConfigMismatch, maxOffset
			res.Assignments = fill(members, req.Protocol, &Assignment{Error: ConfigMismatch, Leader: req.LeaderID,
				LeaderURL: leader.URL, ConfigOffset: maxOffset}, nil)
			return res, nil
		}
		res.Snapshot = fresh
		maxOffset = fresh.Offset
	}
	res.ConfigOffset = maxOffset
	if version == 0 {
		res.Cluster = eagerAssignment(res.Snapshot, slices.Sorted(maps.Keys(members)))
	} else {
		current := make(map[string]ConnectorsAndTasks, len(members))
		for id, ws := range members {
			var c ConnectorsAndTasks
			if ws.Assignment != nil {
				c = ConnectorsAndTasks{Connectors: slices.Clone(ws.Assignment.Connectors), Tasks: slices.Clone(ws.Assignment.Tasks)}
			}
			current[id] = c
		}
		res.Cluster = a.PerformTaskAssignment(res.Snapshot, req.LastCompleted, req.Generation, current)
	}
	var delay int32
	if version > 0 {
		delay = a.delay
	}
	res.Assignments = fill(members, req.Protocol, &Assignment{Leader: req.LeaderID, LeaderURL: leader.URL,
		ConfigOffset: maxOffset, Delay: delay}, &res.Cluster)
	return res, nil
}

// fill builds each member's assignment from a template and the cluster
// assignment (Kafka's fillAssignments) and encodes it.
func fill(members map[string]WorkerState, protocol string, tmpl *Assignment, c *ClusterAssignment) map[string][]byte {
	out := make(map[string][]byte, len(members))
	eager := ProtocolVersion(protocol) == 0
	for id := range members {
		a := *tmpl
		if c != nil {
			if eager {
				a.Connectors, a.Tasks = c.AllAssignedConnectors[id], c.AllAssignedTasks[id]
			} else {
				a.Connectors, a.Tasks = c.NewlyAssignedConnectors[id], c.NewlyAssignedTasks[id]
				a.RevokedConnectors, a.RevokedTasks = c.NewlyRevokedConnectors[id], c.NewlyRevokedTasks[id]
			}
		}
		b, err := EncodeAssignment(protocol, &a)
		if err != nil {
			panic(err) // the protocol was checked by the caller
		}
		out[id] = b
	}
	return out
}

// eagerAssignment is Kafka's EagerAssignor: connectors, then tasks,
// round robin over the members sorted by id; every member gets its whole
// assignment each round.
func eagerAssignment(s Snapshot, members []string) ClusterAssignment {
	c := ClusterAssignment{AllAssignedConnectors: map[string][]string{}, AllAssignedTasks: map[string][]TaskID{}}
	if len(members) == 0 {
		return c
	}
	next := 0
	member := func() string {
		m := members[next%len(members)]
		next++
		return m
	}
	connectors := slices.Sorted(maps.Keys(s.TaskCounts))
	for _, conn := range connectors {
		m := member()
		c.AllAssignedConnectors[m] = append(c.AllAssignedConnectors[m], conn)
	}
	for _, conn := range connectors {
		for i := range s.TaskCounts[conn] {
			m := member()
			c.AllAssignedTasks[m] = append(c.AllAssignedTasks[m], TaskID{conn, int32(i)})
		}
	}
	c.NewlyAssignedConnectors, c.NewlyAssignedTasks = c.AllAssignedConnectors, c.AllAssignedTasks
	return c
}

// PerformTaskAssignment is one round of Kafka's incremental cooperative
// assignment (KIP-415), given the configured connectors and tasks and
// what each member reports it runs. See Kafka's
// IncrementalCooperativeAssignor.performTaskAssignment, which this follows
// step for step.
func (a *Assignor) PerformTaskAssignment(s Snapshot, lastCompleted, generation int32, memberAssignments map[string]ConnectorsAndTasks) ClusterAssignment {
	if a.previousGenerationID != lastCompleted {
		// The previous round's assignment may not have reached the
		// members; do not trust our memory of it.
		a.log.Debug("clearing the previous assignment: generation mismatch",
			"previous_generation", a.previousGenerationID, "last_completed", lastCompleted)
		a.previousAssignment = ConnectorsAndTasks{}
	}
	workers := slices.Sorted(maps.Keys(memberAssignments))

	var configured ConnectorsAndTasks
	configured.Connectors = slices.Sorted(maps.Keys(s.TaskCounts))
	for _, c := range configured.Connectors {
		for i := range s.TaskCounts[c] {
			configured.Tasks = append(configured.Tasks, TaskID{c, int32(i)})
		}
	}

	var active ConnectorsAndTasks
	for _, w := range workers {
		active.Connectors = append(active.Connectors, memberAssignments[w].Connectors...)
		active.Tasks = append(active.Tasks, memberAssignments[w].Tasks...)
	}
	active.Connectors, active.Tasks = distinct(active.Connectors), distinctTasks(active.Tasks)

	// A revocation that did not take effect: start again from what runs.
	if !a.previousRevocation.empty() {
		if anyIn(a.previousRevocation.Connectors, active.Connectors) || anyIn(a.previousRevocation.Tasks, active.Tasks) {
			a.previousAssignment = active
		}
		a.previousRevocation = ConnectorsAndTasks{}
	}

	deleted := diff(a.previousAssignment, configured)
	duplicated := duplicatedAssignments(workers, memberAssignments)
	lost := diff(a.previousAssignment, active, deleted)
	created := diff(configured, a.previousAssignment, active)
	a.log.Debug("assignment round", "deleted", deleted, "duplicated", duplicated, "lost", lost, "created", created)

	current := workerLoads(workers, memberAssignments, deleted)
	toRevoke := map[string]*ConnectorsAndTasks{}
	deletedToRevoke := intersection(deleted, workers, memberAssignments)
	addAll(toRevoke, deletedToRevoke)
	duplicatedToRevoke := intersection(duplicated, workers, memberAssignments)
	addAll(toRevoke, duplicatedToRevoke)

	next := workerLoads(workers, memberAssignments, ConnectorsAndTasks{})
	removeAll(next, deletedToRevoke)
	removeAll(next, duplicatedToRevoke)

	var lostToReassign ConnectorsAndTasks
	a.handleLostAssignments(lost, &lostToReassign, next)

	// No load-balancing revocations while a delayed rebalance is pending.
	if a.delay == 0 {
		lb := a.loadBalancingRevocations(configured, next)
		switch {
		case a.revokedInPrevious && len(lb) > 0:
			// Successive revoking rebalances back off exponentially, so
			// workers joining one by one do not cause a storm.
			a.successiveRevoking++
			a.delay = int32(a.backoff(a.successiveRevoking))
			if a.delay != 0 {
				a.scheduledRebalance = a.now().UnixMilli() + int64(a.delay)
				a.log.Debug("skipping revocations this round", "delay_ms", a.delay)
			} else {
				addAll(toRevoke, lb)
				removeAll(next, lb)
			}
		case len(lb) > 0:
			addAll(toRevoke, lb)
			removeAll(next, lb)
			a.revokedInPrevious = true
		case a.revokedInPrevious:
			// Converged: reset the backoff.
			a.revokedInPrevious = false
			a.successiveRevoking = 0
		}
	} else {
		a.revokedInPrevious = false
	}

	toAssign := ConnectorsAndTasks{
		Connectors: distinct(append(slices.Clone(created.Connectors), lostToReassign.Connectors...)),
		Tasks:      distinctTasks(append(slices.Clone(created.Tasks), lostToReassign.Tasks...)),
	}
	assignConnectors(next, toAssign.Connectors)
	assignTasks(next, toAssign.Tasks)

	res := ClusterAssignment{
		NewlyAssignedConnectors: map[string][]string{}, NewlyAssignedTasks: map[string][]TaskID{},
		NewlyRevokedConnectors: map[string][]string{}, NewlyRevokedTasks: map[string][]TaskID{},
		AllAssignedConnectors: map[string][]string{}, AllAssignedTasks: map[string][]TaskID{},
	}
	currentBy := map[string]*workerLoad{}
	for _, w := range current {
		currentBy[w.worker] = w
	}
	for _, w := range next {
		cur := currentBy[w.worker]
		res.NewlyAssignedConnectors[w.worker] = minus(w.connectors, cur.connectors)
		res.NewlyAssignedTasks[w.worker] = minus(w.tasks, cur.tasks)
		rev := toRevoke[w.worker]
		if rev == nil {
			rev = &ConnectorsAndTasks{}
		}
		res.NewlyRevokedConnectors[w.worker] = rev.Connectors
		res.NewlyRevokedTasks[w.worker] = rev.Tasks
		res.AllAssignedConnectors[w.worker] = minus(w.connectors, rev.Connectors)
		res.AllAssignedTasks[w.worker] = minus(w.tasks, rev.Tasks)
	}
	for w, rev := range toRevoke { // a revocation for a worker not in next cannot happen, but keep it
		if _, ok := res.NewlyRevokedConnectors[w]; !ok {
			res.NewlyRevokedConnectors[w], res.NewlyRevokedTasks[w] = rev.Connectors, rev.Tasks
		}
	}

	a.previousAssignment = a.computePreviousAssignment(toRevoke, next, lost)
	a.previousGenerationID = generation
	a.previousMembers = map[string]bool{}
	for _, w := range workers {
		a.previousMembers[w] = true
	}
	return res
}

func (a *Assignor) computePreviousAssignment(toRevoke map[string]*ConnectorsAndTasks, next []*workerLoad, lost ConnectorsAndTasks) ConnectorsAndTasks {
	var prev ConnectorsAndTasks
	for _, w := range next {
		prev.Connectors = append(prev.Connectors, w.connectors...)
		prev.Tasks = append(prev.Tasks, w.tasks...)
	}
	for _, w := range slices.Sorted(maps.Keys(toRevoke)) {
		rev := toRevoke[w]
		prev.Connectors = minus(prev.Connectors, rev.Connectors)
		prev.Tasks = minus(prev.Tasks, rev.Tasks)
		a.previousRevocation.Connectors = append(a.previousRevocation.Connectors, rev.Connectors...)
		a.previousRevocation.Tasks = append(a.previousRevocation.Tasks, rev.Tasks...)
	}
	// Lost work stays in the previous assignment until it is reassigned,
	// so the next rounds still see it as lost (not as new).
	prev.Connectors = distinct(append(prev.Connectors, lost.Connectors...))
	prev.Tasks = distinctTasks(append(prev.Tasks, lost.Tasks...))
	return prev
}

// handleLostAssignments decides what to do with work whose worker is gone:
// reassign it now (nobody seems to have left: an assignment got lost;
// or delays are off), or wait up to scheduled.rebalance.max.delay.ms for
// the worker to come back, then give it to the workers that joined empty
// meanwhile (or to everybody).
func (a *Assignor) handleLostAssignments(lost ConnectorsAndTasks, toReassign *ConnectorsAndTasks, complete []*workerLoad) {
	if lost.empty() && !a.revokedInPrevious {
		a.resetDelay()
		return
	}
	now := a.now().UnixMilli()
	activeMembers := map[string]bool{}
	for _, w := range complete {
		activeMembers[w.worker] = true
	}
	allPresent := true
	for m := range a.previousMembers {
		if !activeMembers[m] {
			allPresent = false
			break
		}
	}
	if a.scheduledRebalance <= 0 && allPresent {
		a.log.Debug("no worker departed; reassigning lost work as new", "lost", lost)
		addInto(toReassign, lost)
		return
	}
	if a.maxDelay == 0 {
		addInto(toReassign, lost)
		return
	}
	if a.scheduledRebalance > 0 && now >= a.scheduledRebalance {
		// The delay expired: the departed worker is not coming back.
		var candidates []*workerLoad
		for _, c := range a.candidateWorkers {
			for _, w := range complete {
				if w.worker == c {
					candidates = append(candidates, w)
				}
			}
		}
		if len(candidates) > 0 {
			a.log.Info("delayed rebalance expired; giving lost work to new workers", "workers", len(candidates), "lost", lost)
			for i, c := range lost.Connectors {
				w := candidates[i%len(candidates)]
				w.connectors = append(w.connectors, c)
			}
			for i, t := range lost.Tasks {
				w := candidates[i%len(candidates)]
				w.tasks = append(w.tasks, t)
			}
		} else {
			a.log.Info("delayed rebalance expired; reassigning lost work", "lost", lost)
			addInto(toReassign, lost)
		}
		a.resetDelay()
		a.revokedInPrevious = false
		return
	}
	for _, w := range complete {
		if w.empty() && !slices.Contains(a.candidateWorkers, w.worker) {
			a.candidateWorkers = append(a.candidateWorkers, w.worker)
		}
	}
	if now < a.scheduledRebalance {
		a.delay = int32(min(a.scheduledRebalance-now, a.maxDelay))
	} else {
		a.delay = int32(a.maxDelay)
	}
	a.log.Info("workers departed; holding back their work", "delay_ms", a.delay, "lost", lost)
	a.scheduledRebalance = now + int64(a.delay)
}

func (a *Assignor) resetDelay() {
	a.candidateWorkers = nil
	a.scheduledRebalance = 0
	a.delay = 0
}

// backoff is Kafka's ExponentialBackoff(initial 1 ms (0 when delays are
// off), multiplier 40, max maxDelay, no jitter).
func (a *Assignor) backoff(attempts int) int64 {
	initial := min(a.maxDelay, 1)
	if a.maxDelay == 0 {
		initial = 0
	}
	expMax := 0.0
	if a.maxDelay > initial {
		expMax = math.Log(float64(a.maxDelay)/float64(max(initial, 1))) / math.Log(40)
	}
	if expMax == 0 {
		return initial
	}
	exp := math.Min(float64(attempts), expMax)
	return min(int64(float64(initial)*math.Pow(40, exp)), a.maxDelay)
}

// loadBalancingRevocations revokes from each worker what it runs beyond
// a perfectly balanced share (Kafka's performLoadBalancingRevocations).
func (a *Assignor) loadBalancingRevocations(configured ConnectorsAndTasks, workers []*workerLoad) map[string]*ConnectorsAndTasks {
	allEmpty := true
	for _, w := range workers {
		if !w.empty() {
			allEmpty = false
		}
	}
	if allEmpty || configured.empty() || len(workers) == 0 {
		return nil
	}
	out := map[string]*ConnectorsAndTasks{}
	for w, revoked := range balanceRevocations(len(configured.Connectors), workers, func(w *workerLoad) []string { return w.connectors }) {
		out[w] = &ConnectorsAndTasks{Connectors: revoked}
	}
	for w, revoked := range balanceRevocations(len(configured.Tasks), workers, func(w *workerLoad) []TaskID { return w.tasks }) {
		if out[w] == nil {
			out[w] = &ConnectorsAndTasks{}
		}
		out[w].Tasks = revoked
	}
	return out
}

func balanceRevocations[E any](total int, workers []*workerLoad, alloc func(*workerLoad) []E) map[string][]E {
	minPer := total / len(workers)
	extra := total % len(workers)
	atMin, atMinPlusOne := 0, 0
	for _, w := range workers {
		switch len(alloc(w)) {
		case minPer:
			atMin++
		case minPer + 1:
			atMinPlusOne++
		}
	}
	if atMinPlusOne == extra && atMin+atMinPlusOne == len(workers) {
		return nil // balanced once new work is spread
	}
	out := map[string][]E{}
	allocatedExtras := 0
	for _, w := range workers {
		n := len(alloc(w))
		if n <= minPer {
			continue
		}
		limit := minPer
		if allocatedExtras < extra {
			allocatedExtras++
			if n == minPer+1 {
				continue
			}
			limit = minPer + 1
		}
		out[w.worker] = slices.Clone(alloc(w)[:n-limit])
	}
	return out
}

// workerLoad is what one worker runs while a round is computed.
type workerLoad struct {
	worker     string
	connectors []string
	tasks      []TaskID
}

func (w *workerLoad) empty() bool { return len(w.connectors) == 0 && len(w.tasks) == 0 }

func workerLoads(workers []string, m map[string]ConnectorsAndTasks, exclude ConnectorsAndTasks) []*workerLoad {
	out := make([]*workerLoad, 0, len(workers))
	for _, w := range workers {
		out = append(out, &workerLoad{
			worker:     w,
			connectors: minus(m[w].Connectors, exclude.Connectors),
			tasks:      minus(m[w].Tasks, exclude.Tasks),
		})
	}
	return out
}

// assignConnectors spreads connectors over the least loaded workers
// first, filling them level by level (Kafka's assignConnectors).
func assignConnectors(workers []*workerLoad, connectors []string) {
	fillLevels(workers, connectors, func(w *workerLoad) int { return len(w.connectors) },
		func(w *workerLoad, c string) { w.connectors = append(w.connectors, c) })
}

func assignTasks(workers []*workerLoad, tasks []TaskID) {
	fillLevels(workers, tasks, func(w *workerLoad) int { return len(w.tasks) },
		func(w *workerLoad, t TaskID) { w.tasks = append(w.tasks, t) })
}

func fillLevels[E any](workers []*workerLoad, items []E, size func(*workerLoad) int, assign func(*workerLoad, E)) {
	if len(items) == 0 || len(workers) == 0 {
		return
	}
	slices.SortFunc(workers, func(x, y *workerLoad) int {
		if r := cmp.Compare(size(x), size(y)); r != 0 {
			return r
		}
		return strings.Compare(x.worker, y.worker)
	})
	first := workers[0]
	i := 0
	for i < len(items) {
		upTo := len(workers)
		for j, w := range workers {
			if size(w) > size(first) {
				upTo = j
				break
			}
		}
		for _, w := range workers[:upTo] {
			assign(w, items[i])
			i++
			if i == len(items) {
				break
			}
		}
	}
}

func duplicatedAssignments(workers []string, m map[string]ConnectorsAndTasks) ConnectorsAndTasks {
	cc, tc := map[string]int{}, map[TaskID]int{}
	for _, w := range workers {
		for _, c := range m[w].Connectors {
			cc[c]++
		}
		for _, t := range m[w].Tasks {
			tc[t]++
		}
	}
	var d ConnectorsAndTasks
	for c, n := range cc {
		if n > 1 {
			d.Connectors = append(d.Connectors, c)
		}
	}
	for t, n := range tc {
		if n > 1 {
			d.Tasks = append(d.Tasks, t)
		}
	}
	slices.Sort(d.Connectors)
	slices.SortFunc(d.Tasks, compareTasks)
	return d
}

// intersection is, per worker, what it runs that is also in set.
func intersection(set ConnectorsAndTasks, workers []string, m map[string]ConnectorsAndTasks) map[string]*ConnectorsAndTasks {
	out := map[string]*ConnectorsAndTasks{}
	for _, w := range workers {
		out[w] = &ConnectorsAndTasks{Connectors: keep(m[w].Connectors, set.Connectors), Tasks: keep(m[w].Tasks, set.Tasks)}
	}
	return out
}

func addAll(base map[string]*ConnectorsAndTasks, add map[string]*ConnectorsAndTasks) {
	for w, c := range add {
		if base[w] == nil {
			base[w] = &ConnectorsAndTasks{}
		}
		addInto(base[w], *c)
	}
}

func addInto(dst *ConnectorsAndTasks, src ConnectorsAndTasks) {
	dst.Connectors = distinct(append(dst.Connectors, src.Connectors...))
	dst.Tasks = distinctTasks(append(dst.Tasks, src.Tasks...))
}

func removeAll(loads []*workerLoad, remove map[string]*ConnectorsAndTasks) {
	for _, w := range loads {
		if r := remove[w.worker]; r != nil {
			w.connectors = minus(w.connectors, r.Connectors)
			w.tasks = minus(w.tasks, r.Tasks)
		}
	}
}

// diff is base minus the others, sorted (Kafka builds these in TreeSets).
func diff(base ConnectorsAndTasks, sub ...ConnectorsAndTasks) ConnectorsAndTasks {
	out := ConnectorsAndTasks{Connectors: distinct(base.Connectors), Tasks: distinctTasks(base.Tasks)}
	for _, s := range sub {
		out.Connectors = minus(out.Connectors, s.Connectors)
		out.Tasks = minus(out.Tasks, s.Tasks)
	}
	slices.Sort(out.Connectors)
	slices.SortFunc(out.Tasks, compareTasks)
	return out
}

func compareTasks(x, y TaskID) int {
	if r := strings.Compare(x.Connector, y.Connector); r != 0 {
		return r
	}
	return cmp.Compare(x.Task, y.Task)
}

// minus returns the items of a not in b, in a's order (a fresh slice).
func minus[E comparable](a, b []E) []E {
	drop := make(map[E]bool, len(b))
	for _, x := range b {
		drop[x] = true
	}
	out := make([]E, 0, len(a))
	for _, x := range a {
		if !drop[x] {
			out = append(out, x)
		}
	}
	return out
}

// keep returns the items of a also in b, in a's order.
func keep[E comparable](a, b []E) []E {
	in := make(map[E]bool, len(b))
	for _, x := range b {
		in[x] = true
	}
	var out []E
	for _, x := range a {
		if in[x] {
			out = append(out, x)
		}
	}
	return out
}

func anyIn[E comparable](a, b []E) bool { return len(keep(a, b)) > 0 }

func distinctTasks(ts []TaskID) []TaskID {
	seen := make(map[TaskID]bool, len(ts))
	out := make([]TaskID, 0, len(ts))
	for _, t := range ts {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}
