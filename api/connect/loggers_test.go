package connectapi

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestLoggersDriveSlog: a PUT changes what a component's logger writes,
// for the logger and the loggers below it.
func TestLoggersDriveSlog(t *testing.T) {
	lg := NewLoggers(slog.LevelInfo)
	lg.now = func() time.Time { return time.UnixMilli(1700000000123) }
	var out bytes.Buffer
	base := slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelWarn}) // the Loggers decide, not base
	worker := slog.New(lg.Handler("org.apache.kafka.connect.runtime.Worker", base))
	herderLog := slog.New(lg.Handler("org.apache.kafka.connect.runtime.distributed.DistributedHerder", base)).With("k", "v")

	worker.Debug("hidden")
	worker.Info("shown")
	if got := out.String(); strings.Contains(got, "hidden") || !strings.Contains(got, "shown") {
		t.Fatalf("at INFO: %q", got)
	}
	s := New(newFakeHerder(), Options{Loggers: lg})
	expect(t, s, "GET", "/admin/loggers/org.apache.kafka.connect.runtime.Worker", "", 200, `{"level":"INFO","last_modified":null}`)
	expect(t, s, "PUT", "/admin/loggers/org.apache.kafka.connect.runtime", `{"level":"trace"}`, 200,
		`["org.apache.kafka.connect.runtime","org.apache.kafka.connect.runtime.Worker","org.apache.kafka.connect.runtime.distributed.DistributedHerder"]`)
	out.Reset()
	herderLog.Log(context.Background(), slog.LevelDebug-4, "trace line")
	worker.Debug("debug line")
	if got := out.String(); !strings.Contains(got, "trace line") || !strings.Contains(got, "k=v") || !strings.Contains(got, "debug line") {
		t.Fatalf("at TRACE: %q", got)
	}
	expect(t, s, "GET", "/admin/loggers/org.apache.kafka.connect.runtime.Worker", "", 200, `{"level":"TRACE","last_modified":1700000000123}`)
	// A logger created later inherits from its nearest configured parent.
	late := slog.New(lg.Handler("org.apache.kafka.connect.runtime.isolation.Plugins", base))
	if !late.Enabled(context.Background(), slog.LevelDebug) {
		t.Error("a new logger under a TRACE namespace does not log DEBUG")
	}
	expect(t, s, "GET", "/admin/loggers/org.apache.kafka.connect.runtime.isolation.Plugins", "", 200, `{"level":"TRACE","last_modified":null}`)

	expect(t, s, "PUT", "/admin/loggers/root", `{"level":"OFF"}`, 200,
		`["org.apache.kafka.connect.runtime","org.apache.kafka.connect.runtime.Worker","org.apache.kafka.connect.runtime.distributed.DistributedHerder","org.apache.kafka.connect.runtime.isolation.Plugins","root"]`)
	out.Reset()
	worker.Error("silenced")
	if out.Len() != 0 {
		t.Errorf("OFF still logs: %q", out.String())
	}
	expect(t, s, "GET", "/admin/loggers", "", 200,
		`{"org.apache.kafka.connect.runtime":{"level":"OFF","last_modified":1700000000123},"org.apache.kafka.connect.runtime.Worker":{"level":"OFF","last_modified":1700000000123},`+
			`"org.apache.kafka.connect.runtime.distributed.DistributedHerder":{"level":"OFF","last_modified":1700000000123},"org.apache.kafka.connect.runtime.isolation.Plugins":{"level":"OFF","last_modified":1700000000123},"root":{"level":"OFF","last_modified":1700000000123}}`)
	expect(t, s, "PUT", "/admin/loggers/x", `{"level":"verbose"}`, 404, `{"error_code":404,"message":"invalid log level 'verbose'."}`)
	expect(t, s, "GET", "/admin/loggers/never.created", "", 404, `{"error_code":404,"message":"Logger never.created not found."}`)
}

type clusterLoggers struct {
	*fakeHerder
	got []string
}

func (c *clusterLoggers) SetClusterLoggerLevel(ctx context.Context, ns, level string) error {
	c.got = append(c.got, ns+"="+level)
	return nil
}

func TestClusterScope(t *testing.T) {
	lg := NewLoggers(slog.LevelInfo)
	h := &clusterLoggers{fakeHerder: newFakeHerder()}
	s := New(h, Options{Loggers: lg})
	expect(t, s, "PUT", "/admin/loggers/a.b?scope=Cluster", `{"level":"DEBUG"}`, 204, ``)
	if len(h.got) != 1 || h.got[0] != "a.b=DEBUG" {
		t.Errorf("cluster setter got %v", h.got)
	}
	if _, ok := lg.Get("a.b"); ok {
		t.Error("cluster scope set the level locally; the herder applies it on every worker")
	}
	// Without a cluster setter the level applies to this worker.
	s = New(newFakeHerder(), Options{Loggers: lg})
	expect(t, s, "PUT", "/admin/loggers/a.b?scope=cluster", `{"level":"DEBUG"}`, 204, ``)
	if l, ok := lg.Get("a.b"); !ok || l.Level != "DEBUG" {
		t.Errorf("a.b = %+v", l)
	}
}

func TestJavaLevel(t *testing.T) {
	for l, want := range map[slog.Level]string{slog.LevelDebug: "DEBUG", slog.LevelInfo: "INFO", slog.LevelInfo + 1: "INFO", slog.LevelWarn: "WARN", slog.LevelError: "ERROR", slog.LevelDebug - 4: "TRACE", slog.Level(-2000): "ALL"} {
		if got := JavaLevel(l); got != want {
			t.Errorf("JavaLevel(%v) = %s, want %s", l, got, want)
		}
	}
}
