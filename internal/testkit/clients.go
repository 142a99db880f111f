package testkit

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Client returns a franz-go client for addr (one host:port or a comma
// separated bootstrap list), closed when the test ends.
func Client(t testing.TB, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(strings.Split(addr, ",")...)}, opts...)...)
	if err != nil {
		t.Fatalf("kgo client: %v", err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// Admin returns a kadm client for addr.
func Admin(t testing.TB, addr string) *kadm.Client {
	return kadm.NewClient(Client(t, addr))
}

// Context returns a context cancelled after d or at the end of the test.
func Context(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// debianPython is Debian's interpreter, which has python3-kafka and
// python3-confluent-kafka (the python3 on PATH may be another one).
const debianPython = "/usr/bin/python3"

// Python runs a Python script with Debian's python3 and the given
// arguments and returns its stdout. The script fails the test if it
// exits non-zero. Missing modules fail the test: `make deps` installs them.
func Python(t testing.TB, timeout time.Duration, script string, args ...string) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "script.py")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, debianPython, append([]string{path}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python script failed: %v\nstdout:\n%s\nstderr:\n%s\n(missing modules? run `make deps`)", err, out, stderr.String())
	}
	return string(out)
}

// Kcat runs kcat with args and stdin, returning stdout and stderr. It
// fails the test if kcat is not installed; the exit status is returned
// for the caller to judge.
func Kcat(t testing.TB, timeout time.Duration, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	path, lerr := exec.LookPath("kcat")
	if lerr != nil {
		t.Fatalf("kcat not installed: run `make deps` (%v)", lerr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var so, se strings.Builder
	cmd.Stdout, cmd.Stderr = &so, &se
	err = cmd.Run()
	return so.String(), se.String(), err
}
