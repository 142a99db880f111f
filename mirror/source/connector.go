package source

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/plugins"
	"github.com/fjordhq/fjord/connect/runtime"
	"github.com/fjordhq/fjord/mirror/filter"
	"github.com/fjordhq/fjord/mirror/mirrorconfig"
	"github.com/fjordhq/fjord/mirror/policy"
)

// Class names the connector answers to.
const (
	ConnectorClass = "org.apache.kafka.connect.mirror.MirrorSourceConnector"
	Alias          = "mirror-source"
)

// Connector is MirrorSourceConnector. It keeps the set of source
// topic-partitions to replicate (knownSource) and the partition counts of
// their remote topics (knownTarget), refreshed every
// refresh.topics.interval.seconds, and asks for new task configs when
// the source's set changes. It copies topic configs every
// sync.topic.configs.interval.seconds and topic ACLs every
// sync.topic.acls.interval.seconds (acls.go).
type Connector struct {
	cctx     connect.ConnectorContext
	s        *settings
	topics   filter.TopicFilter
	cfgs     filter.ConfigPropertyFilter
	src, dst *admin
	closers  []func()
	log      *slog.Logger

	mu          sync.Mutex
	knownSource []connect.TopicPartition
	knownTarget map[string]int32 // remote topic → partitions, for known source topics
	assigned    []connect.TopicPartition
	lastSynced  map[string]map[string]string // identity-named topic → config fingerprint at the last sync
	syncsReady  bool                         // the offset-syncs topic exists (or is not wanted)
	loaded      bool                         // the first listing succeeded

	// noACLAuthorizer: the source answered SECURITY_DISABLED once
	// (logged at info level that time only).
	noACLAuthorizer atomic.Bool

	cancel context.CancelFunc
	done   chan struct{}
}

var (
	_ connect.SourceConnector            = (*Connector)(nil)
	_ connect.ContextualConnector        = (*Connector)(nil)
	_ connect.ConfigValidator            = (*Connector)(nil)
	_ connect.ExactlyOnceSourceConnector = (*Connector)(nil)
	_ connect.SourceOffsetsAlterer       = (*Connector)(nil)
	_ connect.Versioned                  = (*Connector)(nil)
)

func (c *Connector) Initialize(ctx connect.ConnectorContext) { c.cctx = ctx }
func (c *Connector) Config() *connect.ConfigDef              { return ConfigDef() }
func (c *Connector) NewTask() connect.SourceTask             { return &Task{} }
func (c *Connector) Version() string                         { return plugins.DefaultVersion }

// Start creates the offset-syncs topic, lists the source's topics and
// creates the missing remote topics, then keeps refreshing in the
// background. As in MM2, a cluster that cannot be reached does not fail
// the connector: the steps are retried. A replication factor the cluster
// cannot have (for the offset-syncs topic or the remote topics) does,
// since retrying cannot fix it.
func (c *Connector) Start(ctx context.Context, props map[string]string) error {
	s, err := parseSettings(props)
	if err != nil {
		return err
	}
	c.s = s
	c.lastSynced = map[string]map[string]string{}
	c.log = slog.With("connector", s.name, "flow", s.sourceAlias+"->"+s.targetAlias)
	if !s.enabled {
		c.log.Info("MirrorSourceConnector is disabled (enabled=false)")
		return nil
	}
	if c.topics, err = filter.NewTopicFilter(props); err != nil {
		return err
	}
	if c.cfgs, err = filter.NewConfigPropertyFilter(props); err != nil {
		return err
	}
	srcCl, err := client(props, mirrorconfig.Source, runtime.AdminClient, "replication-source-admin")
	if err != nil {
		return fmt.Errorf("source admin client: %w", err)
	}
	c.closers = append(c.closers, srcCl.Close)
	dstCl, err := client(props, mirrorconfig.Target, runtime.AdminClient, "replication-target-admin")
	if err != nil {
		c.closeClients()
		return fmt.Errorf("target admin client: %w", err)
	}
	c.closers = append(c.closers, dstCl.Close)
	c.src = &admin{alias: s.sourceAlias, cl: srcCl}
	c.dst = &admin{alias: s.targetAlias, cl: dstCl}

	start := time.Now()
	if err := c.createOffsetSyncsTopic(ctx); err != nil {
		c.closeClients()
		return err
	}
	if c.step(ctx, "loading initial set of topic-partitions", c.loadTopicPartitions) == nil {
		if err := c.step(ctx, "creating downstream topic-partitions", c.computeAndCreateTopicPartitions); isFatal(err) {
			c.closeClients()
			return err
		}
	}
	c.mu.Lock()
	n := len(c.knownSource)
	c.mu.Unlock()
	c.log.Info("Started MirrorSourceConnector", "topic_partitions", n, "took", time.Since(start))

	bg, cancel := context.WithCancel(context.Background())
	c.cancel, c.done = cancel, make(chan struct{})
	go c.run(bg)
	return nil
}

// step runs one of MM2's scheduled tasks within admin.timeout.ms,
// logging a failure as MM2's Scheduler does.
func (c *Connector) step(ctx context.Context, what string, fn func(context.Context) error) error {
	sctx, cancel := context.WithTimeout(ctx, c.s.adminTimeout)
	defer cancel()
	start := time.Now()
	err := fn(sctx)
	switch {
	case err == nil:
		c.log.Debug("MirrorSourceConnector task done", "task", what, "took", time.Since(start))
	case ctx.Err() == nil:
		c.log.Error("MirrorSourceConnector task failed", "task", what, "err", err)
	}
	return err
}

// stepInBackground is step for the scheduler: a refusal retrying cannot
// fix fails the connector.
func (c *Connector) stepInBackground(ctx context.Context, what string, fn func(context.Context) error) {
	if err := c.step(ctx, what, fn); isFatal(err) && c.cctx != nil {
		c.cctx.RaiseError(err)
	}
}

// fatalError is a refusal from a cluster that retrying cannot fix, such
// as a replication factor above the target's broker count: MM2 logs it
// and replicates nothing for the topic, Fjord fails the connector so that
// its status says why.
type fatalError struct{ err error }

func (e *fatalError) Error() string { return e.err.Error() }
func (e *fatalError) Unwrap() error { return e.err }

func isFatal(err error) bool {
	var f *fatalError
	return errors.As(err, &f)
}

// run is MM2's scheduler: refresh topics every
// refresh.topics.interval.seconds (first after one interval), sync topic
// ACLs every sync.topic.acls.interval.seconds and topic configs every
// sync.topic.configs.interval.seconds (both first now). What
// did not succeed — the offset-syncs topic, the first listing, remote
// topics or partitions not created yet (a target that was down) — is
// retried in between, backing off from 1 s to a minute, rather than
// waiting for the next refresh.
func (c *Connector) run(ctx context.Context) {
	defer close(c.done)
	timer := func(d time.Duration) <-chan time.Time {
		if d < 0 {
			return nil // disabled
		}
		return time.After(d)
	}
	refresh := timer(c.s.refreshInterval)
	var syncCfg, syncACLs <-chan time.Time
	if c.s.syncConfigsInterval >= 0 {
		syncCfg = time.After(0)
	}
	if c.s.syncACLsInterval >= 0 {
		syncACLs = time.After(0)
	}
	const firstBackoff, maxBackoff = time.Second, time.Minute
	backoff := firstBackoff
	var retry <-chan time.Time
	for {
		if retry == nil && !c.ready() {
			retry = time.After(backoff)
			backoff = min(backoff*2, maxBackoff)
		}
		select {
		case <-ctx.Done():
			return
		case <-refresh:
			c.stepInBackground(ctx, "refreshing topics", c.refreshTopicPartitions)
			refresh = timer(c.s.refreshInterval)
		case <-syncACLs:
			c.stepInBackground(ctx, "syncing topic ACLs", c.syncTopicACLs)
			syncACLs = timer(c.s.syncACLsInterval)
		case <-syncCfg:
			c.stepInBackground(ctx, "syncing topic configs", c.syncTopicConfigs)
			syncCfg = timer(c.s.syncConfigsInterval)
		case <-retry:
			retry = nil
			if err := c.createOffsetSyncsTopic(ctx); err != nil && c.cctx != nil {
				c.cctx.RaiseError(err)
			}
			c.stepInBackground(ctx, "refreshing topics", c.refreshTopicPartitions)
			if c.ready() {
				backoff = firstBackoff
			}
		}
	}
}

// ready reports that nothing is left to retry: the offset-syncs topic
// exists, the source was listed and every known topic-partition has its
// remote partition.
func (c *Connector) ready() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.syncsReady && c.loaded && len(c.assignableLocked()) == len(c.knownSource)
}

// createOffsetSyncsTopic creates the single-partition compacted
// offset-syncs topic where offset-syncs.topic.location says. Only a
// refusal that retrying cannot fix is returned; others are logged.
func (c *Connector) createOffsetSyncsTopic(ctx context.Context) error {
	c.mu.Lock()
	done := c.syncsReady
	c.mu.Unlock()
	if done {
		return nil
	}
	if !c.s.emitOffsetSyncs {
		c.mu.Lock()
		c.syncsReady = true
		c.mu.Unlock()
		return nil
	}
	a := c.src
	if c.s.offsetSyncsLocation == mirrorconfig.Target {
		a = c.dst
	}
	topic := c.s.offsetSyncsTopic()
	sctx, cancel := context.WithTimeout(ctx, c.s.adminTimeout)
	defer cancel()
	err := a.createCompactedTopic(sctx, topic, c.s.offsetSyncsRF)
	switch {
	case err == nil:
		c.mu.Lock()
		c.syncsReady = true
		c.mu.Unlock()
		c.log.Info("Offset-syncs topic ready", "topic", topic, "cluster", a.alias)
		return nil
	case errors.Is(err, kerr.InvalidReplicationFactor), errors.Is(err, kerr.InvalidConfig),
		errors.Is(err, kerr.PolicyViolation), errors.Is(err, kerr.InvalidTopicException):
		return &fatalError{err}
	}
	if ctx.Err() == nil {
		c.log.Error("creating upstream offset-syncs topic failed; will retry", "topic", topic, "cluster", a.alias, "err", err)
	}
	return nil
}

// shouldReplicateTopic is MirrorSourceConnector.shouldReplicateTopic:
// the filter's topics and the heartbeats topics, never an internal topic
// nor one that came from the target.
func (c *Connector) shouldReplicateTopic(topic string) bool {
	p := c.s.policy
	return (c.topics.ShouldReplicateTopic(topic) || (c.s.heartbeatsReplication && p.IsHeartbeatsTopic(topic))) &&
		!p.IsInternalTopic(topic) && !policy.IsCycle(p, topic, c.s.targetAlias)
}

func (c *Connector) formatRemoteTopic(topic string) string {
	return c.s.policy.FormatRemoteTopic(c.s.sourceAlias, topic)
}

// findSourceTopicPartitions lists the source's topic-partitions to
// replicate.
func (c *Connector) findSourceTopicPartitions(ctx context.Context) ([]connect.TopicPartition, error) {
	all, err := c.src.topicPartitions(ctx)
	if err != nil {
		return nil, err
	}
	keep := map[string]bool{}
	out := all[:0]
	for _, tp := range all {
		ok, seen := keep[tp.Topic]
		if !seen {
			ok = c.shouldReplicateTopic(tp.Topic)
			keep[tp.Topic] = ok
		}
		if ok {
			out = append(out, tp)
		}
	}
	return out, nil
}

// findTargetTopics returns the partition counts of the remote topics of
// the given source topics that exist on the target. (MM2 lists the target
// topics whose name says they came from the source; asking for the remote
// names directly works for identity naming too, where names say nothing.)
func (c *Connector) findTargetTopics(ctx context.Context, source []connect.TopicPartition) (map[string]int32, error) {
	all, err := c.dst.topicPartitions(ctx)
	if err != nil {
		return nil, err
	}
	have := partitionCounts(all)
	out := map[string]int32{}
	for t := range partitionCounts(source) {
		r := c.formatRemoteTopic(t)
		if n, ok := have[r]; ok {
			out[r] = n
		}
	}
	return out, nil
}

func (c *Connector) loadTopicPartitions(ctx context.Context) error {
	source, err := c.findSourceTopicPartitions(ctx)
	if err != nil {
		return err
	}
	target, err := c.findTargetTopics(ctx, source)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.knownSource, c.knownTarget, c.loaded = source, target, true
	c.mu.Unlock()
	return nil
}

// refreshTopicPartitions is MM2's: when source topic-partitions appeared
// or went, or some are missing on the target, create what is missing,
// and reconfigure the tasks when the partitions they should have changed.
func (c *Connector) refreshTopicPartitions(ctx context.Context) error {
	source, err := c.findSourceTopicPartitions(ctx)
	if err != nil {
		return err
	}
	target, err := c.findTargetTopics(ctx, source)
	if err != nil {
		return err
	}
	var missing int
	for _, tp := range source {
		if n, ok := target[c.formatRemoteTopic(tp.Topic)]; !ok || tp.Partition >= n {
			missing++
		}
	}
	c.mu.Lock()
	known := c.knownSource
	changed := !sameSet(known, source)
	c.knownSource, c.knownTarget, c.loaded = source, target, true
	c.mu.Unlock()
	var createErr error
	if changed || missing > 0 {
		c.log.Info("Topic-partitions changed",
			"new_on_"+c.s.sourceAlias, diffCount(source, known), "deleted_on_"+c.s.sourceAlias, diffCount(known, source),
			"missing_on_"+c.s.targetAlias, missing)
		createErr = c.computeAndCreateTopicPartitions(ctx)
	}
	c.mu.Lock()
	reconfigure := !sameSet(c.assigned, c.assignableLocked())
	c.mu.Unlock()
	if reconfigure && c.cctx != nil {
		c.cctx.RequestTaskReconfiguration()
	}
	return createErr
}

// assignableLocked are the known source topic-partitions whose remote
// partition exists. Tasks get only those: a record for a remote
// partition that does not exist would let the producer create the topic
// with the broker's defaults or land in another partition, so the others
// wait on the source until the refresh has created them. Call with c.mu
// held.
func (c *Connector) assignableLocked() []connect.TopicPartition {
	out := make([]connect.TopicPartition, 0, len(c.knownSource))
	for _, tp := range c.knownSource {
		if n, ok := c.knownTarget[c.formatRemoteTopic(tp.Topic)]; ok && tp.Partition < n {
			out = append(out, tp)
		}
	}
	return out
}

// diffCount counts the topic-partitions of a not in b.
func diffCount(a, b []connect.TopicPartition) int {
	in := make(map[connect.TopicPartition]bool, len(b))
	for _, tp := range b {
		in[tp] = true
	}
	n := 0
	for _, tp := range a {
		if !in[tp] {
			n++
		}
	}
	return n
}

// computeAndCreateTopicPartitions creates the remote topics that do not
// exist, with the source's partition count and configs, and adds
// partitions to remote topics that have fewer than their source.
func (c *Connector) computeAndCreateTopicPartitions(ctx context.Context) error {
	c.mu.Lock()
	counts := partitionCounts(c.knownSource)
	target := maps.Clone(c.knownTarget)
	c.mu.Unlock()
	var create []string
	grow := map[string]int32{}
	for _, t := range sortedKeys(counts) {
		r := c.formatRemoteTopic(t)
		have, ok := target[r]
		switch {
		case !ok:
			create = append(create, t)
		case counts[t] > have:
			grow[r] = counts[t]
		}
	}
	if len(create) > 0 {
		if err := c.createNewTopics(ctx, create, counts); err != nil {
			return err
		}
	}
	if len(grow) > 0 {
		errs, err := c.dst.increasePartitions(ctx, grow)
		if err != nil {
			return err
		}
		for _, r := range sortedKeys(errs) {
			switch err := errs[r]; {
			case err == nil:
				c.log.Info("Increased size of remote topic", "topic", r, "partitions", grow[r])
				c.noteTarget(r, grow[r])
			case errors.Is(err, kerr.InvalidPartitions):
				// Normal: another worker or the user got there first.
			default:
				c.log.Warn("Could not create topic-partitions", "topic", r, "err", err)
			}
		}
	}
	return nil
}

func (c *Connector) createNewTopics(ctx context.Context, sourceTopics []string, counts map[string]int32) error {
	configs, err := c.src.topicConfigs(ctx, sourceTopics)
	if err != nil {
		return err
	}
	topics := make([]newTopic, 0, len(sourceTopics))
	for _, t := range sourceTopics {
		entries, ok := configs[t]
		if !ok {
			continue // deleted since it was listed
		}
		topics = append(topics, newTopic{name: c.formatRemoteTopic(t), partitions: counts[t], rf: c.s.replicationFactor,
			configs: configMap(c.targetConfig(entries, false))})
	}
	errs, err := c.dst.createTopics(ctx, topics)
	if err != nil {
		return err
	}
	// Tasks get a topic's partitions once it is noted (assignableLocked):
	// wait the moment the target's metadata may take to show it, so that
	// their producers find it at their first look.
	created := map[string]int32{}
	for _, t := range topics {
		if errs[t.name] == nil {
			created[t.name] = t.partitions
		}
	}
	if len(created) > 0 {
		if late := c.dst.awaitTopics(ctx, created, 2*time.Second); len(late) > 0 {
			c.log.Info("Remote topics not in the target's metadata yet", "topics", late)
		}
	}
	var fatal error
	for _, t := range topics {
		err := errs[t.name]
		switch {
		case err == nil:
			c.log.Info("Created remote topic", "topic", t.name, "partitions", t.partitions)
			c.noteTarget(t.name, t.partitions)
		case errors.Is(err, kerr.InvalidReplicationFactor):
			// Every topic would fail alike: a config problem, not the topic's.
			fatal = &fatalError{fmt.Errorf("cannot create remote topic %s on cluster %s with %s=%d: %w",
				t.name, c.s.targetAlias, ReplicationFactorConfig, t.rf, err)}
		default:
			// The topic's partitions wait on the source (assignableLocked)
			// and creation is tried again at the next refresh.
			c.log.Error("Could not create remote topic", "topic", t.name, "err", err)
		}
	}
	return fatal
}

// noteTarget records a remote topic's partition count after creating it.
func (c *Connector) noteTarget(remote string, n int32) {
	c.mu.Lock()
	if c.knownTarget == nil {
		c.knownTarget = map[string]int32{}
	}
	c.knownTarget[remote] = max(c.knownTarget[remote], n)
	c.mu.Unlock()
}

// TaskConfigs deals the known topic-partitions whose remote partition
// exists round robin over at most maxTasks tasks; each task config is the connector's with
// task.assigned.partitions and task.index added.
func (c *Connector) TaskConfigs(maxTasks int) ([]map[string]string, error) {
	if c.s == nil || !c.s.enabled {
		return nil, nil
	}
	c.mu.Lock()
	assign := c.assignableLocked()
	c.assigned = assign
	c.mu.Unlock()
	groups := roundRobin(assign, maxTasks)
	out := make([]map[string]string, len(groups))
	for i, g := range groups {
		tc := maps.Clone(c.s.props)
		tc[TaskTopicPartitionsConfig] = encodeAssignment(g)
		tc[mirrorconfig.TaskIndex] = strconv.Itoa(i)
		out[i] = tc
	}
	return out, nil
}

func (c *Connector) Stop() error {
	if c.cancel != nil {
		c.cancel()
		<-c.done
		c.cancel = nil
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

// Validate is the ConfigDef's validation with MM2's two checks across
// keys: exactly-once needs a read_committed source consumer, and offset
// syncs settings need offset syncs on.
func (c *Connector) Validate(props map[string]string) []connect.ConfigValue {
	values := ConfigDef().Validate(props)
	addError := func(name, msg string) {
		for i := range values {
			if values[i].Name == name {
				values[i].Errors = append(values[i].Errors, msg)
				return
			}
		}
		var v any
		if raw, ok := props[name]; ok {
			v = raw
		}
		values = append(values, connect.ConfigValue{Name: name, Value: v, Errors: []string{msg}, Visible: true})
	}
	if props[exactlyOnceSupportConfig] == "required" && !readCommitted(props) {
		addError(exactlyOnceSupportConfig, "MirrorSourceConnector can only provide exactly-once guarantees when its source consumer is configured with "+
			"isolation.level set to 'read_committed'; otherwise, records from aborted and uncommitted transactions will be replicated from the "+
			"source cluster to the target cluster.")
	}
	if props[mirrorconfig.EmitOffsetSyncsEnabled] == "false" {
		for k := range props {
			if strings.HasPrefix(k, mirrorconfig.OffsetSyncsClientRolePrefix) || strings.HasPrefix(k, mirrorconfig.OffsetSyncsTopicConfigPrefix) {
				addError(mirrorconfig.EmitOffsetSyncsEnabled, "MirrorSourceConnector can't setup offset-syncs feature while "+
					mirrorconfig.EmitOffsetSyncsEnabled+" set to false")
				break
			}
		}
	}
	return values
}

func readCommitted(props map[string]string) bool {
	return sourceConsumerProp(props, "isolation.level") == "read_committed"
}

// ExactlyOnceSupport is SUPPORTED when the source consumer reads only
// committed records, as MM2's.
func (c *Connector) ExactlyOnceSupport(props map[string]string) connect.ExactlyOnceSupport {
	if readCommitted(props) {
		return connect.ExactlyOnceSupported
	}
	return connect.ExactlyOnceUnsupported
}

// AlterOffsets checks the shape of each offset, as MM2's: the source
// consumer commits nothing, so nothing else needs changing.
func (c *Connector) AlterOffsets(_ map[string]string, offsets []connect.SourcePartitionOffset) (bool, error) {
	for _, po := range offsets {
		if err := checkAlteredOffset(po); err != nil {
			return false, err
		}
	}
	return true, nil
}
