package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/fjordhq/fjord/internal/testkit"
)

// recvlogical is one pg_recvlogical process streaming a pgoutput slot
// to its stdout, which the benchmark reads and walks message by message
// (pgoutputCounter) to know when the last row arrived. Writing into a
// pipe costs pg_recvlogical what writing into a file does: one write per
// message.
type recvlogical struct {
	cmd     *exec.Cmd
	stderr  bytes.Buffer
	kind    byte // the row message counted: 'I' or 'U'
	want    int64
	started time.Time
	cpu     *cpuSampler // the process's CPU time, stopped when it exits

	mu      sync.Mutex
	n       int64
	first   time.Time
	reached time.Time
	readErr error

	all      chan struct{} // closed when want rows arrived
	readDone chan struct{} // closed when the stream ended
	exited   chan struct{} // closed when the process exited
	waitErr  error
}

// startRecvlogical starts `pg_recvlogical --start` on slot (pgoutput,
// protocol version 1, publication pub), stopping by itself at endpos when
// that is set.
func startRecvlogical(pg *testkit.Postgres, db, slot, pub, endpos string, kind byte, want int64) (*recvlogical, error) {
	args := []string{
		"-d", fmt.Sprintf("host=%s port=%d user=%s dbname=%s", pg.Host, pg.Port, pg.User, db),
		"--start", "-S", slot, "--no-loop",
		"-o", "proto_version=1", "-o", "publication_names=" + pub,
		"-f", "-",
	}
	if endpos != "" {
		args = append(args, "--endpos", endpos)
	}
	cmd := exec.Command(pg.Program("pg_recvlogical"), args...)
	cmd.Env = append(os.Environ(), "PGPASSWORD="+testkit.PostgresPassword, "PGAPPNAME=fjord-bench")
	r := &recvlogical{cmd: cmd, kind: kind, want: want,
		all: make(chan struct{}), readDone: make(chan struct{}), exited: make(chan struct{})}
	cmd.Stderr = &r.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	dieWithParent(cmd)
	r.started = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start pg_recvlogical: %w", err)
	}
	r.cpu = startCPUSampler(cmd.Process.Pid, 10*time.Millisecond)
	go r.read(out)
	go func() {
		<-r.readDone // Wait closes the pipe: read it to its end first
		r.cpu.stop()
		r.waitErr = cmd.Wait()
		close(r.exited)
	}()
	return r, nil
}

func (r *recvlogical) read(out io.Reader) {
	defer close(r.readDone)
	c := newPgoutputCounter(out)
	closed := false
	for {
		typ, err := c.next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				r.mu.Lock()
				r.readErr = err
				r.mu.Unlock()
			}
			_, _ = io.Copy(io.Discard, out) // let the process exit
			return
		}
		if typ != r.kind {
			continue
		}
		now := time.Now()
		r.mu.Lock()
		r.n++
		if r.n == 1 {
			r.first = now
		}
		if r.n == r.want {
			r.reached = now
		}
		reached := r.n >= r.want
		r.mu.Unlock()
		if reached && !closed {
			closed = true
			close(r.all)
		}
	}
}

// await waits until every row arrived, the stream ended or timeout.
func (r *recvlogical) await(ctx context.Context, timeout time.Duration) error {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-r.all:
		return nil
	case <-r.readDone:
		select {
		case <-r.all:
			return nil
		default:
		}
		<-r.exited
		r.mu.Lock()
		defer r.mu.Unlock()
		return fmt.Errorf("pg_recvlogical ended after %d of %d rows (%v, read: %v): %s",
			r.n, r.want, r.waitErr, r.readErr, tail(r.stderr.Bytes(), 800))
	case <-t.C:
		r.mu.Lock()
		defer r.mu.Unlock()
		return fmt.Errorf("pg_recvlogical received %d of %d rows in %s", r.n, r.want, timeout)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stop ends the process (SIGTERM: pg_recvlogical confirms what it
// received and exits), SIGKILL after grace, and reports a stream that
// held more rows than loaded or did not parse.
func (r *recvlogical) stop(grace time.Duration) error {
	select {
	case <-r.exited:
	default:
		_ = r.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-r.exited:
		case <-time.After(grace):
			_ = r.cmd.Process.Kill()
			<-r.exited
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.readErr != nil {
		return fmt.Errorf("pg_recvlogical output: %w", r.readErr)
	}
	if r.n > r.want {
		return fmt.Errorf("pg_recvlogical received %d rows, %d were written", r.n, r.want)
	}
	return nil
}

// times returns when the first and the last row arrived.
func (r *recvlogical) times() (first, all time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.first, r.reached
}

// recvPhase is the pg_recvlogical baseline of a streaming phase, in two
// forms. Live: a pgoutput slot and its publication are created, the
// process starts and streams (the slot turns active), then the load runs;
// timed from its first statement to the last row received, which is what
// the connectors are timed on. Drain (the form): a fresh slot is
// created, the load runs with nobody streaming, and then
// `pg_recvlogical --endpos <LSN after the load>` reads it all; timed from
// the process's start to the last row received — how fast Postgres
// decodes and ships what the slot holds.
func (x *pgRun) recvPhase(ctx context.Context, phase string, drain bool) (PgSample, error) {
	cfg := x.cfg
	suffix := "pg"
	if drain {
		suffix = "pgd"
	}
	table := phaseTable(phase, suffix)
	slot, pub := x.slotName(phase, suffix), x.pubName(phase, suffix)
	load := x.load(phase, table)
	if err := x.prepareStreamTable(ctx, phase, table); err != nil {
		return PgSample{}, err
	}
	defer x.dropQuietly(table, slot, pub)
	if err := x.sess.exec(ctx, "CREATE PUBLICATION "+ident(pub)+" FOR TABLE "+ident(table),
		"SELECT pg_create_logical_replication_slot("+literal(slot)+", 'pgoutput')", "CHECKPOINT"); err != nil {
		return PgSample{}, err
	}
	loader, err := dialLoader(ctx, x.dsn())
	if err != nil {
		return PgSample{}, err
	}
	defer loader.close()
	kind := byte('I')
	if load.update {
		kind = 'U'
	}
	want := load.changes()
	s := PgSample{Phase: phase, Column: ColPgTool, Tool: "pg_recvlogical (live)", Rows: want}
	if drain {
		s.Column, s.Tool = ColDrain, "pg_recvlogical --endpos (drain)"
		x.settle(ctx)
		d, err := load.run(ctx, loader)
		if err != nil {
			return PgSample{}, err
		}
		s.LoadSeconds = d.Seconds()
		lsn, err := x.sess.flushedLSN(ctx)
		if err != nil {
			return PgSample{}, err
		}
		x.settle(ctx)
		rl, err := startRecvlogical(x.pg, x.db, slot, pub, lsn, kind, want)
		if err != nil {
			return PgSample{}, err
		}
		err = rl.await(ctx, cfg.PhaseTimeout)
		if err2 := rl.stop(10 * time.Second); err == nil {
			err = err2
		}
		if err != nil {
			return PgSample{}, err
		}
		first, all := rl.times()
		s.CPUSeconds = rl.cpu.between(rl.started, all).Seconds()
		return x.timed(s, rl.started, first, all), nil
	}
	rl, err := startRecvlogical(x.pg, x.db, slot, pub, "", kind, want)
	if err != nil {
		return PgSample{}, err
	}
	defer rl.stop(10 * time.Second)
	if err := x.sess.awaitSlotActive(ctx, slot, cfg.StartTimeout, func() error {
		select {
		case <-rl.exited:
			return fmt.Errorf("pg_recvlogical exited: %v: %s", rl.waitErr, tail(rl.stderr.Bytes(), 800))
		default:
			return nil
		}
	}); err != nil {
		return PgSample{}, err
	}
	x.settle(ctx, rl.cpu)
	start := time.Now()
	d, err := load.run(ctx, loader)
	if err != nil {
		return PgSample{}, err
	}
	s.LoadSeconds = d.Seconds()
	if err := rl.await(ctx, cfg.PhaseTimeout); err != nil {
		return PgSample{}, err
	}
	if err := rl.stop(10 * time.Second); err != nil {
		return PgSample{}, err
	}
	first, all := rl.times()
	s.CPUSeconds = rl.cpu.between(start, all).Seconds()
	return x.timed(s, start, first, all), nil
}

// timed fills a sample's times: from start to the first and the last row.
func (x *pgRun) timed(s PgSample, start, first, all time.Time) PgSample {
	secs := max(all.Sub(start).Seconds(), 1e-9)
	s.Run, s.Seconds, s.RowsPerSec = x.run, secs, float64(s.Rows)/secs
	s.FirstMs, s.AllMs = ms(first.Sub(start)), ms(all.Sub(start))
	return s
}

func phaseTable(phase, suffix string) string { return phase + "_" + suffix }

func (x *pgRun) slotName(phase, suffix string) string {
	return "bench_" + phase + "_" + suffix + "_r" + strconv.Itoa(x.run)
}

func (x *pgRun) pubName(phase, suffix string) string {
	return "bench_pub_" + phase + "_" + suffix + "_r" + strconv.Itoa(x.run)
}
