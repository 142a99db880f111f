package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/internal/testkit"
)

// TestQuickPostgresBench is the end-to-end smoke test of `fjord bench
// postgres --quick`: a real Postgres, a real `fjord dev` (built from
// cmd/fjord), real pg_recvlogical processes. Every Postgres-tool figure
// must be measured. The Fjord figures must be measured whenever fjord dev
// has the connector class (GET /connector-plugins); until then the phase
// must fail saying that class is missing, and nothing else may fail.
// With FJORD_KAFKA_TESTS=1 Debezium 3.6 on Kafka Connect 4.4 runs too and
// must be measured. --write must add the Postgres block to BENCHMARKS.md
// without touching the other blocks.
func TestQuickPostgresBench(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Postgres, fjord dev and pg_recvlogical for ~20 s; run without -short")
	}
	bin := testkit.FjordBinary(t)
	root := testkit.RepoRoot(t)
	dir := t.TempDir()
	benchFile := filepath.Join(dir, "BENCHMARKS.md")
	others := "# Benchmarks\n\npreamble\n\n" + beginMarker + "\nbroker table\n" + endMarker + "\n\n" +
		connectBeginMarker + "\nconnect table\n" + connectEndMarker + "\n\n" +
		clusterBeginMarker + "\ncluster table\n" + clusterEndMarker + "\n"
	if err := os.WriteFile(benchFile, []byte(others), 0o644); err != nil {
		t.Fatal(err)
	}
	targets := "pg,fjord"
	kafka := os.Getenv("FJORD_KAFKA_TESTS") != ""
	if kafka {
		targets += ",debezium"
	}
	jsonFile := filepath.Join(dir, "report.json")
	cmd := NewCommand(testSelf(t), []string{childEnv, childGORACE})
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"postgres", "--quick", "--targets", targets,
		"--fjord-bin", bin,
		"--fjord-port", freePort(t), "--fjord-http-port", freePort(t),
		"--kafka-port", strconv.Itoa(freePortPair(t)), "--connect-port", freePort(t),
		"--kafka-script", filepath.Join(root, "scripts", "kafka.sh"),
		"--debezium-script", filepath.Join(root, "scripts", "debezium-connect.sh"),
		"--dir", filepath.Join(dir, "data"),
		"--write", "--benchmarks-file", benchFile,
		"--json", jsonFile,
	})
	start := time.Now()
	if err := cmd.Execute(); err != nil {
		t.Fatalf("bench postgres: %v\n%s", err, out.String())
	}
	md := out.String()
	t.Logf("took %s\n%s", time.Since(start).Round(time.Millisecond), md)

	var rep PostgresReport
	b, err := os.ReadFile(jsonFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.FjordPlugins == nil {
		t.Fatal("the report does not say which connector classes fjord dev had")
	}
	hasCDC, hasSink := rep.FjordPlugins[CDCConnectorClass], rep.FjordPlugins[SinkConnectorClass]
	for _, e := range rep.Errors {
		missingCDC := !hasCDC && strings.Contains(e, "fjord dev has no "+CDCConnectorClass)
		missingSink := !hasSink && strings.Contains(e, "fjord dev has no "+SinkConnectorClass)
		if !missingCDC && !missingSink {
			t.Errorf("failed: %s", e)
		}
	}
	sample := func(phase, col string) (PgSample, bool) {
		for _, s := range rep.Samples {
			if s.Phase == phase && s.Column == col {
				return s, true
			}
		}
		return PgSample{}, false
	}
	want := map[string]int64{PgPhaseInsert: QuickPostgresRows, PgPhaseUpdate: QuickPostgresUpdateRows * 10,
		PgPhaseSnapshot: QuickPostgresRows}
	type expect struct {
		phase, col string
	}
	var expected []expect
	for _, p := range []string{PgPhaseInsert, PgPhaseUpdate} {
		expected = append(expected, expect{p, ColPgTool}, expect{p, ColDrain})
	}
	expected = append(expected, expect{PgPhaseSnapshot, ColPgTool}, expect{PgPhaseSink, ColPgTool})
	var cdcCols []string
	if hasCDC {
		cdcCols = append(cdcCols, ColFjord)
	}
	if kafka {
		cdcCols = append(cdcCols, ColDebezium)
	}
	for _, col := range cdcCols {
		for _, p := range []string{PgPhaseInsert, PgPhaseUpdate, PgPhaseSnapshot} {
			expected = append(expected, expect{p, col})
		}
	}
	if hasSink {
		expected = append(expected, expect{PgPhaseSink, ColFjord})
	}
	for _, e := range expected {
		s, ok := sample(e.phase, e.col)
		if !ok {
			t.Errorf("%s %s not measured", e.col, e.phase)
			continue
		}
		if s.RowsPerSec <= 0 || s.Seconds <= 0 || s.Rows <= 0 {
			t.Errorf("%s %s measured nothing: %+v", e.col, e.phase, s)
		}
		if n, ok := want[e.phase]; ok && s.Rows != n {
			t.Errorf("%s %s timed %d rows, want %d", e.col, e.phase, s.Rows, n)
		}
		if e.phase == PgPhaseInsert || e.phase == PgPhaseUpdate {
			if s.LoadSeconds <= 0 || s.FirstMs <= 0 || s.AllMs < s.FirstMs {
				t.Errorf("%s %s: load %.3f s, first row %.1f ms, last %.1f ms", e.col, e.phase, s.LoadSeconds, s.FirstMs, s.AllMs)
			}
		}
	}
	// Every CDC topic of the first run was read back and checked.
	if got, wantN := len(rep.Verified), 3*len(cdcCols); got != wantN {
		t.Errorf("verified %d topics (%v), want %d", got, rep.Verified, wantN)
	}

	var rows int
	for _, line := range strings.Split(md, "\n") {
		if strings.Count(line, "|") == 8 && !strings.HasPrefix(line, "| Figure") && !strings.HasPrefix(line, "|---") {
			rows++
		}
	}
	if rows != len(pgRowSpecs) {
		t.Errorf("table has %d rows, want %d", rows, len(pgRowSpecs))
	}
	if !strings.Contains(md, "Goals (issue 5): ") {
		t.Error("goal line missing")
	}
	doc, err := os.ReadFile(benchFile)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(doc); !strings.HasPrefix(s, others) ||
		!strings.Contains(s, postgresBeginMarker+"\n## Postgres CDC source and sink") || !strings.HasSuffix(s, postgresEndMarker+"\n") {
		t.Errorf("BENCHMARKS.md not updated as expected:\n%s", s)
	}
}

// freePortPair finds a port p with p and p+1 free (Kafka and its
// controller).
func freePortPair(t *testing.T) int {
	t.Helper()
	for range 50 {
		p, _ := strconv.Atoi(freePort(t))
		if ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p+1))); err == nil {
			ln.Close()
			return p
		}
	}
	t.Fatal("no two adjacent free ports after 50 tries")
	return 0
}

// TestPgoutputCounter walks what a real pg_recvlogical writes for a
// pgoutput slot: inserts (a NULL, a TOASTed value, values holding
// newlines, so that splitting by lines would miscount), updates with and
// without old images (REPLICA IDENTITY FULL; an unchanged TOASTed column),
// deletes, a truncate, and a second relation; every message must be
// accounted for. A cut stream and an unknown message are errors.
func TestPgoutputCounter(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Postgres")
	}
	pg := testkit.StartPostgres(t)
	big := strings.Repeat("toast\n", 20000) // well past the TOAST threshold, compressible or not
	pg.Exec(t, "postgres",
		"CREATE TABLE a (id int PRIMARY KEY, t text, big text)",
		"CREATE TABLE b (id int PRIMARY KEY, v text)",
		"ALTER TABLE b REPLICA IDENTITY FULL",
		"ALTER TABLE a ALTER COLUMN big SET STORAGE EXTERNAL", // stored out of line, uncompressed
		"CREATE PUBLICATION p FOR TABLE a, b",
		"SELECT pg_create_logical_replication_slot('s', 'pgoutput')",
		"INSERT INTO a VALUES (1, E'line\\nbreak\\n', NULL), (2, 'x', '"+big+"'), (3, NULL, 'small')",
		"INSERT INTO b VALUES (1, E'\\n'), (2, 'two')",
		"UPDATE a SET t = 'changed' WHERE id IN (1, 2)", // id 2: big unchanged and TOASTed → 'u'
		"UPDATE b SET v = 'full' WHERE id = 1",          // old image 'O'
		"DELETE FROM a WHERE id = 3",
		"DELETE FROM b WHERE id = 2",
		"TRUNCATE b",
	)
	ctx := testkit.Context(t, time.Minute)
	s, err := dialPG(ctx, pg.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	lsn, err := s.flushedLSN(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, pg.Program("pg_recvlogical"),
		"-d", fmt.Sprintf("host=%s port=%d user=%s dbname=postgres", pg.Host, pg.Port, pg.User),
		"--start", "-S", "s", "--no-loop", "-o", "proto_version=1", "-o", "publication_names=p",
		"--endpos", lsn, "-f", "-")
	cmd.Env = append(os.Environ(), "PGPASSWORD="+testkit.PostgresPassword)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stream, err := cmd.Output()
	if err != nil {
		t.Fatalf("pg_recvlogical: %v: %s", err, stderr.String())
	}
	if !bytes.Contains(stream, []byte("toast\ntoast\n")) {
		t.Fatalf("the stream does not carry the TOASTed value inline (%d bytes)", len(stream))
	}
	c := newPgoutputCounter(bytes.NewReader(stream))
	var n int
	for {
		_, err := c.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("message %d: %v", n, err)
		}
		n++
	}
	// 7 transactions (one per statement). Relations a and b are sent
	// before their first change and again after an invalidation (b's
	// TRUNCATE gives it a new file).
	for typ, want := range map[byte]int64{'B': 7, 'C': 7, 'I': 5, 'U': 3, 'D': 2, 'T': 1} {
		if got := c.counts[typ]; got != want {
			t.Errorf("%q messages: %d, want %d", typ, got, want)
		}
	}
	if got := c.counts['R']; got < 2 {
		t.Errorf("%d relation messages, want at least 2", got)
	}
	if lines := bytes.Count(stream, []byte("\n")); lines <= n {
		t.Fatalf("the stream has %d newlines for %d messages: values with newlines did not make it through", lines, n)
	}

	// A stream cut inside a message, and a message of no known type.
	for name, bad := range map[string][]byte{
		"cut":     stream[:len(stream)/2],
		"unknown": append([]byte{'Z', 0, 0, '\n'}, stream...),
		"no newline": func() []byte {
			b := append([]byte{}, stream[:22]...) // 'B' and its 20 bytes, then not '\n'
			b[21] = 'x'
			return b
		}(),
	} {
		c := newPgoutputCounter(bytes.NewReader(bad))
		var err error
		for err == nil {
			_, err = c.next()
		}
		if errors.Is(err, io.EOF) {
			t.Errorf("%s: the stream walked to a clean end", name)
		}
	}
}

// TestSinkRecords: the sink's records are JsonConverter envelopes that
// Fjord's own JsonConverter decodes into the row COPY writes.
func TestSinkRecords(t *testing.T) {
	conv, err := newConverters(mustConverterProps(ConvJSON, ""))
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int64{1, 2, 99_999, 200_000} {
		k, v := sinkRecord(i)
		_, key, err := conv.key.ToConnectData("t", nil, k)
		if err != nil {
			t.Fatalf("key %d: %v: %s", i, err, k)
		}
		if id, err := key.(*connect.Struct).Get("id"); err != nil || id != i {
			t.Errorf("key %d: id %v %v", i, id, err)
		}
		_, val, err := conv.value.ToConnectData("t", nil, v)
		if err != nil {
			t.Fatalf("value %d: %v: %s", i, err, v)
		}
		row := sinkRow(i)
		for j, col := range sinkColumnNames {
			got, err := val.(*connect.Struct).Get(col)
			if err != nil || got != row[j] {
				t.Errorf("row %d column %s: %#v (%v), COPY writes %#v", i, col, got, err, row[j])
			}
		}
	}
	if got := sinkChecksum(4); got != [4]int64{4, 10, 2 + 3 + 4 + 5, 2} {
		t.Errorf("sinkChecksum(4) = %v", got)
	}
}

func TestChangeEvent(t *testing.T) {
	v := []byte(`{"schema":{"type":"struct","fields":[{"field":"payload"}]},"payload":{"before":null,"after":{"id":42,"note":"x"},"op":"c"}}`)
	id, op, err := changeEvent(v)
	if err != nil || id != 42 || op != "c" {
		t.Fatalf("changeEvent = %d %q %v", id, op, err)
	}
	for _, bad := range []string{
		`{"payload":{"op":"d","before":{"id":1},"after":null}}`,
		`{"schema":{}}`,
		`{"payload":{"op":"c","after":{"id":"x"}}}`,
		`not json`,
	} {
		if _, _, err := changeEvent([]byte(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

// TestPostgresReport renders a report from known samples: medians, the
// ratios against the Postgres tool and Debezium with their goal marks,
// the sink's absolute goal, and the goal line.
func TestPostgresReport(t *testing.T) {
	rep := &PostgresReport{Command: "fjord bench postgres", Runs: 3, Rows: 200_000, UpdateRows: 20_000, Updates: 10,
		TxnRows: 2000, WarmupFrac: 0.1, PollMs: 10, DBPollMs: 100, Postgres: "15.18",
		Targets: []string{PgTargetPostgres, PgTargetFjord, PgTargetDebezium},
		Phases:  []string{PgPhaseInsert, PgPhaseUpdate, PgPhaseSnapshot, PgPhaseSink}}
	add := func(phase, col string, rates ...float64) {
		for i, r := range rates {
			rep.Samples = append(rep.Samples, PgSample{Run: i + 1, Phase: phase, Column: col, Rows: 1000, Seconds: 1000 / r,
				RowsPerSec: r, LoadSeconds: 0.01, FirstMs: 20, AllMs: 1000, CPUSeconds: 0.002})
		}
	}
	add(PgPhaseInsert, ColPgTool, 100_000, 120_000, 110_000)
	add(PgPhaseInsert, ColDrain, 300_000)
	add(PgPhaseInsert, ColFjord, 90_000, 95_000, 99_000) // 0.86 of the tool
	add(PgPhaseInsert, ColDebezium, 40_000)              // 2.38 × Debezium
	add(PgPhaseUpdate, ColPgTool, 100_000)
	add(PgPhaseUpdate, ColFjord, 70_000) // 0.70 ✗
	add(PgPhaseSnapshot, ColPgTool, 1_000_000)
	add(PgPhaseSnapshot, ColFjord, 500_000)
	add(PgPhaseSink, ColPgTool, 400_000)
	add(PgPhaseSink, ColFjord, 60_000)
	rep.build()
	md := rep.Markdown()
	for _, want := range []string{
		"| insert stream: first INSERT → all rows delivered (tool: pg_recvlogical, live) | rows/s | 110,000 | 95,000 | 40,000 | 0.86 ✓ | 2.38 ✓ |",
		"| insert stream: first INSERT → first row delivered | ms | 20.0 | 20.0 | 20.0 | 1.00 | 1.00 |",
		"| insert stream: the INSERT statements alone, during the run | rows/s | 100,000 | 100,000 | 100,000 | 1.00 | 1.00 |",
		"| insert stream: CPU of the consumer's processes per row | µs | 2.0 | 2.0 | 2.0 | 1.00 | 1.00 |",
		"| insert: slot drained after the load (tool: pg_recvlogical --endpos) | rows/s | 300,000 | — | — | — | — |",
		"| update stream: first UPDATE → all rows delivered (tool: pg_recvlogical, live) | rows/s | 100,000 | 70,000 | — | 0.70 ✗ | — |",
		"| snapshot: connector created → all op=r rows in the topic (tool: COPY TO STDOUT) | rows/s | 1,000,000 | 500,000 | — | 0.50 ✗ | — |",
		"| sink upsert: topic → table, after the first 10 % of rows (tool: COPY FROM STDIN) | rows/s | 400,000 | 60,000 ✓ | — | 0.15 | — |",
		"| sink: connector created → all rows in the table | ms | — | 1,000 | — | — | — |",
		"Goals (issue 5): insert 0.86 × pg_recvlogical ✓; insert 2.38 × Debezium ✓; update 0.70 × pg_recvlogical ✗; " +
			"update vs Debezium not measured; snapshot 0.50 × COPY ✗; sink 60,000 rows/s ✓.",
		"targets: pg_recvlogical and COPY, Fjord (`fjord dev`), Debezium 3.6.1 on Kafka Connect 4.4; median of 3 run(s)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q\n%s", want, md)
		}
	}
	if len(rep.Table) != len(pgRowSpecs) {
		t.Errorf("%d rows, want %d", len(rep.Table), len(pgRowSpecs))
	}
	only := &PostgresReport{Phases: []string{PgPhaseSink}, WarmupFrac: 0.25}
	only.build()
	if len(only.Table) != 3 || !strings.Contains(only.Markdown(), "after the first 25 % of rows") ||
		!strings.Contains(only.Markdown(), "Goals (issue 5): sink not measured.") {
		t.Errorf("sink-only report:\n%s", only.Markdown())
	}
}

func TestReplacePostgresBlock(t *testing.T) {
	others := beginMarker + "\nbroker\n" + endMarker + "\n\n" + connectBeginMarker + "\nconnect\n" + connectEndMarker + "\n\n" +
		clusterBeginMarker + "\ncluster\n" + clusterEndMarker + "\n"
	doc, err := ReplacePostgresBlock("# B\n\n"+others, "one\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := "# B\n\n" + others + "\n" + postgresBeginMarker + "\none\n" + postgresEndMarker + "\n"; doc != want {
		t.Fatalf("append:\n%q\nwant\n%q", doc, want)
	}
	doc2, err := ReplacePostgresBlock(doc+"after\n", "two")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(doc2, postgresBeginMarker+"\ntwo\n"+postgresEndMarker+"\nafter\n") || strings.Contains(doc2, "one") ||
		!strings.HasPrefix(doc2, "# B\n\n"+others) {
		t.Fatalf("replace:\n%s", doc2)
	}
	// The other benchmarks' rewrites leave the Postgres block alone.
	doc3, err := ReplaceClusterBlock(doc2, "cluster 2")
	if err == nil {
		doc3, err = ReplaceConnectBlock(doc3, "connect 2")
	}
	if err != nil || !strings.Contains(doc3, postgresBeginMarker+"\ntwo\n") || !strings.Contains(doc3, "cluster 2") {
		t.Fatalf("other rewrites: %v\n%s", err, doc3)
	}
	for _, bad := range []string{
		postgresEndMarker + "\n" + postgresBeginMarker,
		postgresBeginMarker + "\n",
		postgresBeginMarker + "\n" + postgresEndMarker + postgresBeginMarker + "\n" + postgresEndMarker,
	} {
		if _, err := ReplacePostgresBlock(bad, "x"); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

// TestPostgresBenchConfigValidate: the orchestrator refuses what it
// cannot run, before starting anything.
func TestPostgresBenchConfigValidate(t *testing.T) {
	ok := PostgresBenchConfig{Rows: 1000, UpdateRows: 10, Updates: 2, TxnRows: 100, Runs: 1, WarmupFrac: 0.1,
		Poll: time.Millisecond, DBPoll: time.Millisecond, Targets: []string{"pg"}, Phases: []string{"insert"}, Dir: "d"}
	if err := ok.validate(); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(*PostgresBenchConfig){
		"rows":    func(c *PostgresBenchConfig) { c.Rows = 10 },
		"updates": func(c *PostgresBenchConfig) { c.Updates = 0 },
		"txn":     func(c *PostgresBenchConfig) { c.TxnRows = 0 },
		"runs":    func(c *PostgresBenchConfig) { c.Runs = 0 },
		"warm-up": func(c *PostgresBenchConfig) { c.WarmupFrac = 0.95 },
		"poll":    func(c *PostgresBenchConfig) { c.DBPoll = 0 },
		"target":  func(c *PostgresBenchConfig) { c.Targets = []string{"kafka"} },
		"phase":   func(c *PostgresBenchConfig) { c.Phases = []string{"delete"} },
		"none":    func(c *PostgresBenchConfig) { c.Phases = nil },
		"dir":     func(c *PostgresBenchConfig) { c.Dir = "" },
	} {
		c := ok
		c.Targets, c.Phases = slices.Clone(ok.Targets), slices.Clone(ok.Phases)
		mut(&c)
		if c.validate() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := RunPostgresBench(context.Background(), PostgresBenchConfig{}); err == nil {
		t.Error("RunPostgresBench ran an empty config")
	}
}
