package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Target is one broker implementation under test. Each run starts it as
// its own process with fresh data and stops it before the next target
// starts, so that it is alone on the machine while measured.
type Target interface {
	Name() string
	Addr() string
	// Ports lists every loopback address the process binds, which must be
	// free before it starts (else we would measure someone else's broker).
	Ports() []string
	// Prepare runs once, before the first start.
	Prepare(ctx context.Context, root string) error
	// Command returns the broker process for one run, data under dir.
	Command(dir string) (*exec.Cmd, error)
}

// fjordTarget runs `fjord dev` with its defaults, only addresses and data
// directory given.
type fjordTarget struct {
	bin            string
	addr, httpAddr string
}

func (t *fjordTarget) Name() string                          { return "Fjord" }
func (t *fjordTarget) Addr() string                          { return t.addr }
func (t *fjordTarget) Ports() []string                       { return []string{t.addr, t.httpAddr} }
func (t *fjordTarget) Prepare(context.Context, string) error { return nil }
func (t *fjordTarget) Command(dir string) (*exec.Cmd, error) {
	return exec.Command(t.bin, "dev",
		"--data-dir", filepath.Join(dir, "data"),
		"--kafka-addr", t.addr,
		"--http-addr", t.httpAddr), nil
}

// kfakeTarget runs `fjord bench kfake`: franz-go's in-memory cluster in a
// process of its own.
type kfakeTarget struct {
	self []string // command prefix that reaches the bench subcommands
	env  []string
	addr string
}

func (t *kfakeTarget) Name() string                          { return "kfake" }
func (t *kfakeTarget) Addr() string                          { return t.addr }
func (t *kfakeTarget) Ports() []string                       { return []string{t.addr} }
func (t *kfakeTarget) Prepare(context.Context, string) error { return nil }
func (t *kfakeTarget) Command(string) (*exec.Cmd, error) {
	_, port, err := net.SplitHostPort(t.addr)
	if err != nil {
		return nil, fmt.Errorf("kfake address %q: %w", t.addr, err)
	}
	args := append(append([]string{}, t.self[1:]...), "kfake", "--port", port)
	cmd := exec.Command(t.self[0], args...)
	cmd.Env = append(os.Environ(), t.env...)
	return cmd, nil
}

// kafkaJVMOpts are what bin/kafka-server-start.sh and kafka-run-class.sh
// give the broker by default (heap; KAFKA_JVM_PERFORMANCE_OPTS), so Kafka
// runs on its own defaults and nothing more. GC logging is left out.
var kafkaJVMOpts = []string{
	"-Xmx1G", "-Xms1G",
	"-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20", "-XX:InitiatingHeapOccupancyPercent=35",
	"-XX:+ExplicitGCInvokesConcurrent", "-XX:MaxInlineLevel=15", "-Djava.awt.headless=true",
}

// kafkaTarget runs Apache Kafka 4.4 in KRaft combined mode. Prepare lets
// scripts/kafka.sh fetch the jars, write server.properties and format the
// storage (starting the broker once, which it insists on), then keeps that
// formatted directory as a pristine copy; each run starts java directly on
// a fresh copy so that the start-up time is the broker's own, without the
// script's format step, and so that we know the JVM's pid.
type kafkaTarget struct {
	script string
	addr   string
	log    *slog.Logger

	dir       string // prepared: server.properties, log4j2.yaml, pristine/
	classpath string
}

func (t *kafkaTarget) Name() string { return "Kafka" }
func (t *kafkaTarget) Addr() string { return t.addr }
func (t *kafkaTarget) Ports() []string {
	host, port, _ := net.SplitHostPort(t.addr)
	p, _ := strconv.Atoi(port)
	return []string{t.addr, net.JoinHostPort(host, strconv.Itoa(p+1))}
}

func (t *kafkaTarget) Prepare(ctx context.Context, root string) error {
	_, port, err := net.SplitHostPort(t.addr)
	if err != nil {
		return fmt.Errorf("kafka address %q: %w", t.addr, err)
	}
	t.dir = filepath.Join(root, "kafka")
	cp, err := exec.CommandContext(ctx, t.script, "classpath").Output()
	if err != nil {
		return fmt.Errorf("%s classpath: %w", t.script, err)
	}
	t.classpath = strings.TrimSpace(string(cp))
	t.log.Info("preparing Apache Kafka (fetch jars, format, first start)", "dir", t.dir)
	var stderr bytes.Buffer
	start := exec.CommandContext(ctx, t.script, "start", port, t.dir)
	start.Stderr = &stderr
	out, err := start.Output()
	if err != nil {
		return fmt.Errorf("%s start %s %s: %w: %s", t.script, port, t.dir, err, tail(stderr.Bytes(), 2000))
	}
	lines := strings.Fields(string(out))
	if len(lines) == 0 {
		return fmt.Errorf("%s start printed no pid", t.script)
	}
	pid, err := strconv.Atoi(lines[len(lines)-1])
	if err != nil {
		return fmt.Errorf("%s start printed %q, want a pid", t.script, out)
	}
	if err := stopPid(pid, 60*time.Second); err != nil {
		return fmt.Errorf("stop the preparing kafka (pid %d): %w", pid, err)
	}
	return os.Rename(filepath.Join(t.dir, "data"), filepath.Join(t.dir, "pristine"))
}

func (t *kafkaTarget) Command(string) (*exec.Cmd, error) {
	if t.dir == "" {
		return nil, errors.New("kafka target not prepared")
	}
	data := filepath.Join(t.dir, "data")
	if err := os.RemoveAll(data); err != nil {
		return nil, fmt.Errorf("clear kafka data: %w", err)
	}
	if out, err := exec.Command("cp", "-a", filepath.Join(t.dir, "pristine"), data).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("copy formatted kafka data: %w: %s", err, out)
	}
	args := append(append([]string{}, kafkaJVMOpts...),
		"-Dlog4j2.configurationFile="+filepath.Join(t.dir, "log4j2.yaml"),
		"-cp", t.classpath, "kafka.Kafka", filepath.Join(t.dir, "server.properties"))
	return exec.Command("java", args...), nil
}

// stopPid stops a process we started but do not parent (the script's
// nohup'd JVM): SIGTERM, then SIGKILL after the grace period.
func stopPid(pid int, grace time.Duration) error {
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	if waitGone(pid, grace) {
		return nil
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	if !waitGone(pid, 10*time.Second) {
		return fmt.Errorf("pid %d survived SIGKILL", pid)
	}
	return nil
}

func waitGone(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond) // polling the process table
	}
	return true
}

// running is a started broker process.
type running struct {
	target  Target
	cmd     *exec.Cmd
	logPath string
	startup time.Duration
	done    chan struct{} // closed when the process exited
	waitErr error
}

func (r *running) pid() int { return r.cmd.Process.Pid }

// startTarget starts t with data under dir and waits until it answers
// Metadata; the time from process start to that answer is the start-up time.
func startTarget(ctx context.Context, t Target, dir string, timeout time.Duration) (*running, error) {
	for _, a := range t.Ports() {
		if err := portFree(a); err != nil {
			return nil, fmt.Errorf("%s: %w", t.Name(), err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("%s data dir: %w", t.Name(), err)
	}
	cmd, err := t.Command(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.Name(), err)
	}
	logPath := filepath.Join(dir, "broker.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("%s log: %w", t.Name(), err)
	}
	defer logf.Close() // the child holds its own descriptor
	cmd.Stdout, cmd.Stderr = logf, logf
	dieWithParent(cmd)

	r := &running{target: t, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	begin := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", t.Name(), err)
	}
	go func() { r.waitErr = cmd.Wait(); close(r.done) }()

	deadline := begin.Add(timeout)
	for {
		perr := probeMetadata(t.Addr(), time.Second)
		if perr == nil {
			r.startup = time.Since(begin)
			return r, nil
		}
		select {
		case <-r.done:
			return nil, fmt.Errorf("%s exited before serving Metadata (%v): %s", t.Name(), r.waitErr, logTail(logPath))
		case <-ctx.Done():
			r.stop(5 * time.Second)
			return nil, ctx.Err()
		default:
		}
		if time.Now().After(deadline) {
			r.stop(5 * time.Second)
			return nil, fmt.Errorf("%s did not serve Metadata on %s within %s (last: %v): %s", t.Name(), t.Addr(), timeout, perr, logTail(logPath))
		}
		time.Sleep(5 * time.Millisecond) // polling; bounds start-up resolution to ~5 ms
	}
}

// stop sends SIGTERM and waits for a clean exit, then SIGKILL.
func (r *running) stop(grace time.Duration) {
	select {
	case <-r.done:
		return
	default:
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(grace):
		_ = r.cmd.Process.Kill()
		<-r.done
	}
}

func portFree(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("address %s is in use; stop whatever listens there or choose other ports: %w", addr, err)
	}
	return ln.Close()
}

func logTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	return tail(b, 1500)
}

func tail(b []byte, n int) string {
	b = bytes.TrimSpace(b)
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
