package group

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"testing"
	"time"
)

// The scenarios below are Kafka's IncrementalCooperativeAssignorTest,
// step for step: the same workers joining and leaving, the same clock
// moves, and the same expected allocations (counts per worker, sorted),
// delays, revocations and balance.

const defaultMaxDelay = 300000 // scheduled.rebalance.max.delay.ms default

type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time         { return c.now }
func (c *fakeClock) sleep(ms int32)         { c.now = c.now.Add(time.Duration(ms) * time.Millisecond) }
func (c *fakeClock) sleepD(d time.Duration) { c.now = c.now.Add(d) }
func newFakeClock() *fakeClock              { return &fakeClock{now: time.UnixMilli(1_700_000_000_000)} }
func (h *harness) delayMs() int32           { return h.a.delay }
func (h *harness) sleep(ms int32)           { h.clock.sleep(ms) }
func (h *harness) maxDelayMs() int32        { return int32(h.maxDelay) }
func (h *harness) addEmptyWorkers(w ...string) {
	for _, x := range w {
		h.addWorker(x, nil, nil)
	}
}

type harness struct {
	t          *testing.T
	clock      *fakeClock
	maxDelay   int64
	connectors map[string]int
	members    map[string]*ConnectorsAndTasks
	generation int32
	a          *Assignor
	returned   ClusterAssignment
}

func newHarness(t *testing.T, maxDelay int64) *harness {
	h := &harness{
		t: t, clock: newFakeClock(), maxDelay: maxDelay, generation: 1000,
		connectors: map[string]int{"connector1": 4, "connector2": 4},
		members:    map[string]*ConnectorsAndTasks{},
	}
	h.addEmptyWorkers("worker1")
	h.initAssignor()
	return h
}

// initAssignor starts a fresh assignor, as a new leader would.
func (h *harness) initAssignor() {
	h.a = NewAssignor(time.Duration(h.maxDelay)*time.Millisecond, h.clock.Now, quiet())
	h.a.previousGenerationID = h.generation
}

func (h *harness) addWorker(w string, connectors []string, tasks []TaskID) {
	h.t.Helper()
	if _, ok := h.members[w]; ok {
		h.t.Fatalf("worker %s already exists", w)
	}
	h.members[w] = &ConnectorsAndTasks{Connectors: connectors, Tasks: tasks}
}

func (h *harness) removeWorkers(ws ...string) {
	h.t.Helper()
	for _, w := range ws {
		if _, ok := h.members[w]; !ok {
			h.t.Fatalf("worker %s does not exist", w)
		}
		delete(h.members, w)
	}
}

func (h *harness) standard()      { h.t.Helper(); h.rebalance(false, false) }
func (h *harness) failed()        { h.t.Helper(); h.rebalance(true, false) }
func (h *harness) mismatchedGen() { h.t.Helper(); h.rebalance(false, true) }
func (h *harness) snapshot() Snapshot {
	return Snapshot{Offset: 618, TaskCounts: maps.Clone(h.connectors)}
}

func (h *harness) rebalance(assignmentFailure, generationMismatch bool) {
	h.t.Helper()
	h.generation++
	last := h.generation - 1
	if generationMismatch {
		last = h.generation - 2
	}
	cp := map[string]ConnectorsAndTasks{}
	for w, c := range h.members {
		cp[w] = ConnectorsAndTasks{Connectors: slices.Clone(c.Connectors), Tasks: slices.Clone(c.Tasks)}
	}
	h.returned = h.a.PerformTaskAssignment(h.snapshot(), last, h.generation, cp)
	h.assertNoRedundantAssignments()
	if !assignmentFailure {
		h.apply()
	}
}

// apply delivers the round to the workers, checking that what each is
// told to start and stop leads to what the leader thinks it runs.
func (h *harness) apply() {
	h.t.Helper()
	for _, w := range h.returned.Workers() {
		m := h.members[w]
		if m == nil {
			m = &ConnectorsAndTasks{}
			h.members[w] = m
		}
		m.Connectors = append(minus(m.Connectors, h.returned.NewlyRevokedConnectors[w]), h.returned.NewlyAssignedConnectors[w]...)
		m.Tasks = append(minus(m.Tasks, h.returned.NewlyRevokedTasks[w]), h.returned.NewlyAssignedTasks[w]...)
		if !sameSet(m.Connectors, h.returned.AllAssignedConnectors[w]) {
			h.t.Fatalf("worker %s runs connectors %v, the leader thinks %v", w, m.Connectors, h.returned.AllAssignedConnectors[w])
		}
		if !sameSet(m.Tasks, h.returned.AllAssignedTasks[w]) {
			h.t.Fatalf("worker %s runs tasks %v, the leader thinks %v", w, m.Tasks, h.returned.AllAssignedTasks[w])
		}
	}
}

func sameSet[E comparable](a, b []E) bool {
	return len(distinctAny(a)) == len(distinctAny(b)) && len(minus(a, b)) == 0 && len(minus(b, a)) == 0
}

func distinctAny[E comparable](a []E) map[E]bool {
	m := map[E]bool{}
	for _, x := range a {
		m[x] = true
	}
	return m
}

func (h *harness) assertNoRedundantAssignments() {
	h.t.Helper()
	var existingC, newC []string
	var existingT, newT []TaskID
	for _, m := range h.members {
		existingC = append(existingC, m.Connectors...)
		existingT = append(existingT, m.Tasks...)
	}
	for _, w := range h.returned.Workers() {
		newC = append(newC, h.returned.NewlyAssignedConnectors[w]...)
		newT = append(newT, h.returned.NewlyAssignedTasks[w]...)
	}
	if len(distinctAny(newC)) != len(newC) || len(distinctAny(newT)) != len(newT) {
		h.t.Fatalf("duplicates among newly assigned: %v %v", newC, newT)
	}
	if k := keep(existingC, newC); len(k) > 0 {
		h.t.Fatalf("connectors %v newly assigned but already running", k)
	}
	if k := keep(existingT, newT); len(k) > 0 {
		h.t.Fatalf("tasks %v newly assigned but already running", k)
	}
}

func (h *harness) assertDelay(want int32) {
	h.t.Helper()
	if h.a.delay != want {
		h.t.Fatalf("delay %d, want %d", h.a.delay, want)
	}
}

func (h *harness) assertDelayPositive(over int32) {
	h.t.Helper()
	if h.a.delay <= over {
		h.t.Fatalf("delay %d, want > %d", h.a.delay, over)
	}
}

func (h *harness) assertWorkers(ws ...string) {
	h.t.Helper()
	slices.Sort(ws)
	if got := h.returned.Workers(); !slices.Equal(got, ws) {
		h.t.Fatalf("workers %v, want %v", got, ws)
	}
}

func (h *harness) allocations(f func(*ConnectorsAndTasks) int) []int {
	var out []int
	for _, m := range h.members {
		out = append(out, f(m))
	}
	sort.Ints(out)
	return out
}

func (h *harness) assertConnectorAllocations(want ...int) {
	h.t.Helper()
	sort.Ints(want)
	if got := h.allocations(func(c *ConnectorsAndTasks) int { return len(c.Connectors) }); !slices.Equal(got, want) {
		h.t.Fatalf("connector allocations %v, want %v", got, want)
	}
}

func (h *harness) assertTaskAllocations(want ...int) {
	h.t.Helper()
	sort.Ints(want)
	if got := h.allocations(func(c *ConnectorsAndTasks) int { return len(c.Tasks) }); !slices.Equal(got, want) {
		h.t.Fatalf("task allocations %v, want %v", got, want)
	}
}

func (h *harness) assertNoRevocations() {
	h.t.Helper()
	for w, r := range h.returned.NewlyRevokedConnectors {
		if len(r) > 0 {
			h.t.Fatalf("connectors %v revoked from %s; want no revocations", r, w)
		}
	}
	for w, r := range h.returned.NewlyRevokedTasks {
		if len(r) > 0 {
			h.t.Fatalf("tasks %v revoked from %s; want no revocations", r, w)
		}
	}
}

func (h *harness) assertEmptyAssignment() {
	h.t.Helper()
	h.assertNoRevocations()
	for w := range h.returned.NewlyAssignedConnectors {
		if len(h.returned.NewlyAssignedConnectors[w])+len(h.returned.NewlyAssignedTasks[w]) > 0 {
			h.t.Fatalf("%s newly assigned %v %v; want nothing new", w, h.returned.NewlyAssignedConnectors[w], h.returned.NewlyAssignedTasks[w])
		}
	}
}

func (h *harness) assertBalancedAndComplete() {
	h.t.Helper()
	c := h.allocations(func(c *ConnectorsAndTasks) int { return len(c.Connectors) })
	tk := h.allocations(func(c *ConnectorsAndTasks) int { return len(c.Tasks) })
	if c[len(c)-1]-c[0] > 1 || tk[len(tk)-1]-tk[0] > 1 {
		h.t.Fatalf("imbalanced: connectors %v tasks %v", c, tk)
	}
	var allC []string
	var allT []TaskID
	for _, m := range h.members {
		allC = append(allC, m.Connectors...)
		allT = append(allT, m.Tasks...)
	}
	if !sameSet(allC, slices.Collect(maps.Keys(h.connectors))) {
		h.t.Fatalf("assigned connectors %v, configured %v", allC, h.connectors)
	}
	var want []TaskID
	for c, n := range h.connectors {
		for i := range n {
			want = append(want, TaskID{c, int32(i)})
		}
	}
	if !sameSet(allT, want) || len(allT) != len(want) {
		h.t.Fatalf("assigned tasks %v, configured %v", allT, want)
	}
}

func TestAssignorTaskAssignmentWhenWorkerJoins(t *testing.T) {
	h := newHarness(t, defaultMaxDelay)
	h.standard()
	h.assertDelay(0)
	h.assertWorkers("worker1")
	h.assertConnectorAllocations(2)
	h.assertTaskAllocations(8)
	h.assertBalancedAndComplete()

	h.addEmptyWorkers("worker2")
	h.standard()
	h.assertDelay(0)
	h.assertWorkers("worker1", "worker2")
	h.assertConnectorAllocations(0, 1)
	h.assertTaskAllocations(0, 4)

	h.standard()
	h.assertNoRevocations()
	h.assertDelay(0)
	h.assertConnectorAllocations(1, 1)
	h.assertTaskAllocations(4, 4)
	h.assertBalancedAndComplete()

	h.sleep(h.delayMs())
	h.standard()
	h.assertDelay(0)
	h.assertEmptyAssignment()
}

func TestAssignorWorkersJoinAfterRevocations(t *testing.T) {
	h := newHarness(t, defaultMaxDelay)
	h.connectors["connector3"] = 4
	h.standard()
	h.assertDelay(0)
	h.assertWorkers("worker1")
	h.assertConnectorAllocations(3)
	h.assertTaskAllocations(12)
	h.assertBalancedAndComplete()

	h.addEmptyWorkers("worker2")
	h.standard()
	h.assertWorkers("worker1", "worker2")
	h.assertConnectorAllocations(0, 2)
	h.assertTaskAllocations(0, 6)

	// A successive revoking rebalance: no revocations, a delay instead.
	h.addEmptyWorkers("worker3")
	h.standard()
	h.assertDelayPositive(0)
	h.assertWorkers("worker1", "worker2", "worker3")
	h.assertConnectorAllocations(0, 1, 2)
	h.assertTaskAllocations(3, 3, 6)

	h.sleep(h.delayMs())
	h.addEmptyWorkers("worker4")
	h.standard()
	h.assertWorkers("worker1", "worker2", "worker3", "worker4")
	h.assertConnectorAllocations(0, 0, 1, 1)
	h.assertTaskAllocations(0, 3, 3, 3)

	h.addEmptyWorkers("worker5")
	h.standard()
	h.assertDelayPositive(40)
	h.assertWorkers("worker1", "worker2", "worker3", "worker4", "worker5")
	h.assertConnectorAllocations(0, 0, 1, 1, 1)
	h.assertTaskAllocations(1, 2, 3, 3, 3)

	h.sleep(h.delayMs())
	h.addEmptyWorkers("worker6")
	h.standard()
	h.assertDelay(0)
	h.assertWorkers("worker1", "worker2", "worker3", "worker4", "worker5", "worker6")
	h.assertConnectorAllocations(0, 0, 0, 1, 1, 1)
	h.assertTaskAllocations(0, 1, 2, 2, 2, 2)

	h.standard()
	h.assertConnectorAllocations(0, 0, 0, 1, 1, 1)
	h.assertTaskAllocations(2, 2, 2, 2, 2, 2)
	h.assertBalancedAndComplete()
}

func TestAssignorImmediateRevocationsWhenMaxDelayIs0(t *testing.T) {
	h := newHarness(t, 0)
	h.connectors["connector3"] = 4
	h.standard()
	h.assertDelay(0)
	h.assertConnectorAllocations(3)
	h.assertTaskAllocations(12)
	h.assertBalancedAndComplete()

	h.addEmptyWorkers("worker2")
	h.standard()
	h.assertConnectorAllocations(0, 2)
	h.assertTaskAllocations(0, 6)

	h.addEmptyWorkers("worker3")
	h.standard()
	h.assertDelay(0)
	h.assertWorkers("worker1", "worker2", "worker3")
	h.assertConnectorAllocations(0, 1, 1)
	h.assertTaskAllocations(3, 3, 4)

	h.standard()
	h.assertNoRevocations()
	h.assertConnectorAllocations(1, 1, 1)
	h.assertTaskAllocations(4, 4, 4)
	h.assertBalancedAndComplete()
}

func TestAssignorSuccessiveRevocationsWhenMaxDelayIsTheInitialBackoff(t *testing.T) {
	h := newHarness(t, 1)
	h.connectors["connector3"] = 4
	h.standard()
	h.assertDelay(0)
	h.assertTaskAllocations(12)

	h.addEmptyWorkers("worker2")
	h.standard()
	h.assertConnectorAllocations(0, 2)
	h.assertTaskAllocations(0, 6)

	h.addEmptyWorkers("worker3")
	h.standard()
	h.assertDelay(1)
	h.assertConnectorAllocations(0, 1, 2)
	h.assertTaskAllocations(3, 3, 6)
}

func TestAssignorWorkerJoiningDuringDelayedRebalance(t *testing.T) {
	h := newHarness(t, defaultMaxDelay)
	h.connectors["connector3"] = 4
	h.standard()
	h.assertTaskAllocations(12)

	h.addEmptyWorkers("worker2")
	h.standard()
	h.assertConnectorAllocations(0, 2)
	h.assertTaskAllocations(0, 6)

	h.addEmptyWorkers("worker3")
	h.standard()
	h.assertDelayPositive(0)
	h.assertNoRevocations()
	h.assertConnectorAllocations(0, 1, 2)
	h.assertTaskAllocations(3, 3, 6)

	h.sleep(h.delayMs() / 2)
	h.addEmptyWorkers("worker4")
	h.standard()
	h.assertDelayPositive(0)
	h.assertNoRevocations()
	h.assertConnectorAllocations(0, 0, 1, 2)
	h.assertTaskAllocations(0, 3, 3, 6)

	h.sleep(h.delayMs())
	h.addEmptyWorkers("worker5")
	h.standard()
	h.assertDelay(0)
	h.assertConnectorAllocations(0, 0, 0, 1, 1)
	h.assertTaskAllocations(0, 0, 2, 3, 3)

	h.standard()
	h.assertDelay(0)
	h.assertNoRevocations()
	h.assertConnectorAllocations(0, 0, 1, 1, 1)
	h.assertTaskAllocations(2, 2, 2, 3, 3)
	h.assertBalancedAndComplete()
}

func TestAssignorWorkerLeavesPermanently(t *testing.T) {
	h := newHarness(t, defaultMaxDelay)
	h.addEmptyWorkers("worker2")
	h.standard()
	h.assertConnectorAllocations(1, 1)
	h.assertTaskAllocations(4, 4)
	h.assertBalancedAndComplete()

	// A follower leaves: nothing moves yet, the countdown starts.
	h.removeWorkers("worker2")
	h.standard()
	h.assertDelay(h.maxDelayMs())
	h.assertWorkers("worker1")
	h.assertEmptyAssignment()

	h.sleep(h.maxDelayMs() / 2)
	h.standard()
	h.assertDelay(h.maxDelayMs() / 2)
	h.assertEmptyAssignment()

	h.sleep(h.maxDelayMs()/2 + 1)
	h.standard()
	h.assertDelay(0)
	h.assertConnectorAllocations(2)
	h.assertTaskAllocations(8)
	h.assertBalancedAndComplete()
}

func TestAssignorWorkerBounces(t *testing.T) {
	h := newHarness(t, defaultMaxDelay)
	h.addEmptyWorkers("worker2")
	h.standard()
	h.assertBalancedAndComplete()

	h.removeWorkers("worker2")
	h.standard()
	h.assertDelay(h.maxDelayMs())
	h.assertEmptyAssignment()

	h.sleep(h.maxDelayMs() / 2)
	h.standard()
	h.assertDelay(h.maxDelayMs() / 2)
	h.assertEmptyAssignment()

	h.sleep(h.maxDelayMs() / 4)
	h.addEmptyWorkers("worker2")
	h.standard()
	h.assertDelay(h.maxDelayMs() / 4)
	h.assertWorkers("worker1", "worker2")
	h.assertEmptyAssignment()

	// The delay expires: the returning worker gets its work back.
	h.sleep(h.maxDelayMs() / 4)
	h.standard()
	h.assertDelay(0)
	h.assertNoRevocations()
	h.assertConnectorAllocations(1, 1)
	h.assertTaskAllocations(4, 4)
	h.assertBalancedAndComplete()
}

func TestAssignorLeaderLeavesPermanently(t *testing.T) {
	h := newHarness(t, defaultMaxDelay)
	h.addEmptyWorkers("worker2", "worker3")
	h.standard()
	h.assertConnectorAllocations(0, 1, 1)
	h.assertTaskAllocations(2, 3, 3)
	h.assertBalancedAndComplete()

	// The new leader starts from a clean slate: it does not know the
	// leader's work was lost, so it treats it as new.
	h.removeWorkers("worker1")
	h.initAssignor()
	h.standard()
	h.assertDelay(0)
	h.assertWorkers("worker2", "worker3")
	h.assertConnectorAllocations(1, 1)
	h.assertTaskAllocations(4, 4)
	h.assertBalancedAndComplete()

	h.standard()
	h.assertDelay(0)
	h.assertEmptyAssignment()
}

func TestAssignorLeaderBounces(t *testing.T) {
	h := newHarness(t, defaultMaxDelay)
	h.addEmptyWorkers("worker2", "worker3")
	h.standard()
	h.assertBalancedAndComplete()

	h.removeWorkers("worker1")
	h.initAssignor()
	h.standard()
	h.assertConnectorAllocations(1, 1)
	h.assertTaskAllocations(4, 4)
	h.assertBalancedAndComplete()

	// The old leader returns as a new worker: revoke first...
	h.addEmptyWorkers("worker1")
	h.standard()
	h.assertDelay(0)
	h.assertWorkers("worker1", "worker2", "worker3")
	h.assertConnectorAllocations(0, 1, 1)
	h.assertTaskAllocations(0, 3, 3)

	// ...then assign in the follow-up round.
	h.standard()
	h.assertDelay(0)
	h.assertNoRevocations()
	h.assertConnectorAllocations(0, 1, 1)
	h.assertTaskAllocations(2, 3, 3)
	h.assertBalancedAndComplete()
}

func TestAssignorFirstAssignmentAttemptFails(t *testing.T) {
	h := newHarness(t, defaultMaxDelay)
	h.addEmptyWorkers("worker2")
	h.failed()
	h.assertDelay(0)
	h.assertWorkers("worker1", "worker2")
	h.assertConnectorAllocations(0, 0)
	h.assertTaskAllocations(0, 0)

	// Same members, same (empty) assignments: the lost work is treated as
	// new, no delay.
	h.standard()
	h.assertDelay(0)
	h.assertConnectorAllocations(1, 1)
	h.assertTaskAllocations(4, 4)
	h.assertBalancedAndComplete()
}

func TestAssignorSubsequentAssignmentAttemptFails(t *testing.T) {
	h := newHarness(t, defaultMaxDelay)
	h.addEmptyWorkers("worker2")
	h.standard()
	h.assertBalancedAndComplete()

	h.addEmptyWorkers("worker3")
	h.failed()
	h.assertDelay(0)
	h.assertConnectorAllocations(0, 1, 1)
	h.assertTaskAllocations(0, 4, 4)

	h.standard()
	h.assertDelayPositive(0)
	h.assertConnectorAllocations(0, 1, 1)
	h.assertTaskAllocations(0, 4, 4)

	h.sleep(h.delayMs())
	h.standard()
	h.assertDelay(0)
	h.assertConnectorAllocations(0, 1, 1)
	h.assertTaskAllocations(0, 3, 3)

	h.standard()
	h.assertConnectorAllocations(0, 1, 1)
	h.assertTaskAllocations(2, 3, 3)
	h.assertBalancedAndComplete()
}

func TestAssignorSubsequentAssignmentAttemptFailsOutsideTheAssignor(t *testing.T) {
	h := newHarness(t, defaultMaxDelay)
	h.addEmptyWorkers("worker2")
	h.standard()
	h.assertBalancedAndComplete()

	h.addEmptyWorkers("worker3")
	h.failed()
	h.assertConnectorAllocations(0, 1, 1)
	h.assertTaskAllocations(0, 4, 4)

	h.mismatchedGen()
	h.assertDelayPositive(0)
	h.assertConnectorAllocations(0, 1, 1)
	h.assertTaskAllocations(0, 4, 4)

	h.sleep(h.delayMs())
	h.standard()
	h.assertConnectorAllocations(0, 1, 1)
	h.assertTaskAllocations(0, 3, 3)

	h.standard()
	h.assertConnectorAllocations(0, 1, 1)
	h.assertTaskAllocations(2, 3, 3)
	h.assertBalancedAndComplete()
}

func TestAssignorConnectorsDeleted(t *testing.T) {
	h := newHarness(t, defaultMaxDelay)
	h.connectors["connector3"] = 4
	h.addEmptyWorkers("worker2")
	h.standard()
	h.assertConnectorAllocations(1, 2)
	h.assertTaskAllocations(6, 6)
	h.assertBalancedAndComplete()

	delete(h.connectors, "connector3")
	h.standard()
	h.assertDelay(0)
	h.assertConnectorAllocations(1, 1)
	h.assertTaskAllocations(4, 4)
	h.assertBalancedAndComplete()
}

func TestAssignorScheduledDelayIsDisabled(t *testing.T) {
	h := newHarness(t, 0)
	h.addEmptyWorkers("worker2")
	h.standard()
	h.assertBalancedAndComplete()

	h.removeWorkers("worker2")
	h.standard()
	h.assertDelay(0)
	h.assertWorkers("worker1")
	h.assertConnectorAllocations(2)
	h.assertTaskAllocations(8)
	h.assertBalancedAndComplete()
}

func TestAssignorTasksDuplicatedInWorkerAssignment(t *testing.T) {
	h := newHarness(t, defaultMaxDelay)
	h.standard()
	h.assertTaskAllocations(8)

	// worker2 joins claiming connector1 and its tasks, which worker1 runs.
	h.addWorker("worker2", newConnectors(1, 2), newTasks("connector1", 0, 4))
	h.standard()
	h.assertDelay(0)
	h.assertConnectorAllocations(0, 1)
	h.assertTaskAllocations(0, 4)

	h.standard()
	h.assertDelay(0)
	h.assertNoRevocations()
	h.assertConnectorAllocations(1, 1)
	h.assertTaskAllocations(4, 4)
	h.assertBalancedAndComplete()

	h.standard()
	h.assertDelay(0)
	h.assertEmptyAssignment()
}

func TestAssignorDuplicatedAssignmentDeleted(t *testing.T) {
	h := newHarness(t, defaultMaxDelay)
	h.standard()
	h.assertTaskAllocations(8)

	delete(h.connectors, "connector1")
	h.addWorker("worker2", newConnectors(1, 2), newTasks("connector1", 0, 4))
	h.standard()
	h.assertDelay(0)
	h.assertConnectorAllocations(0, 1)
	h.assertTaskAllocations(0, 2)

	h.standard()
	h.assertDelay(0)
	h.assertNoRevocations()
	h.assertConnectorAllocations(0, 1)
	h.assertTaskAllocations(2, 2)
	h.assertBalancedAndComplete()

	h.sleep(h.delayMs())
	h.standard()
	h.assertDelay(0)
	h.assertEmptyAssignment()
}

func newConnectors(start, end int) []string {
	var out []string
	for i := start; i < end; i++ {
		out = append(out, fmt.Sprintf("connector%d", i))
	}
	return out
}

func newTasks(connector string, start, end int) []TaskID {
	var out []TaskID
	for i := start; i < end; i++ {
		out = append(out, TaskID{connector, int32(i)})
	}
	return out
}

func load(worker string, cStart, cNum, tStart, tNum int) *workerLoad {
	return &workerLoad{worker: worker, connectors: newConnectors(cStart, cStart+cNum), tasks: newTasks("task", tStart, tStart+tNum)}
}

func TestAssignConnectorsAndTasksWhenBalanced(t *testing.T) {
	var loads []*workerLoad
	for i := range 3 {
		loads = append(loads, load(fmt.Sprintf("worker%d", i), i*2, 2, i*2, 2))
	}
	assignConnectors(loads, newConnectors(6, 11))
	assignTasks(loads, newTasks("task", 6, 11))
	want := map[string][2][]int{
		"worker0": {{0, 1, 6, 9}, {0, 1, 6, 9}},
		"worker1": {{2, 3, 7, 10}, {2, 3, 7, 10}},
		"worker2": {{4, 5, 8}, {4, 5, 8}},
	}
	for _, l := range loads {
		w := want[l.worker]
		var wc []string
		var wt []TaskID
		for _, i := range w[0] {
			wc = append(wc, fmt.Sprintf("connector%d", i))
		}
		for _, i := range w[1] {
			wt = append(wt, TaskID{"task", int32(i)})
		}
		if !slices.Equal(l.connectors, wc) || !slices.Equal(l.tasks, wt) {
			t.Errorf("%s: connectors %v tasks %v, want %v %v", l.worker, l.connectors, l.tasks, wc, wt)
		}
	}
}

func TestAssignConnectorsWhenImbalanced(t *testing.T) {
	loads := []*workerLoad{load("worker0", 0, 2, 0, 2), load("worker1", 2, 3, 2, 3), load("worker2", 5, 4, 5, 4), {worker: "worker3"}}
	assignConnectors(loads, newConnectors(9, 24))
	assignTasks(loads, newTasks("task", 9, 24))
	for _, l := range loads {
		if len(l.connectors) != 6 || len(l.tasks) != 6 {
			t.Errorf("%s: %d connectors, %d tasks; want 6 and 6", l.worker, len(l.connectors), len(l.tasks))
		}
	}
}

// lostHarness drives handleLostAssignments directly, as Kafka's
// testLostAssignmentHandling* tests do.
type lostHarness struct {
	t     *testing.T
	clock *fakeClock
	a     *Assignor
	loads map[string]*workerLoad
}

func newLostHarness(t *testing.T, maxDelay int64) *lostHarness {
	clock := newFakeClock()
	return &lostHarness{t: t, clock: clock, a: NewAssignor(time.Duration(maxDelay)*time.Millisecond, clock.Now, quiet()),
		loads: map[string]*workerLoad{
			"worker0": load("worker0", 0, 2, 0, 4),
			"worker1": load("worker1", 2, 2, 4, 4),
			"worker2": load("worker2", 4, 2, 8, 4),
		}}
}

func (l *lostHarness) handle(lost ConnectorsAndTasks) ConnectorsAndTasks {
	var toReassign ConnectorsAndTasks
	var complete []*workerLoad
	for _, k := range slices.Sorted(maps.Keys(l.loads)) {
		complete = append(complete, l.loads[k])
	}
	l.a.handleLostAssignments(lost, &toReassign, complete)
	return toReassign
}

func (l *lostHarness) rememberMembers() {
	l.a.previousMembers = map[string]bool{}
	for w := range l.loads {
		l.a.previousMembers[w] = true
	}
}

func (l *lostHarness) check(candidates []string, scheduledIn int64, delay int32) {
	l.t.Helper()
	got := slices.Clone(l.a.candidateWorkers)
	slices.Sort(got)
	slices.Sort(candidates)
	if !slices.Equal(got, candidates) {
		l.t.Fatalf("candidates %v, want %v", got, candidates)
	}
	want := int64(0)
	if scheduledIn >= 0 {
		want = l.clock.now.UnixMilli() + scheduledIn
	}
	if l.a.scheduledRebalance != want || l.a.delay != delay {
		l.t.Fatalf("scheduled %d delay %d, want %d and %d", l.a.scheduledRebalance, l.a.delay, want, delay)
	}
}

func (l *lostHarness) remove(w string) ConnectorsAndTasks {
	ld := l.loads[w]
	delete(l.loads, w)
	return ConnectorsAndTasks{Connectors: ld.connectors, Tasks: ld.tasks}
}

func TestLostAssignmentWorkerBounces(t *testing.T) {
	const maxDelay = defaultMaxDelay
	l := newLostHarness(t, maxDelay)
	l.handle(ConnectorsAndTasks{})
	l.check(nil, -1, 0)
	l.rememberMembers()

	lost := l.remove("worker1")
	l.handle(lost)
	l.check(nil, maxDelay, maxDelay)

	l.rememberMembers()
	l.clock.sleep(maxDelay / 2)
	l.loads["worker1"] = &workerLoad{worker: "worker1"} // the worker is back, empty
	l.handle(lost)
	l.check([]string{"worker1"}, maxDelay/2, maxDelay/2)

	l.rememberMembers()
	l.clock.sleep(maxDelay / 2)
	l.handle(lost)
	if !sameSet(l.loads["worker1"].connectors, lost.Connectors) || !sameSet(l.loads["worker1"].tasks, lost.Tasks) {
		t.Fatalf("the returning worker got %v %v, want its old work %v", l.loads["worker1"].connectors, l.loads["worker1"].tasks, lost)
	}
	l.check(nil, -1, 0)
}

func TestLostAssignmentWorkerLeavesPermanently(t *testing.T) {
	const maxDelay = defaultMaxDelay
	l := newLostHarness(t, maxDelay)
	l.handle(ConnectorsAndTasks{})
	l.rememberMembers()
	lost := l.remove("worker1")
	l.handle(lost)
	l.check(nil, maxDelay, maxDelay)

	l.clock.sleep(maxDelay / 2)
	l.handle(lost)
	l.check(nil, maxDelay/2, maxDelay/2)

	l.clock.sleep(maxDelay / 2)
	re := l.handle(lost)
	if !sameSet(re.Connectors, lost.Connectors) || !sameSet(re.Tasks, lost.Tasks) {
		t.Fatalf("reassigned %v, want all lost work %v", re, lost)
	}
	l.check(nil, -1, 0)
}

func TestLostAssignmentMoreThanOneCandidate(t *testing.T) {
	const maxDelay = defaultMaxDelay
	l := newLostHarness(t, maxDelay)
	l.handle(ConnectorsAndTasks{})
	l.rememberMembers()
	lost := l.remove("worker1")
	l.loads["worker3"] = &workerLoad{worker: "worker3"}
	l.handle(lost)
	l.check([]string{"worker3"}, maxDelay, maxDelay)

	l.rememberMembers()
	l.clock.sleep(maxDelay / 2)
	l.loads["worker1"] = &workerLoad{worker: "worker1"}
	l.handle(lost)
	l.check([]string{"worker1", "worker3"}, maxDelay/2, maxDelay/2)

	l.rememberMembers()
	l.clock.sleep(maxDelay / 2)
	l.loads["worker1"] = load("worker1", 6, 2, 8, 4)
	l.loads["worker3"] = load("worker3", 8, 2, 12, 4)
	l.handle(lost)
	both := append(slices.Clone(l.loads["worker1"].connectors), l.loads["worker3"].connectors...)
	bothT := append(slices.Clone(l.loads["worker1"].tasks), l.loads["worker3"].tasks...)
	if len(keep(lost.Connectors, both)) != len(lost.Connectors) || len(keep(lost.Tasks, bothT)) != len(lost.Tasks) {
		t.Fatalf("lost work %v not spread over the two candidates: %v %v", lost, both, bothT)
	}
	l.check(nil, -1, 0)
}

func TestLostAssignmentWorkerBouncesBackButFinallyLeaves(t *testing.T) {
	const maxDelay = defaultMaxDelay
	l := newLostHarness(t, maxDelay)
	l.handle(ConnectorsAndTasks{})
	l.rememberMembers()
	lost := l.remove("worker1")
	l.handle(lost)
	l.check(nil, maxDelay, maxDelay)

	l.rememberMembers()
	l.clock.sleep(maxDelay / 2)
	l.loads["worker1"] = &workerLoad{worker: "worker1"}
	l.handle(lost)
	l.check([]string{"worker1"}, maxDelay/2, maxDelay/2)

	l.rememberMembers()
	l.clock.sleep(maxDelay / 2)
	delete(l.loads, "worker1")
	re := l.handle(lost)
	if !sameSet(re.Connectors, lost.Connectors) || !sameSet(re.Tasks, lost.Tasks) {
		t.Fatalf("reassigned %v, want all lost work %v", re, lost)
	}
	l.check(nil, -1, 0)
}

func TestLostAssignmentScheduledDelayDisabled(t *testing.T) {
	l := newLostHarness(t, 0)
	l.handle(ConnectorsAndTasks{})
	l.rememberMembers()
	lost := l.remove("worker1")
	re := l.handle(lost)
	l.check(nil, -1, 0)
	if !slices.Equal(re.Connectors, lost.Connectors) || !slices.Equal(re.Tasks, lost.Tasks) {
		t.Fatalf("reassigned %v, want %v at once", re, lost)
	}
}

// TestAssignorProtocols: the leader's full round (metadata in, encoded
// assignments out) in every protocol, and CONFIG_MISMATCH when the
// leader is behind a member.
func TestAssignorProtocols(t *testing.T) {
	snap := Snapshot{Offset: 618, TaskCounts: map[string]int{"c1": 2, "c2": 1}}
	for _, p := range []string{ProtocolDefault, ProtocolCompatible, ProtocolSessioned} {
		t.Run(p, func(t *testing.T) {
			a := NewAssignor(time.Minute, nil, quiet())
			var members []MemberMetadata
			for _, id := range []string{"m1", "m2"} {
				md, err := EncodeMetadata(p, WorkerState{URL: "http://" + id + "/", ConfigOffset: 618})
				if err != nil {
					t.Fatal(err)
				}
				members = append(members, MemberMetadata{MemberID: id, Metadata: md})
			}
			res, err := a.Assign(AssignRequest{LeaderID: "m1", Protocol: p, Generation: 1, LastCompleted: -1, Members: members, Snapshot: snap})
			if err != nil {
				t.Fatal(err)
			}
			var conns []string
			var tasks []TaskID
			for _, id := range []string{"m1", "m2"} {
				got, err := DecodeAssignment(res.Assignments[id])
				if err != nil {
					t.Fatal(err)
				}
				if got.Version != ProtocolVersion(p) || got.Leader != "m1" || got.LeaderURL != "http://m1/" || got.ConfigOffset != 618 || got.Failed() {
					t.Fatalf("%s's assignment %+v", id, got)
				}
				conns = append(conns, got.Connectors...)
				tasks = append(tasks, got.Tasks...)
			}
			if !sameSet(conns, []string{"c1", "c2"}) || !sameSet(tasks, []TaskID{{"c1", 0}, {"c1", 1}, {"c2", 0}}) {
				t.Fatalf("assigned %v %v", conns, tasks)
			}

			// A member has seen offset 700, the leader only 618.
			md, _ := EncodeMetadata(p, WorkerState{URL: "http://m2/", ConfigOffset: 700})
			members[1].Metadata = md
			res, err = a.Assign(AssignRequest{LeaderID: "m1", Protocol: p, Generation: 2, LastCompleted: 1, Members: members,
				Snapshot: snap, Fresh: func() Snapshot { return snap }})
			if err != nil {
				t.Fatal(err)
			}
			for id, b := range res.Assignments {
				got, _ := DecodeAssignment(b)
				if got.Error != ConfigMismatch || got.ConfigOffset != 700 || len(got.Connectors) > 0 {
					t.Fatalf("%s: %+v, want CONFIG_MISMATCH at 700", id, got)
				}
			}
			// With a fresh snapshot that caught up, the round proceeds.
			fresh := Snapshot{Offset: 700, TaskCounts: snap.TaskCounts}
			res, err = a.Assign(AssignRequest{LeaderID: "m1", Protocol: p, Generation: 3, LastCompleted: 2, Members: members,
				Snapshot: snap, Fresh: func() Snapshot { return fresh }})
			if err != nil || res.Error != NoError || res.ConfigOffset != 700 {
				t.Fatalf("with a fresh snapshot: %+v %v", res, err)
			}
		})
	}
}
