// Package herder coordinates connectors and tasks across workers: the
// Herder interface the REST API calls, the JSON entities of Kafka
// Connect's REST API, and its two implementations — Standalone (one
// worker, offsets in a file) and Distributed (workers in a group through
// the brokers' group coordinator, protocol type "connect", incremental
// cooperative assignment, state in the config/offset/status topics).
//
// Entity field names and JSON tags are Kafka Connect's, so REST answers
// are byte-for-byte what Kafka Connect users and tools expect.
package herder

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// Herder is what the REST API needs from a worker or cluster of workers.
// Methods take the request's context; errors are *Error (with the HTTP
// status Kafka Connect answers) or wrap one.
type Herder interface {
	// Connectors lists connector names, sorted.
	Connectors(ctx context.Context) ([]string, error)
	ConnectorInfo(ctx context.Context, name string) (*ConnectorInfo, error)
	ConnectorStatus(ctx context.Context, name string) (*ConnectorStateInfo, error)
	TaskStatus(ctx context.Context, id TaskID) (*TaskState, error)
	// PutConnectorConfig creates (or, with allowReplace, updates) a
	// connector after validating config; created reports whether it is
	// new. initialState is "" (RUNNING), RUNNING, PAUSED or STOPPED.
	PutConnectorConfig(ctx context.Context, name string, config map[string]string, initialState TargetState, allowReplace bool) (created bool, info *ConnectorInfo, err error)
	// PatchConnectorConfig merges patch into the config (nil values
	// delete keys) and applies it.
	PatchConnectorConfig(ctx context.Context, name string, patch map[string]*string) (*ConnectorInfo, error)
	DeleteConnector(ctx context.Context, name string) error
	TaskConfigs(ctx context.Context, name string) ([]TaskInfo, error)
	// RestartConnector restarts the connector and, with includeTasks,
	// its tasks (onlyFailed: only FAILED ones). The returned status is
	// the planned state (202 Accepted) when tasks are included, else nil.
	RestartConnector(ctx context.Context, name string, includeTasks, onlyFailed bool) (*ConnectorStateInfo, error)
	RestartTask(ctx context.Context, id TaskID) error
	PauseConnector(ctx context.Context, name string) error
	ResumeConnector(ctx context.Context, name string) error
	StopConnector(ctx context.Context, name string) error
	ConnectorActiveTopics(ctx context.Context, name string) ([]string, error)
	ResetConnectorActiveTopics(ctx context.Context, name string) error
	// ConnectorOffsets, AlterConnectorOffsets and ResetConnectorOffsets
	// implement KIP-875; altering and resetting need a STOPPED connector.
	ConnectorOffsets(ctx context.Context, name string) (*ConnectorOffsets, error)
	AlterConnectorOffsets(ctx context.Context, name string, offsets *ConnectorOffsets) (message string, err error)
	ResetConnectorOffsets(ctx context.Context, name string) (message string, err error)
	// ValidateConnectorConfig answers PUT
	// /connector-plugins/{plugin}/config/validate and is used by
	// PutConnectorConfig: every field's errors.
	ValidateConnectorConfig(ctx context.Context, config map[string]string) (*ConfigInfos, error)
	// KafkaClusterID is the cluster the worker's internal topics live in.
	KafkaClusterID() string
}

// TargetState is a connector's desired state.
type TargetState string

const (
	TargetRunning TargetState = "RUNNING"
	TargetPaused  TargetState = "PAUSED"
	TargetStopped TargetState = "STOPPED"
)

// State is a connector's or task's reported state.
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

// ConnectorType is "source", "sink" or "unknown".
type ConnectorType string

const (
	TypeSource  ConnectorType = "source"
	TypeSink    ConnectorType = "sink"
	TypeUnknown ConnectorType = "unknown"
)

// TaskID names a task: {"connector": "c", "task": 0}.
type TaskID struct {
	Connector string `json:"connector"`
	Task      int    `json:"task"`
}

func (t TaskID) String() string { return fmt.Sprintf("%s-%d", t.Connector, t.Task) }

// ConnectorInfo is GET /connectors/{name}.
type ConnectorInfo struct {
	Name   string            `json:"name"`
	Config map[string]string `json:"config"`
	Tasks  []TaskID          `json:"tasks"`
	Type   ConnectorType     `json:"type"`
}

// ConnectorStateInfo is GET /connectors/{name}/status.
type ConnectorStateInfo struct {
	Name      string         `json:"name"`
	Connector ConnectorState `json:"connector"`
	Tasks     []TaskState    `json:"tasks"`
	Type      ConnectorType  `json:"type"`
}

// ConnectorState is a connector's status.
type ConnectorState struct {
	State    State  `json:"state"`
	WorkerID string `json:"worker_id"`
	// Version is the running plugin's version (Kafka 4.x, KIP-891);
	// absent when nothing runs. Kafka prints it before the trace.
	Version string `json:"version,omitempty"`
	Trace   string `json:"trace,omitempty"`
}

// TaskState is a task's status.
type TaskState struct {
	ID       int    `json:"id"`
	State    State  `json:"state"`
	WorkerID string `json:"worker_id"`
	Version  string `json:"version,omitempty"` // as ConnectorState.Version
	Trace    string `json:"trace,omitempty"`
}

// TaskInfo is an element of GET /connectors/{name}/tasks.
type TaskInfo struct {
	ID     TaskID            `json:"id"`
	Config map[string]string `json:"config"`
}

// ConnectorOffsets is the KIP-875 offsets document:
// {"offsets": [{"partition": {...}, "offset": {...}}]}. For sinks the
// partition is {"kafka_topic": t, "kafka_partition": p} and the offset
// {"kafka_offset": o}.
type ConnectorOffsets struct {
	Offsets []ConnectorOffset `json:"offsets"`
}

// ConnectorOffset is one partition's offset; a nil Offset resets it.
type ConnectorOffset struct {
	Partition map[string]any `json:"partition"`
	Offset    map[string]any `json:"offset"`
}

// ConfigInfos is the validate endpoint's answer.
type ConfigInfos struct {
	Name       string       `json:"name"`
	ErrorCount int          `json:"error_count"`
	Groups     []string     `json:"groups"`
	Configs    []ConfigInfo `json:"configs"`
}

// ConfigInfo is one key: its definition and its validated value.
type ConfigInfo struct {
	Definition ConfigKeyInfo   `json:"definition"`
	Value      ConfigValueInfo `json:"value"`
}

// ConfigKeyInfo is a key's definition (also GET /connector-plugins/{p}/config).
type ConfigKeyInfo struct {
	Name          string   `json:"name"`
	Type          string   `json:"type"`
	Required      bool     `json:"required"`
	DefaultValue  *string  `json:"default_value"`
	Importance    string   `json:"importance"`
	Documentation string   `json:"documentation"`
	Group         string   `json:"group"`
	Order         int      `json:"order_in_group"`
	Width         string   `json:"width"`
	DisplayName   string   `json:"display_name"`
	Dependents    []string `json:"dependents"`
}

// MarshalJSON writes the key as Kafka does: a key without a group has
// "group": null, and dependents are a list, never null.
func (k ConfigKeyInfo) MarshalJSON() ([]byte, error) {
	var group *string
	if k.Group != "" {
		group = &k.Group
	}
	if k.Dependents == nil {
		k.Dependents = []string{}
	}
	v := struct {
		Name          string   `json:"name"`
		Type          string   `json:"type"`
		Required      bool     `json:"required"`
		DefaultValue  *string  `json:"default_value"`
		Importance    string   `json:"importance"`
		Documentation string   `json:"documentation"`
		Group         *string  `json:"group"`
		Order         int      `json:"order_in_group"`
		Width         string   `json:"width"`
		DisplayName   string   `json:"display_name"`
		Dependents    []string `json:"dependents"`
	}{k.Name, k.Type, k.Required, k.DefaultValue, k.Importance, k.Documentation, group, k.Order, k.Width, k.DisplayName, k.Dependents}
	// An Encoder, not json.Marshal: documentation often holds "<" and
	// "&", which Kafka (Jackson) writes as they are.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// ConfigValueInfo is a key's validated value.
type ConfigValueInfo struct {
	Name              string   `json:"name"`
	Value             *string  `json:"value"`
	RecommendedValues []string `json:"recommended_values"`
	Errors            []string `json:"errors"`
	Visible           bool     `json:"visible"`
}

// Error is a REST error: Kafka Connect's {"error_code": ..., "message": ...}.
type Error struct {
	Code    int    `json:"error_code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Message }

// Errorf returns an *Error with an HTTP status.
func Errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Common errors with Kafka Connect's messages.
func NotFound(name string) *Error {
	return Errorf(http.StatusNotFound, "Connector %s not found", name)
}

func TaskNotFound(id TaskID) *Error {
	return Errorf(http.StatusNotFound, "Task %s not found", id)
}

func AlreadyExists(name string) *Error {
	return Errorf(http.StatusConflict, "Connector %s already exists", name)
}

// ErrRebalancing is answered while the group rebalances (409).
var ErrRebalancing = &Error{Code: http.StatusConflict, Message: "Cannot complete request momentarily due to stale configuration (typically caused by a concurrent config change)"}

// StatusOf returns the HTTP status for err (500 if it is not an *Error).
func StatusOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return http.StatusInternalServerError
}

// NotLeaderError tells the REST layer to forward the request to the
// leader's REST URL, as Kafka Connect followers do.
type NotLeaderError struct{ LeaderURL string }

func (e *NotLeaderError) Error() string {
	return "Cannot complete request because of a conflicting operation (e.g. worker rebalance); the leader is at " + e.LeaderURL
}
