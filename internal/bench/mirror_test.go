package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/internal/testkit"
	"github.com/fjordhq/fjord/mirror/mm2"
)

// TestMirrorReport renders a report from known samples: medians over the
// runs, Fjord ÷ raw with the 0.8 goal, Fjord ÷ MirrorMaker 2, the p99
// goal on Fjord's cell, and the goal line.
func TestMirrorReport(t *testing.T) {
	rep := &MirrorReport{Command: "fjord bench mirror", Runs: 3, Records: 1_000_000, Size: 100, Partitions: 4, TasksMax: 4,
		Mirrors: []string{ColMirrorFjord, ColMirrorMM2}, Phases: []string{MirrorPhaseThroughput, MirrorPhaseLatency},
		Props: mirrorBaseProps(4, nil), PollMs: 20, LatencyRate: 10_000, LatencySeconds: 10, MM2Version: "4.3.1",
		Java: `openjdk version "17"`, Limits: Limits{LoopbackMBps: 3000, DiskWriteMBps: 900}}
	through := func(col string, secs ...float64) {
		for i, s := range secs {
			rep.Samples = append(rep.Samples, MirrorSample{Run: i + 1, Column: col, Phase: MirrorPhaseThroughput,
				Records: 1_000_000, Seconds: s, FirstMs: 500, SteadyRecords: 900_000, SteadySeconds: s / 2,
				ProcessCPUSeconds: 2, SourceCPUSeconds: 1, TargetCPUSeconds: 1, RunQueueSeconds: s / 4})
		}
	}
	through(ColMirrorRaw, 0.5, 0.4, 0.6) // 2 M rec/s median
	through(ColMirrorFjord, 2, 2.5, 3)   // 400 k: 0.20 × raw
	through(ColMirrorMM2, 10, 8, 12)     // 100 k: Fjord 4 × MM2
	lat := func(col string, p99 ...float64) {
		for i, p := range p99 {
			rep.Samples = append(rep.Samples, MirrorSample{Run: i + 1, Column: col, Phase: MirrorPhaseLatency,
				Records: 100_000, Seconds: 10, Rate: 10_000, RateHz: 9_990, P50Ms: p / 4, P99Ms: p, MaxMs: 2 * p, ProcessCores: 0.5})
		}
	}
	lat(ColMirrorFjord, 20, 40, 30)
	lat(ColMirrorMM2, 1200, 1500, 1300)
	rep.Errors = []string{"run 2: MirrorMaker 2 latency: | pipes | are escaped"}
	rep.Verified = []string{"Fjord mirror: the 4 partitions hold the source's"}
	rep.Timings = []MirrorTiming{{0, "setup", 5}, {1, "fjord throughput", 3}, {2, "fjord throughput", 4}}
	rep.WallSeconds = 60
	rep.build()
	md := rep.Markdown()
	for _, want := range []string{
		"| Throughput: process start → all 1 M records on the target (raw: the plain consume, client creation → last record) | rec/s | 2,000,000 | 400,000 | 100,000 | 0.20 ✗ | 4.00 ✓ |",
		"| Throughput after the first records reached the target (start-up excluded; raw: the same consume) | rec/s | 3,600,000 | 720,000 | 180,000 | 0.20 | 4.00 |",
		"| Process start → first records on the target | ms | — | 500 | 500 | — | 1.00 |",
		"| CPU per record of the mirror process (raw: the consumer process) | µs | 2.00 | 2.00 | 2.00 | 1.00 | 1.00 |",
		"| Replication latency p50 at 10,000 rec/s (produce → consumed on the target) | ms | — | 7.50 | 325 | — | 0.02 |",
		"| Replication latency p99 at 10,000 rec/s | ms | — | 30.0 ✓ | 1,300 | — | 0.02 |",
		"| Rate achieved by the latency producer | rec/s | — | 9,990 | 9,990 | — | 1.00 |",
		"| CPU of the mirror process at that rate | cores | — | 0.50 | 0.50 | — | 1.00 |",
		"Goals (issue 7: ≥ 0.8 × raw, ahead of MirrorMaker 2, p99 < 1 s): Fjord mirror 0.20 × the plain consume's records/s ✗; " +
			"4.00 × MirrorMaker 2's ✓; replication latency p99 30.0 ms at 10,000 rec/s ✓.",
		"Apache Kafka 4.3.1's MirrorMaker 2",
		"- MirrorMaker 2 is Kafka 4.3.1's (every jar of that release), not 4.4.0's",
		"`emit.checkpoints.enabled=false`, `emit.heartbeats.enabled=false`",
		"`sync.topic.acls.enabled=false`, `tasks.max=4`",
		"- **Failed:** run 2: MirrorMaker 2 latency: / pipes / are escaped",
		"- Read back and checked: Fjord mirror: the 4 partitions hold the source's",
		"- Wall time: 60 s in all (setup 5.0 s, fjord throughput 7.0 s, summed over the runs",
		"1 M × 100 B values",
		"loopback TCP 3000 MB/s",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q\n%s", want, md)
		}
	}
	if strings.Contains(md, "%!") {
		t.Errorf("a row name was formatted with missing or extra arguments:\n%s", md)
	}
	if len(rep.Table) != len(mirrorRowSpecs) {
		t.Errorf("%d rows, want %d", len(rep.Table), len(mirrorRowSpecs))
	}

	// MirrorMaker 2 left out: its column is empty, the goal line says
	// why, and a missed p99 and a met raw ratio are marked.
	skipped := &MirrorReport{Records: 10, Partitions: 1, Mirrors: []string{ColMirrorFjord, ColMirrorMM2},
		Phases: []string{MirrorPhaseThroughput, MirrorPhaseLatency}, LatencyRate: 500, MM2Skipped: "no java on PATH",
		Samples: []MirrorSample{
			{Column: ColMirrorRaw, Phase: MirrorPhaseThroughput, Records: 10, Seconds: 1},
			{Column: ColMirrorFjord, Phase: MirrorPhaseThroughput, Records: 10, Seconds: 1.25},
			{Column: ColMirrorFjord, Phase: MirrorPhaseLatency, Records: 10, Seconds: 1, P99Ms: 1500},
		}}
	skipped.build()
	md = skipped.Markdown()
	for _, want := range []string{
		"- **MirrorMaker 2: not measured** — no java on PATH",
		"Fjord mirror 0.80 × the plain consume's records/s ✓",
		"vs MirrorMaker 2 not measured (no java on PATH)",
		"replication latency p99 1,500 ms at 500 rec/s ✗ (the goal is stated at 10,000 rec/s)",
		"| ms | — | 1,500 ✗ | — | — | — |",
		"`fjord mirror mm2.properties` (this binary) only",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report without MirrorMaker 2 lacks %q\n%s", want, md)
		}
	}

	none := &MirrorReport{Phases: []string{MirrorPhaseLatency}}
	none.build()
	if md := none.Markdown(); !strings.Contains(md, "replication latency not measured") || strings.Contains(md, "Throughput") {
		t.Errorf("latency-only report with nothing measured:\n%s", md)
	}
}

func TestReplaceMirrorBlock(t *testing.T) {
	others := beginMarker + "\nbroker\n" + endMarker + "\n\n" + s3BeginMarker + "\ns3\n" + s3EndMarker + "\n"
	doc, err := ReplaceMirrorBlock("# B\n\n"+others, "one\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := "# B\n\n" + others + "\n" + mirrorBeginMarker + "\none\n" + mirrorEndMarker + "\n"; doc != want {
		t.Fatalf("append:\n%q\nwant\n%q", doc, want)
	}
	doc2, err := ReplaceMirrorBlock(doc+"after\n", "two")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(doc2, mirrorBeginMarker+"\ntwo\n"+mirrorEndMarker+"\nafter\n") || strings.Contains(doc2, "one") ||
		!strings.HasPrefix(doc2, "# B\n\n"+others) {
		t.Fatalf("replace:\n%s", doc2)
	}
	// The other benchmarks' rewrites leave the mirror block alone.
	doc3, err := ReplaceS3Block(doc2, "s3 2")
	if err != nil || !strings.Contains(doc3, mirrorBeginMarker+"\ntwo\n") || !strings.Contains(doc3, "s3 2") {
		t.Fatalf("other rewrites: %v\n%s", err, doc3)
	}
	for _, bad := range []string{
		mirrorEndMarker + "\n" + mirrorBeginMarker,
		mirrorBeginMarker + "\n",
		mirrorBeginMarker + "\n" + mirrorEndMarker + mirrorBeginMarker + "\n" + mirrorEndMarker,
	} {
		if _, err := ReplaceMirrorBlock(bad, "x"); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

// TestMirrorBenchConfigValidate: the orchestrator refuses what it cannot
// run, before starting anything.
func TestMirrorBenchConfigValidate(t *testing.T) {
	ok := MirrorBenchConfig{Bin: "fjord", Self: []string{"fjord", "bench"}, Records: 1000, Size: 100, Partitions: 4, Runs: 1,
		TasksMax: 4, Poll: time.Millisecond, PhaseTimeout: time.Minute, Dir: "d", Mirrors: []string{"fjord", "mm2"},
		Phases: []string{"throughput", "latency"}, LatencyRate: 1000, LatencyDuration: time.Second}
	if err := ok.validate(); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(*MirrorBenchConfig){
		"records":    func(c *MirrorBenchConfig) { c.Records = 0 },
		"size":       func(c *MirrorBenchConfig) { c.Size = 16 },
		"partitions": func(c *MirrorBenchConfig) { c.Partitions = 0 },
		"runs":       func(c *MirrorBenchConfig) { c.Runs = 0 },
		"tasks":      func(c *MirrorBenchConfig) { c.TasksMax = 0 },
		"poll":       func(c *MirrorBenchConfig) { c.Poll = 0 },
		"timeout":    func(c *MirrorBenchConfig) { c.PhaseTimeout = 0 },
		"dir":        func(c *MirrorBenchConfig) { c.Dir = "" },
		"bin":        func(c *MirrorBenchConfig) { c.Bin = "" },
		"mirror":     func(c *MirrorBenchConfig) { c.Mirrors = []string{"mm1"} },
		"phase":      func(c *MirrorBenchConfig) { c.Phases = []string{"speed"} },
		"no phases":  func(c *MirrorBenchConfig) { c.Phases = nil },
		"no self":    func(c *MirrorBenchConfig) { c.Self = nil },
		"rate":       func(c *MirrorBenchConfig) { c.LatencyRate = 0 },
		"duration":   func(c *MirrorBenchConfig) { c.LatencyDuration = 0 },
		"prop":       func(c *MirrorBenchConfig) { c.Props = map[string]string{" ": "x"} },
	} {
		c := ok
		c.Mirrors, c.Phases = slices.Clone(ok.Mirrors), slices.Clone(ok.Phases)
		mut(&c)
		if c.validate() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// Without the throughput phase the consume driver is not needed.
	lat := ok
	lat.Phases, lat.Self = []string{"latency"}, nil
	if err := lat.validate(); err != nil {
		t.Errorf("latency only: %v", err)
	}
	if _, err := RunMirrorBench(context.Background(), MirrorBenchConfig{}); err == nil {
		t.Error("RunMirrorBench ran an empty config")
	}
}

// TestMirrorProperties: every phase's mm2.properties, as Fjord's own
// reader takes it, is one enabled flow of the source topic between fresh
// aliases with the shared keys, and the remote topic is named as the
// default replication policy names it.
func TestMirrorProperties(t *testing.T) {
	x := &mirrorBench{cfg: &MirrorBenchConfig{SourceAddr: "127.0.0.1:1", TargetAddr: "127.0.0.1:2"},
		rep: &MirrorReport{Props: mirrorBaseProps(3, map[string]string{"tasks.max": "2",
			"SOURCE.consumer.fetch.max.bytes": "1", "TARGET.producer.linger.ms": "3", "SOURCE->TARGET.offset.lag.max": "7"})}}
	seen := map[string]bool{}
	for _, col := range []string{ColMirrorFjord, ColMirrorMM2} {
		for _, phase := range []string{MirrorPhaseThroughput, MirrorPhaseLatency} {
			for run := 1; run <= 2; run++ {
				f := newMirrorFlow(col, phase, run, mirrorTopic)
				for _, alias := range []string{f.source, f.target} {
					if seen[alias] {
						t.Errorf("alias %s used by two phases", alias)
					}
					seen[alias] = true
				}
				path := filepath.Join(t.TempDir(), "mm2.properties")
				if err := writeMM2Properties(path, x.mm2Properties(f)); err != nil {
					t.Fatal(err)
				}
				c, err := mm2.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				flows := c.Flows()
				want := mm2.Flow{Source: f.source, Target: f.target}
				if len(flows) != 1 || flows[0] != want || !c.Enabled(want) {
					t.Fatalf("%s: flows %v, want only %v, enabled", path, flows, want)
				}
				conn := c.ConnectorConfig(want, mm2.SourceConnector)
				for k, v := range map[string]string{
					"topics": mirrorTopic, "tasks.max": "2", "emit.heartbeats.enabled": "false",
					"sync.topic.acls.enabled": "false", "replication.factor": "1",
					"source.cluster.bootstrap.servers": "127.0.0.1:1", "target.cluster.bootstrap.servers": "127.0.0.1:2",
					"source.consumer.fetch.max.bytes": "1", "target.producer.linger.ms": "3", "offset.lag.max": "7",
				} {
					if conn[k] != v {
						t.Errorf("%s: connector %s = %q, want %q", f.source, k, conn[k], v)
					}
				}
				if got := c.WorkerConfig(want)["group.id"]; got != f.source+"-mm2" {
					t.Errorf("worker group %q", got)
				}
			}
		}
	}
	if f := newMirrorFlow(ColMirrorFjord, MirrorPhaseThroughput, 1, mirrorTopic); f.remoteTopic() != "fjord-r1.bench-mirror" {
		t.Errorf("remote topic %s", f.remoteTopic())
	}
}

// TestLatencyCollector: values carry their produce time, sequence and
// part; the collector keeps the first copy of each timed record, counts
// duplicates, warm-up records and foreign records.
func TestLatencyCollector(t *testing.T) {
	at := time.Unix(1_700_000_000, 123_456_789)
	v := make([]byte, 100)
	encodeLatencyValue(v, at, 7, latTimed)
	if got, seq, kind, ok := decodeLatencyValue(v); !ok || !got.Equal(at) || seq != 7 || kind != latTimed {
		t.Fatalf("decode = %v %d %d %v", got, seq, kind, ok)
	}
	for _, bad := range [][]byte{v[:16], append(slices.Clone(v[:16]), 9)} {
		if _, _, _, ok := decodeLatencyValue(bad); ok {
			t.Errorf("decoded %x", bad)
		}
	}
	rec := func(sent time.Time, seq uint64, kind byte) *kgo.Record {
		b := make([]byte, 100)
		encodeLatencyValue(b, sent, seq, kind)
		return &kgo.Record{Value: b}
	}
	c := newLatencyCollector(3)
	base := time.Unix(1000, 0)
	c.add(base.Add(5*time.Millisecond), []*kgo.Record{rec(base, 0, latWarm), rec(base, 1, latWarm)})
	c.add(base.Add(30*time.Millisecond), []*kgo.Record{rec(base.Add(10*time.Millisecond), 0, latTimed), rec(base.Add(20*time.Millisecond), 2, latTimed)})
	warm, timed, first, err := c.state()
	if warm != 2 || timed != 2 || !first.Equal(base.Add(5*time.Millisecond)) || err != nil {
		t.Fatalf("state = %d %d %v %v", warm, timed, first, err)
	}
	c.add(base.Add(90*time.Millisecond), []*kgo.Record{rec(base, 0, latTimed), rec(base.Add(40*time.Millisecond), 1, latTimed)})
	lat, dups := c.result()
	if want := []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond}; !slices.Equal(lat, want) || dups != 1 {
		t.Errorf("latencies %v, duplicates %d; want %v, 1", lat, dups, want)
	}
	c.add(base, []*kgo.Record{{Value: []byte("not ours")}, rec(base, 3, latTimed)})
	if _, _, _, err := c.state(); err == nil || !strings.Contains(err.Error(), "2 records") {
		t.Errorf("foreign records: %v", err)
	}
}

// TestVerifyMirrored copies a topic record for record (timestamps kept)
// on one broker and checks that the copy passes and that a copy with one
// record changed, or one missing, does not.
func TestVerifyMirrored(t *testing.T) {
	testkit.SkipShort(t, "starts a broker")
	b := testkit.StartBroker(t, nil)
	ctx := testkit.Context(t, time.Minute)
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := testkit.Admin(t, b.Addr)
	const parts, n = 3, 300
	for _, topic := range []string{"src", "good", "changed", "short"} {
		if err := createS3Topic(ctx, adm, topic, parts); err != nil {
			t.Fatal(err)
		}
	}
	base := time.UnixMilli(1_700_000_000_000)
	for i := range n {
		for _, topic := range []string{"src", "good", "changed", "short"} {
			v := fmt.Appendf(nil, "value-%d", i)
			if topic == "changed" && i == 200 {
				v = []byte("value-x")
			}
			if topic == "short" && i == n-1 {
				continue
			}
			r := &kgo.Record{Topic: topic, Partition: int32(i % parts), Value: v, Timestamp: base.Add(time.Duration(i) * time.Millisecond)}
			if i%7 == 0 {
				r.Key = []byte("k")
			}
			if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	msg, err := verifyMirrored(ctx, b.Addr, b.Addr, "src", "good", parts, time.Minute)
	if err != nil || !strings.Contains(msg, "300 records") {
		t.Fatalf("good copy: %q, %v", msg, err)
	}
	for _, bad := range []string{"changed", "short"} {
		if _, err := verifyMirrored(ctx, b.Addr, b.Addr, "src", bad, parts, time.Minute); err == nil {
			t.Errorf("%s copy accepted", bad)
		}
	}
}

// TestQuickMirrorBench is the end-to-end smoke test of `fjord bench mirror
// --quick` (with fewer records): two real `fjord dev --no-connect`
// clusters and `fjord mirror` processes (built from cmd/fjord), the raw
// consume driver as a process. The raw and Fjord figures of both phases
// must be measured, Fjord's copy read back and checked, nothing may fail,
// and --write must add the mirror block without touching the others.
// MirrorMaker 2 runs, and must be measured, with FJORD_KAFKA_TESTS=1
// (Java 17 and Maven); otherwise the script is missing and the report
// must say MirrorMaker 2 was not measured, and why.
func TestQuickMirrorBench(t *testing.T) {
	testkit.SkipShort(t, "starts two fjord dev clusters and fjord mirror for ~20 s")
	bin := testkit.FjordBinary(t)
	dir := t.TempDir()
	benchFile := filepath.Join(dir, "BENCHMARKS.md")
	others := "# Benchmarks\n\npreamble\n\n" + s3BeginMarker + "\ns3 table\n" + s3EndMarker + "\n"
	if err := os.WriteFile(benchFile, []byte(others), 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "no-mm2.sh")
	kafka := os.Getenv("FJORD_KAFKA_TESTS") != ""
	if kafka {
		script = filepath.Join(testkit.RepoRoot(t), "scripts", "mm2.sh")
	}
	const records = 40_000
	jsonFile := filepath.Join(dir, "report.json")
	cmd := NewCommand(testSelf(t), []string{childEnv, childGORACE})
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"mirror", "--quick", "--records", fmt.Sprint(records), "--latency-duration", "1s",
		"--fjord-bin", bin, "--mm2-script", script,
		"--source-port", freePort(t), "--source-http-port", freePort(t),
		"--target-port", freePort(t), "--target-http-port", freePort(t),
		"--dir", filepath.Join(dir, "data"),
		"--write", "--benchmarks-file", benchFile,
		"--json", jsonFile,
	})
	start := time.Now()
	if err := cmd.Execute(); err != nil {
		t.Fatalf("bench mirror: %v\n%s", err, out.String())
	}
	md := out.String()
	t.Logf("took %s\n%s", time.Since(start).Round(time.Millisecond), md)

	var rep MirrorReport
	b, err := os.ReadFile(jsonFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	for _, e := range rep.Errors {
		t.Errorf("failed: %s", e)
	}
	type key struct{ col, phase string }
	want := []key{{ColMirrorRaw, MirrorPhaseThroughput}, {ColMirrorFjord, MirrorPhaseThroughput}, {ColMirrorFjord, MirrorPhaseLatency}}
	if kafka {
		want = append(want, key{ColMirrorMM2, MirrorPhaseThroughput}, key{ColMirrorMM2, MirrorPhaseLatency})
	} else if !strings.Contains(md, "**MirrorMaker 2: not measured** — no "+script) {
		t.Error("the report does not say why MirrorMaker 2 was not measured")
	}
	for _, k := range want {
		var found bool
		for _, s := range rep.Samples {
			if s.Column != k.col || s.Phase != k.phase {
				continue
			}
			found = true
			switch k.phase {
			case MirrorPhaseThroughput:
				if s.Records != records || s.Seconds <= 0 || s.ProcessCPUSeconds <= 0 {
					t.Errorf("%v: %+v; want %d records", k, s, records)
				}
			case MirrorPhaseLatency:
				// One timed second at the rate.
				if s.Records != int64(rep.LatencyRate) || s.P50Ms <= 0 || s.P99Ms < s.P50Ms || s.MaxMs < s.P99Ms {
					t.Errorf("%v: %+v", k, s)
				}
			}
		}
		if !found {
			t.Errorf("%v not measured", k)
		}
	}
	// One read-back per mirror, after its first throughput phase.
	mirrors := 1
	if kafka {
		mirrors = 2
	}
	if len(rep.Verified) != mirrors {
		t.Errorf("read back %v", rep.Verified)
	}
	if !strings.Contains(md, "Goals (issue 7: ≥ 0.8 × raw, ahead of MirrorMaker 2, p99 < 1 s): Fjord mirror ") {
		t.Error("goal line missing")
	}
	doc, err := os.ReadFile(benchFile)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(doc); !strings.HasPrefix(s, others) ||
		!strings.Contains(s, mirrorBeginMarker+"\n## Mirror (issue 7)") || !strings.HasSuffix(s, mirrorEndMarker+"\n") {
		t.Errorf("BENCHMARKS.md not updated as expected:\n%s", s)
	}
}
