package herder

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/fjordhq/fjord/connect/herder/group"
	"github.com/fjordhq/fjord/connect/storage"
)

// updateConfigs applies what the config store reported (Kafka's
// updateConfigsWith{Eager,IncrementalCooperative} and the process*
// methods). A new or removed connector, or new task configs, need a
// rebalance: it returns true when one was requested and the tick should
// rejoin before doing anything else.
func (d *Distributed) updateConfigs() bool {
	updated, removed, tasks, targets, restarts := d.pending.take()
	for c, r := range restarts {
		d.restarts[c] = r
	}
	if len(updated)+len(removed)+len(tasks)+len(targets) == 0 && !d.needsReconfig {
		if len(restarts) > 0 {
			d.processRestartRequests()
		}
		return false
	}
	// Judge against the connectors we knew: one we did not know is new
	// (the leader must assign it); one we knew is a change. (d.snapshot
	// may be newer already: reads to the end happen elsewhere too.)
	configUpdates := map[string]bool{}
	for c := range updated {
		if d.known[c] {
			configUpdates[c] = true
		} else {
			d.needsReconfig = true
		}
	}
	for c := range removed {
		if d.known[c] {
			d.needsReconfig = true
		} else {
			configUpdates[c] = true
		}
	}
	taskUpdates := map[string]bool{}
	for t := range tasks {
		d.needsReconfig = true
		taskUpdates[t.Connector] = true
		d.applied[t.Connector] = nil // refreshed below from the new snapshot
	}
	d.snapshot = d.deps.Configs.Snapshot()
	d.known = knownConnectors(d.snapshot)
	for c := range taskUpdates {
		if cfg, ok := d.snapshot.Connectors[c]; ok {
			d.applied[c] = cfg
		} else {
			delete(d.applied, c)
		}
	}
	rejoin := false
	if d.needsReconfig {
		d.log.Info("configs changed in a way that needs a rebalance", "new_or_removed", len(updated)+len(removed)-len(configUpdates), "task_configs", len(tasks))
		d.needJoin = true
		d.needsReconfig = false
		rejoin = true
	}
	if group.ProtocolVersion(d.protocol) == 0 && rejoin {
		return true // eager: the rebalance restarts everything anyway
	}
	d.processConnectorConfigUpdates(configUpdates)
	d.processTargetStateChanges(targets)
	if group.ProtocolVersion(d.protocol) > 0 {
		d.stopReconfiguredTasks(taskUpdates)
	}
	return rejoin
}

// processConnectorConfigUpdates bounces the updated connectors this
// worker runs (stopping those that were deleted).
func (d *Distributed) processConnectorConfigUpdates(names map[string]bool) {
	if d.assignment == nil {
		return
	}
	for _, c := range sortedKeys(names) {
		if !slices.Contains(d.assignment.Connectors, c) {
			continue
		}
		remains := d.snapshot.Contains(c)
		d.log.Info("connector config changed", "connector", c, "restarting", remains)
		if d.started[c] {
			d.deps.Worker.StopConnector(context.WithoutCancel(d.ctx), c)
			delete(d.started, c)
		}
		if remains {
			d.startConnector(c)
		}
	}
}

// processTargetStateChanges moves local connectors and tasks to their new
// target state; a connector resumed here regenerates its task configs
// (configs changed while it was paused take effect).
func (d *Distributed) processTargetStateChanges(names map[string]bool) {
	for _, c := range sortedKeys(names) {
		if !d.snapshot.Contains(c) || !d.runsAnything(c) {
			continue
		}
		target := d.snapshot.TargetState(c)
		d.log.Info("connector target state changed", "connector", c, "target_state", target)
		if err := d.deps.Worker.SetTargetState(d.ctx, c, target); err != nil {
			d.log.Error("failed to change the connector's target state", "connector", c, "target_state", target, "err", err)
			continue
		}
		if target == storage.TargetStarted && d.started[c] {
			d.reconfigureWithRetry(c)
		}
	}
}

func (d *Distributed) runsAnything(connector string) bool {
	if d.started[connector] {
		return true
	}
	if d.assignment == nil {
		return false
	}
	for _, t := range d.assignment.Tasks {
		if t.Connector == connector {
			return true
		}
	}
	return false
}

// stopReconfiguredTasks stops the local tasks of connectors whose task
// configs changed; they start again after the rebalance if they are
// still ours.
func (d *Distributed) stopReconfiguredTasks(connectors map[string]bool) {
	if d.assignment == nil || len(connectors) == 0 {
		return
	}
	var ids []storage.TaskID
	for _, t := range d.assignment.Tasks {
		if connectors[t.Connector] {
			ids = append(ids, storage.TaskID{Connector: t.Connector, Task: int(t.Task)})
		}
	}
	if len(ids) == 0 {
		return
	}
	d.log.Info("task configs changed; stopping the local tasks until the rebalance", "tasks", len(ids))
	d.deps.Worker.StopTasks(context.WithoutCancel(d.ctx), ids)
	for _, id := range ids {
		d.tasksRestart[id] = true
	}
}

// Reconfiguration backoff (Kafka's RECONFIGURE_CONNECTOR_TASKS_BACKOFF_*).
const (
	reconfigBackoffInitial = 250 * time.Millisecond
	reconfigBackoffMax     = time.Minute
)

// RequestTaskReconfiguration asks the herder to regenerate a connector's
// task configs (the connector's context calls it). Safe from any
// goroutine; it does not wait.
func (d *Distributed) RequestTaskReconfiguration(name string) {
	select {
	case d.requests <- func() { d.reconfigureWithRetry(name) }:
	case <-d.stopCh:
	default:
		// The queue is full: retry from the loop soon instead of blocking
		// the connector.
		go func() {
			select {
			case d.requests <- func() { d.reconfigureWithRetry(name) }:
			case <-d.stopCh:
			}
		}()
	}
}

// reconfigureWithRetry regenerates a connector's task configs and
// publishes them; on failure it retries with exponential backoff
// (Kafka's reconfigureConnectorTasksWithRetry). A hand-over to the leader
// runs on its own goroutine; its outcome comes back as a request.
func (d *Distributed) reconfigureWithRetry(name string) {
	async, err := d.reconfigure(name, func(err error) {
		select {
		case d.requests <- func() { d.handOverDone(name, err) }:
		case <-d.stopCh:
		}
	})
	switch {
	case err != nil:
		d.log.Error("failed to reconfigure connector tasks; will retry", "connector", name, "err", err)
		d.scheduleRetry(name)
	case async:
		r := d.retries[name]
		if r == nil {
			r = &reconfigRetry{}
			d.retries[name] = r
		}
		r.inFlight, r.at = true, time.Time{}
	default:
		delete(d.retries, name)
	}
}

func (d *Distributed) handOverDone(name string, err error) {
	if r := d.retries[name]; r != nil {
		r.inFlight = false
	}
	if err != nil {
		d.log.Error("failed to hand task configs to the leader; will retry", "connector", name, "err", err)
		d.scheduleRetry(name)
		return
	}
	delete(d.retries, name)
}

func (d *Distributed) scheduleRetry(name string) {
	r := d.retries[name]
	if r == nil {
		r = &reconfigRetry{}
		d.retries[name] = r
	}
	if r.backoff == 0 {
		r.backoff = reconfigBackoffInitial
	} else {
		r.backoff = min(2*r.backoff, reconfigBackoffMax)
	}
	r.at = d.now().Add(r.backoff)
}

func (d *Distributed) runRetries() {
	now := d.now()
	for _, name := range sortedKeys(d.retries) {
		if r := d.retries[name]; r != nil && !r.inFlight && !r.at.IsZero() && !now.Before(r.at) {
			r.at = time.Time{}
			d.reconfigureWithRetry(name)
		}
	}
}

// reconfigure is Kafka's reconfigureConnector: ask the local connector for
// task configs and, if they differ from the committed ones (or the
// connector config changed since they were written), write them as the
// leader or hand them to the leader. done reports the outcome of a
// hand-over, which happens on another goroutine so a slow leader cannot
// stall this one.
func (d *Distributed) reconfigure(name string, done func(error)) (async bool, err error) {
	if !d.started[name] {
		d.log.Debug("skipping reconfiguration of a connector that does not run here", "connector", name)
		return false, nil
	}
	if t := d.snapshot.TargetState(name); t != storage.TargetStarted {
		d.log.Info("skipping reconfiguration of a connector that is not running", "connector", name, "target_state", t)
		return false, nil
	}
	config := d.snapshot.Connectors[name]
	configs, err := d.deps.Worker.ConnectorTaskConfigs(d.ctx, name, config)
	if err != nil {
		return false, fmt.Errorf("generate task configs for connector %s: %w", name, err)
	}
	if !d.taskConfigsChanged(name, configs) {
		return false, nil
	}
	if d.isLeader() {
		return false, d.writeTaskConfigs(name, configs)
	}
	leader := d.leaderURL()
	if leader == "" {
		return false, fmt.Errorf("cannot hand task configs of connector %s to the leader: its URL is unknown (rebalancing)", name)
	}
	var key *storage.SessionKey
	if d.protocol == group.ProtocolSessioned {
		key = d.deps.Configs.Snapshot().SessionKey
	}
	go func() { done(d.postTaskConfigs(leader, name, configs, key)) }()
	return true, nil
}

// taskConfigsChanged is Kafka's AbstractHerder.taskConfigsChanged.
func (d *Distributed) taskConfigsChanged(name string, configs []map[string]string) bool {
	current := d.snapshot.Tasks[name]
	if len(configs) != len(current) {
		d.log.Debug("task count changed", "connector", name, "from", len(current), "to", len(configs))
		return true
	}
	for i := range configs {
		if !maps.Equal(configs[i], current[i]) {
			return true
		}
	}
	if applied, ok := d.applied[name]; ok && !maps.Equal(applied, d.snapshot.Connectors[name]) {
		d.log.Debug("forcing a task restart: the connector config changed", "connector", name)
		return true
	}
	return false
}

// writeTaskConfigs writes a connector's task configs (leader only).
func (d *Distributed) writeTaskConfigs(name string, configs []map[string]string) error {
	if d.snapshot.TargetState(name) == storage.TargetStopped && len(configs) > 0 {
		return Errorf(http.StatusBadRequest, "Cannot submit non-empty set of task configs for stopped connector %s", name)
	}
	if err := d.deps.Configs.PutTaskConfigs(d.ctx, name, configs); err != nil {
		return fmt.Errorf("write task configs of connector %s to the config topic: %w", name, err)
	}
	d.log.Info("wrote task configs", "connector", name, "tasks", len(configs))
	return nil
}

// postTaskConfigs hands task configs to the leader: POST
// {leader}/connectors/{name}/tasks, Kafka's internal endpoint.
func (d *Distributed) postTaskConfigs(leaderURL, name string, configs []map[string]string, key *storage.SessionKey) error {
	body, err := json.Marshal(configs)
	if err != nil {
		return err
	}
	target := strings.TrimRight(leaderURL, "/") + "/connectors/" + url.PathEscape(name) + "/tasks?forward=true"
	ctx, cancel := context.WithTimeout(d.ctx, 90*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if key != nil {
		if err := signWith(req.Header, key, d.cfg.SignatureAlgorithm, body); err != nil {
			return err
		}
	}
	resp, err := d.http.Do(req)
	if err != nil {
		return fmt.Errorf("post task configs to the leader at %s: %w", leaderURL, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode >= 300 {
		return fmt.Errorf("post task configs to the leader at %s: %s: %s", leaderURL, resp.Status, bytes.TrimSpace(b))
	}
	return nil
}

// processRestartRequests carries out restart requests read from the
// config topic for what this worker runs (KIP-745).
func (d *Distributed) processRestartRequests() {
	if len(d.restarts) == 0 || d.assignment == nil {
		return
	}
	reqs := d.restarts
	d.restarts = map[string]storage.RestartRequest{}
	for _, c := range sortedKeys(reqs) {
		d.doRestart(reqs[c])
	}
}

func (d *Distributed) doRestart(req storage.RestartRequest) {
	plan, ok := d.restartPlan(req)
	if !ok {
		d.log.Debug("skipping a restart: no status for the connector", "connector", req.Connector)
		return
	}
	restartConnector := plan.Connector.State == StateRestarting && slices.Contains(d.assignment.Connectors, req.Connector)
	var tasks []storage.TaskID
	for _, t := range plan.Tasks {
		id := group.TaskID{Connector: req.Connector, Task: int32(t.ID)}
		if t.State == StateRestarting && slices.Contains(d.assignment.Tasks, id) {
			tasks = append(tasks, storage.TaskID{Connector: req.Connector, Task: t.ID})
		}
	}
	if !restartConnector && len(tasks) == 0 {
		return
	}
	d.log.Info("restarting", "connector", req.Connector, "connector_instance", restartConnector, "tasks", len(tasks))
	ctx := context.WithoutCancel(d.ctx)
	if restartConnector {
		if d.started[req.Connector] {
			d.deps.Worker.StopConnector(ctx, req.Connector)
			delete(d.started, req.Connector)
		}
		d.Status(req.Connector, -1, storage.StateRestarting, nil)
	}
	if len(tasks) > 0 {
		d.deps.Worker.StopTasks(ctx, tasks)
		for _, t := range tasks {
			d.Status(t.Connector, t.Task, storage.StateRestarting, nil)
		}
	}
	if restartConnector {
		d.startConnector(req.Connector)
	}
	for _, t := range tasks {
		d.startTask(t)
	}
}

// restartPlan is Kafka's buildRestartPlan: the connector's status with
// what the request restarts marked RESTARTING; false when the connector
// has no status.
func (d *Distributed) restartPlan(req storage.RestartRequest) (*ConnectorStateInfo, bool) {
	cs, ok := d.deps.Statuses.Connector(req.Connector)
	if !ok {
		return nil, false
	}
	info := &ConnectorStateInfo{Name: req.Connector, Type: d.connectorType(d.snapshot.Connectors[req.Connector]), Tasks: []TaskState{}}
	info.Connector = ConnectorState{State: State(cs.State), WorkerID: cs.WorkerID, Trace: cs.Trace, Version: cs.Version}
	if req.ShouldRestartConnector(cs.State) {
		info.Connector.State = StateRestarting
	}
	for _, ts := range d.deps.Statuses.Tasks(req.Connector) {
		t := TaskState{ID: ts.Task, State: State(ts.State), WorkerID: ts.WorkerID, Trace: ts.Trace, Version: ts.Version}
		if req.ShouldRestartTask(ts.State) {
			t.State = StateRestarting
		}
		info.Tasks = append(info.Tasks, t)
	}
	return info, true
}

// Status writes a connector's (task < 0) or task's status with this
// worker's id and generation (the StatusListener the worker reports to).
// UNASSIGNED is written only if no newer generation's owner wrote since
// (Kafka's putSafe), so a slow stop never hides the new owner's RUNNING.
func (d *Distributed) Status(connector string, task int, state storage.State, err error) {
	st := storage.Status{Connector: connector, Task: task, State: state, WorkerID: d.cfg.WorkerID, Generation: d.statusGeneration()}
	if err != nil {
		st.Trace = StatusTrace(err)
	}
	st.Version = statusVersion(d.deps.Configs.Snapshot(), connector, state)
	// While the herder stops, a status the brokers do not take within a
	// few seconds is given up: with the cluster gone, 30 s per connector
	// and task held a shutdown for minutes (Kafka sends statuses
	// asynchronously and does not wait for them on stop).
	timeout := 30 * time.Second
	if d.ctx.Err() != nil {
		timeout = 3 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(d.ctx), timeout)
	defer cancel()
	var werr error
	if state == storage.StateUnassigned {
		werr = d.deps.Statuses.PutSafe(ctx, st)
	} else {
		werr = d.deps.Statuses.Put(ctx, st)
	}
	if werr != nil {
		d.log.Warn("could not write status", "connector", connector, "task", task, "state", state, "err", werr)
	}
}

// statusGeneration is read from worker goroutines while the loop may be
// changing it; a status is stamped with the generation the worker saw
// when it was written, which is what Kafka does too (an int read).
func (d *Distributed) statusGeneration() int32 {
	d.genMu.Lock()
	defer d.genMu.Unlock()
	return d.statusGen
}

// deleteStaleStatuses removes the statuses of connectors and tasks that no
// longer exist (leader only, after a rebalance; Kafka's
// updateDeleted{Connector,Task}Status).
func (d *Distributed) deleteStaleStatuses() {
	snap := d.deps.Configs.Snapshot()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(d.ctx), 30*time.Second)
	defer cancel()
	for _, c := range d.deps.Statuses.Connectors() {
		if !snap.Contains(c) {
			if cs, ok := d.deps.Statuses.Connector(c); ok && cs.State != storage.StateDestroyed {
				d.putDestroyed(ctx, storage.Status{Connector: c, Task: -1})
			}
		}
		for _, ts := range d.deps.Statuses.Tasks(c) {
			if !snap.Contains(c) || ts.Task >= snap.TaskCount(c) {
				d.putDestroyed(ctx, storage.Status{Connector: c, Task: ts.Task})
			}
		}
	}
}

func (d *Distributed) putDestroyed(ctx context.Context, st storage.Status) {
	st.State, st.WorkerID, st.Generation = storage.StateDestroyed, d.cfg.WorkerID, d.generation
	if err := d.deps.Statuses.Put(ctx, st); err != nil {
		d.log.Warn("could not delete a stale status", "connector", st.Connector, "task", st.Task, "err", err)
	}
}

func (d *Distributed) connectorType(config map[string]string) ConnectorType {
	if config == nil || d.deps.ConnectorType == nil {
		return TypeUnknown
	}
	return d.deps.ConnectorType(config)
}
