package datagen

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/fjordhq/fjord/connect"
)

// Class names and offset keys.
const (
	ConnectorClass          = "io.fjord.connect.datagen.DatagenConnector"
	ConfluentConnectorClass = "io.confluent.kafka.connect.datagen.DatagenConnector"
	// CurrentIterationField is the offset key Confluent's datagen uses
	// for the number of records a task has generated.
	CurrentIterationField = "current.iteration"
	// TaskCountField records tasks.max in the offset, to warn when it
	// changed (each task's share of the sequence depends on it).
	TaskCountField = "task.count"
)

// Connector is the datagen source connector.
type Connector struct {
	props map[string]string
	s     *settings
}

var (
	_ connect.SourceConnector            = (*Connector)(nil)
	_ connect.ConfigValidator            = (*Connector)(nil)
	_ connect.ExactlyOnceSourceConnector = (*Connector)(nil)
	_ connect.SourceOffsetsAlterer       = (*Connector)(nil)
)

func (c *Connector) Config() *connect.ConfigDef { return ConfigDef() }

func (c *Connector) Start(ctx context.Context, props map[string]string) error {
	s, err := parse(props)
	if err != nil {
		return fmt.Errorf("Datagen connector could not start because of an error in the configuration: %w", err)
	}
	c.props = maps.Clone(props)
	if !s.seedSet {
		// Tasks get the seed in their configs, so a restarted task
		// continues the same data.
		c.props[SeedConfig] = strconv.FormatInt(rand.Int64(), 10)
	}
	c.s = s
	slog.Info("starting datagen connector", "topic", s.topic, "rate", s.rate, "count", s.count)
	return nil
}

// TaskConfigs gives each task its number and the task count: task i
// generates sequence numbers i, i+n, i+2n, ... With a count smaller than
// maxTasks, only count tasks are started.
func (c *Connector) TaskConfigs(maxTasks int) ([]map[string]string, error) {
	n := maxTasks
	if c.s != nil && c.s.count > 0 && c.s.count < int64(n) {
		n = int(c.s.count)
	}
	out := make([]map[string]string, n)
	for i := range out {
		tc := maps.Clone(c.props)
		tc[TaskIDConfig] = strconv.Itoa(i)
		tc[TaskCountConfig] = strconv.Itoa(n)
		out[i] = tc
	}
	return out, nil
}

func (c *Connector) Stop() error { return nil }

func (c *Connector) NewTask() connect.SourceTask { return &Task{} }

// Validate is the ConfigDef's validation with the checks across keys
// added (one source of values, key field present, seed given once), as
// Confluent's validate does after super.validate.
func (c *Connector) Validate(props map[string]string) []connect.ConfigValue {
	out := ConfigDef().Validate(props)
	p := crossCheck(props)
	for i := range out {
		out[i].Errors = append(out[i].Errors, p[out[i].Name]...)
	}
	return out
}

// ExactlyOnceSupport is SUPPORTED: a task regenerates exactly the records
// after its committed offset.
func (c *Connector) ExactlyOnceSupport(props map[string]string) connect.ExactlyOnceSupport {
	return connect.ExactlyOnceSupported
}

// AlterOffsets accepts offsets of the shape tasks write.
func (c *Connector) AlterOffsets(config map[string]string, offsets []connect.SourcePartitionOffset) (bool, error) {
	for _, po := range offsets {
		if po.Offset == nil {
			continue
		}
		n, ok := connect.OffsetLong(po.Offset[CurrentIterationField])
		if !ok || n < 0 {
			return false, fmt.Errorf("The value for the '%s' key in the offset should be a non-negative Long value", CurrentIterationField)
		}
		if _, ok := connect.OffsetLong(po.Partition[TaskIDConfig]); !ok {
			return false, fmt.Errorf("Partition objects should contain the key '%s' with the task number", TaskIDConfig)
		}
	}
	return true, nil
}

// Task generates records. Record number g (the sequence number) depends
// only on the seed and g, so output is reproducible, and a task resumes
// from the iteration stored in its last committed offset.
type Task struct {
	tctx      connect.SourceTaskContext
	s         *settings
	seed      uint64
	next      int64 // the task's next iteration k; its sequence number is taskID + k×taskCount
	last      int64 // iterations this task may reach (math.MaxInt64: unlimited)
	partition map[string]any
	keySchema *connect.Schema
	taskCount int64
	offset    connect.OffsetFunc // a record's source offset from its iteration
	arena     arena

	tokens   float64 // rate pacing: records that may be sent now
	refilled time.Time
	doneLog  bool

	stop     chan struct{}
	stopOnce sync.Once
}

var _ connect.ContextualSourceTask = (*Task)(nil)

func (t *Task) Initialize(ctx connect.SourceTaskContext) { t.tctx = ctx }

func (t *Task) Start(ctx context.Context, props map[string]string) error {
	s, err := parse(props)
	if err != nil {
		return fmt.Errorf("datagen task config: %w", err)
	}
	t.s = s
	t.stop = make(chan struct{})
	t.taskCount = int64(s.taskCount)
	taskCount := t.taskCount
	t.offset = func(next int64) map[string]any {
		return map[string]any{CurrentIterationField: next, TaskCountField: taskCount}
	}
	if s.seedSet {
		t.seed = uint64(s.seed)
	} else {
		t.seed = rand.Uint64()
	}
	t.last = math.MaxInt64
	if s.iterations > 0 {
		t.last = s.iterations
	}
	if s.count > 0 {
		// Iterations k with taskID + k×n < count.
		share := (s.count - int64(s.taskID) + t.taskCount - 1) / t.taskCount
		t.last = min(t.last, max(share, 0))
	}
	switch {
	case s.key != nil:
		t.keySchema = s.key.schema
	case s.keyField >= 0:
		t.keySchema = s.value.schema.Fields[s.keyField].Schema
	default:
		t.keySchema = connect.OptionalStringSchema // Confluent's key schema when there is no key
	}
	t.partition = map[string]any{TaskIDConfig: int64(s.taskID)}
	if t.tctx != nil && t.tctx.Offsets() != nil {
		off, err := t.tctx.Offsets().Offset(t.partition)
		if err != nil {
			return fmt.Errorf("read datagen task %d offset: %w", s.taskID, err)
		}
		if off != nil {
			k, ok := connect.OffsetLong(off[CurrentIterationField])
			if !ok || k < 0 {
				return fmt.Errorf("datagen task %d: stored offset %v has no valid %s", s.taskID, off, CurrentIterationField)
			}
			t.next = k
			if n, ok := connect.OffsetLong(off[TaskCountField]); ok && n != t.taskCount {
				slog.Warn("datagen: the number of tasks changed since the offset was stored; sequence numbers may repeat or be skipped",
					"task", s.taskID, "was", n, "now", t.taskCount)
			}
			slog.Info("datagen: resuming", "task", s.taskID, "iteration", k)
		}
	}
	t.refilled = time.Now()
	return nil
}

func (t *Task) Poll(ctx context.Context) ([]*connect.SourceRecord, error) {
	if t.next >= t.last {
		if !t.doneLog {
			slog.Info("datagen: task generated all its records and stays idle", "task", t.s.taskID, "records", t.next)
			t.doneLog = true
		}
		t.sleep(ctx, time.Second)
		return nil, nil
	}
	n := int64(t.s.batchSize)
	switch {
	case t.s.rateSet && t.s.rate > 0:
		perTask := t.s.rate / float64(t.taskCount)
		now := time.Now()
		// At most one second's worth (or a batch) accumulates while
		// nobody polls, so a slow consumer does not cause a burst.
		t.tokens = min(t.tokens+now.Sub(t.refilled).Seconds()*perTask, max(perTask, 1, float64(n)))
		t.refilled = now
		if t.tokens < 1 {
			wait := time.Duration((1 - t.tokens) / perTask * float64(time.Second))
			if !t.sleep(ctx, wait) {
				return nil, nil
			}
			now = time.Now()
			t.tokens += now.Sub(t.refilled).Seconds() * perTask
			t.refilled = now
		}
		n = min(n, int64(t.tokens))
		if n < 1 {
			return nil, nil
		}
		t.tokens -= float64(n)
	case !t.s.rateSet && t.s.maxInterval > 0:
		if !t.sleep(ctx, time.Duration(rand.Float64()*float64(t.s.maxInterval)*float64(time.Millisecond))) {
			return nil, nil
		}
		n = 1
	}
	n = min(n, t.last-t.next)
	return t.generate(int(n)), nil
}

// generate returns the next n records. Records, struct values and
// strings come from per-batch blocks. Each record's offset is its own
// (the runtime may commit any record's), made lazily from its iteration
// (connect.Record.LazyOffset): the runtime builds a map only for the
// offsets it commits.
func (t *Task) generate(n int) []*connect.SourceRecord {
	slab := make([]connect.Record, n)
	out := make([]*connect.SourceRecord, n)
	taskCount := t.taskCount
	base := int64(t.s.taskID)
	var keyField *connect.Field
	if t.s.keyField >= 0 {
		keyField = &t.s.value.schema.Fields[t.s.keyField]
	}
	for i := range slab {
		k := t.next
		seq := base + k*taskCount
		r := newRNG(t.seed, seq)
		value := t.s.value.build(&r, seq, &t.arena)
		var key any
		switch {
		case t.s.key != nil:
			kr := newRNG(t.seed^keySalt, seq)
			key = t.s.key.build(&kr, seq, &t.arena)
		case keyField != nil:
			key = value.(*connect.Struct).GetFieldWithoutDefault(keyField)
		}
		t.next++
		slab[i] = connect.Record{
			Topic: t.s.topic, Partition: -1, Timestamp: -1,
			KeySchema: t.keySchema, Key: key, ValueSchema: t.s.value.schema, Value: value,
			SourcePartition: t.partition,
			LazyOffset:      t.offset, OffsetArg: t.next,
			Offset: -1, TimestampType: connect.NoTimestampType,
		}
		out[i] = &slab[i]
	}
	return out
}

// keySalt separates the key's random stream from the value's.
const keySalt = 0x6b6579736b657973

// sleep waits d or until the task stops or ctx ends; it reports whether
// the whole time passed.
func (t *Task) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
	case <-t.stop:
	}
	return false
}

func (t *Task) Commit(ctx context.Context) error { return nil }

func (t *Task) Stop() error {
	if t.stop != nil {
		t.stopOnce.Do(func() { close(t.stop) })
	}
	return nil
}
