package main

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/fjordhq/fjord/api"
)

// runHealthcheck runs `fjord healthcheck args...` in-process.
func runHealthcheck(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := &cobra.Command{Use: "fjord", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(newHealthcheckCmd())
	var out syncBuffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{"healthcheck"}, args...))
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

// TestHealthcheck probes Fjord's own HTTP server (api.Server, as a broker's
// --http-addr serves it): 2xx passes, a failing check's 503 and an
// unknown path fail with the status and body, and so do a refused
// connection, a server that never answers and a URL that is not one.
func TestHealthcheck(t *testing.T) {
	h := api.New(nil)
	var down atomic.Bool
	h.AddCheck("broker", func() error {
		if down.Load() {
			return errors.New("broker is shutting down")
		}
		return nil
	})
	if err := h.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	go h.Serve()
	t.Cleanup(func() { h.Shutdown(context.Background()) })
	base := "http://" + h.Addr().String()

	out, err := runHealthcheck(t, base+"/healthz")
	if err != nil || !strings.Contains(out, "200 OK") {
		t.Fatalf("healthy server: out %q, err %v; want 200 OK and no error", out, err)
	}

	down.Store(true)
	_, err = runHealthcheck(t, base+"/healthz")
	if err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "broker is shutting down") {
		t.Fatalf("failing check: err %v; want the 503 and the check's message", err)
	}

	_, err = runHealthcheck(t, base+"/no-such-probe")
	if err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("unknown path: err %v; want a 404 error", err)
	}

	// Nothing listens on a port just released.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	if _, err := runHealthcheck(t, "http://"+closed+"/healthz"); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("closed port: err %v; want connection refused", err)
	}

	// A listener that accepts but never answers (a process still starting)
	// must fail within --timeout, not hang the probe.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	start := time.Now()
	_, err = runHealthcheck(t, "--timeout", "300ms", "http://"+silent.Addr().String()+"/readyz")
	if err == nil || time.Since(start) > 5*time.Second {
		t.Fatalf("silent server: err %v after %v; want a timeout error within ~300ms", err, time.Since(start))
	}

	for _, bad := range []string{"127.0.0.1:8080/readyz", "ftp://host/x", "http://"} {
		if _, err := runHealthcheck(t, bad); err == nil || !strings.Contains(err.Error(), "want an http:// or https:// URL") {
			t.Errorf("URL %q: err %v; want the URL to be refused", bad, err)
		}
	}
}
