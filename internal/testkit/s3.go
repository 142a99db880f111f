package testkit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
)

// S3Server is a real MinIO server on loopback for one test: its own data
// directory, random root credentials, free ports. Stop and Start take it
// down and bring it back on the same address with the same data, for
// outage tests.
type S3Server struct {
	Endpoint  string // http://127.0.0.1:port
	AccessKey string
	SecretKey string
	// Region is what clients sign for; the server is left without a
	// region so it accepts any (a connector's default us-west-2 too).
	Region string // us-east-1
	Dir    string // data directory

	t           testing.TB
	bin         string
	addr        string
	consoleAddr string
	logPath     string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	log  *os.File
}

// minioBinary is where scripts/s3-server.sh builds MinIO, relative to the
// repository root; FJORD_MINIO_BIN overrides it.
const minioBinary = ".cache/bin/minio"

// StartS3 starts a MinIO server for t and kills it when t ends. A missing
// binary fails the test: `make test` builds it, tests never skip.
func StartS3(t testing.TB) *S3Server {
	t.Helper()
	bin := os.Getenv("FJORD_MINIO_BIN")
	if bin == "" {
		bin = filepath.Join(repoRootFromCwd(t), minioBinary)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("no MinIO server binary at %s (%v): run scripts/s3-server.sh (make test does)", bin, err)
	}
	s := &S3Server{
		AccessKey: "fjord-" + randomHex(t, 6),
		SecretKey: randomHex(t, 20),
		Region:    "us-east-1",
		t:         t,
		bin:       bin,
	}
	s.Dir = filepath.Join(t.TempDir(), "data")
	s.logPath = filepath.Join(filepath.Dir(s.Dir), "minio.log")
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			t.Logf("minio log (tail):\n%s", s.logTail(4000))
		}
	})
	// Another process may take a free port between finding it and MinIO
	// binding it: try fresh ports a few times.
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		s.addr, s.consoleAddr = FreeAddr(t), FreeAddr(t)
		s.Endpoint = "http://" + s.addr
		if err = s.start(); err == nil {
			return s
		}
	}
	t.Fatalf("minio: %v", err)
	return nil
}

// Start starts the server again after Stop, on the same address and data
// directory, and waits until it is ready. It does nothing if the server
// runs.
func (s *S3Server) Start() {
	s.t.Helper()
	if s.running() {
		return
	}
	if err := s.start(); err != nil {
		s.t.Fatalf("minio restart: %v", err)
	}
}

// Stop kills the server (SIGKILL to its process group: an outage, not a
// shutdown) and waits for it to exit. The data stays for Start.
func (s *S3Server) Stop() {
	s.mu.Lock()
	cmd, done, logf := s.cmd, s.done, s.log
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-done
	logf.Close()
}

func (s *S3Server) running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd != nil
}

func (s *S3Server) start() error {
	logf, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(logf, "--- start %s ---\n", time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(s.bin, "server", s.Dir, "--address", s.addr, "--console-address", s.consoleAddr, "--quiet")
	cmd.Env = append(os.Environ(),
		"MINIO_ROOT_USER="+s.AccessKey,
		"MINIO_ROOT_PASSWORD="+s.SecretKey,
		"MINIO_BROWSER=off",
		"MINIO_UPDATE=off",
		// Tests run on a developer's machine: no drive/ulimit checks
		// meant for production deployments.
		"MINIO_CI_CD=1",
		// MinIO sizes its request pool and caches from the machine's
		// memory; a test server stays small (GOMEMLIMIT and a request
		// cap well above what a test sends at once).
		"MINIO_MEMLIMIT=1GiB",
		"MINIO_API_REQUESTS_MAX=256",
		// The background scanner (usage, lifecycle, healing) is idle
		// work a test server does not need.
		"MINIO_SCANNER_SPEED=slowest",
	)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start %s: %w", s.bin, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	s.mu.Lock()
	s.cmd, s.done, s.log = cmd, done, logf
	s.mu.Unlock()
	deadline := time.Now().Add(30 * time.Second)
	client := &http.Client{Timeout: time.Second}
	for time.Now().Before(deadline) {
		select {
		case <-done:
			s.mu.Lock()
			s.cmd = nil
			s.mu.Unlock()
			logf.Close()
			return fmt.Errorf("minio exited at start-up:\n%s", s.logTail(4000))
		default:
		}
		resp, err := client.Get(s.Endpoint + "/minio/health/ready")
		if err == nil {
			resp.Body.Close()
			// Ready can answer before the object layer is up (requests then
			// get XMinioServerNotInitialized): wait for a real S3 call too.
			if resp.StatusCode == http.StatusOK && s.answers() {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.Stop()
	return fmt.Errorf("minio not ready within 30s:\n%s", s.logTail(4000))
}

// answers reports whether an authenticated ListBuckets succeeds.
func (s *S3Server) answers() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := s.client().ListBuckets(ctx, &s3.ListBucketsInput{})
	return err == nil
}

// Client returns an S3 client for the server (root credentials, path
// style).
func (s *S3Server) Client(t testing.TB) *s3.Client {
	t.Helper()
	return s.client()
}

func (s *S3Server) client() *s3.Client {
	return s3.New(s3.Options{
		Region:       s.Region,
		BaseEndpoint: aws.String(s.Endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(s.AccessKey, s.SecretKey, ""),
	})
}

// CreateBucket creates bucket name (an existing one is fine).
func (s *S3Server) CreateBucket(t testing.TB, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := s.Client(t).CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)})
	var ae smithy.APIError
	if err != nil && !(errors.As(err, &ae) && ae.ErrorCode() == "BucketAlreadyOwnedByYou") {
		t.Fatalf("minio: create bucket %s: %v", name, err)
	}
}

// Props are the S3 connector keys that reach bucket on this server.
func (s *S3Server) Props(bucket string) map[string]string {
	return map[string]string{
		"s3.bucket.name":               bucket,
		"s3.region":                    s.Region,
		"store.url":                    s.Endpoint,
		"s3.path.style.access.enabled": "true",
		"aws.access.key.id":            s.AccessKey,
		"aws.secret.access.key":        s.SecretKey,
	}
}

// Port returns the server's port.
func (s *S3Server) Port() int {
	_, p, _ := strings.Cut(s.addr, ":")
	n, _ := strconv.Atoi(p)
	return n
}

func (s *S3Server) logTail(n int) string {
	b, _ := os.ReadFile(s.logPath)
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// repoRootFromCwd is the nearest directory at or above the working
// directory (a test's package directory) holding go.mod.
func repoRootFromCwd(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		return RepoRoot(t)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return RepoRoot(t)
		}
		dir = parent
	}
}

func randomHex(t testing.TB, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
