package main

// Harness for the end-to-end tests of the people-facing commands (topic,
// produce, consume, group): each test runs the real cobra commands
// in-process, with captured stdin/stdout/stderr, against a real broker.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/fjordhq/fjord/internal/testkit"
)

// startCLIBroker starts the broker the CLI tests talk to and returns its
// bootstrap address: an in-process Fjord broker (internal/testkit) with
// its data in a temp dir, closed when the test ends.
//
// FJORD_CLI_TEST_BOOTSTRAP=host:port runs the suite against an external
// cluster instead, e.g. Apache Kafka 4.4 from `scripts/kafka.sh start`. The
// tests use distinct topic and group names so they can share it, but the
// cluster must be fresh: run the suite once per cluster (-count=1).
func startCLIBroker(t *testing.T) string {
	t.Helper()
	if addr := os.Getenv("FJORD_CLI_TEST_BOOTSTRAP"); addr != "" {
		return addr
	}
	return testkit.StartBroker(t, nil).Addr
}

// idleMS is the --timeout-ms the tests stop consumers with: short against
// the in-process broker, longer against an external cluster whose
// rebalances and fetches take real time.
func idleMS() string {
	if os.Getenv("FJORD_CLI_TEST_BOOTSTRAP") != "" {
		return "3000"
	}
	return "500"
}

// syncBuffer is written by a command while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// cliRun is one command run: its output so far and, once done, its error.
type cliRun struct {
	stdout, stderr syncBuffer
	done           chan struct{}
	err            error
}

func (r *cliRun) wait(t *testing.T, d time.Duration) error {
	t.Helper()
	select {
	case <-r.done:
		return r.err
	case <-time.After(d):
		t.Fatalf("command still running after %v; stdout:\n%s\nstderr:\n%s", d, r.stdout.String(), r.stderr.String())
		return nil
	}
}

// newCLIRoot builds a fresh command tree, so flags never leak between runs.
func newCLIRoot() *cobra.Command {
	root := &cobra.Command{Use: "fjord", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(newTopicCmd(), newProduceCmd(), newConsumeCmd(), newGroupCmd(), newUserCmd(), newACLCmd(), newQuotaCmd())
	return root
}

// startFjord runs `fjord args...` in the background with stdin and ctx
// (cancelling ctx is what SIGINT does to the real binary).
func startFjord(ctx context.Context, stdin io.Reader, args ...string) *cliRun {
	r := &cliRun{done: make(chan struct{})}
	root := newCLIRoot()
	root.SetArgs(args)
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	root.SetIn(stdin)
	root.SetOut(&r.stdout)
	root.SetErr(&r.stderr)
	go func() {
		defer close(r.done)
		r.err = root.ExecuteContext(ctx)
	}()
	return r
}

// fjord runs one command to completion against addr and returns stdout,
// stderr and its error. The bootstrap flag is appended, so args read as
// typed on a shell.
func fjord(t *testing.T, addr, stdin string, args ...string) (string, string, error) {
	t.Helper()
	r := startFjord(context.Background(), strings.NewReader(stdin), append(args, "-b", addr)...)
	err := r.wait(t, time.Minute)
	return r.stdout.String(), r.stderr.String(), err
}

// mustFjord is fjord that fails the test on error.
func mustFjord(t *testing.T, addr, stdin string, args ...string) string {
	t.Helper()
	out, errOut, err := fjord(t, addr, stdin, args...)
	if err != nil {
		t.Fatalf("fjord %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// wantErr runs a command that must fail with an error containing every
// fragment.
func wantErr(t *testing.T, addr, stdin string, args []string, fragments ...string) error {
	t.Helper()
	_, _, err := fjord(t, addr, stdin, args...)
	if err == nil {
		t.Fatalf("fjord %s succeeded, want an error containing %q", strings.Join(args, " "), fragments)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("fjord %s: error %q does not contain %q", strings.Join(args, " "), err, f)
		}
	}
	return err
}

// decodeJSON parses a command's --output json.
func decodeJSON[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("output is not the expected JSON: %v\n%s", err, s)
	}
	return v
}

// jsonLines parses consume --format json output: one object per line.
func jsonLines(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.Lines(s) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %q is not JSON: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}
