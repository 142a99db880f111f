package bench

import (
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
)

// s3Command is `fjord bench s3`.
func s3Command() *cobra.Command {
	var (
		cfg                                 S3BenchConfig
		formats, benchFile, jsonOut         string
		fjordPort, fjordHTTPPort, minioPort int
		quick, write                        bool
	)
	cmd := &cobra.Command{
		Use:   "s3",
		Short: "benchmark the S3 sink into a local MinIO against a plain upload of the same bytes by the same SDK (issue 6)",
		Long: "s3 starts MinIO (scripts/s3-server.sh builds it into .cache/bin/minio) and `fjord dev`, produces --records " +
			"JsonConverter records into a topic of --partitions partitions (not timed), then per run and per format " +
			"(JsonFormat; ParquetFormat with snappy) creates an S3 sink and times it from the POST until every complete " +
			"file is in the bucket, beside storage.Store.Put of objects of the same sizes (PutObject below s3.part.size, " +
			"the SDK's upload manager above). It prints the medians with sink ÷ raw against issue 6's goal (JSON ≥ 0.7); " +
			"--write refreshes the S3 block of BENCHMARKS.md.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			cfg.Log = slog.Default()
			cfg.CommandLine, cfg.Quick, cfg.RecordMachine = commandLine(), quick, true
			cfg.Formats = splitList(formats)
			cfg.Addr, cfg.HTTPAddr, cfg.MinioAddr = loopback(fjordPort), loopback(fjordHTTPPort), loopback(minioPort)
			if quick {
				applyS3Quick(&cfg, cmd.Flags().Changed)
			}
			var err error
			if cfg.Bin == "" {
				if cfg.Bin, err = os.Executable(); err != nil {
					return fmt.Errorf("find the fjord binary: %w; pass --fjord-bin", err)
				}
			}
			if cfg.MinioBin, err = findMinio(cfg.MinioBin); err != nil {
				return err
			}
			if cfg.ProfileDir != "" {
				if err := os.MkdirAll(cfg.ProfileDir, 0o755); err != nil {
					return fmt.Errorf("profile dir: %w", err)
				}
			}
			cleanup, err := benchDir(&cfg.Dir, "fjord-bench-s3-", cfg.Keep)
			if err != nil {
				return err
			}
			defer cleanup()
			rep, err := RunS3Bench(ctx, cfg)
			if err != nil {
				return err
			}
			if err := publishReport(cmd.OutOrStdout(), rep.Markdown(), rep, jsonOut, write, benchFile, WriteS3Block); err != nil {
				return err
			}
			if len(rep.Samples) == 0 && len(rep.Errors) > 0 {
				return fmt.Errorf("S3 benchmark: nothing measured: %s", rep.Errors[0])
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Records, "records", 1_000_000, "records produced into the topic (not timed) and written by each sink phase")
	f.IntVar(&cfg.Partitions, "partitions", 4, "the topic's partitions; the sink runs as many tasks")
	f.IntVar(&cfg.FlushSize, "flush-size", 50_000, "the sink's flush.size: records per file (records/partitions should be a multiple; the rest stays in an open file, not timed)")
	f.StringVar(&formats, "formats", "json,parquet", "sink formats to measure, in this order: json (JsonFormat), parquet (ParquetFormat, parquet.codec=snappy)")
	f.IntVar(&cfg.Runs, "runs", 3, "repetitions on the same topic, each phase on a fresh bucket; every figure is the median")
	f.Int64Var(&cfg.PartSize, "part-size", 0, "s3.part.size for the sink and the raw upload (0: the sink's default, 25 MiB)")
	f.IntVar(&cfg.PutConcurrency, "put-concurrency", 4, "objects the raw upload sends at once (the sink uploads up to 4 per task)")
	f.DurationVar(&cfg.Poll, "poll", 50*time.Millisecond, "how often the sink's bucket is listed")
	f.DurationVar(&cfg.PhaseTimeout, "phase-timeout", 10*time.Minute, "give up on a phase (the produce, a sink's files, a raw upload) after this long")
	f.BoolVar(&cfg.Limits, "limits", true, "measure loopback TCP and the disk under MinIO's data first")
	f.StringVar(&cfg.ProfileDir, "profile", "", "write a CPU profile of fjord dev per sink phase into this dir (runN-FORMAT-sink.pprof)")
	f.IntVar(&cfg.ProfileSeconds, "profile-seconds", 5, "length of each CPU profile (from the POST)")
	f.StringVar(&cfg.Dir, "dir", "", "where data dirs go (default: a new temp dir, removed afterwards)")
	f.BoolVar(&cfg.Keep, "keep", false, "keep the data dirs, logs (fjord dev's broker.log, minio.log) and the buckets")
	f.StringVar(&cfg.Bin, "fjord-bin", "", "fjord binary to run as \"fjord dev\" (default: this executable)")
	f.StringVar(&cfg.MinioBin, "minio-bin", "", "MinIO server binary (default: $FJORD_MINIO_BIN, else .cache/bin/minio of the repository holding the working directory)")
	f.IntVar(&fjordPort, "fjord-port", 19740, "fjord dev's Kafka port")
	f.IntVar(&fjordHTTPPort, "fjord-http-port", 19741, "fjord dev's HTTP port (Connect REST API, pprof)")
	f.IntVar(&minioPort, "minio-port", 19742, "MinIO's S3 port")
	f.BoolVar(&quick, "quick", false, "smoke run: 100 k records, flush.size 5,000, 1 run (what the package test runs)")
	f.BoolVar(&write, "write", false, "update the S3 block of --benchmarks-file")
	f.StringVar(&benchFile, "benchmarks-file", "BENCHMARKS.md", "file --write updates")
	f.StringVar(&cfg.Note, "note", "", "a line for the report's header (e.g. whether the machine was quiet)")
	f.StringVar(&jsonOut, "json", "", "also write the full report, every sample, to this JSON file")
	cfg.DiskTestBytes = 512 << 20
	cfg.StartTimeout, cfg.StopGrace = 120*time.Second, 30*time.Second
	return cmd
}

// Quick sizes: a few files per partition, seconds per phase.
const (
	QuickS3Records   = 100_000
	QuickS3FlushSize = 5_000
)

func applyS3Quick(cfg *S3BenchConfig, changed func(string) bool) {
	if !changed("records") {
		cfg.Records = QuickS3Records
	}
	if !changed("flush-size") {
		cfg.FlushSize = QuickS3FlushSize
	}
	if !changed("runs") {
		cfg.Runs = 1
	}
	if !changed("phase-timeout") {
		cfg.PhaseTimeout = 2 * time.Minute
	}
	cfg.DiskTestBytes = 16 << 20
	cfg.StopGrace = 10 * time.Second
}
