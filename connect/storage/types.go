package storage

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/fjordhq/fjord/connect"
)

// TargetState is a connector's desired state as the config topic stores
// it (Kafka's TargetState: STARTED, PAUSED, STOPPED). The REST API calls
// STARTED "RUNNING".
type TargetState string

const (
	TargetStarted TargetState = "STARTED"
	TargetPaused  TargetState = "PAUSED"
	TargetStopped TargetState = "STOPPED"
)

// ParseTargetState accepts Kafka's names and the REST API's RUNNING.
func ParseTargetState(s string) (TargetState, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "STARTED", "RUNNING", "":
		return TargetStarted, nil
	case "PAUSED":
		return TargetPaused, nil
	case "STOPPED":
		return TargetStopped, nil
	}
	return "", fmt.Errorf("unknown target state %q (want RUNNING, PAUSED or STOPPED)", s)
}

// State is a connector's or task's reported state (Kafka's
// AbstractStatus.State).
type State string

const (
	StateUnassigned State = "UNASSIGNED"
	StateRunning    State = "RUNNING"
	StatePaused     State = "PAUSED"
	StateStopped    State = "STOPPED"
	StateFailed     State = "FAILED"
	StateRestarting State = "RESTARTING"
	StateDestroyed  State = "DESTROYED"
)

// TaskID names a task of a connector.
type TaskID struct {
	Connector string
	Task      int
}

func (t TaskID) String() string { return t.Connector + "-" + strconv.Itoa(t.Task) }

// Status is a connector's (Task < 0) or a task's status.
type Status struct {
	Connector string
	// Task is the task number, or -1 for the connector itself.
	Task       int
	State      State
	Trace      string
	WorkerID   string
	Generation int32
	// Version is the plugin's version (Kafka 4.x writes it, null when
	// nothing runs).
	Version string
}

// IsTask reports whether the status is a task's.
func (s Status) IsTask() bool { return s.Task >= 0 }

// ID returns the task id of a task status.
func (s Status) ID() TaskID { return TaskID{s.Connector, s.Task} }

// TopicStatus records that a connector's task used a topic (KIP-558
// active topics).
type TopicStatus struct {
	Topic     string
	Connector string
	Task      int
	// DiscoverTimestamp is when the topic was first seen, in ms.
	DiscoverTimestamp int64
}

// RestartRequest is a REST restart of a connector (and maybe its tasks)
// broadcast through the config topic.
type RestartRequest struct {
	Connector    string
	OnlyFailed   bool
	IncludeTasks bool
}

// ShouldRestartConnector reports whether the request restarts a
// connector in state st (Kafka's RestartRequest.shouldRestartConnector).
func (r RestartRequest) ShouldRestartConnector(st State) bool {
	return !r.OnlyFailed || st == StateFailed
}

// ShouldRestartTask reports whether the request restarts a task in state st.
func (r RestartRequest) ShouldRestartTask(st State) bool {
	return r.IncludeTasks && (!r.OnlyFailed || st == StateFailed)
}

// OffsetStore keeps source connectors' offsets: per connector, a map from
// source partition to source offset (Kafka's OffsetBackingStore seen
// through OffsetStorageReader/Writer).
type OffsetStore interface {
	// Get returns the offsets of the given partitions, aligned with them
	// (nil where none is stored).
	Get(ctx context.Context, connector string, partitions []map[string]any) ([]map[string]any, error)
	// Put stores offsets durably: when it returns nil they survive a
	// crash. A nil Offset deletes the partition's offset.
	Put(ctx context.Context, connector string, offsets []connect.SourcePartitionOffset) error
	// All returns every partition with an offset for connector, sorted by
	// partition key (KIP-875 GET /connectors/{name}/offsets).
	All(ctx context.Context, connector string) ([]connect.SourcePartitionOffset, error)
	Close() error
}

// ConfigStore keeps connector configs, committed task configs, target
// states and restart requests (Kafka's ConfigBackingStore). Writes are
// visible in Snapshot once read back (at once for the memory store).
type ConfigStore interface {
	Snapshot() *ConfigSnapshot
	// PutConnectorConfig writes a connector's config; target, if not
	// nil, is written first (an initial state for a new connector).
	PutConnectorConfig(ctx context.Context, name string, config map[string]string, target *TargetState) error
	// RemoveConnectorConfig deletes the connector, its tasks and state.
	RemoveConnectorConfig(ctx context.Context, name string) error
	// PutTaskConfigs replaces the connector's task configs (an empty list
	// removes all tasks, as stopping a connector does).
	PutTaskConfigs(ctx context.Context, name string, tasks []map[string]string) error
	PutTargetState(ctx context.Context, name string, state TargetState) error
	PutRestartRequest(ctx context.Context, req RestartRequest) error
	// SetListener registers the callback for changes (nil removes it).
	SetListener(l ConfigListener)
	Close() error
}

// ConfigListener hears about config changes (Kafka's
// ConfigBackingStore.UpdateListener). Callbacks run on the store's
// goroutine: they must not block on the store.
type ConfigListener interface {
	ConnectorConfigUpdated(name string)
	ConnectorConfigRemoved(name string)
	TaskConfigsUpdated(tasks []TaskID)
	TargetStateChanged(name string)
	RestartRequested(req RestartRequest)
}

// StatusStore keeps connector and task statuses (Kafka's
// StatusBackingStore). Put writes unconditionally; PutSafe writes only if
// it does not overwrite a newer generation's status from another worker.
// A DESTROYED status deletes the entry.
type StatusStore interface {
	Put(ctx context.Context, st Status) error
	PutSafe(ctx context.Context, st Status) error
	Connector(name string) (Status, bool)
	Task(id TaskID) (Status, bool)
	// Tasks returns the connector's task statuses ordered by task.
	Tasks(connector string) []Status
	Connectors() []string
	Close() error
}

// TopicStatusStore keeps the topics each connector used (KIP-558).
type TopicStatusStore interface {
	PutTopic(ctx context.Context, ts TopicStatus) error
	// Topics returns the connector's topics sorted by name.
	Topics(connector string) []TopicStatus
	DeleteTopic(ctx context.Context, connector, topic string) error
}
