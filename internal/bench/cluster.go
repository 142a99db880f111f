package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Cluster benchmark (issue 4's Speed section): the same franz-go drivers
// as `fjord bench run`, against setups started one after the other:
//
//   - "RF 1": one `fjord broker` (combined roles, a one-voter quorum),
//     topics with replication factor 1, producer acks=1;
//   - "RF 3": three `fjord broker` processes on 127.0.0.2-4, topics with
//     replication factor 3 and min.insync.replicas=2, producer acks=all;
//   - "Kafka RF 3": the same on three Apache Kafka 4.4 JVMs, the reference.
//
// Then, on a fresh three-node cluster, the failover time: the leader of a
// partition is SIGKILLed while a probe process writes to that partition
// one acks=all record at a time; the time from the signal to the first
// acknowledgement after the process was reaped is one sample. The node is
// restarted and the topic brought back to a full ISR before the next
// kill, which picks the next partition (and so, usually, another node).

// ClusterSetup names one side of the comparison.
type ClusterSetup struct {
	Name  string `json:"name"`
	Nodes int    `json:"nodes"`
	RF    int    `json:"rf"`
	Acks  string `json:"acks"`
	// MinISR is the topics' min.insync.replicas (0: the default, 1).
	MinISR int `json:"min_isr,omitempty"`
	// Kafka runs Apache Kafka 4.4 nodes instead of Fjord's.
	Kafka bool `json:"kafka,omitempty"`
}

// The two setups issue 4 compares.
var (
	SetupRF1 = ClusterSetup{Name: "RF 1", Nodes: 1, RF: 1, Acks: "1"}
	SetupRF3 = ClusterSetup{Name: "RF 3", Nodes: 3, RF: 3, Acks: "all", MinISR: 2}
	// SetupKafkaRF3 is SetupRF3 on Apache Kafka 4.4 (its own defaults,
	// 9 s broker session): the reference for RF 3's figures.
	SetupKafkaRF3 = ClusterSetup{Name: "Kafka RF 3", Nodes: 3, RF: 3, Acks: "all", MinISR: 2, Kafka: true}
)

// ClusterBenchConfig is one `fjord bench cluster` run.
type ClusterBenchConfig struct {
	Bin string // fjord binary run as `fjord broker`
	// FjordProps are server properties for every Fjord node over the
	// generated ones (an experiment, e.g. broker.session.timeout.ms; the
	// report lists them).
	FjordProps map[string]string
	// KafkaScript is scripts/kafka.sh: it fetches Kafka's jars (once)
	// and prints their classpath, for SetupKafkaRF3.
	KafkaScript string
	Dir         string
	BasePort    int // client port; controller +1, HTTP +2, on every node's address
	Setups      []ClusterSetup
	Workloads   []Workload
	Runs        int
	// WarmupFrac of each workload is produced before the clock starts.
	WarmupFrac float64

	LatencyRate     int
	LatencyDuration time.Duration
	LatencyLinger   time.Duration

	Kills         int           // failover samples (0: no failover phase)
	ProbeInterval time.Duration // the probe starts at most one write per interval
	// ProbeFranzDefaults runs the probe with franz-go's own backoffs
	// rather than the Java producer's (ProbeConfig.FranzDefaults).
	ProbeFranzDefaults bool
	FailoverTimeout    time.Duration // per kill, signal → first ack
	RejoinTimeout      time.Duration // per kill, restart → full ISR

	StartTimeout  time.Duration
	DriverTimeout time.Duration
	StopGrace     time.Duration
	Keep          bool // keep data dirs (else removed after each cluster)

	Self          []string // command prefix reaching the bench subcommands
	Env           []string
	Log           *slog.Logger
	CommandLine   string
	Quick         bool
	Note          string
	RecordMachine bool
}

func (c *ClusterBenchConfig) validate() error {
	switch {
	case c.Bin == "":
		return errors.New("cluster bench: no fjord binary")
	case len(c.Self) == 0:
		return errors.New("cluster bench: Self is empty")
	case c.Runs < 1:
		return fmt.Errorf("runs %d: want >= 1", c.Runs)
	case c.BasePort < 1 || c.BasePort > 65533:
		return fmt.Errorf("base port %d: want 1..65533", c.BasePort)
	case len(c.Setups) == 0:
		return errors.New("cluster bench: no setups")
	case c.Kills < 0:
		return fmt.Errorf("kills %d: want >= 0", c.Kills)
	}
	return nil
}

// RunClusterBench runs every setup Runs times, then the failover phase,
// and returns the report. A setup that fails is reported with its error,
// and the other figures are still measured.
func RunClusterBench(ctx context.Context, cfg ClusterBenchConfig) (*ClusterReport, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	rep := &ClusterReport{
		Command: cfg.CommandLine, Date: time.Now().UTC(), Runs: cfg.Runs, Quick: cfg.Quick, Note: cfg.Note,
		Partitions: Partitions, Workloads: cfg.Workloads, Setups: cfg.Setups,
		Latency: LatencySetup{Rate: cfg.LatencyRate, Duration: cfg.LatencyDuration, Linger: cfg.LatencyLinger},
		Kills:   cfg.Kills, ProbeFranzDefaults: cfg.ProbeFranzDefaults, FjordProps: cfg.FjordProps,
	}
	if cfg.RecordMachine {
		var targets []Target
		if slices.ContainsFunc(cfg.Setups, func(s ClusterSetup) bool { return s.Kafka }) {
			targets = append(targets, &kafkaTarget{}) // for the Java and Kafka versions
		}
		rep.Machine = ReadMachine(targets)
	}
	stopLoad := sampleLoad(rep)
	defer stopLoad()
	var kafkaCP string
	kafkaBroken := false
	for run := 1; run <= cfg.Runs; run++ {
		for _, s := range cfg.Setups {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			var kafka *kafkaRuntime
			if s.Kafka {
				if kafkaBroken {
					continue
				}
				if kafkaCP == "" {
					cp, err := kafkaClasspath(ctx, cfg.KafkaScript)
					if err != nil {
						cfg.Log.Error("Kafka not runnable", "err", err)
						rep.Errors = append(rep.Errors, fmt.Sprintf("%s: %v", s.Name, err))
						kafkaBroken = true
						continue
					}
					kafkaCP = cp
				}
				kafka = &kafkaRuntime{classpath: kafkaCP, clusterID: newKafkaUUID()}
			}
			cfg.Log.Info("cluster bench", "setup", s.Name, "run", run, "of", cfg.Runs)
			if err := runSetup(ctx, &cfg, s, kafka, run, rep); err != nil {
				cfg.Log.Error("setup failed", "setup", s.Name, "run", run, "err", err)
				rep.Errors = append(rep.Errors, fmt.Sprintf("%s run %d: %v", s.Name, run, err))
			}
		}
	}
	if cfg.Kills > 0 {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err := runFailover(ctx, &cfg, rep); err != nil {
			cfg.Log.Error("failover phase failed", "err", err)
			rep.Errors = append(rep.Errors, fmt.Sprintf("failover: %v", err))
		}
	}
	stopLoad()
	rep.buildFigures()
	return rep, nil
}

// sampleLoad records the machine's 1-minute load average every 5 s until
// the returned func is called: on a shared machine it says how much else
// ran beside the benchmark (its own processes count too).
func sampleLoad(rep *ClusterReport) func() {
	stop, done := make(chan struct{}), make(chan struct{})
	var once sync.Once
	go func() {
		defer close(done)
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		for {
			if b, err := os.ReadFile("/proc/loadavg"); err == nil {
				if f := strings.Fields(string(b)); len(f) > 0 {
					if v, err := strconv.ParseFloat(f[0], 64); err == nil {
						rep.Load = append(rep.Load, v)
					}
				}
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	return func() { once.Do(func() { close(stop); <-done }) }
}

// runSetup starts s's cluster, runs every workload against it and stops
// it, appending what it measured to rep.
func runSetup(ctx context.Context, cfg *ClusterBenchConfig, s ClusterSetup, kafka *kafkaRuntime, run int, rep *ClusterReport) error {
	dir := filepath.Join(cfg.Dir, fmt.Sprintf("%s-run%d", strings.ReplaceAll(strings.ToLower(s.Name), " ", ""), run))
	props := cfg.FjordProps
	if kafka != nil {
		props = nil
	}
	c, err := newBenchCluster(cfg.Bin, dir, s.Nodes, cfg.BasePort, props, kafka)
	if err != nil {
		return err
	}
	startup, err := c.start(ctx, cfg.StartTimeout)
	if err != nil {
		return err
	}
	defer func() {
		c.stop(min(cfg.StopGrace, teardownGrace))
		if !cfg.Keep {
			_ = os.RemoveAll(dir)
		}
	}()
	cfg.Log.Info("cluster serving", "setup", s.Name, "nodes", s.Nodes, "startup", startup.Round(time.Millisecond))
	rep.Samples = append(rep.Samples, ClusterSample{Setup: s.Name, Run: run, Kind: "startup", Ms: ms(startup)})

	var firstErr error
	for _, w := range cfg.Workloads {
		if err := runClusterWorkload(ctx, cfg, c, s, w, run, rep); err != nil {
			cfg.Log.Error("workload failed", "setup", s.Name, "workload", w.String(), "err", err)
			firstErr = firstErrOf(firstErr, fmt.Errorf("%s: %w", w, err))
		}
		if err := c.exited(); err != nil {
			return firstErrOf(firstErr, err)
		}
	}
	for _, nd := range c.nodes {
		if m, err := ReadMem(nd.pid()); err == nil {
			rep.Samples = append(rep.Samples, ClusterSample{Setup: s.Name, Run: run, Kind: "rss_peak", Node: nd.id, MB: kbToMB(m.HWMKB)})
		}
	}
	return firstErr
}

// runClusterWorkload creates the workload's topic and runs the produce
// and latency drivers against it, each a process of its own.
func runClusterWorkload(ctx context.Context, cfg *ClusterBenchConfig, c *benchCluster, s ClusterSetup, w Workload, run int, rep *ClusterReport) error {
	topic := fmt.Sprintf("bench-%dB-rf%d", w.Size, s.RF)
	if err := createClusterTopic(ctx, c, topic, s); err != nil {
		return err
	}
	warm := int(float64(w.Records) * cfg.WarmupFrac)
	common := []string{"--brokers", c.seed(), "--topic", topic, "--size", strconv.Itoa(w.Size), "--acks", s.Acks,
		"--timeout", cfg.DriverTimeout.String()}
	dcfg := Config{Self: cfg.Self, Env: cfg.Env, DriverTimeout: cfg.DriverTimeout}
	drive := func(mode string, args []string) (Result, float64, error) {
		cpu0 := c.cpu()
		res, err := runDriver(ctx, dcfg, mode, args)
		if err != nil {
			return res, 0, err
		}
		cpu := (c.cpu() - cpu0).Seconds()
		attrs := []any{"setup", s.Name, "workload", w.String(), "rec/s", int(res.RecordsPerSec), "MB/s", round1(res.MBPerSec)}
		if mode == "latency" {
			attrs = append(attrs, "p50_ms", res.P50Ms, "p99_ms", res.P99Ms, "max_ms", res.MaxMs)
		} else {
			attrs = append(attrs, "client_cpu_cores", round2(res.ClientCPU))
		}
		cfg.Log.Info(mode, append(attrs, "brokers_cpu_s", round2(cpu))...)
		return res, cpu, nil
	}
	prod, cpu, err := drive("produce", slices.Concat(common, []string{"--records", strconv.Itoa(w.Records), "--warmup", strconv.Itoa(warm)}))
	if err != nil {
		return err
	}
	rep.Samples = append(rep.Samples, ClusterSample{Setup: s.Name, Run: run, Kind: "produce", Workload: w, Result: &prod, BrokersCPUSeconds: cpu})

	n := max(1, int(float64(cfg.LatencyRate)*cfg.LatencyDuration.Seconds()))
	lat, cpu, err := drive("latency", slices.Concat(common, []string{
		"--records", strconv.Itoa(n), "--warmup", strconv.Itoa(max(1, cfg.LatencyRate/10)),
		"--rate", strconv.Itoa(cfg.LatencyRate), "--linger", cfg.LatencyLinger.String()}))
	if err != nil {
		return err
	}
	rep.Samples = append(rep.Samples, ClusterSample{Setup: s.Name, Run: run, Kind: "latency", Workload: w, Result: &lat, BrokersCPUSeconds: cpu})
	return nil
}

// kafkaClasspath lets script fetch Kafka's jars (idempotent) and print
// their classpath.
func kafkaClasspath(ctx context.Context, script string) (string, error) {
	if script == "" {
		return "", errors.New("no --kafka-script to fetch Apache Kafka with")
	}
	if out, err := exec.CommandContext(ctx, script, "fetch").CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s fetch: %w: %s", script, err, tail(out, 1000))
	}
	out, err := exec.CommandContext(ctx, script, "classpath").Output()
	if err != nil {
		return "", fmt.Errorf("%s classpath: %w", script, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// cpu is the CPU time every running node used so far.
func (c *benchCluster) cpu() time.Duration {
	var sum time.Duration
	for _, nd := range c.nodes {
		if nd.running() {
			d, _ := ProcessCPU(nd.pid())
			sum += d
		}
	}
	return sum
}

// createClusterTopic creates an 8-partition topic with s's replication
// factor and min.insync.replicas, and waits until every partition has a
// leader and a full ISR, so that no figure includes the topic's birth.
func createClusterTopic(ctx context.Context, c *benchCluster, topic string, s ClusterSetup) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.seed()))
	if err != nil {
		return fmt.Errorf("admin client: %w", err)
	}
	defer cl.Close()
	var configs map[string]*string
	if s.MinISR > 0 {
		configs = map[string]*string{"min.insync.replicas": kadm.StringPtr(strconv.Itoa(s.MinISR))}
	}
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, Partitions, int16(s.RF), configs, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return fmt.Errorf("create topic %s (RF %d): %w", topic, s.RF, err)
	}
	return c.waitFullISR(ctx, topic, Partitions, s.RF, 60*time.Second)
}

// FailoverSample is one leader kill.
type FailoverSample struct {
	Kill       int     `json:"kill"`
	Partition  int32   `json:"partition"`
	Killed     int32   `json:"killed_node"`
	Controller bool    `json:"was_active_controller"` // the killed node was the active controller
	FailoverMs float64 `json:"failover_ms"`           // SIGKILL → first acknowledged write after
	// ElectedMs is SIGKILL → a surviving broker's Metadata names a new
	// leader: the cluster's share of FailoverMs, the rest is the client's.
	ElectedMs float64 `json:"elected_ms"`
	NewLeader int32   `json:"new_leader"`
	Offset    int64   `json:"first_offset"` // offset of that first write
	RejoinMs  float64 `json:"rejoin_ms"`    // restart → every partition's ISR full again
}

// teardownGrace bounds a setup's SIGTERM before SIGKILL. When every node
// stops at once, the last one's controlled shutdown has nobody to hand
// its leaderships to and waits out its timeout (10 s); the data is
// thrown away, so that wait would only lengthen the run.
const teardownGrace = 3 * time.Second

// failoverTopic is the failover phase's topic.
const failoverTopic = "bench-failover"

func runFailover(ctx context.Context, cfg *ClusterBenchConfig, rep *ClusterReport) error {
	s := SetupRF3
	dir := filepath.Join(cfg.Dir, "failover")
	c, err := newBenchCluster(cfg.Bin, dir, s.Nodes, cfg.BasePort, cfg.FjordProps, nil)
	if err != nil {
		return err
	}
	if _, err := c.start(ctx, cfg.StartTimeout); err != nil {
		return err
	}
	defer func() {
		c.stop(min(cfg.StopGrace, teardownGrace))
		if !cfg.Keep {
			_ = os.RemoveAll(dir)
		}
	}()
	if err := createClusterTopic(ctx, c, failoverTopic, s); err != nil {
		return err
	}
	for k := 0; k < cfg.Kills; k++ {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		fs, err := killOnce(ctx, cfg, c, k)
		if err != nil {
			return fmt.Errorf("kill %d: %w", k+1, err)
		}
		rep.Failovers = append(rep.Failovers, fs)
		cfg.Log.Info("failover", "kill", k+1, "of", cfg.Kills, "partition", fs.Partition, "killed", fs.Killed,
			"was_controller", fs.Controller, "elected_ms", round1(fs.ElectedMs), "failover_ms", round1(fs.FailoverMs), "new_leader", fs.NewLeader,
			"rejoin_ms", round1(fs.RejoinMs))
	}
	return nil
}

// killOnce SIGKILLs the leader of partition k mod Partitions while the
// probe writes to it, measures the time to the first acknowledgement,
// then restarts the node and waits for a full ISR.
func killOnce(ctx context.Context, cfg *ClusterBenchConfig, c *benchCluster, k int) (FailoverSample, error) {
	fs := FailoverSample{Kill: k + 1, Partition: int32(k % Partitions)}
	st, err := c.topicState(failoverTopic)
	if err != nil {
		return fs, err
	}
	fs.Killed = st[fs.Partition].leader
	victim := c.node(fs.Killed)
	if victim == nil {
		return fs, fmt.Errorf("partition %d has leader %d, no such node", fs.Partition, fs.Killed)
	}

	var seeds []string
	for _, nd := range c.nodes {
		seeds = append(seeds, nd.clientAddr)
	}
	probe, err := startProbe(ctx, cfg, strings.Join(seeds, ","), fs.Partition)
	if err != nil {
		return fs, err
	}
	defer probe.close()
	// The partition must take writes before the kill, so that the clock
	// measures recovery, not the probe's start.
	const warmAcks = 20
	for i := 0; i < warmAcks; i++ {
		a, err := probe.next(30 * time.Second)
		if err != nil {
			return fs, fmt.Errorf("probe before the kill: %w", err)
		}
		if a.Err != "" {
			return fs, fmt.Errorf("probe write failed before the kill: %s", a.Err)
		}
	}
	fs.Controller = c.activeController() == fs.Killed
	t0, err := victim.kill()
	if err != nil {
		return fs, err
	}
	reaped := time.Now()
	deadline := time.Now().Add(cfg.FailoverTimeout)
	// Meanwhile the probe's lines queue up, each stamped with its own
	// arrival time, so watching metadata first loses nothing.
	for {
		st, err := c.topicState(failoverTopic)
		if err == nil {
			if l := st[fs.Partition].leader; l >= 0 && l != fs.Killed {
				fs.ElectedMs, fs.NewLeader = ms(time.Since(t0)), l
				break
			}
		}
		if time.Now().After(deadline) {
			return fs, fmt.Errorf("no new leader of partition %d within %s of killing node %d (last: %v)", fs.Partition, cfg.FailoverTimeout, fs.Killed, err)
		}
		if !sleepCtx(ctx, 5*time.Millisecond) { // polling metadata; bounds the resolution
			return fs, ctx.Err()
		}
	}
	for {
		a, err := probe.next(time.Until(deadline))
		if err != nil {
			return fs, fmt.Errorf("no acknowledged write within %s of killing node %d: %w", cfg.FailoverTimeout, fs.Killed, err)
		}
		// Acks that arrived before the process was gone may still come
		// from it; the first one after is the new leader's.
		if a.Err != "" || a.AckNs <= reaped.UnixNano() {
			continue
		}
		fs.FailoverMs = float64(a.AckNs-t0.UnixNano()) / 1e6
		fs.Offset = a.Offset
		break
	}
	probe.close()

	restart := time.Now()
	if err := c.startNode(victim); err != nil {
		return fs, err
	}
	if err := c.waitReady(ctx, cfg.RejoinTimeout); err != nil {
		return fs, err
	}
	if err := c.waitFullISR(ctx, failoverTopic, Partitions, 3, max(time.Second, cfg.RejoinTimeout-time.Since(restart))); err != nil {
		return fs, err
	}
	fs.RejoinMs = ms(time.Since(restart))
	return fs, nil
}

// probeProc is a running `bench cluster probe` child and its ack lines.
type probeProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	acks   chan ProbeAck
	done   chan struct{}
	stderr *strings.Builder
	closed bool
}

func startProbe(ctx context.Context, cfg *ClusterBenchConfig, seeds string, partition int32) (*probeProc, error) {
	args := append(append([]string{}, cfg.Self[1:]...), "cluster", "probe",
		"--brokers", seeds, "--topic", failoverTopic, "--partition", strconv.Itoa(int(partition)),
		"--interval", cfg.ProbeInterval.String(), "--timeout", (cfg.FailoverTimeout + cfg.RejoinTimeout + time.Minute).String(),
		"--franz-defaults="+strconv.FormatBool(cfg.ProbeFranzDefaults))
	cmd := exec.CommandContext(ctx, cfg.Self[0], args...)
	cmd.Env = append(os.Environ(), cfg.Env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p := &probeProc{cmd: cmd, stdin: stdin, acks: make(chan ProbeAck, 1<<16), done: make(chan struct{}), stderr: &strings.Builder{}}
	cmd.Stderr = &limitedWriter{b: p.stderr, n: 4000}
	cmd.WaitDelay = 5 * time.Second
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start probe: %w", err)
	}
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var a ProbeAck
			if json.Unmarshal(sc.Bytes(), &a) == nil {
				select {
				case p.acks <- a:
				default: // the orchestrator stopped reading; the probe is being closed
				}
			}
		}
		_ = cmd.Wait()
	}()
	return p, nil
}

// next returns the probe's next outcome, waiting at most d.
func (p *probeProc) next(d time.Duration) (ProbeAck, error) {
	t := time.NewTimer(max(d, 0))
	defer t.Stop()
	select {
	case a := <-p.acks:
		return a, nil
	case <-p.done:
		select {
		case a := <-p.acks:
			return a, nil
		default:
		}
		return ProbeAck{}, fmt.Errorf("probe exited: %s", tail([]byte(p.stderr.String()), 1000))
	case <-t.C:
		return ProbeAck{}, fmt.Errorf("timed out after %s", d)
	}
}

// close ends the probe (EOF on its stdin) and waits for it.
func (p *probeProc) close() {
	if p.closed {
		return
	}
	p.closed = true
	_ = p.stdin.Close()
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// limitedWriter keeps the first n bytes written (a child's stderr).
type limitedWriter struct {
	b *strings.Builder
	n int
}

func (w *limitedWriter) Write(p []byte) (int, error) {
	if room := w.n - w.b.Len(); room > 0 {
		w.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
