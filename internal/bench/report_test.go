package bench

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		if got := Median(c.in); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("Median(nil) should be NaN")
	}
	in := []float64{3, 1, 2}
	Median(in)
	if in[0] != 3 {
		t.Error("Median reordered its input")
	}
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 50 * time.Millisecond}, {0.99, 99 * time.Millisecond}, {1, 100 * time.Millisecond}, {0, time.Millisecond}} {
		if got := percentile(d, c.q); got != c.want {
			t.Errorf("percentile(1..100ms, %v) = %v, want %v", c.q, got, c.want)
		}
	}
	if got := percentile([]time.Duration{7}, 0.99); got != 7 {
		t.Errorf("percentile of one = %v", got)
	}
	if got := percentile(nil, 0.5); got != 0 {
		t.Errorf("percentile of none = %v", got)
	}
}

func TestFormatting(t *testing.T) {
	for in, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -1234: "-1,234"} {
		if got := thousands(in); got != want {
			t.Errorf("thousands(%d) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[int]string{1_000_000: "1 M", 200_000: "200 k", 1_500_000: "1.5 M", 123: "123", 12_345: "12345"} {
		if got := count(in); got != want {
			t.Errorf("count(%d) = %q, want %q", in, got, want)
		}
	}
	if got := sizeName(1024); got != "1 KiB" {
		t.Errorf("sizeName(1024) = %q", got)
	}
	if got := sizeName(100); got != "100 B" {
		t.Errorf("sizeName(100) = %q", got)
	}
}

func TestParseWorkloads(t *testing.T) {
	ws, err := parseWorkloads("1000000x100, 200000x1024")
	if err != nil || len(ws) != 2 || ws[0] != (Workload{1_000_000, 100}) || ws[1] != (Workload{200_000, 1024}) {
		t.Fatalf("parseWorkloads = %v, %v", ws, err)
	}
	for _, bad := range []string{"", "100", "x100", "100x", "-1x100", "10x0", "axb"} {
		if _, err := parseWorkloads(bad); err == nil {
			t.Errorf("parseWorkloads(%q) accepted", bad)
		}
	}
}

// fakeReport builds a report with hand-set medians to test ratios and goals.
func fakeReport(values map[figKind]map[string]float64) *Report {
	w := Workload{1000, 100}
	r := &Report{Targets: []string{"Fjord", "Kafka", "kfake"}, Workloads: []Workload{w}, Acks: []string{"1"}, Runs: 1}
	for _, k := range []figKind{figStartup, figProduceRate, figConsumeRate, figP99} {
		info := figInfo[k]
		f := Figure{Name: info.name, Unit: info.unit, LowerIsBetter: info.lowerBetter, kind: k, Values: values[k]}
		if k != figStartup {
			f.Workload = w.String() + ", acks=1"
		}
		r.Figures = append(r.Figures, f)
	}
	return r
}

func TestGoalsAndRatios(t *testing.T) {
	r := fakeReport(map[figKind]map[string]float64{
		figStartup:     {"Fjord": 50, "Kafka": 2000, "kfake": 10},          // ahead of Kafka
		figProduceRate: {"Fjord": 900_000, "Kafka": 400_000, "kfake": 1e6}, // behind kfake
		figConsumeRate: {"Fjord": 3e6, "Kafka": 1e6, "kfake": 2.1e6},       // 1.43× kfake: short of 1.5×
		figP99:         {"Fjord": 3, "Kafka": 2, "kfake": 1},               // behind Kafka
	})
	md := r.Markdown()
	for _, want := range []string{
		"| start-up (process start → Metadata) |  | ms | 50.00 | 2000 | 10.00 | 0.03 ✓ | 5.00 |",
		"| produce | 1 k × 100 B, acks=1 | rec/s | 900,000 | 400,000 | 1,000,000 | 2.25 ✓ | 0.90 ✗ |",
		"| consume | 1 k × 100 B, acks=1 | rec/s | 3,000,000 | 1,000,000 | 2,100,000 | 3.00 ✓ | 1.43 ✗ |",
		"| ack latency p99 | 1 k × 100 B, acks=1 | ms | 3.00 | 2.00 | 1.00 | 1.50 ✗ | 3.00 |",
		"ahead of Kafka on 3 of 4 figures",
		"≥ 1.0 × kfake (produce) on 0 of 1 figures",
		"≥ 1.5 × kfake (consume) on 0 of 1 figures",
		"Missed: produce 1 k × 100 B, acks=1 rec/s vs kfake; consume",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}

	// A target that failed has dashes, and no goal is counted against it.
	r = fakeReport(map[figKind]map[string]float64{
		figStartup: {"Kafka": 2000, "kfake": 10},
	})
	r.Errors = map[string]string{"Fjord": "Fjord exited before serving Metadata: unknown command \"dev\""}
	md = r.Markdown()
	for _, want := range []string{
		"**Fjord: not measured** — Fjord exited",
		"| start-up (process start → Metadata) |  | ms | — | 2000 | 10.00 | — | — |",
		"Goals: not evaluated",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestReplaceGenerated(t *testing.T) {
	got, err := ReplaceGenerated("# B\n\nintro\n", "table v1\n")
	if err != nil {
		t.Fatal(err)
	}
	want := "# B\n\nintro\n\n" + beginMarker + "\ntable v1\n" + endMarker + "\n"
	if got != want {
		t.Fatalf("first write:\n%q\nwant\n%q", got, want)
	}
	doc := got + "\n## Notes kept\n"
	got, err = ReplaceGenerated(doc, "table v2")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "table v2") || strings.Contains(got, "table v1") ||
		!strings.HasPrefix(got, "# B\n\nintro\n") || !strings.HasSuffix(got, "\n## Notes kept\n") {
		t.Fatalf("second write lost the surroundings or kept the old table:\n%s", got)
	}
	for _, bad := range []string{
		"x\n" + endMarker + "\n" + beginMarker + "\n",
		"x\n<!-- bench:begin -->\n",
		beginMarker + "\n" + endMarker + "\n" + beginMarker + "\n" + endMarker,
	} {
		if _, err := ReplaceGenerated(bad, "t"); err == nil {
			t.Errorf("ReplaceGenerated accepted broken markers in %q", bad)
		}
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"--runs":      "--runs",
		"1000000x100": "1000000x100",
		"":            "''",
		"a b":         "'a b'",
		"it's":        `'it'\''s'`,
		"$HOME":       "'$HOME'",
		"kafka,kfake": "kafka,kfake",
		"/tmp/x.json": "/tmp/x.json",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
