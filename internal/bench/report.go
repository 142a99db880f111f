package bench

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"
)

type figKind int

const (
	figStartup figKind = iota
	figRSSIdle
	figRSSPeak
	figRSSAfter
	figProduceRate
	figProduceMB
	figConsumeRate
	figConsumeMB
	figP50
	figP99
)

var figInfo = map[figKind]struct {
	name, unit  string
	lowerBetter bool
}{
	figStartup:     {"start-up (process start → Metadata)", "ms", true},
	figRSSIdle:     {"RSS after start", "MB", true},
	figRSSPeak:     {"RSS peak (VmHWM)", "MB", true},
	figRSSAfter:    {"RSS after load", "MB", true},
	figProduceRate: {"produce", "rec/s", false},
	figProduceMB:   {"produce", "MB/s", false},
	figConsumeRate: {"consume", "rec/s", false},
	figConsumeMB:   {"consume", "MB/s", false},
	figP50:         {"ack latency p50", "ms", true},
	figP99:         {"ack latency p99", "ms", true},
}

type figKey struct {
	Kind figKind
	W    Workload
	Acks string
}

// Figure is one row of the table: the median of each target's samples.
type Figure struct {
	Name          string               `json:"name"`
	Workload      string               `json:"workload,omitempty"`
	Unit          string               `json:"unit"`
	LowerIsBetter bool                 `json:"lower_is_better"`
	Values        map[string]float64   `json:"values"` // target → median
	Samples       map[string][]float64 `json:"samples"`
	kind          figKind
}

// LatencySetup states how ack latency was measured.
type LatencySetup struct {
	Rate     int           `json:"rate"`
	Duration time.Duration `json:"duration"`
	Linger   time.Duration `json:"linger"`
}

// Report is a whole benchmark run, ready to render.
type Report struct {
	Command    string            `json:"command"`
	Date       time.Time         `json:"date"`
	Machine    Machine           `json:"machine"`
	Limits     Limits            `json:"limits"`
	Runs       int               `json:"runs"`
	Quick      bool              `json:"quick"`
	Note       string            `json:"note,omitempty"`
	Partitions int               `json:"partitions"`
	Workloads  []Workload        `json:"workloads"`
	Acks       []string          `json:"acks"`
	Latency    LatencySetup      `json:"latency"`
	Targets    []string          `json:"targets"`
	Figures    []Figure          `json:"figures"`
	Errors     map[string]string `json:"errors,omitempty"` // target → why it has no (or partial) figures
	Details    []Detail          `json:"details"`          // every driver result, for the record
}

// Detail is one driver run: its result and the CPU time the broker used
// meanwhile (warm-up and client set-up included), which tells a
// client-bound figure from a broker-bound one.
type Detail struct {
	Target           string  `json:"target"`
	Run              int     `json:"run"`
	Result           Result  `json:"result"`
	BrokerCPUSeconds float64 `json:"broker_cpu_seconds"`
}

func buildFigures(cfg Config, targets []string, samples map[string][]sample) []Figure {
	keys := []figKey{{Kind: figStartup}, {Kind: figRSSIdle}, {Kind: figRSSPeak}, {Kind: figRSSAfter}}
	for _, w := range cfg.Workloads {
		for _, acks := range cfg.Acks {
			for _, k := range []figKind{figProduceRate, figProduceMB, figConsumeRate, figConsumeMB, figP50, figP99} {
				keys = append(keys, figKey{k, w, acks})
			}
		}
	}
	var figs []Figure
	for _, k := range keys {
		info := figInfo[k.Kind]
		f := Figure{
			Name: info.name, Unit: info.unit, LowerIsBetter: info.lowerBetter, kind: k.Kind,
			Values: map[string]float64{}, Samples: map[string][]float64{},
		}
		if k.W.Records > 0 {
			f.Workload = fmt.Sprintf("%s, acks=%s", k.W, k.Acks)
		}
		for _, t := range targets {
			for _, s := range samples[t] {
				if v, ok := s[k]; ok {
					f.Samples[t] = append(f.Samples[t], v)
				}
			}
			if len(f.Samples[t]) > 0 {
				f.Values[t] = Median(f.Samples[t])
			}
		}
		figs = append(figs, f)
	}
	return figs
}

// Median of xs (the mean of the middle two for an even count).
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

// goal is a target Fjord should meet on a figure, from issue 2.
type goal struct {
	against string
	factor  float64 // Fjord must be at least factor× better
}

func (f Figure) goals() []goal {
	g := []goal{{"Kafka", 1}}
	switch f.kind {
	case figProduceRate, figProduceMB:
		g = append(g, goal{"kfake", 1})
	case figConsumeRate, figConsumeMB:
		g = append(g, goal{"kfake", 1.5})
	}
	return g
}

// met reports whether Fjord meets g on f; ok is false when either value
// is missing.
func (f Figure) met(g goal) (met, ok bool) {
	fj, ok1 := f.Values["Fjord"]
	other, ok2 := f.Values[g.against]
	if !ok1 || !ok2 {
		return false, false
	}
	if f.LowerIsBetter {
		return fj*g.factor <= other, true
	}
	return fj >= other*g.factor, true
}

// Markdown renders the generated part of BENCHMARKS.md.
func (r *Report) Markdown() string {
	var b strings.Builder
	b.WriteString("## Latest run\n\n")
	if r.Quick {
		b.WriteString("**Quick smoke run: small workloads, figures are not comparable to a full run.**\n\n")
	}
	if r.Note != "" {
		fmt.Fprintf(&b, "**Note:** %s\n\n", r.Note)
	}
	fmt.Fprintf(&b, "- Command: `%s`\n", r.Command)
	fmt.Fprintf(&b, "- Date: %s\n", r.Date.Format("2006-01-02 15:04 MST"))
	if m := r.Machine; m.CPUs > 0 {
		fmt.Fprintf(&b, "- Machine: %d CPUs (%s), %s memory, %s; %s; %s; franz-go %s; %s\n",
			m.CPUs, m.CPUModel, m.Memory, m.Kernel, m.GoVersion, orNA(m.Java), m.FranzGo, orNA(m.Kafka))
	}
	if l := r.Limits; l.LoopbackMBps > 0 {
		fmt.Fprintf(&b, "- Machine limits: loopback TCP %.0f MB/s (one Go sender → one receiver); "+
			"sequential disk write %.0f MB/s (1 MiB writes + fdatasync, like dd conv=fdatasync) on the data dirs' filesystem\n",
			l.LoopbackMBps, l.DiskWriteMBps)
	}
	var ws []string
	for _, w := range r.Workloads {
		ws = append(ws, w.String())
	}
	fmt.Fprintf(&b, "- Workloads: %s; %d partitions, replication factor 1; acks %s; median of %d run(s); "+
		"ack latency at %d rec/s for %s (producer linger %s)\n",
		strings.Join(ws, " and "), r.Partitions, strings.Join(r.Acks, " and "), r.Runs,
		r.Latency.Rate, r.Latency.Duration, r.Latency.Linger)
	for _, t := range r.Targets {
		if e, ok := r.Errors[t]; ok {
			state := "not measured"
			if r.hasFigures(t) {
				state = "incomplete"
			}
			fmt.Fprintf(&b, "- **%s: %s** — %s\n", t, state, oneLine(e, 400))
		}
	}

	b.WriteString("\nMB = 10⁶ bytes of record values. Ratios are Fjord ÷ other: above 1 is better for " +
		"rec/s and MB/s, below 1 is better for ms and MB. ✓/✗ mark the issue's goals " +
		"(ahead of Kafka on every figure; produce ≥ kfake; consume ≥ 1.5 × kfake).\n\n")
	b.WriteString("| Figure | Workload | Unit |")
	for _, t := range r.Targets {
		fmt.Fprintf(&b, " %s |", displayName(t))
	}
	others := r.others()
	for _, o := range others {
		fmt.Fprintf(&b, " Fjord/%s |", o)
	}
	b.WriteString("\n|---|---|---|")
	for range len(r.Targets) + len(others) {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	for _, f := range r.Figures {
		fmt.Fprintf(&b, "| %s | %s | %s |", f.Name, f.Workload, f.Unit)
		for _, t := range r.Targets {
			v, ok := f.Values[t]
			if !ok {
				b.WriteString(" — |")
				continue
			}
			fmt.Fprintf(&b, " %s |", formatValue(v, f.Unit))
		}
		for _, o := range others {
			b.WriteString(" " + f.ratioCell(o) + " |")
		}
		b.WriteString("\n")
	}
	b.WriteString("\n" + r.goalSummary())
	return b.String()
}

func (r *Report) hasFigures(target string) bool {
	for _, f := range r.Figures {
		if _, ok := f.Values[target]; ok {
			return true
		}
	}
	return false
}

// others are the targets Fjord is compared with, present in this run.
func (r *Report) others() []string {
	if !slices.Contains(r.Targets, "Fjord") {
		return nil
	}
	var o []string
	for _, t := range r.Targets {
		if t != "Fjord" {
			o = append(o, t)
		}
	}
	return o
}

func (f Figure) ratioCell(other string) string {
	fj, ok1 := f.Values["Fjord"]
	ov, ok2 := f.Values[other]
	if !ok1 || !ok2 || ov == 0 {
		return "—"
	}
	cell := fmt.Sprintf("%.2f", fj/ov)
	for _, g := range f.goals() {
		if g.against != other {
			continue
		}
		if met, _ := f.met(g); met {
			cell += " ✓"
		} else {
			cell += " ✗"
		}
	}
	return cell
}

func (r *Report) goalSummary() string {
	if !slices.Contains(r.Targets, "Fjord") {
		return "Goals: Fjord was not part of this run.\n"
	}
	type tally struct{ met, total int }
	tallies := map[string]*tally{}
	var misses []string
	order := []string{}
	for _, f := range r.Figures {
		for _, g := range f.goals() {
			label := "ahead of Kafka"
			if g.against == "kfake" {
				label = fmt.Sprintf("≥ %.1f × kfake (%s)", g.factor, f.Name)
			}
			met, ok := f.met(g)
			if !ok {
				continue
			}
			if tallies[label] == nil {
				tallies[label] = &tally{}
				order = append(order, label)
			}
			tallies[label].total++
			if met {
				tallies[label].met++
			} else {
				misses = append(misses, fmt.Sprintf("%s %s %s vs %s", f.Name, f.Workload, f.Unit, g.against))
			}
		}
	}
	if len(order) == 0 {
		return "Goals: not evaluated — Fjord has no figures in this run.\n"
	}
	var b strings.Builder
	b.WriteString("Goals:")
	for i, l := range order {
		if i > 0 {
			b.WriteString(";")
		}
		fmt.Fprintf(&b, " %s on %d of %d figures", l, tallies[l].met, tallies[l].total)
	}
	b.WriteString(".\n")
	if len(misses) > 0 {
		fmt.Fprintf(&b, "\nMissed: %s.\n", strings.Join(misses, "; "))
	}
	return b.String()
}

func displayName(t string) string {
	if t == "Kafka" {
		return "Kafka 4.4"
	}
	return t
}

func formatValue(v float64, unit string) string {
	switch unit {
	case "rec/s":
		return thousands(int64(math.Round(v)))
	case "MB/s":
		return strconv.FormatFloat(v, 'f', 1, 64)
	case "MB":
		return strconv.FormatFloat(v, 'f', 0, 64)
	case "ms":
		if v >= 100 {
			return strconv.FormatFloat(v, 'f', 0, 64)
		}
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func count(n int) string {
	switch {
	case n >= 1_000_000 && n%100_000 == 0:
		return strconv.FormatFloat(float64(n)/1e6, 'f', -1, 64) + " M"
	case n >= 1000 && n%100 == 0:
		return strconv.FormatFloat(float64(n)/1e3, 'f', -1, 64) + " k"
	}
	return strconv.Itoa(n)
}

func sizeName(s int) string {
	if s >= 1024 && s%1024 == 0 {
		return strconv.Itoa(s/1024) + " KiB"
	}
	return strconv.Itoa(s) + " B"
}

func orNA(s string) string {
	if s == "" {
		return "n/a"
	}
	return s
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	s = strings.ReplaceAll(s, "|", "/")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// Machine describes where the numbers came from.
type Machine struct {
	CPUs      int    `json:"cpus"`
	CPUModel  string `json:"cpu_model"`
	Memory    string `json:"memory"`
	Kernel    string `json:"kernel"`
	GoVersion string `json:"go"`
	Java      string `json:"java,omitempty"`
	Kafka     string `json:"kafka,omitempty"`
	FranzGo   string `json:"franz_go"`
}

// ReadMachine gathers the header facts; the Java version only when Kafka
// is among the targets.
func ReadMachine(targets []Target) Machine {
	m := Machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), FranzGo: "unknown"}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = "Linux " + strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
				if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil {
					m.Memory = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
				}
			}
		}
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/twmb/franz-go" {
				m.FranzGo = d.Version
			}
		}
	}
	for _, t := range targets {
		if t.Name() == "Kafka" {
			m.Kafka = "Apache Kafka 4.4.0 (KRaft, " + strings.Join(kafkaJVMOpts[:2], " ") + ")"
			if out, err := exec.Command("java", "-version").CombinedOutput(); err == nil {
				m.Java, _, _ = strings.Cut(strings.TrimSpace(string(out)), "\n")
			}
		}
	}
	return m
}

// Markers delimit the generated part of BENCHMARKS.md; everything outside
// them is kept as written.
const (
	beginMarker = "<!-- bench:begin — generated by `fjord bench run --write`; edit outside these markers -->"
	endMarker   = "<!-- bench:end -->"
)

// ReplaceGenerated returns doc with the generated block replaced by
// generated, appending the block when doc has none yet.
func ReplaceGenerated(doc, generated string) (string, error) {
	block := beginMarker + "\n" + strings.TrimRight(generated, "\n") + "\n" + endMarker
	i := strings.Index(doc, "<!-- bench:begin")
	j := strings.Index(doc, endMarker)
	switch {
	case i < 0 && j < 0:
		if doc != "" && !strings.HasSuffix(doc, "\n") {
			doc += "\n"
		}
		if doc != "" {
			doc += "\n"
		}
		return doc + block + "\n", nil
	case i < 0 || j < i:
		return "", errors.New("BENCHMARKS.md has a mismatched bench:begin/bench:end marker pair; fix it by hand")
	}
	if strings.Contains(doc[j+len(endMarker):], "<!-- bench:begin") {
		return "", errors.New("BENCHMARKS.md has more than one generated block; keep one")
	}
	return doc[:i] + block + doc[j+len(endMarker):], nil
}

// WriteBenchmarksFile refreshes the generated block of the file at path.
func WriteBenchmarksFile(path, generated string) error {
	return writeGenerated(path, generated, ReplaceGenerated)
}
