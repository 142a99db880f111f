package testkit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// PostgresBinDir is where Debian's postgresql-15 package puts the server
// binaries (make deps installs it). FJORD_PG_BIN overrides it.
const PostgresBinDir = "/usr/lib/postgresql/15/bin"

// PostgresPassword is the superuser's password in every test server:
// host connections authenticate with scram-sha-256, so a wrong password
// fails as it would in production.
const PostgresPassword = "fjord"

// Postgres is a real PostgreSQL 15 server on loopback for one test (or one
// benchmark): initdb in a fresh directory, run as the `postgres` OS user
// when the test runs as root (Postgres refuses to run as root),
// wal_level=logical, a free port. Nothing is shared between servers.
type Postgres struct {
	Dir  string // data directory
	Host string // 127.0.0.1
	Port int
	User string // the superuser, "postgres"
	Bin  string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	log  *os.File
}

// PostgresOptions tunes a test server.
type PostgresOptions struct {
	// Settings are extra `-c name=value` server settings (they win over
	// the defaults).
	Settings map[string]string
}

// StartPostgres starts a server for t and stops it when t ends. A missing
// Postgres installation fails the test: tests that need Postgres never
// skip.
func StartPostgres(t testing.TB, opts ...PostgresOptions) *Postgres {
	t.Helper()
	var o PostgresOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	p, err := NewPostgres(o)
	if err != nil {
		t.Fatalf("postgres: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}

// NewPostgres starts a server outside a test (benchmarks); Close stops it
// and removes its directory.
func NewPostgres(o PostgresOptions) (*Postgres, error) {
	bin := os.Getenv("FJORD_PG_BIN")
	if bin == "" {
		bin = PostgresBinDir
	}
	if _, err := os.Stat(filepath.Join(bin, "postgres")); err != nil {
		return nil, fmt.Errorf("no PostgreSQL server binaries in %s (%v): install postgresql-15 (`make deps` does) or set FJORD_PG_BIN", bin, err)
	}
	dir, err := os.MkdirTemp("", "fjord-pg-")
	if err != nil {
		return nil, err
	}
	p := &Postgres{Dir: dir, Host: "127.0.0.1", User: "postgres", Bin: bin}
	cred, err := postgresCredential()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if cred != nil {
		// The OS user must own the data directory and reach it.
		if err := os.Chmod(dir, 0o700); err == nil {
			err = os.Chown(dir, int(cred.Uid), int(cred.Gid))
		}
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	pw := filepath.Join(dir, "pwfile")
	if err := os.WriteFile(pw, []byte(PostgresPassword+"\n"), 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if cred != nil {
		os.Chown(pw, int(cred.Uid), int(cred.Gid))
	}
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--pwfile", pw,
		"--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C", "-N")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	initdb.Dir = dir
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	settings := map[string]string{
		"wal_level":               "logical",
		"max_replication_slots":   "20",
		"max_wal_senders":         "20",
		"listen_addresses":        "127.0.0.1",
		"unix_socket_directories": dir,
		"fsync":                   "off", // the tests kill workers, never the server
		"synchronous_commit":      "off",
		"full_page_writes":        "off",
		"shared_buffers":          "128MB",
		"max_connections":         "100",
		"wal_sender_timeout":      "60s",
	}
	for k, v := range o.Settings {
		settings[k] = v
	}
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := freeLoopbackPort()
		if err != nil {
			return nil, err
		}
		settings["port"] = strconv.Itoa(port)
		p.Port = port
		if lastErr = p.start(data, settings, cred); lastErr == nil {
			return p, nil
		}
	}
	os.RemoveAll(dir)
	return nil, lastErr
}

func (p *Postgres) start(data string, settings map[string]string, cred *syscall.Credential) error {
	args := []string{"-D", data}
	for k, v := range settings {
		args = append(args, "-c", k+"="+v)
	}
	logf, err := os.Create(filepath.Join(p.Dir, "postgres.log"))
	if err != nil {
		return err
	}
	cmd := exec.Command(filepath.Join(p.Bin, "postgres"), args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = p.Dir
	if err := cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	p.mu.Lock()
	p.cmd, p.done, p.log = cmd, done, logf
	p.mu.Unlock()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			logf.Close()
			out, _ := os.ReadFile(logf.Name())
			return fmt.Errorf("postgres exited at start-up:\n%s", out)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		c, err := pgx.Connect(ctx, p.DSN("postgres"))
		cancel()
		if err == nil {
			c.Close(context.Background())
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.stop()
	return errors.New("postgres did not accept connections within 30s")
}

// DSN is a connection URL for database db as the superuser.
func (p *Postgres) DSN(db string) string {
	return fmt.Sprintf("postgres://%s:%s@%s:%d/%s?sslmode=disable", p.User, PostgresPassword, p.Host, p.Port, db)
}

// JDBCURL is the database's URL as JDBC connectors write it.
func (p *Postgres) JDBCURL(db string) string {
	return fmt.Sprintf("jdbc:postgresql://%s:%d/%s", p.Host, p.Port, db)
}

// Connect opens a connection to db for the test.
func (p *Postgres) Connect(t testing.TB, db string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, p.DSN(db))
	if err != nil {
		t.Fatalf("connect to postgres %s: %v", db, err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// Exec runs statements in db (each one separately, in order) and fails t
// on the first error.
func (p *Postgres) Exec(t testing.TB, db string, stmts ...string) {
	t.Helper()
	if err := p.ExecErr(db, stmts...); err != nil {
		t.Fatal(err)
	}
}

// ExecErr runs statements in db, returning the first error.
func (p *Postgres) ExecErr(db string, stmts ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, p.DSN(db))
	if err != nil {
		return fmt.Errorf("connect to postgres %s: %w", db, err)
	}
	defer c.Close(context.Background())
	for _, s := range stmts {
		if _, err := c.Exec(ctx, s); err != nil {
			return fmt.Errorf("postgres %s: %s: %w", db, firstLine(s), err)
		}
	}
	return nil
}

// CreateDatabase creates database name.
func (p *Postgres) CreateDatabase(t testing.TB, name string) {
	t.Helper()
	p.Exec(t, "postgres", "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
}

// Program returns the path of a Postgres client program (psql, pgbench,
// pg_recvlogical) of the server's installation.
func (p *Postgres) Program(name string) string { return filepath.Join(p.Bin, name) }

// Close stops the server (fast shutdown) and removes its directory.
func (p *Postgres) Close() {
	p.stop()
	os.RemoveAll(p.Dir)
}

func (p *Postgres) stop() {
	p.mu.Lock()
	cmd, done, logf := p.cmd, p.done, p.log
	p.cmd = nil
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Signal(syscall.SIGINT) // fast shutdown
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	logf.Close()
}

// Log returns the server's log so far (for failure messages).
func (p *Postgres) Log() string {
	b, _ := os.ReadFile(filepath.Join(p.Dir, "postgres.log"))
	return string(b)
}

// postgresCredential is the `postgres` OS user's credential when running
// as root (Postgres refuses root), nil otherwise (run as ourselves).
func postgresCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root needs the `postgres` OS user to run PostgreSQL (install postgresql-15): %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func freeLoopbackPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " ..."
	}
	if len(s) > 120 {
		s = s[:120] + "..."
	}
	return s
}

// SkipShort skips a slow test in `go test -short` (the inner loop). In CI
// (CI=true) nothing may skip: a slow test asked to skip there fails, so a
// part CI has is never silently left untested.
func SkipShort(t testing.TB, what string) {
	t.Helper()
	if !testing.Short() {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s must run in CI: do not pass -short", what)
	}
	t.Skip(what + " (skipped with -short)")
}
