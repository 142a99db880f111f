// Package connectkit runs a standalone Connect worker in the test process
// — the runtime Worker on a real broker driven by the standalone herder,
// as `fjord connect-standalone` wires them — for connector tests.
// (It is not in testkit because the runtime's own tests import testkit.)
package connectkit

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fjordhq/fjord/connect/herder"
	"github.com/fjordhq/fjord/connect/runtime"
	"github.com/fjordhq/fjord/connect/storage"
	"github.com/fjordhq/fjord/internal/testkit"
)

// Worker is a standalone worker in the test process.
type Worker struct {
	W *runtime.Worker
	H *herder.Standalone

	offsets storage.OffsetStore
	closed  bool
}

// Options tune a worker.
type Options struct {
	// Props are worker properties over the defaults (JsonConverter for
	// keys and values, 100 ms offset flushes).
	Props map[string]string
	// OffsetsFile keeps source offsets in a file (standalone's
	// offset.storage.file.filename) so a second worker resumes; empty
	// keeps them in memory.
	OffsetsFile string
	// TopicTracking keeps statuses and active topics in memory stores, so
	// the herder answers status and /topics questions (the admin API's
	// pipelines need them).
	TopicTracking bool
	// Registerer receives the worker's metrics (nil: none).
	Registerer prometheus.Registerer
}

// Start starts a worker on the broker at addr; it stops when t ends.
func Start(t testing.TB, addr string, o Options) *Worker {
	t.Helper()
	props := map[string]string{
		"bootstrap.servers":            addr,
		"key.converter":                "org.apache.kafka.connect.json.JsonConverter",
		"value.converter":              "org.apache.kafka.connect.json.JsonConverter",
		"offset.storage.file.filename": filepath.Join(t.TempDir(), "unused.offsets"),
		"offset.flush.interval.ms":     "100",
	}
	for k, v := range o.Props {
		props[k] = v
	}
	cfg, err := runtime.ParseWorkerConfig(props, runtime.Standalone)
	if err != nil {
		t.Fatal(err)
	}
	var offsets storage.OffsetStore = storage.NewMemoryOffsetStore()
	if o.OffsetsFile != "" {
		f, err := storage.OpenFileOffsetStore(o.OffsetsFile)
		if err != nil {
			t.Fatal(err)
		}
		offsets = f
	}
	wo := runtime.WorkerOptions{WorkerID: "127.0.0.1:8083", Offsets: offsets, Registerer: o.Registerer}
	deps := herder.StandaloneDeps{}
	if o.TopicTracking {
		statuses := storage.NewMemoryStatusStore()
		wo.Topics, deps.Statuses, deps.Topics = statuses, statuses, statuses
	}
	w, err := runtime.NewWorker(cfg, wo)
	if err != nil {
		t.Fatal(err)
	}
	deps.Worker, deps.Offsets, deps.Validate, deps.ConnectorType = w, w, w.ValidateConnectorConfig, w.ConnectorType
	h := herder.NewStandalone(herder.StandaloneConfig{WorkerID: "127.0.0.1:8083", TopicTracking: o.TopicTracking}, deps)
	c := &Worker{W: w, H: h, offsets: offsets}
	t.Cleanup(c.Close)
	return c
}

// Close stops the worker cleanly (tasks commit what they can).
func (c *Worker) Close() {
	if c.closed {
		return
	}
	c.closed = true
	c.H.Close(context.Background())
	c.W.Close(context.Background())
	if cl, ok := c.offsets.(interface{ Close() error }); ok {
		cl.Close()
	}
}

// Crash stops the worker without waiting for its tasks: they are
// abandoned mid-poll or mid-put, their clients closed under them (what a
// killed process leaves, as far as the broker and the offsets go).
func (c *Worker) Crash() {
	if c.closed {
		return
	}
	c.closed = true
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c.H.Close(ctx)
	c.W.Close(ctx)
	if cl, ok := c.offsets.(interface{ Close() error }); ok {
		cl.Close()
	}
}

// Create POSTs a connector, as the REST API would.
func (c *Worker) Create(t testing.TB, config map[string]string) {
	t.Helper()
	if _, _, err := c.H.PutConnectorConfig(testkit.Context(t, 30*time.Second), config["name"], config, "", false); err != nil {
		t.Fatal(err)
	}
}

// Delete removes a connector.
func (c *Worker) Delete(t testing.TB, name string) {
	t.Helper()
	if err := c.H.DeleteConnector(testkit.Context(t, 30*time.Second), name); err != nil {
		t.Fatal(err)
	}
}

// Failed returns the trace of a FAILED connector or task, nil when none
// failed.
func (c *Worker) Failed() error {
	ctx := context.Background()
	names, _ := c.H.Connectors(ctx)
	for _, n := range names {
		st, err := c.H.ConnectorStatus(ctx, n)
		if err != nil {
			continue
		}
		if st.Connector.State == herder.StateFailed {
			return fmt.Errorf("connector %s failed: %s", n, st.Connector.Trace)
		}
		for _, ts := range st.Tasks {
			if ts.State == herder.StateFailed {
				return fmt.Errorf("task %s-%d failed: %s", n, ts.ID, ts.Trace)
			}
		}
	}
	return nil
}

// WaitFailed waits until a task or connector of name fails and returns
// its trace; it fails t if none does within wait.
func (c *Worker) WaitFailed(t testing.TB, name string, wait time.Duration) string {
	t.Helper()
	var trace string
	testkit.CheckFor(t, wait, 50*time.Millisecond, func() error {
		st, err := c.H.ConnectorStatus(context.Background(), name)
		if err != nil {
			return err
		}
		if st.Connector.State == herder.StateFailed {
			trace = st.Connector.Trace
			return nil
		}
		for _, ts := range st.Tasks {
			if ts.State == herder.StateFailed {
				trace = ts.Trace
				return nil
			}
		}
		return fmt.Errorf("connector %s has not failed: %+v", name, st)
	})
	return trace
}
