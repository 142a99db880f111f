// Package runtimetest has plugins for testing the Connect runtime and
// herders end to end: a source that emits numbered records and resumes
// from its offsets, a sink that collects what it is given (and can fail
// on command), and a string converter. Register them once with Register;
// tests tell their instances apart with the "test.id" config key and
// observe them through Collector and SourceStats.
package runtimetest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/plugins"
)

// Class names of the test plugins.
const (
	SourceClass    = "io.fjord.test.SequenceSourceConnector"
	SinkClass      = "io.fjord.test.CollectingSinkConnector"
	ConverterClass = "io.fjord.test.StringConverter"
	FlakyClass     = "io.fjord.test.FlakyConverter"
)

var registerOnce sync.Once

// Register adds the test plugins to the registry (idempotent).
func Register() {
	registerOnce.Do(func() {
		plugins.Register(plugins.Plugin{Class: SourceClass, Aliases: []string{"SequenceSource"}, Kind: plugins.Source, Version: "1.0",
			New: func() any { return &sourceConnector{} }})
		plugins.Register(plugins.Plugin{Class: SinkClass, Aliases: []string{"CollectingSink"}, Kind: plugins.Sink, Version: "1.0",
			New: func() any { return &sinkConnector{} }})
		plugins.Register(plugins.Plugin{Class: ConverterClass, Kind: plugins.Converter, New: func() any { return &StringConverter{} }})
		plugins.Register(plugins.Plugin{Class: ConverterClass, Kind: plugins.HeaderConverter, New: func() any { return &stringHeaderConverter{} }})
		plugins.Register(plugins.Plugin{Class: FlakyClass, Kind: plugins.Converter, New: func() any { return &flakyConverter{} }})
	})
}

// TestID returns an id for a test's plugin instances that differs on
// every run (go test -count=N reuses test names).
func TestID(t interface{ Name() string }) string {
	return t.Name() + "-" + strconv.FormatInt(idSeq.Add(1), 10)
}

var idSeq atomic.Int64

// SourceConfig builds a SequenceSource config.
func SourceConfig(name, testID, topic string, count int, extra ...string) map[string]string {
	m := map[string]string{"name": name, "connector.class": SourceClass, "tasks.max": "1", "topic": topic,
		"count": strconv.Itoa(count), "test.id": testID,
		"key.converter": ConverterClass, "value.converter": ConverterClass, "header.converter": ConverterClass}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i]] = extra[i+1]
	}
	return m
}

// SinkConfig builds a CollectingSink config.
func SinkConfig(name, testID, topics string, extra ...string) map[string]string {
	m := map[string]string{"name": name, "connector.class": SinkClass, "tasks.max": "1", "topics": topics, "test.id": testID,
		"key.converter": ConverterClass, "value.converter": ConverterClass, "header.converter": ConverterClass}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i]] = extra[i+1]
	}
	return m
}

// ---- source ----

type sourceConnector struct{ props map[string]string }

var sourceDef = connect.NewConfigDef().
	Define(connect.ConfigKey{Name: "topic", Type: connect.TypeString, Default: connect.NoDefault, Importance: connect.High, Doc: "Topic to write to"}).
	Define(connect.ConfigKey{Name: "count", Type: connect.TypeLong, Default: int64(-1), Importance: connect.Medium, Doc: "Records per task (-1: forever)"}).
	Define(connect.ConfigKey{Name: "batch.size", Type: connect.TypeInt, Default: int32(10), Importance: connect.Low, Doc: "Records per poll"}).
	Define(connect.ConfigKey{Name: "header.every", Type: connect.TypeInt, Default: int32(1), Importance: connect.Low, Doc: "Give records whose sequence number is a multiple of this a seq header"}).
	Define(connect.ConfigKey{Name: "fail.at", Type: connect.TypeLong, Default: int64(-1), Importance: connect.Low, Doc: "Fail the task when reaching this sequence number"}).
	Define(connect.ConfigKey{Name: "fail.once", Type: connect.TypeBoolean, Default: false, Importance: connect.Low, Doc: "Fail at fail.at only the first time (per test.id)"}).
	Define(connect.ConfigKey{Name: "poll.delay.ms", Type: connect.TypeLong, Default: int64(0), Importance: connect.Low, Doc: "Pause between polls"}).
	Define(connect.ConfigKey{Name: "test.id", Type: connect.TypeString, Default: "", Importance: connect.Low, Doc: "Test instance"})

func (c *sourceConnector) Config() *connect.ConfigDef { return sourceDef }
func (c *sourceConnector) Start(_ context.Context, props map[string]string) error {
	if _, err := sourceDef.Parse(props); err != nil {
		return err
	}
	c.props = props
	return nil
}

// TaskConfigs gives each task the source's own keys (as real connectors
// do: not the runtime's, such as converters or errors.*).
func (c *sourceConnector) TaskConfigs(n int) ([]map[string]string, error) {
	out := make([]map[string]string, n)
	for i := range out {
		m := map[string]string{}
		for _, k := range sourceDef.Keys() {
			if v, ok := c.props[k.Name]; ok {
				m[k.Name] = v
			}
		}
		m["task.number"] = strconv.Itoa(i)
		out[i] = m
	}
	return out, nil
}
func (c *sourceConnector) Stop() error                 { return nil }
func (c *sourceConnector) NewTask() connect.SourceTask { return &sourceTask{} }
func (c *sourceConnector) Version() string             { return "1.0" }

// SourceStats counts what source tasks of a test saw.
type SourceStats struct {
	CommitRecords atomic.Int64 // CommitRecord calls with metadata
	Dropped       atomic.Int64 // CommitRecord calls without (dropped, skipped)
	Commits       atomic.Int64 // Commit calls
	Starts        atomic.Int64
	failed        atomic.Bool // fail.once has fired
	mu            sync.Mutex
	startedAt     []int64 // the first sequence number of each start
}

// StartedAt returns the sequence number each task start resumed from.
func (s *SourceStats) StartedAt() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.startedAt)
}

var sourceStats sync.Map // test id → *SourceStats

// Source returns the stats of a test's source tasks.
func Source(testID string) *SourceStats {
	v, _ := sourceStats.LoadOrStore(testID, &SourceStats{})
	return v.(*SourceStats)
}

type sourceTask struct {
	ctx       connect.SourceTaskContext
	topic     string
	part      map[string]any
	next, end int64
	batch     int
	failAt    int64
	delay     time.Duration
	stats     *SourceStats
	prefix    string
	failOnce  bool
	hdrEvery  int64
}

func (t *sourceTask) Initialize(ctx connect.SourceTaskContext) { t.ctx = ctx }

func (t *sourceTask) Start(_ context.Context, props map[string]string) error {
	c, err := sourceDef.Parse(props)
	if err != nil {
		return err
	}
	t.topic, t.end, t.batch, t.failAt = c.String("topic"), c.Long("count"), int(c.Int("batch.size")), c.Long("fail.at")
	t.failOnce = c.Bool("fail.once")
	t.hdrEvery = max(int64(c.Int("header.every")), 1)
	t.delay = time.Duration(c.Long("poll.delay.ms")) * time.Millisecond
	t.part = map[string]any{"task": props["task.number"]}
	if n := props["task.number"]; n != "" && n != "0" {
		// Task 0 writes v-<seq>; others t<n>-v-<seq>, so values differ.
		t.prefix = "t" + n + "-"
	}
	t.stats = Source(c.String("test.id"))
	if t.ctx != nil {
		off, err := t.ctx.Offsets().Offset(t.part)
		if err != nil {
			return fmt.Errorf("read offset: %w", err)
		}
		if off != nil {
			seq, ok := off["seq"].(int64)
			if !ok {
				return fmt.Errorf("offset %v has no integer seq", off)
			}
			t.next = seq + 1
		}
	}
	t.stats.Starts.Add(1)
	t.stats.mu.Lock()
	t.stats.startedAt = append(t.stats.startedAt, t.next)
	t.stats.mu.Unlock()
	return nil
}

func (t *sourceTask) Poll(ctx context.Context) ([]*connect.Record, error) {
	if t.delay > 0 {
		select {
		case <-ctx.Done():
			return nil, nil
		case <-time.After(t.delay):
		}
	}
	if t.end >= 0 && t.next >= t.end {
		<-ctx.Done() // done: idle until stopped
		return nil, nil
	}
	if t.failAt >= 0 && t.next >= t.failAt {
		if !t.failOnce || t.stats.failed.CompareAndSwap(false, true) {
			return nil, fmt.Errorf("sequence source told to fail at %d", t.failAt)
		}
		t.failAt = -1
	}
	n := int64(t.batch)
	if t.end >= 0 && t.next+n > t.end {
		n = t.end - t.next
	}
	if t.failAt >= 0 && t.next+n > t.failAt {
		n = t.failAt - t.next
	}
	out := make([]*connect.Record, n)
	for i := range out {
		seq := t.next + int64(i)
		s := strconv.FormatInt(seq, 10)
		r := connect.NewSourceRecord(t.part, map[string]any{"seq": seq}, t.topic, connect.StringSchema, t.prefix+"k-"+s, connect.StringSchema, t.prefix+"v-"+s)
		if seq%t.hdrEvery == 0 {
			r.Headers.Add("seq", connect.StringSchema, s)
		}
		out[i] = r
	}
	t.next += n
	return out, nil
}

func (t *sourceTask) CommitRecord(_ *connect.Record, md *connect.RecordMetadata) error {
	if md == nil {
		t.stats.Dropped.Add(1)
	} else {
		t.stats.CommitRecords.Add(1)
	}
	return nil
}

func (t *sourceTask) Commit(context.Context) error { t.stats.Commits.Add(1); return nil }
func (t *sourceTask) Stop() error                  { return nil }

// ---- sink ----

type sinkConnector struct{ props map[string]string }

var sinkDef = connect.NewConfigDef().
	Define(connect.ConfigKey{Name: "test.id", Type: connect.TypeString, Default: "", Importance: connect.Low, Doc: "Test instance"}).
	Define(connect.ConfigKey{Name: "fail.on", Type: connect.TypeString, Default: "", Importance: connect.Low, Doc: "Fail Put on this value"}).
	Define(connect.ConfigKey{Name: "errant.on", Type: connect.TypeString, Default: "", Importance: connect.Low, Doc: "Report this value as errant"}).
	Define(connect.ConfigKey{Name: "retriable.failures", Type: connect.TypeInt, Default: int32(0), Importance: connect.Low, Doc: "Fail this many Puts with RetriableError"}).
	Define(connect.ConfigKey{Name: "rewind.on", Type: connect.TypeString, Default: "", Importance: connect.Low, Doc: "Rewind the partition to its start the first time this value is put"}).
	Define(connect.ConfigKey{Name: "hold.commits", Type: connect.TypeBoolean, Default: false, Importance: connect.Low, Doc: "PreCommit returns nothing"}).
	Define(connect.ConfigKey{Name: "put.delay.ms", Type: connect.TypeLong, Default: int64(0), Importance: connect.Low, Doc: "Sleep this long in every Put"}).
	Define(connect.ConfigKey{Name: "pause.on", Type: connect.TypeString, Default: "", Importance: connect.Low, Doc: "Pause the partition for 300 ms the first time this value is put"})

func (c *sinkConnector) Config() *connect.ConfigDef { return sinkDef }
func (c *sinkConnector) Start(_ context.Context, props map[string]string) error {
	c.props = props
	return nil
}
func (c *sinkConnector) TaskConfigs(n int) ([]map[string]string, error) {
	out := make([]map[string]string, n)
	for i := range out {
		out[i] = maps.Clone(c.props)
	}
	return out, nil
}
func (c *sinkConnector) Stop() error               { return nil }
func (c *sinkConnector) NewTask() connect.SinkTask { return &sinkTask{} }
func (c *sinkConnector) Version() string           { return "1.0" }

// Collected is what the sink tasks of a test received.
type Collected struct {
	mu      sync.Mutex
	values  []string
	headers map[string][]string
	opened  []connect.TopicPartition
	closed  []connect.TopicPartition
	puts    int
	failed  int
	sizes   []int
	// whilePaused are values put while their partition was paused.
	whilePaused []string
}

var collectors sync.Map

// Collector returns what a test's sink tasks collected.
func Collector(testID string) *Collected {
	v, _ := collectors.LoadOrStore(testID, &Collected{headers: map[string][]string{}})
	return v.(*Collected)
}

// Values returns the values put, in order.
func (c *Collected) Values() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.values)
}

// Distinct returns how many different values were put.
func (c *Collected) Distinct() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := map[string]bool{}
	for _, v := range c.values {
		seen[v] = true
	}
	return len(seen)
}

// Header returns the values of a header seen on records.
func (c *Collected) Header(key string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.headers[key])
}

// Opened and Closed return the partitions opened and closed so far.
func (c *Collected) Opened() []connect.TopicPartition {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.opened)
}

func (c *Collected) Closed() []connect.TopicPartition {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.closed)
}

// PutSizes returns how many records each successful Put had.
func (c *Collected) PutSizes() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.sizes)
}

// PutWhilePaused returns values put while the task had their partition
// paused (pause.on).
func (c *Collected) PutWhilePaused() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.whilePaused)
}

// RetriableFailures returns how many Puts failed as asked.
func (c *Collected) RetriableFailures() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failed
}

type sinkTask struct {
	ctx       connect.SinkTaskContext
	c         *Collected
	failOn    string
	errantOn  string
	retriable int
	hold      bool
	rewindOn  string
	rewound   bool
	pauseOn   string
	putDelay  time.Duration
	paused    map[connect.TopicPartition]bool // guarded by c.mu
	errant    connect.ErrantRecordReporter
}

func (t *sinkTask) Initialize(ctx connect.SinkTaskContext) { t.ctx = ctx }

func (t *sinkTask) Start(_ context.Context, props map[string]string) error {
	c, err := sinkDef.Parse(props)
	if err != nil {
		return err
	}
	t.c = Collector(c.String("test.id"))
	t.failOn, t.errantOn, t.retriable, t.hold = c.String("fail.on"), c.String("errant.on"), int(c.Int("retriable.failures")), c.Bool("hold.commits")
	t.rewindOn = c.String("rewind.on")
	t.pauseOn = c.String("pause.on")
	t.putDelay = time.Duration(c.Long("put.delay.ms")) * time.Millisecond
	if t.errantOn != "" && t.ctx != nil {
		t.errant = t.ctx.ErrantRecordReporter()
	}
	return nil
}

func (t *sinkTask) Open(parts []connect.TopicPartition) error {
	t.c.mu.Lock()
	t.c.opened = append(t.c.opened, parts...)
	t.c.mu.Unlock()
	return nil
}

func (t *sinkTask) Put(ctx context.Context, recs []*connect.Record) error {
	if t.putDelay > 0 {
		time.Sleep(t.putDelay)
	}
	t.c.mu.Lock()
	if t.c.failed < t.retriable {
		t.c.failed++
		t.c.mu.Unlock()
		if t.ctx != nil {
			t.ctx.Timeout(10 * time.Millisecond)
		}
		return &connect.RetriableError{Err: errors.New("collecting sink told to fail for now")}
	}
	pausedAtPut := maps.Clone(t.paused)
	t.c.mu.Unlock()
	var keep []string
	for _, r := range recs {
		v := fmt.Sprint(r.Value)
		if t.failOn != "" && v == t.failOn {
			return fmt.Errorf("collecting sink told to fail on %q", v)
		}
		if t.errantOn != "" && v == t.errantOn && t.errant != nil {
			if err := t.errant.Report(ctx, r, fmt.Errorf("collecting sink rejects %q", v)); err != nil {
				return err
			}
			continue
		}
		keep = append(keep, v)
		tp := connect.TopicPartition{Topic: r.Topic, Partition: r.Partition}
		if pausedAtPut[tp] {
			t.c.mu.Lock()
			t.c.whilePaused = append(t.c.whilePaused, v)
			t.c.mu.Unlock()
		}
		if t.pauseOn != "" && v == t.pauseOn && t.paused == nil && t.ctx != nil {
			t.c.mu.Lock()
			t.paused = map[connect.TopicPartition]bool{tp: true}
			t.c.mu.Unlock()
			t.ctx.Pause(tp)
			time.AfterFunc(300*time.Millisecond, func() {
				t.c.mu.Lock()
				delete(t.paused, tp)
				t.c.mu.Unlock()
				t.ctx.Resume(tp)
			})
		}
		if t.rewindOn != "" && v == t.rewindOn && !t.rewound && t.ctx != nil {
			t.rewound = true
			t.ctx.ResetOffsets(map[connect.TopicPartition]int64{{Topic: r.Topic, Partition: r.Partition}: 0})
		}
		for _, h := range r.Headers {
			t.c.mu.Lock()
			t.c.headers[h.Key] = append(t.c.headers[h.Key], fmt.Sprint(h.Value))
			t.c.mu.Unlock()
		}
	}
	t.c.mu.Lock()
	t.c.values = append(t.c.values, keep...)
	t.c.puts++
	t.c.sizes = append(t.c.sizes, len(recs))
	t.c.mu.Unlock()
	return nil
}

func (t *sinkTask) PreCommit(_ context.Context, offsets map[connect.TopicPartition]int64) (map[connect.TopicPartition]int64, error) {
	if t.hold {
		return nil, nil
	}
	return offsets, nil
}

func (t *sinkTask) Close(parts []connect.TopicPartition) error {
	t.c.mu.Lock()
	t.c.closed = append(t.c.closed, parts...)
	t.c.mu.Unlock()
	return nil
}

func (t *sinkTask) Stop() error { return nil }

// ---- converters ----

// StringConverter converts strings (STRING schema) to UTF-8 bytes and
// back; it is also a header converter.
type StringConverter struct{}

func (*StringConverter) Configure(map[string]string, bool) error { return nil }

func (*StringConverter) FromConnectData(_ string, _ *connect.Headers, _ *connect.Schema, v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	if s, ok := v.(string); ok {
		return []byte(s), nil
	}
	return []byte(fmt.Sprint(v)), nil
}

func (*StringConverter) ToConnectData(_ string, _ *connect.Headers, b []byte) (*connect.Schema, any, error) {
	if b == nil {
		return connect.OptionalStringSchema, nil, nil
	}
	return connect.OptionalStringSchema, string(b), nil
}

// stringHeaderConverter is StringConverter for header values.
type stringHeaderConverter struct{ StringConverter }

var (
	_ connect.Converter       = (*StringConverter)(nil)
	_ connect.HeaderConverter = (*stringHeaderConverter)(nil)
)

func (*stringHeaderConverter) Configure(map[string]string) error { return nil }

func (h *stringHeaderConverter) FromConnectHeader(topic, _ string, s *connect.Schema, v any) ([]byte, error) {
	return h.FromConnectData(topic, nil, s, v)
}

func (h *stringHeaderConverter) ToConnectHeader(topic, _ string, b []byte) (*connect.Schema, any, error) {
	return h.ToConnectData(topic, nil, b)
}

// flakyConverter is a StringConverter that fails: values containing
// "bad" are a DataError; with "failures" set, the first calls of each
// instance fail with RetriableError.
type flakyConverter struct {
	StringConverter
	failures int
	calls    int
}

func (f *flakyConverter) Configure(props map[string]string, _ bool) error {
	f.failures, _ = strconv.Atoi(props["failures"])
	return nil
}

func (f *flakyConverter) ToConnectData(topic string, h *connect.Headers, b []byte) (*connect.Schema, any, error) {
	f.calls++
	if f.calls <= f.failures {
		return nil, nil, &connect.RetriableError{Err: fmt.Errorf("flaky converter call %d fails", f.calls)}
	}
	if strings.Contains(string(b), "bad") {
		return nil, nil, &connect.DataError{Msg: fmt.Sprintf("flaky converter cannot read %q", b)}
	}
	return f.StringConverter.ToConnectData(topic, h, b)
}

func (f *flakyConverter) FromConnectData(topic string, h *connect.Headers, s *connect.Schema, v any) ([]byte, error) {
	f.calls++
	if f.calls <= f.failures {
		return nil, &connect.RetriableError{Err: fmt.Errorf("flaky converter call %d fails", f.calls)}
	}
	if str, ok := v.(string); ok && strings.Contains(str, "bad") {
		return nil, &connect.DataError{Msg: fmt.Sprintf("flaky converter cannot write %q", str)}
	}
	return f.StringConverter.FromConnectData(topic, h, s, v)
}
