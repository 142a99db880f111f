package herder

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/fjordhq/fjord/connect/herder/group"
	"github.com/fjordhq/fjord/connect/storage"
)

var _ Herder = (*Distributed)(nil)

// errRebalanceNeeded is Kafka's RebalanceNeededException: a config change
// was read that the group has not rebalanced for yet.
var errRebalanceNeeded = Errorf(http.StatusConflict, "Request cannot be completed because a rebalance is expected")

var errStopping = Errorf(http.StatusServiceUnavailable, "The Connect worker is shutting down")

// do runs fn on the herder's goroutine and returns its error. If ctx ends
// first do returns; fn may still run later (as a Kafka herder request
// does once queued).
func (d *Distributed) do(ctx context.Context, fn func() error) error {
	res := make(chan error, 1)
	req := func() {
		if d.stopping() {
			res <- errStopping
			return
		}
		res <- fn()
	}
	select {
	case d.requests <- req:
	case <-ctx.Done():
		return ctx.Err()
	case <-d.done:
		return errStopping
	}
	select {
	case err := <-res:
		return err
	case <-ctx.Done():
		return ctx.Err()
	case <-d.done:
		select {
		case err := <-res:
			return err
		default:
			return errStopping
		}
	}
}

// checkRebalanceNeeded: read requests answer 409 while a config change
// waits for its rebalance, as Kafka's do.
func (d *Distributed) checkRebalanceNeeded() error {
	if d.needsReconfig || d.pending.needsRebalance(d.known) {
		return errRebalanceNeeded
	}
	return nil
}

func (d *Distributed) notLeader() error {
	return &NotLeaderError{LeaderURL: d.leaderURL()}
}

// Connectors lists the connectors, sorted.
func (d *Distributed) Connectors(ctx context.Context) ([]string, error) {
	var out []string
	err := d.do(ctx, func() error {
		if err := d.checkRebalanceNeeded(); err != nil {
			return err
		}
		out = d.snapshot.ConnectorNames()
		return nil
	})
	return out, err
}

func (d *Distributed) info(name string) *ConnectorInfo {
	config := d.snapshot.Connectors[name]
	tasks := []TaskID{}
	for i := range d.snapshot.TaskCount(name) {
		tasks = append(tasks, TaskID{Connector: name, Task: i})
	}
	return &ConnectorInfo{Name: name, Config: maps.Clone(config), Tasks: tasks, Type: d.connectorType(config)}
}

// ConnectorInfo answers GET /connectors/{name}.
func (d *Distributed) ConnectorInfo(ctx context.Context, name string) (*ConnectorInfo, error) {
	var out *ConnectorInfo
	err := d.do(ctx, func() error {
		if err := d.checkRebalanceNeeded(); err != nil {
			return err
		}
		if !d.snapshot.Contains(name) {
			return NotFound(name)
		}
		out = d.info(name)
		return nil
	})
	return out, err
}

// ConnectorStatus reads the status topic directly, as Kafka does.
func (d *Distributed) ConnectorStatus(_ context.Context, name string) (*ConnectorStateInfo, error) {
	cs, ok := d.deps.Statuses.Connector(name)
	if !ok || cs.State == storage.StateDestroyed {
		return nil, Errorf(http.StatusNotFound, "No status found for connector %s", name)
	}
	info := &ConnectorStateInfo{
		Name:      name,
		Connector: ConnectorState{State: State(cs.State), WorkerID: cs.WorkerID, Trace: cs.Trace, Version: cs.Version},
		Tasks:     []TaskState{},
		Type:      d.connectorType(d.deps.Configs.Snapshot().Connectors[name]),
	}
	for _, ts := range d.deps.Statuses.Tasks(name) {
		if ts.State == storage.StateDestroyed {
			continue
		}
		info.Tasks = append(info.Tasks, TaskState{ID: ts.Task, State: State(ts.State), WorkerID: ts.WorkerID, Trace: ts.Trace, Version: ts.Version})
	}
	return info, nil
}

// TaskStatus reads a task's status from the status topic.
func (d *Distributed) TaskStatus(_ context.Context, id TaskID) (*TaskState, error) {
	ts, ok := d.deps.Statuses.Task(storage.TaskID{Connector: id.Connector, Task: id.Task})
	if !ok || ts.State == storage.StateDestroyed {
		return nil, Errorf(http.StatusNotFound, "No status found for task %s", id)
	}
	return &TaskState{ID: ts.Task, State: State(ts.State), WorkerID: ts.WorkerID, Trace: ts.Trace, Version: ts.Version}, nil
}

// PutConnectorConfig validates the config (outside the herder's
// goroutine: validation may reach external systems), then writes it as
// the leader.
func (d *Distributed) PutConnectorConfig(ctx context.Context, name string, config map[string]string, initial TargetState, allowReplace bool) (bool, *ConnectorInfo, error) {
	if err := d.validateForWrite(ctx, config); err != nil {
		return false, nil, err
	}
	var target *storage.TargetState
	if initial != "" {
		t, err := storage.ParseTargetState(string(initial))
		if err != nil {
			return false, nil, Errorf(http.StatusBadRequest, "%s", err.Error())
		}
		target = &t
	}
	var created bool
	var info *ConnectorInfo
	err := d.do(ctx, func() error {
		if !d.isLeader() {
			return d.notLeader()
		}
		exists := d.snapshot.Contains(name)
		if exists && !allowReplace {
			return AlreadyExists(name)
		}
		if err := d.deps.Configs.PutConnectorConfig(d.ctx, name, config, target); err != nil {
			return fmt.Errorf("write the config of connector %s to the config topic: %w", name, err)
		}
		created = !exists
		// As Kafka: the new config with the tasks known so far.
		info = d.info(name)
		info.Config = maps.Clone(config)
		info.Type = d.connectorType(config)
		return nil
	})
	return created, info, err
}

// validateForWrite refuses a config with errors, listing all of them as
// Kafka's maybeAddConfigErrors does.
func (d *Distributed) validateForWrite(ctx context.Context, config map[string]string) error {
	infos, err := d.ValidateConnectorConfig(ctx, config)
	if err != nil {
		return err
	}
	if infos == nil || infos.ErrorCount == 0 {
		return nil
	}
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

// PatchConnectorConfig merges patch into the current config (nil values
// delete keys) and writes it as the leader.
func (d *Distributed) PatchConnectorConfig(ctx context.Context, name string, patch map[string]*string) (*ConnectorInfo, error) {
	var current map[string]string
	err := d.do(ctx, func() error {
		if !d.isLeader() {
			return d.notLeader()
		}
		if !d.snapshot.Contains(name) {
			return NotFound(name)
		}
		current = maps.Clone(d.snapshot.Connectors[name])
		return nil
	})
	if err != nil {
		return nil, err
	}
	for k, v := range patch {
		if v == nil {
			delete(current, k)
		} else {
			current[k] = *v
		}
	}
	_, info, err := d.PutConnectorConfig(ctx, name, current, "", true)
	return info, err
}

// DeleteConnector removes a connector (leader only).
func (d *Distributed) DeleteConnector(ctx context.Context, name string) error {
	return d.do(ctx, func() error {
		if !d.isLeader() {
			return d.notLeader()
		}
		if !d.snapshot.Contains(name) {
			return NotFound(name)
		}
		if err := d.deps.Configs.RemoveConnectorConfig(d.ctx, name); err != nil {
			return fmt.Errorf("remove connector %s from the config topic: %w", name, err)
		}
		return nil
	})
}

// TaskConfigs answers GET /connectors/{name}/tasks.
func (d *Distributed) TaskConfigs(ctx context.Context, name string) ([]TaskInfo, error) {
	var out []TaskInfo
	err := d.do(ctx, func() error {
		if err := d.checkRebalanceNeeded(); err != nil {
			return err
		}
		if !d.snapshot.Contains(name) {
			return NotFound(name)
		}
		out = []TaskInfo{}
		for i, c := range d.snapshot.Tasks[name] {
			out = append(out, TaskInfo{ID: TaskID{Connector: name, Task: i}, Config: maps.Clone(c)})
		}
		return nil
	})
	return out, err
}

// PutTaskConfigs is Kafka's internal POST /connectors/{name}/tasks: a
// follower running the connector hands its new task configs to the
// leader, which writes them.
func (d *Distributed) PutTaskConfigs(ctx context.Context, name string, configs []map[string]string) error {
	return d.do(ctx, func() error {
		if !d.isLeader() {
			return d.notLeader()
		}
		if !d.snapshot.Contains(name) {
			return NotFound(name)
		}
		return d.writeTaskConfigs(name, configs)
	})
}

// RestartConnector restarts a connector, or with includeTasks or
// onlyFailed, broadcasts a restart request (KIP-745) and returns the plan.
func (d *Distributed) RestartConnector(ctx context.Context, name string, includeTasks, onlyFailed bool) (*ConnectorStateInfo, error) {
	if !includeTasks && !onlyFailed {
		return nil, d.do(ctx, func() error {
			if err := d.checkRebalanceNeeded(); err != nil {
				return err
			}
			if !d.snapshot.Contains(name) {
				return Errorf(http.StatusNotFound, "Unknown connector: %s", name)
			}
			switch {
			case d.assignment != nil && containsString(d.assignment.Connectors, name):
				if d.started[name] {
					d.deps.Worker.StopConnector(context.WithoutCancel(d.ctx), name)
					delete(d.started, name)
				}
				d.startConnector(name)
				return nil
			case d.isLeader():
				// Not ours: the REST layer forwards to its owner.
				return &NotLeaderError{LeaderURL: d.ownerURL(name, -1)}
			}
			return d.notLeader()
		})
	}
	var plan *ConnectorStateInfo
	err := d.do(ctx, func() error {
		if err := d.checkRebalanceNeeded(); err != nil {
			return err
		}
		if !d.snapshot.Contains(name) {
			return Errorf(http.StatusNotFound, "Unknown connector: %s", name)
		}
		if !d.isLeader() {
			return d.notLeader()
		}
		req := storage.RestartRequest{Connector: name, IncludeTasks: includeTasks, OnlyFailed: onlyFailed}
		if err := d.deps.Configs.PutRestartRequest(d.ctx, req); err != nil {
			return fmt.Errorf("write the restart request of connector %s to the config topic: %w", name, err)
		}
		p, ok := d.restartPlan(req)
		if !ok {
			return Errorf(http.StatusNotFound, "Status for connector %s not found", name)
		}
		plan = p
		return nil
	})
	return plan, err
}

// RestartTask restarts a task where it runs (forwarded there by way of
// the leader).
func (d *Distributed) RestartTask(ctx context.Context, id TaskID) error {
	return d.do(ctx, func() error {
		if err := d.checkRebalanceNeeded(); err != nil {
			return err
		}
		if !d.snapshot.Contains(id.Connector) {
			return Errorf(http.StatusNotFound, "Unknown connector: %s", id.Connector)
		}
		sid := storage.TaskID{Connector: id.Connector, Task: id.Task}
		if d.snapshot.TaskConfig(sid) == nil {
			return Errorf(http.StatusNotFound, "Unknown task: %s", id)
		}
		switch {
		case d.assignment != nil && d.ownsTask(sid):
			d.deps.Worker.StopTasks(context.WithoutCancel(d.ctx), []storage.TaskID{sid})
			if !d.startTask(sid) {
				return Errorf(http.StatusInternalServerError, "Failed to start task: %s", id)
			}
			return nil
		case d.isLeader():
			return &NotLeaderError{LeaderURL: d.ownerURL(id.Connector, id.Task)}
		}
		return d.notLeader()
	})
}

func (d *Distributed) ownsTask(id storage.TaskID) bool {
	for _, t := range d.assignment.Tasks {
		if t.Connector == id.Connector && int(t.Task) == id.Task {
			return true
		}
	}
	return false
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// PauseConnector and ResumeConnector write the target state from any
// worker, as Kafka's AbstractHerder does (no leader needed).
func (d *Distributed) PauseConnector(ctx context.Context, name string) error {
	return d.putTargetState(ctx, name, storage.TargetPaused)
}

func (d *Distributed) ResumeConnector(ctx context.Context, name string) error {
	return d.putTargetState(ctx, name, storage.TargetStarted)
}

func (d *Distributed) putTargetState(ctx context.Context, name string, st storage.TargetState) error {
	if !d.deps.Configs.Snapshot().Contains(name) {
		return Errorf(http.StatusNotFound, "Unknown connector %s", name)
	}
	if err := d.deps.Configs.PutTargetState(ctx, name, st); err != nil {
		return fmt.Errorf("write the target state of connector %s to the config topic: %w", name, err)
	}
	return nil
}

// StopConnector moves a connector to STOPPED: empty task configs first,
// then the target state (leader only, as it writes task configs).
func (d *Distributed) StopConnector(ctx context.Context, name string) error {
	return d.do(ctx, func() error {
		if !d.snapshot.Contains(name) {
			return Errorf(http.StatusNotFound, "Unknown connector %s", name)
		}
		if !d.isLeader() {
			return d.notLeader()
		}
		if err := d.writeTaskConfigs(name, nil); err != nil {
			return err
		}
		if err := d.deps.Configs.PutTargetState(d.ctx, name, storage.TargetStopped); err != nil {
			return fmt.Errorf("write the STOPPED target state of connector %s: %w", name, err)
		}
		if !d.refreshConfigs() {
			d.log.Warn("could not read to the end of the config topic after stopping a connector", "connector", name)
		}
		return nil
	})
}

// ConnectorActiveTopics lists the topics the connector used (KIP-558).
func (d *Distributed) ConnectorActiveTopics(_ context.Context, name string) ([]string, error) {
	out := []string{}
	if d.deps.Topics == nil {
		return out, nil
	}
	for _, t := range d.deps.Topics.Topics(name) {
		out = append(out, t.Topic)
	}
	return out, nil
}

// ResetConnectorActiveTopics forgets them.
func (d *Distributed) ResetConnectorActiveTopics(ctx context.Context, name string) error {
	if d.deps.Topics == nil {
		return nil
	}
	for _, t := range d.deps.Topics.Topics(name) {
		if err := d.deps.Topics.DeleteTopic(ctx, name, t.Topic); err != nil {
			return fmt.Errorf("reset active topics of connector %s: %w", name, err)
		}
	}
	return nil
}

// ConnectorOffsets answers GET /connectors/{name}/offsets (KIP-875).
func (d *Distributed) ConnectorOffsets(ctx context.Context, name string) (*ConnectorOffsets, error) {
	var config map[string]string
	err := d.do(ctx, func() error {
		if !d.snapshot.Contains(name) {
			return NotFound(name)
		}
		config = maps.Clone(d.snapshot.Connectors[name])
		return nil
	})
	if err != nil {
		return nil, err
	}
	if d.deps.Offsets == nil {
		return nil, Errorf(http.StatusInternalServerError, "Connector offsets are not available on this worker")
	}
	return d.deps.Offsets.ConnectorOffsets(ctx, name, config)
}

// AlterConnectorOffsets and ResetConnectorOffsets modify a STOPPED
// connector's offsets (KIP-875; leader only).
func (d *Distributed) AlterConnectorOffsets(ctx context.Context, name string, offsets *ConnectorOffsets) (string, error) {
	if offsets == nil {
		return "", Errorf(http.StatusBadRequest, "Offsets must be specified")
	}
	return d.modifyOffsets(ctx, name, offsets)
}

func (d *Distributed) ResetConnectorOffsets(ctx context.Context, name string) (string, error) {
	return d.modifyOffsets(ctx, name, nil)
}

func (d *Distributed) modifyOffsets(ctx context.Context, name string, offsets *ConnectorOffsets) (string, error) {
	var config map[string]string
	err := d.do(ctx, func() error {
		if err := d.checkRebalanceNeeded(); err != nil {
			return err
		}
		if !d.isLeader() {
			return d.notLeader()
		}
		if !d.refreshConfigs() {
			return errors.New("Failed to read to end of config topic before modifying connector offsets")
		}
		if !d.snapshot.Contains(name) {
			return NotFound(name)
		}
		// Stopped, with no tasks and no rebalance pending: its tasks have
		// at least been asked to stop.
		if d.snapshot.TargetState(name) != storage.TargetStopped || d.snapshot.TaskCount(name) != 0 {
			return Errorf(http.StatusBadRequest, "Connectors must be in the STOPPED state before their offsets can be modified. "+
				"This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/%s/stop' endpoint", name)
		}
		config = maps.Clone(d.snapshot.Connectors[name])
		return nil
	})
	if err != nil {
		return "", err
	}
	if d.deps.Offsets == nil {
		return "", Errorf(http.StatusInternalServerError, "Connector offsets are not available on this worker")
	}
	return d.deps.Offsets.ModifyConnectorOffsets(ctx, name, config, offsets)
}

// ValidateConnectorConfig validates a config, adding the distributed
// checks Kafka's DistributedHerder adds (a sink's consumer group must not
// be the workers' group).
func (d *Distributed) ValidateConnectorConfig(ctx context.Context, config map[string]string) (*ConfigInfos, error) {
	if d.deps.Validate == nil {
		return &ConfigInfos{Name: config["connector.class"], Groups: []string{}, Configs: []ConfigInfo{}}, nil
	}
	infos, err := d.deps.Validate(ctx, config)
	if err != nil || infos == nil {
		return infos, err
	}
	if d.connectorType(config) == TypeSink {
		key, group, msg := "name", "connect-"+config["name"], ""
		if g, ok := config["consumer.override.group.id"]; ok {
			key, group = "consumer.override.group.id", g
			msg = fmt.Sprintf("Consumer group %s conflicts with Connect worker group %s", g, d.cfg.GroupID)
		} else {
			msg = fmt.Sprintf("Consumer group for sink connector named %s conflicts with Connect worker group %s", config["name"], d.cfg.GroupID)
		}
		if group == d.cfg.GroupID {
			addConfigError(infos, key, config, msg)
		}
	}
	return infos, nil
}

func addConfigError(infos *ConfigInfos, key string, config map[string]string, msg string) {
	infos.ErrorCount++
	for i := range infos.Configs {
		if infos.Configs[i].Value.Name == key {
			infos.Configs[i].Value.Errors = append(infos.Configs[i].Value.Errors, msg)
			return
		}
	}
	v := config[key]
	infos.Configs = append(infos.Configs, ConfigInfo{
		Definition: ConfigKeyInfo{Name: key},
		Value:      ConfigValueInfo{Name: key, Value: &v, RecommendedValues: []string{}, Errors: []string{msg}, Visible: true},
	})
}

// KIP-507 internal request signatures: the body's HMAC under the session
// key the leader distributes through the config topic, in Kafka's headers.
const (
	signatureHeader          = "X-Connect-Authorization"
	signatureAlgorithmHeader = "X-Connect-Request-Signature-Algorithm"
	signatureAlgorithm       = "HmacSHA256"
)

// signInternalRequest signs with Kafka's default algorithm (HmacSHA256).
func signInternalRequest(h http.Header, key *storage.SessionKey, body []byte) error {
	return signWith(h, key, signatureAlgorithm, body)
}

// VerifyInternalRequest checks the signature of an internal request (POST
// /connectors/{name}/tasks) as Kafka's DistributedHerder does once the
// group speaks the "sessioned" protocol (before that any request
// passes): no signature is 400, an algorithm outside
// inter.worker.verification.algorithms 400, no session key yet 503, a
// wrong signature 403.
func (d *Distributed) VerifyInternalRequest(ctx context.Context, body []byte, h http.Header) error {
	var sessioned bool
	if err := d.do(ctx, func() error { sessioned = d.protocol == group.ProtocolSessioned; return nil }); err != nil {
		return err
	}
	if !sessioned {
		return nil
	}
	alg, sig := h.Get(signatureAlgorithmHeader), h.Get(signatureHeader)
	if alg == "" || sig == "" {
		return Errorf(http.StatusBadRequest, "Internal request missing required signature")
	}
	if !MacAlgorithm(alg) {
		// Kafka: Mac.getInstance fails (NoSuchAlgorithmException).
		return Errorf(http.StatusBadRequest, "Algorithm %s not available", alg)
	}
	got, err := base64.StdEncoding.DecodeString(sig)
	if err != nil {
		return Errorf(http.StatusBadRequest, "%s", err.Error())
	}
	if !slices.Contains(d.cfg.VerificationAlgorithms, alg) {
		return Errorf(http.StatusBadRequest, "This worker does not support the '%s' key signing algorithm used by other workers. "+
			"This worker is currently configured to use: %s. Check that all workers' configuration files permit the same set of signature algorithms, "+
			"and correct any misconfigured worker and restart it.", alg, verificationList(d.cfg.VerificationAlgorithms))
	}
	key := d.deps.Configs.Snapshot().SessionKey
	if key == nil {
		return Errorf(http.StatusServiceUnavailable, "This worker is still starting up and has not been able to read a session key from the config topic yet")
	}
	raw, err := base64.StdEncoding.DecodeString(key.Key)
	if err != nil {
		return fmt.Errorf("session key is not base64: %w", err)
	}
	if !validSignature(raw, alg, body, got) {
		return Errorf(http.StatusForbidden, "Internal request contained invalid signature.")
	}
	return nil
}
