package storage

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Status topic key prefixes (Kafka's KafkaStatusBackingStore).
const (
	connectorStatusPrefix = "status-connector-"
	taskStatusPrefix      = "status-task-"
	topicStatusPrefix     = "status-topic-"
	topicStatusSeparator  = ":connector-"
)

// StatusKey is the status topic key of a connector (Task < 0) or task.
func StatusKey(st Status) string {
	if st.IsTask() {
		return taskStatusPrefix + st.ID().String()
	}
	return connectorStatusPrefix + st.Connector
}

// TopicStatusKey is the status topic key of a connector's topic.
func TopicStatusKey(connector, topic string) string {
	return topicStatusPrefix + topic + topicStatusSeparator + connector
}

// statusValue is Kafka's STATUS_SCHEMA_V0 (plus 4.x's version), in its
// field order.
type statusValue struct {
	State      string  `json:"state"`
	Trace      *string `json:"trace"`
	WorkerID   string  `json:"worker_id"`
	Generation int32   `json:"generation"`
	Version    *string `json:"version"`
}

type topicStatusValue struct {
	Topic topicStatusInner `json:"topic"`
}

type topicStatusInner struct {
	Name              string `json:"name"`
	Connector         string `json:"connector"`
	Task              int    `json:"task"`
	DiscoverTimestamp int64  `json:"discoverTimestamp"`
}

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// EncodeStatus is the status topic value of st; DESTROYED is a tombstone
// (nil), as Kafka deletes destroyed statuses.
func EncodeStatus(st Status) []byte {
	if st.State == StateDestroyed {
		return nil
	}
	return marshalJSON(statusValue{string(st.State), optString(st.Trace), st.WorkerID, st.Generation, optString(st.Version)})
}

// EncodeTopicStatus is the status topic value of a topic status.
func EncodeTopicStatus(ts TopicStatus) []byte {
	return marshalJSON(topicStatusValue{topicStatusInner{ts.Topic, ts.Connector, ts.Task, ts.DiscoverTimestamp}})
}

func decodeStatus(key string, value []byte) (Status, error) {
	var st Status
	if rest, ok := strings.CutPrefix(key, taskStatusPrefix); ok {
		id, ok := parseTaskKey(rest)
		if !ok {
			return st, fmt.Errorf("status key %q names no task", key)
		}
		st.Connector, st.Task = id.Connector, id.Task
	} else if rest, ok := strings.CutPrefix(key, connectorStatusPrefix); ok {
		st.Connector, st.Task = rest, -1
	} else {
		return st, fmt.Errorf("unknown status key %q", key)
	}
	if value == nil {
		st.State = StateDestroyed
		return st, nil
	}
	v, err := DecodeJSON(value)
	if err != nil {
		return st, fmt.Errorf("status %q is not JSON: %w", key, err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return st, fmt.Errorf("status %q is not a JSON object", key)
	}
	s, _ := m["state"].(string)
	st.State = State(s)
	st.Trace, _ = m["trace"].(string)
	st.WorkerID, _ = m["worker_id"].(string)
	g, _ := m["generation"].(int64)
	st.Generation = int32(g)
	st.Version, _ = m["version"].(string)
	if st.State == "" {
		return st, fmt.Errorf("status %q has no state", key)
	}
	return st, nil
}

func decodeTopicStatus(key string, value []byte) (connector, topic string, ts *TopicStatus, err error) {
	rest := strings.TrimPrefix(key, topicStatusPrefix)
	i := strings.LastIndex(rest, topicStatusSeparator)
	if i < 0 {
		return "", "", nil, fmt.Errorf("topic status key %q names no connector", key)
	}
	topic, connector = rest[:i], rest[i+len(topicStatusSeparator):]
	if value == nil {
		return connector, topic, nil, nil
	}
	v, err := DecodeJSON(value)
	if err != nil {
		return "", "", nil, fmt.Errorf("topic status %q is not JSON: %w", key, err)
	}
	m, _ := v.(map[string]any)
	inner, ok := m["topic"].(map[string]any)
	if !ok {
		return "", "", nil, fmt.Errorf("topic status %q has no topic object", key)
	}
	t := TopicStatus{Topic: topic, Connector: connector}
	if s, ok := inner["name"].(string); ok {
		t.Topic = s
	}
	if s, ok := inner["connector"].(string); ok {
		t.Connector = s
	}
	task, _ := inner["task"].(int64)
	t.Task = int(task)
	t.DiscoverTimestamp, _ = inner["discoverTimestamp"].(int64)
	return connector, topic, &t, nil
}

// statusTable is the view every StatusStore keeps.
type statusTable struct {
	log        *slog.Logger
	mu         sync.RWMutex
	connectors map[string]Status
	tasks      map[string]map[int]Status
	topics     map[string]map[string]TopicStatus // connector → topic → status
}

func newStatusTable(log *slog.Logger) *statusTable {
	if log == nil {
		log = slog.Default()
	}
	return &statusTable{log: log, connectors: map[string]Status{}, tasks: map[string]map[int]Status{}, topics: map[string]map[string]TopicStatus{}}
}

func (t *statusTable) put(st Status) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !st.IsTask() {
		if st.State == StateDestroyed {
			delete(t.connectors, st.Connector)
		} else {
			t.connectors[st.Connector] = st
		}
		return
	}
	m := t.tasks[st.Connector]
	if st.State == StateDestroyed {
		delete(m, st.Task)
		if len(m) == 0 {
			delete(t.tasks, st.Connector)
		}
		return
	}
	if m == nil {
		m = map[int]Status{}
		t.tasks[st.Connector] = m
	}
	m[st.Task] = st
}

// safe reports whether st may overwrite the current entry (Kafka's
// putSafe: no entry, the same worker, or a generation at least as new).
func (t *statusTable) safe(st Status) bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var cur Status
	var ok bool
	if st.IsTask() {
		cur, ok = t.tasks[st.Connector][st.Task]
	} else {
		cur, ok = t.connectors[st.Connector]
	}
	return !ok || cur.WorkerID == st.WorkerID || st.Generation >= cur.Generation
}

func (t *statusTable) putTopic(connector, topic string, ts *TopicStatus) {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.topics[connector]
	if ts == nil {
		delete(m, topic)
		if len(m) == 0 {
			delete(t.topics, connector)
		}
		return
	}
	if m == nil {
		m = map[string]TopicStatus{}
		t.topics[connector] = m
	}
	m[topic] = *ts
}

// apply processes one status topic record.
func (t *statusTable) apply(key string, value []byte) {
	if strings.HasPrefix(key, topicStatusPrefix) {
		conn, topic, ts, err := decodeTopicStatus(key, value)
		if err != nil {
			t.log.Error("skipping status record", "key", key, "err", err)
			return
		}
		t.putTopic(conn, topic, ts)
		return
	}
	st, err := decodeStatus(key, value)
	if err != nil {
		t.log.Error("skipping status record", "key", key, "err", err)
		return
	}
	t.put(st)
}

func (t *statusTable) connector(name string) (Status, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	st, ok := t.connectors[name]
	return st, ok
}

func (t *statusTable) task(id TaskID) (Status, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	st, ok := t.tasks[id.Connector][id.Task]
	return st, ok
}

func (t *statusTable) taskList(connector string) []Status {
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := slices.Collect(maps.Values(t.tasks[connector]))
	slices.SortFunc(out, func(a, b Status) int { return a.Task - b.Task })
	return out
}

func (t *statusTable) connectorNames() []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	set := map[string]bool{}
	for n := range t.connectors {
		set[n] = true
	}
	for n := range t.tasks {
		set[n] = true
	}
	return slices.Sorted(maps.Keys(set))
}

func (t *statusTable) topicList(connector string) []TopicStatus {
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := slices.Collect(maps.Values(t.topics[connector]))
	slices.SortFunc(out, func(a, b TopicStatus) int { return strings.Compare(a.Topic, b.Topic) })
	return out
}

// MemoryStatusStore keeps statuses in memory (standalone mode and tests;
// Kafka's MemoryStatusBackingStore).
type MemoryStatusStore struct{ t *statusTable }

var (
	_ StatusStore      = (*MemoryStatusStore)(nil)
	_ TopicStatusStore = (*MemoryStatusStore)(nil)
)

// NewMemoryStatusStore returns an empty store.
func NewMemoryStatusStore() *MemoryStatusStore { return &MemoryStatusStore{t: newStatusTable(nil)} }

func (m *MemoryStatusStore) Put(_ context.Context, st Status) error { m.t.put(st); return nil }

func (m *MemoryStatusStore) PutSafe(_ context.Context, st Status) error {
	if m.t.safe(st) {
		m.t.put(st)
	}
	return nil
}

func (m *MemoryStatusStore) Connector(name string) (Status, bool) { return m.t.connector(name) }
func (m *MemoryStatusStore) Task(id TaskID) (Status, bool)        { return m.t.task(id) }
func (m *MemoryStatusStore) Tasks(connector string) []Status      { return m.t.taskList(connector) }
func (m *MemoryStatusStore) Connectors() []string                 { return m.t.connectorNames() }
func (m *MemoryStatusStore) Close() error                         { return nil }

func (m *MemoryStatusStore) PutTopic(_ context.Context, ts TopicStatus) error {
	m.t.putTopic(ts.Connector, ts.Topic, &ts)
	return nil
}

func (m *MemoryStatusStore) Topics(connector string) []TopicStatus { return m.t.topicList(connector) }

func (m *MemoryStatusStore) DeleteTopic(_ context.Context, connector, topic string) error {
	m.t.putTopic(connector, topic, nil)
	return nil
}
