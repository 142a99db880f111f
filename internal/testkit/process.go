// Package testkit runs real parts for tests: Fjord brokers in-process and
// as separate processes (killed with SIGKILL for crash tests), and the
// third-party Kafka clients the tests drive them with (franz-go, kcat,
// kafka-python, confluent-kafka). A missing client is a test failure, not
// a skip: `make test` installs them.
package testkit

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// CheckFor calls fn every `every` until it returns nil or `wait` passes,
// then fails the test with fn's last error.
func CheckFor(t testing.TB, wait, every time.Duration, fn func() error) {
	t.Helper()
	deadline := time.Now().Add(wait)
	var err error
	for {
		if err = fn(); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met after %v: %v", wait, err)
		}
		time.Sleep(every)
	}
}

// FreeAddr returns a free 127.0.0.1 TCP address.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find free port: %v", err)
	}
	defer l.Close()
	return l.Addr().String()
}

// RepoRoot returns the repository root (the directory holding go.mod).
func RepoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Dir(file)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("cannot find repository root")
		}
		dir = parent
	}
}

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// FjordBinary builds cmd/fjord once per test binary and returns its path.
func FjordBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "fjord-bin-")
		if err != nil {
			buildErr = err
			return
		}
		buildPath = filepath.Join(dir, "fjord")
		cmd := exec.Command("go", "build", "-o", buildPath, "./cmd/fjord")
		cmd.Dir = RepoRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/fjord: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildPath
}

// Process is a Fjord process started by a test.
type Process struct {
	t      testing.TB
	bin    string
	args   []string
	cmd    *exec.Cmd
	output *syncBuffer
	done   chan struct{}
	err    error
}

// StartProcess runs the fjord binary with args; the process is killed
// when the test ends. Its output is kept and printed if the test fails.
func StartProcess(t testing.TB, args ...string) *Process {
	t.Helper()
	p := &Process{t: t, bin: FjordBinary(t), args: args, output: &syncBuffer{}}
	p.start()
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("fjord %s output:\n%s", strings.Join(args, " "), p.output.String())
		}
	})
	return p
}

func (p *Process) start() {
	p.t.Helper()
	p.cmd = exec.Command(p.bin, p.args...)
	p.cmd.Stdout = p.output
	p.cmd.Stderr = p.output
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		p.t.Fatalf("start fjord: %v", err)
	}
	p.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) {
		p.err = cmd.Wait()
		close(done)
	}(p.cmd, p.done)
}

// Output returns everything the process printed so far.
func (p *Process) Output() string { return p.output.String() }

// PID returns the process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Kill sends SIGKILL and waits for the process to die.
func (p *Process) Kill() {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// Stop sends SIGTERM and waits up to timeout for a clean exit, returning
// the exit error (nil for a clean exit).
func (p *Process) Stop(timeout time.Duration) error {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return p.err
	case <-time.After(timeout):
		p.Kill()
		return errors.New("process did not exit after SIGTERM; killed")
	}
}

// Restart starts the process again with the same arguments (after Kill or Stop).
func (p *Process) Restart() {
	p.t.Helper()
	p.Kill()
	fmt.Fprintf(p.output, "\n--- restart ---\n")
	p.start()
}

// Exited reports whether the process has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

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

// WaitForPort waits until addr accepts TCP connections.
func WaitForPort(t testing.TB, addr string, wait time.Duration) {
	t.Helper()
	CheckFor(t, wait, 20*time.Millisecond, func() error {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			return err
		}
		c.Close()
		return nil
	})
}
