package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Workload is one produce/consume job: Records records of Size bytes.
type Workload struct {
	Records int
	Size    int
}

func (w Workload) String() string { return fmt.Sprintf("%s × %s", count(w.Records), sizeName(w.Size)) }

// Partitions is the partition count of every benchmark topic.
const Partitions = 8

// Config is one orchestrated benchmark.
type Config struct {
	Targets   []Target
	Workloads []Workload
	Acks      []string // "1", "all"
	Runs      int      // each figure is the median over runs

	// WarmupFrac of each workload's records is produced (and consumed)
	// before the clock starts.
	WarmupFrac float64

	LatencyRate     int           // records per second
	LatencyDuration time.Duration // timed part, after a tenth of a second of warm-up
	LatencyLinger   time.Duration

	Dir            string // data dirs and logs, all on one filesystem
	DiskTestBytes  int64
	LoopbackTime   time.Duration
	StartTimeout   time.Duration
	DriverTimeout  time.Duration
	StopGrace      time.Duration
	Self           []string // command prefix reaching the bench subcommands
	Env            []string // extra environment for driver processes
	Log            *slog.Logger
	MeasureLimits  bool
	RecordMachine  bool   // read java -version etc. for the header
	CommandLine    string // how this run was invoked, for the header
	QuickSmokeTest bool   // stated in the header
	Note           string // free text for the header, e.g. how quiet the machine was
}

// sample is what one run of one target measured, keyed by figure.
type sample map[figKey]float64

// Run executes the benchmark and returns the report; a target that cannot
// start is reported with its error rather than failing the whole run.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Runs < 1 {
		return nil, fmt.Errorf("runs %d: want >= 1", cfg.Runs)
	}
	if len(cfg.Self) == 0 {
		return nil, errors.New("bench: Config.Self is empty")
	}
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	rep := &Report{
		Command:    cfg.CommandLine,
		Date:       time.Now().UTC(),
		Runs:       cfg.Runs,
		Quick:      cfg.QuickSmokeTest,
		Note:       cfg.Note,
		Partitions: Partitions,
		Workloads:  cfg.Workloads,
		Acks:       cfg.Acks,
		Latency:    LatencySetup{Rate: cfg.LatencyRate, Duration: cfg.LatencyDuration, Linger: cfg.LatencyLinger},
		Errors:     map[string]string{},
	}
	for _, t := range cfg.Targets {
		rep.Targets = append(rep.Targets, t.Name())
	}
	if cfg.RecordMachine {
		rep.Machine = ReadMachine(cfg.Targets)
	}
	if cfg.MeasureLimits {
		log.Info("measuring machine limits", "dir", cfg.Dir)
		var err error
		if rep.Limits.LoopbackMBps, err = MeasureLoopback(cfg.LoopbackTime); err != nil {
			return nil, err
		}
		if rep.Limits.DiskWriteMBps, err = MeasureDiskWrite(cfg.Dir, cfg.DiskTestBytes); err != nil {
			return nil, err
		}
		rep.Limits.DiskDir = cfg.Dir
	}

	samples := map[string][]sample{}
	prepared := map[string]bool{}
	unrunnable := map[string]bool{} // failed to prepare or start: not retried
	for run := 1; run <= cfg.Runs; run++ {
		for _, t := range cfg.Targets {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if unrunnable[t.Name()] {
				continue
			}
			if !prepared[t.Name()] {
				if err := prepareTarget(ctx, t, cfg.Dir); err != nil {
					log.Error("target not runnable", "target", t.Name(), "err", err)
					rep.Errors[t.Name()] = err.Error()
					unrunnable[t.Name()] = true
					continue
				}
				prepared[t.Name()] = true
			}
			log.Info("benchmarking", "target", t.Name(), "run", run, "of", cfg.Runs)
			record := func(d Detail) { d.Run = run; rep.Details = append(rep.Details, d) }
			s, err := runTarget(ctx, cfg, t, run, record, log)
			if err != nil {
				log.Error("benchmark failed", "target", t.Name(), "run", run, "err", err)
				if _, seen := rep.Errors[t.Name()]; !seen {
					rep.Errors[t.Name()] = fmt.Sprintf("run %d: %v", run, err)
				}
				unrunnable[t.Name()] = s == nil
			}
			if len(s) > 0 {
				samples[t.Name()] = append(samples[t.Name()], s)
			}
		}
	}
	rep.Figures = buildFigures(cfg, rep.Targets, samples)
	return rep, nil
}

func prepareTarget(ctx context.Context, t Target, root string) error {
	for _, a := range t.Ports() {
		if err := portFree(a); err != nil {
			return err
		}
	}
	return t.Prepare(ctx, root)
}

// runTarget starts t, runs every workload against it and stops it. It
// returns whatever it measured even when a later step fails.
func runTarget(ctx context.Context, cfg Config, t Target, run int, record func(Detail), log *slog.Logger) (sample, error) {
	dir := filepath.Join(cfg.Dir, fmt.Sprintf("%s-run%d", t.Name(), run))
	r, err := startTarget(ctx, t, dir, cfg.StartTimeout)
	if err != nil {
		return nil, err
	}
	defer r.stop(cfg.StopGrace)
	s := sample{}
	s[figKey{Kind: figStartup}] = float64(r.startup) / float64(time.Millisecond)
	log.Info("broker serving", "target", t.Name(), "pid", r.pid(), "startup", r.startup.Round(time.Millisecond))
	if m, err := ReadMem(r.pid()); err == nil {
		s[figKey{Kind: figRSSIdle}] = kbToMB(m.RSSKB)
	}

	var firstErr error
	for _, w := range cfg.Workloads {
		for _, acks := range cfg.Acks {
			if err := runWorkload(ctx, cfg, t, r.pid(), w, acks, s, record, log); err != nil {
				log.Error("workload failed", "target", t.Name(), "workload", w.String(), "acks", acks, "err", err)
				firstErr = firstErrOf(firstErr, fmt.Errorf("%s acks=%s: %w", w, acks, err))
			}
			select {
			case <-r.done:
				return s, fmt.Errorf("%s exited during the benchmark (%v): %s", t.Name(), r.waitErr, logTail(r.logPath))
			default:
			}
		}
	}
	m, err := ReadMem(r.pid())
	if err != nil {
		return s, firstErrOf(firstErr, err)
	}
	s[figKey{Kind: figRSSAfter}] = kbToMB(m.RSSKB)
	s[figKey{Kind: figRSSPeak}] = kbToMB(m.HWMKB)
	return s, firstErr
}

func firstErrOf(first, next error) error {
	if first != nil {
		return first
	}
	return next
}

func kbToMB(kb int64) float64 { return float64(kb) * 1024 / 1e6 }

// runWorkload creates the topic, then produces, consumes and measures ack
// latency, each in a driver process of its own.
func runWorkload(ctx context.Context, cfg Config, t Target, pid int, w Workload, acks string, s sample, record func(Detail), log *slog.Logger) error {
	topic := fmt.Sprintf("bench-%dB-acks%s", w.Size, acks)
	if err := createTopic(ctx, t.Addr(), topic); err != nil {
		return err
	}
	warm := int(float64(w.Records) * cfg.WarmupFrac)
	common := []string{"--brokers", t.Addr(), "--topic", topic, "--size", strconv.Itoa(w.Size), "--acks", acks,
		"--timeout", cfg.DriverTimeout.String()}

	drive := func(mode string, args []string) (Result, error) {
		cpu0, _ := ProcessCPU(pid)
		res, err := runDriver(ctx, cfg, mode, args)
		if err != nil {
			return res, err
		}
		cpu1, _ := ProcessCPU(pid)
		d := Detail{Target: t.Name(), Result: res, BrokerCPUSeconds: (cpu1 - cpu0).Seconds()}
		record(d)
		attrs := []any{"target", t.Name(), "workload", w.String(), "acks", acks,
			"rec/s", int(res.RecordsPerSec), "MB/s", round1(res.MBPerSec)}
		if mode == "latency" {
			attrs = append(attrs, "p50_ms", res.P50Ms, "p99_ms", res.P99Ms)
		} else {
			attrs = append(attrs, "client_cpu_cores", round2(res.ClientCPU))
		}
		log.Info(mode, append(attrs, "broker_cpu_s", round2(d.BrokerCPUSeconds))...)
		return res, nil
	}
	prod, err := drive("produce", slices.Concat(common, []string{"--records", strconv.Itoa(w.Records), "--warmup", strconv.Itoa(warm)}))
	if err != nil {
		return err
	}
	s[figKey{figProduceRate, w, acks}] = prod.RecordsPerSec
	s[figKey{figProduceMB, w, acks}] = prod.MBPerSec

	cons, err := drive("consume", slices.Concat(common, []string{"--records", strconv.Itoa(w.Records), "--warmup", strconv.Itoa(warm)}))
	if err != nil {
		return err
	}
	s[figKey{figConsumeRate, w, acks}] = cons.RecordsPerSec
	s[figKey{figConsumeMB, w, acks}] = cons.MBPerSec

	n := max(1, int(float64(cfg.LatencyRate)*cfg.LatencyDuration.Seconds()))
	lat, err := drive("latency", slices.Concat(common, []string{
		"--records", strconv.Itoa(n), "--warmup", strconv.Itoa(max(1, cfg.LatencyRate/10)),
		"--rate", strconv.Itoa(cfg.LatencyRate), "--linger", cfg.LatencyLinger.String()}))
	if err != nil {
		return err
	}
	s[figKey{figP50, w, acks}] = lat.P50Ms
	s[figKey{figP99, w, acks}] = lat.P99Ms
	return nil
}

func round1(f float64) float64 { return math.Round(f*10) / 10 }
func round2(f float64) float64 { return math.Round(f*100) / 100 }

// createTopic creates an 8-partition topic and waits until every partition
// has a leader, so that the driver's first request finds it ready.
func createTopic(ctx context.Context, addr, topic string) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return fmt.Errorf("admin client: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	resp, err := adm.CreateTopic(ctx, Partitions, 1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return fmt.Errorf("create topic %s on %s: %w", topic, addr, err)
	}
	for {
		md, err := adm.Metadata(ctx, topic)
		if err == nil {
			err = topicReady(md, topic)
		}
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("topic %s on %s not ready: %w", topic, addr, err)
		}
		time.Sleep(50 * time.Millisecond) // polling metadata
	}
}

func topicReady(md kadm.Metadata, topic string) error {
	td, ok := md.Topics[topic]
	if !ok {
		return errors.New("topic missing from metadata")
	}
	if td.Err != nil {
		return td.Err
	}
	if len(td.Partitions) != Partitions {
		return fmt.Errorf("%d partitions, want %d", len(td.Partitions), Partitions)
	}
	for _, p := range td.Partitions {
		if p.Err != nil || p.Leader < 0 {
			return fmt.Errorf("partition %d has no leader yet", p.Partition)
		}
	}
	return nil
}

// runDriver runs one driver subcommand as a child process and decodes the
// JSON line it prints last.
func runDriver(ctx context.Context, cfg Config, mode string, args []string) (Result, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.DriverTimeout+30*time.Second)
	defer cancel()
	full := append(append(append([]string{}, cfg.Self[1:]...), mode), args...)
	cmd := exec.CommandContext(ctx, cfg.Self[0], full...)
	cmd.Env = append(os.Environ(), cfg.Env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	dieWithParent(cmd)
	if err := cmd.Run(); err != nil {
		return Result{}, fmt.Errorf("%s driver: %w: %s", mode, err, tail(stderr.Bytes(), 1500))
	}
	lines := bytes.Split(bytes.TrimSpace(stdout.Bytes()), []byte("\n"))
	var res Result
	if err := json.Unmarshal(lines[len(lines)-1], &res); err != nil {
		return Result{}, fmt.Errorf("%s driver printed %q: %w", mode, tail(stdout.Bytes(), 300), err)
	}
	if res.Mode != mode || res.Records <= 0 {
		return Result{}, fmt.Errorf("%s driver result %+v is not a %s result", mode, res, mode)
	}
	return res, nil
}
