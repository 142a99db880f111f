package broker

import (
	"sync"
	"sync/atomic"

	"github.com/fjordhq/fjord/broker/log"
	"github.com/fjordhq/fjord/broker/metadata"
	"github.com/fjordhq/fjord/broker/replica"
)

// partition is a partition this broker hosts: its log plus the replica
// state the handlers need. On a single node the broker is always the
// leader and the high watermark follows the log end offset. In a cluster
// a leader tracks its followers in repl (broker/replica), whose high
// watermark it publishes here; a follower's log is written by the replica
// fetcher and its high watermark comes from the leader.
type partition struct {
	topic   string
	index   int32
	topicID metadata.UUID
	log     *log.Log
	// tm are the topic's per-topic counters, resolved when the partition
	// is created so produce and fetch do no label lookups.
	tm *topicMetrics

	leaderEpoch atomic.Int32
	hw          atomic.Int64
	// role is roleLeader or roleFollower; leaderID the current leader.
	role     atomic.Int32
	leaderID atomic.Int32
	// repl is the leader-side replication state (nil on a single node and
	// on followers).
	repl atomic.Pointer[replica.Leader]

	// settings is the topic's effective configuration, swapped whole on
	// config changes.
	settings atomic.Pointer[TopicSettings]

	// appendMu serialises produce-side validation + append for this
	// partition so that recompression or timestamp edits happen in the
	// same order as the log append.
	appendMu sync.Mutex

	// waiters are long-polling fetches to wake when data arrives.
	waitMu  sync.Mutex
	waiters map[*fetchWaiter]struct{}
}

const (
	roleFollower int32 = iota
	roleLeader
)

// isLeader reports whether this broker leads the partition.
func (p *partition) isLeader() bool { return p.role.Load() == roleLeader }

// replication returns the leader-side follower tracking, nil on a
// single node and on followers.
func (p *partition) replication() *replica.Leader { return p.repl.Load() }

// notify wakes parked fetches without moving the high watermark: replica
// fetches wait for the log end offset, not for the high watermark.
func (p *partition) notify() {
	p.waitMu.Lock()
	for w := range p.waiters {
		w.notify()
	}
	p.waitMu.Unlock()
}

// fetchWaiter is a parked fetch; notify never blocks.
type fetchWaiter struct{ ch chan struct{} }

func newFetchWaiter() *fetchWaiter { return &fetchWaiter{ch: make(chan struct{}, 1)} }

func (w *fetchWaiter) notify() {
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

func (p *partition) addWaiter(w *fetchWaiter) {
	p.waitMu.Lock()
	if p.waiters == nil {
		p.waiters = make(map[*fetchWaiter]struct{})
	}
	p.waiters[w] = struct{}{}
	p.waitMu.Unlock()
}

func (p *partition) removeWaiter(w *fetchWaiter) {
	p.waitMu.Lock()
	delete(p.waiters, w)
	p.waitMu.Unlock()
}

// advance publishes a new high watermark and wakes waiting fetches.
func (p *partition) advance(hw int64) {
	for {
		old := p.hw.Load()
		if hw <= old || p.hw.CompareAndSwap(old, hw) {
			break
		}
	}
	p.waitMu.Lock()
	for w := range p.waiters {
		w.notify()
	}
	p.waitMu.Unlock()
}

// highWatermark is the offset below which records are visible to consumers.
func (p *partition) highWatermark() int64 { return p.hw.Load() }

// partitionKey identifies a partition in maps.
type partitionKey struct {
	topic string
	index int32
}

// partitionTable is the set of local partitions, replaced whole on
// metadata changes (copy-on-write) so lookups on the hot path take no lock.
type partitionTable struct {
	byKey map[partitionKey]*partition
	byID  map[metadata.UUID][]*partition
}

func (t *partitionTable) get(topic string, p int32) *partition {
	if t == nil {
		return nil
	}
	return t.byKey[partitionKey{topic, p}]
}
