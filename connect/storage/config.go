package storage

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Config topic key prefixes (Kafka's KafkaConfigBackingStore).
const (
	connectorPrefix   = "connector-"
	taskPrefix        = "task-"
	commitPrefix      = "commit-"
	targetStatePrefix = "target-state-"
	restartPrefix     = "restart-connector-"
	taskCountPrefix   = "tasks-fencing-"
	loggerPrefix      = "logger-cluster-"
	sessionKeyKey     = "session-key"
)

// Config record keys.
func ConnectorKey(name string) string   { return connectorPrefix + name }
func TaskKey(id TaskID) string          { return taskPrefix + id.String() }
func CommitKey(name string) string      { return commitPrefix + name }
func TargetStateKey(name string) string { return targetStatePrefix + name }
func RestartKey(name string) string     { return restartPrefix + name }

// SessionKey is the distributed workers' shared key for signing internal
// requests (KIP-507).
type SessionKey struct {
	Key               string `json:"key"` // base64
	Algorithm         string `json:"algorithm"`
	CreationTimestamp int64  `json:"creation-timestamp"`
}

// ConfigSnapshot is a consistent view of the config store (Kafka's
// ClusterConfigState). Maps belong to the snapshot: callers may read them
// freely but must not modify them.
type ConfigSnapshot struct {
	// Offset is the config topic position the snapshot reflects (the
	// offset after the last record applied; -1 before any). Distributed
	// workers compare it in the group protocol.
	Offset       int64
	SessionKey   *SessionKey
	Connectors   map[string]map[string]string
	TargetStates map[string]TargetState
	// Tasks holds each connector's committed task configs by task number.
	Tasks map[string][]map[string]string
	// Inconsistent connectors have task configs that never got a complete
	// commit (compaction or a crashed leader); the leader should
	// regenerate them.
	Inconsistent map[string]bool
}

// Contains reports whether the connector exists.
func (s *ConfigSnapshot) Contains(name string) bool { _, ok := s.Connectors[name]; return ok }

// ConnectorNames returns the connectors, sorted.
func (s *ConfigSnapshot) ConnectorNames() []string {
	return slices.Sorted(maps.Keys(s.Connectors))
}

// TargetState returns the connector's target state (STARTED if unset).
func (s *ConfigSnapshot) TargetState(name string) TargetState {
	if t, ok := s.TargetStates[name]; ok {
		return t
	}
	return TargetStarted
}

// TaskCount returns the number of committed tasks of the connector.
func (s *ConfigSnapshot) TaskCount(name string) int { return len(s.Tasks[name]) }

// TaskConfig returns a committed task config, or nil.
func (s *ConfigSnapshot) TaskConfig(id TaskID) map[string]string {
	ts := s.Tasks[id.Connector]
	if id.Task < 0 || id.Task >= len(ts) {
		return nil
	}
	return ts[id.Task]
}

// TaskIDs returns the connector's committed task ids.
func (s *ConfigSnapshot) TaskIDs(name string) []TaskID {
	n := len(s.Tasks[name])
	out := make([]TaskID, n)
	for i := range n {
		out[i] = TaskID{name, i}
	}
	return out
}

// Config record values, as Kafka writes them with JsonConverter and
// schemas disabled (struct fields in Kafka's schema order).

type propertiesValue struct {
	Properties map[string]string `json:"properties"`
}

type commitValue struct {
	Tasks int `json:"tasks"`
}

type targetStateValue struct {
	State   string `json:"state"`
	StateV2 string `json:"state.v2"`
}

type restartValue struct {
	IncludeTasks bool `json:"include-tasks"`
	OnlyFailed   bool `json:"only-failed"`
}

// EncodeConnectorConfig is the value of connector-<name> and task-<name>-<n>.
func EncodeConnectorConfig(props map[string]string) []byte {
	if props == nil {
		props = map[string]string{}
	}
	return marshalJSON(propertiesValue{props})
}

// EncodeCommit is the value of commit-<name>.
func EncodeCommit(tasks int) []byte {
	return marshalJSON(commitValue{tasks})
}

// EncodeTargetState is the value of target-state-<name>. STOPPED is
// written as "PAUSED" in the old field, so workers older than KIP-875 keep
// the connector idle, as Kafka does.
func EncodeTargetState(st TargetState) []byte {
	old := st
	if st == TargetStopped {
		old = TargetPaused
	}
	return marshalJSON(targetStateValue{string(old), string(st)})
}

// EncodeRestart is the value of restart-connector-<name>.
func EncodeRestart(r RestartRequest) []byte {
	return marshalJSON(restartValue{r.IncludeTasks, r.OnlyFailed})
}

// EncodeSessionKey is the value of session-key.
func EncodeSessionKey(k SessionKey) []byte {
	return marshalJSON(k)
}

// configEvent is a change to report to the listener.
type configEvent struct {
	kind    int
	name    string
	tasks   []TaskID
	restart RestartRequest
}

const (
	evConnectorUpdated = iota
	evConnectorRemoved
	evTasksUpdated
	evTargetChanged
	evRestart
)

// configState applies config records in log order, as Kafka's
// KafkaConfigBackingStore: task configs wait for their commit record and
// take effect only as a complete set; a connector tombstone removes its
// tasks; target states default to STARTED.
type configState struct {
	log *slog.Logger

	mu           sync.Mutex
	offset       int64
	sessionKey   *SessionKey
	connectors   map[string]map[string]string
	targetStates map[string]TargetState
	taskConfigs  map[TaskID]map[string]string
	taskCounts   map[string]int
	deferred     map[string]map[TaskID]map[string]string
	inconsistent map[string]bool
}

func newConfigState(log *slog.Logger) *configState {
	if log == nil {
		log = slog.Default()
	}
	return &configState{
		log: log, offset: -1,
		connectors:   map[string]map[string]string{},
		targetStates: map[string]TargetState{},
		taskConfigs:  map[TaskID]map[string]string{},
		taskCounts:   map[string]int{},
		deferred:     map[string]map[TaskID]map[string]string{},
		inconsistent: map[string]bool{},
	}
}

func (c *configState) snapshot() *ConfigSnapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := &ConfigSnapshot{
		Offset:       c.offset,
		Connectors:   make(map[string]map[string]string, len(c.connectors)),
		TargetStates: maps.Clone(c.targetStates),
		Tasks:        map[string][]map[string]string{},
		Inconsistent: maps.Clone(c.inconsistent),
	}
	if c.sessionKey != nil {
		k := *c.sessionKey
		s.SessionKey = &k
	}
	for name, cfg := range c.connectors {
		s.Connectors[name] = maps.Clone(cfg)
		if c.inconsistent[name] {
			continue
		}
		n := c.taskCounts[name]
		tasks := make([]map[string]string, 0, n)
		for i := range n {
			tasks = append(tasks, maps.Clone(c.taskConfigs[TaskID{name, i}]))
		}
		if n > 0 {
			s.Tasks[name] = tasks
		}
	}
	return s
}

// apply processes one record at log offset off (the next offset is
// off+1) and returns the events to report.
func (c *configState) apply(off int64, key string, value []byte) []configEvent {
	c.mu.Lock()
	defer c.mu.Unlock()
	if off >= 0 {
		c.offset = off + 1
	}
	var v map[string]any
	if value != nil {
		dv, err := DecodeJSON(value)
		if err != nil {
			c.log.Error("skipping config record that is not JSON", "key", key, "err", err)
			return nil
		}
		if dv != nil {
			var ok bool
			if v, ok = dv.(map[string]any); !ok {
				c.log.Error("skipping config record that is not a JSON object", "key", key)
				return nil
			}
		}
	}
	switch {
	case strings.HasPrefix(key, targetStatePrefix):
		return c.applyTargetState(strings.TrimPrefix(key, targetStatePrefix), v)
	case strings.HasPrefix(key, connectorPrefix):
		return c.applyConnector(strings.TrimPrefix(key, connectorPrefix), v)
	case strings.HasPrefix(key, taskPrefix):
		id, ok := parseTaskKey(strings.TrimPrefix(key, taskPrefix))
		if !ok {
			c.log.Error("skipping task config with a key that names no task", "key", key)
			return nil
		}
		c.applyTask(id, v)
	case strings.HasPrefix(key, commitPrefix):
		return c.applyCommit(strings.TrimPrefix(key, commitPrefix), v)
	case strings.HasPrefix(key, restartPrefix):
		if v == nil {
			return nil
		}
		r := RestartRequest{Connector: strings.TrimPrefix(key, restartPrefix)}
		r.IncludeTasks, _ = v["include-tasks"].(bool)
		r.OnlyFailed, _ = v["only-failed"].(bool)
		return []configEvent{{kind: evRestart, name: r.Connector, restart: r}}
	case key == sessionKeyKey:
		if v == nil {
			return nil
		}
		k := SessionKey{}
		k.Key, _ = v["key"].(string)
		k.Algorithm, _ = v["algorithm"].(string)
		k.CreationTimestamp, _ = v["creation-timestamp"].(int64)
		c.sessionKey = &k
	case strings.HasPrefix(key, taskCountPrefix), strings.HasPrefix(key, loggerPrefix):
		// Exactly-once fencing counts and cluster logger levels: Fjord
		// neither fences zombies nor changes log levels cluster-wide.
	default:
		c.log.Error("discarding config record with an unknown key", "key", key)
	}
	return nil
}

func parseTaskKey(s string) (TaskID, bool) {
	i := strings.LastIndexByte(s, '-')
	if i <= 0 {
		return TaskID{}, false
	}
	n, err := strconv.Atoi(s[i+1:])
	if err != nil || n < 0 {
		return TaskID{}, false
	}
	return TaskID{s[:i], n}, true
}

func (c *configState) applyTargetState(name string, v map[string]any) []configEvent {
	if v == nil {
		delete(c.targetStates, name)
		if _, ok := c.connectors[name]; ok {
			c.targetStates[name] = TargetStarted
		}
		return nil // the connector's removal reports it
	}
	s, _ := v["state.v2"].(string)
	if s == "" {
		s, _ = v["state"].(string) // written by a worker older than KIP-875
	}
	st := TargetState(s)
	if st != TargetStarted && st != TargetPaused && st != TargetStopped {
		c.log.Error("skipping invalid target state", "connector", name, "state", s)
		return nil
	}
	prev, had := c.targetStates[name]
	c.targetStates[name] = st
	if _, exists := c.connectors[name]; exists && (!had || prev != st) {
		return []configEvent{{kind: evTargetChanged, name: name}}
	}
	return nil
}

func (c *configState) applyConnector(name string, v map[string]any) []configEvent {
	if v == nil {
		c.removeConnector(name)
		return []configEvent{{kind: evConnectorRemoved, name: name}}
	}
	props, ok := stringMap(v["properties"])
	if !ok {
		c.log.Error("skipping connector config without a properties map", "connector", name)
		return nil
	}
	c.connectors[name] = props
	if _, ok := c.targetStates[name]; !ok {
		c.targetStates[name] = TargetStarted
	}
	return []configEvent{{kind: evConnectorUpdated, name: name}}
}

func (c *configState) removeConnector(name string) {
	delete(c.connectors, name)
	delete(c.targetStates, name)
	delete(c.deferred, name)
	delete(c.inconsistent, name)
	for i := range c.taskCounts[name] {
		delete(c.taskConfigs, TaskID{name, i})
	}
	for id := range c.taskConfigs {
		if id.Connector == name {
			delete(c.taskConfigs, id)
		}
	}
	delete(c.taskCounts, name)
}

func stringMap(v any) (map[string]string, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	out := make(map[string]string, len(m))
	for k, x := range m {
		switch s := x.(type) {
		case string:
			out[k] = s
		case nil:
			out[k] = ""
		default:
			out[k] = fmt.Sprint(s)
		}
	}
	return out, true
}

func (c *configState) applyTask(id TaskID, v map[string]any) {
	if v == nil {
		c.log.Error("ignoring unexpected null task config", "task", id.String())
		return
	}
	props, ok := stringMap(v["properties"])
	if !ok {
		c.log.Error("skipping task config without a properties map", "task", id.String())
		return
	}
	d := c.deferred[id.Connector]
	if d == nil {
		d = map[TaskID]map[string]string{}
		c.deferred[id.Connector] = d
	}
	d[id] = props
}

func (c *configState) applyCommit(name string, v map[string]any) []configEvent {
	if _, ok := c.connectors[name]; !ok {
		// The connector was deleted and compaction removed its config and
		// tombstone: these task configs belong to nobody.
		c.removeConnector(name)
		return nil
	}
	if v == nil {
		return nil
	}
	n, ok := v["tasks"].(int64)
	if !ok || n < 0 {
		c.log.Error("skipping task commit without a task count", "connector", name)
		return nil
	}
	d := c.deferred[name]
	// Complete means tasks 0..n-1 are all present (more is fine: a
	// compacted log may keep configs of tasks since removed).
	complete := true
	for i := range int(n) {
		if _, ok := d[TaskID{name, i}]; !ok {
			complete = false
			break
		}
	}
	var updated []TaskID
	if !complete {
		c.log.Warn("incomplete task configs for connector, probably compacted away; waiting for new ones", "connector", name)
		c.inconsistent[name] = true
	} else {
		for id, props := range d {
			c.taskConfigs[id] = props
			updated = append(updated, id)
		}
		delete(c.inconsistent, name)
	}
	delete(c.deferred, name)
	// Tasks beyond the new count are gone.
	for i := int(n); i < c.taskCounts[name]; i++ {
		delete(c.taskConfigs, TaskID{name, i})
		updated = append(updated, TaskID{name, i})
	}
	c.taskCounts[name] = int(n)
	slices.SortFunc(updated, func(a, b TaskID) int { return a.Task - b.Task })
	return []configEvent{{kind: evTasksUpdated, name: name, tasks: updated}}
}

// notify delivers events to l (nil: none).
func notify(l ConfigListener, events []configEvent) {
	if l == nil {
		return
	}
	for _, e := range events {
		switch e.kind {
		case evConnectorUpdated:
			l.ConnectorConfigUpdated(e.name)
		case evConnectorRemoved:
			l.ConnectorConfigRemoved(e.name)
		case evTasksUpdated:
			l.TaskConfigsUpdated(e.tasks)
		case evTargetChanged:
			l.TargetStateChanged(e.name)
		case evRestart:
			l.RestartRequested(e.restart)
		}
	}
}

// configRecords are the records a write appends, in order.
type configRecord struct {
	key   string
	value []byte
}

func connectorConfigRecords(name string, config map[string]string, target *TargetState) []configRecord {
	var rs []configRecord
	if target != nil {
		rs = append(rs, configRecord{TargetStateKey(name), EncodeTargetState(*target)})
	}
	return append(rs, configRecord{ConnectorKey(name), EncodeConnectorConfig(config)})
}

func removeConnectorRecords(name string) []configRecord {
	return []configRecord{{ConnectorKey(name), nil}, {TargetStateKey(name), nil}}
}

func taskConfigRecords(name string, tasks []map[string]string) []configRecord {
	rs := make([]configRecord, 0, len(tasks)+1)
	for i, t := range tasks {
		rs = append(rs, configRecord{TaskKey(TaskID{name, i}), EncodeConnectorConfig(t)})
	}
	return append(rs, configRecord{CommitKey(name), EncodeCommit(len(tasks))})
}

// MemoryConfigStore keeps configs in memory (standalone mode and tests;
// Kafka's MemoryConfigBackingStore). It runs the same record logic as the
// topic-backed store; the listener is called synchronously from the
// writing call, after the store's lock is released.
type MemoryConfigStore struct {
	state *configState
	mu    sync.Mutex // serialises writes so events keep their order
	lmu   sync.Mutex
	l     ConfigListener
	next  int64
}

var _ ConfigStore = (*MemoryConfigStore)(nil)

// NewMemoryConfigStore returns an empty store.
func NewMemoryConfigStore() *MemoryConfigStore {
	return &MemoryConfigStore{state: newConfigState(nil)}
}

func (m *MemoryConfigStore) write(rs []configRecord) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range rs {
		ev := m.state.apply(m.next, r.key, r.value)
		m.next++
		m.lmu.Lock()
		l := m.l
		m.lmu.Unlock()
		notify(l, ev)
	}
}

func (m *MemoryConfigStore) Snapshot() *ConfigSnapshot { return m.state.snapshot() }

func (m *MemoryConfigStore) PutConnectorConfig(_ context.Context, name string, config map[string]string, target *TargetState) error {
	m.write(connectorConfigRecords(name, config, target))
	return nil
}

func (m *MemoryConfigStore) RemoveConnectorConfig(_ context.Context, name string) error {
	m.write(removeConnectorRecords(name))
	return nil
}

func (m *MemoryConfigStore) PutTaskConfigs(_ context.Context, name string, tasks []map[string]string) error {
	m.write(taskConfigRecords(name, tasks))
	return nil
}

func (m *MemoryConfigStore) PutTargetState(_ context.Context, name string, st TargetState) error {
	m.write([]configRecord{{TargetStateKey(name), EncodeTargetState(st)}})
	return nil
}

func (m *MemoryConfigStore) PutRestartRequest(_ context.Context, r RestartRequest) error {
	m.write([]configRecord{{RestartKey(r.Connector), EncodeRestart(r)}})
	return nil
}

func (m *MemoryConfigStore) SetListener(l ConfigListener) {
	m.lmu.Lock()
	m.l = l
	m.lmu.Unlock()
}

func (m *MemoryConfigStore) Close() error { return nil }
