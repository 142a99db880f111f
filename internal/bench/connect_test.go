package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fjordhq/fjord/internal/testkit"
)

// TestQuickConnectBench is the end-to-end smoke test of `fjord bench
// connect --quick`: a real `fjord dev` (built from cmd/fjord), every raw
// driver a separate process, both converters. Every phase must measure
// something, the source connector must have written the raw drivers'
// records byte for byte, and --write must add the Connect block to
// BENCHMARKS.md without touching the broker's block. No Java needed.
func TestQuickConnectBench(t *testing.T) {
	if testing.Short() {
		t.Skip("starts fjord dev and driver processes for ~15 s; run without -short")
	}
	bin := testkit.FjordBinary(t)
	dir := t.TempDir()
	benchFile := filepath.Join(dir, "BENCHMARKS.md")
	brokerBlock := beginMarker + "\nbroker table\n" + endMarker + "\n"
	if err := os.WriteFile(benchFile, []byte("# Benchmarks\n\npreamble\n\n"+brokerBlock+"\n## Connect\n\nhand-written\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	jsonFile := filepath.Join(dir, "report.json")
	cmd := NewCommand(testSelf(t), []string{childEnv, childGORACE})
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"connect", "--quick",
		"--fjord-bin", bin,
		"--fjord-port", freePort(t), "--fjord-http-port", freePort(t),
		"--dir", filepath.Join(dir, "data"),
		"--write", "--benchmarks-file", benchFile,
		"--json", jsonFile,
	})
	start := time.Now()
	if err := cmd.Execute(); err != nil {
		t.Fatalf("bench connect: %v\n%s", err, out.String())
	}
	md := out.String()
	t.Logf("took %s\n%s", time.Since(start).Round(time.Millisecond), md)

	var rep ConnectReport
	b, err := os.ReadFile(jsonFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Errors) > 0 {
		t.Fatalf("runs failed: %v", rep.Errors)
	}
	// Six phases per converter (the phases fail unless every record
	// arrived), each with a measurement.
	if want := 6 * 2; len(rep.Phases) != want {
		t.Fatalf("%d phases measured, want %d", len(rep.Phases), want)
	}
	for _, p := range rep.Phases {
		if p.RecordsPerSec <= 0 || p.Seconds <= 0 || p.BrokerCPUSeconds+p.ClientCPUSeconds <= 0 {
			t.Errorf("%s %s measured nothing: %+v", p.Converter, p.Phase, p)
		}
		// Timing starts at the first reading past the warm-up, exactly at
		// it for the producers.
		timed := int64(QuickConnectRecords - rep.Warmup)
		if p.Records <= 0 || p.Records > timed || (strings.HasSuffix(p.Phase, "produce") && p.Records != timed) {
			t.Errorf("%s %s timed %d records of %d (warm-up %d)", p.Converter, p.Phase, p.Records, QuickConnectRecords, rep.Warmup)
		}
		if (p.Phase == PhaseSource || p.Phase == PhaseSink) && (p.EndToEndMs <= 0 || p.EndToEndMs < p.FirstMs) {
			t.Errorf("%s %s: end-to-end %.0f ms, first records %.0f ms", p.Converter, p.Phase, p.EndToEndMs, p.FirstMs)
		}
	}
	if len(rep.Verified) != 2 {
		t.Errorf("verified %v, want both converters", rep.Verified)
	}

	// Every row of the table has every value it should.
	var rows int
	for _, line := range strings.Split(md, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 10 || strings.HasPrefix(line, "| Figure") || strings.HasPrefix(line, "|---") {
			continue
		}
		rows++
		cols := cells[4:7] // franz-go, franz-go + converter, Connect
		if !strings.Contains(cells[1], "POST") {
			for i, c := range cols {
				if v := strings.TrimSpace(c); v == "—" || v == "0" || v == "0.00" {
					t.Errorf("row %q: column %d is %q", line, i, v)
				}
			}
		} else if v := strings.TrimSpace(cols[2]); v == "—" || v == "0" {
			t.Errorf("row %q has no Connect figure", line)
		}
	}
	if want := len(connectRowSpecs) * 2; rows != want {
		t.Errorf("table has %d rows, want %d", rows, want)
	}
	if !strings.Contains(md, "Goal (Connect ≥ 0.7 × raw franz-go, JsonConverter): source ") {
		t.Error("goal line missing")
	}

	doc, err := os.ReadFile(benchFile)
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	if !strings.HasPrefix(s, "# Benchmarks\n\npreamble\n\n"+brokerBlock+"\n## Connect\n\nhand-written\n") ||
		!strings.Contains(s, connectBeginMarker+"\n### Connect: latest run") || !strings.HasSuffix(s, connectEndMarker+"\n") {
		t.Errorf("BENCHMARKS.md not updated as expected:\n%s", s)
	}
}

// TestConnectDriversRoundTrip runs the raw drivers against an in-process
// broker: both producers write the same records (the pool covers them
// all), and the consumer reads back exactly the bytes written, decoding
// each record with --convert.
func TestConnectDriversRoundTrip(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a broker")
	}
	b := testkit.StartBroker(t, nil)
	ctx := testkit.Context(t, 2*time.Minute)
	for _, topic := range []string{"raw", "app"} {
		if err := createTopic(ctx, b.Addr, topic); err != nil {
			t.Fatal(err)
		}
	}
	base := ConnectDriverConfig{Brokers: b.Addr, Records: 5000, Warmup: 500, Converter: ConvJSON,
		Spec: DefaultConnectSpec, Seed: 7, Pool: 5000, Timeout: time.Minute}
	raw, app := base, base
	raw.Topic, app.Topic, app.Convert = "raw", "app", true
	pr, err := RunConnectProduce(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	pa, err := RunConnectProduce(ctx, app)
	if err != nil {
		t.Fatal(err)
	}
	if pr.Records != 4500 || pa.Records != 4500 || pr.TotalBytes != pa.TotalBytes || pr.TotalBytes < 5000*800 {
		t.Fatalf("produce results differ or are short:\n%+v\n%+v", pr, pa)
	}
	if err := sameRecords(ctx, b.Addr, "raw", "app", 5000); err != nil {
		t.Fatal(err)
	}
	// The whole topic fits in the first fetches: no warm-up to skip.
	raw.Warmup = 0
	for _, convert := range []bool{false, true} {
		c := raw
		c.Convert, c.ExpectBytes = convert, pr.TotalBytes
		res, err := RunConnectConsume(ctx, c)
		if err != nil {
			t.Fatalf("convert=%v: %v", convert, err)
		}
		if res.TotalBytes != pr.TotalBytes || res.Records != 5000 || res.EndUnixNano <= res.StartUnixNano {
			t.Fatalf("convert=%v: consume result %+v", convert, res)
		}
	}
	// A consumer that expects other bytes fails: the check can fail.
	c := raw
	c.ExpectBytes = pr.TotalBytes + 1
	if _, err := RunConnectConsume(ctx, c); err == nil || !strings.Contains(err.Error(), "key+value bytes") {
		t.Fatalf("byte count mismatch not reported: %v", err)
	}
	// A smaller pool cycles: as many bytes per cycle, other records.
	cyc := raw
	cyc.Topic, cyc.Pool, cyc.Records, cyc.Warmup = "app", 100, 200, 0
	if _, err := RunConnectProduce(ctx, cyc); err != nil {
		t.Fatal(err)
	}
}

func TestConnectDriverConfigValidate(t *testing.T) {
	ok := ConnectDriverConfig{Brokers: "b", Topic: "t", Records: 10, Warmup: 1, Converter: ConvJSON, Pool: 1, Timeout: time.Second}
	if err := ok.validate(); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(*ConnectDriverConfig){
		"warm-up all":   func(c *ConnectDriverConfig) { c.Warmup = 10 },
		"no records":    func(c *ConnectDriverConfig) { c.Records = 0 },
		"converter":     func(c *ConnectDriverConfig) { c.Converter = "protobuf" },
		"avro registry": func(c *ConnectDriverConfig) { c.Converter = ConvAvro },
		"pool":          func(c *ConnectDriverConfig) { c.Pool = 0 },
	} {
		c := ok
		mut(&c)
		if c.validate() == nil {
			t.Errorf("%s: accepted %+v", name, c)
		}
	}
}

func TestCommitEvery(t *testing.T) {
	for n, want := range map[int]int{1_000_000: 50_000, 100_000: 5_000, 21: 3, 19: 1, 23: 23} {
		if got := commitEvery(n); got != want || n%got != 0 {
			t.Errorf("commitEvery(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestCPUSamplerInterpolates(t *testing.T) {
	s := &cpuSampler{pid: -1}
	t0 := time.Unix(1000, 0)
	for i, c := range []time.Duration{0, 100, 100, 300} {
		s.add(t0.Add(time.Duration(i)*time.Second), c*time.Millisecond)
	}
	for _, tc := range []struct {
		from, to float64 // seconds after t0
		want     time.Duration
	}{
		{0, 3, 300 * time.Millisecond},
		{0.5, 1, 50 * time.Millisecond},
		{1, 2, 0},
		{2.5, 3, 100 * time.Millisecond},
		{-5, 10, 300 * time.Millisecond}, // clamped
		{2, 1, 0},                        // reversed: never negative
	} {
		at := func(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }
		if got := s.between(at(tc.from), at(tc.to)); got != tc.want {
			t.Errorf("between(%g, %g) = %v, want %v", tc.from, tc.to, got, tc.want)
		}
	}
}

// TestConnectReport renders a report from known phases: medians per
// column, ratios, the goal marks only on JsonConverter throughput rows.
func TestConnectReport(t *testing.T) {
	rep := &ConnectReport{Command: "fjord bench connect", Runs: 3, Records: 1000, Warmup: 100, Partitions: 8,
		Spec: "a:int64,b:string", Seed: 1, Converters: []string{ConvJSON, ConvAvro}}
	add := func(conv, phase string, rates ...float64) {
		for i, r := range rates {
			rep.Phases = append(rep.Phases, PhaseResult{Run: i + 1, Converter: conv, Phase: phase, Records: 900,
				RecordsPerSec: r, BrokerCPUSeconds: 0.0009, ClientCPUSeconds: 0.0009, Bytes: 500_000, FirstMs: 40, EndToEndMs: 900})
		}
	}
	add(ConvJSON, PhaseRawProduce, 100, 300, 200)
	add(ConvJSON, PhaseAppProduce, 150, 150, 150)
	add(ConvJSON, PhaseSource, 140, 150, 160) // 0.75 of raw
	add(ConvJSON, PhaseRawConsume, 400, 400, 400)
	add(ConvJSON, PhaseAppConsume, 300, 300, 300)
	add(ConvJSON, PhaseSink, 200, 200, 200) // 0.50 of raw
	add(ConvAvro, PhaseRawProduce, 1000)
	add(ConvAvro, PhaseSource, 100) // far below, but no goal for Avro
	rep.build()
	md := rep.Markdown()
	for _, want := range []string{
		"| datagen → topic (source) vs produce | JSON | rec/s | 200 | 150 | 150 | 0.75 ✓ | 1.00 |",
		"| topic → NullSink (sink) vs consume | JSON | rec/s | 400 | 300 | 200 | 0.50 ✗ | 0.67 |",
		"| CPU per record, producing side | JSON | µs | 2.00 | 2.00 | 2.00 | 1.00 | 1.00 |",
		"| source: POST → first record in topic | JSON | ms | — | — | 40 | — | — |",
		"| datagen → topic (source) vs produce | Avro | rec/s | 1,000 | — | 100 | 0.10 | — |",
		"| topic → NullSink (sink) vs consume | Avro | rec/s | — | — | — | — | — |",
		"key + value per record: JSON 500 B, Avro 500 B",
		"Goal (Connect ≥ 0.7 × raw franz-go, JsonConverter): source 0.75 ✓; sink 0.50 ✗.",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q\n%s", want, md)
		}
	}
	if got := (PhaseResult{Records: 0}).CPUMicrosPerRecord(); got != 0 || math.IsNaN(got) {
		t.Errorf("CPU per record of nothing = %v", got)
	}
	empty := &ConnectReport{Converters: []string{ConvAvro}}
	empty.build()
	if !strings.Contains(empty.Markdown(), "Goal: not evaluated") {
		t.Error("a report without JSON figures claims a goal")
	}
}

func TestReplaceConnectBlock(t *testing.T) {
	broker := beginMarker + "\nbroker\n" + endMarker + "\n"
	doc, err := ReplaceConnectBlock("# B\n\n"+broker, "one\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := "# B\n\n" + broker + "\n" + connectBeginMarker + "\none\n" + connectEndMarker + "\n"; doc != want {
		t.Fatalf("append:\n%q\nwant\n%q", doc, want)
	}
	doc2, err := ReplaceConnectBlock(doc+"after\n", "two")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(doc2, connectBeginMarker+"\ntwo\n"+connectEndMarker+"\nafter\n") || strings.Contains(doc2, "one") ||
		!strings.Contains(doc2, broker) {
		t.Fatalf("replace:\n%s", doc2)
	}
	// The broker's own rewrite leaves the Connect block alone.
	doc3, err := ReplaceGenerated(doc2, "broker 2")
	if err != nil || !strings.Contains(doc3, connectBeginMarker+"\ntwo\n") || !strings.Contains(doc3, "broker 2") {
		t.Fatalf("broker rewrite: %v\n%s", err, doc3)
	}
	for _, bad := range []string{
		connectEndMarker + "\n" + connectBeginMarker,
		connectBeginMarker + "\n",
		connectBeginMarker + "\n" + connectEndMarker + connectBeginMarker + "\n" + connectEndMarker,
	} {
		if _, err := ReplaceConnectBlock(bad, "x"); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

// FuzzReplaceConnectBlock: rewriting BENCHMARKS.md's Connect block keeps
// the text around it, holds exactly one block, and is idempotent.
func FuzzReplaceConnectBlock(f *testing.F) {
	f.Add("# Benchmarks\n\nintro\n", "| a | b |\n")
	f.Add("pre\n"+connectBeginMarker+"\nold\n"+connectEndMarker+"\npost\n", "new")
	f.Add(beginMarker+"\nx\n"+endMarker+"\n<!-- bench-connect:begin -->", "y")
	f.Fuzz(func(t *testing.T, doc, gen string) {
		if strings.Contains(gen, "<!-- bench") {
			t.Skip("generated text never contains markers")
		}
		out, err := ReplaceConnectBlock(doc, gen)
		if err != nil {
			return
		}
		if n := strings.Count(out, connectBeginMarker); n != 1 {
			t.Fatalf("%d blocks in %q", n, out)
		}
		if !strings.Contains(out, strings.TrimRight(gen, "\n")) {
			t.Fatalf("generated text missing from %q", out)
		}
		if i := strings.Index(doc, connectBeginPrefix); i >= 0 && !strings.HasPrefix(out, doc[:i]) {
			t.Fatalf("text before the block changed: %q → %q", doc, out)
		}
		again, err := ReplaceConnectBlock(out, gen)
		if err != nil || again != out {
			t.Fatalf("not idempotent: %v\n%q\n%q", err, out, again)
		}
	})
}

// TestConnectConfigValidate: the orchestrator refuses what it cannot run.
func TestConnectConfigValidate(t *testing.T) {
	ok := ConnectConfig{Records: 100, WarmupFrac: 0.1, Runs: 1, Converters: []string{ConvJSON, ConvAvro},
		Self: []string{"x"}, Poll: time.Millisecond}
	if err := ok.validate(); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(*ConnectConfig){
		"records":   func(c *ConnectConfig) { c.Records = 5 },
		"warm-up":   func(c *ConnectConfig) { c.WarmupFrac = 0.95 },
		"runs":      func(c *ConnectConfig) { c.Runs = 0 },
		"converter": func(c *ConnectConfig) { c.Converters = []string{"xml"} },
		"none":      func(c *ConnectConfig) { c.Converters = nil },
		"poll":      func(c *ConnectConfig) { c.Poll = 0 },
	} {
		c := ok
		mut(&c)
		if c.validate() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := RunConnect(context.Background(), ConnectConfig{}); err == nil {
		t.Error("RunConnect ran an empty config")
	}
}
