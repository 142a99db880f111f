package bench

import (
	"context"
	"debug/buildinfo"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// The MinIO root credentials of the benchmark's server: it listens on
// loopback only and lives for one benchmark.
const (
	minioUser     = "fjordbench"
	minioPassword = "fjordbench-secret"
)

// minioServer is a MinIO server process (scripts/s3-server.sh builds the
// binary) serving one data directory on a loopback address. testkit's
// S3 server belongs to a test (testing.TB); a benchmark runs outside one.
type minioServer struct {
	addr    string // host:port
	dataDir string
	logPath string
	cmd     *exec.Cmd
	done    chan struct{} // closed when the process exited
	waitErr error
}

// findMinio resolves the MinIO binary: the flag's value, else
// FJORD_MINIO_BIN, else .cache/bin/minio in the repository that holds the
// working directory (where scripts/s3-server.sh puts it).
func findMinio(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	if env := os.Getenv("FJORD_MINIO_BIN"); env != "" {
		return env, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, ".cache", "bin", "minio"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no MinIO binary: run from the repository (its .cache/bin/minio), set FJORD_MINIO_BIN or pass --minio-bin")
		}
		dir = parent
	}
}

// startMinio starts bin serving dir on addr and waits until
// /minio/health/ready answers 200.
func startMinio(ctx context.Context, bin, dir, addr string, timeout time.Duration) (*minioServer, error) {
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("MinIO binary %s: %w (build it with scripts/s3-server.sh)", bin, err)
	}
	if err := portFree(addr); err != nil {
		return nil, fmt.Errorf("MinIO: %w", err)
	}
	m := &minioServer{addr: addr, dataDir: filepath.Join(dir, "data"), logPath: filepath.Join(dir, "minio.log"),
		done: make(chan struct{})}
	if err := os.MkdirAll(m.dataDir, 0o755); err != nil {
		return nil, fmt.Errorf("MinIO data dir: %w", err)
	}
	logf, err := os.Create(m.logPath)
	if err != nil {
		return nil, fmt.Errorf("MinIO log: %w", err)
	}
	defer logf.Close() // the child holds its own descriptor
	m.cmd = exec.Command(bin, "server", m.dataDir, "--address", addr, "--quiet")
	m.cmd.Env = append(os.Environ(),
		"MINIO_ROOT_USER="+minioUser, "MINIO_ROOT_PASSWORD="+minioPassword,
		"MINIO_BROWSER=off", "MINIO_UPDATE=off")
	m.cmd.Stdout, m.cmd.Stderr = logf, logf
	dieWithParent(m.cmd)
	if err := m.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start MinIO: %w", err)
	}
	go func() { m.waitErr = m.cmd.Wait(); close(m.done) }()

	cl := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(timeout)
	for {
		err := m.ready(ctx, cl)
		if err == nil {
			return m, nil
		}
		if aerr := m.alive(); aerr != nil {
			return nil, aerr
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			m.stop(5 * time.Second)
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("MinIO not ready on %s within %s (last: %v): %s", addr, timeout, err, logTail(m.logPath))
		}
		sleepCtx(ctx, 20*time.Millisecond) // polling readiness
	}
}

func (m *minioServer) ready(ctx context.Context, cl *http.Client) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.url()+"/minio/health/ready", nil)
	if err != nil {
		return err
	}
	resp, err := cl.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("health: %s", resp.Status)
	}
	return nil
}

func (m *minioServer) url() string { return "http://" + m.addr }

func (m *minioServer) pid() int { return m.cmd.Process.Pid }

// alive is nil while the process runs.
func (m *minioServer) alive() error {
	select {
	case <-m.done:
		return fmt.Errorf("MinIO exited (%v): %s", m.waitErr, logTail(m.logPath))
	default:
		return nil
	}
}

// stop sends SIGTERM and waits for the exit, then SIGKILL.
func (m *minioServer) stop(grace time.Duration) {
	select {
	case <-m.done:
		return
	default:
	}
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-m.done:
	case <-time.After(grace):
		_ = m.cmd.Process.Kill()
		<-m.done
	}
}

// minioVersion is the module version the binary was built from (what
// scripts/s3-server.sh pins), "" when it does not say.
func minioVersion(bin string) string {
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		return ""
	}
	return info.Main.Version
}
