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

// mirrorCommand is `fjord bench mirror`.
func mirrorCommand(self []string, childEnv []string) *cobra.Command {
	var (
		cfg                                    MirrorBenchConfig
		mirrors, phases, benchFile, jsonOut    string
		srcPort, srcHTTPPort, dstPort, dstHTTP int
		quick, write                           bool
		props                                  []string
	)
	cmd := &cobra.Command{
		Use:   "mirror",
		Short: "benchmark `fjord mirror` against a plain consume and Apache Kafka's MirrorMaker 2 between two local clusters (issue 7)",
		Long: "mirror starts two `fjord dev --no-connect` clusters on loopback, produces --records records of --size bytes into a " +
			"topic of --partitions partitions on the source (not timed), then per run times a plain franz-go consume of the topic " +
			"(`fjord bench consume`), `fjord mirror mm2.properties` and Apache Kafka's MirrorMaker 2 (scripts/mm2.sh; Java 17 and " +
			"Maven) from their process start until the remote topic on the target holds every record, each on a fresh flow; and " +
			"the replication latency of each mirror at --latency-rate records/s. It prints the medians with Fjord ÷ raw and " +
			"Fjord ÷ MirrorMaker 2 against issue 7's goals; --write refreshes the mirror block of BENCHMARKS.md.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			cfg.Log = slog.Default()
			cfg.Self, cfg.Env = self, childEnv
			cfg.CommandLine, cfg.Quick, cfg.RecordMachine = commandLine(), quick, true
			cfg.Mirrors, cfg.Phases = splitList(mirrors), splitList(phases)
			cfg.SourceAddr, cfg.SourceHTTPAddr = loopback(srcPort), loopback(srcHTTPPort)
			cfg.TargetAddr, cfg.TargetHTTPAddr = loopback(dstPort), loopback(dstHTTP)
			for _, kv := range props {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || strings.TrimSpace(k) == "" {
					return fmt.Errorf("--mirror-prop %q: want key=value", kv)
				}
				if cfg.Props == nil {
					cfg.Props = map[string]string{}
				}
				cfg.Props[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
			if quick {
				applyMirrorQuick(&cfg, cmd.Flags().Changed)
			}
			var err error
			if cfg.Bin == "" {
				if cfg.Bin, err = os.Executable(); err != nil {
					return fmt.Errorf("find the fjord binary: %w; pass --fjord-bin", err)
				}
			}
			cleanup, err := benchDir(&cfg.Dir, "fjord-bench-mirror-", cfg.Keep)
			if err != nil {
				return err
			}
			defer cleanup()
			rep, err := RunMirrorBench(ctx, cfg)
			if err != nil {
				return err
			}
			if err := publishReport(cmd.OutOrStdout(), rep.Markdown(), rep, jsonOut, write, benchFile, WriteMirrorBlock); err != nil {
				return err
			}
			if len(rep.Samples) == 0 && len(rep.Errors) > 0 {
				return fmt.Errorf("mirror benchmark: nothing measured: %s", rep.Errors[0])
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Records, "records", 1_000_000, "records produced into the source topic (not timed) and mirrored by each throughput phase")
	f.IntVar(&cfg.Size, "size", 100, "record value bytes (no keys)")
	f.IntVar(&cfg.Partitions, "partitions", 4, "partitions of the source topics")
	f.IntVar(&cfg.TasksMax, "tasks-max", 4, "tasks.max of both mirrors")
	f.StringVar(&mirrors, "mirrors", "fjord,mm2", "mirrors to measure, in this order: fjord (fjord mirror), mm2 (Apache Kafka's MirrorMaker 2; Java 17 and Maven)")
	f.StringVar(&phases, "phases", "throughput,latency", "phases: throughput (raw consume and each mirror), latency")
	f.BoolVar(&cfg.RequireMM2, "require-mm2", false, "fail instead of leaving MirrorMaker 2 out when Java or its jars are missing")
	f.StringVar(&cfg.MM2Script, "mm2-script", "scripts/mm2.sh", "the script that fetches and runs MirrorMaker 2")
	f.StringArrayVar(&props, "mirror-prop", nil, "a further mm2.properties key=value for both mirrors (repeatable); "+
		"keys may start with SOURCE., TARGET. or SOURCE->TARGET., the aliases of each phase's flow (e.g. SOURCE.consumer.fetch.max.bytes=52428800)")
	f.IntVar(&cfg.Runs, "runs", 3, "repetitions on the same clusters and topic, each mirror phase on a fresh flow; every figure is the median")
	f.DurationVar(&cfg.Poll, "poll", 20*time.Millisecond, "how often the remote topic's end offsets are listed")
	f.IntVar(&cfg.LatencyRate, "latency-rate", MirrorGoalRateHint, "records per second of the latency phase")
	f.DurationVar(&cfg.LatencyDuration, "latency-duration", 10*time.Second, "timed length of each latency phase")
	f.DurationVar(&cfg.LatencyWarmup, "latency-warmup", 2*time.Second, "least time records flow through the mirror before the latency clock starts")
	f.DurationVar(&cfg.PhaseTimeout, "phase-timeout", 10*time.Minute, "give up on a phase (the produce, a consume, a mirror's copy) after this long")
	f.BoolVar(&cfg.Limits, "limits", true, "measure loopback TCP and the disk under the source broker's data first")
	f.StringVar(&cfg.Dir, "dir", "", "where data dirs go (default: a new temp dir, removed afterwards)")
	f.BoolVar(&cfg.Keep, "keep", false, "keep the data dirs, logs (the clusters' broker.log, each mirror's log and mm2.properties under mirrors/) and the topics")
	f.StringVar(&cfg.Bin, "fjord-bin", "", "fjord binary run as both clusters and as `fjord mirror` (default: this executable)")
	f.IntVar(&srcPort, "source-port", 19750, "the source cluster's Kafka port")
	f.IntVar(&srcHTTPPort, "source-http-port", 19751, "the source cluster's HTTP port")
	f.IntVar(&dstPort, "target-port", 19752, "the target cluster's Kafka port")
	f.IntVar(&dstHTTP, "target-http-port", 19753, "the target cluster's HTTP port")
	f.BoolVar(&quick, "quick", false, "smoke run: 100 k records, 2 s of latency, 1 run (what the package test runs)")
	f.BoolVar(&write, "write", false, "update the mirror block of --benchmarks-file")
	f.StringVar(&benchFile, "benchmarks-file", "BENCHMARKS.md", "file --write updates")
	f.StringVar(&cfg.Note, "note", "", "a line for the report's header (e.g. whether the machine was quiet)")
	f.StringVar(&jsonOut, "json", "", "also write the full report, every sample, to this JSON file")
	cfg.DiskTestBytes = 512 << 20
	cfg.StartTimeout, cfg.StopGrace = 120*time.Second, 30*time.Second
	return cmd
}

// Quick sizes: seconds per phase.
const (
	QuickMirrorRecords = 100_000
	QuickMirrorLatency = 2 * time.Second
)

func applyMirrorQuick(cfg *MirrorBenchConfig, changed func(string) bool) {
	if !changed("records") {
		cfg.Records = QuickMirrorRecords
	}
	if !changed("runs") {
		cfg.Runs = 1
	}
	if !changed("latency-duration") {
		cfg.LatencyDuration = QuickMirrorLatency
	}
	if !changed("latency-warmup") {
		cfg.LatencyWarmup = time.Second
	}
	if !changed("phase-timeout") {
		cfg.PhaseTimeout = 2 * time.Minute
	}
	cfg.DiskTestBytes = 16 << 20
	cfg.StopGrace = 10 * time.Second
}
