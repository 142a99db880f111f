package mm2

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/fjordhq/fjord/connect/herder"
)

// StartWorker starts the Connect worker of one flow from its worker
// properties (Config.WorkerConfig): a member of the flow's worker group on
// the target cluster. It returns the worker's herder and a function that
// stops the worker.
type StartWorker func(ctx context.Context, f Flow, workerProps map[string]string) (herder.Herder, func(), error)

// Driver is MirrorMaker's dedicated mode: a worker group per flow, each
// running the flow's three connectors with the configs mm2.properties
// gives them (MirrorHerder: the group's leader writes them when they
// differ).
type Driver struct {
	Config *Config
	// Flows to run; nil runs Config.Flows().
	Flows []Flow
	Start StartWorker
	Log   *slog.Logger
	// Progress receives one line per event an operator wants to see:
	// workers joining, connectors configured, connector and task states.
	Progress io.Writer

	// Resync is how often a configured flow's connectors are checked
	// (default 10 s); until they all are, every Poll (default 1 s).
	Resync, Poll time.Duration
	// RetryMax caps the wait between attempts to start a worker whose
	// cluster cannot be reached (default 30 s).
	RetryMax time.Duration

	outMu sync.Mutex
}

// Run starts the flows' workers and keeps their connectors configured
// until ctx ends, then stops the workers. A worker that cannot start (its
// cluster is down) is retried with backoff while the other flows run.
func (d *Driver) Run(ctx context.Context) error {
	flows := d.Flows
	if flows == nil {
		flows = d.Config.Flows()
	}
	if len(flows) == 0 {
		return errors.New("No source->target replication flows.")
	}
	if d.Log == nil {
		d.Log = slog.Default()
	}
	if d.Progress == nil {
		d.Progress = io.Discard
	}
	if d.Resync <= 0 {
		d.Resync = 10 * time.Second
	}
	if d.Poll <= 0 {
		d.Poll = time.Second
	}
	if d.RetryMax <= 0 {
		d.RetryMax = 30 * time.Second
	}
	var wg sync.WaitGroup
	for _, f := range flows {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.runFlow(ctx, f)
		}()
	}
	wg.Wait()
	return nil
}

func (d *Driver) printf(format string, args ...any) {
	d.outMu.Lock()
	defer d.outMu.Unlock()
	fmt.Fprintf(d.Progress, format+"\n", args...)
}

// runFlow starts the flow's worker (retrying) and tends its connectors
// until ctx ends.
func (d *Driver) runFlow(ctx context.Context, f Flow) {
	props := d.Config.WorkerConfig(f)
	what := "heartbeats only"
	if d.Config.Enabled(f) {
		what = "replicating"
	}
	log := d.Log.With("flow", f.String())
	wait := d.Poll
	for {
		h, stop, err := d.Start(ctx, f, props)
		if err == nil {
			d.printf("%s: %s; worker group %s on %s (%s)", f, what, props[workerGroupIDConfig], f.Target, props[bootstrapServersConfig])
			d.tend(ctx, f, h, log)
			stop()
			d.printf("%s: stopped", f)
			return
		}
		if ctx.Err() != nil {
			return
		}
		d.printf("%s: cannot start the worker on %s (retrying in %v): %v", f, f.Target, wait, err)
		log.Warn("start mirror worker", "err", err, "retry_in", wait)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, d.RetryMax)
	}
}

// connectorState is what the driver last reported of one connector.
type connectorState struct {
	configured bool   // its config in the group matches the file's
	lastErr    string // the last configuration error reported
	status     string // the last status line printed
}

// tend is MirrorHerder's job: write each connector's config when it
// differs from the file's (only the group's leader can; a follower's
// attempt is refused and left to the leader), and report their states.
func (d *Driver) tend(ctx context.Context, f Flow, h herder.Herder, log *slog.Logger) {
	states := map[string]*connectorState{}
	for _, c := range Connectors {
		states[c.Name] = &connectorState{}
	}
	for {
		all := true
		for _, c := range Connectors {
			st := states[c.Name]
			d.configure(ctx, f, h, c, st, log)
			d.report(ctx, f, h, c, st)
			all = all && st.configured
		}
		next := d.Resync
		if !all {
			next = d.Poll
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(next):
		}
	}
}

func (d *Driver) configure(ctx context.Context, f Flow, h herder.Herder, c Connector, st *connectorState, log *slog.Logger) {
	want := d.Config.ConnectorConfig(f, c)
	info, err := h.ConnectorInfo(ctx, c.Name)
	switch {
	case err == nil && maps.Equal(info.Config, want):
		if !st.configured {
			log.Info("connector configuration is up to date", "connector", c.Name)
		}
		st.configured, st.lastErr = true, ""
		return
	case err != nil && herder.StatusOf(err) != http.StatusNotFound:
		// Rebalancing, or not joined yet: look again later rather than
		// rewrite a config that may well be right (a write restarts the
		// connector).
		st.configured = false
		return
	}
	st.configured = false
	created, _, err := h.PutConnectorConfig(ctx, c.Name, want, "", true)
	var notLeader *herder.NotLeaderError
	switch {
	case err == nil:
		st.configured, st.lastErr = true, ""
		if created {
			d.printf("%s: %s created", f, c.Name)
		} else {
			d.printf("%s: %s reconfigured", f, c.Name)
		}
	case errors.As(err, &notLeader), ctx.Err() != nil:
		// Another member leads the group (or none yet): the leader
		// writes the configs, as in MirrorHerder.
	default:
		if msg := err.Error(); msg != st.lastErr {
			st.lastErr = msg
			d.printf("%s: cannot configure %s: %s", f, c.Name, msg)
		}
	}
}

// report prints a connector's state whenever it changes: RUNNING with its
// tasks' states, or FAILED with the first line of the failure.
func (d *Driver) report(ctx context.Context, f Flow, h herder.Herder, c Connector, st *connectorState) {
	s, err := h.ConnectorStatus(ctx, c.Name)
	if err != nil {
		return
	}
	line := statusLine(s)
	if line != st.status {
		st.status = line
		d.printf("%s: %s %s", f, c.Name, line)
	}
}

func statusLine(s *herder.ConnectorStateInfo) string {
	var b strings.Builder
	b.WriteString(string(s.Connector.State))
	if s.Connector.State == herder.StateFailed {
		b.WriteString(": " + firstLine(s.Connector.Trace))
		return b.String()
	}
	counts := map[herder.State]int{}
	var failed []string
	for _, t := range s.Tasks {
		counts[t.State]++
		if t.State == herder.StateFailed {
			failed = append(failed, fmt.Sprintf("task %d: %s", t.ID, firstLine(t.Trace)))
		}
	}
	fmt.Fprintf(&b, ", %d task(s)", len(s.Tasks))
	for _, st := range []herder.State{herder.StateRunning, herder.StatePaused, herder.StateUnassigned, herder.StateFailed, herder.StateRestarting} {
		if n := counts[st]; n > 0 {
			fmt.Fprintf(&b, " %d %s", n, st)
		}
	}
	if len(failed) > 0 {
		b.WriteString(" (" + strings.Join(failed, "; ") + ")")
	}
	return b.String()
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
