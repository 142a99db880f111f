package bench

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Issue 5's goals.
const (
	GoalCDCvsRecvlogical = 0.8    // streaming rows/s ≥ 0.8 × pg_recvlogical's
	GoalCDCvsDebezium    = 2.0    // streaming rows/s ≥ 2 × Debezium's
	GoalSnapshotVsCopy   = 0.8    // snapshot rows/s ≥ 0.8 × COPY TO STDOUT's
	GoalSinkRowsPerSec   = 50_000 // sink upserts
)

// Columns of the Postgres report: what measured a sample.
const (
	ColPgTool   = "postgres" // pg_recvlogical live, COPY TO, COPY FROM
	ColDrain    = "drain"    // pg_recvlogical --endpos after the load
	ColFjord    = "fjord"
	ColDebezium = "debezium"
)

// PgSample is one measurement of one phase by one column in one run.
type PgSample struct {
	Run        int     `json:"run"`
	Phase      string  `json:"phase"`
	Column     string  `json:"column"`
	Tool       string  `json:"tool"`
	Rows       int64   `json:"rows"` // rows timed
	Seconds    float64 `json:"seconds"`
	RowsPerSec float64 `json:"rows_per_sec"`
	// LoadSeconds: streaming phases, how long the INSERT or UPDATE
	// statements took while this column streamed them.
	LoadSeconds float64 `json:"load_seconds,omitempty"`
	// From the phase's start (first statement, process start, or the
	// connector's creation) to the first and the last row delivered.
	FirstMs float64 `json:"first_ms,omitempty"`
	AllMs   float64 `json:"all_ms,omitempty"`
	// CPUSeconds is what the consumer's processes (pg_recvlogical; fjord
	// dev; Kafka's and Connect's JVMs) used over the timed window; the
	// Postgres server's is not counted.
	CPUSeconds float64 `json:"cpu_seconds,omitempty"`
}

// PostgresReport is a whole `fjord bench postgres`, ready to render.
type PostgresReport struct {
	Command    string    `json:"command"`
	Date       time.Time `json:"date"`
	Machine    Machine   `json:"machine"`
	Postgres   string    `json:"postgres"`
	Runs       int       `json:"runs"`
	Quick      bool      `json:"quick"`
	Note       string    `json:"note,omitempty"`
	Rows       int       `json:"rows"`
	UpdateRows int       `json:"update_rows"`
	Updates    int       `json:"updates"`
	TxnRows    int       `json:"txn_rows"`
	WarmupFrac float64   `json:"warmup_frac"`
	PollMs     float64   `json:"poll_ms"`    // topic end offsets read every
	DBPollMs   float64   `json:"db_poll_ms"` // the sink's table counted every
	Targets    []string  `json:"targets"`
	// ConnectProps are Kafka Connect worker properties given with
	// --connect-prop (an experiment: the default run has none).
	ConnectProps map[string]string `json:"connect_props,omitempty"`
	Phases       []string          `json:"phases"`
	// FjordPlugins says which of the two connector classes fjord dev
	// had (GET /connector-plugins): the phases of a missing one fail.
	FjordPlugins map[string]bool `json:"fjord_plugins,omitempty"`
	Table        []PgRow         `json:"table"`
	Samples      []PgSample      `json:"samples"`
	Verified     []string        `json:"verified,omitempty"`
	Errors       []string        `json:"errors,omitempty"`
}

// PgRow is one line of the table: medians over the runs.
type PgRow struct {
	Name          string             `json:"name"`
	Phase         string             `json:"phase"`
	Unit          string             `json:"unit"`
	LowerIsBetter bool               `json:"lower_is_better"`
	Values        map[string]float64 `json:"values"` // ColPgTool, ColFjord, ColDebezium → median
	// Goals (0: none): Fjord ÷ the Postgres tool, Fjord ÷ Debezium, and
	// an absolute floor for Fjord's value.
	GoalTool     float64 `json:"goal_tool,omitempty"`
	GoalDebezium float64 `json:"goal_debezium,omitempty"`
	GoalAbs      float64 `json:"goal_abs,omitempty"`
}

func (r PgRow) ratio(col string) (float64, bool) {
	f, ok1 := r.Values[ColFjord]
	o, ok2 := r.Values[col]
	if !ok1 || !ok2 || o == 0 {
		return 0, false
	}
	return f / o, true
}

// pgRowSpec says how a row comes from the samples: per report column,
// the sample column it reads and the value it takes.
type pgRowSpec struct {
	name, phase, unit string
	lowerBetter       bool
	cols              map[string]string // report column → sample column
	value             func(PgSample) float64
	goalTool, goalDbz float64
	goalAbs           float64
}

func rowsPerSec(s PgSample) float64 { return s.RowsPerSec }
func firstMs(s PgSample) float64    { return s.FirstMs }
func allMs(s PgSample) float64      { return s.AllMs }
func cpuPerRow(s PgSample) float64 {
	if s.Rows == 0 {
		return 0
	}
	return s.CPUSeconds / float64(s.Rows) * 1e6
}

func loadRate(s PgSample) float64 {
	if s.LoadSeconds <= 0 {
		return 0
	}
	return float64(s.Rows) / s.LoadSeconds
}

var (
	allCols  = map[string]string{ColPgTool: ColPgTool, ColFjord: ColFjord, ColDebezium: ColDebezium}
	connCols = map[string]string{ColFjord: ColFjord, ColDebezium: ColDebezium}
)

func streamRowSpecs(phase, stmt string) []pgRowSpec {
	return []pgRowSpec{
		{name: phase + " stream: first " + stmt + " → all rows delivered (tool: pg_recvlogical, live)", phase: phase, unit: "rows/s",
			cols: allCols, value: rowsPerSec, goalTool: GoalCDCvsRecvlogical, goalDbz: GoalCDCvsDebezium},
		{name: phase + " stream: first " + stmt + " → first row delivered", phase: phase, unit: "ms", lowerBetter: true,
			cols: allCols, value: firstMs},
		{name: phase + " stream: CPU of the consumer's processes per row", phase: phase, unit: "µs", lowerBetter: true,
			cols: allCols, value: cpuPerRow},
		{name: phase + " stream: the " + stmt + " statements alone, during the run", phase: phase, unit: "rows/s",
			cols: allCols, value: loadRate},
		{name: phase + ": slot drained after the load (tool: pg_recvlogical --endpos)", phase: phase, unit: "rows/s",
			cols: map[string]string{ColPgTool: ColDrain}, value: rowsPerSec},
	}
}

var pgRowSpecs = append(append(streamRowSpecs(PgPhaseInsert, "INSERT"), streamRowSpecs(PgPhaseUpdate, "UPDATE")...),
	pgRowSpec{name: "snapshot: connector created → all op=r rows in the topic (tool: COPY TO STDOUT)", phase: PgPhaseSnapshot,
		unit: "rows/s", cols: allCols, value: rowsPerSec, goalTool: GoalSnapshotVsCopy},
	pgRowSpec{name: "snapshot: connector created → first row in the topic", phase: PgPhaseSnapshot, unit: "ms", lowerBetter: true,
		cols: connCols, value: firstMs},
	pgRowSpec{name: "snapshot: CPU of the connector's processes per row", phase: PgPhaseSnapshot, unit: "µs", lowerBetter: true,
		cols: connCols, value: cpuPerRow},
	pgRowSpec{name: "sink upsert: topic → table, after the first {warmup} of rows (tool: COPY FROM STDIN)", phase: PgPhaseSink, unit: "rows/s",
		cols: map[string]string{ColPgTool: ColPgTool, ColFjord: ColFjord}, value: rowsPerSec, goalAbs: GoalSinkRowsPerSec},
	pgRowSpec{name: "sink: connector created → all rows in the table", phase: PgPhaseSink, unit: "ms", lowerBetter: true,
		cols: map[string]string{ColFjord: ColFjord}, value: allMs},
	pgRowSpec{name: "sink: CPU of fjord dev per row (Postgres's not counted)", phase: PgPhaseSink, unit: "µs", lowerBetter: true,
		cols: map[string]string{ColFjord: ColFjord}, value: cpuPerRow},
)

// build computes the table from the samples.
func (r *PostgresReport) build() {
	r.Table = nil
	for _, spec := range pgRowSpecs {
		if !slices.Contains(r.Phases, spec.phase) {
			continue
		}
		row := PgRow{Name: strings.ReplaceAll(spec.name, "{warmup}", fmt.Sprintf("%g %%", r.WarmupFrac*100)),
			Phase: spec.phase, Unit: spec.unit, LowerIsBetter: spec.lowerBetter,
			Values: map[string]float64{}, GoalTool: spec.goalTool, GoalDebezium: spec.goalDbz, GoalAbs: spec.goalAbs}
		for col, sampleCol := range spec.cols {
			var xs []float64
			for _, s := range r.Samples {
				if s.Phase == spec.phase && s.Column == sampleCol {
					if v := spec.value(s); v > 0 {
						xs = append(xs, v)
					}
				}
			}
			if len(xs) > 0 {
				row.Values[col] = Median(xs)
			}
		}
		r.Table = append(r.Table, row)
	}
}

func mark(ok bool) string {
	if ok {
		return " ✓"
	}
	return " ✗"
}

// Markdown renders the generated Postgres block of BENCHMARKS.md.
func (r *PostgresReport) Markdown() string {
	var b strings.Builder
	b.WriteString("## Postgres CDC source and sink (issue 5): latest run\n\n")
	if r.Quick {
		b.WriteString("**Quick smoke run: few rows, figures are not comparable to a full run.**\n\n")
	}
	if r.Note != "" {
		fmt.Fprintf(&b, "**Note:** %s\n\n", r.Note)
	}
	fmt.Fprintf(&b, "- Command: `%s`\n", r.Command)
	fmt.Fprintf(&b, "- Date: %s\n", r.Date.Format("2006-01-02 15:04 MST"))
	if m := r.Machine; m.CPUs > 0 {
		fmt.Fprintf(&b, "- Machine: %d CPUs (%s), %s memory, %s; %s; franz-go %s", m.CPUs, m.CPUModel, m.Memory, m.Kernel, m.GoVersion, m.FranzGo)
		if m.Java != "" {
			fmt.Fprintf(&b, "; %s", m.Java)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "- PostgreSQL %s on loopback (internal/testkit: fsync, synchronous_commit and full_page_writes off; autovacuum off; "+
		"a CHECKPOINT before each phase); targets: %s; median of %d run(s)\n", orNA(r.Postgres), strings.Join(r.targetNames(), ", "), r.Runs)
	fmt.Fprintf(&b, "- Rows of 9 columns (bigint key, text, double, int, boolean, timestamptz; ~150 B): insert %s rows and update %s rows × %d, "+
		"%s rows per transaction; snapshot of a %s-row table; sink %s JSON records (JsonConverter with schemas) upserted by one task\n",
		count(r.Rows), count(r.UpdateRows), r.Updates, count(r.TxnRows), count(r.Rows), count(r.Rows))
	if len(r.ConnectProps) > 0 {
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(r.ConnectProps)) {
			kv = append(kv, "`"+k+"="+r.ConnectProps[k]+"`")
		}
		fmt.Fprintf(&b, "- **Experiment:** Kafka Connect worker properties beyond `fjord dev`'s: %s\n", strings.Join(kv, ", "))
	}
	if slices.Contains(r.Targets, PgTargetDebezium) {
		b.WriteString("- Debezium 3.6.1 is built against Kafka 4.3; on Kafka Connect 4.4 its metrics need " +
			"`org.apache.kafka.common.utils.Sanitizer`, which 4.4 moved to `…utils.internals`: scripts/debezium-connect.sh " +
			"puts a one-class forwarder on the worker's classpath (nothing else of Debezium's is changed)\n")
	}
	if len(r.FjordPlugins) > 0 {
		var missing []string
		for _, c := range []string{CDCConnectorClass, SinkConnectorClass} {
			if !r.FjordPlugins[c] {
				missing = append(missing, "`"+c+"`")
			}
		}
		if len(missing) > 0 {
			fmt.Fprintf(&b, "- fjord dev had no %s (GET /connector-plugins/…/config): those Fjord figures are missing\n", strings.Join(missing, ", "))
		}
	}
	for _, v := range r.Verified {
		fmt.Fprintf(&b, "- Read back and checked: %s\n", v)
	}
	for _, e := range r.Errors {
		fmt.Fprintf(&b, "- **Failed:** %s\n", oneLine(e, 600))
	}
	b.WriteString("\nEach target does the same job alone, on a fresh table, slot, publication and topic. Streaming: the connector " +
		"(snapshot.mode=no_data, pgoutput) or pg_recvlogical streams from its slot before the first statement; timed from the first " +
		"statement to the last row visible in the topic (end offsets, read every " + fmtMs(r.PollMs) + ") or received by pg_recvlogical. Both Connect " +
		"workers get the same connector JSON (Debezium's keys, JsonConverter with schemas, the producers' compression.type=snappy) and `fjord dev`'s worker settings; Debezium " +
		"runs on Kafka Connect 4.4 with its own Apache Kafka 4.4 broker. Snapshot: from the connector's creation (slot, exported " +
		"snapshot and start-up included) to the last op=r row in the topic, beside COPY TO STDOUT of the same table. Sink: the rate " +
		"after the first share of rows (the table's count read every " + fmtMs(r.DBPollMs) + "), beside COPY FROM STDIN of the same rows into the same table. " +
		"Ratios are Fjord ÷ the column; ✓/✗ mark issue 5's goals: streaming ≥ 0.8 × pg_recvlogical and ≥ 2 × Debezium, snapshot " +
		"≥ 0.8 × COPY, sink ≥ 50,000 rows/s.\n\n")
	b.WriteString("| Figure | Unit | Postgres tool | Fjord | Debezium 3.6 | Fjord ÷ tool | Fjord ÷ Debezium |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|\n")
	for _, row := range r.Table {
		fmt.Fprintf(&b, "| %s | %s |", row.Name, row.Unit)
		for _, col := range []string{ColPgTool, ColFjord, ColDebezium} {
			v, ok := row.Values[col]
			if !ok {
				b.WriteString(" — |")
				continue
			}
			cell := formatPgValue(v, row.Unit)
			if col == ColFjord && row.GoalAbs > 0 {
				cell += mark(v >= row.GoalAbs)
			}
			fmt.Fprintf(&b, " %s |", cell)
		}
		for _, c := range []struct {
			col  string
			goal float64
		}{{ColPgTool, row.GoalTool}, {ColDebezium, row.GoalDebezium}} {
			q, ok := row.ratio(c.col)
			if !ok {
				b.WriteString(" — |")
				continue
			}
			cell := fmt.Sprintf("%.2f", q)
			if c.goal > 0 {
				cell += mark(q >= c.goal)
			}
			fmt.Fprintf(&b, " %s |", cell)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n" + r.goalSummary())
	return b.String()
}

func fmtMs(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) + " ms" }

func (r *PostgresReport) targetNames() []string {
	var out []string
	for _, t := range r.Targets {
		switch t {
		case PgTargetPostgres:
			out = append(out, "pg_recvlogical and COPY")
		case PgTargetFjord:
			out = append(out, "Fjord (`fjord dev`)")
		case PgTargetDebezium:
			out = append(out, "Debezium 3.6.1 on Kafka Connect 4.4")
		}
	}
	return out
}

func formatPgValue(v float64, unit string) string {
	if unit == "rows/s" || v >= 100 {
		return thousands(int64(math.Round(v)))
	}
	return fmt.Sprintf("%.1f", v)
}

// goalSummary is one line per goal: met, missed or not measured.
func (r *PostgresReport) goalSummary() string {
	var parts []string
	for _, row := range r.Table {
		for _, c := range []struct {
			col, what string
			goal      float64
		}{{ColPgTool, toolOf(row.Phase), row.GoalTool}, {ColDebezium, "Debezium", row.GoalDebezium}} {
			if c.goal == 0 {
				continue
			}
			q, ok := row.ratio(c.col)
			if !ok {
				parts = append(parts, fmt.Sprintf("%s vs %s not measured", row.Phase, c.what))
				continue
			}
			parts = append(parts, fmt.Sprintf("%s %.2f × %s%s", row.Phase, q, c.what, mark(q >= c.goal)))
		}
		if row.GoalAbs > 0 {
			if v, ok := row.Values[ColFjord]; ok {
				parts = append(parts, fmt.Sprintf("%s %s rows/s%s", row.Phase, thousands(int64(math.Round(v))), mark(v >= row.GoalAbs)))
			} else {
				parts = append(parts, row.Phase+" not measured")
			}
		}
	}
	if len(parts) == 0 {
		return "Goals: not evaluated — no phase with a goal ran.\n"
	}
	return "Goals (issue 5): " + strings.Join(parts, "; ") + ".\n"
}

func toolOf(phase string) string {
	if phase == PgPhaseSnapshot {
		return "COPY"
	}
	return "pg_recvlogical"
}

// The Postgres block's markers in BENCHMARKS.md; the other blocks are
// left alone.
const (
	postgresBeginMarker = "<!-- bench-postgres:begin — generated by `fjord bench postgres --write`; edit outside these markers -->"
	postgresEndMarker   = "<!-- bench-postgres:end -->"
	postgresBeginPrefix = "<!-- bench-postgres:begin"
)

var postgresBlock = markedBlock{"bench-postgres", postgresBeginMarker, postgresEndMarker, postgresBeginPrefix}

// ReplacePostgresBlock returns doc with the Postgres block replaced by
// generated, appending it when doc has none yet.
func ReplacePostgresBlock(doc, generated string) (string, error) {
	return postgresBlock.replace(doc, generated)
}

// WritePostgresBlock refreshes the Postgres block of the file at path.
func WritePostgresBlock(path, generated string) error {
	return writeGenerated(path, generated, ReplacePostgresBlock)
}
