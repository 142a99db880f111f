package source

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/fjordhq/fjord/connect"
)

// Class names the connector answers to.
const (
	ConnectorClass          = "io.fjord.connect.s3.source.S3SourceConnector"
	ConfluentConnectorClass = "io.confluent.connect.s3.source.S3SourceConnector"
	Alias                   = "s3-source"
)

// Connector finds the Kafka partitions stored in the bucket and gives
// each task a share of them. It lists again every s3.poll.interval.ms
// and asks for new task configs when the set of partitions changed.
type Connector struct {
	cctx      connect.ConnectorContext
	props     map[string]string
	s         *settings
	n         naming
	b         bucket
	newBucket bucketFactory // tests replace it

	mu       sync.Mutex
	found    map[connect.TopicPartition]bool // as listed last
	assigned map[connect.TopicPartition]bool // as the last TaskConfigs split them

	cancel context.CancelFunc
	done   chan struct{}
}

var (
	_ connect.SourceConnector            = (*Connector)(nil)
	_ connect.ContextualConnector        = (*Connector)(nil)
	_ connect.ConfigValidator            = (*Connector)(nil)
	_ connect.ExactlyOnceSourceConnector = (*Connector)(nil)
	_ connect.SourceOffsetsAlterer       = (*Connector)(nil)
)

func (c *Connector) Initialize(ctx connect.ConnectorContext) { c.cctx = ctx }

func (c *Connector) Config() *connect.ConfigDef { return ConfigDef() }

func (c *Connector) NewTask() connect.SourceTask { return &Task{newBucket: c.newBucket} }

// Validate is the ConfigDef's validation with the storage, format and
// partitioner packages' checks across keys added.
func (c *Connector) Validate(props map[string]string) []connect.ConfigValue { return validate(props) }

// ExactlyOnceSupport is SUPPORTED: a task re-reads exactly the records
// after its committed offset.
func (c *Connector) ExactlyOnceSupport(map[string]string) connect.ExactlyOnceSupport {
	return connect.ExactlyOnceSupported
}

// AlterOffsets accepts offsets of the shape tasks write (or tombstones).
func (c *Connector) AlterOffsets(_ map[string]string, offsets []connect.SourcePartitionOffset) (bool, error) {
	for _, po := range offsets {
		if err := checkOffset(po); err != nil {
			return false, err
		}
	}
	return true, nil
}

func (c *Connector) Start(ctx context.Context, props map[string]string) error {
	s, err := parseSettings(props)
	if err != nil {
		return fmt.Errorf("S3 source connector config: %w", err)
	}
	return c.start(ctx, s, props)
}

// start runs the connector on parsed settings (the tests' entry).
func (c *Connector) start(ctx context.Context, s *settings, props map[string]string) error {
	var err error
	c.props, c.s, c.n = maps.Clone(props), s, namingOf(s)
	if c.newBucket == nil {
		c.newBucket = openStore
	}
	if c.b, err = c.newBucket(ctx, s); err != nil {
		return fmt.Errorf("S3 source connector: %w", err)
	}
	// A first listing now, so the first TaskConfigs has the partitions;
	// if S3 cannot be reached the monitor keeps trying.
	found, err := partitionsIn(ctx, c.b, c.n, s.wants)
	if err != nil {
		slog.Warn("S3 source: cannot list the bucket yet, retrying in the background", "err", err)
	}
	c.found = found
	mctx, cancel := context.WithCancel(context.Background())
	c.cancel, c.done = cancel, make(chan struct{})
	go c.monitor(mctx, err != nil)
	slog.Info("S3 source connector started", "prefix", c.n.root(), "partitions", len(found))
	return nil
}

// monitor lists the bucket every poll interval (after a failure, sooner,
// with backoff) and asks for a reconfiguration when the partitions found
// differ from those the tasks were given.
func (c *Connector) monitor(ctx context.Context, failing bool) {
	defer close(c.done)
	failures := 0
	if failing {
		failures = 1
	}
	for {
		wait := c.s.pollInterval
		if failures > 0 {
			wait = min(minBackoff<<min(failures-1, 16), maxBackoff, c.s.pollInterval)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		found, err := partitionsIn(ctx, c.b, c.n, c.s.wants)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			failures++
			slog.Warn("S3 source: listing the bucket failed, retrying", "err", err, "attempt", failures)
			continue
		}
		failures = 0
		c.mu.Lock()
		c.found = found
		changed := !maps.Equal(found, c.assigned)
		c.mu.Unlock()
		if changed && c.cctx != nil {
			slog.Info("S3 source: the stored partitions changed, reconfiguring the tasks", "partitions", len(found))
			c.cctx.RequestTaskReconfiguration()
		}
	}
}

// TaskConfigs splits the partitions found over at most maxTasks tasks,
// round robin in (topic, partition) order; no partition, no task.
func (c *Connector) TaskConfigs(maxTasks int) ([]map[string]string, error) {
	c.mu.Lock()
	found := maps.Clone(c.found)
	c.assigned = found
	c.mu.Unlock()
	groups := split(slices.Collect(maps.Keys(found)), maxTasks)
	out := make([]map[string]string, len(groups))
	for i, g := range groups {
		b, err := json.Marshal(g)
		if err != nil {
			return nil, err
		}
		tc := maps.Clone(c.props)
		tc[taskPartitionsConfig] = string(b)
		out[i] = tc
	}
	return out, nil
}

// split deals the partitions, sorted, to min(n, len) groups in turn.
func split(tps []connect.TopicPartition, n int) [][]connect.TopicPartition {
	slices.SortFunc(tps, func(a, b connect.TopicPartition) int {
		if a.Topic != b.Topic {
			if a.Topic < b.Topic {
				return -1
			}
			return 1
		}
		return int(a.Partition) - int(b.Partition)
	})
	n = min(n, len(tps))
	if n <= 0 {
		return nil
	}
	out := make([][]connect.TopicPartition, n)
	for i, tp := range tps {
		out[i%n] = append(out[i%n], tp)
	}
	return out
}

func (c *Connector) Stop() error {
	if c.cancel != nil {
		c.cancel()
		<-c.done
	}
	return nil
}
