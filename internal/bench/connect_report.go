package bench

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ConnectGoal is issue 3's goal: with JsonConverter the runtime costs at
// most 30% of raw client throughput, so Connect ÷ raw franz-go >= 0.7 for
// the source (against produce) and the sink (against consume).
const ConnectGoal = 0.7

// ConnectReport is a whole `fjord bench connect`, ready to render.
type ConnectReport struct {
	Command    string        `json:"command"`
	Date       time.Time     `json:"date"`
	Machine    Machine       `json:"machine"`
	Runs       int           `json:"runs"`
	Quick      bool          `json:"quick"`
	Note       string        `json:"note,omitempty"`
	Records    int           `json:"records"`
	Warmup     int           `json:"warmup"`
	Partitions int           `json:"partitions"`
	Spec       string        `json:"spec"`
	Seed       int64         `json:"seed"`
	Pool       int           `json:"pool"`
	Converters []string      `json:"converters"`
	Rows       []ConnectRow  `json:"rows"`
	Phases     []PhaseResult `json:"phases"` // every sample
	Verified   []string      `json:"verified,omitempty"`
	Errors     []string      `json:"errors,omitempty"`
}

// Columns of a ConnectRow.
const (
	ColRaw     = "raw"     // franz-go moving bytes encoded beforehand
	ColApp     = "app"     // franz-go plus datagen and the converter
	ColConnect = "connect" // the worker
)

// ConnectRow is one line of the table: medians over the runs.
type ConnectRow struct {
	Name          string             `json:"name"`
	Converter     string             `json:"converter"`
	Unit          string             `json:"unit"`
	LowerIsBetter bool               `json:"lower_is_better"`
	Values        map[string]float64 `json:"values"` // column → median
	// Goal is the least Connect ÷ raw that meets the goal (0:
	// no goal on this row).
	Goal float64 `json:"goal,omitempty"`
}

func (r ConnectRow) ratio(col string) (float64, bool) {
	c, ok1 := r.Values[ColConnect]
	o, ok2 := r.Values[col]
	if !ok1 || !ok2 || o == 0 {
		return 0, false
	}
	return c / o, true
}

// Met reports whether the row's goal is met; ok is false without a goal
// or a value.
func (r ConnectRow) Met() (met, ok bool) {
	q, ok := r.ratio(ColRaw)
	if !ok || r.Goal == 0 {
		return false, false
	}
	return q >= r.Goal, true
}

// rowSpec says how a row is computed from the phases.
type rowSpec struct {
	name, unit  string
	lowerBetter bool
	goal        bool
	cols        map[string]string // column → phase
	value       func(PhaseResult) float64
}

var connectRowSpecs = []rowSpec{
	{name: "datagen → topic (source) vs produce", unit: "rec/s", goal: true,
		cols:  map[string]string{ColRaw: PhaseRawProduce, ColApp: PhaseAppProduce, ColConnect: PhaseSource},
		value: func(p PhaseResult) float64 { return p.RecordsPerSec }},
	{name: "topic → NullSink (sink) vs consume", unit: "rec/s", goal: true,
		cols:  map[string]string{ColRaw: PhaseRawConsume, ColApp: PhaseAppConsume, ColConnect: PhaseSink},
		value: func(p PhaseResult) float64 { return p.RecordsPerSec }},
	{name: "CPU per record, producing side", unit: "µs", lowerBetter: true,
		cols:  map[string]string{ColRaw: PhaseRawProduce, ColApp: PhaseAppProduce, ColConnect: PhaseSource},
		value: PhaseResult.CPUMicrosPerRecord},
	{name: "CPU per record, consuming side", unit: "µs", lowerBetter: true,
		cols:  map[string]string{ColRaw: PhaseRawConsume, ColApp: PhaseAppConsume, ColConnect: PhaseSink},
		value: PhaseResult.CPUMicrosPerRecord},
	{name: "source: POST → first record in topic", unit: "ms", lowerBetter: true,
		cols:  map[string]string{ColConnect: PhaseSource},
		value: func(p PhaseResult) float64 { return p.FirstMs }},
	{name: "source: POST → all records in topic", unit: "ms", lowerBetter: true,
		cols:  map[string]string{ColConnect: PhaseSource},
		value: func(p PhaseResult) float64 { return p.EndToEndMs }},
	{name: "sink: POST → all records committed", unit: "ms", lowerBetter: true,
		cols:  map[string]string{ColConnect: PhaseSink},
		value: func(p PhaseResult) float64 { return p.EndToEndMs }},
}

// build computes the rows from the phases.
func (r *ConnectReport) build() {
	r.Rows = nil
	for _, conv := range r.Converters {
		for _, spec := range connectRowSpecs {
			row := ConnectRow{Name: spec.name, Converter: conv, Unit: spec.unit, LowerIsBetter: spec.lowerBetter,
				Values: map[string]float64{}}
			if spec.goal && conv == ConvJSON {
				row.Goal = ConnectGoal
			}
			for col, phase := range spec.cols {
				var xs []float64
				for _, p := range r.Phases {
					if p.Converter == conv && p.Phase == phase {
						xs = append(xs, spec.value(p))
					}
				}
				if len(xs) > 0 {
					row.Values[col] = Median(xs)
				}
			}
			r.Rows = append(r.Rows, row)
		}
	}
}

// bytesPerRecord is the key+value size of the converter's records.
func (r *ConnectReport) bytesPerRecord(conv string) (float64, bool) {
	for _, p := range r.Phases {
		if p.Converter == conv && p.Phase == PhaseRawProduce && p.Bytes > 0 {
			return float64(p.Bytes) / float64(r.Records), true
		}
	}
	return 0, false
}

func convName(c string) string {
	switch c {
	case ConvJSON:
		return "JSON"
	case ConvAvro:
		return "Avro"
	}
	return c
}

// Markdown renders the generated Connect block of BENCHMARKS.md.
func (r *ConnectReport) Markdown() string {
	var b strings.Builder
	b.WriteString("### Connect: latest run\n\n")
	if r.Quick {
		b.WriteString("**Quick smoke run: few records, figures are not comparable to a full run.**\n\n")
	}
	if r.Note != "" {
		fmt.Fprintf(&b, "**Note:** %s\n\n", r.Note)
	}
	fmt.Fprintf(&b, "- Command: `%s`\n", r.Command)
	fmt.Fprintf(&b, "- Date: %s\n", r.Date.Format("2006-01-02 15:04 MST"))
	if m := r.Machine; m.CPUs > 0 {
		fmt.Fprintf(&b, "- Machine: %d CPUs (%s), %s memory, %s; %s; franz-go %s\n",
			m.CPUs, m.CPUModel, m.Memory, m.Kernel, m.GoVersion, m.FranzGo)
	}
	var sizes []string
	for _, c := range r.Converters {
		if n, ok := r.bytesPerRecord(c); ok {
			sizes = append(sizes, fmt.Sprintf("%s %.0f B", convName(c), n))
		}
	}
	fields := strings.Count(r.Spec, ",") + 1
	fmt.Fprintf(&b, "- Records: %s per phase, the first %s not timed; datagen `value.schema` of %d fields keyed by `id`, seed %d",
		count(r.Records), count(r.Warmup), fields, r.Seed)
	if len(sizes) > 0 {
		fmt.Fprintf(&b, " (key + value per record: %s)", strings.Join(sizes, ", "))
	}
	fmt.Fprintf(&b, "; topics of %d partitions; one connector task, one franz-go client; median of %d run(s)\n", r.Partitions, r.Runs)
	for _, v := range r.Verified {
		fmt.Fprintf(&b, "- Same records, byte for byte: %s\n", v)
	}
	for _, e := range r.Errors {
		fmt.Fprintf(&b, "- **Failed:** %s\n", oneLine(e, 600))
	}
	b.WriteString("\nColumns: franz-go producing (consuming) the records' bytes encoded beforehand; franz-go with datagen " +
		"and the converter in its loop (what an application doing the same work spends); Connect's worker in `fjord dev`. " +
		"Ratios are Connect ÷ the column: above 1 is better for rec/s, below 1 for µs and ms. CPU per record counts " +
		"every process (fjord dev and the driver). " +
		fmt.Sprintf("✓/✗: issue 3's goal, Connect ≥ %.1f × raw franz-go with JsonConverter.\n\n", ConnectGoal))
	b.WriteString("| Figure | Converter | Unit | franz-go | franz-go + converter | Connect | Connect ÷ franz-go | Connect ÷ (franz-go + converter) |\n")
	b.WriteString("|---|---|---|---:|---:|---:|---:|---:|\n")
	for _, row := range r.Rows {
		fmt.Fprintf(&b, "| %s | %s | %s |", row.Name, convName(row.Converter), row.Unit)
		for _, col := range []string{ColRaw, ColApp, ColConnect} {
			if v, ok := row.Values[col]; ok {
				fmt.Fprintf(&b, " %s |", formatConnectValue(v, row.Unit))
			} else {
				b.WriteString(" — |")
			}
		}
		for _, col := range []string{ColRaw, ColApp} {
			q, ok := row.ratio(col)
			if !ok {
				b.WriteString(" — |")
				continue
			}
			cell := fmt.Sprintf("%.2f", q)
			if col == ColRaw {
				if met, ok := row.Met(); ok {
					cell += map[bool]string{true: " ✓", false: " ✗"}[met]
				}
			}
			fmt.Fprintf(&b, " %s |", cell)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n" + r.goalSummary())
	return b.String()
}

func formatConnectValue(v float64, unit string) string {
	switch unit {
	case "rec/s":
		return thousands(int64(math.Round(v)))
	case "µs":
		return strconv.FormatFloat(v, 'f', 2, 64)
	case "ms":
		return thousands(int64(math.Round(v)))
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

func (r *ConnectReport) goalSummary() string {
	var parts []string
	for _, row := range r.Rows {
		met, ok := row.Met()
		if !ok {
			continue
		}
		q, _ := row.ratio(ColRaw)
		mark := "✗"
		if met {
			mark = "✓"
		}
		what := "source"
		if strings.Contains(row.Name, "sink") {
			what = "sink"
		}
		parts = append(parts, fmt.Sprintf("%s %.2f %s", what, q, mark))
	}
	if len(parts) == 0 {
		return "Goal: not evaluated — no JsonConverter figures in this run.\n"
	}
	return fmt.Sprintf("Goal (Connect ≥ %.1f × raw franz-go, JsonConverter): %s.\n", ConnectGoal, strings.Join(parts, "; "))
}

// The Connect block of BENCHMARKS.md has markers of its own, so that the
// broker benchmark's block (bench:begin/bench:end) and this one are
// refreshed independently.
const (
	connectBeginMarker = "<!-- bench-connect:begin — generated by `fjord bench connect --write`; edit outside these markers -->"
	connectEndMarker   = "<!-- bench-connect:end -->"
	connectBeginPrefix = "<!-- bench-connect:begin"
)

// ReplaceConnectBlock returns doc with the Connect block replaced by
// generated, appending the block when doc has none yet.
func ReplaceConnectBlock(doc, generated string) (string, error) {
	return connectBlock.replace(doc, generated)
}

// WriteConnectBlock refreshes the Connect block of the file at path.
func WriteConnectBlock(path, generated string) error {
	return writeGenerated(path, generated, ReplaceConnectBlock)
}
