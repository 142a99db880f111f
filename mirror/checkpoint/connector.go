package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/plugins"
	"github.com/fjordhq/fjord/mirror/filter"
	"github.com/fjordhq/fjord/mirror/mirrorconfig"
)

// Class names the connector answers to.
const (
	ConnectorClass = "org.apache.kafka.connect.mirror.MirrorCheckpointConnector"
	Alias          = "mirror-checkpoint"
)

// Connector is MirrorCheckpointConnector: it finds the source's consumer
// groups that the group filter accepts and that have offsets for a topic
// the topic filter accepts, refreshes them every
// refresh.groups.interval.seconds, and splits them over tasks.max tasks
// (task.assigned.groups). It creates the checkpoints topic on the target.
type Connector struct {
	cctx    connect.ConnectorContext
	cfg     *config
	groupsF filter.GroupFilter
	topicsF filter.TopicFilter
	src     *kadm.Client
	dst     *kadm.Client
	closers []func()
	log     *slog.Logger

	mu           sync.Mutex
	known        []string // sorted; nil until the first listing succeeds
	topicCreated bool
	// planned: TaskConfigs has been called, so a change of groups needs
	// a reconfiguration to reach the tasks.
	planned bool

	cancel context.CancelFunc
	done   chan struct{}
}

var (
	_ connect.SourceConnector      = (*Connector)(nil)
	_ connect.ContextualConnector  = (*Connector)(nil)
	_ connect.ConfigValidator      = (*Connector)(nil)
	_ connect.SourceOffsetsAlterer = (*Connector)(nil)
	_ connect.Versioned            = (*Connector)(nil)
)

func (c *Connector) Initialize(ctx connect.ConnectorContext) { c.cctx = ctx }
func (c *Connector) Config() *connect.ConfigDef              { return ConfigDef() }
func (c *Connector) NewTask() connect.SourceTask             { return &Task{} }
func (c *Connector) Version() string                         { return plugins.DefaultVersion }

// Validate adds MirrorCheckpointConfig.validate's cross-key errors to the
// per-key validation.
func (c *Connector) Validate(props map[string]string) []connect.ConfigValue {
	values := ConfigDef().Validate(props)
	for _, k := range slices.Sorted(maps.Keys(validate(props))) {
		msg := validate(props)[k]
		i := slices.IndexFunc(values, func(v connect.ConfigValue) bool { return v.Name == k })
		if i < 0 {
			var raw any
			if v, ok := props[k]; ok {
				raw = v
			}
			values = append(values, connect.ConfigValue{Name: k, Value: raw, Visible: true})
			i = len(values) - 1
		}
		values[i].Errors = append(values[i].Errors, msg)
	}
	return values
}

// Start creates the checkpoints topic and lists the consumer groups,
// then keeps refreshing them in the background. A cluster that cannot be
// reached does not fail the connector (the steps are retried, as MM2's
// scheduler does); a checkpoints topic the target refuses (a
// replication factor above its broker count) does.
func (c *Connector) Start(ctx context.Context, props map[string]string) error {
	cfg, err := parseConfig(props)
	if err != nil {
		return err
	}
	c.cfg = cfg
	c.log = slog.With("connector", cfg.ConnectorName(), "flow", cfg.SourceClusterAlias()+"->"+cfg.TargetClusterAlias())
	if !cfg.Enabled() {
		c.log.Info("MirrorCheckpointConnector is disabled (enabled=false)")
		return nil
	}
	if c.groupsF, err = filter.NewGroupFilter(props); err != nil {
		return err
	}
	if c.topicsF, err = filter.NewTopicFilter(props); err != nil {
		return err
	}
	src, closeSrc, err := mirrorconfig.Admin(props, mirrorconfig.Source)
	if err != nil {
		return fmt.Errorf("source admin client: %w", err)
	}
	c.closers = append(c.closers, closeSrc)
	dst, closeDst, err := mirrorconfig.Admin(props, mirrorconfig.Target)
	if err != nil {
		c.closeClients()
		return fmt.Errorf("target admin client: %w", err)
	}
	c.closers = append(c.closers, closeDst)
	c.src, c.dst = src, dst

	if err := c.createCheckpointsTopic(ctx); err != nil {
		c.closeClients()
		return err
	}
	c.step(ctx, "loading initial consumer groups", c.refreshGroups)

	bg, cancel := context.WithCancel(context.Background())
	c.cancel, c.done = cancel, make(chan struct{})
	go c.run(bg)
	return nil
}

// TaskConfigs splits the known groups over at most maxTasks tasks. Until
// the first listing succeeds there are no tasks (MM2 throws a
// RetriableException; here the connector asks for a reconfiguration once
// the listing succeeds).
func (c *Connector) TaskConfigs(maxTasks int) ([]map[string]string, error) {
	if c.cfg == nil || !c.cfg.Enabled() || c.cfg.emitCheckpointsInterval() < 0 {
		return nil, nil
	}
	c.mu.Lock()
	groups := slices.Clone(c.known)
	c.planned = true
	c.mu.Unlock()
	if len(groups) == 0 || maxTasks < 1 {
		return nil, nil
	}
	parts := splitGroups(groups, min(maxTasks, len(groups)))
	out := make([]map[string]string, len(parts))
	for i, p := range parts {
		tc := maps.Clone(c.cfg.props)
		tc[TaskAssignedGroups] = strings.Join(p, ",")
		tc[mirrorconfig.TaskIndex] = strconv.Itoa(i)
		out[i] = tc
	}
	return out, nil
}

// splitGroups is Kafka's ConnectorUtils.groupPartitions: n contiguous
// chunks, the first len%n one longer.
func splitGroups(groups []string, n int) [][]string {
	out := make([][]string, 0, n)
	per, extra := len(groups)/n, len(groups)%n
	start := 0
	for i := 0; i < n; i++ {
		size := per
		if i < extra {
			size++
		}
		out = append(out, groups[start:start+size])
		start += size
	}
	return out
}

func (c *Connector) Stop() error {
	if c.cancel != nil {
		c.cancel()
		<-c.done
	}
	c.closeClients()
	return nil
}

func (c *Connector) closeClients() {
	for _, f := range c.closers {
		f()
	}
	c.closers = nil
}

// step runs one of MM2's scheduled jobs within admin.timeout.ms, logging
// a failure as MM2's Scheduler does.
func (c *Connector) step(ctx context.Context, what string, fn func(context.Context) error) bool {
	sctx, cancel := context.WithTimeout(ctx, c.cfg.AdminTimeout())
	defer cancel()
	if err := fn(sctx); err != nil {
		if ctx.Err() == nil {
			c.log.Error("MirrorCheckpointConnector job failed", "job", what, "err", err)
		}
		return false
	}
	return true
}

// run refreshes the groups every refresh.groups.interval.seconds (first
// after one interval) and, while the first listing or the checkpoints
// topic have not succeeded, retries them with backoff.
func (c *Connector) run(ctx context.Context) {
	defer close(c.done)
	var refresh <-chan time.Time
	if d := c.cfg.refreshGroupsInterval(); d >= 0 {
		t := time.NewTicker(max(d, time.Millisecond))
		defer t.Stop()
		refresh = t.C
	}
	backoff := time.Second
	for {
		var retry <-chan time.Time
		if !c.ready() {
			retry = time.After(backoff)
		}
		select {
		case <-ctx.Done():
			return
		case <-refresh:
			c.step(ctx, "refreshing consumer groups", c.refreshGroups)
		case <-retry:
			if err := c.createCheckpointsTopic(ctx); err != nil && ctx.Err() == nil {
				c.log.Error("creating the checkpoints topic", "err", err)
			}
			if !c.loaded() {
				c.step(ctx, "loading initial consumer groups", c.refreshGroups)
			}
			backoff = min(backoff*2, 30*time.Second)
		}
	}
}

func (c *Connector) loaded() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.known != nil
}

func (c *Connector) ready() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.known != nil && c.topicCreated
}

// refreshGroups lists the groups and asks for new task configs when the
// set changed (MM2's refreshConsumerGroups / loadInitialConsumerGroups).
func (c *Connector) refreshGroups(ctx context.Context) error {
	found, err := c.findGroups(ctx)
	if err != nil {
		return err
	}
	c.mu.Lock()
	prev := c.known
	c.known = found
	planned := c.planned
	c.mu.Unlock()
	if prev != nil && slices.Equal(prev, found) {
		return nil
	}
	added, removed := diff(prev, found)
	if prev == nil {
		c.log.Info("Started MirrorCheckpointConnector", "groups", len(found))
	} else {
		c.log.Info("Found consumer groups", "groups", len(found), "new", len(added), "removed", len(removed), "previously", len(prev))
	}
	c.log.Debug("new consumer groups", "groups", added)
	if planned && c.cctx != nil && (len(added) > 0 || len(removed) > 0) {
		c.cctx.RequestTaskReconfiguration()
	}
	return nil
}

func diff(prev, cur []string) (added, removed []string) {
	for _, g := range cur {
		if !slices.Contains(prev, g) {
			added = append(added, g)
		}
	}
	for _, g := range prev {
		if !slices.Contains(cur, g) {
			removed = append(removed, g)
		}
	}
	return added, removed
}

// findGroups is MM2's findConsumerGroups: consumer groups the group
// filter accepts that have a committed offset for at least one topic the
// topic filter accepts, sorted (so task configs are stable).
func (c *Connector) findGroups(ctx context.Context) ([]string, error) {
	listed, err := c.src.ListGroups(ctx)
	if err != nil {
		return nil, fmt.Errorf("list consumer groups on %s cluster: %w", c.cfg.SourceClusterAlias(), err)
	}
	var candidates []string
	for g, l := range listed {
		// Kafka's listConsumerGroups: classic consumer groups and groups
		// that only hold offsets (no protocol); not Connect's groups.
		if l.ProtocolType != "consumer" && l.ProtocolType != "" {
			continue
		}
		if c.groupsF.ShouldReplicateGroup(g) {
			candidates = append(candidates, g)
		}
	}
	slices.Sort(candidates)
	if len(candidates) == 0 {
		return []string{}, nil
	}
	fetched := c.src.FetchManyOffsets(ctx, candidates...)
	found := []string{}
	var irrelevant []string
	for _, g := range candidates {
		r, ok := fetched[g]
		if !ok {
			continue
		}
		if r.Err != nil {
			return nil, fmt.Errorf("list offsets for consumer groups %v on %s cluster: %w", candidates, c.cfg.SourceClusterAlias(), r.Err)
		}
		relevant := false
		r.Fetched.Each(func(o kadm.OffsetResponse) {
			if o.Err == nil && c.topicsF.ShouldReplicateTopic(o.Topic) {
				relevant = true
			}
		})
		if relevant {
			found = append(found, g)
		} else {
			irrelevant = append(irrelevant, g)
		}
	}
	if len(irrelevant) > 0 {
		c.log.Debug("ignoring groups without offsets for topics the topic filter accepts", "groups", irrelevant)
	}
	return found, nil
}

// createCheckpointsTopic is MirrorUtils.createSinglePartitionCompactedTopic
// for <source>.checkpoints.internal on the target. Only a refusal that
// retrying cannot fix is returned; other failures are logged and retried.
func (c *Connector) createCheckpointsTopic(ctx context.Context) error {
	c.mu.Lock()
	done := c.topicCreated
	c.mu.Unlock()
	if done {
		return nil
	}
	topic := c.cfg.checkpointsTopic()
	sctx, cancel := context.WithTimeout(ctx, c.cfg.AdminTimeout())
	defer cancel()
	err := createCompactedTopic(sctx, c.dst, topic, c.cfg.Short(CheckpointsTopicReplicationFactor))
	switch {
	case err == nil:
		c.mu.Lock()
		c.topicCreated = true
		c.mu.Unlock()
		return nil
	case errors.Is(err, kerr.InvalidReplicationFactor), errors.Is(err, kerr.InvalidConfig),
		errors.Is(err, kerr.PolicyViolation), errors.Is(err, kerr.InvalidTopicException):
		return fmt.Errorf("Unable to create topic '%s': %w", topic, err)
	}
	if ctx.Err() == nil {
		c.log.Warn("creating the checkpoints topic failed; will retry", "topic", topic, "err", err)
	}
	return nil
}

// createCompactedTopic creates a single-partition compacted topic; one
// that exists already is fine.
func createCompactedTopic(ctx context.Context, adm *kadm.Client, topic string, rf int16) error {
	compact := "compact"
	resp, err := adm.CreateTopic(ctx, 1, rf, map[string]*string{"cleanup.policy": &compact}, topic)
	if err != nil {
		return err
	}
	if resp.Err != nil && !errors.Is(resp.Err, kerr.TopicAlreadyExists) {
		if resp.ErrMessage != "" {
			return fmt.Errorf("%w: %s", resp.Err, resp.ErrMessage)
		}
		return resp.Err
	}
	return nil
}
