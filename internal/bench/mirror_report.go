package bench

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
)

// Issue 7's goals: the Fjord mirror copies at least 0.8 × the records/s
// of a plain consume of the same topic, faster than MirrorMaker 2, with a
// replication latency p99 under a second at 10k records/s.
const (
	MirrorGoalRaw      = 0.8
	MirrorGoalP99Ms    = 1000
	MirrorGoalRateHint = 10_000 // the rate the latency goal is stated at
)

// MirrorSample is one measurement: one column, one phase, one run.
type MirrorSample struct {
	Run    int    `json:"run"`
	Column string `json:"column"` // ColMirrorRaw, ColMirrorFjord, ColMirrorMM2
	Phase  string `json:"phase"`  // MirrorPhaseThroughput, MirrorPhaseLatency

	// Records: throughput, the records copied (raw: consumed); latency,
	// the timed records. Seconds: throughput, process start → all
	// records on the target (raw: the consumer's own clock, client
	// creation → last record); latency, the timed part's sending.
	Records int64   `json:"records"`
	Seconds float64 `json:"seconds"`
	// FirstMs: the mirror's process start → first record seen on the
	// target (throughput: in the end offsets; latency: by the consumer).
	FirstMs float64 `json:"first_ms,omitempty"`
	// SteadyRecords and SteadySeconds: after the first records were seen
	// on the target, start-up excluded.
	SteadyRecords int64   `json:"steady_records,omitempty"`
	SteadySeconds float64 `json:"steady_seconds,omitempty"`
	// ProcessCPUSeconds is the mirror's (raw: the consumer's) CPU time
	// over the timed window, the brokers' beside it.
	ProcessCPUSeconds float64 `json:"process_cpu_seconds,omitempty"`
	SourceCPUSeconds  float64 `json:"source_cpu_seconds,omitempty"`
	TargetCPUSeconds  float64 `json:"target_cpu_seconds,omitempty"`
	// RunQueueSeconds is how long the mirror's (raw: the source broker's)
	// and the brokers' threads waited, runnable, for a CPU over the timed
	// window (schedstat).
	RunQueueSeconds float64 `json:"run_queue_seconds,omitempty"`

	// Latency phase.
	Rate          int     `json:"rate,omitempty"`           // asked
	RateHz        float64 `json:"rate_hz,omitempty"`        // achieved
	WarmupRecords int64   `json:"warmup_records,omitempty"` // sent before the clock started
	P50Ms         float64 `json:"p50_ms,omitempty"`
	P99Ms         float64 `json:"p99_ms,omitempty"`
	MaxMs         float64 `json:"max_ms,omitempty"`
	Duplicates    int64   `json:"duplicates,omitempty"`
	// ProcessCores is the mirror's CPU over the timed part, in cores.
	ProcessCores float64 `json:"process_cores,omitempty"`
}

// RecordsPerSec over the whole timed window.
func (s MirrorSample) RecordsPerSec() float64 { return float64(s.Records) / s.Seconds }

// SteadyPerSec after the first records reached the target.
func (s MirrorSample) SteadyPerSec() float64 {
	if s.SteadySeconds <= 0 {
		return 0
	}
	return float64(s.SteadyRecords) / s.SteadySeconds
}

// MirrorTiming is the wall time of one step of the benchmark, set-up and
// clean-up included (run 0: before the runs).
type MirrorTiming struct {
	Run     int     `json:"run"`
	What    string  `json:"what"`
	Seconds float64 `json:"seconds"`
}

// MirrorReport is a whole `fjord bench mirror`, ready to render.
type MirrorReport struct {
	Command    string            `json:"command"`
	Date       time.Time         `json:"date"`
	Machine    Machine           `json:"machine"`
	Limits     Limits            `json:"limits"`
	Runs       int               `json:"runs"`
	Quick      bool              `json:"quick"`
	Note       string            `json:"note,omitempty"`
	Records    int               `json:"records"`
	Size       int               `json:"size"`
	Partitions int               `json:"partitions"`
	TasksMax   int               `json:"tasks_max"`
	Mirrors    []string          `json:"mirrors"` // asked for
	Phases     []string          `json:"phases"`
	Props      map[string]string `json:"props"` // mm2.properties keys of every flow
	PollMs     float64           `json:"poll_ms"`

	LatencyRate    int     `json:"latency_rate"`
	LatencySeconds float64 `json:"latency_seconds"`

	MM2Version string `json:"mm2_version,omitempty"`
	Java       string `json:"java,omitempty"`
	// MM2Skipped says why MirrorMaker 2 was not measured.
	MM2Skipped string `json:"mm2_skipped,omitempty"`

	Load        []float64      `json:"load,omitempty"`
	WallSeconds float64        `json:"wall_seconds"`
	Timings     []MirrorTiming `json:"timings"`
	Table       []MirrorRow    `json:"table"`
	Samples     []MirrorSample `json:"samples"`
	Verified    []string       `json:"verified,omitempty"`
	Errors      []string       `json:"errors,omitempty"`
}

// MirrorRow is one line of the table: medians over the runs.
type MirrorRow struct {
	Name          string             `json:"name"`
	Phase         string             `json:"phase"`
	Unit          string             `json:"unit"`
	LowerIsBetter bool               `json:"lower_is_better"`
	Values        map[string]float64 `json:"values"` // column → median
	// GoalRaw is the least Fjord ÷ raw that meets the goal, GoalMM2 that
	// Fjord must beat MirrorMaker 2, GoalBelow that Fjord's value must
	// stay under it (0/false: no such goal on this row).
	GoalRaw   float64 `json:"goal_raw,omitempty"`
	GoalMM2   bool    `json:"goal_mm2,omitempty"`
	GoalBelow float64 `json:"goal_below,omitempty"`
}

// Ratio is Fjord ÷ the other column.
func (r MirrorRow) Ratio(other string) (float64, bool) {
	f, ok1 := r.Values[ColMirrorFjord]
	o, ok2 := r.Values[other]
	if !ok1 || !ok2 || o == 0 {
		return 0, false
	}
	return f / o, true
}

// beatsMM2 is whether Fjord's value is better than MirrorMaker 2's.
func (r MirrorRow) beatsMM2() (bool, bool) {
	q, ok := r.Ratio(ColMirrorMM2)
	if !ok {
		return false, false
	}
	if r.LowerIsBetter {
		return q < 1, true
	}
	return q > 1, true
}

type mirrorRowSpec struct {
	name        string // may hold %[1]s (records) and %[2]s (latency rate)
	phase, unit string
	lowerBetter bool
	cols        []string
	value       func(MirrorSample) float64
	goalRaw     float64
	goalMM2     bool
	goalBelow   float64
}

var (
	mirrorAllCols     = []string{ColMirrorRaw, ColMirrorFjord, ColMirrorMM2}
	mirrorMirrorsOnly = []string{ColMirrorFjord, ColMirrorMM2}
)

func mirrorBrokersCPU(s MirrorSample) float64 {
	return perRecordMicros(s.SourceCPUSeconds+s.TargetCPUSeconds, s.Records)
}

var mirrorRowSpecs = []mirrorRowSpec{
	{name: "Throughput: process start → all %[1]s records on the target (raw: the plain consume, client creation → last record)",
		phase: MirrorPhaseThroughput, unit: "rec/s", cols: mirrorAllCols,
		value: MirrorSample.RecordsPerSec, goalRaw: MirrorGoalRaw, goalMM2: true},
	{name: "Throughput after the first records reached the target (start-up excluded; raw: the same consume)",
		phase: MirrorPhaseThroughput, unit: "rec/s", cols: mirrorAllCols, value: MirrorSample.SteadyPerSec},
	{name: "Process start → first records on the target", phase: MirrorPhaseThroughput, unit: "ms", lowerBetter: true,
		cols: mirrorMirrorsOnly, value: func(s MirrorSample) float64 { return s.FirstMs }},
	{name: "CPU per record of the mirror process (raw: the consumer process)", phase: MirrorPhaseThroughput, unit: "µs",
		lowerBetter: true, cols: mirrorAllCols, value: func(s MirrorSample) float64 { return perRecordMicros(s.ProcessCPUSeconds, s.Records) }},
	{name: "CPU per record of the brokers (source and target; raw: the source)", phase: MirrorPhaseThroughput, unit: "µs",
		lowerBetter: true, cols: mirrorAllCols, value: mirrorBrokersCPU},
	{name: "Threads of the mirror process and the brokers waiting for a CPU, on average (run queue; raw: the source broker's)", phase: MirrorPhaseThroughput,
		unit: "threads", lowerBetter: true, cols: mirrorAllCols, value: func(s MirrorSample) float64 { return s.RunQueueSeconds / s.Seconds }},
	{name: "Replication latency p50 at %[2]s rec/s (produce → consumed on the target)", phase: MirrorPhaseLatency, unit: "ms",
		lowerBetter: true, cols: mirrorMirrorsOnly, value: func(s MirrorSample) float64 { return s.P50Ms }},
	{name: "Replication latency p99 at %[2]s rec/s", phase: MirrorPhaseLatency, unit: "ms", lowerBetter: true,
		cols: mirrorMirrorsOnly, value: func(s MirrorSample) float64 { return s.P99Ms }, goalBelow: MirrorGoalP99Ms},
	{name: "Replication latency max at %[2]s rec/s", phase: MirrorPhaseLatency, unit: "ms", lowerBetter: true,
		cols: mirrorMirrorsOnly, value: func(s MirrorSample) float64 { return s.MaxMs }},
	{name: "Rate achieved by the latency producer", phase: MirrorPhaseLatency, unit: "rec/s",
		cols: mirrorMirrorsOnly, value: func(s MirrorSample) float64 { return s.RateHz }},
	{name: "CPU of the mirror process at that rate", phase: MirrorPhaseLatency, unit: "cores", lowerBetter: true,
		cols: mirrorMirrorsOnly, value: func(s MirrorSample) float64 { return s.ProcessCores }},
}

// median of one column and phase's values over the runs.
func (r *MirrorReport) median(col, phase string, value func(MirrorSample) float64) (float64, bool) {
	var xs []float64
	for _, s := range r.Samples {
		if s.Column == col && s.Phase == phase {
			if v := value(s); v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) {
				xs = append(xs, v)
			}
		}
	}
	if len(xs) == 0 {
		return 0, false
	}
	return Median(xs), true
}

// build computes the table from the samples.
func (r *MirrorReport) build() {
	r.Table = nil
	for _, spec := range mirrorRowSpecs {
		if !slices.Contains(r.Phases, spec.phase) {
			continue
		}
		name := spec.name
		if strings.Contains(name, "%[") {
			name = fmt.Sprintf(name, count(r.Records), thousands(int64(r.LatencyRate)))
		}
		row := MirrorRow{Name: name,
			Phase: spec.phase, Unit: spec.unit, LowerIsBetter: spec.lowerBetter, Values: map[string]float64{},
			GoalRaw: spec.goalRaw, GoalMM2: spec.goalMM2, GoalBelow: spec.goalBelow}
		for _, col := range spec.cols {
			if v, ok := r.median(col, spec.phase, spec.value); ok {
				row.Values[col] = v
			}
		}
		r.Table = append(r.Table, row)
	}
}

func mirrorColumnName(col string) string {
	switch col {
	case ColMirrorRaw:
		return "raw consume"
	case ColMirrorFjord:
		return "Fjord mirror"
	case ColMirrorMM2:
		return "MirrorMaker 2"
	}
	return col
}

// Markdown renders the generated mirror block of BENCHMARKS.md.
func (r *MirrorReport) Markdown() string {
	var b strings.Builder
	writeRunHeader(&b, "## Mirror (issue 7): latest run\n\n", r.Quick, r.Note, r.Command, r.Date, r.Machine, r.Limits, "the brokers keep their data", r.Load)
	fmt.Fprintf(&b, "- Clusters: two `fjord dev --no-connect` processes (one broker each, on loopback), the source and the target of every "+
		"phase, so that both mirrors run against the same brokers; median of %d run(s)\n", r.Runs)
	if slices.Contains(r.Phases, MirrorPhaseThroughput) {
		fmt.Fprintf(&b, "- Records: %s × %s values (random bytes, no keys), produced beforehand, uncompressed, into a topic of %d "+
			"partitions on the source (record i to partition i mod %d)\n", count(r.Records), sizeName(r.Size), r.Partitions, r.Partitions)
	}
	b.WriteString("- Mirrors: `fjord mirror mm2.properties` (this binary)")
	switch {
	case r.MM2Version != "":
		fmt.Fprintf(&b, " and Apache Kafka %s's MirrorMaker 2 (`scripts/mm2.sh run mm2.properties`: "+
			"org.apache.kafka.connect.mirror.MirrorMaker, -Xms256M -Xmx2G as connect-mirror-maker.sh; %s)", r.MM2Version, orNA(r.Java))
	case slices.Contains(r.Mirrors, ColMirrorMM2):
		b.WriteString(" only")
	}
	fmt.Fprintf(&b, ", each a process of its own, on the same mm2.properties: one flow with aliases no other phase uses (a fresh "+
		"remote topic, worker group and internal topics), `topics` the source topic, %s; everything else at MirrorMaker 2's defaults. "+
		"Heartbeats and checkpoints are off in every phase (the benchmark measures the records; it has no consumer groups to "+
		"checkpoint), and so is the ACL sync (the clusters run without an authorizer: no ACLs to copy)\n",
		propsList(r.Props))
	if r.MM2Version != "" && r.MM2Version != "4.4.0" {
		fmt.Fprintf(&b, "- MirrorMaker 2 is Kafka %s's (every jar of that release), not 4.4.0's: scripts/mm2.sh takes 4.3.1 when Kafka "+
			"4.4.0's connect-mirror and connect-mirror-client cannot be fetched from Maven Central, or what MM2_VERSION names\n", r.MM2Version)
	}
	if r.MM2Skipped != "" {
		fmt.Fprintf(&b, "- **MirrorMaker 2: not measured** — %s\n", oneLine(r.MM2Skipped, 400))
	}
	if slices.Contains(r.Phases, MirrorPhaseThroughput) {
		b.WriteString("- Raw: `fjord bench consume` (franz-go with its defaults, a process of its own) reads the source topic from the " +
			"start of every partition\n")
	}
	if slices.Contains(r.Phases, MirrorPhaseLatency) {
		fmt.Fprintf(&b, "- Latency: per mirror a fresh %d-partition source topic and flow; this process produces %s-byte records at "+
			"%s rec/s (franz-go, linger 0, round robin over the partitions) with the produce time in each value, first as a "+
			"warm-up until the mirror has delivered for a while with at most a second of records outstanding, then for %s s; a "+
			"franz-go consumer on the target (this process, defaults) takes consume time − produce time per record\n",
			r.Partitions, thousands(int64(r.Size)), thousands(int64(r.LatencyRate)), trimFloat(r.LatencySeconds))
	}
	for _, v := range r.Verified {
		fmt.Fprintf(&b, "- Read back and checked: %s\n", v)
	}
	if line := r.timingLine(); line != "" {
		fmt.Fprintf(&b, "- Wall time: %s\n", line)
	}
	for _, e := range r.Errors {
		fmt.Fprintf(&b, "- **Failed:** %s\n", oneLine(e, 600))
	}
	fmt.Fprintf(&b, "\nA mirror is timed from its process start (JVM or Go start-up, worker group join, connector and task "+
		"start-up, remote topic creation included) to the listing of the remote topic's end offsets (every %s) that sums to "+
		"every record; the second row leaves the start-up out, from the first listing that showed records. Ratios are "+
		"Fjord ÷ the other column: above 1 is better for rec/s, below 1 for ms, µs, threads and cores. Goals (issue 7): "+
		"≥ %.1f × the plain consume's records/s and ahead of MirrorMaker 2's ✓/✗, replication latency p99 under %s ms at %s rec/s "+
		"✓/✗ (on Fjord's figure). CPU per record: the mirror process's (raw: the consumer's) and the brokers' over the timed "+
		"window. Threads waiting for a CPU: their run-queue time (/proc/PID/task/*/schedstat) over the timed window ÷ its "+
		"length — well above 0, the phase was short of CPU.\n\n",
		fmtMs(r.PollMs), MirrorGoalRaw, thousands(MirrorGoalP99Ms), thousands(MirrorGoalRateHint))
	b.WriteString("| Figure | Unit | Raw consume | Fjord mirror | MirrorMaker 2 | Fjord ÷ raw | Fjord ÷ MM2 |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|\n")
	for _, row := range r.Table {
		fmt.Fprintf(&b, "| %s | %s |", row.Name, row.Unit)
		for _, col := range mirrorAllCols {
			v, ok := row.Values[col]
			if !ok {
				b.WriteString(" — |")
				continue
			}
			cell := formatMirrorValue(v, row.Unit)
			if col == ColMirrorFjord && row.GoalBelow > 0 {
				cell += mark(v < row.GoalBelow)
			}
			fmt.Fprintf(&b, " %s |", cell)
		}
		if q, ok := row.Ratio(ColMirrorRaw); ok {
			cell := fmt.Sprintf("%.2f", q)
			if row.GoalRaw > 0 {
				cell += mark(q >= row.GoalRaw)
			}
			fmt.Fprintf(&b, " %s |", cell)
		} else {
			b.WriteString(" — |")
		}
		if q, ok := row.Ratio(ColMirrorMM2); ok {
			cell := fmt.Sprintf("%.2f", q)
			if beats, _ := row.beatsMM2(); row.GoalMM2 {
				cell += mark(beats)
			}
			fmt.Fprintf(&b, " %s |\n", cell)
		} else {
			b.WriteString(" — |\n")
		}
	}
	b.WriteString("\n" + r.goalSummary())
	return b.String()
}

// propsList writes the shared mm2.properties keys, sorted.
func propsList(p map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(p)) {
		parts = append(parts, fmt.Sprintf("`%s=%s`", k, p[k]))
	}
	return strings.Join(parts, ", ")
}

// timingLine sums the wall time of each step over the runs.
func (r *MirrorReport) timingLine() string {
	if len(r.Timings) == 0 {
		return ""
	}
	var order []string
	sums := map[string]float64{}
	for _, t := range r.Timings {
		if _, ok := sums[t.What]; !ok {
			order = append(order, t.What)
		}
		sums[t.What] += t.Seconds
	}
	parts := make([]string, 0, len(order))
	for _, w := range order {
		parts = append(parts, fmt.Sprintf("%s %.1f s", w, sums[w]))
	}
	s := strings.Join(parts, ", ")
	if r.WallSeconds > 0 {
		s = fmt.Sprintf("%.0f s in all (%s, summed over the runs, set-up and clean-up of each phase included)", r.WallSeconds, s)
	}
	return s
}

func trimFloat(v float64) string { return fmt.Sprint(math.Round(v*100) / 100) }

func formatMirrorValue(v float64, unit string) string {
	switch {
	case unit == "rec/s" || unit == "ms" && v >= 100:
		return thousands(int64(math.Round(v)))
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// goalSummary: each of issue 7's goals, met, missed or not measured.
func (r *MirrorReport) goalSummary() string {
	var parts []string
	for _, row := range r.Table {
		if row.GoalRaw > 0 {
			if q, ok := row.Ratio(ColMirrorRaw); ok {
				parts = append(parts, fmt.Sprintf("Fjord mirror %.2f × the plain consume's records/s%s", q, mark(q >= row.GoalRaw)))
			} else {
				parts = append(parts, "Fjord vs the plain consume not measured")
			}
		}
		if row.GoalMM2 && row.Phase == MirrorPhaseThroughput {
			if q, ok := row.Ratio(ColMirrorMM2); ok {
				parts = append(parts, fmt.Sprintf("%.2f × MirrorMaker 2's%s", q, mark(q > 1)))
			} else {
				parts = append(parts, "vs MirrorMaker 2 not measured"+r.skippedWhy())
			}
		}
		if row.GoalBelow > 0 {
			if v, ok := row.Values[ColMirrorFjord]; ok {
				parts = append(parts, fmt.Sprintf("replication latency p99 %s ms at %s rec/s%s",
					formatMirrorValue(v, "ms"), thousands(int64(r.LatencyRate)), mark(v < row.GoalBelow)))
			} else {
				parts = append(parts, "replication latency not measured")
			}
			if r.LatencyRate != MirrorGoalRateHint {
				parts[len(parts)-1] += fmt.Sprintf(" (the goal is stated at %s rec/s)", thousands(MirrorGoalRateHint))
			}
		}
	}
	if len(parts) == 0 {
		return "Goals: not evaluated — no phase ran.\n"
	}
	return fmt.Sprintf("Goals (issue 7: ≥ %.1f × raw, ahead of MirrorMaker 2, p99 < 1 s): %s.\n", MirrorGoalRaw, strings.Join(parts, "; "))
}

func (r *MirrorReport) skippedWhy() string {
	if r.MM2Skipped == "" {
		return ""
	}
	return " (" + oneLine(r.MM2Skipped, 200) + ")"
}

// The mirror block's markers in BENCHMARKS.md; the other blocks are left
// alone.
const (
	mirrorBeginMarker = "<!-- bench-mirror:begin — generated by `fjord bench mirror --write`; edit outside these markers -->"
	mirrorEndMarker   = "<!-- bench-mirror:end -->"
	mirrorBeginPrefix = "<!-- bench-mirror:begin"
)

var mirrorBlock = markedBlock{"bench-mirror", mirrorBeginMarker, mirrorEndMarker, mirrorBeginPrefix}

// ReplaceMirrorBlock returns doc with the mirror block replaced by
// generated, appending it when doc has none yet.
func ReplaceMirrorBlock(doc, generated string) (string, error) {
	return mirrorBlock.replace(doc, generated)
}

// WriteMirrorBlock refreshes the mirror block of the file at path.
func WriteMirrorBlock(path, generated string) error {
	return writeGenerated(path, generated, ReplaceMirrorBlock)
}
