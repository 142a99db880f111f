package nullsink

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/plugins"
)

// Class names and config keys.
const (
	ConnectorClass = "io.fjord.connect.NullSinkConnector"
	Alias          = "NullSink"
	// CommitEveryConfig is how many records a task receives between the
	// offset commits it asks for (0: only the worker's own schedule).
	CommitEveryConfig = "commit.every.records"
)

func init() {
	plugins.Register(plugins.Plugin{
		Class:   ConnectorClass,
		Aliases: []string{Alias, "NullSinkConnector"},
		Kind:    plugins.Sink,
		New:     func() any { return &Connector{} },
	})
}

// ConfigDef returns the null sink's own keys (the runtime adds topics,
// converters and the other common ones).
func ConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: CommitEveryConfig, Type: connect.TypeLong, Default: int64(0), Validator: connect.AtLeast(0),
			Importance: connect.Medium,
			Doc: "Ask the runtime to commit the task's consumer offsets each time the task has received this many more records, " +
				"so that progress and completion show in the consumer group (connect-<name>) without waiting for " +
				"offset.flush.interval.ms. 0 leaves commits to the worker's schedule."})
}

// Connector is the null sink connector.
type Connector struct {
	props map[string]string
}

var (
	_ connect.SinkConnector      = (*Connector)(nil)
	_ connect.SinkOffsetsAlterer = (*Connector)(nil)
)

func (c *Connector) Config() *connect.ConfigDef { return ConfigDef() }

func (c *Connector) Start(ctx context.Context, props map[string]string) error {
	if _, err := ConfigDef().Parse(props); err != nil {
		return fmt.Errorf("null sink connector config: %w", err)
	}
	c.props = maps.Clone(props)
	return nil
}

// TaskConfigs gives every task the connector's config: tasks share the
// topics' partitions through the consumer group, and each needs the
// connector's name for Received.
func (c *Connector) TaskConfigs(maxTasks int) ([]map[string]string, error) {
	out := make([]map[string]string, maxTasks)
	for i := range out {
		out[i] = maps.Clone(c.props)
	}
	return out, nil
}

func (c *Connector) Stop() error { return nil }

func (c *Connector) NewTask() connect.SinkTask { return &Task{} }

// AlterOffsets accepts anything: the sink keeps no offsets of its own.
func (c *Connector) AlterOffsets(map[string]string, map[connect.TopicPartition]*int64) (bool, error) {
	return true, nil
}

// counters holds one count per connector name, shared by the tasks of
// that connector in this process and kept after they stop, so that a
// test can read the total after a restart or a rebalance.
var counters sync.Map // connector name → *atomic.Int64

func counterFor(connector string) *atomic.Int64 {
	c, _ := counters.LoadOrStore(connector, new(atomic.Int64))
	return c.(*atomic.Int64)
}

// Received returns how many records the tasks of the named connector
// have been given in this process (redeliveries after a rewind count
// again).
func Received(connector string) int64 {
	if c, ok := counters.Load(connector); ok {
		return c.(*atomic.Int64).Load()
	}
	return 0
}

// Task discards records, counting them.
type Task struct {
	tctx     connect.SinkTaskContext
	name     string
	every    int64
	total    *atomic.Int64 // the connector's count
	received int64         // this task's own
}

var _ connect.ContextualSinkTask = (*Task)(nil)

func (t *Task) Initialize(ctx connect.SinkTaskContext) { t.tctx = ctx }

func (t *Task) Start(ctx context.Context, props map[string]string) error {
	cfg, err := ConfigDef().Parse(props)
	if err != nil {
		return fmt.Errorf("null sink task config: %w", err)
	}
	t.every = cfg.Long(CommitEveryConfig)
	t.name = props["name"]
	t.total = counterFor(t.name)
	return nil
}

func (t *Task) Open([]connect.TopicPartition) error { return nil }

// Put counts the batch and asks for a commit when the count crossed a
// multiple of commit.every.records. The runtime commits right after Put
// returns (RequestCommit is read before its next poll), so the commit
// covers this batch.
func (t *Task) Put(ctx context.Context, records []*connect.SinkRecord) error {
	n := int64(len(records))
	if n == 0 {
		return nil
	}
	before := t.received
	t.received += n
	t.total.Add(n)
	if before == 0 {
		slog.Info("null sink task received its first records", "connector", t.name, "records", n)
	}
	if t.every > 0 && t.tctx != nil && before/t.every != t.received/t.every {
		t.tctx.RequestCommit()
	}
	return nil
}

// PreCommit vouches for everything put: nothing is buffered.
func (t *Task) PreCommit(_ context.Context, offsets map[connect.TopicPartition]int64) (map[connect.TopicPartition]int64, error) {
	return offsets, nil
}

func (t *Task) Close([]connect.TopicPartition) error { return nil }

func (t *Task) Stop() error {
	slog.Info("null sink task stopped", "connector", t.name, "records", t.received)
	return nil
}
