package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
)

// connectCommand is `fjord bench connect`, with its two raw drivers as
// subcommands (`fjord bench connect produce|consume`), each meant to run
// as a process of its own.
func connectCommand(self []string, childEnv []string) *cobra.Command {
	var (
		cfg                                      ConnectConfig
		converters, benchFile, jsonOut, fjordBin string
		fjordPort, fjordHTTPPort, profileSeconds int
		quick, write                             bool
		profileDir                               string
	)
	cmd := &cobra.Command{
		Use:   "connect",
		Short: "benchmark the Connect runtime against plain franz-go (datagen source, NullSink sink; JSON and Avro)",
		Long: "connect starts `fjord dev` (broker, Connect worker, schema registry), and for each converter runs, one at a time: " +
			"a franz-go producer sending datagen's records encoded beforehand, the same with generation and conversion in the " +
			"loop, the datagen source connector; then a franz-go consumer, the same decoding each record, and a NullSink " +
			"connector. It prints records/s and CPU per record of each, with Connect ÷ franz-go against issue 3's goal " +
			"(≥ 0.7 with JsonConverter); --write refreshes the Connect block of BENCHMARKS.md.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			cfg.Self, cfg.Env, cfg.Log = self, childEnv, slog.Default()
			cfg.Converters = splitList(converters)
			cfg.Addr, cfg.HTTPAddr = loopback(fjordPort), loopback(fjordHTTPPort)
			cfg.CommandLine, cfg.Quick, cfg.RecordMachine = commandLine(), quick, true
			cfg.ProfileDir, cfg.ProfileSeconds = profileDir, profileSeconds
			changed := cmd.Flags().Changed
			if quick {
				applyConnectQuick(&cfg, changed)
			}
			var err error
			if cfg.Bin = fjordBin; cfg.Bin == "" {
				if cfg.Bin, err = os.Executable(); err != nil {
					return fmt.Errorf("find the fjord binary: %w; pass --fjord-bin", err)
				}
			}
			if profileDir != "" {
				if err := os.MkdirAll(profileDir, 0o755); err != nil {
					return fmt.Errorf("profile dir: %w", err)
				}
			}
			cleanup, err := benchDir(&cfg.Dir, "fjord-bench-connect-", cfg.Keep)
			if err != nil {
				return err
			}
			defer cleanup()
			rep, err := RunConnect(ctx, cfg)
			if err != nil {
				return err
			}
			if err := publishReport(cmd.OutOrStdout(), rep.Markdown(), rep, jsonOut, write, benchFile, WriteConnectBlock); err != nil {
				return err
			}
			if len(rep.Errors) > 0 && len(rep.Phases) == 0 {
				return fmt.Errorf("connect benchmark: nothing measured: %s", rep.Errors[0])
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Records, "records", 1_000_000, "records per phase (the first tenth is not timed)")
	f.IntVar(&cfg.Runs, "runs", 3, "repetitions, each on a fresh fjord dev; every figure is the median")
	f.StringVar(&converters, "converters", "json,avro", "converters to measure: json (JsonConverter with schemas), avro (AvroConverter, fjord dev's registry)")
	f.StringVar(&cfg.Spec, "schema", DefaultConnectSpec, "datagen value.schema of the records")
	f.Int64Var(&cfg.Seed, "seed", 20261129, "datagen seed")
	f.IntVar(&cfg.Pool, "pool", 100_000, "distinct records the raw producer encodes beforehand (cycled beyond)")
	f.BoolVar(&cfg.Verify, "verify", true, "in the first run, check that the source connector wrote the same bytes as the raw drivers")
	f.DurationVar(&cfg.Poll, "poll", 10*time.Millisecond, "how often a connector's progress is read (topic end offsets, sink group commits)")
	f.StringVar(&cfg.Dir, "dir", "", "where data dirs go (default: a new temp dir, removed afterwards)")
	f.BoolVar(&cfg.Keep, "keep", false, "keep the data dirs (fjord dev's log is broker.log in each)")
	f.StringVar(&fjordBin, "fjord-bin", "", "fjord binary to run as \"fjord dev\" (default: this executable)")
	f.IntVar(&fjordPort, "fjord-port", 19698, "fjord dev's Kafka port")
	f.IntVar(&fjordHTTPPort, "fjord-http-port", 19699, "fjord dev's HTTP port (Connect REST API, registry, pprof)")
	f.StringVar(&profileDir, "profile", "", "write a CPU profile of fjord dev per phase into this dir (runN-CONV-PHASE.pprof)")
	f.IntVar(&profileSeconds, "profile-seconds", 5, "length of each CPU profile (from the phase's start)")
	f.BoolVar(&quick, "quick", false, "smoke run: 100 k records, 1 run (seconds; what the harness test runs)")
	f.BoolVar(&write, "write", false, "update the Connect block of --benchmarks-file")
	f.StringVar(&benchFile, "benchmarks-file", "BENCHMARKS.md", "file --write updates")
	f.StringVar(&cfg.Note, "note", "", "a line for the report's header (e.g. whether the machine was quiet)")
	f.StringVar(&jsonOut, "json", "", "also write the full report, every phase of every run, to this JSON file")
	cfg.WarmupFrac = 0.1
	cfg.StartTimeout, cfg.PhaseTimeout, cfg.StopGrace = 120*time.Second, 5*time.Minute, 30*time.Second

	cmd.AddCommand(connectDriverCommand("produce",
		"produce the datagen connector's records with plain franz-go (encoded beforehand, or with --convert in the loop); print throughput as JSON",
		RunConnectProduce))
	cmd.AddCommand(connectDriverCommand("consume",
		"consume a topic from the beginning with plain franz-go (with --convert decoding each record); print throughput as JSON",
		RunConnectConsume))
	return cmd
}

// QuickConnectRecords keeps a smoke run to seconds: every phase still
// spans many polls and batches.
const QuickConnectRecords = 100_000

func applyConnectQuick(cfg *ConnectConfig, changed func(string) bool) {
	if !changed("records") {
		cfg.Records = QuickConnectRecords
	}
	if !changed("runs") {
		cfg.Runs = 1
	}
	cfg.PhaseTimeout = time.Minute
	cfg.StopGrace = 10 * time.Second
}

func connectDriverCommand(mode, short string, fn func(context.Context, ConnectDriverConfig) (ConnectResult, error)) *cobra.Command {
	var c ConnectDriverConfig
	cmd := &cobra.Command{
		Use:   mode + " --brokers ADDR --topic T --records N --converter json|avro [--convert]",
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
	f.IntVar(&c.Records, "records", 1_000_000, "records in all, warm-up included")
	f.IntVar(&c.Warmup, "warmup", 0, "the first records, not timed")
	f.StringVar(&c.Converter, "converter", ConvJSON, "json or avro")
	f.StringVar(&c.Registry, "registry", "", "schema registry URL (avro)")
	f.StringVar(&c.Spec, "schema", DefaultConnectSpec, "datagen value.schema")
	f.Int64Var(&c.Seed, "seed", 20261129, "datagen seed")
	f.BoolVar(&c.Convert, "convert", false, "do the converter's work in the timed loop (produce: generate and encode; consume: decode)")
	f.IntVar(&c.Pool, "pool", 100_000, "produce without --convert: distinct records encoded beforehand, cycled")
	f.Int64Var(&c.ExpectBytes, "expect-bytes", 0, "consume: key+value bytes the topic must hold (0: unchecked)")
	f.IntVar(&c.MaxPoll, "max-poll", 0, "consume: take at most this many records per poll, as the sink loop does (0: all buffered)")
	f.DurationVar(&c.Timeout, "timeout", 10*time.Minute, "give up after this long")
	return cmd
}
