package heartbeat

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/plugins"
	"github.com/fjordhq/fjord/mirror/mirrorconfig"
)

// Connector is MirrorHeartbeatConnector: it creates the heartbeats topic
// on the target and runs a single task. It ignores "enabled" (a pair that
// does not replicate still emits heartbeats, which is why MM2 runs it);
// emit.heartbeats.enabled = false gives it no task.
type Connector struct {
	s     *settings
	props map[string]string

	cancel context.CancelFunc
	done   chan struct{}
}

var (
	_ connect.SourceConnector      = (*Connector)(nil)
	_ connect.SourceOffsetsAlterer = (*Connector)(nil)
	_ connect.Versioned            = (*Connector)(nil)
)

func (c *Connector) Config() *connect.ConfigDef  { return ConfigDef() }
func (c *Connector) NewTask() connect.SourceTask { return &Task{} }
func (c *Connector) Version() string             { return plugins.DefaultVersion }

// Start creates the heartbeats topic (unless heartbeats are off) in the
// background, as MM2's scheduler does: the herder's goroutine is not held
// up by a target that cannot be reached, and a failure is logged, not
// fatal (the task's producer can still write to a topic the broker
// creates or someone else did).
func (c *Connector) Start(ctx context.Context, props map[string]string) error {
	s, err := parse(props)
	if err != nil {
		return err
	}
	c.s, c.props = s, maps.Clone(props)
	if s.interval() < 0 {
		// MM2 creates the topic even when nothing will be written to it;
		// an empty topic (and, on small clusters, an error about its
		// replication factor) helps nobody.
		return nil
	}
	bg, cancel := context.WithCancel(context.Background())
	c.cancel, c.done = cancel, make(chan struct{})
	go func() {
		defer close(c.done)
		c.createTopic(bg)
	}()
	return nil
}

func (c *Connector) Stop() error {
	if c.cancel != nil {
		c.cancel()
		<-c.done
	}
	return nil
}

// TaskConfigs is one task with the connector's config, or none when
// heartbeats are off.
func (c *Connector) TaskConfigs(maxTasks int) ([]map[string]string, error) {
	if c.s.interval() < 0 {
		return []map[string]string{}, nil
	}
	return []map[string]string{maps.Clone(c.props)}, nil
}

// createTopic is MirrorUtils.createSinglePartitionCompactedTopic: one
// partition, compacted (the key is the pair of aliases, so compaction
// keeps each pair's latest heartbeat), heartbeats.topic.replication.factor
// replicas, retried within admin.timeout.ms while the target cannot be
// reached.
func (c *Connector) createTopic(ctx context.Context) {
	topic := c.s.heartbeatsTopic()
	log := slog.Default().With("connector", c.s.ConnectorName(), "topic", topic)
	ctx, cancel := context.WithTimeout(ctx, c.s.AdminTimeout())
	defer cancel()
	start := time.Now()
	err := retry(ctx, func() (bool, error) { return c.tryCreate(ctx, topic) })
	switch {
	case err == nil:
		log.Info("creating internal topics took", "ms", time.Since(start).Milliseconds())
	case ctx.Err() != nil && context.Cause(ctx) != context.Canceled:
		log.Error(fmt.Sprintf("Timed out while checking for or creating topic '%s'.", topic), "err", err)
	case ctx.Err() == nil:
		log.Error(fmt.Sprintf("Unable to create topic '%s'", topic), "err", err)
	}
}

// tryCreate makes one attempt; done is false when the attempt should be
// repeated (the cluster was not reachable).
func (c *Connector) tryCreate(ctx context.Context, topic string) (done bool, err error) {
	adm, closeAdm, err := mirrorconfig.Admin(c.props, mirrorconfig.Target)
	if err != nil {
		return true, err
	}
	defer closeAdm()
	compact := "compact"
	resp, err := adm.CreateTopics(ctx, 1, c.s.replicationFactor(), map[string]*string{"cleanup.policy": &compact}, topic)
	if err != nil {
		return false, err
	}
	return true, createResult(resp, topic)
}

// createResult reads a CreateTopics answer as MM2 does: a topic that
// exists, or that the brokers will not let us create (no CreateTopics
// support, no authorization), is left to exist or be auto-created.
func createResult(resp kadm.CreateTopicResponses, topic string) error {
	r, ok := resp[topic]
	if !ok {
		return fmt.Errorf("no answer for topic %s", topic)
	}
	switch r.Err {
	case nil:
		slog.Info(fmt.Sprintf("Created topic '%s'", topic))
		return nil
	case kerr.TopicAlreadyExists:
		slog.Debug(fmt.Sprintf("Unable to create topic '%s' since it already exists.", topic))
		return nil
	case kerr.UnsupportedVersion, kerr.TopicAuthorizationFailed, kerr.ClusterAuthorizationFailed:
		slog.Debug(fmt.Sprintf("Not able to create topic '%s' (%v). Falling back to assume topic exists or will be auto-created by the broker.", topic, r.Err))
		return nil
	}
	return r.Err
}

// retry calls fn until it is done or ctx ends, waiting a little longer
// each time.
func retry(ctx context.Context, fn func() (bool, error)) error {
	wait := 100 * time.Millisecond
	for {
		done, err := fn()
		if done {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// AlterOffsets accepts the offsets the task writes — partition
// {sourceClusterAlias, targetClusterAlias}, offset {offset: 0} — and any
// tombstone, as MirrorHeartbeatConnector.alterOffsets. The task never
// reads them.
func (c *Connector) AlterOffsets(_ map[string]string, offsets []connect.SourcePartitionOffset) (bool, error) {
	for _, po := range offsets {
		if po.Offset == nil {
			continue
		}
		if po.Partition == nil {
			return false, fmt.Errorf("Source partitions may not be null")
		}
		for _, k := range []string{SourceClusterAliasKey, TargetClusterAliasKey} {
			v, ok := po.Partition[k]
			if !ok {
				return false, fmt.Errorf("Source partition %v is missing the '%s' key, which is required", po.Partition, k)
			}
			if _, ok := v.(string); !ok {
				return false, fmt.Errorf("Source partition %v has an invalid value %v for the '%s' key, which must be a string", po.Partition, v, k)
			}
		}
		v, ok := po.Offset[OffsetKey]
		if !ok {
			return false, fmt.Errorf("Source offset %v for source partition %v is missing the '%s' key, which is required", po.Offset, po.Partition, OffsetKey)
		}
		n, ok := connect.OffsetLong(v)
		if !ok {
			return false, fmt.Errorf("Source offset %v for source partition %v has an invalid value %v for the '%s' key, which must be an integer", po.Offset, po.Partition, v, OffsetKey)
		}
		if n != 0 {
			return false, fmt.Errorf("Source offset %v for source partition %v has an invalid value %v for the '%s' key; the only accepted value is 0", po.Offset, po.Partition, v, OffsetKey)
		}
	}
	return true, nil
}
