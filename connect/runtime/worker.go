package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/configprovider"
	"github.com/fjordhq/fjord/connect/herder"
	"github.com/fjordhq/fjord/connect/storage"
)

// WorkerOptions are a Worker's collaborators.
type WorkerOptions struct {
	// WorkerID names this worker in statuses (Kafka uses the advertised
	// REST host:port).
	WorkerID string
	// Offsets keeps source offsets: a file store in standalone mode, the
	// offsets topic in distributed mode.
	Offsets storage.OffsetStore
	// Topics records the topics each connector uses (KIP-558); nil turns
	// topic tracking off.
	Topics storage.TopicStatusStore
	Logger *slog.Logger
	// Registerer receives the worker's metrics (nil: not registered).
	Registerer prometheus.Registerer
}

// Worker runs connector and task instances (Kafka's Worker). A herder
// decides what runs where and calls it; the worker does the work: it
// starts connectors and asks them for task configs, runs source and sink
// task loops with converters, transformations, error handling and offset
// commits, and reports every instance's life to the listener it was
// started with. It implements herder.DistributedWorker and
// herder.OffsetManager.
type Worker struct {
	cfg     *WorkerConfig
	id      string
	log     *slog.Logger
	offsets storage.OffsetStore
	topics  storage.TopicStatusStore
	metrics *Metrics
	base    []kgo.Opt // the worker's client options

	adminOnce sync.Once
	admin     *kadm.Client
	adminErr  error

	mu         sync.Mutex
	connectors map[string]*workerConnector
	tasks      map[storage.TaskID]*workerTask
	closed     bool
}

var (
	_ herder.DistributedWorker = (*Worker)(nil)
	_ herder.OffsetManager     = (*Worker)(nil)
)

// NewWorker returns a worker for cfg.
func NewWorker(cfg *WorkerConfig, opts WorkerOptions) (*Worker, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Offsets == nil {
		return nil, errors.New("worker: an offset store is required")
	}
	base, err := cfg.ClientOpts(opts.Logger)
	if err != nil {
		return nil, fmt.Errorf("worker: %w", err)
	}
	return &Worker{
		cfg: cfg, id: opts.WorkerID, log: opts.Logger, offsets: opts.Offsets, topics: opts.Topics,
		metrics: NewMetrics(opts.Registerer), base: base,
		connectors: map[string]*workerConnector{}, tasks: map[storage.TaskID]*workerTask{},
	}, nil
}

// Config returns the worker config.
func (w *Worker) Config() *WorkerConfig { return w.cfg }

// ID returns the worker id.
func (w *Worker) ID() string { return w.id }

// adminClient is the worker's Kafka admin client (created on first use).
func (w *Worker) adminClient() (*kadm.Client, error) {
	w.adminOnce.Do(func() {
		cl, err := kgo.NewClient(w.base...)
		if err != nil {
			w.adminErr = fmt.Errorf("worker admin client: %w", err)
			return
		}
		w.admin = kadm.NewClient(cl)
	})
	return w.admin, w.adminErr
}

// KafkaClusterID asks the brokers for their cluster id.
func (w *Worker) KafkaClusterID(ctx context.Context) (string, error) {
	adm, err := w.adminClient()
	if err != nil {
		return "", err
	}
	m, err := adm.BrokerMetadata(ctx)
	if err != nil {
		return "", fmt.Errorf("describe the Kafka cluster at %s: %w", strings.Join(w.cfg.BootstrapServers, ","), err)
	}
	return m.Cluster, nil
}

// ConnectorType tells whether a config names a source or a sink connector.
func (w *Worker) ConnectorType(config map[string]string) herder.ConnectorType {
	_, t, err := LookupConnector(config["connector.class"])
	if err != nil {
		return herder.TypeUnknown
	}
	return herder.ConnectorType(t)
}

// ValidateConnectorConfig validates a config against this worker's
// defaults and override policy (see the package function).
// Errors are Kafka's: a config without connector.class is a
// BadRequestException surfacing as 500, an unknown class a 400.
func (w *Worker) ValidateConnectorConfig(_ context.Context, config map[string]string) (*herder.ConfigInfos, error) {
	// Kafka validates the config with its variables resolved; the answer
	// shows them unresolved (validation.go: validateResolved).
	resolved, mask, unresolved := w.resolveForValidation(config)
	v, err := ValidateConnectorConfig(w.cfg, resolved)
	var unknown *UnknownConnectorError
	switch {
	case errors.Is(err, ErrNoConnectorClass):
		return nil, herder.Errorf(http.StatusInternalServerError, "org.apache.kafka.connect.runtime.rest.errors.BadRequestException: %s", err.Error())
	case errors.As(err, &unknown):
		return nil, herder.Errorf(http.StatusBadRequest, "%s", err.Error())
	case err != nil:
		return nil, mask.Err(err)
	}
	return unresolveInfos(v.Infos(), config, mask, unresolved), nil
}

// StartConnector starts a connector instance in the target state: a
// STOPPED connector is recorded (status STOPPED) but not started.
// reconfigure is called when the connector asks for new task configs.
// A failure to start is returned (the caller reports it); failures
// later (RaiseError) go to l.
func (w *Worker) StartConnector(ctx context.Context, name string, config map[string]string, target storage.TargetState, l herder.DistributedStatusListener, reconfigure func()) error {
	// Variables (${file:...}) resolve now; the stored config keeps them.
	rc, err := w.resolveConnectorConfig("connector "+name, config)
	if err != nil {
		return err
	}
	cc, err := ParseConnectorConfig(rc.props)
	if err != nil {
		return rc.mask.Err(fmt.Errorf("connector %s config: %w", name, err))
	}
	log := rc.mask.Logger(w.log).With("connector", name)
	log.Info("ConnectorConfig values", "config", loggableConfig(w.cfg, config))
	wc := &workerConnector{w: w, name: name, cc: cc, raw: config, mask: rc.mask,
		listener: rc.mask.Listener(l), reconfigure: reconfigure, log: log}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return errors.New("worker is stopping")
	}
	if _, ok := w.connectors[name]; ok {
		w.mu.Unlock()
		return fmt.Errorf("connector %s is already running on this worker", name)
	}
	w.connectors[name] = wc
	w.mu.Unlock()
	if err := wc.transition(ctx, target); err != nil {
		w.mu.Lock()
		delete(w.connectors, name)
		w.mu.Unlock()
		return rc.mask.Err(err)
	}
	return nil
}

// StopConnector stops a connector instance (not its tasks) and reports
// it UNASSIGNED.
func (w *Worker) StopConnector(ctx context.Context, name string) {
	w.mu.Lock()
	wc := w.connectors[name]
	delete(w.connectors, name)
	w.mu.Unlock()
	if wc == nil {
		return
	}
	wc.shutdown()
}

// ConnectorNames returns the connectors running on this worker.
func (w *Worker) ConnectorNames() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Sorted(maps.Keys(w.connectors))
}

// TaskIDs returns the tasks running on this worker.
func (w *Worker) TaskIDs() []storage.TaskID {
	w.mu.Lock()
	defer w.mu.Unlock()
	ids := slices.Collect(maps.Keys(w.tasks))
	slices.SortFunc(ids, func(a, b storage.TaskID) int {
		if c := strings.Compare(a.Connector, b.Connector); c != 0 {
			return c
		}
		return a.Task - b.Task
	})
	return ids
}

// ConnectorTaskConfigs asks the running connector for up to tasks.max
// task configs (Kafka's Worker.connectorTaskConfigs): each gets the
// "task.class" Kafka records, and sink tasks the connector's topics.
func (w *Worker) ConnectorTaskConfigs(ctx context.Context, name string, config map[string]string) ([]map[string]string, error) {
	w.mu.Lock()
	wc := w.connectors[name]
	w.mu.Unlock()
	if wc == nil {
		return nil, fmt.Errorf("connector %s is not running on this worker", name)
	}
	configs, err := wc.taskConfigs(config)
	return configs, wc.mask.Err(err)
}

// StartTask starts a task in the target state. Setting it up (plugins,
// clients) is synchronous and its errors are returned; the task then runs
// on its own goroutine and reports to l.
func (w *Worker) StartTask(ctx context.Context, id storage.TaskID, connConfig, taskConfig map[string]string, target storage.TargetState, l herder.DistributedStatusListener) error {
	// Both configs hold variables, as stored; they resolve now.
	rc, err := w.resolveConnectorConfig("task "+id.String()+": connector", connConfig)
	if err != nil {
		return err
	}
	rt, err := w.resolveConnectorConfig("task "+id.String(), taskConfig)
	if err != nil {
		return rc.mask.Err(err)
	}
	mask := rc.mask
	mask.merge(rt.mask)
	connConfig, taskConfig = rc.props, rt.props
	cc, err := ParseConnectorConfig(connConfig)
	if err != nil {
		return mask.Err(fmt.Errorf("task %s: connector config: %w", id, err))
	}
	t := &workerTask{id: id, version: cc.Plugin.Version, log: mask.Logger(w.log).With("task", id.String()), listener: mask.Listener(l),
		target: newTargetControl(target), done: make(chan struct{})}
	var runner taskRunner
	switch cc.Type {
	case SourceType:
		runner, err = w.newSourceTask(t, cc, taskConfig)
	default:
		runner, err = w.newSinkTask(t, cc, taskConfig)
	}
	if err != nil {
		return mask.Err(fmt.Errorf("task %s: %w", id, err))
	}
	t.runner = runner
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		runner.close(false)
		return errors.New("worker is stopping")
	}
	if _, ok := w.tasks[id]; ok {
		w.mu.Unlock()
		runner.close(false)
		return fmt.Errorf("task %s is already running on this worker", id)
	}
	w.tasks[id] = t
	w.mu.Unlock()
	tctx, cancel := context.WithCancel(context.Background())
	t.cancel = cancel
	t.start(tctx)
	return nil
}

// StopTasks stops tasks and waits for them, up to
// task.shutdown.graceful.timeout.ms in all; tasks still running then are
// abandoned (their clients closed under them), as Kafka does.
func (w *Worker) StopTasks(ctx context.Context, ids []storage.TaskID) {
	var stopping []*workerTask
	w.mu.Lock()
	for _, id := range ids {
		if t, ok := w.tasks[id]; ok {
			stopping = append(stopping, t)
			delete(w.tasks, id)
		}
	}
	w.mu.Unlock()
	for _, t := range stopping {
		t.cancel()
	}
	deadline := time.NewTimer(w.stopGrace())
	defer deadline.Stop()
	for _, t := range stopping {
		select {
		case <-t.done:
			t.runner.close(false)
		case <-deadline.C:
			w.log.Error("graceful stop of task failed; abandoning it", "task", t.id.String(), "timeout", w.stopGrace())
			t.runner.close(true)
		case <-ctx.Done():
			t.runner.close(true)
		}
		// A stopped task's series go (Kafka removes a task's metrics when
		// it stops); a restart starts them afresh.
		w.metrics.forget(t.id.Connector, t.id.Task)
	}
}

// SetTargetState moves a connector instance and its tasks on this worker
// to RUNNING (STARTED), PAUSED or STOPPED.
func (w *Worker) SetTargetState(ctx context.Context, name string, target storage.TargetState) error {
	w.mu.Lock()
	wc := w.connectors[name]
	var tasks []*workerTask
	for id, t := range w.tasks {
		if id.Connector == name {
			tasks = append(tasks, t)
		}
	}
	w.mu.Unlock()
	taskTarget := target
	if target == storage.TargetStopped {
		taskTarget = storage.TargetPaused // the herder removes them
	}
	for _, t := range tasks {
		t.target.set(taskTarget)
	}
	if wc != nil {
		return wc.transition(ctx, target)
	}
	return nil
}

// Close stops every task and connector.
func (w *Worker) Close(ctx context.Context) {
	w.mu.Lock()
	w.closed = true
	ids := slices.Collect(maps.Keys(w.tasks))
	names := slices.Collect(maps.Keys(w.connectors))
	w.mu.Unlock()
	w.StopTasks(ctx, ids)
	for _, n := range names {
		w.StopConnector(ctx, n)
	}
	if w.admin != nil {
		w.admin.Close()
	}
}

// workerConnector is a connector instance (Kafka's WorkerConnector).
type workerConnector struct {
	w           *Worker
	name        string
	cc          *ConnectorConfig
	raw         map[string]string // the config as stored, variables unresolved
	mask        *secretMask
	listener    herder.DistributedStatusListener
	reconfigure func()
	log         *slog.Logger

	mu      sync.Mutex
	conn    connect.Connector
	state   storage.TargetState
	started bool
	failed  bool
}

func (c *workerConnector) status(st storage.State, err error) {
	if c.listener != nil {
		c.listener.Status(c.name, -1, st, withTrace(err))
	}
}

// transition moves the connector to target: started connectors run,
// paused and stopped ones are stopped (Kafka stops a paused connector and
// starts it again on resume).
func (c *workerConnector) transition(ctx context.Context, target storage.TargetState) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failed {
		return nil
	}
	c.state = target
	switch target {
	case storage.TargetStarted:
		if !c.started {
			if err := c.startLocked(ctx); err != nil {
				return err
			}
		}
		c.status(storage.StateRunning, nil)
	case storage.TargetPaused, storage.TargetStopped:
		c.stopLocked()
		if target == storage.TargetPaused {
			c.status(storage.StatePaused, nil)
		} else {
			c.status(storage.StateStopped, nil)
		}
	}
	return nil
}

func (c *workerConnector) startLocked(ctx context.Context) error {
	inst, ok := c.cc.Plugin.New().(connect.Connector)
	if !ok {
		return fmt.Errorf("plugin %s is not a connector", c.cc.Plugin.Class)
	}
	if ci, ok := inst.(connect.ContextualConnector); ok {
		ci.Initialize(&connectorContext{c: c})
	}
	if err := inst.Start(ctx, c.cc.Props); err != nil {
		return fmt.Errorf("start connector %s: %w", c.name, err)
	}
	c.conn, c.started = inst, true
	return nil
}

func (c *workerConnector) stopLocked() {
	if !c.started {
		return
	}
	if err := c.conn.Stop(); err != nil {
		c.log.Warn("connector stop failed", "err", err)
	}
	c.conn, c.started = nil, false
}

func (c *workerConnector) shutdown() {
	c.mu.Lock()
	c.stopLocked()
	failed := c.failed
	c.mu.Unlock()
	if !failed {
		c.status(storage.StateUnassigned, nil)
	}
}

func (c *workerConnector) fail(err error) {
	c.mu.Lock()
	if c.failed {
		c.mu.Unlock()
		return
	}
	c.failed = true
	c.stopLocked()
	c.mu.Unlock()
	c.log.Error("connector failed", "err", err)
	c.status(storage.StateFailed, err)
}

func (c *workerConnector) taskConfigs(config map[string]string) ([]map[string]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.started {
		return nil, fmt.Errorf("connector %s is not running", c.name)
	}
	cc, raw := c.cc, c.raw
	if config != nil {
		rc, err := c.w.resolveConnectorConfig("connector "+c.name, config)
		if err != nil {
			return nil, err
		}
		parsed, err := ParseConnectorConfig(rc.props)
		if err != nil {
			return nil, err
		}
		cc, raw = parsed, config
	}
	configs, err := c.conn.TaskConfigs(cc.TasksMax)
	if err != nil {
		return nil, fmt.Errorf("connector %s task configs: %w", c.name, err)
	}
	if len(configs) > cc.TasksMax {
		if cc.TasksMaxEnforce {
			return nil, &ConnectError{Msg: fmt.Sprintf("The connector %s has generated %d tasks, which is greater than %d, the maximum number of tasks it is configured to create. This behaviour should be considered a bug and is disallowed. If necessary, it can be permitted by reconfiguring the connector with 'tasks.max.enforce' set to false; however, this option will be removed in a future release of Kafka Connect.", c.name, len(configs), cc.TasksMax)}
		}
		c.log.Warn("connector generated more tasks than tasks.max; allowed because tasks.max.enforce is false", "tasks", len(configs), "tasks.max", cc.TasksMax)
	}
	out := make([]map[string]string, len(configs))
	for i, tc := range configs {
		m := maps.Clone(tc)
		if m == nil {
			m = map[string]string{}
		}
		m["task.class"] = taskClass(cc)
		if cc.Type == SinkType {
			if t, ok := cc.Props["topics"]; ok {
				m["topics"] = t
			}
			if t, ok := cc.Props["topics.regex"]; ok {
				m["topics.regex"] = t
			}
		}
		// A connector copies its resolved settings into its tasks'
		// configs; the stored task configs get the variables back
		// (Kafka's reverseTransform), and tasks resolve them when they
		// start.
		out[i] = configprovider.Restore(raw, m)
	}
	return out, nil
}

// TaskClasser is implemented by connectors that name their task class
// (reported in task configs as "task.class", as Kafka does).
type TaskClasser interface{ TaskClass() string }

// taskClass names the task class Kafka would record: the connector's own
// answer, else the connector class with "Connector" replaced by "Task"
// (FileStreamSinkConnector → FileStreamSinkTask).
func taskClass(cc *ConnectorConfig) string {
	if tc, ok := cc.Plugin.New().(TaskClasser); ok {
		return tc.TaskClass()
	}
	class := cc.Plugin.Class
	if base, ok := strings.CutSuffix(class, "Connector"); ok {
		return base + "Task"
	}
	return class + "Task"
}

// connectorContext is a connector's view of the runtime.
type connectorContext struct{ c *workerConnector }

func (x *connectorContext) RequestTaskReconfiguration() {
	if x.c.reconfigure != nil {
		x.c.reconfigure()
	}
}

func (x *connectorContext) RaiseError(err error) { go x.c.fail(err) }

func (x *connectorContext) Offsets() connect.OffsetReader {
	if x.c.cc.Type != SourceType {
		return nil
	}
	return &offsetReader{store: x.c.w.offsets, connector: x.c.name}
}

// overrides returns a connector's client overrides with prefix, refusing
// them when the worker's connector.client.config.override.policy does not
// allow them (Kafka checks again when starting a task, for configs that
// were written by another worker).
func (w *Worker) overrides(cc *ConnectorConfig, prefix string) (map[string]string, error) {
	ov := connect.WithPrefix(cc.Props, prefix)
	var msgs []string
	for _, v := range checkOverrides(w.cfg.ClientConfigOverridePolicy, ov) {
		msgs = append(msgs, v.Errors...)
	}
	if len(msgs) > 0 {
		return nil, &ConnectError{Msg: "Client override policy refused the connector's client configs: " + strings.Join(msgs, " ")}
	}
	return ov, nil
}

func newAdmin(opts []kgo.Opt) (*kadm.Client, error) {
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("admin client: %w", err)
	}
	return kadm.NewClient(cl), nil
}
