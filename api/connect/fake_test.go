package connectapi

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/fjordhq/fjord/connect/herder"
)

// fakeHerder is an in-memory herder for the REST layer's tests. It runs
// a miniature of Kafka's FileStreamSource/FileStreamSink connectors
// synchronously (a created connector's tasks run at once) and answers
// with Kafka's DistributedHerder messages, so the goldens captured from
// Kafka Connect can be replayed against it. Validation answers for whole
// configs can be primed (validate), as the full ConnectorConfig
// definition belongs to the runtime, not to this package.
type fakeHerder struct {
	mu         sync.Mutex
	connectors map[string]*fakeConnector
	// validate holds primed answers, keyed by canonical JSON of the config.
	validate map[string]*herder.ConfigInfos
	// notLeader, if set, makes every call that changes state answer
	// NotLeaderError with this leader URL.
	notLeader *herder.NotLeaderError
	// fail, if set, is returned by every call.
	fail    error
	healthy error
	calls   []string
}

type fakeConnector struct {
	config  map[string]string
	target  herder.TargetState
	kind    herder.ConnectorType
	state   herder.State
	tasks   []map[string]string
	states  []herder.State
	traces  []string
	topics  []string
	offsets []herder.ConnectorOffset
}

const fakeWorker = "127.0.0.1:8083"

func newFakeHerder() *fakeHerder {
	return &fakeHerder{connectors: map[string]*fakeConnector{}, validate: map[string]*herder.ConfigInfos{}}
}

var _ herder.Herder = (*fakeHerder)(nil)

func (f *fakeHerder) call(name string) error {
	f.calls = append(f.calls, name)
	return f.fail
}

func (f *fakeHerder) write(name string) error {
	if err := f.call(name); err != nil {
		return err
	}
	if f.notLeader != nil {
		return f.notLeader
	}
	return nil
}

func (f *fakeHerder) KafkaClusterID() string { return "fake-cluster-id" }

func (f *fakeHerder) Healthy(ctx context.Context) error { return f.healthy }

func (f *fakeHerder) Connectors(ctx context.Context) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("Connectors"); err != nil {
		return nil, err
	}
	return slices.Sorted(maps.Keys(f.connectors)), nil
}

func notFound(name string) error { return herder.NotFound(name) }

func unknown(name string) error {
	return herder.Errorf(http.StatusNotFound, "Unknown connector %s", name)
}

func (f *fakeHerder) ConnectorInfo(ctx context.Context, name string) (*herder.ConnectorInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("ConnectorInfo"); err != nil {
		return nil, err
	}
	c, ok := f.connectors[name]
	if !ok {
		return nil, notFound(name)
	}
	return c.info(name), nil
}

func (c *fakeConnector) info(name string) *herder.ConnectorInfo {
	info := &herder.ConnectorInfo{Name: name, Config: maps.Clone(c.config), Type: c.kind, Tasks: []herder.TaskID{}}
	for i := range c.tasks {
		info.Tasks = append(info.Tasks, herder.TaskID{Connector: name, Task: i})
	}
	return info
}

func (c *fakeConnector) status(name string) *herder.ConnectorStateInfo {
	st := &herder.ConnectorStateInfo{Name: name, Type: c.kind, Tasks: []herder.TaskState{},
		Connector: herder.ConnectorState{State: c.state, WorkerID: fakeWorker, Version: "4.4.0"}}
	for i, s := range c.states {
		st.Tasks = append(st.Tasks, herder.TaskState{ID: i, State: s, WorkerID: fakeWorker, Version: "4.4.0", Trace: c.traces[i]})
	}
	return st
}

func (f *fakeHerder) ConnectorStatus(ctx context.Context, name string) (*herder.ConnectorStateInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("ConnectorStatus"); err != nil {
		return nil, err
	}
	c, ok := f.connectors[name]
	if !ok {
		return nil, herder.Errorf(http.StatusNotFound, "No status found for connector %s", name)
	}
	return c.status(name), nil
}

func (f *fakeHerder) TaskStatus(ctx context.Context, id herder.TaskID) (*herder.TaskState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("TaskStatus"); err != nil {
		return nil, err
	}
	c, ok := f.connectors[id.Connector]
	if !ok || id.Task < 0 || id.Task >= len(c.states) {
		return nil, herder.Errorf(http.StatusNotFound, "No status found for task %s", id)
	}
	st := c.status(id.Connector).Tasks[id.Task]
	return &st, nil
}

// classKind resolves the file connectors by class or alias.
func classKind(class string) (herder.ConnectorType, string, bool) {
	switch strings.TrimSpace(class) {
	case "FileStreamSource", "FileStreamSourceConnector", "org.apache.kafka.connect.file.FileStreamSourceConnector":
		return herder.TypeSource, "org.apache.kafka.connect.file.FileStreamSourceTask", true
	case "FileStreamSink", "FileStreamSinkConnector", "org.apache.kafka.connect.file.FileStreamSinkConnector":
		return herder.TypeSink, "org.apache.kafka.connect.file.FileStreamSinkTask", true
	}
	return "", "", false
}

// check validates a config with the file connectors' rules and Kafka's
// messages (tasks.max an INT >= 1; a sink needs topics or topics.regex;
// a source needs topic).
func check(cfg map[string]string) (herder.ConnectorType, []string, error) {
	class, ok := cfg["connector.class"]
	if !ok {
		return "", nil, herder.Errorf(http.StatusInternalServerError, "org.apache.kafka.connect.runtime.rest.errors.BadRequestException: Connector config contains no connector type")
	}
	kind, _, ok := classKind(class)
	if !ok {
		return "", nil, herder.Errorf(http.StatusBadRequest, "Failed to find any class that implements Connector and which name matches %s, available connectors are: FileStreamSink, FileStreamSource", class)
	}
	var errs []string
	if v, ok := cfg["tasks.max"]; ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		switch {
		case err != nil:
			errs = append(errs, fmt.Sprintf("Invalid value %s for configuration tasks.max: Not a number of type INT", v),
				"Invalid value null for configuration tasks.max: Value must be non-null")
		case n < 1:
			errs = append(errs, fmt.Sprintf("Invalid value %s for configuration tasks.max: Value must be at least 1", v))
		}
	}
	switch kind {
	case herder.TypeSink:
		if cfg["topics"] == "" && cfg["topics.regex"] == "" {
			errs = append(errs, "Must configure one of topics or topics.regex", "Must configure one of topics or topics.regex")
		}
	case herder.TypeSource:
		if _, ok := cfg["topic"]; !ok {
			errs = append(errs, `Missing required configuration "topic" which has no default value.`)
		}
	}
	return kind, errs, nil
}

func canonical(cfg map[string]string) string {
	b, _ := json.Marshal(cfg) // sorted keys
	return string(b)
}

func (f *fakeHerder) ValidateConnectorConfig(ctx context.Context, config map[string]string) (*herder.ConfigInfos, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("ValidateConnectorConfig"); err != nil {
		return nil, err
	}
	if ci, ok := f.validate[canonical(config)]; ok {
		return ci, nil
	}
	_, errs, err := check(config)
	if err != nil {
		// Kafka's validate endpoint wraps the herder's BadRequestException
		// in a 500.
		if e := errorOf(err); e.Code == http.StatusBadRequest {
			return nil, herder.Errorf(http.StatusInternalServerError, "org.apache.kafka.connect.runtime.rest.errors.BadRequestException: %s", e.Message)
		}
		return nil, err
	}
	// A small answer: the file connectors' main keys and every given
	// key, sorted; errors on the first.
	ci := &herder.ConfigInfos{Name: config["connector.class"], ErrorCount: len(errs), Groups: []string{"Common"}}
	keys := map[string]bool{"connector.class": true, "file": true, "name": true, "topic": true, "topics": true}
	for k := range config {
		keys[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		ki := herder.ConfigInfo{
			Definition: herder.ConfigKeyInfo{Name: k, Type: "STRING", Importance: "HIGH", Width: "NONE", DisplayName: k, Order: -1},
			Value:      herder.ConfigValueInfo{Name: k, Visible: true},
		}
		if v, ok := config[k]; ok {
			ki.Value.Value = &v
		}
		ci.Configs = append(ci.Configs, ki)
	}
	if len(errs) > 0 && len(ci.Configs) > 0 {
		ci.Configs[0].Value.Errors = errs
	}
	return ci, nil
}

func (f *fakeHerder) PutConnectorConfig(ctx context.Context, name string, config map[string]string, initialState herder.TargetState, allowReplace bool) (bool, *herder.ConnectorInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.write("PutConnectorConfig"); err != nil {
		return false, nil, err
	}
	kind, errs, err := check(config)
	if err != nil {
		return false, nil, err
	}
	if len(errs) > 0 {
		return false, nil, herder.Errorf(http.StatusBadRequest, "%s", InvalidConfigMessage(len(errs), errs))
	}
	c, exists := f.connectors[name]
	if exists && !allowReplace {
		return false, nil, herder.AlreadyExists(name)
	}
	if exists {
		c.config = maps.Clone(config)
		if c.state == herder.StateRunning {
			c.start()
		}
		return false, c.info(name), nil
	}
	c = &fakeConnector{config: maps.Clone(config), kind: kind, target: initialState}
	if c.target == "" {
		c.target = herder.TargetRunning
	}
	f.connectors[name] = c
	// Kafka answers before the connector started: no tasks yet.
	info := c.info(name)
	switch c.target {
	case herder.TargetRunning:
		c.start()
	case herder.TargetPaused:
		c.state = herder.StatePaused
	case herder.TargetStopped:
		c.state = herder.StateStopped
	}
	return true, info, nil
}

// start runs the connector: a source has one task, a sink tasks.max;
// tasks whose file cannot be opened fail, as FileStreamSinkTask does.
func (c *fakeConnector) start() {
	c.state = herder.StateRunning
	n := 1
	if c.kind == herder.TypeSink {
		if m, err := strconv.Atoi(c.config["tasks.max"]); err == nil {
			n = m
		}
	}
	_, taskClass, _ := classKind(c.config["connector.class"])
	c.tasks, c.states, c.traces = nil, nil, nil
	for range n {
		tc := maps.Clone(c.config)
		tc["task.class"] = taskClass
		c.tasks = append(c.tasks, tc)
		st, trace := herder.StateRunning, ""
		if file := c.config["file"]; c.kind == herder.TypeSink && file != "" {
			if fh, err := os.OpenFile(file, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err != nil {
				st, trace = herder.StateFailed, fmt.Sprintf("org.apache.kafka.connect.errors.ConnectException: Couldn't find or create file '%s' for FileStreamSinkTask\n", file)
			} else {
				fh.Close()
			}
		}
		c.states = append(c.states, st)
		c.traces = append(c.traces, trace)
	}
	if c.kind == herder.TypeSource {
		c.topics = []string{c.config["topic"]}
		if fi, err := os.Stat(c.config["file"]); err == nil && c.offsets == nil {
			c.offsets = []herder.ConnectorOffset{{Partition: map[string]any{"filename": c.config["file"]}, Offset: map[string]any{"position": fi.Size()}}}
		}
	} else {
		c.topics = strings.Split(c.config["topics"], ",")
	}
}

func (f *fakeHerder) PatchConnectorConfig(ctx context.Context, name string, patch map[string]*string) (*herder.ConnectorInfo, error) {
	f.mu.Lock()
	if err := f.write("PatchConnectorConfig"); err != nil {
		f.mu.Unlock()
		return nil, err
	}
	c, ok := f.connectors[name]
	if !ok {
		f.mu.Unlock()
		return nil, notFound(name)
	}
	cfg := maps.Clone(c.config)
	f.mu.Unlock()
	for k, v := range patch {
		if v == nil {
			delete(cfg, k)
		} else {
			cfg[k] = *v
		}
	}
	_, info, err := f.PutConnectorConfig(ctx, name, cfg, "", true)
	return info, err
}

func (f *fakeHerder) DeleteConnector(ctx context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.write("DeleteConnector"); err != nil {
		return err
	}
	if _, ok := f.connectors[name]; !ok {
		return notFound(name)
	}
	delete(f.connectors, name)
	return nil
}

func (f *fakeHerder) TaskConfigs(ctx context.Context, name string) ([]herder.TaskInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("TaskConfigs"); err != nil {
		return nil, err
	}
	c, ok := f.connectors[name]
	if !ok {
		return nil, notFound(name)
	}
	var out []herder.TaskInfo
	for i, tc := range c.tasks {
		out = append(out, herder.TaskInfo{ID: herder.TaskID{Connector: name, Task: i}, Config: maps.Clone(tc)})
	}
	return out, nil
}

func (f *fakeHerder) RestartConnector(ctx context.Context, name string, includeTasks, onlyFailed bool) (*herder.ConnectorStateInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.write("RestartConnector"); err != nil {
		return nil, err
	}
	c, ok := f.connectors[name]
	if !ok {
		return nil, herder.Errorf(http.StatusNotFound, "Unknown connector: %s", name)
	}
	if !includeTasks && !onlyFailed {
		return nil, nil
	}
	// The planned state: what restarts shows RESTARTING (Kafka's
	// RestartPlan); the restart itself is immediate here.
	st := c.status(name)
	if !onlyFailed || c.state == herder.StateFailed {
		st.Connector.State = herder.StateRestarting
	}
	if includeTasks {
		for i := range st.Tasks {
			if !onlyFailed || st.Tasks[i].State == herder.StateFailed {
				st.Tasks[i].State = herder.StateRestarting
			}
		}
	}
	return st, nil
}

func (f *fakeHerder) RestartTask(ctx context.Context, id herder.TaskID) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.write("RestartTask"); err != nil {
		return err
	}
	c, ok := f.connectors[id.Connector]
	if !ok {
		return herder.Errorf(http.StatusNotFound, "Unknown connector: %s", id.Connector)
	}
	if id.Task < 0 || id.Task >= len(c.tasks) {
		return herder.Errorf(http.StatusNotFound, "Unknown task: %s", id)
	}
	return nil
}

func (f *fakeHerder) setTarget(name string, t herder.TargetState) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.write("Set" + string(t)); err != nil {
		return err
	}
	c, ok := f.connectors[name]
	if !ok {
		return unknown(name)
	}
	c.target = t
	switch t {
	case herder.TargetPaused:
		c.state = herder.StatePaused
		for i := range c.states {
			c.states[i] = herder.StatePaused
		}
	case herder.TargetStopped:
		c.state = herder.StateStopped
		c.tasks, c.states, c.traces = nil, nil, nil
	case herder.TargetRunning:
		if c.tasks == nil {
			c.start()
		}
		c.state = herder.StateRunning
		for i := range c.states {
			c.states[i] = herder.StateRunning
		}
	}
	return nil
}

func (f *fakeHerder) PauseConnector(ctx context.Context, name string) error {
	return f.setTarget(name, herder.TargetPaused)
}

func (f *fakeHerder) ResumeConnector(ctx context.Context, name string) error {
	return f.setTarget(name, herder.TargetRunning)
}

func (f *fakeHerder) StopConnector(ctx context.Context, name string) error {
	return f.setTarget(name, herder.TargetStopped)
}

func (f *fakeHerder) ConnectorActiveTopics(ctx context.Context, name string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("ConnectorActiveTopics"); err != nil {
		return nil, err
	}
	if c, ok := f.connectors[name]; ok {
		return slices.Clone(c.topics), nil
	}
	return nil, nil // Kafka: an unknown connector has no active topics
}

func (f *fakeHerder) ResetConnectorActiveTopics(ctx context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.write("ResetConnectorActiveTopics"); err != nil {
		return err
	}
	if c, ok := f.connectors[name]; ok {
		c.topics = nil
	}
	return nil
}

func (f *fakeHerder) ConnectorOffsets(ctx context.Context, name string) (*herder.ConnectorOffsets, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("ConnectorOffsets"); err != nil {
		return nil, err
	}
	c, ok := f.connectors[name]
	if !ok {
		return nil, notFound(name)
	}
	return &herder.ConnectorOffsets{Offsets: slices.Clone(c.offsets)}, nil
}

func (f *fakeHerder) stopped(name string) (*fakeConnector, error) {
	c, ok := f.connectors[name]
	if !ok {
		return nil, notFound(name)
	}
	if c.state != herder.StateStopped {
		return nil, herder.Errorf(http.StatusBadRequest, "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/%s/stop' endpoint", name)
	}
	return c, nil
}

func (f *fakeHerder) AlterConnectorOffsets(ctx context.Context, name string, offsets *herder.ConnectorOffsets) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.write("AlterConnectorOffsets"); err != nil {
		return "", err
	}
	c, err := f.stopped(name)
	if err != nil {
		return "", err
	}
	for _, o := range offsets.Offsets {
		if c.kind == herder.TypeSink {
			_, okT := o.Partition["kafka_topic"]
			_, okP := o.Partition["kafka_partition"]
			if !okT || !okP {
				return "", herder.Errorf(http.StatusBadRequest, "The partition for a sink connector offset must contain the keys 'kafka_topic' and 'kafka_partition'")
			}
		}
		i := slices.IndexFunc(c.offsets, func(x herder.ConnectorOffset) bool { return fmt.Sprint(x.Partition) == fmt.Sprint(o.Partition) })
		if i < 0 {
			c.offsets = append(c.offsets, o)
		} else {
			c.offsets[i] = o
		}
	}
	sort.Slice(c.offsets, func(i, j int) bool { return fmt.Sprint(c.offsets[i].Partition) < fmt.Sprint(c.offsets[j].Partition) })
	return "The offsets for this connector have been altered successfully", nil
}

func (f *fakeHerder) ResetConnectorOffsets(ctx context.Context, name string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.write("ResetConnectorOffsets"); err != nil {
		return "", err
	}
	c, err := f.stopped(name)
	if err != nil {
		return "", err
	}
	// Sources keep their partitions with null offsets (tombstones);
	// sinks' committed offsets are deleted.
	if c.kind == herder.TypeSink {
		c.offsets = nil
	}
	for i := range c.offsets {
		c.offsets[i].Offset = nil
	}
	return "The offsets for this connector have been reset successfully", nil
}
