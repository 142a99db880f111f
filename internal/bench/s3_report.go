package bench

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// S3Goal is issue 6's goal: the JSON sink writes at least 0.7 × the
// bytes/s of a plain upload of the same objects by the same SDK.
const S3Goal = 0.7

// S3Sample is one measurement: one format, one column, one run.
type S3Sample struct {
	Run     int    `json:"run"`
	Format  string `json:"format"`
	Column  string `json:"column"` // ColS3Sink or ColS3Raw
	Objects int    `json:"objects"`
	Bytes   int64  `json:"bytes"`
	// Records are the records the objects hold (the raw upload's objects
	// stand for the same records as the sink's).
	Records int64   `json:"records"`
	Seconds float64 `json:"seconds"`
	// FirstMs: the sink's POST → first object listed.
	FirstMs float64 `json:"first_ms,omitempty"`
	// UploaderCPUSeconds is fjord dev's CPU time (the sink: consuming,
	// converting, encoding, uploading; the broker serving the fetches)
	// or, for the raw upload, the benchmark process's own; MinIO's is
	// beside it. Both over the timed window.
	UploaderCPUSeconds float64 `json:"uploader_cpu_seconds"`
	MinioCPUSeconds    float64 `json:"minio_cpu_seconds"`
	// RunQueueSeconds is how long the uploader's and MinIO's threads
	// waited, runnable, for a CPU over the timed window (schedstat).
	RunQueueSeconds float64 `json:"run_queue_seconds"`
}

// MBps is the objects' bytes per second (10^6 bytes).
func (s S3Sample) MBps() float64 { return float64(s.Bytes) / 1e6 / s.Seconds }

// RecordsPerSec is the records the objects hold per second.
func (s S3Sample) RecordsPerSec() float64 { return float64(s.Records) / s.Seconds }

// S3Report is a whole `fjord bench s3`, ready to render.
type S3Report struct {
	Command        string    `json:"command"`
	Date           time.Time `json:"date"`
	Machine        Machine   `json:"machine"`
	Limits         Limits    `json:"limits"`
	Minio          string    `json:"minio,omitempty"` // the binary's module version
	Runs           int       `json:"runs"`
	Quick          bool      `json:"quick"`
	Note           string    `json:"note,omitempty"`
	Records        int       `json:"records"`
	Partitions     int       `json:"partitions"`
	FlushSize      int       `json:"flush_size"`
	Formats        []string  `json:"formats"`
	Objects        int       `json:"objects"`      // complete files per sink phase
	FileRecords    int64     `json:"file_records"` // records in them
	PartSize       int64     `json:"part_size"`
	PutConcurrency int       `json:"put_concurrency"`
	PollMs         float64   `json:"poll_ms"`
	EnvelopeBytes  int       `json:"envelope_bytes"` // key + value of record 1 in the topic
	PayloadBytes   int       `json:"payload_bytes"`  // its payload alone, as JSON
	// Load is the 1-minute load average, sampled every 5 s during the
	// runs: on a shared machine it says how much else ran beside.
	Load     []float64  `json:"load,omitempty"`
	Table    []S3Row    `json:"table"`
	Samples  []S3Sample `json:"samples"`
	Verified []string   `json:"verified,omitempty"`
	Errors   []string   `json:"errors,omitempty"`
}

// S3Row is one line of the table: medians over the runs.
type S3Row struct {
	Name          string             `json:"name"`
	Format        string             `json:"format"`
	Unit          string             `json:"unit"`
	LowerIsBetter bool               `json:"lower_is_better"`
	Values        map[string]float64 `json:"values"` // ColS3Raw, ColS3Sink → median
	Goal          float64            `json:"goal,omitempty"`
}

// Ratio is sink ÷ raw.
func (r S3Row) Ratio() (float64, bool) {
	s, ok1 := r.Values[ColS3Sink]
	w, ok2 := r.Values[ColS3Raw]
	if !ok1 || !ok2 || w == 0 {
		return 0, false
	}
	return s / w, true
}

// s3Pick selects the samples of one format and column.
type s3Pick struct{ format, column string }

type s3RowSpec struct {
	name, format, unit string
	lowerBetter        bool
	raw, sink          s3Pick // zero: no value in that column
	value              func(S3Sample) float64
	goal               float64
}

func s3MBps(s S3Sample) float64  { return s.MBps() }
func s3Rate(s S3Sample) float64  { return s.RecordsPerSec() }
func s3First(s S3Sample) float64 { return s.FirstMs }
func s3UploaderCPU(s S3Sample) float64 {
	return perRecordMicros(s.UploaderCPUSeconds, s.Records)
}
func s3MinioCPU(s S3Sample) float64 { return perRecordMicros(s.MinioCPUSeconds, s.Records) }

// s3RunQueue is how many threads waited for a CPU, on average.
func s3RunQueue(s S3Sample) float64 { return s.RunQueueSeconds / s.Seconds }

func perRecordMicros(secs float64, records int64) float64 {
	if records == 0 {
		return 0
	}
	return secs / float64(records) * 1e6
}

var (
	jsonRaw     = s3Pick{S3FormatJSON, ColS3Raw}
	jsonSink    = s3Pick{S3FormatJSON, ColS3Sink}
	parquetRaw  = s3Pick{S3FormatParquet, ColS3Raw}
	parquetSink = s3Pick{S3FormatParquet, ColS3Sink}
)

var s3RowSpecs = []s3RowSpec{
	{name: "JSON: topic → bucket, POST → every file listed (raw: Store.Put of the same objects)", format: S3FormatJSON,
		unit: "MB/s", raw: jsonRaw, sink: jsonSink, value: s3MBps, goal: S3Goal},
	{name: "JSON: records in those files per second", format: S3FormatJSON, unit: "rec/s", raw: jsonRaw, sink: jsonSink, value: s3Rate},
	{name: "JSON: POST → first file listed", format: S3FormatJSON, unit: "ms", lowerBetter: true, sink: jsonSink, value: s3First},
	{name: "JSON: CPU per record of the uploader (sink: fjord dev; raw: the bench process)", format: S3FormatJSON, unit: "µs",
		lowerBetter: true, raw: jsonRaw, sink: jsonSink, value: s3UploaderCPU},
	{name: "JSON: CPU per record of MinIO", format: S3FormatJSON, unit: "µs", lowerBetter: true, raw: jsonRaw, sink: jsonSink, value: s3MinioCPU},
	{name: "JSON: threads of the uploader and MinIO waiting for a CPU, on average (run queue)", format: S3FormatJSON, unit: "threads",
		lowerBetter: true, raw: jsonRaw, sink: jsonSink, value: s3RunQueue},
	{name: "Parquet: records, POST → every file listed (raw: Store.Put of the same records as the JSON objects)", format: S3FormatParquet,
		unit: "rec/s", raw: jsonRaw, sink: parquetSink, value: s3Rate},
	{name: "Parquet: bytes of the Parquet files (raw: Store.Put of the same Parquet-sized objects)", format: S3FormatParquet,
		unit: "MB/s", raw: parquetRaw, sink: parquetSink, value: s3MBps},
	{name: "Parquet: POST → first file listed", format: S3FormatParquet, unit: "ms", lowerBetter: true, sink: parquetSink, value: s3First},
	{name: "Parquet: CPU per record of the uploader (sink: fjord dev; raw: the bench process, Parquet-sized objects)", format: S3FormatParquet,
		unit: "µs", lowerBetter: true, raw: parquetRaw, sink: parquetSink, value: s3UploaderCPU},
	{name: "Parquet: CPU per record of MinIO (raw: Parquet-sized objects)", format: S3FormatParquet, unit: "µs", lowerBetter: true,
		raw: parquetRaw, sink: parquetSink, value: s3MinioCPU},
	{name: "Parquet: threads of the uploader and MinIO waiting for a CPU, on average (run queue)", format: S3FormatParquet, unit: "threads",
		lowerBetter: true, raw: parquetRaw, sink: parquetSink, value: s3RunQueue},
}

// median of one format and column's values over the runs.
func (r *S3Report) median(p s3Pick, value func(S3Sample) float64) (float64, bool) {
	if p.format == "" {
		return 0, false
	}
	var xs []float64
	for _, s := range r.Samples {
		if s.Format == p.format && s.Column == p.column {
			if v := value(s); v > 0 && !math.IsInf(v, 0) {
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
func (r *S3Report) build() {
	r.Table = nil
	for _, spec := range s3RowSpecs {
		if !slices.Contains(r.Formats, spec.format) {
			continue
		}
		row := S3Row{Name: spec.name, Format: spec.format, Unit: spec.unit, LowerIsBetter: spec.lowerBetter,
			Values: map[string]float64{}, Goal: spec.goal}
		for col, p := range map[string]s3Pick{ColS3Raw: spec.raw, ColS3Sink: spec.sink} {
			if v, ok := r.median(p, spec.value); ok {
				row.Values[col] = v
			}
		}
		r.Table = append(r.Table, row)
	}
}

// objectMB is the median size of a format's sink objects, in MB.
func (r *S3Report) objectMB(format string) (float64, bool) {
	return r.median(s3Pick{format, ColS3Sink}, func(s S3Sample) float64 {
		if s.Objects == 0 {
			return 0
		}
		return float64(s.Bytes) / float64(s.Objects) / 1e6
	})
}

// Markdown renders the generated S3 block of BENCHMARKS.md.
func (r *S3Report) Markdown() string {
	var b strings.Builder
	writeRunHeader(&b, "## S3 sink (issue 6): latest run\n\n", r.Quick, r.Note, r.Command, r.Date, r.Machine, r.Limits, "MinIO keeps its data", r.Load)
	fmt.Fprintf(&b, "- MinIO %s (scripts/s3-server.sh), one drive on local disk, on loopback; one `fjord dev` beside it for all runs; median of %d run(s)\n",
		orNA(r.Minio), r.Runs)
	fmt.Fprintf(&b, "- Records: %s JsonConverter envelopes with their schema (an order: 10 fields — ids, strings, a double, a Timestamp; "+
		"%s B per record in the topic, key included, %s B of payload), produced beforehand into a topic of %d partitions "+
		"(snappy batches); key StringConverter, value JsonConverter schemas.enable=true\n",
		count(r.Records), thousands(int64(r.EnvelopeBytes)), thousands(int64(r.PayloadBytes)), r.Partitions)
	fmt.Fprintf(&b, "- Sink: tasks.max=%d, flush.size=%s: %d complete files, %s records, per phase; s3.part.size %s (objects at least "+
		"this big go multipart); each phase on a fresh bucket\n",
		r.Partitions, thousands(int64(r.FlushSize)), r.Objects, count(int(r.FileRecords)), mibName(r.PartSize))
	var sizes []string
	for _, f := range r.Formats {
		if mb, ok := r.objectMB(f); ok {
			sizes = append(sizes, fmt.Sprintf("%s %.1f MB", formatName(f), mb))
		}
	}
	if len(sizes) > 0 {
		fmt.Fprintf(&b, "- Objects (median size): %s\n", strings.Join(sizes, ", "))
	}
	fmt.Fprintf(&b, "- Raw: `storage.Store.Put` (the sink's own upload path: one PutObject below s3.part.size, the SDK's upload manager "+
		"above) of objects with the sink's keys and sizes, random bytes made beforehand, %d at once (the sink's per-task upload "+
		"concurrency), into a fresh bucket of the same MinIO\n", r.PutConcurrency)
	for _, v := range r.Verified {
		fmt.Fprintf(&b, "- Read back and checked: %s\n", v)
	}
	for _, e := range r.Errors {
		fmt.Fprintf(&b, "- **Failed:** %s\n", oneLine(e, 600))
	}
	fmt.Fprintf(&b, "\nThe sink is timed from `POST /connectors` (task start-up, group join and the partitions' recovery "+
		"listing included) to the listing (ListObjectsV2 every %s) that holds every complete file; the raw upload from its "+
		"first request to its last answer. Ratios are sink ÷ raw: above 1 is better for MB/s and rec/s, below 1 for µs. "+
		"JSON's goal (issue 6): ≥ %.1f × the raw upload's MB/s ✓/✗. ", fmtMs(r.PollMs), S3Goal)
	if slices.Contains(r.Formats, S3FormatParquet) {
		b.WriteString("Parquet's files are far smaller than the JSON they hold, so its first row compares records: the Parquet " +
			"sink's records/s ÷ the records/s the raw upload of the same records as JSON objects reached in the same run (no goal); " +
			"its second compares bytes with a raw upload of Parquet-sized objects. ")
	}
	b.WriteString("CPU per record: fjord dev's (broker and worker in one process) for the sink, the benchmark process's for " +
		"the raw upload, and MinIO's beside them, over the timed window. Threads waiting for a CPU: their run-queue time " +
		"(/proc/PID/task/*/schedstat) over the timed window ÷ its length — well above 0, the phase was short of CPU " +
		"(other load on the machine, or the phase's own processes wanting more cores than there are).\n\n")
	b.WriteString("| Figure | Unit | Raw upload | S3 sink | Sink ÷ raw |\n")
	b.WriteString("|---|---|---:|---:|---:|\n")
	for _, row := range r.Table {
		fmt.Fprintf(&b, "| %s | %s |", row.Name, row.Unit)
		for _, col := range []string{ColS3Raw, ColS3Sink} {
			if v, ok := row.Values[col]; ok {
				fmt.Fprintf(&b, " %s |", formatS3Value(v, row.Unit))
			} else {
				b.WriteString(" — |")
			}
		}
		if q, ok := row.Ratio(); ok {
			cell := fmt.Sprintf("%.2f", q)
			if row.Goal > 0 {
				cell += mark(q >= row.Goal)
			}
			fmt.Fprintf(&b, " %s |\n", cell)
		} else {
			b.WriteString(" — |\n")
		}
	}
	b.WriteString("\n" + r.goalSummary())
	return b.String()
}

// mibName writes a part size as S3 settings are usually read: in MiB.
func mibName(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return thousands(n) + " B"
}

func formatName(f string) string {
	switch f {
	case S3FormatJSON:
		return "JSON"
	case S3FormatParquet:
		return "Parquet (snappy)"
	}
	return f
}

func formatS3Value(v float64, unit string) string {
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

// goalSummary: JSON's goal, met or missed, and Parquet's reported ratio.
func (r *S3Report) goalSummary() string {
	var parts []string
	for _, row := range r.Table {
		switch {
		case row.Goal > 0:
			if q, ok := row.Ratio(); ok {
				parts = append(parts, fmt.Sprintf("JSON %.2f × the raw upload's MB/s%s", q, mark(q >= row.Goal)))
			} else {
				parts = append(parts, "JSON not measured")
			}
		case row.Format == S3FormatParquet && row.Unit == "rec/s":
			if q, ok := row.Ratio(); ok {
				parts = append(parts, fmt.Sprintf("Parquet %.2f × the raw upload's records/s of the same records as JSON (no goal)", q))
			} else {
				parts = append(parts, "Parquet not measured")
			}
		}
	}
	if len(parts) == 0 {
		return "Goal: not evaluated — no format ran.\n"
	}
	return fmt.Sprintf("Goal (issue 6, JSON ≥ %.1f × raw): %s.\n", S3Goal, strings.Join(parts, "; "))
}

// The S3 block's markers in BENCHMARKS.md; the other blocks are left
// alone.
const (
	s3BeginMarker = "<!-- bench-s3:begin — generated by `fjord bench s3 --write`; edit outside these markers -->"
	s3EndMarker   = "<!-- bench-s3:end -->"
	s3BeginPrefix = "<!-- bench-s3:begin"
)

var s3Block = markedBlock{"bench-s3", s3BeginMarker, s3EndMarker, s3BeginPrefix}

// ReplaceS3Block returns doc with the S3 block replaced by generated,
// appending it when doc has none yet.
func ReplaceS3Block(doc, generated string) (string, error) {
	return s3Block.replace(doc, generated)
}

// WriteS3Block refreshes the S3 block of the file at path.
func WriteS3Block(path, generated string) error {
	return writeGenerated(path, generated, ReplaceS3Block)
}

// writeRunHeader writes the opening of a generated block that the S3 and mirror
// reports share: title, smoke-run and note lines, command, date, machine,
// its measured limits (diskWhere says whose data the disk figure is
// under) and the load average.
func writeRunHeader(b *strings.Builder, title string, quick bool, note, command string, date time.Time, m Machine, l Limits, diskWhere string, load []float64) {
	b.WriteString(title)
	if quick {
		b.WriteString("**Quick smoke run: few records, figures are not comparable to a full run.**\n\n")
	}
	if note != "" {
		fmt.Fprintf(b, "**Note:** %s\n\n", note)
	}
	fmt.Fprintf(b, "- Command: `%s`\n", command)
	fmt.Fprintf(b, "- Date: %s\n", date.Format("2006-01-02 15:04 MST"))
	if m.CPUs > 0 {
		fmt.Fprintf(b, "- Machine: %d CPUs (%s), %s memory, %s; %s; franz-go %s\n", m.CPUs, m.CPUModel, m.Memory, m.Kernel, m.GoVersion, m.FranzGo)
	}
	if l.LoopbackMBps > 0 || l.DiskWriteMBps > 0 {
		fmt.Fprintf(b, "- Machine limits: loopback TCP %.0f MB/s (one Go sender → one receiver); disk write %.0f MB/s "+
			"(sequential, fdatasync at the end) where %s\n", l.LoopbackMBps, l.DiskWriteMBps, diskWhere)
	}
	if len(load) > 0 {
		fmt.Fprintf(b, "- Load average (1 min, sampled every 5 s, the benchmark's own processes included): %.1f–%.1f, median %.1f\n",
			slices.Min(load), slices.Max(load), Median(load))
	}
}
