package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kfake"
)

// NewCommand returns `fjord bench` with its subcommands. self is the
// command prefix that reaches these subcommands again from a child process
// (normally the fjord executable followed by "bench"); childEnv is added to
// each child's environment. Tests pass their own binary here.
func NewCommand(self []string, childEnv []string) *cobra.Command {
	root := &cobra.Command{
		Use:   "bench",
		Short: "Benchmark Fjord's broker side by side with Apache Kafka 4.4 and franz-go's kfake",
		Long: "bench runs the side-by-side broker benchmark (bench run) and the pieces it drives, " +
			"each meant to be a process of its own: the franz-go load drivers (produce, consume, latency) " +
			"and an in-memory kfake cluster (kfake).",
	}
	root.AddCommand(driverCommand("produce", "produce --records timed records after --warmup untimed ones; print throughput as JSON", RunProduce))
	root.AddCommand(driverCommand("consume", "consume a topic from the beginning until --warmup + --records records arrived; print throughput as JSON", RunConsume))
	root.AddCommand(driverCommand("latency", "produce at a fixed --rate and print ack latency percentiles as JSON", RunLatency))
	root.AddCommand(kfakeCommand())
	root.AddCommand(runCommand(self, childEnv))
	root.AddCommand(connectCommand(self, childEnv))
	root.AddCommand(clusterCommand(self, childEnv))
	root.AddCommand(postgresCommand())
	root.AddCommand(s3Command())
	root.AddCommand(mirrorCommand(self, childEnv))
	return root
}

func driverCommand(mode, short string, fn func(context.Context, DriverConfig) (Result, error)) *cobra.Command {
	var c DriverConfig
	cmd := &cobra.Command{
		Use:   mode + " --brokers ADDR --topic T --records N --size S --acks all|1",
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			res, err := fn(ctx, c)
			if err != nil {
				return err
			}
			return json.NewEncoder(cmd.OutOrStdout()).Encode(res)
		},
	}
	f := cmd.Flags()
	f.StringVar(&c.Brokers, "brokers", "127.0.0.1:9092", "seed broker address")
	f.StringVar(&c.Topic, "topic", "", "topic (must exist)")
	f.IntVar(&c.Records, "records", 1_000_000, "timed records")
	f.IntVar(&c.Warmup, "warmup", 0, "untimed records before the clock starts")
	f.IntVar(&c.Size, "size", 100, "record value bytes")
	f.StringVar(&c.Acks, "acks", "all", "producer acks: all or 1 (1 also turns idempotence off, as franz-go requires)")
	f.DurationVar(&c.Timeout, "timeout", 10*time.Minute, "give up after this long")
	if mode == "latency" {
		f.IntVar(&c.Rate, "rate", 1000, "records per second")
		f.DurationVar(&c.Linger, "linger", 0, "producer linger (franz-go's default is 10ms; 0 measures the broker, not the timer)")
	}
	return cmd
}

func kfakeCommand() *cobra.Command {
	var port int
	cmd := &cobra.Command{
		Use:   "kfake --port P",
		Short: "serve franz-go's in-memory kfake cluster (1 broker, no data dir) on 127.0.0.1:P until SIGINT/SIGTERM",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			c, err := kfake.NewCluster(
				kfake.NumBrokers(1),
				kfake.Ports(port), // kfake binds 127.0.0.1 only
			)
			if err != nil {
				return fmt.Errorf("start kfake on port %d: %w", port, err)
			}
			defer c.Close()
			slog.Info("kfake serving", "addrs", c.ListenAddrs())
			<-ctx.Done()
			return nil
		},
	}
	cmd.Flags().IntVar(&port, "port", 19694, "port on 127.0.0.1")
	return cmd
}

func runCommand(self []string, childEnv []string) *cobra.Command {
	var (
		brokers, acks, workloads, dir, kafkaScript, fjordBin, benchFile, jsonOut, note string
		runs, kafkaPort, kfakePort, fjordPort, fjordHTTPPort, rate                     int
		quick, write, keep                                                             bool
		latDur, latLinger                                                              time.Duration
	)
	cmd := &cobra.Command{
		Use:   "run",
		Short: "run the side-by-side benchmark and print a Markdown table (--write updates BENCHMARKS.md)",
		Long: "run starts each broker in turn on loopback ports (Fjord via `fjord dev`, Apache Kafka 4.4 via " +
			"scripts/kafka.sh's jars, kfake via `fjord bench kfake`), creates an 8-partition topic per workload, " +
			"runs the produce, consume and latency drivers as separate processes, samples the broker's RSS and " +
			"prints the medians over --runs with Fjord/Kafka and Fjord/kfake ratios.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			cfg := Config{
				Runs: runs, Acks: splitList(acks), WarmupFrac: 0.1,
				LatencyRate: rate, LatencyDuration: latDur, LatencyLinger: latLinger,
				DiskTestBytes: 512 << 20, LoopbackTime: 3 * time.Second,
				StartTimeout: 120 * time.Second, DriverTimeout: 10 * time.Minute, StopGrace: 30 * time.Second,
				Self: self, Env: childEnv, Log: slog.Default(),
				MeasureLimits: true, RecordMachine: true, QuickSmokeTest: quick,
				CommandLine: commandLine(), Note: note,
			}
			if quick {
				applyQuick(&cfg, cmd.Flags().Changed)
			}
			var err error
			if cfg.Workloads, err = parseWorkloads(workloads); err != nil {
				return err
			}
			if quick && !cmd.Flags().Changed("workloads") {
				cfg.Workloads = QuickWorkloads
			}
			for _, a := range cfg.Acks {
				if a != "1" && a != "all" {
					return fmt.Errorf("--acks %q: want a list of 1 and all", acks)
				}
			}
			cleanup, err := benchDir(&dir, "fjord-bench-", keep)
			if err != nil {
				return err
			}
			defer cleanup()
			cfg.Dir = dir
			if fjordBin == "" {
				if fjordBin, err = os.Executable(); err != nil {
					return fmt.Errorf("find the fjord binary: %w; pass --fjord-bin", err)
				}
			}
			for _, name := range splitList(brokers) {
				switch strings.ToLower(name) {
				case "fjord":
					cfg.Targets = append(cfg.Targets, &fjordTarget{bin: fjordBin,
						addr: loopback(fjordPort), httpAddr: loopback(fjordHTTPPort)})
				case "kafka":
					cfg.Targets = append(cfg.Targets, &kafkaTarget{script: kafkaScript, addr: loopback(kafkaPort), log: slog.Default()})
				case "kfake":
					cfg.Targets = append(cfg.Targets, &kfakeTarget{self: self, env: childEnv, addr: loopback(kfakePort)})
				default:
					return fmt.Errorf("--brokers %q: want a list of fjord, kafka, kfake", name)
				}
			}
			rep, err := Run(ctx, cfg)
			if err != nil {
				return err
			}
			if err := publishReport(cmd.OutOrStdout(), rep.Markdown(), rep, jsonOut, write, benchFile, WriteBenchmarksFile); err != nil {
				return err
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&brokers, "brokers", "fjord,kafka,kfake", "which brokers to measure, in this order")
	f.IntVar(&runs, "runs", 3, "repetitions; every figure is the median")
	f.BoolVar(&quick, "quick", false, "small smoke run (100 k × 100 B and 10 k × 1 KiB, 0.5 s latency, 1 run)")
	f.StringVar(&workloads, "workloads", "1000000x100,200000x1024", "RECORDSxBYTES list")
	f.StringVar(&acks, "acks", "1,all", "acks settings to measure")
	f.IntVar(&rate, "latency-rate", 1000, "records per second for the ack latency run")
	f.DurationVar(&latDur, "latency-duration", 5*time.Second, "timed length of each ack latency run")
	f.DurationVar(&latLinger, "latency-linger", 0, "producer linger for the latency run (franz-go's default is 10ms)")
	f.StringVar(&dir, "dir", "", "where data dirs go (default: a new temp dir, removed afterwards)")
	f.BoolVar(&keep, "keep", false, "keep the temp dir (broker logs, data)")
	f.StringVar(&kafkaScript, "kafka-script", "scripts/kafka.sh", "the script that fetches and formats Apache Kafka")
	f.StringVar(&fjordBin, "fjord-bin", "", "fjord binary to run as \"fjord dev\" (default: this executable)")
	f.IntVar(&kafkaPort, "kafka-port", 19692, "Kafka's port (controller on the next one)")
	f.IntVar(&kfakePort, "kfake-port", 19694, "kfake's port")
	f.IntVar(&fjordPort, "fjord-port", 19696, "Fjord's Kafka port")
	f.IntVar(&fjordHTTPPort, "fjord-http-port", 19697, "Fjord's HTTP port")
	f.BoolVar(&write, "write", false, "update the generated block of --benchmarks-file")
	f.StringVar(&benchFile, "benchmarks-file", "BENCHMARKS.md", "file --write updates")
	f.StringVar(&note, "note", "", "a line for the report's header (e.g. whether the machine was quiet)")
	f.StringVar(&jsonOut, "json", "", "also write the full report, every sample included, to this JSON file")
	return cmd
}

// QuickWorkloads keep a smoke run to seconds while still spanning several
// fetches per partition, so that the consumer has something to time after
// its warm-up.
var QuickWorkloads = []Workload{{100_000, 100}, {10_000, 1024}}

// applyQuick shrinks everything a flag did not set explicitly.
func applyQuick(cfg *Config, changed func(string) bool) {
	if !changed("runs") {
		cfg.Runs = 1
	}
	if !changed("latency-duration") {
		cfg.LatencyDuration = 500 * time.Millisecond
	}
	cfg.DiskTestBytes = 16 << 20
	cfg.LoopbackTime = 300 * time.Millisecond
	cfg.DriverTimeout = 2 * time.Minute
	cfg.StopGrace = 10 * time.Second
}

func parseWorkloads(s string) ([]Workload, error) {
	var ws []Workload
	for _, item := range splitList(s) {
		r, sz, ok := strings.Cut(item, "x")
		n, err1 := strconv.Atoi(r)
		size, err2 := strconv.Atoi(sz)
		if !ok || err1 != nil || err2 != nil || n <= 0 || size <= 0 {
			return nil, fmt.Errorf("--workloads item %q: want RECORDSxBYTES, e.g. 1000000x100", item)
		}
		ws = append(ws, Workload{Records: n, Size: size})
	}
	if len(ws) == 0 {
		return nil, fmt.Errorf("--workloads %q: empty", s)
	}
	return ws, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func loopback(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// commandLine is how this run was invoked: scripts/bench.sh says so in
// FJORD_BENCH_COMMAND, since it calls us with a built binary's path.
func commandLine() string {
	if c := os.Getenv("FJORD_BENCH_COMMAND"); c != "" {
		return c
	}
	words := []string{"fjord"}
	for _, a := range os.Args[1:] {
		words = append(words, shellQuote(a))
	}
	return strings.Join(words, " ")
}

// shellQuote quotes a for a POSIX shell when it needs it.
func shellQuote(a string) string {
	if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=,+-") == "" {
		return a
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}

// DefaultSelf is the production command prefix: this executable's `bench`.
func DefaultSelf() []string {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	if abs, err := filepath.Abs(exe); err == nil {
		exe = abs
	}
	return []string{exe, "bench"}
}
