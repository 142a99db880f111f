package herder

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/fjordhq/fjord/connect/plugins"
	"github.com/fjordhq/fjord/connect/storage"
)

// Standalone is Kafka's StandaloneHerder: one worker runs every connector
// and task of the process. Connector configs and statuses live in memory
// (connectors created over REST are gone after a restart; those in
// connector.properties files are created again by fjord
// connect-standalone), source offsets in the worker's offset store (the
// offset.storage.file.filename file), so a restarted process resumes
// where it committed. Every change runs under one mutex, as Kafka's
// synchronized herder methods do.
type Standalone struct {
	cfg  StandaloneConfig
	deps StandaloneDeps
	log  *slog.Logger

	mu     sync.Mutex // serialises changes; held across worker calls
	closed bool
}

var _ Herder = (*Standalone)(nil)

// StandaloneConfig configures a standalone herder.
type StandaloneConfig struct {
	// WorkerID names the worker in statuses (Kafka: the advertised REST
	// host:port).
	WorkerID string
	// KafkaClusterID is reported by GET /.
	KafkaClusterID string
	// TopicTracking and TopicTrackingAllowReset are the worker's
	// topic.tracking.enable and topic.tracking.allow.reset.
	TopicTracking           bool
	TopicTrackingAllowReset bool
	Logger                  *slog.Logger
}

// StandaloneDeps are the parts a standalone herder drives;
// connect/runtime's Worker is Worker and Offsets.
type StandaloneDeps struct {
	Worker  DistributedWorker
	Offsets OffsetManager
	// Validate validates a connector config (every field's errors).
	Validate func(ctx context.Context, config map[string]string) (*ConfigInfos, error)
	// ConnectorType tells a config's connector kind.
	ConnectorType func(config map[string]string) ConnectorType
	// Configs and Statuses default to in-memory stores; Topics to
	// Statuses when it tracks topics.
	Configs  storage.ConfigStore
	Statuses storage.StatusStore
	Topics   storage.TopicStatusStore
}

// NewStandalone returns a standalone herder.
func NewStandalone(cfg StandaloneConfig, deps StandaloneDeps) *Standalone {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if deps.Configs == nil {
		deps.Configs = storage.NewMemoryConfigStore()
	}
	if deps.Statuses == nil {
		deps.Statuses = storage.NewMemoryStatusStore()
	}
	if deps.Topics == nil {
		if ts, ok := deps.Statuses.(storage.TopicStatusStore); ok {
			deps.Topics = ts
		}
	}
	return &Standalone{cfg: cfg, deps: deps, log: cfg.Logger}
}

var errStandaloneStopping = Errorf(http.StatusServiceUnavailable, "The Connect worker is shutting down")

// Close stops every connector and task (their statuses become UNASSIGNED).
func (s *Standalone) Close(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	snap := s.deps.Configs.Snapshot()
	var ids []storage.TaskID
	for _, name := range snap.ConnectorNames() {
		ids = append(ids, snap.TaskIDs(name)...)
	}
	s.deps.Worker.StopTasks(ctx, ids)
	for _, name := range snap.ConnectorNames() {
		s.deps.Worker.StopConnector(ctx, name)
	}
}

// Status records a connector's (task < 0) or task's new state; the worker
// calls it. Running plugins' statuses carry their version, as Kafka 4's.
func (s *Standalone) Status(connector string, task int, state storage.State, err error) {
	st := storage.Status{Connector: connector, Task: task, State: state, WorkerID: s.cfg.WorkerID}
	if err != nil {
		st.Trace = StatusTrace(err)
	}
	st.Version = statusVersion(s.deps.Configs.Snapshot(), connector, state)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if werr := s.deps.Statuses.Put(ctx, st); werr != nil {
		s.log.Warn("could not write status", "connector", connector, "task", task, "state", state, "err", werr)
	}
}

// statusVersion is the plugin version a status carries (Kafka 4.x,
// KIP-891: "version" in the status topic and the REST answers) for the
// states of a connector or task that runs, or ran and failed.
func statusVersion(snap *storage.ConfigSnapshot, connector string, state storage.State) string {
	switch state {
	case storage.StateRunning, storage.StatePaused, storage.StateStopped, storage.StateFailed:
		if p, ok := plugins.Lookup(snap.Connectors[connector]["connector.class"]); ok {
			return p.Version
		}
	}
	return ""
}

// StatusTrace renders an error for a status's trace: the error's own
// Trace() when it has one (connect/runtime's errors print Kafka's
// exception names and causes), else the error chain.
func StatusTrace(err error) string {
	var t interface{ Trace() string }
	if errors.As(err, &t) {
		return t.Trace()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%T: %s", err, err.Error())
	for e := errors.Unwrap(err); e != nil; e = errors.Unwrap(e) {
		fmt.Fprintf(&b, "\nCaused by: %T: %s", e, e.Error())
	}
	return b.String()
}

func (s *Standalone) connectorType(config map[string]string) ConnectorType {
	if s.deps.ConnectorType == nil || config == nil {
		return TypeUnknown
	}
	return s.deps.ConnectorType(config)
}

func (s *Standalone) snapshot() *storage.ConfigSnapshot { return s.deps.Configs.Snapshot() }

func (s *Standalone) info(snap *storage.ConfigSnapshot, name string) *ConnectorInfo {
	config := snap.Connectors[name]
	tasks := []TaskID{}
	for i := range snap.TaskCount(name) {
		tasks = append(tasks, TaskID{Connector: name, Task: i})
	}
	return &ConnectorInfo{Name: name, Config: maps.Clone(config), Tasks: tasks, Type: s.connectorType(config)}
}

// Connectors lists the connectors, sorted.
func (s *Standalone) Connectors(context.Context) ([]string, error) {
	return s.snapshot().ConnectorNames(), nil
}

// ConnectorInfo answers GET /connectors/{name}.
func (s *Standalone) ConnectorInfo(_ context.Context, name string) (*ConnectorInfo, error) {
	snap := s.snapshot()
	if !snap.Contains(name) {
		return nil, NotFound(name)
	}
	return s.info(snap, name), nil
}

// ConnectorStatus answers GET /connectors/{name}/status.
func (s *Standalone) ConnectorStatus(_ context.Context, name string) (*ConnectorStateInfo, error) {
	cs, ok := s.deps.Statuses.Connector(name)
	if !ok {
		return nil, Errorf(http.StatusNotFound, "No status found for connector %s", name)
	}
	info := &ConnectorStateInfo{
		Name:      name,
		Connector: ConnectorState{State: State(cs.State), WorkerID: cs.WorkerID, Trace: cs.Trace, Version: cs.Version},
		Tasks:     []TaskState{},
		Type:      s.connectorType(s.snapshot().Connectors[name]),
	}
	for _, ts := range s.deps.Statuses.Tasks(name) {
		info.Tasks = append(info.Tasks, TaskState{ID: ts.Task, State: State(ts.State), WorkerID: ts.WorkerID, Trace: ts.Trace, Version: ts.Version})
	}
	return info, nil
}

// TaskStatus answers GET /connectors/{name}/tasks/{id}/status.
func (s *Standalone) TaskStatus(_ context.Context, id TaskID) (*TaskState, error) {
	ts, ok := s.deps.Statuses.Task(storage.TaskID{Connector: id.Connector, Task: id.Task})
	if !ok {
		return nil, Errorf(http.StatusNotFound, "No status found for task %s", id)
	}
	return &TaskState{ID: ts.Task, State: State(ts.State), WorkerID: ts.WorkerID, Trace: ts.Trace, Version: ts.Version}, nil
}

// InvalidConfigError is Kafka's refusal of a config with errors
// (AbstractHerder.maybeAddConfigErrors): 400, listing every error.
func InvalidConfigError(infos *ConfigInfos) *Error {
	var b strings.Builder
	fmt.Fprintf(&b, "Connector configuration is invalid and contains the following %d error(s):", infos.ErrorCount)
	for _, c := range infos.Configs {
		for _, e := range c.Value.Errors {
			b.WriteString("\n" + e)
		}
	}
	b.WriteString("\nYou can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`")
	return &Error{Code: http.StatusBadRequest, Message: b.String()}
}

// ValidateConnectorConfig answers PUT .../config/validate. As Kafka's
// endpoint, a config it cannot even start validating (no or an unknown
// connector.class: a BadRequestException) answers 500.
func (s *Standalone) ValidateConnectorConfig(ctx context.Context, config map[string]string) (*ConfigInfos, error) {
	infos, err := s.validate(ctx, config)
	if err != nil {
		var he *Error
		if errors.As(err, &he) && he.Code != http.StatusBadRequest {
			return nil, err
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "org.apache.kafka.connect.runtime.rest.errors.BadRequestException: ") {
			msg = "org.apache.kafka.connect.runtime.rest.errors.BadRequestException: " + msg
		}
		return nil, &Error{Code: http.StatusInternalServerError, Message: msg}
	}
	return infos, nil
}

func (s *Standalone) validate(ctx context.Context, config map[string]string) (*ConfigInfos, error) {
	if s.deps.Validate == nil {
		return &ConfigInfos{Name: config["connector.class"], Groups: []string{}, Configs: []ConfigInfo{}}, nil
	}
	return s.deps.Validate(ctx, config)
}

// PutConnectorConfig validates and (re)creates a connector, then starts
// it and its tasks.
func (s *Standalone) PutConnectorConfig(ctx context.Context, name string, config map[string]string, initial TargetState, allowReplace bool) (bool, *ConnectorInfo, error) {
	config = maps.Clone(config)
	if config == nil {
		config = map[string]string{}
	}
	if _, ok := config["name"]; !ok {
		config["name"] = name
	}
	infos, err := s.validate(ctx, config)
	if err != nil {
		return false, nil, err
	}
	if infos.ErrorCount > 0 {
		return false, nil, InvalidConfigError(infos)
	}
	var target *storage.TargetState
	if initial != "" {
		t, err := storage.ParseTargetState(string(initial))
		if err != nil {
			return false, nil, Errorf(http.StatusBadRequest, "%s", err.Error())
		}
		target = &t
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false, nil, errStandaloneStopping
	}
	snap := s.snapshot()
	exists := snap.Contains(name)
	if exists && !allowReplace {
		return false, nil, AlreadyExists(name)
	}
	// Tasks restart when the connector's config changed even if their own
	// configs did not (they run with its converters and transforms; Kafka's
	// KAFKA-9228 fix).
	changed := exists && !maps.Equal(snap.Connectors[name], config)
	if exists {
		s.deps.Worker.StopConnector(ctx, name)
	}
	if err := s.deps.Configs.PutConnectorConfig(ctx, name, config, target); err != nil {
		return false, nil, fmt.Errorf("store the config of connector %s: %w", name, err)
	}
	if changed {
		s.deps.Worker.StopTasks(ctx, snap.TaskIDs(name))
	}
	if s.startConnectorLocked(ctx, name) {
		s.updateTasksLocked(ctx, name)
	}
	info := s.info(s.snapshot(), name)
	return !exists, info, nil
}

// startConnectorLocked starts the connector in its target state; a
// failure is recorded as its FAILED status.
func (s *Standalone) startConnectorLocked(ctx context.Context, name string) bool {
	snap := s.snapshot()
	target := snap.TargetState(name)
	err := s.deps.Worker.StartConnector(ctx, name, snap.Connectors[name], target, s, func() { go s.requestTaskReconfiguration(name) })
	if err != nil {
		s.log.Error("connector failed to start", "connector", name, "err", err)
		s.Status(name, -1, storage.StateFailed, err)
		return false
	}
	return target == storage.TargetStarted
}

// updateTasksLocked regenerates the connector's task configs and, if
// they changed, replaces its tasks (Kafka's updateConnectorTasks).
func (s *Standalone) updateTasksLocked(ctx context.Context, name string) {
	snap := s.snapshot()
	if snap.TargetState(name) != storage.TargetStarted {
		return
	}
	configs, err := s.deps.Worker.ConnectorTaskConfigs(ctx, name, snap.Connectors[name])
	if err != nil {
		s.log.Error("could not generate task configs", "connector", name, "err", err)
		s.Status(name, -1, storage.StateFailed, err)
		return
	}
	old := snap.Tasks[name]
	if len(old) == len(configs) && reflect.DeepEqual(normalizeTasks(old), normalizeTasks(configs)) {
		// Unchanged: make sure they run (after a resume from STOPPED).
		s.startTasksLocked(ctx, name, false)
		return
	}
	s.deps.Worker.StopTasks(ctx, snap.TaskIDs(name))
	s.destroyTaskStatuses(name, len(configs), len(old))
	if err := s.deps.Configs.PutTaskConfigs(ctx, name, configs); err != nil {
		s.log.Error("could not store task configs", "connector", name, "err", err)
		return
	}
	s.startTasksLocked(ctx, name, true)
}

func normalizeTasks(ts []map[string]string) []map[string]string {
	out := make([]map[string]string, len(ts))
	for i, t := range ts {
		if t == nil {
			t = map[string]string{}
		}
		out[i] = t
	}
	return out
}

// destroyTaskStatuses deletes the statuses of tasks from..to-1 (tasks
// that no longer exist).
func (s *Standalone) destroyTaskStatuses(name string, from, to int) {
	for i := from; i < to; i++ {
		s.Status(name, i, storage.StateDestroyed, nil)
	}
}

// startTasksLocked starts the connector's tasks (all, or those not
// running when onlyMissing).
func (s *Standalone) startTasksLocked(ctx context.Context, name string, all bool) {
	snap := s.snapshot()
	running := map[storage.TaskID]bool{}
	if !all {
		if lister, ok := s.deps.Worker.(interface{ TaskIDs() []storage.TaskID }); ok {
			for _, id := range lister.TaskIDs() {
				running[id] = true
			}
		}
	}
	for _, id := range snap.TaskIDs(name) {
		if running[id] {
			continue
		}
		s.startTaskLocked(ctx, snap, id)
	}
}

func (s *Standalone) startTaskLocked(ctx context.Context, snap *storage.ConfigSnapshot, id storage.TaskID) bool {
	target := snap.TargetState(id.Connector)
	if target == storage.TargetStopped {
		return false
	}
	if err := s.deps.Worker.StartTask(ctx, id, snap.Connectors[id.Connector], snap.TaskConfig(id), target, s); err != nil {
		s.log.Error("task failed to start", "task", id.String(), "err", err)
		s.Status(id.Connector, id.Task, storage.StateFailed, err)
		return false
	}
	return true
}

func (s *Standalone) requestTaskReconfiguration(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || !s.snapshot().Contains(name) {
		return
	}
	s.updateTasksLocked(context.Background(), name)
}

// PatchConnectorConfig merges patch into the config and applies it.
func (s *Standalone) PatchConnectorConfig(ctx context.Context, name string, patch map[string]*string) (*ConnectorInfo, error) {
	snap := s.snapshot()
	if !snap.Contains(name) {
		return nil, NotFound(name)
	}
	config := maps.Clone(snap.Connectors[name])
	for k, v := range patch {
		if v == nil {
			delete(config, k)
		} else {
			config[k] = *v
		}
	}
	_, info, err := s.PutConnectorConfig(ctx, name, config, "", true)
	return info, err
}

// DeleteConnector stops and removes a connector and its statuses.
func (s *Standalone) DeleteConnector(ctx context.Context, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := s.snapshot()
	if !snap.Contains(name) {
		return NotFound(name)
	}
	s.deps.Worker.StopTasks(ctx, snap.TaskIDs(name))
	s.deps.Worker.StopConnector(ctx, name)
	if err := s.deps.Configs.RemoveConnectorConfig(ctx, name); err != nil {
		return fmt.Errorf("remove connector %s: %w", name, err)
	}
	for _, ts := range s.deps.Statuses.Tasks(name) {
		s.Status(name, ts.Task, storage.StateDestroyed, nil)
	}
	s.Status(name, -1, storage.StateDestroyed, nil)
	return nil
}

// TaskConfigs answers GET /connectors/{name}/tasks.
func (s *Standalone) TaskConfigs(_ context.Context, name string) ([]TaskInfo, error) {
	snap := s.snapshot()
	if !snap.Contains(name) {
		return nil, NotFound(name)
	}
	out := []TaskInfo{}
	for i, c := range snap.Tasks[name] {
		out = append(out, TaskInfo{ID: TaskID{Connector: name, Task: i}, Config: maps.Clone(c)})
	}
	return out, nil
}

// RestartConnector restarts the connector, and with includeTasks its
// tasks (onlyFailed: only FAILED ones), returning the plan when asked for
// tasks or failed instances (Kafka's restartConnectorAndTasks).
func (s *Standalone) RestartConnector(ctx context.Context, name string, includeTasks, onlyFailed bool) (*ConnectorStateInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := s.snapshot()
	if !snap.Contains(name) {
		return nil, Errorf(http.StatusNotFound, "Unknown connector: %s", name)
	}
	if !includeTasks && !onlyFailed {
		s.deps.Worker.StopConnector(ctx, name)
		if s.startConnectorLocked(ctx, name) {
			s.updateTasksLocked(ctx, name)
		}
		return nil, nil
	}
	req := storage.RestartRequest{Connector: name, IncludeTasks: includeTasks, OnlyFailed: onlyFailed}
	cs, ok := s.deps.Statuses.Connector(name)
	if !ok {
		return nil, Errorf(http.StatusNotFound, "Status for connector %s not found", name)
	}
	plan := &ConnectorStateInfo{Name: name, Type: s.connectorType(snap.Connectors[name]), Tasks: []TaskState{},
		Connector: ConnectorState{State: State(cs.State), WorkerID: cs.WorkerID, Trace: cs.Trace, Version: cs.Version}}
	restartConn := req.ShouldRestartConnector(cs.State)
	if restartConn {
		plan.Connector = ConnectorState{State: StateRestarting, WorkerID: cs.WorkerID}
	}
	var restartTasks []storage.TaskID
	for _, ts := range s.deps.Statuses.Tasks(name) {
		st := TaskState{ID: ts.Task, State: State(ts.State), WorkerID: ts.WorkerID, Trace: ts.Trace, Version: ts.Version}
		if req.ShouldRestartTask(ts.State) {
			st = TaskState{ID: ts.Task, State: StateRestarting, WorkerID: ts.WorkerID}
			restartTasks = append(restartTasks, ts.ID())
		}
		plan.Tasks = append(plan.Tasks, st)
	}
	// Stop first (the instances report UNASSIGNED), then announce the
	// restart, then start: the order Kafka's statuses show.
	s.deps.Worker.StopTasks(ctx, restartTasks)
	if restartConn {
		s.deps.Worker.StopConnector(ctx, name)
		s.Status(name, -1, storage.StateRestarting, nil)
	}
	for _, id := range restartTasks {
		s.Status(name, id.Task, storage.StateRestarting, nil)
	}
	if restartConn {
		s.startConnectorLocked(ctx, name)
	}
	snap = s.snapshot()
	for _, id := range restartTasks {
		if snap.TaskConfig(id) != nil {
			s.startTaskLocked(ctx, snap, id)
		}
	}
	return plan, nil
}

// RestartTask restarts one task with its current config.
func (s *Standalone) RestartTask(ctx context.Context, id TaskID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := s.snapshot()
	if !snap.Contains(id.Connector) {
		return Errorf(http.StatusNotFound, "Unknown connector: %s", id.Connector)
	}
	sid := storage.TaskID{Connector: id.Connector, Task: id.Task}
	if snap.TaskConfig(sid) == nil {
		return Errorf(http.StatusNotFound, "Unknown task: %s", id)
	}
	s.deps.Worker.StopTasks(ctx, []storage.TaskID{sid})
	if !s.startTaskLocked(ctx, snap, sid) {
		return Errorf(http.StatusInternalServerError, "Failed to start task: %s", id)
	}
	return nil
}

// PauseConnector pauses the connector and its tasks.
func (s *Standalone) PauseConnector(ctx context.Context, name string) error {
	return s.setTarget(ctx, name, storage.TargetPaused)
}

// ResumeConnector resumes a paused or stopped connector.
func (s *Standalone) ResumeConnector(ctx context.Context, name string) error {
	return s.setTarget(ctx, name, storage.TargetStarted)
}

func (s *Standalone) setTarget(ctx context.Context, name string, target storage.TargetState) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := s.snapshot()
	if !snap.Contains(name) {
		return Errorf(http.StatusNotFound, "Unknown connector %s", name)
	}
	prev := snap.TargetState(name)
	if err := s.deps.Configs.PutTargetState(ctx, name, target); err != nil {
		return fmt.Errorf("store the target state of connector %s: %w", name, err)
	}
	if prev == target {
		return nil
	}
	if err := s.deps.Worker.SetTargetState(ctx, name, target); err != nil {
		s.Status(name, -1, storage.StateFailed, err)
		return nil
	}
	if target == storage.TargetStarted {
		s.updateTasksLocked(ctx, name)
	}
	return nil
}

// StopConnector stops the connector and removes its tasks (KIP-875's
// STOPPED state).
func (s *Standalone) StopConnector(ctx context.Context, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := s.snapshot()
	if !snap.Contains(name) {
		return Errorf(http.StatusNotFound, "Unknown connector %s", name)
	}
	ids := snap.TaskIDs(name)
	s.deps.Worker.StopTasks(ctx, ids)
	s.destroyTaskStatuses(name, 0, len(ids))
	if err := s.deps.Configs.PutTaskConfigs(ctx, name, nil); err != nil {
		return fmt.Errorf("remove the tasks of connector %s: %w", name, err)
	}
	if err := s.deps.Configs.PutTargetState(ctx, name, storage.TargetStopped); err != nil {
		return fmt.Errorf("store the target state of connector %s: %w", name, err)
	}
	if err := s.deps.Worker.SetTargetState(ctx, name, storage.TargetStopped); err != nil {
		s.Status(name, -1, storage.StateFailed, err)
	}
	return nil
}

// ConnectorActiveTopics lists the topics the connector used (KIP-558).
func (s *Standalone) ConnectorActiveTopics(_ context.Context, name string) ([]string, error) {
	if !s.cfg.TopicTracking {
		return nil, Errorf(http.StatusForbidden, "Topic tracking is disabled.")
	}
	if !s.snapshot().Contains(name) {
		return nil, NotFound(name)
	}
	out := []string{}
	if s.deps.Topics != nil {
		for _, t := range s.deps.Topics.Topics(name) {
			out = append(out, t.Topic)
		}
	}
	return out, nil
}

// ResetConnectorActiveTopics forgets them.
func (s *Standalone) ResetConnectorActiveTopics(ctx context.Context, name string) error {
	if !s.cfg.TopicTracking {
		return Errorf(http.StatusForbidden, "Topic tracking is disabled.")
	}
	if !s.cfg.TopicTrackingAllowReset {
		return Errorf(http.StatusForbidden, "Topic tracking reset is disabled.")
	}
	if !s.snapshot().Contains(name) {
		return NotFound(name)
	}
	if s.deps.Topics == nil {
		return nil
	}
	for _, t := range s.deps.Topics.Topics(name) {
		if err := s.deps.Topics.DeleteTopic(ctx, name, t.Topic); err != nil {
			return fmt.Errorf("reset active topics of connector %s: %w", name, err)
		}
	}
	return nil
}

// ConnectorOffsets answers GET /connectors/{name}/offsets (KIP-875).
func (s *Standalone) ConnectorOffsets(ctx context.Context, name string) (*ConnectorOffsets, error) {
	snap := s.snapshot()
	if !snap.Contains(name) {
		return nil, NotFound(name)
	}
	if s.deps.Offsets == nil {
		return nil, Errorf(http.StatusInternalServerError, "Connector offsets are not available on this worker")
	}
	return s.deps.Offsets.ConnectorOffsets(ctx, name, maps.Clone(snap.Connectors[name]))
}

// AlterConnectorOffsets alters a STOPPED connector's offsets.
func (s *Standalone) AlterConnectorOffsets(ctx context.Context, name string, offsets *ConnectorOffsets) (string, error) {
	if offsets == nil {
		return "", Errorf(http.StatusBadRequest, "Offsets must be specified")
	}
	return s.modifyOffsets(ctx, name, offsets)
}

// ResetConnectorOffsets resets a STOPPED connector's offsets.
func (s *Standalone) ResetConnectorOffsets(ctx context.Context, name string) (string, error) {
	return s.modifyOffsets(ctx, name, nil)
}

func (s *Standalone) modifyOffsets(ctx context.Context, name string, offsets *ConnectorOffsets) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := s.snapshot()
	if !snap.Contains(name) {
		return "", NotFound(name)
	}
	if snap.TargetState(name) != storage.TargetStopped || snap.TaskCount(name) != 0 {
		return "", Errorf(http.StatusBadRequest, "Connectors must be in the STOPPED state before their offsets can be modified. "+
			"This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/%s/stop' endpoint", name)
	}
	if s.deps.Offsets == nil {
		return "", Errorf(http.StatusInternalServerError, "Connector offsets are not available on this worker")
	}
	return s.deps.Offsets.ModifyConnectorOffsets(ctx, name, maps.Clone(snap.Connectors[name]), offsets)
}

// KafkaClusterID is the cluster the worker talks to.
func (s *Standalone) KafkaClusterID() string { return s.cfg.KafkaClusterID }
