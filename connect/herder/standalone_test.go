package herder_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect/herder"
	"github.com/fjordhq/fjord/connect/runtime"
	"github.com/fjordhq/fjord/connect/runtime/runtimetest"
	"github.com/fjordhq/fjord/connect/storage"
	"github.com/fjordhq/fjord/internal/testkit"
)

func init() { runtimetest.Register() }

// standalone wires a worker and a standalone herder as fjord
// connect-standalone does, with offsets in a file.
func standalone(t *testing.T, addr, offsetFile string) (*herder.Standalone, *runtime.Worker) {
	t.Helper()
	cfg, err := runtime.ParseWorkerConfig(map[string]string{
		"bootstrap.servers": addr, "offset.storage.file.filename": offsetFile, "offset.flush.interval.ms": "50",
		"key.converter": runtimetest.ConverterClass, "value.converter": runtimetest.ConverterClass,
		"header.converter": runtimetest.ConverterClass,
	}, runtime.Standalone)
	if err != nil {
		t.Fatal(err)
	}
	offsets, err := storage.OpenFileOffsetStore(cfg.OffsetStorageFileName)
	if err != nil {
		t.Fatal(err)
	}
	statuses := storage.NewMemoryStatusStore()
	w, err := runtime.NewWorker(cfg, runtime.WorkerOptions{WorkerID: "127.0.0.1:8083", Offsets: offsets, Topics: statuses})
	if err != nil {
		t.Fatal(err)
	}
	h := herder.NewStandalone(herder.StandaloneConfig{WorkerID: "127.0.0.1:8083", TopicTracking: true, TopicTrackingAllowReset: true},
		herder.StandaloneDeps{Worker: w, Offsets: w, Validate: w.ValidateConnectorConfig, ConnectorType: w.ConnectorType, Statuses: statuses})
	t.Cleanup(func() {
		h.Close(context.Background())
		w.Close(context.Background())
	})
	return h, w
}

func awaitStatus(t *testing.T, h herder.Herder, name string, want herder.State, tasks ...herder.State) *herder.ConnectorStateInfo {
	t.Helper()
	var last *herder.ConnectorStateInfo
	testkit.CheckFor(t, 30*time.Second, 10*time.Millisecond, func() error {
		st, err := h.ConnectorStatus(context.Background(), name)
		if err != nil {
			return err
		}
		last = st
		if st.Connector.State != want || len(st.Tasks) != len(tasks) {
			return fmt.Errorf("status %+v", st)
		}
		for i, ts := range st.Tasks {
			if ts.State != tasks[i] {
				return fmt.Errorf("status %+v", st)
			}
		}
		return nil
	})
	return last
}

func TestStandaloneLifecycle(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	ctx := testkit.Context(t, 2*time.Minute)
	h, _ := standalone(t, b.Addr, filepath.Join(t.TempDir(), "connect.offsets"))
	id := runtimetest.TestID(t)
	src := runtimetest.SourceConfig("src", id, "life", -1, "poll.delay.ms", "5")
	delete(src, "name") // the herder adds it, as Kafka's REST layer does
	created, info, err := h.PutConnectorConfig(ctx, "src", src, "", false)
	if err != nil || !created || info.Type != herder.TypeSource || info.Config["name"] != "src" || len(info.Tasks) != 1 {
		t.Fatalf("create: %v %+v %v", created, info, err)
	}
	if _, _, err := h.PutConnectorConfig(ctx, "src", src, "", false); herder.StatusOf(err) != http.StatusConflict {
		t.Errorf("duplicate create: %v", err)
	}
	sink := runtimetest.SinkConfig("sink", id, "life")
	if _, _, err := h.PutConnectorConfig(ctx, "sink", sink, "", false); err != nil {
		t.Fatal(err)
	}
	st := awaitStatus(t, h, "sink", herder.StateRunning, herder.StateRunning)
	if st.Connector.Version != "1.0" || st.Connector.WorkerID != "127.0.0.1:8083" || st.Type != herder.TypeSink {
		t.Errorf("status %+v", st)
	}
	c := runtimetest.Collector(id)
	testkit.CheckFor(t, 30*time.Second, 10*time.Millisecond, func() error {
		if c.Distinct() < 20 {
			return fmt.Errorf("%d records", c.Distinct())
		}
		return nil
	})
	names, _ := h.Connectors(ctx)
	if !slices.Equal(names, []string{"sink", "src"}) {
		t.Errorf("connectors %v", names)
	}
	tasks, err := h.TaskConfigs(ctx, "src")
	if err != nil || len(tasks) != 1 || tasks[0].Config["task.class"] != "io.fjord.test.SequenceSourceTask" {
		t.Errorf("task configs %+v %v", tasks, err)
	}
	testkit.CheckFor(t, 10*time.Second, 10*time.Millisecond, func() error {
		topics, err := h.ConnectorActiveTopics(ctx, "src")
		if err != nil || !slices.Equal(topics, []string{"life"}) {
			return fmt.Errorf("active topics %v %v", topics, err)
		}
		return nil
	})

	// Invalid configs are refused with every error.
	_, _, err = h.PutConnectorConfig(ctx, "bad", map[string]string{"connector.class": runtimetest.SinkClass, "tasks.max": "0"}, "", false)
	if herder.StatusOf(err) != http.StatusBadRequest || !strings.Contains(err.Error(), "contains the following 3 error(s):\nInvalid value 0 for configuration tasks.max: Value must be at least 1\nMust configure one of topics or topics.regex\nMust configure one of topics or topics.regex\nYou can also find") {
		t.Errorf("invalid config: %v", err)
	}

	// Pause and resume.
	if err := h.PauseConnector(ctx, "src"); err != nil {
		t.Fatal(err)
	}
	awaitStatus(t, h, "src", herder.StatePaused, herder.StatePaused)
	if err := h.ResumeConnector(ctx, "src"); err != nil {
		t.Fatal(err)
	}
	awaitStatus(t, h, "src", herder.StateRunning, herder.StateRunning)

	// Offsets may change only when stopped.
	if _, err := h.ResetConnectorOffsets(ctx, "src"); herder.StatusOf(err) != http.StatusBadRequest || !strings.Contains(err.Error(), "STOPPED state") {
		t.Errorf("reset while running: %v", err)
	}
	if err := h.StopConnector(ctx, "src"); err != nil {
		t.Fatal(err)
	}
	awaitStatus(t, h, "src", herder.StateStopped)
	if info, _ := h.ConnectorInfo(ctx, "src"); len(info.Tasks) != 0 {
		t.Errorf("stopped connector has tasks %v", info.Tasks)
	}
	offs, err := h.ConnectorOffsets(ctx, "src")
	if err != nil || len(offs.Offsets) != 1 {
		t.Fatalf("offsets %+v %v", offs, err)
	}
	msg, err := h.AlterConnectorOffsets(ctx, "src", &herder.ConnectorOffsets{Offsets: []herder.ConnectorOffset{
		{Partition: map[string]any{"task": "0"}, Offset: map[string]any{"seq": json.Number("1000")}}}})
	if err != nil || !strings.Contains(msg, "altered successfully") {
		t.Fatalf("alter: %q %v", msg, err)
	}
	// Resumed, the source continues after the altered offset.
	if err := h.ResumeConnector(ctx, "src"); err != nil {
		t.Fatal(err)
	}
	awaitStatus(t, h, "src", herder.StateRunning, herder.StateRunning)
	testkit.CheckFor(t, 30*time.Second, 10*time.Millisecond, func() error {
		if starts := runtimetest.Source(id).StartedAt(); starts[len(starts)-1] != 1001 {
			return fmt.Errorf("starts %v", starts)
		}
		return nil
	})

	// Patch, then delete.
	v := "2"
	info, err = h.PatchConnectorConfig(ctx, "sink", map[string]*string{"tasks.max": &v})
	if err != nil || len(info.Tasks) != 2 || info.Config["tasks.max"] != "2" {
		t.Fatalf("patch: %+v %v", info, err)
	}
	awaitStatus(t, h, "sink", herder.StateRunning, herder.StateRunning, herder.StateRunning)
	if err := h.DeleteConnector(ctx, "sink"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.ConnectorInfo(ctx, "sink"); herder.StatusOf(err) != http.StatusNotFound {
		t.Errorf("deleted connector: %v", err)
	}
	if _, err := h.ConnectorStatus(ctx, "sink"); herder.StatusOf(err) != http.StatusNotFound {
		t.Errorf("deleted connector status: %v", err)
	}
	if err := h.DeleteConnector(ctx, "sink"); herder.StatusOf(err) != http.StatusNotFound {
		t.Errorf("second delete: %v", err)
	}
}

func TestStandaloneRestartFailedTask(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	ctx := testkit.Context(t, time.Minute)
	h, _ := standalone(t, b.Addr, filepath.Join(t.TempDir(), "connect.offsets"))
	id := runtimetest.TestID(t)
	src := runtimetest.SourceConfig("src", id, "rf", 100, "fail.at", "30", "fail.once", "true")
	if _, _, err := h.PutConnectorConfig(ctx, "src", src, "", false); err != nil {
		t.Fatal(err)
	}
	st := awaitStatus(t, h, "src", herder.StateRunning, herder.StateFailed)
	if !strings.Contains(st.Tasks[0].Trace, "org.apache.kafka.connect.errors.ConnectException: source task poll failed") ||
		!strings.Contains(st.Tasks[0].Trace, "told to fail at 30") {
		t.Errorf("trace %q", st.Tasks[0].Trace)
	}
	ts, err := h.TaskStatus(ctx, herder.TaskID{Connector: "src", Task: 0})
	if err != nil || ts.State != herder.StateFailed {
		t.Errorf("task status %+v %v", ts, err)
	}
	// Restart only what failed: the plan says so, the task runs again.
	plan, err := h.RestartConnector(ctx, "src", true, true)
	if err != nil || plan.Connector.State != herder.StateRunning || plan.Tasks[0].State != herder.StateRestarting {
		t.Fatalf("plan %+v %v", plan, err)
	}
	awaitStatus(t, h, "src", herder.StateRunning, herder.StateRunning)
	testkit.CheckFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		o, _ := h.ConnectorOffsets(ctx, "src")
		if len(o.Offsets) != 1 || o.Offsets[0].Offset["seq"] != int64(99) {
			return fmt.Errorf("offsets %+v", o)
		}
		return nil
	})
	if starts := runtimetest.Source(id).StartedAt(); len(starts) != 2 || starts[1] != 30 {
		t.Errorf("starts %v: the restart resumes after the last committed record", starts)
	}
	if err := h.RestartTask(ctx, herder.TaskID{Connector: "src", Task: 7}); herder.StatusOf(err) != http.StatusNotFound {
		t.Errorf("restart of an unknown task: %v", err)
	}
	if err := h.RestartTask(ctx, herder.TaskID{Connector: "src", Task: 0}); err != nil {
		t.Errorf("restart task: %v", err)
	}
	awaitStatus(t, h, "src", herder.StateRunning, herder.StateRunning)
}

// TestStandaloneResumesFromOffsetFile restarts the whole standalone
// worker: the new process reads the offsets file and continues.
func TestStandaloneResumesFromOffsetFile(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	ctx := testkit.Context(t, time.Minute)
	file := filepath.Join(t.TempDir(), "connect.offsets")
	id := runtimetest.TestID(t)
	src := runtimetest.SourceConfig("src", id, "resume", -1, "poll.delay.ms", "2")
	h1, w1 := standalone(t, b.Addr, file)
	if _, _, err := h1.PutConnectorConfig(ctx, "src", src, "", false); err != nil {
		t.Fatal(err)
	}
	testkit.CheckFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		o, _ := h1.ConnectorOffsets(ctx, "src")
		if len(o.Offsets) != 1 || o.Offsets[0].Offset["seq"].(int64) < 100 {
			return fmt.Errorf("offsets %+v", o)
		}
		return nil
	})
	h1.Close(ctx)
	w1.Close(ctx)
	saved, _ := storage.OpenFileOffsetStore(file)
	got, _ := saved.Get(ctx, "src", []map[string]any{{"task": "0"}})
	last := got[0]["seq"].(int64)

	h2, _ := standalone(t, b.Addr, file)
	if _, _, err := h2.PutConnectorConfig(ctx, "src", src, "", false); err != nil {
		t.Fatal(err)
	}
	awaitStatus(t, h2, "src", herder.StateRunning, herder.StateRunning)
	if starts := runtimetest.Source(id).StartedAt(); len(starts) != 2 || starts[1] != last+1 {
		t.Errorf("starts %v, want the second at %d", starts, last+1)
	}
}

// TestStandaloneConfigChangeRestartsTasks: a new connector config restarts
// the tasks even when their own configs come out the same.
func TestStandaloneConfigChangeRestartsTasks(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	ctx := testkit.Context(t, time.Minute)
	h, _ := standalone(t, b.Addr, filepath.Join(t.TempDir(), "connect.offsets"))
	id := runtimetest.TestID(t)
	src := runtimetest.SourceConfig("src", id, "cc", 5)
	if _, _, err := h.PutConnectorConfig(ctx, "src", src, "", false); err != nil {
		t.Fatal(err)
	}
	awaitStatus(t, h, "src", herder.StateRunning, herder.StateRunning)
	before, _ := h.TaskConfigs(ctx, "src")
	// errors.tolerance is the runtime's, not in the task configs.
	v := "all"
	if _, err := h.PatchConnectorConfig(ctx, "src", map[string]*string{"errors.tolerance": &v}); err != nil {
		t.Fatal(err)
	}
	after, _ := h.TaskConfigs(ctx, "src")
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("task configs changed: %v -> %v", before, after)
	}
	awaitStatus(t, h, "src", herder.StateRunning, herder.StateRunning)
	testkit.CheckFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		if n := runtimetest.Source(id).Starts.Load(); n != 2 {
			return fmt.Errorf("task started %d times, want a restart", n)
		}
		return nil
	})
}

func TestStandaloneValidateErrors(t *testing.T) {
	h, _ := standalone(t, "127.0.0.1:1", filepath.Join(t.TempDir(), "connect.offsets"))
	ctx := context.Background()
	// As Kafka: the validate endpoint answers 500 with the
	// BadRequestException's name; creating answers 400 for an unknown
	// class.
	_, err := h.ValidateConnectorConfig(ctx, map[string]string{"name": "v"})
	if herder.StatusOf(err) != 500 || err.Error() != "org.apache.kafka.connect.runtime.rest.errors.BadRequestException: Connector config contains no connector type" {
		t.Errorf("no class: %v", err)
	}
	_, err = h.ValidateConnectorConfig(ctx, map[string]string{"connector.class": "com.example.Nope"})
	if herder.StatusOf(err) != 500 || !strings.Contains(err.Error(), "BadRequestException: Failed to find any class that implements Connector and which name matches com.example.Nope") {
		t.Errorf("unknown class: %v", err)
	}
	_, _, err = h.PutConnectorConfig(ctx, "x", map[string]string{"connector.class": "com.example.Nope"}, "", false)
	if herder.StatusOf(err) != 400 || !strings.HasPrefix(err.Error(), "Failed to find any class") {
		t.Errorf("create with an unknown class: %v", err)
	}
}
