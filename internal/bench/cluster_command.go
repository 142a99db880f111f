package bench

import (
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
)

// clusterCommand is `fjord bench cluster`, with the failover probe as its
// subcommand (`fjord bench cluster probe`), run as a process of its own.
func clusterCommand(self []string, childEnv []string) *cobra.Command {
	var (
		cfg                                   ClusterBenchConfig
		workloads, benchFile, jsonOut, setups string
		quick, write                          bool
		fjordProps                            []string
	)
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "benchmark replication: 3 brokers RF 3 acks=all vs 1 broker RF 1 acks=1, and leader failover time",
		Long: "cluster starts `fjord broker` processes in combined roles on 127.0.0.2… (one for RF 1, three for RF 3 with " +
			"min.insync.replicas=2), runs the produce and ack-latency drivers of `bench run` against each, then SIGKILLs " +
			"partition leaders of a fresh 3-node cluster --kills times and times leader loss → first acknowledged acks=all " +
			"write. It prints a Markdown table with RF 3 ÷ RF 1 and issue 4's goals; --write refreshes the cluster block of " +
			"BENCHMARKS.md. Every node serves /debug/pprof on its address at --base-port+2 for profiling.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			cfg.Self, cfg.Env, cfg.Log = self, childEnv, slog.Default()
			cfg.CommandLine, cfg.Quick, cfg.RecordMachine = commandLine(), quick, true
			changed := cmd.Flags().Changed
			if quick {
				applyClusterQuick(&cfg, changed)
			}
			var err error
			if cfg.Workloads, err = parseWorkloads(workloads); err != nil {
				return err
			}
			if quick && !changed("workloads") {
				cfg.Workloads = QuickClusterWorkloads
			}
			if quick && !changed("setups") {
				setups = "rf1,rf3" // no JVMs in the smoke run
			}
			for _, kv := range fjordProps {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || strings.TrimSpace(k) == "" {
					return fmt.Errorf("--fjord-prop %q: want key=value", kv)
				}
				if cfg.FjordProps == nil {
					cfg.FjordProps = map[string]string{}
				}
				cfg.FjordProps[strings.TrimSpace(k)] = v
			}
			cfg.Setups = nil
			for _, s := range splitList(setups) {
				switch s {
				case "rf1":
					cfg.Setups = append(cfg.Setups, SetupRF1)
				case "rf3":
					cfg.Setups = append(cfg.Setups, SetupRF3)
				case "kafka":
					cfg.Setups = append(cfg.Setups, SetupKafkaRF3)
				default:
					return fmt.Errorf("--setups %q: want a list of rf1, rf3, kafka", s)
				}
			}
			if cfg.Bin == "" {
				if cfg.Bin, err = os.Executable(); err != nil {
					return fmt.Errorf("find the fjord binary: %w; pass --fjord-bin", err)
				}
			}
			cleanup, err := benchDir(&cfg.Dir, "fjord-bench-cluster-", cfg.Keep)
			if err != nil {
				return err
			}
			defer cleanup()
			rep, err := RunClusterBench(ctx, cfg)
			if err != nil {
				return err
			}
			if err := publishReport(cmd.OutOrStdout(), rep.Markdown(), rep, jsonOut, write, benchFile, WriteClusterBlock); err != nil {
				return err
			}
			if len(rep.Samples) == 0 && len(rep.Failovers) == 0 && len(rep.Errors) > 0 {
				return fmt.Errorf("cluster benchmark: nothing measured: %s", rep.Errors[0])
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&workloads, "workloads", "1000000x100,200000x1024", "RECORDSxBYTES list (produce throughput)")
	f.StringVar(&setups, "setups", "rf1,rf3,kafka", "setups to measure: rf1 (1 Fjord broker, RF 1, acks=1), rf3 (3 Fjord brokers, RF 3, acks=all, min ISR 2), "+
		"kafka (3 Apache Kafka 4.4 nodes as rf3; jars via --kafka-script)")
	f.StringArrayVar(&fjordProps, "fjord-prop", nil, "server property key=value for every Fjord node, over the generated ones (repeatable; an experiment, stated in the report)")
	f.StringVar(&cfg.KafkaScript, "kafka-script", "scripts/kafka.sh", "the script that fetches Apache Kafka's jars and prints their classpath")
	f.IntVar(&cfg.Runs, "runs", 3, "repetitions, each on fresh brokers; every figure is the median")
	f.IntVar(&cfg.LatencyRate, "latency-rate", 1000, "records per second for the ack latency runs")
	f.DurationVar(&cfg.LatencyDuration, "latency-duration", 5*time.Second, "timed length of each ack latency run")
	f.DurationVar(&cfg.LatencyLinger, "latency-linger", 0, "producer linger for the latency runs (franz-go's default is 10ms)")
	f.IntVar(&cfg.Kills, "kills", 10, "leader kills in the failover phase (0: skip it)")
	f.DurationVar(&cfg.ProbeInterval, "probe-interval", 5*time.Millisecond, "the failover probe starts at most one write per interval")
	f.BoolVar(&cfg.ProbeFranzDefaults, "probe-franz-defaults", false, "failover probe with franz-go's own retry/metadata backoffs instead of the Java producer's")
	f.DurationVar(&cfg.FailoverTimeout, "failover-timeout", 60*time.Second, "give up on a kill when no write succeeded for this long")
	f.DurationVar(&cfg.RejoinTimeout, "rejoin-timeout", 120*time.Second, "give up when a restarted node is not back in every ISR after this long")
	f.IntVar(&cfg.BasePort, "base-port", 19710, "each node's client port on 127.0.0.(id+1); controller on the next, HTTP (pprof) on the one after")
	f.StringVar(&cfg.Bin, "fjord-bin", "", "fjord binary to run as \"fjord broker\" (default: this executable)")
	f.StringVar(&cfg.Dir, "dir", "", "where data dirs go (default: a new temp dir, removed afterwards)")
	f.BoolVar(&cfg.Keep, "keep", false, "keep the data dirs and broker logs (broker-N.log in each node dir)")
	f.BoolVar(&quick, "quick", false, "smoke run: small workloads, 0.5 s latency, 2 kills, 1 run (what the package test runs)")
	f.BoolVar(&write, "write", false, "update the cluster block of --benchmarks-file")
	f.StringVar(&benchFile, "benchmarks-file", "BENCHMARKS.md", "file --write updates")
	f.StringVar(&cfg.Note, "note", "", "a line for the report's header (e.g. whether the machine was quiet)")
	f.StringVar(&jsonOut, "json", "", "also write the full report, every sample and kill, to this JSON file")
	cfg.WarmupFrac = 0.1
	cfg.StartTimeout, cfg.DriverTimeout, cfg.StopGrace = 120*time.Second, 10*time.Minute, 30*time.Second

	cmd.AddCommand(probeCommand())
	return cmd
}

// QuickClusterWorkloads keep a smoke run short: still many batches per
// partition, so replication and the acks=all wait are exercised.
var QuickClusterWorkloads = []Workload{{50_000, 100}, {5_000, 1024}}

func applyClusterQuick(cfg *ClusterBenchConfig, changed func(string) bool) {
	if !changed("runs") {
		cfg.Runs = 1
	}
	if !changed("latency-duration") {
		cfg.LatencyDuration = 500 * time.Millisecond
	}
	if !changed("kills") {
		cfg.Kills = 2
	}
	cfg.DriverTimeout = 2 * time.Minute
	cfg.StopGrace = 10 * time.Second
	cfg.StartTimeout = time.Minute
}

func probeCommand() *cobra.Command {
	var c ProbeConfig
	cmd := &cobra.Command{
		Use:   "probe --brokers A,B,C --topic T --partition P",
		Short: "write one acks=all record at a time to one partition and print a JSON line per outcome, until stdin closes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return RunProbe(ctx, c, stdinClosed(cmd.InOrStdin()), cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&c.Brokers, "brokers", "127.0.0.2:19710", "seed brokers, comma-separated")
	f.StringVar(&c.Topic, "topic", failoverTopic, "topic (must exist)")
	f.Int32Var(&c.Partition, "partition", 0, "partition to write to")
	f.DurationVar(&c.Interval, "interval", 5*time.Millisecond, "start at most one write per interval")
	f.DurationVar(&c.Timeout, "timeout", 10*time.Minute, "give up after this long")
	f.BoolVar(&c.FranzDefaults, "franz-defaults", false, "keep franz-go's retry and metadata backoffs (default: the Java producer's)")
	return cmd
}
