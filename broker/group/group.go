package group

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// groupState is the classic group state machine (Kafka's ClassicGroupState).
type groupState int8

const (
	stateEmpty groupState = iota
	statePreparingRebalance
	stateCompletingRebalance
	stateStable
	stateDead
)

func (s groupState) String() string {
	switch s {
	case stateEmpty:
		return "Empty"
	case statePreparingRebalance:
		return "PreparingRebalance"
	case stateCompletingRebalance:
		return "CompletingRebalance"
	case stateStable:
		return "Stable"
	default:
		return "Dead"
	}
}

// newMemberJoinTimeout bounds how long a new member's JoinGroup may stay
// parked (Kafka's group.classic.new.member.join.timeout, 5 minutes): a
// client that gave up and retried would otherwise leave a defunct member
// in every rebalance.
const newMemberJoinTimeout = 5 * time.Minute

type protocol struct {
	name     string
	metadata []byte
}

type member struct {
	id                 string
	instanceID         *string
	clientID           string
	clientHost         string
	rebalanceTimeoutMs int32
	sessionTimeoutMs   int32
	protocolType       string
	protocols          []protocol // in the member's order of preference
	assignment         []byte

	join  *joinWaiter // non-nil while a JoinGroup is parked
	sync  *syncWaiter // non-nil while a SyncGroup is parked
	isNew bool        // joined in the current rebalance, not yet given a generation

	hbSeq   uint64 // invalidates older heartbeat timers
	hbTimer *time.Timer
}

type joinWaiter struct {
	version int16
	ch      chan *kmsg.JoinGroupResponse // capacity 1
}

type syncWaiter struct {
	version int16
	ch      chan *kmsg.SyncGroupResponse // capacity 1
}

func (m *member) metadata(name string) []byte {
	for _, p := range m.protocols {
		if p.name == name {
			return p.metadata
		}
	}
	return nil
}

func (m *member) supports(name string) bool {
	for _, p := range m.protocols {
		if p.name == name {
			return true
		}
	}
	return false
}

// matches reports whether a JoinGroup carries the member's current
// protocols (names and metadata, in order).
func (m *member) matches(ps []protocol) bool {
	if len(ps) != len(m.protocols) {
		return false
	}
	for i := range ps {
		if ps[i].name != m.protocols[i].name || !bytes.Equal(ps[i].metadata, m.protocols[i].metadata) {
			return false
		}
	}
	return true
}

// hasSatisfiedHeartbeat: members parked in a join or sync count as alive,
// except new members, whose join is bounded by newMemberJoinTimeout.
func (m *member) hasSatisfiedHeartbeat() bool {
	if m.isNew {
		return false
	}
	return m.join != nil || m.sync != nil
}

type topicPartition struct {
	topic     string
	partition int32
}

type offsetEntry struct {
	offset      int64
	leaderEpoch int32
	metadata    string
	commitMs    int64
	expireMs    int64 // -1: none (the KIP-211 default)
	topicID     [16]byte
}

type pendingMember struct {
	seq   uint64
	timer *time.Timer
}

// group is one classic group and its committed offsets. Everything below
// mu is guarded by it; see the package documentation for the lock order.
type group struct {
	c         *Coordinator
	id        string
	partition int32
	w         *writer

	mu         sync.Mutex
	state      groupState
	prevState  groupState
	stateMs    int64 // currentStateTimestamp; -1 when unknown (old records)
	generation int32

	protocolType string // "" for simple (offset-only) groups
	protocol     string
	hasProtocol  bool
	leader       string // "" when there is none

	members      map[string]*member
	order        []string          // member ids in join order; Kafka's map order is arbitrary, ours is stable
	static       map[string]string // group.instance.id -> member id
	pending      map[string]*pendingMember
	awaitingJoin int
	supported    map[string]int // protocol name -> members supporting it
	pendingSync  map[string]struct{}

	newMemberAdded bool // a member joined during the initial (delayed) rebalance

	subscribed      map[string]struct{} // topics of a "consumer" group's members
	subscribedKnown bool

	seq       uint64 // source of timer tokens
	joinSeq   uint64
	joinTimer *time.Timer
	syncSeq   uint64
	syncTimer *time.Timer

	offsets  map[string]map[int32]*offsetEntry
	inflight map[topicPartition]int // offset writes queued but not yet applied
}

func newGroup(c *Coordinator, id string, partition int32, w *writer) *group {
	return &group{
		c:         c,
		id:        id,
		partition: partition,
		w:         w,
		state:     stateEmpty,
		prevState: stateDead,
		stateMs:   c.nowMs(),
		members:   make(map[string]*member),
		static:    make(map[string]string),
		pending:   make(map[string]*pendingMember),
		supported: make(map[string]int),
		offsets:   make(map[string]map[int32]*offsetEntry),
		inflight:  make(map[topicPartition]int),
	}
}

func (g *group) nextSeq() uint64 {
	g.seq++
	return g.seq
}

func (g *group) transition(s groupState) {
	switch {
	case s == statePreparingRebalance && g.state != statePreparingRebalance:
		g.c.onRebalance(false)
	case s == stateStable && g.state == stateCompletingRebalance:
		g.c.onRebalance(true)
	}
	g.prevState = g.state
	g.state = s
	g.stateMs = g.c.nowMs()
}

// canRebalance: PreparingRebalance is reachable from these states only.
func (g *group) canRebalance() bool {
	return g.state == stateStable || g.state == stateCompletingRebalance || g.state == stateEmpty
}

func (g *group) isLeader(id string) bool { return g.leader != "" && g.leader == id }

func (g *group) hasAllMembersJoined() bool {
	return len(g.members) == g.awaitingJoin && len(g.pending) == 0
}

func (g *group) rebalanceTimeout() time.Duration {
	var max int32
	for _, m := range g.members {
		if m.rebalanceTimeoutMs > max {
			max = m.rebalanceTimeoutMs
		}
	}
	return time.Duration(max) * time.Millisecond
}

// add puts a member into the group (Kafka's ClassicGroup.add). The first
// member fixes the group's protocol type and becomes leader.
func (g *group) add(m *member, w *joinWaiter) {
	if m.instanceID != nil {
		g.static[*m.instanceID] = m.id
	}
	if len(g.members) == 0 {
		g.protocolType = m.protocolType
	}
	if g.leader == "" {
		g.leader = m.id
	}
	g.members[m.id] = m
	g.order = append(g.order, m.id)
	for _, p := range m.protocols {
		g.supported[p.name]++
	}
	m.join = w
	if w != nil {
		g.awaitingJoin++
	}
	g.removePending(m.id)
}

// remove takes a member (or pending member) out of the group without any
// rebalance; the leader passes to the first remaining member.
func (g *group) remove(id string) {
	if m, ok := g.members[id]; ok {
		// Never leave a request parked on a member that is gone.
		jr := kmsg.NewPtrJoinGroupResponse()
		jr.ErrorCode = kerr.UnknownMemberID.Code
		g.completeJoin(m, jr)
		sr := kmsg.NewPtrSyncGroupResponse()
		sr.ErrorCode = kerr.UnknownMemberID.Code
		g.completeSync(m, sr)
		for _, p := range m.protocols {
			g.supported[p.name]--
		}
		if m.instanceID != nil && g.static[*m.instanceID] == id {
			delete(g.static, *m.instanceID)
		}
		g.stopHeartbeat(m)
		delete(g.members, id)
		for i, o := range g.order {
			if o == id {
				g.order = append(g.order[:i:i], g.order[i+1:]...)
				break
			}
		}
	}
	if g.isLeader(id) {
		g.leader = ""
		if len(g.order) > 0 {
			g.leader = g.order[0]
		}
	}
	g.removePending(id)
	delete(g.pendingSync, id)
}

func (g *group) addPending(id string) {
	pm := &pendingMember{seq: g.nextSeq()}
	g.pending[id] = pm
}

func (g *group) removePending(id string) {
	if pm, ok := g.pending[id]; ok {
		if pm.timer != nil {
			pm.timer.Stop()
		}
		delete(g.pending, id)
	}
}

// maybeElectNewJoinedLeader keeps the leader if it rejoined, else hands
// leadership to a member that did; false when no member rejoined.
func (g *group) maybeElectNewJoinedLeader() bool {
	if g.leader == "" {
		return false
	}
	if l := g.members[g.leader]; l != nil && l.join != nil {
		return true
	}
	for _, id := range g.order {
		if g.members[id].join != nil {
			g.c.log.Info("group leader failed to rejoin before the rebalance timeout; elected a new leader",
				"group", g.id, "old_leader", g.leader, "leader", id)
			g.leader = id
			return true
		}
	}
	return false
}

// replaceStaticMember gives a static member a new member id, fencing any
// request parked under the old id (KIP-345).
func (g *group) replaceStaticMember(instanceID, oldID, newID string) *member {
	old := g.members[oldID]
	fencedJoin := kmsg.NewPtrJoinGroupResponse()
	fencedJoin.ErrorCode = kerr.FencedInstanceID.Code
	fencedJoin.MemberID = oldID
	g.completeJoin(old, fencedJoin)
	fencedSync := kmsg.NewPtrSyncGroupResponse()
	fencedSync.ErrorCode = kerr.FencedInstanceID.Code
	g.completeSync(old, fencedSync)
	g.stopHeartbeat(old)

	nm := &member{
		id:                 newID,
		instanceID:         old.instanceID,
		clientID:           old.clientID,
		clientHost:         old.clientHost,
		rebalanceTimeoutMs: old.rebalanceTimeoutMs,
		sessionTimeoutMs:   old.sessionTimeoutMs,
		protocolType:       old.protocolType,
		protocols:          old.protocols,
		assignment:         old.assignment,
	}
	delete(g.members, oldID)
	g.members[newID] = nm
	for i, o := range g.order {
		if o == oldID {
			g.order[i] = newID
		}
	}
	if _, ok := g.pendingSync[oldID]; ok {
		delete(g.pendingSync, oldID)
		g.pendingSync[newID] = struct{}{}
	}
	if g.isLeader(oldID) {
		g.leader = newID
	}
	g.static[instanceID] = newID
	return nm
}

// validateMember checks a request's member id and instance id.
func (g *group) validateMember(memberID string, instanceID *string) int16 {
	if instanceID != nil {
		existing, ok := g.static[*instanceID]
		if !ok {
			return kerr.UnknownMemberID.Code
		}
		if existing != memberID {
			g.c.log.Info("static member fenced", "group", g.id, "instance_id", *instanceID,
				"member_id", memberID, "current_member_id", existing)
			return kerr.FencedInstanceID.Code
		}
	}
	if _, ok := g.members[memberID]; !ok {
		return kerr.UnknownMemberID.Code
	}
	return 0
}

// supportsProtocols: an Empty group takes any non-empty protocol type
// and list; otherwise the type must match and the member must support a
// protocol every current member supports.
func (g *group) supportsProtocols(protocolType string, ps []protocol) bool {
	if g.state == stateEmpty {
		return protocolType != "" && len(ps) > 0
	}
	if g.protocolType != protocolType {
		return false
	}
	for _, p := range ps {
		if g.supported[p.name] == len(g.members) {
			return true
		}
	}
	return false
}

// selectProtocol picks, among the protocols all members support, the one
// most members prefer (Kafka's vote); ties go to the protocol the earliest
// member voted for, where Kafka's choice is arbitrary.
func (g *group) selectProtocol() string {
	votes := make(map[string]int)
	var first []string
	for _, id := range g.order {
		m := g.members[id]
		for _, p := range m.protocols {
			if g.supported[p.name] == len(g.members) {
				if votes[p.name] == 0 {
					first = append(first, p.name)
				}
				votes[p.name]++
				break
			}
		}
	}
	best, n := "", -1
	for _, name := range first {
		if votes[name] > n {
			best, n = name, votes[name]
		}
	}
	return best
}

// updateMember applies a rejoin's protocols and timeouts, parking (w) or
// clearing (nil) the member's JoinGroup.
func (g *group) updateMember(m *member, ps []protocol, rebalanceMs, sessionMs int32, w *joinWaiter) {
	for _, p := range m.protocols {
		g.supported[p.name]--
	}
	m.protocols = ps
	for _, p := range m.protocols {
		g.supported[p.name]++
	}
	m.rebalanceTimeoutMs = rebalanceMs
	m.sessionTimeoutMs = sessionMs
	if w != nil && m.join == nil {
		g.awaitingJoin++
	} else if w == nil && m.join != nil {
		g.awaitingJoin--
	}
	if m.join != nil && w != nil && m.join != w {
		// A second JoinGroup from the same member replaces the first,
		// which Kafka would leave unanswered; say why.
		superseded := kmsg.NewPtrJoinGroupResponse()
		superseded.ErrorCode = kerr.RebalanceInProgress.Code
		superseded.MemberID = m.id
		m.join.deliver(superseded)
	}
	m.join = w
}

func (w *joinWaiter) deliver(r *kmsg.JoinGroupResponse) {
	r.Version = w.version
	select {
	case w.ch <- r:
	default:
	}
}

func (w *syncWaiter) deliver(r *kmsg.SyncGroupResponse) {
	r.Version = w.version
	select {
	case w.ch <- r:
	default:
	}
}

func (g *group) completeJoin(m *member, r *kmsg.JoinGroupResponse) bool {
	if m.join == nil {
		return false
	}
	m.join.deliver(r)
	m.join = nil
	g.awaitingJoin--
	return true
}

func (g *group) completeSync(m *member, r *kmsg.SyncGroupResponse) bool {
	if m.sync == nil {
		return false
	}
	m.sync.deliver(r)
	m.sync = nil
	return true
}

// initNextGeneration bumps the generation and moves to CompletingRebalance
// with a selected protocol, or to Empty when no member is left.
func (g *group) initNextGeneration() {
	g.generation++
	if len(g.members) > 0 {
		g.protocol, g.hasProtocol = g.selectProtocol(), true
		g.computeSubscribedTopics()
		g.transition(stateCompletingRebalance)
	} else {
		g.protocol, g.hasProtocol = "", false
		g.computeSubscribedTopics()
		g.transition(stateEmpty)
	}
	g.pendingSync = nil
}

// currentMembers is the member list a leader gets in its JoinGroup response.
func (g *group) currentMembers() []kmsg.JoinGroupResponseMember {
	out := make([]kmsg.JoinGroupResponseMember, 0, len(g.order))
	for _, id := range g.order {
		m := g.members[id]
		jm := kmsg.NewJoinGroupResponseMember()
		jm.MemberID = m.id
		jm.InstanceID = m.instanceID
		jm.ProtocolMetadata = m.metadata(g.protocol)
		out = append(out, jm)
	}
	return out
}

// joinResponse fills a successful JoinGroup response for memberID.
func (g *group) joinResponse(memberID string, withMembers bool) *kmsg.JoinGroupResponse {
	r := kmsg.NewPtrJoinGroupResponse()
	r.MemberID = memberID
	r.Generation = g.generation
	if g.hasProtocol {
		r.Protocol = kmsg.StringPtr(g.protocol)
	}
	if g.protocolType != "" {
		r.ProtocolType = kmsg.StringPtr(g.protocolType)
	}
	r.LeaderID = g.leader
	if withMembers {
		r.Members = g.currentMembers()
	}
	return r
}

// computeSubscribedTopics decodes the topics of a "consumer" group's
// subscriptions (the embedded consumer protocol, read as its version 0
// prefix is by Kafka). Other protocol types leave them unknown.
func (g *group) computeSubscribedTopics() {
	g.subscribed, g.subscribedKnown = nil, false
	if g.protocolType != "consumer" {
		return
	}
	if len(g.members) == 0 {
		g.subscribed, g.subscribedKnown = map[string]struct{}{}, true
		return
	}
	if !g.hasProtocol {
		return
	}
	topics := make(map[string]struct{})
	for _, m := range g.members {
		var md kmsg.ConsumerMemberMetadata
		if err := md.ReadFrom(m.metadata(g.protocol)); err != nil {
			g.c.log.Warn("cannot decode consumer subscription; the coordinator is not aware of the group's topics",
				"group", g.id, "member_id", m.id, "protocol", g.protocol, "err", err)
			return
		}
		for _, t := range md.Topics {
			topics[t] = struct{}{}
		}
	}
	g.subscribed, g.subscribedKnown = topics, true
}

// isSubscribedToTopic: unknown subscriptions of a consumer group count as
// subscribed to everything, so nothing is deleted under a live consumer.
func (g *group) isSubscribedToTopic(topic string) bool {
	if g.subscribedKnown {
		_, ok := g.subscribed[topic]
		return ok
	}
	return g.protocolType == "consumer"
}

// generateMemberID is Kafka's: instance id or client id, "-", a UUID.
func generateMemberID(clientID string, instanceID *string) string {
	prefix := clientID
	if instanceID != nil {
		prefix = *instanceID
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%s-%x-%x-%x-%x-%x", prefix, b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// unload answers every parked request NOT_COORDINATOR and marks the group
// Dead, as Kafka's onUnloaded does.
func (g *group) unload() {
	g.transition(stateDead)
	for _, id := range g.order {
		m := g.members[id]
		jr := kmsg.NewPtrJoinGroupResponse()
		jr.ErrorCode = kerr.NotCoordinator.Code
		jr.MemberID = m.id
		g.completeJoin(m, jr)
		sr := kmsg.NewPtrSyncGroupResponse()
		sr.ErrorCode = kerr.NotCoordinator.Code
		g.completeSync(m, sr)
	}
	g.stopTimers()
}

func (g *group) stopTimers() {
	for _, m := range g.members {
		g.stopHeartbeat(m)
	}
	for id := range g.pending {
		g.removePending(id)
	}
	g.cancelJoinTimer()
	g.cancelSyncTimer()
}

// markDead ends a deleted group: parked requests (there are none in an
// Empty group, but be safe) are told to find the coordinator again.
func (g *group) markDead() {
	g.unload()
}
