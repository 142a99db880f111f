package bench

// The mirror benchmark (`fjord bench mirror`, mirror*.go) measures issue
// 7's goal: mirroring Records records of Size bytes between two local
// clusters, beside a plain franz-go consume of the same topic from the
// source in the same run, and Apache Kafka's own MirrorMaker 2 on the same
// two clusters and the same topic.
//
// Two `fjord dev --no-connect` processes (one broker each, loopback) are
// the source and the target for every phase: the benchmark measures the
// mirrors, and both mirrors get the same brokers. The records are produced
// once, before anything is timed, into a topic of Partitions partitions on
// the source. Each run then does, one after another:
//
//	raw      `fjord bench consume` (franz-go, a process of its own) reads
//	         the topic from the start: records/s
//	fjord    `fjord mirror mm2.properties` (the benchmark's own binary, a
//	         process of its own), timed from the process start until the
//	         remote topic's end offsets sum to Records
//	mm2      Kafka's MirrorMaker 2 (scripts/mm2.sh run) the same way
//
// and, with the latency phase, for each mirror: a fresh source topic, the
// mirror started on it, records produced at LatencyRate with the produce
// time in each value, and a consumer on the target measuring consume time
// − produce time per record (p50, p99, max).
//
// Every mirror phase runs its own flow: fresh source and target aliases,
// so a fresh remote topic, worker group and internal topics, and no phase
// resumes from another's offsets.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Columns of the mirror report.
const (
	ColMirrorRaw   = "raw"   // franz-go consume of the source topic
	ColMirrorFjord = "fjord" // fjord mirror mm2.properties
	ColMirrorMM2   = "mm2"   // Apache Kafka's MirrorMaker 2
)

// Phases of the mirror report.
const (
	MirrorPhaseThroughput = "throughput"
	MirrorPhaseLatency    = "latency"
)

// mirrorTopic is the source topic every throughput phase mirrors.
const mirrorTopic = "bench-mirror"

// MirrorBenchConfig is one `fjord bench mirror`.
type MirrorBenchConfig struct {
	// Bin is the fjord binary run as both clusters (`fjord dev
	// --no-connect`) and as the mirror (`fjord mirror`).
	Bin string
	// Self and Env reach `fjord bench consume` (the raw phase's process).
	Self []string
	Env  []string

	SourceAddr, SourceHTTPAddr string
	TargetAddr, TargetHTTPAddr string

	// Mirrors are the mirrors measured, in order: ColMirrorFjord,
	// ColMirrorMM2. MirrorMaker 2 is left out, with the reason in the
	// report, when Java or its jars are missing, unless RequireMM2.
	Mirrors    []string
	MM2Script  string // scripts/mm2.sh
	RequireMM2 bool
	// Phases: MirrorPhaseThroughput (raw and each mirror) and/or
	// MirrorPhaseLatency.
	Phases []string

	Records    int
	Size       int
	Partitions int
	Runs       int
	TasksMax   int
	// Props are further mm2.properties keys, given to both mirrors.
	Props map[string]string
	Poll  time.Duration // end offsets of the remote topic

	LatencyRate     int
	LatencyDuration time.Duration
	// LatencyWarmup is the least time records flow through the mirror
	// before the latency clock starts.
	LatencyWarmup time.Duration

	// Limits measures loopback TCP and disk write throughput first.
	Limits        bool
	DiskTestBytes int64

	Dir                                   string
	Keep                                  bool
	StartTimeout, PhaseTimeout, StopGrace time.Duration
	Log                                   *slog.Logger

	CommandLine, Note string
	Quick             bool
	RecordMachine     bool
}

func (c *MirrorBenchConfig) validate() error {
	switch {
	case c.Records < 1:
		return fmt.Errorf("records %d: want ≥ 1", c.Records)
	case c.Size < 17 || c.Size > 900_000:
		// The latency records carry a timestamp, a sequence number and a
		// flag: 17 bytes.
		return fmt.Errorf("size %d: want 17..900000 bytes", c.Size)
	case c.Partitions < 1:
		return fmt.Errorf("partitions %d: want ≥ 1", c.Partitions)
	case c.Runs < 1:
		return fmt.Errorf("runs %d: want ≥ 1", c.Runs)
	case c.TasksMax < 1:
		return fmt.Errorf("tasks.max %d: want ≥ 1", c.TasksMax)
	case c.Poll <= 0:
		return errors.New("poll interval must be > 0")
	case c.PhaseTimeout <= 0:
		return errors.New("phase timeout must be > 0")
	case c.Dir == "":
		return errors.New("no data dir")
	case c.Bin == "":
		return errors.New("no fjord binary")
	case len(c.Phases) == 0:
		return errors.New("no phases")
	}
	for _, m := range c.Mirrors {
		if m != ColMirrorFjord && m != ColMirrorMM2 {
			return fmt.Errorf("mirror %q: want fjord or mm2", m)
		}
	}
	for _, p := range c.Phases {
		switch p {
		case MirrorPhaseThroughput:
			if len(c.Self) == 0 {
				return errors.New("the throughput phase needs the command that reaches `fjord bench consume`")
			}
		case MirrorPhaseLatency:
			if c.LatencyRate < 1 || c.LatencyRate > 1_000_000 {
				return fmt.Errorf("latency rate %d: want 1..1000000", c.LatencyRate)
			}
			if c.LatencyDuration <= 0 {
				return errors.New("latency duration must be > 0")
			}
		default:
			return fmt.Errorf("phase %q: want throughput or latency", p)
		}
	}
	for k := range c.Props {
		if strings.TrimSpace(k) == "" {
			return errors.New("an mm2.properties key is empty")
		}
	}
	return nil
}

// latencyRecords is how many records the timed part of a latency phase
// produces.
func (c *MirrorBenchConfig) latencyRecords() int {
	return max(1, int(float64(c.LatencyRate)*c.LatencyDuration.Seconds()))
}

// RunMirrorBench runs the benchmark. A phase that fails is reported with
// its error and the others still run.
func RunMirrorBench(ctx context.Context, cfg MirrorBenchConfig) (*MirrorReport, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	began := time.Now()
	rep := &MirrorReport{
		Command: cfg.CommandLine, Date: time.Now().UTC(), Runs: cfg.Runs, Quick: cfg.Quick, Note: cfg.Note,
		Records: cfg.Records, Size: cfg.Size, Partitions: cfg.Partitions, TasksMax: cfg.TasksMax,
		Mirrors: slices.Clone(cfg.Mirrors), Phases: slices.Clone(cfg.Phases), PollMs: ms(cfg.Poll),
		LatencyRate: cfg.LatencyRate, LatencySeconds: cfg.LatencyDuration.Seconds(),
		Props: mirrorBaseProps(cfg.TasksMax, cfg.Props),
	}
	if cfg.RecordMachine {
		rep.Machine = ReadMachine(nil)
	}
	if slices.Contains(cfg.Mirrors, ColMirrorMM2) {
		if err := prepareMM2(ctx, &cfg, rep); err != nil {
			if cfg.RequireMM2 || ctx.Err() != nil {
				return nil, fmt.Errorf("MirrorMaker 2: %w", err)
			}
			cfg.Log.Warn("MirrorMaker 2 not measured", "why", err)
			rep.MM2Skipped = err.Error()
			cfg.Mirrors = slices.DeleteFunc(slices.Clone(cfg.Mirrors), func(m string) bool { return m == ColMirrorMM2 })
		}
	}

	x := &mirrorBench{cfg: &cfg, rep: rep}
	defer x.close()
	if err := x.startClusters(ctx); err != nil {
		return nil, err
	}
	if cfg.Limits {
		measureMirrorLimits(&cfg, rep, filepath.Join(cfg.Dir, "source"))
	}
	produced := time.Now()
	if slices.Contains(cfg.Phases, MirrorPhaseThroughput) {
		if err := createS3Topic(ctx, x.srcAdm, mirrorTopic, cfg.Partitions); err != nil {
			return nil, err
		}
		cfg.Log.Info("producing the records (not timed)", "topic", mirrorTopic, "records", cfg.Records, "size", cfg.Size, "partitions", cfg.Partitions)
		if err := produceMirrorRecords(ctx, cfg.SourceAddr, mirrorTopic, cfg.Records, cfg.Size, cfg.Partitions, cfg.PhaseTimeout); err != nil {
			return nil, err
		}
	}
	x.timing(0, "setup (clusters, limits, produce)", began)
	cfg.Log.Info("set up", "seconds", round2(time.Since(began).Seconds()), "produce seconds", round2(time.Since(produced).Seconds()))

	// sampleLoad fills a cluster report's Load; borrow one for ours.
	load := &ClusterReport{}
	stopLoad := sampleLoad(load)
	defer stopLoad()
	for run := 1; run <= cfg.Runs; run++ {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		cfg.Log.Info("mirror benchmark", "run", run, "of", cfg.Runs, "records", cfg.Records)
		x.run = run
		if slices.Contains(cfg.Phases, MirrorPhaseThroughput) {
			x.phase(ctx, ColMirrorRaw, MirrorPhaseThroughput, x.rawPhase)
			for _, m := range cfg.Mirrors {
				x.phase(ctx, m, MirrorPhaseThroughput, func(ctx context.Context) (MirrorSample, error) { return x.throughputPhase(ctx, m) })
			}
		}
		if slices.Contains(cfg.Phases, MirrorPhaseLatency) {
			for _, m := range cfg.Mirrors {
				x.phase(ctx, m, MirrorPhaseLatency, func(ctx context.Context) (MirrorSample, error) { return x.latencyPhase(ctx, m) })
			}
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	stopLoad()
	rep.Load = load.Load
	rep.WallSeconds = time.Since(began).Seconds()
	rep.build()
	return rep, nil
}

// measureMirrorLimits measures the machine's loopback TCP and the disk
// under the source broker's data, for reading the figures against.
func measureMirrorLimits(cfg *MirrorBenchConfig, rep *MirrorReport, dir string) {
	var err error
	if rep.Limits.LoopbackMBps, err = MeasureLoopback(time.Second); err != nil {
		cfg.Log.Warn("loopback measurement failed", "err", err)
	}
	if rep.Limits.DiskWriteMBps, err = MeasureDiskWrite(dir, cfg.DiskTestBytes); err != nil {
		cfg.Log.Warn("disk measurement failed", "err", err)
	}
	rep.Limits.DiskDir = dir
}

// prepareMM2 checks that MirrorMaker 2 can run (Java, the script, its
// jars, fetched now so that no download is timed) and notes its version.
func prepareMM2(ctx context.Context, cfg *MirrorBenchConfig, rep *MirrorReport) error {
	if _, err := exec.LookPath("java"); err != nil {
		return errors.New("no java on PATH (MirrorMaker 2 needs Java 17)")
	}
	if _, err := os.Stat(cfg.MM2Script); err != nil {
		return fmt.Errorf("no %s: %w", cfg.MM2Script, err)
	}
	script := func(arg string) (string, error) {
		cmd := exec.CommandContext(ctx, cfg.MM2Script, arg)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if s := strings.TrimSpace(stderr.String()); s != "" {
			cfg.Log.Info(cfg.MM2Script+" "+arg, "stderr", oneLine(s, 600))
		}
		if err != nil {
			return "", fmt.Errorf("%s %s: %w: %s", cfg.MM2Script, arg, err, oneLine(stderr.String(), 400))
		}
		return strings.TrimSpace(string(out)), nil
	}
	if _, err := script("fetch"); err != nil {
		return err
	}
	v, err := script("version")
	if err != nil {
		return err
	}
	rep.MM2Version = v
	if out, err := exec.CommandContext(ctx, "java", "-version").CombinedOutput(); err == nil {
		rep.Java, _, _ = strings.Cut(strings.TrimSpace(string(out)), "\n")
	}
	return nil
}

// mirrorBench is the state every run shares.
type mirrorBench struct {
	cfg            *MirrorBenchConfig
	rep            *MirrorReport
	run            int
	src, dst       *running
	srcCPU, dstCPU *cpuSampler
	srcCl, dstCl   *kgo.Client
	srcAdm, dstAdm *kadm.Client
	verified       map[string]bool
}

// startClusters starts the source and the target, each a `fjord dev
// --no-connect` with its own data dir.
func (x *mirrorBench) startClusters(ctx context.Context) error {
	cfg := x.cfg
	var err error
	for _, c := range []struct {
		name, addr, http string
		r                **running
	}{{"source", cfg.SourceAddr, cfg.SourceHTTPAddr, &x.src}, {"target", cfg.TargetAddr, cfg.TargetHTTPAddr, &x.dst}} {
		t := &mirrorClusterTarget{name: c.name, bin: cfg.Bin, addr: c.addr, httpAddr: c.http}
		if *c.r, err = startTarget(ctx, t, filepath.Join(cfg.Dir, c.name), cfg.StartTimeout); err != nil {
			return err
		}
		cfg.Log.Info("cluster serving", "cluster", c.name, "addr", c.addr, "startup", (*c.r).startup.Round(time.Millisecond))
	}
	x.srcCPU = startCPUSampler(x.src.pid(), 10*time.Millisecond)
	x.dstCPU = startCPUSampler(x.dst.pid(), 10*time.Millisecond)
	if x.srcCl, err = kgo.NewClient(kgo.SeedBrokers(cfg.SourceAddr)); err != nil {
		return err
	}
	// The target's client lists a remote topic that does not exist when
	// a phase starts: with franz-go's default MetadataMinAge it would
	// learn of the topic up to 5 s late, and every phase's clock with it.
	if x.dstCl, err = kgo.NewClient(kgo.SeedBrokers(cfg.TargetAddr), kgo.MetadataMinAge(min(cfg.Poll, 100*time.Millisecond))); err != nil {
		return err
	}
	x.srcAdm, x.dstAdm = kadm.NewClient(x.srcCl), kadm.NewClient(x.dstCl)
	return nil
}

func (x *mirrorBench) close() {
	for _, s := range []*cpuSampler{x.srcCPU, x.dstCPU} {
		if s != nil {
			s.stop()
		}
	}
	for _, c := range []*kgo.Client{x.srcCl, x.dstCl} {
		if c != nil {
			c.Close()
		}
	}
	for _, r := range []*running{x.src, x.dst} {
		if r != nil {
			r.stop(x.cfg.StopGrace)
		}
	}
}

// phase runs one phase, recording its sample or its error and its wall
// time (set-up and clean-up included).
func (x *mirrorBench) phase(ctx context.Context, column, phase string, fn func(context.Context) (MirrorSample, error)) {
	began := time.Now()
	s, err := fn(ctx)
	x.timing(x.run, column+" "+phase, began)
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		x.cfg.Log.Error("failed", "run", x.run, "column", column, "phase", phase, "err", err)
		x.rep.Errors = append(x.rep.Errors, fmt.Sprintf("run %d: %s %s: %v", x.run, mirrorColumnName(column), phase, err))
		return
	}
	s.Run, s.Column, s.Phase = x.run, column, phase
	x.rep.Samples = append(x.rep.Samples, s)
	if phase == MirrorPhaseLatency {
		x.cfg.Log.Info("measured", "run", x.run, "column", column, "phase", phase, "records", s.Records,
			"p50 ms", round2(s.P50Ms), "p99 ms", round2(s.P99Ms), "max ms", round2(s.MaxMs), "rate", int64(s.RateHz))
		return
	}
	x.cfg.Log.Info("measured", "run", x.run, "column", column, "phase", phase, "records", s.Records,
		"rec/s", int64(s.RecordsPerSec()), "seconds", round2(s.Seconds), "first ms", round2(s.FirstMs))
}

func (x *mirrorBench) timing(run int, what string, began time.Time) {
	x.rep.Timings = append(x.rep.Timings, MirrorTiming{Run: run, What: what, Seconds: round2(time.Since(began).Seconds())})
}

// alive is nil while both clusters run.
func (x *mirrorBench) alive() error {
	for _, c := range []struct {
		name string
		r    *running
	}{{"the source cluster", x.src}, {"the target cluster", x.dst}} {
		select {
		case <-c.r.done:
			return fmt.Errorf("%s exited (%v): %s", c.name, c.r.waitErr, logTail(c.r.logPath))
		default:
		}
	}
	return nil
}

// settle waits until both brokers are idle — together under a tenth of a
// core over a quarter second — at most 15 s, so that a phase does not
// measure what the previous one left running (a stopped mirror's last
// commits, deleted topics, garbage collection).
func (x *mirrorBench) settle(ctx context.Context) {
	const window = 250 * time.Millisecond
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		from := time.Now()
		if !sleepCtx(ctx, window) {
			return
		}
		now := time.Now()
		if x.srcCPU.between(from, now)+x.dstCPU.between(from, now) < window/10 {
			return
		}
	}
	x.cfg.Log.Warn("the brokers are still busy before the next phase; measuring anyway")
}

// dropTopic deletes a topic a phase made (not timed), unless --keep.
func (x *mirrorBench) dropTopic(adm *kadm.Client, topic string) {
	if x.cfg.Keep {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := adm.DeleteTopics(ctx, topic)
	if err == nil {
		var r kadm.DeleteTopicResponse
		if r, err = resp.On(topic, nil); err == nil {
			err = r.Err
		}
	}
	if err != nil {
		x.cfg.Log.Warn("could not delete the topic", "topic", topic, "err", err)
	}
}
