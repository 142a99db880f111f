package bench

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// ClusterSample is one measurement of one setup in one run.
type ClusterSample struct {
	Setup    string   `json:"setup"`
	Run      int      `json:"run"`
	Kind     string   `json:"kind"` // startup, produce, latency, rss_peak
	Workload Workload `json:"workload"`
	Node     int32    `json:"node,omitempty"`
	Result   *Result  `json:"result,omitempty"`
	Ms       float64  `json:"ms,omitempty"`
	MB       float64  `json:"mb,omitempty"`
	// BrokersCPUSeconds is the CPU every node of the setup used while the
	// driver ran (its warm-up and client start included).
	BrokersCPUSeconds float64 `json:"brokers_cpu_seconds,omitempty"`
}

// ClusterReport is a whole `fjord bench cluster` run.
type ClusterReport struct {
	Command    string            `json:"command"`
	Date       time.Time         `json:"date"`
	Machine    Machine           `json:"machine"`
	Runs       int               `json:"runs"`
	Quick      bool              `json:"quick"`
	Note       string            `json:"note,omitempty"`
	Partitions int               `json:"partitions"`
	Workloads  []Workload        `json:"workloads"`
	Setups     []ClusterSetup    `json:"setups"`
	Latency    LatencySetup      `json:"latency"`
	Kills      int               `json:"kills"`
	FjordProps map[string]string `json:"fjord_props,omitempty"`
	// Load is the 1-minute load average, sampled every 5 s during the run.
	Load []float64 `json:"load,omitempty"`
	// ProbeFranzDefaults: the failover probe kept franz-go's backoffs.
	ProbeFranzDefaults bool             `json:"probe_franz_defaults,omitempty"`
	Figures            []Figure         `json:"figures"`
	Samples            []ClusterSample  `json:"samples"`
	Failovers          []FailoverSample `json:"failovers"`
	Errors             []string         `json:"errors,omitempty"`
}

// Issue 4's goals.
const (
	goalThroughputRatio = 0.5 // RF 3 acks=all ≥ 0.5 × RF 1 acks=1
	goalP99Ms           = 5   // RF 3 ack p99 at 1k rec/s
	goalFailoverMs      = 3000
)

// buildFigures turns the samples into table rows: one value per setup,
// the median over runs.
func (r *ClusterReport) buildFigures() {
	type key struct {
		kind figKind
		w    Workload
	}
	vals := map[key]map[string][]float64{}
	add := func(k key, setup string, v float64) {
		if vals[k] == nil {
			vals[k] = map[string][]float64{}
		}
		vals[k][setup] = append(vals[k][setup], v)
	}
	peak := map[string]map[int]float64{} // setup → run → summed peak RSS
	for _, s := range r.Samples {
		switch s.Kind {
		case "startup":
			add(key{kind: figStartup}, s.Setup, s.Ms)
		case "rss_peak":
			if peak[s.Setup] == nil {
				peak[s.Setup] = map[int]float64{}
			}
			peak[s.Setup][s.Run] += s.MB
		case "produce":
			add(key{figProduceRate, s.Workload}, s.Setup, s.Result.RecordsPerSec)
			add(key{figProduceMB, s.Workload}, s.Setup, s.Result.MBPerSec)
			if s.Result.Records > 0 {
				// Per timed record, though the CPU includes the warm-up:
				// comparable between setups, not an absolute cost.
				add(key{figBrokerCPU, s.Workload}, s.Setup, s.BrokersCPUSeconds*1e6/float64(s.Result.Records))
			}
		case "latency":
			add(key{figP50, s.Workload}, s.Setup, s.Result.P50Ms)
			add(key{figP99, s.Workload}, s.Setup, s.Result.P99Ms)
		}
	}
	for setup, runs := range peak {
		for _, v := range runs {
			add(key{kind: figRSSPeak}, setup, v)
		}
	}
	keys := []key{{kind: figStartup}, {kind: figRSSPeak}}
	for _, w := range r.Workloads {
		for _, k := range []figKind{figProduceRate, figProduceMB, figBrokerCPU, figP50, figP99} {
			keys = append(keys, key{k, w})
		}
	}
	r.Figures = nil
	for _, k := range keys {
		info := clusterFigInfo(k.kind)
		f := Figure{Name: info.name, Unit: info.unit, LowerIsBetter: info.lowerBetter, kind: k.kind,
			Values: map[string]float64{}, Samples: map[string][]float64{}}
		if k.w.Records > 0 {
			f.Workload = k.w.String()
			if k.kind == figP50 || k.kind == figP99 {
				f.Workload = fmt.Sprintf("%d rec/s × %s", r.Latency.Rate, sizeName(k.w.Size))
			}
		}
		for _, s := range r.Setups {
			if xs := vals[k][s.Name]; len(xs) > 0 {
				f.Samples[s.Name] = xs
				f.Values[s.Name] = Median(xs)
			}
		}
		r.Figures = append(r.Figures, f)
	}
}

// figBrokerCPU is the cluster table's own figure kind.
const figBrokerCPU figKind = 100

// figDesc is the element type of figInfo, named here.
type figDesc = struct {
	name, unit  string
	lowerBetter bool
}

func clusterFigInfo(k figKind) figDesc {
	switch k {
	case figStartup:
		return figDesc{"start-up (processes start → every broker unfenced)", "ms", true}
	case figRSSPeak:
		return figDesc{"RSS peak, all nodes (VmHWM summed)", "MB", true}
	case figBrokerCPU:
		return figDesc{"broker CPU during produce, all nodes", "µs/rec", true}
	}
	return figInfo[k]
}

// goalCell judges figure f against issue 4's goals; "" when it has none.
func (r *ClusterReport) goalCell(f Figure) string {
	rf1, ok1 := f.Values[SetupRF1.Name]
	rf3, ok3 := f.Values[SetupRF3.Name]
	mark := func(ok bool) string {
		if ok {
			return " ✓"
		}
		return " ✗"
	}
	switch f.kind {
	case figProduceRate, figProduceMB:
		if !ok1 || !ok3 || rf1 == 0 {
			return ""
		}
		return fmt.Sprintf("RF 3 ≥ %.1f × RF 1%s", goalThroughputRatio, mark(rf3 >= goalThroughputRatio*rf1))
	case figP99:
		if !ok3 {
			return ""
		}
		return fmt.Sprintf("RF 3 < %d ms%s", goalP99Ms, mark(rf3 < goalP99Ms))
	}
	return ""
}

// FailoverStats summarises one field of the failover samples.
func (r *ClusterReport) FailoverStats(field func(FailoverSample) float64) (p50, maxMs, minMs float64, ok bool) {
	if len(r.Failovers) == 0 {
		return 0, 0, 0, false
	}
	var xs []float64
	for _, f := range r.Failovers {
		xs = append(xs, field(f))
	}
	return Median(xs), slices.Max(xs), slices.Min(xs), true
}

func failoverMs(f FailoverSample) float64 { return f.FailoverMs }
func electedMs(f FailoverSample) float64  { return f.ElectedMs }

// Markdown renders the cluster block of BENCHMARKS.md.
func (r *ClusterReport) Markdown() string {
	var b strings.Builder
	b.WriteString("## Cluster: replication and failover (issue 4)\n\n")
	if r.Quick {
		b.WriteString("**Quick smoke run: small workloads, figures are not comparable to a full run.**\n\n")
	}
	if r.Note != "" {
		fmt.Fprintf(&b, "**Note:** %s\n\n", r.Note)
	}
	fmt.Fprintf(&b, "- Command: `%s`\n", r.Command)
	fmt.Fprintf(&b, "- Date: %s\n", r.Date.Format("2006-01-02 15:04 MST"))
	if m := r.Machine; m.CPUs > 0 {
		fmt.Fprintf(&b, "- Machine: %d CPUs (%s), %s memory, %s; %s; franz-go %s",
			m.CPUs, m.CPUModel, m.Memory, m.Kernel, m.GoVersion, m.FranzGo)
		if m.Java != "" {
			fmt.Fprintf(&b, "; %s", m.Java)
		}
		b.WriteString("\n")
	}
	if len(r.Load) > 0 {
		fmt.Fprintf(&b, "- Load average (1 min, sampled every 5 s, the benchmark's own processes included): %.1f–%.1f, median %.1f\n",
			slices.Min(r.Load), slices.Max(r.Load), Median(r.Load))
	}
	for _, s := range r.Setups {
		isr := ""
		if s.MinISR > 0 {
			isr = fmt.Sprintf(", min.insync.replicas=%d", s.MinISR)
		}
		what := fmt.Sprintf("%d `fjord broker` process(es), Fjord's defaults", s.Nodes)
		if len(r.FjordProps) > 0 {
			var kv []string
			for _, k := range slices.Sorted(maps.Keys(r.FjordProps)) {
				kv = append(kv, k+"="+r.FjordProps[k])
			}
			what = fmt.Sprintf("%d `fjord broker` process(es), Fjord's defaults but **%s**", s.Nodes, strings.Join(kv, ", "))
		}
		if s.Kafka {
			what = fmt.Sprintf("%d Apache Kafka 4.4 JVMs (%s, G1 as kafka-server-start.sh), Kafka's defaults", s.Nodes, strings.Join(kafkaJVMOpts[:2], " "))
		}
		fmt.Fprintf(&b, "- **%s**: %s, combined broker+controller roles on 127.0.0.2…; "+
			"topics with %d partitions, replication factor %d%s; producer acks=%s\n",
			setupColumn(s), what, r.Partitions, s.RF, isr, s.Acks)
	}
	var ws []string
	for _, w := range r.Workloads {
		ws = append(ws, w.String())
	}
	fmt.Fprintf(&b, "- Same franz-go driver processes as the broker table (one producer, defaults but acks); "+
		"workloads %s; median of %d run(s); ack latency at %d rec/s for %s (producer linger %s)\n",
		strings.Join(ws, " and "), r.Runs, r.Latency.Rate, r.Latency.Duration, r.Latency.Linger)
	if r.Kills > 0 {
		client := "franz-go with the Java producer's backoffs (retry.backoff.ms=100 doubling to retry.backoff.max.ms=1000, metadata refresh after 100 ms), linger 0"
		if r.ProbeFranzDefaults {
			client = "franz-go's default backoffs (250 ms doubling to 5 s, metadata min age 5 s), linger 0"
		}
		fmt.Fprintf(&b, "- Failover: on a fresh RF 3 cluster, %d times: SIGKILL the leader of the next partition while a probe "+
			"process writes to it one acks=all record at a time (%s); *failover* is the time from the signal "+
			"to the first acknowledgement after the process was reaped, *elected* the time until a surviving broker's "+
			"Metadata names a new leader (polled every 5 ms); then the node is restarted and the topic waited on to have a full ISR\n", r.Kills, client)
	}
	for _, e := range r.Errors {
		fmt.Fprintf(&b, "- **Error:** %s\n", oneLine(e, 400))
	}

	b.WriteString("\n| Figure | Workload | Unit |")
	for _, s := range r.Setups {
		fmt.Fprintf(&b, " %s |", setupColumn(s))
	}
	both := r.hasSetup(SetupRF1.Name) && r.hasSetup(SetupRF3.Name)
	if both {
		b.WriteString(" RF 3 ÷ RF 1 |")
	}
	vsKafka := r.hasSetup(SetupRF3.Name) && r.hasSetup(SetupKafkaRF3.Name)
	if vsKafka {
		b.WriteString(" Fjord RF 3 ÷ Kafka RF 3 |")
	}
	b.WriteString(" Goal |\n|---|---|---|")
	for range r.Setups {
		b.WriteString("---:|")
	}
	if both {
		b.WriteString("---:|")
	}
	if vsKafka {
		b.WriteString("---:|")
	}
	b.WriteString("---|\n")
	for _, f := range r.Figures {
		fmt.Fprintf(&b, "| %s | %s | %s |", f.Name, f.Workload, f.Unit)
		for _, s := range r.Setups {
			if v, ok := f.Values[s.Name]; ok {
				fmt.Fprintf(&b, " %s |", formatValue(v, f.Unit))
			} else {
				b.WriteString(" — |")
			}
		}
		if both {
			b.WriteString(" " + ratioOf(f, SetupRF3.Name, SetupRF1.Name) + " |")
		}
		if vsKafka {
			b.WriteString(" " + ratioOf(f, SetupRF3.Name, SetupKafkaRF3.Name) + " |")
		}
		fmt.Fprintf(&b, " %s |\n", r.goalCell(f))
	}

	if p50, mx, mn, ok := r.FailoverStats(failoverMs); ok {
		e50, emx, _, _ := r.FailoverStats(electedMs)
		fmt.Fprintf(&b, "\nFailover (leader SIGKILLed → first acks=all write acknowledged), %d kills: "+
			"**p50 %.0f ms, max %.0f ms** (min %.0f ms); goal < %d ms: %s. New leader elected: p50 %.0f ms, max %.0f ms.\n",
			len(r.Failovers), p50, mx, mn, goalFailoverMs, checkMark(mx < goalFailoverMs), e50, emx)
		// Combined roles: a killed leader is sometimes the active
		// controller too, and then a raft election and a fresh broker
		// session on the new controller come first.
		for _, ctl := range []bool{false, true} {
			var xs []float64
			for _, f := range r.Failovers {
				if f.Controller == ctl {
					xs = append(xs, f.FailoverMs)
				}
			}
			what := "leader only"
			if ctl {
				what = "leader that was also the active controller"
			}
			if len(xs) > 0 {
				fmt.Fprintf(&b, "- %s: %d kill(s), p50 %.0f ms, max %.0f ms\n", what, len(xs), Median(xs), slices.Max(xs))
			}
		}
		b.WriteString("\n")
		b.WriteString("| Kill | Partition | Killed node | Was active controller | Elected ms | Failover ms | New leader | Restart → full ISR ms |\n")
		b.WriteString("|---:|---:|---:|---|---:|---:|---:|---:|\n")
		for _, f := range r.Failovers {
			fmt.Fprintf(&b, "| %d | %d | %d | %s | %.0f | %.0f | %d | %.0f |\n",
				f.Kill, f.Partition, f.Killed, yesNo(f.Controller), f.ElectedMs, f.FailoverMs, f.NewLeader, f.RejoinMs)
		}
	} else if r.Kills > 0 {
		b.WriteString("\nFailover: not measured (see the errors above).\n")
	}
	b.WriteString("\n" + r.goalSummary())
	return b.String()
}

// setupColumn is a setup's table heading.
func setupColumn(s ClusterSetup) string {
	if s.Kafka {
		return "Kafka 4.4 " + strings.TrimPrefix(s.Name, "Kafka ")
	}
	return "Fjord " + s.Name
}

// ratioOf is f's value for setup a divided by b's, or a dash.
func ratioOf(f Figure, a, b string) string {
	va, oka := f.Values[a]
	vb, okb := f.Values[b]
	if !oka || !okb || vb == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f", va/vb)
}

func (r *ClusterReport) hasSetup(name string) bool {
	return slices.ContainsFunc(r.Setups, func(s ClusterSetup) bool { return s.Name == name })
}

func (r *ClusterReport) goalSummary() string {
	met, total := 0, 0
	var misses []string
	for _, f := range r.Figures {
		c := r.goalCell(f)
		if c == "" {
			continue
		}
		total++
		if strings.HasSuffix(c, "✓") {
			met++
		} else {
			misses = append(misses, fmt.Sprintf("%s %s %s", f.Name, f.Workload, f.Unit))
		}
	}
	if _, mx, _, ok := r.FailoverStats(failoverMs); ok {
		total++
		if mx < goalFailoverMs {
			met++
		} else {
			misses = append(misses, "failover max")
		}
	}
	if total == 0 {
		return "Goals: not evaluated — nothing measured.\n"
	}
	s := fmt.Sprintf("Goals (issue 4): %d of %d met.\n", met, total)
	if len(misses) > 0 {
		s += fmt.Sprintf("\nMissed: %s.\n", strings.Join(misses, "; "))
	}
	return s
}

func checkMark(ok bool) string {
	if ok {
		return "✓"
	}
	return "✗"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// The cluster block's markers in BENCHMARKS.md; the broker table's and
// the Connect block's are left alone.
const (
	clusterBeginMarker = "<!-- bench-cluster:begin — generated by `fjord bench cluster --write`; edit outside these markers -->"
	clusterEndMarker   = "<!-- bench-cluster:end -->"
	clusterBeginPrefix = "<!-- bench-cluster:begin"
)

// ReplaceClusterBlock returns doc with the cluster block replaced by
// generated, appending it when doc has none yet.
func ReplaceClusterBlock(doc, generated string) (string, error) {
	return clusterBlock.replace(doc, generated)
}

// WriteClusterBlock refreshes the cluster block of the file at path.
func WriteClusterBlock(path, generated string) error {
	return writeGenerated(path, generated, ReplaceClusterBlock)
}
