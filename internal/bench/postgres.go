package bench

// The Postgres benchmark (`fjord bench postgres`, postgres*.go) measures
// issue 5's connectors against what Postgres itself can do and against
// Debezium, all in one invocation on one Postgres 15 server
// (internal/testkit: fsync off, autovacuum off). Per run, in a fresh
// database, each target does the same jobs, one at a time:
//
//	insert    a connector streaming (snapshot.mode=no_data) while Rows
//	          rows are inserted, TxnRows per transaction; timed from the
//	          first INSERT to the last row visible in the topic
//	update    the same with UpdateRows rows updated Updates times each
//	snapshot  snapshot.mode=initial of a Rows-row table: timed from the
//	          connector's creation to the last op=r row in the topic
//	sink      Rows JSON records (JsonConverter with schemas) upserted
//	          from a topic into a table by the JDBC-compatible sink
//
// The targets: "pg" is what Postgres does alone — pg_recvlogical on a
// pgoutput slot, live during the same load and draining the load
// afterwards (--endpos); COPY TO STDOUT of the snapshot's table; COPY
// FROM STDIN of the sink's rows. "fjord" is `fjord dev` (broker and
// Connect worker in one process), "debezium" Debezium 3.6.1 on Kafka
// Connect 4.4 with an Apache Kafka 4.4 broker. Both Connect workers get
// the same connector JSON (Debezium's keys, JsonConverter) and the same
// worker settings as `fjord dev`'s; each phase uses a fresh table, slot,
// publication and topic. The first run reads every topic back and checks
// its events (op, one event per row change).

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/internal/testkit"
)

// Phases and targets of `fjord bench postgres`.
const (
	PgPhaseInsert   = "insert"
	PgPhaseUpdate   = "update"
	PgPhaseSnapshot = "snapshot"
	PgPhaseSink     = "sink"

	PgTargetPostgres = "pg"
	PgTargetFjord    = "fjord"
	PgTargetDebezium = "debezium"
)

// snapshotTable is the table every target snapshots (and COPY reads) in
// a run.
const snapshotTable = "snapshot_src"

// sinkTable is the table COPY fills and the sink upserts into.
const sinkTable = "sink_dst"

// PostgresBenchConfig is one `fjord bench postgres`.
type PostgresBenchConfig struct {
	Bin            string // the fjord binary run as `fjord dev`
	Addr, HTTPAddr string // fjord dev's Kafka and HTTP listeners

	KafkaScript    string // scripts/kafka.sh: Apache Kafka's jars
	DebeziumScript string // scripts/debezium-connect.sh: Debezium's jars, plugin path
	KafkaAddr      string // Apache Kafka (controller on the next port)
	ConnectAddr    string // Kafka Connect's REST listener
	// ConnectProps are worker properties over the generated ones (an
	// experiment, stated in the report).
	ConnectProps map[string]string

	Targets []string
	Phases  []string

	Rows       int // inserted rows; snapshot table rows; sink records
	UpdateRows int // rows of the update phase's table
	Updates    int // updates per row
	TxnRows    int // rows per load transaction
	Runs       int
	WarmupFrac float64 // the sink's first share of rows is not timed
	Verify     bool    // read the first run's topics back and check them

	Poll   time.Duration // topic end offsets
	DBPoll time.Duration // the sink's table

	Dir                                   string
	Keep                                  bool
	StartTimeout, PhaseTimeout, StopGrace time.Duration
	Log                                   *slog.Logger

	CommandLine, Note string
	Quick             bool
	RecordMachine     bool
}

func (c *PostgresBenchConfig) validate() error {
	switch {
	case c.Rows < 100:
		return fmt.Errorf("rows %d: want at least 100", c.Rows)
	case c.UpdateRows < 1 || c.Updates < 1:
		return fmt.Errorf("update phase %d rows × %d updates: want both ≥ 1", c.UpdateRows, c.Updates)
	case c.TxnRows < 1:
		return fmt.Errorf("rows per transaction %d: want ≥ 1", c.TxnRows)
	case c.Runs < 1:
		return fmt.Errorf("runs %d: want ≥ 1", c.Runs)
	case c.WarmupFrac < 0 || c.WarmupFrac >= 0.9:
		return fmt.Errorf("warm-up fraction %g: want 0 ≤ f < 0.9", c.WarmupFrac)
	case c.Poll <= 0 || c.DBPoll <= 0:
		return errors.New("poll intervals must be > 0")
	case len(c.Targets) == 0:
		return errors.New("no targets")
	case len(c.Phases) == 0:
		return errors.New("no phases")
	case c.Dir == "":
		return errors.New("no data dir")
	}
	for _, t := range c.Targets {
		if !slices.Contains([]string{PgTargetPostgres, PgTargetFjord, PgTargetDebezium}, t) {
			return fmt.Errorf("target %q: want pg, fjord or debezium", t)
		}
	}
	for _, p := range c.Phases {
		if !slices.Contains([]string{PgPhaseInsert, PgPhaseUpdate, PgPhaseSnapshot, PgPhaseSink}, p) {
			return fmt.Errorf("phase %q: want insert, update, snapshot or sink", p)
		}
	}
	return nil
}

func (c *PostgresBenchConfig) has(phase string) bool { return slices.Contains(c.Phases, phase) }

// postgresServerSettings keep WAL and background work out of the
// measurements: no checkpoint on WAL volume or timeout inside a phase
// (each phase starts with an explicit CHECKPOINT), no autovacuum.
var postgresServerSettings = map[string]string{
	"max_wal_size":       "16GB",
	"checkpoint_timeout": "1h",
	"autovacuum":         "off",
}

// RunPostgresBench runs the benchmark. A phase that fails is reported
// with its error and the others still run.
func RunPostgresBench(ctx context.Context, cfg PostgresBenchConfig) (*PostgresReport, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	rep := &PostgresReport{
		Command: cfg.CommandLine, Date: time.Now().UTC(), Runs: cfg.Runs, Quick: cfg.Quick, Note: cfg.Note,
		Rows: cfg.Rows, UpdateRows: cfg.UpdateRows, Updates: cfg.Updates, TxnRows: cfg.TxnRows,
		Targets: cfg.Targets, Phases: cfg.Phases, WarmupFrac: cfg.WarmupFrac,
		PollMs: ms(cfg.Poll), DBPollMs: ms(cfg.DBPoll), ConnectProps: cfg.ConnectProps,
	}
	if cfg.RecordMachine {
		rep.Machine = ReadMachine(nil)
	}
	cfg.Log.Info("starting PostgreSQL 15")
	pg, err := testkit.NewPostgres(testkit.PostgresOptions{Settings: postgresServerSettings})
	if err != nil {
		return nil, err
	}
	defer pg.Close()
	rep.Postgres = postgresVersion(ctx, pg)

	var dbz *debeziumStack
	if slices.Contains(cfg.Targets, PgTargetDebezium) {
		cfg.Log.Info("starting Apache Kafka 4.4 and Kafka Connect 4.4 with Debezium 3.6.1")
		dbz, err = startDebeziumStack(ctx, &cfg, filepath.Join(cfg.Dir, "debezium"))
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			rep.Errors = append(rep.Errors, fmt.Sprintf("Debezium: %v", err))
			cfg.Log.Error("Debezium stack failed; measuring without it", "err", err)
		} else {
			defer dbz.stop(cfg.StopGrace)
			rep.Machine.Java = dbz.java
		}
	}
	for run := 1; run <= cfg.Runs; run++ {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		cfg.Log.Info("postgres benchmark", "run", run, "of", cfg.Runs, "rows", cfg.Rows)
		x := &pgRun{cfg: &cfg, run: run, rep: rep, pg: pg, db: fmt.Sprintf("bench_r%d", run)}
		if dbz != nil {
			x.background = dbz.samplers()
		}
		if err := x.execute(ctx, dbz); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			x.fail("run", err)
		}
	}
	rep.build()
	return rep, nil
}

func postgresVersion(ctx context.Context, pg *testkit.Postgres) string {
	s, err := dialPG(ctx, pg.DSN("postgres"))
	if err != nil {
		return ""
	}
	defer s.close()
	var v string
	_ = s.conn.QueryRow(ctx, "SHOW server_version").Scan(&v)
	return v
}

// pgRun is one run: one database, each target in turn.
type pgRun struct {
	cfg  *PostgresBenchConfig
	run  int
	rep  *PostgresReport
	pg   *testkit.Postgres
	db   string
	sess *pgSession // the benchmark's own connection to db
	// background are processes that run beside every phase and must be
	// idle when one starts: the Debezium stack's JVMs.
	background []*cpuSampler
}

// settle waits until the benchmark's processes besides Postgres (the
// background ones and those given: the phase's own worker) are idle —
// together under a tenth of a core over a quarter second — at most 15 s,
// so that a phase does not measure what the previous one left running
// (a stopping task, JIT compilation, garbage collection).
func (x *pgRun) settle(ctx context.Context, own ...*cpuSampler) {
	var procs []*cpuSampler
	for _, p := range append(append([]*cpuSampler{}, x.background...), own...) {
		if p != nil && !slices.Contains(procs, p) {
			procs = append(procs, p)
		}
	}
	if len(procs) == 0 {
		return
	}
	const window = 250 * time.Millisecond
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		from := time.Now()
		if !sleepCtx(ctx, window) {
			return
		}
		var used time.Duration
		for _, p := range procs {
			used += p.between(from, time.Now())
		}
		if used < window/10 {
			return
		}
	}
	x.cfg.Log.Warn("benchmark processes still busy before the next phase; measuring anyway")
}

func (x *pgRun) dsn() string { return x.pg.DSN(x.db) }

// fail records a phase's (or a target's) failure and goes on.
func (x *pgRun) fail(what string, err error) {
	x.cfg.Log.Error("failed", "run", x.run, "what", what, "err", err)
	x.rep.Errors = append(x.rep.Errors, fmt.Sprintf("run %d: %s: %v", x.run, what, err))
}

func (x *pgRun) record(s PgSample, err error, what string) {
	if err != nil {
		x.fail(what, err)
		return
	}
	s.Run = x.run
	x.rep.Samples = append(x.rep.Samples, s)
	x.cfg.Log.Info("measured", "run", x.run, "phase", s.Phase, "column", s.Column, "tool", s.Tool,
		"rows", s.Rows, "rows/s", int64(s.RowsPerSec), "seconds", round2(s.Seconds))
}

func (x *pgRun) execute(ctx context.Context, dbz *debeziumStack) error {
	admin, err := dialPG(ctx, x.pg.DSN("postgres"))
	if err != nil {
		return err
	}
	defer admin.close()
	if err := admin.exec(ctx, "DROP DATABASE IF EXISTS "+ident(x.db)+" WITH (FORCE)", "CREATE DATABASE "+ident(x.db)); err != nil {
		return err
	}
	defer func() {
		// Slots were dropped by each phase; FORCE ends stray sessions.
		if err := admin.exec(context.Background(), "DROP DATABASE IF EXISTS "+ident(x.db)+" WITH (FORCE)"); err != nil {
			x.cfg.Log.Warn("could not drop the run's database", "err", err)
		}
	}()
	if x.sess, err = dialPG(ctx, x.dsn()); err != nil {
		return err
	}
	defer x.sess.close()
	if x.cfg.has(PgPhaseSnapshot) {
		x.cfg.Log.Info("creating the snapshot table", "rows", x.cfg.Rows)
		if err := x.sess.createBenchTable(ctx, snapshotTable, x.cfg.Rows); err != nil {
			return err
		}
	}
	if x.cfg.has(PgPhaseSink) {
		if err := x.sess.exec(ctx, "CREATE TABLE "+ident(sinkTable)+" ("+sinkTableColumns+") WITH (autovacuum_enabled = false)"); err != nil {
			return err
		}
	}
	for _, target := range x.cfg.Targets {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		switch target {
		case PgTargetPostgres:
			x.postgresPhases(ctx)
		case PgTargetFjord:
			if err := x.fjordPhases(ctx); err != nil {
				x.fail("fjord", err)
			}
		case PgTargetDebezium:
			if dbz != nil {
				x.cdcPhases(ctx, dbz.target)
			}
		}
	}
	return nil
}

// postgresPhases measures what Postgres does alone.
func (x *pgRun) postgresPhases(ctx context.Context) {
	for _, phase := range x.cfg.Phases {
		if ctx.Err() != nil {
			return
		}
		switch phase {
		case PgPhaseInsert, PgPhaseUpdate:
			s, err := x.recvPhase(ctx, phase, false)
			x.record(s, err, "pg_recvlogical live "+phase)
			s, err = x.recvPhase(ctx, phase, true)
			x.record(s, err, "pg_recvlogical drain "+phase)
		case PgPhaseSnapshot:
			s, err := x.copyOutPhase(ctx)
			x.record(s, err, "COPY TO")
		case PgPhaseSink:
			s, err := x.copyInPhase(ctx)
			x.record(s, err, "COPY FROM")
		}
	}
}

func (x *pgRun) copyOutPhase(ctx context.Context) (PgSample, error) {
	if err := x.sess.exec(ctx, "CHECKPOINT"); err != nil {
		return PgSample{}, err
	}
	x.settle(ctx)
	d, err := x.sess.copyOut(ctx, snapshotTable)
	if err != nil {
		return PgSample{}, err
	}
	start := time.Now()
	return x.timed(PgSample{Phase: PgPhaseSnapshot, Column: ColPgTool, Tool: "COPY TO STDOUT", Rows: int64(x.cfg.Rows)},
		start, start, start.Add(d)), nil
}

func (x *pgRun) copyInPhase(ctx context.Context) (PgSample, error) {
	if err := x.sess.exec(ctx, "TRUNCATE "+ident(sinkTable), "CHECKPOINT"); err != nil {
		return PgSample{}, err
	}
	x.settle(ctx)
	d, err := x.sess.copyIn(ctx, sinkTable, x.cfg.Rows)
	if err != nil {
		return PgSample{}, err
	}
	if err := x.checkSinkTable(ctx); err != nil {
		return PgSample{}, fmt.Errorf("after COPY: %w", err)
	}
	if err := x.sess.exec(ctx, "TRUNCATE "+ident(sinkTable)); err != nil {
		return PgSample{}, err
	}
	start := time.Now()
	return x.timed(PgSample{Phase: PgPhaseSink, Column: ColPgTool, Tool: "COPY FROM STDIN", Rows: int64(x.cfg.Rows)},
		start, start, start.Add(d)), nil
}

func (x *pgRun) checkSinkTable(ctx context.Context) error {
	got, err := x.sess.tableChecksum(ctx, sinkTable)
	if err != nil {
		return err
	}
	if want := sinkChecksum(int64(x.cfg.Rows)); got != want {
		return fmt.Errorf("%s holds (rows, Σid, Σquantity, paid) = %v, want %v", sinkTable, got, want)
	}
	return nil
}

// fjordPhases starts a fresh fjord dev for the run and runs its phases.
func (x *pgRun) fjordPhases(ctx context.Context) error {
	cfg := x.cfg
	dir := filepath.Join(cfg.Dir, fmt.Sprintf("fjord-run%d", x.run))
	if !cfg.Keep {
		defer os.RemoveAll(dir)
	}
	dev, err := startTarget(ctx, &fjordTarget{bin: cfg.Bin, addr: cfg.Addr, httpAddr: cfg.HTTPAddr}, dir, cfg.StartTimeout)
	if err != nil {
		return err
	}
	defer dev.stop(cfg.StopGrace)
	rest := &connectRun{cfg: &ConnectConfig{StartTimeout: cfg.StartTimeout, Log: cfg.Log}, run: x.run, dev: dev,
		http: &http.Client{Timeout: 30 * time.Second}, base: "http://" + cfg.HTTPAddr}
	if err := rest.awaitConnect(ctx); err != nil {
		return err
	}
	rest.cpu = startCPUSampler(dev.pid(), 10*time.Millisecond)
	defer rest.cpu.stop()
	cl, err := kgo.NewClient(kgo.SeedBrokers(cfg.Addr))
	if err != nil {
		return err
	}
	defer cl.Close()
	plugins := map[string]bool{}
	for _, class := range []string{CDCConnectorClass, SinkConnectorClass} {
		if plugins[class], err = rest.hasPlugin(ctx, class); err != nil {
			return err
		}
	}
	x.rep.FjordPlugins = plugins
	cfg.Log.Info("fjord dev serving Connect", "pid", dev.pid(), "cdc", plugins[CDCConnectorClass], "sink", plugins[SinkConnectorClass])
	t := &cdcTarget{column: ColFjord, rest: rest, addr: cfg.Addr, adm: kadm.NewClient(cl), alive: rest.devAlive,
		procs: []*cpuSampler{rest.cpu}}
	missing := func(class string) error {
		return fmt.Errorf("fjord dev has no %s (GET /connector-plugins/%s/config: 404)", class, class)
	}
	for _, phase := range cfg.Phases {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		what := "fjord " + phase
		switch {
		case phase == PgPhaseSink && !plugins[SinkConnectorClass]:
			x.fail(what, missing(SinkConnectorClass))
		case phase == PgPhaseSink:
			s, err := x.sinkPhase(ctx, t)
			x.record(s, err, what)
		case !plugins[CDCConnectorClass]:
			x.fail(what, missing(CDCConnectorClass))
		default:
			s, err := x.cdcPhase(ctx, t, phase)
			x.record(s, err, what)
		}
	}
	return nil
}

// cdcPhases runs the CDC phases on a long-lived target (Debezium's).
func (x *pgRun) cdcPhases(ctx context.Context, t *cdcTarget) {
	for _, phase := range x.cfg.Phases {
		if ctx.Err() != nil || phase == PgPhaseSink {
			continue // the sink is Fjord's against COPY only
		}
		s, err := x.cdcPhase(ctx, t, phase)
		x.record(s, err, t.column+" "+phase)
	}
}

// load is the write load of a streaming phase on table.
func (x *pgRun) load(phase, table string) pgLoad {
	if phase == PgPhaseUpdate {
		return pgLoad{table: table, update: true, rows: int64(x.cfg.UpdateRows), passes: x.cfg.Updates, txnRows: int64(x.cfg.TxnRows)}
	}
	return pgLoad{table: table, rows: int64(x.cfg.Rows), txnRows: int64(x.cfg.TxnRows)}
}

// prepareStreamTable creates a streaming phase's table: empty for
// inserts, holding the rows to update for updates (loaded before any
// slot exists, so that only the updates are streamed).
func (x *pgRun) prepareStreamTable(ctx context.Context, phase, table string) error {
	n := 0
	if phase == PgPhaseUpdate {
		n = x.cfg.UpdateRows
	}
	return x.sess.createBenchTable(ctx, table, n)
}

// dropQuietly removes what a phase created, in order: the slot (once its
// consumer let go), the publication, the table.
func (x *pgRun) dropQuietly(table, slot, pub string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := x.sess.dropSlot(ctx, slot); err != nil {
		x.cfg.Log.Warn("could not drop slot", "slot", slot, "err", err)
	}
	stmts := []string{"DROP PUBLICATION IF EXISTS " + ident(pub)}
	if table != "" {
		stmts = append(stmts, "DROP TABLE IF EXISTS "+ident(table))
	}
	if err := x.sess.exec(ctx, stmts...); err != nil {
		x.cfg.Log.Warn("could not clean up", "err", err)
	}
}
