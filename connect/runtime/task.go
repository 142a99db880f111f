package runtime

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/herder"
	"github.com/fjordhq/fjord/connect/plugins"
	"github.com/fjordhq/fjord/connect/storage"
)

// targetControl is a task's desired state, changed by the herder and
// watched by the task's goroutine.
type targetControl struct {
	mu      sync.Mutex
	state   storage.TargetState
	changed chan struct{} // closed and replaced on each change
}

func newTargetControl(s storage.TargetState) *targetControl {
	return &targetControl{state: s, changed: make(chan struct{})}
}

func (c *targetControl) set(s storage.TargetState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == s {
		return
	}
	c.state = s
	close(c.changed)
	c.changed = make(chan struct{})
}

func (c *targetControl) get() (storage.TargetState, <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state, c.changed
}

// taskRunner is a source or sink task's loop.
type taskRunner interface {
	// execute runs the task until ctx is done (a stop) or it fails.
	execute(ctx context.Context) error
	// close releases clients after execute returned; abandoned is true
	// when the task did not stop within the graceful timeout.
	close(abandoned bool)
}

// workerTask is a running task: its goroutine, target state and status
// reporting (Kafka's WorkerTask).
type workerTask struct {
	id       storage.TaskID
	version  string
	log      *slog.Logger
	listener herder.DistributedStatusListener
	target   *targetControl
	runner   taskRunner
	cancel   context.CancelFunc
	done     chan struct{}

	// mu is held while a status is decided and written, so a cause
	// reported from another goroutine (runningCause) can never land
	// after, and hide, a later state such as FAILED.
	mu      sync.Mutex
	reports storage.State // last state reported, to report changes once
	cause   string        // the trace shown with RUNNING (runningCause), "" for none
}

func (t *workerTask) status(st storage.State, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if st == t.reports && err == nil && t.cause == "" {
		return
	}
	t.reports = st
	t.cause = ""
	if t.listener != nil {
		t.listener.Status(t.id.Connector, t.id.Task, st, withTrace(err))
	}
}

// runningCause puts why a RUNNING task makes no progress — a sink's
// RetriableError, e.g. its destination is down — in the trace of its
// RUNNING status, so GET /connectors/{name}/status shows it while the
// task retries; nil clears it once the task moves again. Kafka writes a
// trace only for FAILED; its status record has the field for every
// state, so Kafka workers read these records too.
func (t *workerTask) runningCause(err error) {
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.reports != storage.StateRunning || msg == t.cause {
		return
	}
	t.cause = msg
	if t.listener != nil {
		t.listener.Status(t.id.Connector, t.id.Task, storage.StateRunning, withTrace(err))
	}
}

// start runs the task's goroutine: execute, then report FAILED on an
// error or panic, or UNASSIGNED on a clean stop (Kafka's onShutdown).
func (t *workerTask) start(ctx context.Context) {
	go func() {
		defer close(t.done)
		err := func() (err error) {
			defer func() {
				if r := recover(); r != nil {
					err = &ConnectError{Msg: fmt.Sprintf("task panicked: %v\n%s", r, debug.Stack())}
				}
			}()
			return t.runner.execute(ctx)
		}()
		if err != nil && ctx.Err() == nil {
			t.log.Error("task failed; it will not recover until restarted", "task", t.id.String(), "err", err)
			t.status(storage.StateFailed, err)
			return
		}
		if err != nil {
			t.log.Warn("task stopped with an error", "task", t.id.String(), "err", err)
		}
		t.status(storage.StateUnassigned, nil)
	}()
}

// awaitRunning blocks while the task is paused, reporting PAUSED and then
// RUNNING on resume; it returns false when ctx is done.
func (t *workerTask) awaitRunning(ctx context.Context) bool {
	for {
		st, ch := t.target.get()
		if st == storage.TargetStarted {
			t.status(storage.StateRunning, nil)
			return true
		}
		t.status(storage.StatePaused, nil)
		select {
		case <-ctx.Done():
			return false
		case <-ch:
		}
	}
}

// paused reports whether the task should pause now.
func (t *workerTask) paused() bool {
	st, _ := t.target.get()
	return st != storage.TargetStarted
}

// taskPlugins are the converters and transformations a task uses.
type taskPlugins struct {
	keyConv, valueConv   connect.Converter
	keyClass, valueClass string
	headerConv           connect.HeaderConverter
	headerClass          string
	chain                []chainStage
}

// chainStage is one transformation with its predicate.
type chainStage struct {
	alias  string
	class  string
	t      connect.Transformation
	pred   connect.Predicate
	negate bool
}

// applyChain runs the transformations; nil means dropped. On error it
// returns the class of the failing transformation.
func applyChain(chain []chainStage, r *connect.Record) (*connect.Record, string, error) {
	for i := range chain {
		s := &chain[i]
		if s.pred != nil && s.pred.Test(r) == s.negate {
			continue
		}
		out, err := s.t.Apply(r)
		if err != nil {
			return nil, s.class, err
		}
		if out == nil {
			return nil, "", nil
		}
		r = out
	}
	return r, "", nil
}

func closeChain(chain []chainStage) {
	for _, s := range chain {
		_ = s.t.Close()
		if s.pred != nil {
			_ = s.pred.Close()
		}
	}
}

// buildPlugins creates a task's converters (the connector's overrides or
// the worker's) and transformation chain.
func (w *Worker) buildPlugins(cc *ConnectorConfig) (*taskPlugins, error) {
	tp := &taskPlugins{}
	var err error
	tp.keyConv, tp.keyClass, err = w.newConverter(cc, "key.converter", w.cfg.KeyConverter, true)
	if err != nil {
		return nil, err
	}
	tp.valueConv, tp.valueClass, err = w.newConverter(cc, "value.converter", w.cfg.ValueConverter, false)
	if err != nil {
		return nil, err
	}
	tp.headerConv, tp.headerClass, err = w.newHeaderConverter(cc)
	if err != nil {
		return nil, err
	}
	for _, spec := range cc.Transforms {
		t, ok := spec.Plugin.New().(connect.Transformation)
		if !ok {
			closeChain(tp.chain)
			return nil, fmt.Errorf("transformation %s (%s) is not a transformation", spec.Alias, spec.Plugin.Class)
		}
		if err := t.Configure(spec.Props); err != nil {
			closeChain(tp.chain)
			return nil, fmt.Errorf("configure transformation %s (%s): %w", spec.Alias, spec.Plugin.Class, err)
		}
		st := chainStage{alias: spec.Alias, class: spec.Plugin.Class, t: t, negate: spec.Negate}
		if spec.Predicate != nil {
			p, ok := spec.Predicate.Plugin.New().(connect.Predicate)
			if !ok {
				closeChain(tp.chain)
				return nil, fmt.Errorf("predicate %s (%s) is not a predicate", spec.Predicate.Alias, spec.Predicate.Plugin.Class)
			}
			if err := p.Configure(spec.Predicate.Props); err != nil {
				closeChain(tp.chain)
				return nil, fmt.Errorf("configure predicate %s (%s): %w", spec.Predicate.Alias, spec.Predicate.Plugin.Class, err)
			}
			st.pred = p
		}
		tp.chain = append(tp.chain, st)
	}
	return tp, nil
}

func (w *Worker) newConverter(cc *ConnectorConfig, key, workerClass string, isKey bool) (connect.Converter, string, error) {
	class, props := workerClass, w.cfg.ConverterProps(key)
	if c, ok := cc.Props[key]; ok && c != "" {
		class, props = c, connect.WithPrefix(cc.Props, key+".")
	}
	p, err := plugins.LookupKind(class, plugins.Converter)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", key, err)
	}
	conv, ok := p.New().(connect.Converter)
	if !ok {
		return nil, "", fmt.Errorf("%s: %s is not a converter", key, p.Class)
	}
	if _, ok := props["converter.type"]; !ok {
		props["converter.type"] = map[bool]string{true: "key", false: "value"}[isKey]
	}
	if err := conv.Configure(props, isKey); err != nil {
		return nil, "", fmt.Errorf("configure %s %s: %w", key, p.Class, err)
	}
	return conv, p.Class, nil
}

func (w *Worker) newHeaderConverter(cc *ConnectorConfig) (connect.HeaderConverter, string, error) {
	class, props := w.cfg.HeaderConverter, w.cfg.ConverterProps("header.converter")
	if c, ok := cc.Props["header.converter"]; ok && c != "" {
		class, props = c, connect.WithPrefix(cc.Props, "header.converter.")
	}
	p, err := plugins.LookupKind(class, plugins.HeaderConverter)
	if err != nil {
		return nil, "", fmt.Errorf("header.converter: %w", err)
	}
	conv, ok := p.New().(connect.HeaderConverter)
	if !ok {
		return nil, "", fmt.Errorf("header.converter: %s is not a header converter", p.Class)
	}
	if _, ok := props["converter.type"]; !ok {
		props["converter.type"] = "header"
	}
	if err := conv.Configure(props); err != nil {
		return nil, "", fmt.Errorf("configure header.converter %s: %w", p.Class, err)
	}
	return conv, p.Class, nil
}

// stopGrace is how long a stopping task may take before it is abandoned.
func (w *Worker) stopGrace() time.Duration {
	if w.cfg.TaskShutdownGracefulTimeout > 0 {
		return w.cfg.TaskShutdownGracefulTimeout
	}
	return 5 * time.Second
}
