package group

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Config holds the broker properties the coordinator honours, with Kafka's
// names and defaults (see DefaultConfig). New replaces zero values with the
// defaults, except InitialRebalanceDelay, where zero is a real setting.
type Config struct {
	OffsetsTopicPartitions        int32         // offsets.topic.num.partitions = 50
	InitialRebalanceDelay         time.Duration // group.initial.rebalance.delay.ms = 3000
	MinSessionTimeout             time.Duration // group.min.session.timeout.ms = 6000
	MaxSessionTimeout             time.Duration // group.max.session.timeout.ms = 1800000
	MaxGroupSize                  int           // group.max.size = MaxInt32
	OffsetsRetention              time.Duration // offsets.retention.minutes = 10080
	OffsetsRetentionCheckInterval time.Duration // offsets.retention.check.interval.ms = 600000
	OffsetMetadataMaxBytes        int           // offset.metadata.max.bytes = 4096
}

// DefaultConfig returns Kafka's defaults for every setting.
func DefaultConfig() Config {
	return Config{
		OffsetsTopicPartitions:        50,
		InitialRebalanceDelay:         3 * time.Second,
		MinSessionTimeout:             6 * time.Second,
		MaxSessionTimeout:             30 * time.Minute,
		MaxGroupSize:                  math.MaxInt32,
		OffsetsRetention:              7 * 24 * time.Hour,
		OffsetsRetentionCheckInterval: 10 * time.Minute,
		OffsetMetadataMaxBytes:        4096,
	}
}

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.OffsetsTopicPartitions <= 0 {
		c.OffsetsTopicPartitions = d.OffsetsTopicPartitions
	}
	if c.InitialRebalanceDelay < 0 {
		c.InitialRebalanceDelay = 0
	}
	if c.MinSessionTimeout <= 0 {
		c.MinSessionTimeout = d.MinSessionTimeout
	}
	if c.MaxSessionTimeout <= 0 {
		c.MaxSessionTimeout = d.MaxSessionTimeout
	}
	if c.MaxGroupSize <= 0 {
		c.MaxGroupSize = d.MaxGroupSize
	}
	if c.OffsetsRetention <= 0 {
		c.OffsetsRetention = d.OffsetsRetention
	}
	if c.OffsetsRetentionCheckInterval <= 0 {
		c.OffsetsRetentionCheckInterval = d.OffsetsRetentionCheckInterval
	}
	if c.OffsetMetadataMaxBytes <= 0 {
		c.OffsetMetadataMaxBytes = d.OffsetMetadataMaxBytes
	}
	return c
}

// TopicMetadata is the broker's view of topics, for the checks Kafka makes
// in its API layer before the coordinator sees a request: OffsetCommit and
// OffsetDelete answer UNKNOWN_TOPIC_OR_PARTITION for partitions that do not
// exist, OffsetCommit/OffsetFetch v10 name topics by id, and offset records
// carry the topic id.
type TopicMetadata interface {
	// Topic returns a topic's id and partition count; ok is false if the
	// topic does not exist.
	Topic(name string) (id [16]byte, partitions int32, ok bool)
	// TopicName resolves a topic id.
	TopicName(id [16]byte) (name string, ok bool)
}

// Options are the coordinator's dependencies.
type Options struct {
	Logger *slog.Logger
	// Now stamps commits and group state changes; time.Now if nil. Timers
	// (session, rebalance, retention) run on the runtime clock, which tests
	// virtualise with testing/synctest.
	Now func() time.Time
	// Topics, if set, enables the topic checks and topic ids described on
	// TopicMetadata. Without it every topic is accepted and v10 requests
	// that name topics only by id get UNKNOWN_TOPIC_ID.
	Topics TopicMetadata
	// OnRebalance, if set, is told of every rebalance: completed false
	// when a group enters PreparingRebalance, true when a generation's
	// assignment is in place and the group is Stable (the broker's
	// rebalance counters). It is called with the group's lock held and
	// must not block.
	OnRebalance func(completed bool)
}

type partitionState int8

const (
	partLoading partitionState = iota
	partLoaded
)

type offsetsPartition struct {
	state partitionState
	w     *writer
}

// Coordinator is the classic group coordinator for the __consumer_offsets
// partitions loaded on this broker. See the package documentation for its
// design and lock order.
type Coordinator struct {
	cfg    Config
	store  Store
	log    *slog.Logger
	now    func() time.Time
	topics TopicMetadata
	// onRebalance is Options.OnRebalance (never nil).
	onRebalance func(completed bool)

	mu         sync.Mutex // guards parts, groups, closed
	parts      map[int32]*offsetsPartition
	groups     map[string]*group
	closed     bool
	stopExpiry chan struct{}
	expiryDone chan struct{}
}

// New returns a coordinator with no partitions loaded; Load makes it the
// coordinator of a partition's groups.
func New(cfg Config, store Store, opts Options) *Coordinator {
	c := &Coordinator{
		cfg:         cfg.withDefaults(),
		store:       store,
		log:         opts.Logger,
		now:         opts.Now,
		topics:      opts.Topics,
		onRebalance: opts.OnRebalance,
		parts:       make(map[int32]*offsetsPartition),
		groups:      make(map[string]*group),
		stopExpiry:  make(chan struct{}),
		expiryDone:  make(chan struct{}),
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.onRebalance == nil {
		c.onRebalance = func(bool) {}
	}
	go c.expiryLoop()
	return c
}

func (c *Coordinator) nowMs() int64 { return c.now().UnixMilli() }

// PartitionFor returns the __consumer_offsets partition of a group, as
// Kafka computes it: abs(String.hashCode(groupID)) % partitions, where the
// hash runs over UTF-16 code units and Utils.abs maps MinInt32 to 0.
func PartitionFor(groupID string, partitions int32) int32 {
	if partitions <= 0 {
		return 0
	}
	var h int32
	for _, r := range groupID {
		if r >= 0x10000 {
			r -= 0x10000
			h = 31*h + int32(0xD800+(r>>10))
			h = 31*h + int32(0xDC00+(r&0x3FF))
			continue
		}
		h = 31*h + int32(r)
	}
	if h == math.MinInt32 {
		h = 0
	} else if h < 0 {
		h = -h
	}
	return h % partitions
}

func (c *Coordinator) partitionFor(groupID string) int32 {
	return PartitionFor(groupID, c.cfg.OffsetsTopicPartitions)
}

// Owns reports whether this coordinator has loaded (or is loading) the
// partition of groupID.
func (c *Coordinator) Owns(groupID string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.parts[c.partitionFor(groupID)]
	return ok
}

// Load replays partition p of __consumer_offsets and then serves its
// groups: until it returns, their requests get COORDINATOR_LOAD_IN_PROGRESS.
// Loading a partition that is already loaded does nothing. Records this
// coordinator cannot decode are logged and skipped, so one bad record does
// not take every group of the partition offline; an error from the Store
// fails the load and leaves the partition unowned.
func (c *Coordinator) Load(p int32) error {
	if p < 0 || p >= c.cfg.OffsetsTopicPartitions {
		return fmt.Errorf("load __consumer_offsets-%d: partition out of range [0, %d)", p, c.cfg.OffsetsTopicPartitions)
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return fmt.Errorf("load __consumer_offsets-%d: coordinator is closed", p)
	}
	if _, ok := c.parts[p]; ok {
		c.mu.Unlock()
		return nil
	}
	part := &offsetsPartition{state: partLoading}
	c.parts[p] = part
	c.mu.Unlock()

	start := time.Now()
	groups, stats, err := c.replay(p)
	if err != nil {
		c.mu.Lock()
		if c.parts[p] == part {
			delete(c.parts, p)
		}
		c.mu.Unlock()
		return fmt.Errorf("load __consumer_offsets-%d: %w", p, err)
	}

	c.mu.Lock()
	if c.closed || c.parts[p] != part {
		// Unloaded (or closed) while replaying: the result is stale.
		c.mu.Unlock()
		return nil
	}
	part.w = newWriter(c.store, p)
	ids := make([]string, 0, len(groups))
	for id, g := range groups {
		g.w = part.w
		c.groups[id] = g
		ids = append(ids, id)
	}
	part.state = partLoaded
	c.mu.Unlock()

	sort.Strings(ids)
	for _, id := range ids {
		groups[id].onLoaded()
	}
	c.log.Info("loaded __consumer_offsets partition", "partition", p, "groups", len(groups),
		"offsets", stats.offsets, "records", stats.records, "skipped", stats.skipped, "took", time.Since(start))
	return nil
}

// Unload stops serving partition p (its leadership moved): its groups'
// parked JoinGroup and SyncGroup requests are answered NOT_COORDINATOR,
// queued writes fail, and later requests get NOT_COORDINATOR.
func (c *Coordinator) Unload(p int32) {
	c.mu.Lock()
	part, ok := c.parts[p]
	if !ok {
		c.mu.Unlock()
		return
	}
	delete(c.parts, p)
	var gs []*group
	for id, g := range c.groups {
		if g.partition == p {
			gs = append(gs, g)
			delete(c.groups, id)
		}
	}
	c.mu.Unlock()

	for _, g := range gs {
		g.mu.Lock()
		g.unload()
		g.mu.Unlock()
	}
	if part.w != nil {
		part.w.close()
	}
	c.log.Info("unloaded __consumer_offsets partition", "partition", p, "groups", len(gs))
}

// Close unloads every partition and stops the retention timer. Parked
// JoinGroup and SyncGroup requests are answered NOT_COORDINATOR.
func (c *Coordinator) Close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	ps := make([]int32, 0, len(c.parts))
	for p := range c.parts {
		ps = append(ps, p)
	}
	c.mu.Unlock()
	close(c.stopExpiry)
	<-c.expiryDone
	for _, p := range ps {
		c.Unload(p)
	}
}

// lookup finds groupID's group and locks it. It returns a Kafka error code
// when the partition is not served here (NOT_COORDINATOR) or still loading
// (COORDINATOR_LOAD_IN_PROGRESS), and a nil group when none exists and
// create is false. With create it makes an Empty group; created reports
// that. A group removed while we waited for its lock (deleted, expired,
// unloaded) is looked up again, so callers never see a Dead group.
func (c *Coordinator) lookup(groupID string, create bool) (g *group, created bool, code int16) {
	p := c.partitionFor(groupID)
	for {
		c.mu.Lock()
		part, ok := c.parts[p]
		switch {
		case !ok:
			c.mu.Unlock()
			return nil, false, kerr.NotCoordinator.Code
		case part.state == partLoading:
			c.mu.Unlock()
			return nil, false, kerr.CoordinatorLoadInProgress.Code
		}
		g = c.groups[groupID]
		created = false
		if g == nil {
			if !create {
				c.mu.Unlock()
				return nil, false, 0
			}
			g = newGroup(c, groupID, p, part.w)
			c.groups[groupID] = g
			created = true
		}
		c.mu.Unlock()
		g.mu.Lock()
		if g.state != stateDead {
			return g, created, 0
		}
		g.mu.Unlock()
		// Whoever killed it may not have unregistered it yet; any of us
		// may, and then look again.
		c.removeGroup(g)
	}
}

// removeGroup drops a Dead group from the map if it is still the one
// registered under its id and still Dead (a failed deletion may have
// revived it before its deleter got here).
func (c *Coordinator) removeGroup(g *group) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.groups[g.id] != g {
		return
	}
	g.mu.Lock()
	dead := g.state == stateDead
	g.mu.Unlock()
	if dead {
		delete(c.groups, g.id)
	}
}

// loadedGroups returns the groups of loaded partitions and whether any
// partition is still loading.
func (c *Coordinator) loadedGroups() (gs []*group, loading bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, part := range c.parts {
		if part.state == partLoading {
			loading = true
		}
	}
	gs = make([]*group, 0, len(c.groups))
	for _, g := range c.groups {
		gs = append(gs, g)
	}
	sort.Slice(gs, func(i, j int) bool { return gs[i].id < gs[j].id })
	return gs, loading
}

// appendErrorCode maps a failed Store.Append to the error clients get, as
// Kafka's appendGroupMetadataErrorToResponseError does: the partition
// moving away is NOT_COORDINATOR, Kafka errors keep their mapping, and any
// other storage failure is NOT_COORDINATOR too (as KAFKA_STORAGE_ERROR is)
// so that clients look the coordinator up again and retry.
func appendErrorCode(err error) int16 {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		switch ke {
		case kerr.UnknownTopicOrPartition, kerr.NotEnoughReplicas, kerr.RequestTimedOut:
			return kerr.CoordinatorNotAvailable.Code
		case kerr.NotLeaderForPartition, kerr.KafkaStorageError:
			return kerr.NotCoordinator.Code
		case kerr.MessageTooLarge, kerr.RecordListTooLarge, kerr.InvalidFetchSize:
			return kerr.UnknownServerError.Code
		default:
			return ke.Code
		}
	}
	return kerr.NotCoordinator.Code
}

// clientKey carries the requesting client's identity through a context.
type clientKey struct{}

type clientInfo struct{ id, host string }

// WithClient returns a context carrying the client id (from the request
// header) and client host of the connection a request arrived on. The
// coordinator records them for new members, and DescribeGroups reports
// them; Kafka renders the host as "/" + IP, e.g. "/127.0.0.1".
func WithClient(ctx context.Context, clientID, clientHost string) context.Context {
	return context.WithValue(ctx, clientKey{}, clientInfo{id: clientID, host: clientHost})
}

func clientFrom(ctx context.Context) clientInfo {
	ci, _ := ctx.Value(clientKey{}).(clientInfo)
	return ci
}
