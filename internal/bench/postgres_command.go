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

// postgresCommand is `fjord bench postgres`.
func postgresCommand() *cobra.Command {
	var (
		cfg                                              PostgresBenchConfig
		targets, phases, benchFile, jsonOut              string
		fjordPort, fjordHTTPPort, kafkaPort, connectPort int
		quick, write                                     bool
		connectProps                                     []string
	)
	cmd := &cobra.Command{
		Use:   "postgres",
		Short: "benchmark the Postgres CDC source and sink against pg_recvlogical, COPY and Debezium 3.6 (issue 5)",
		Long: "postgres starts a PostgreSQL 15 server (internal/testkit), `fjord dev`, and Apache Kafka 4.4 with Kafka Connect 4.4 " +
			"running Debezium 3.6.1 (jars via scripts/debezium-connect.sh), and times, per target and on fresh tables and slots: " +
			"--rows inserted rows streamed into a topic (snapshot.mode=no_data) beside pg_recvlogical reading the same load; " +
			"--update-rows × --updates updates the same way; the initial snapshot of a --rows table beside COPY TO STDOUT; " +
			"--rows JSON records upserted by the JDBC-compatible sink beside COPY FROM STDIN. It prints the medians with " +
			"Fjord ÷ pg_recvlogical/COPY and Fjord ÷ Debezium against issue 5's goals; --write refreshes the Postgres block " +
			"of BENCHMARKS.md.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			cfg.Log = slog.Default()
			cfg.CommandLine, cfg.Quick, cfg.RecordMachine = commandLine(), quick, true
			cfg.Targets, cfg.Phases = splitList(targets), splitList(phases)
			cfg.Addr, cfg.HTTPAddr = loopback(fjordPort), loopback(fjordHTTPPort)
			cfg.KafkaAddr, cfg.ConnectAddr = loopback(kafkaPort), loopback(connectPort)
			if quick {
				applyPostgresQuick(&cfg, cmd.Flags().Changed)
			}
			for _, kv := range connectProps {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || strings.TrimSpace(k) == "" {
					return fmt.Errorf("--connect-prop %q: want key=value", kv)
				}
				if cfg.ConnectProps == nil {
					cfg.ConnectProps = map[string]string{}
				}
				cfg.ConnectProps[strings.TrimSpace(k)] = v
			}
			var err error
			if cfg.Bin == "" {
				if cfg.Bin, err = os.Executable(); err != nil {
					return fmt.Errorf("find the fjord binary: %w; pass --fjord-bin", err)
				}
			}
			cleanup, err := benchDir(&cfg.Dir, "fjord-bench-postgres-", cfg.Keep)
			if err != nil {
				return err
			}
			defer cleanup()
			rep, err := RunPostgresBench(ctx, cfg)
			if err != nil {
				return err
			}
			if err := publishReport(cmd.OutOrStdout(), rep.Markdown(), rep, jsonOut, write, benchFile, WritePostgresBlock); err != nil {
				return err
			}
			if len(rep.Samples) == 0 && len(rep.Errors) > 0 {
				return fmt.Errorf("postgres benchmark: nothing measured: %s", rep.Errors[0])
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&targets, "targets", "pg,fjord,debezium", "what to measure, in this order: pg (pg_recvlogical and COPY), fjord (fjord dev), "+
		"debezium (Debezium 3.6.1 on Kafka Connect 4.4 and Apache Kafka 4.4; Java 17 and Maven)")
	f.StringVar(&phases, "phases", "insert,update,snapshot,sink", "phases to run")
	f.IntVar(&cfg.Rows, "rows", 200_000, "rows inserted (insert), in the snapshot's table (snapshot), and upserted (sink)")
	f.IntVar(&cfg.UpdateRows, "update-rows", 20_000, "rows of the update phase's table")
	f.IntVar(&cfg.Updates, "updates", 10, "updates per row in the update phase")
	f.IntVar(&cfg.TxnRows, "txn-rows", 2_000, "rows per INSERT or UPDATE transaction of the streaming loads")
	f.IntVar(&cfg.Runs, "runs", 3, "repetitions, each in a fresh database (and a fresh fjord dev); every figure is the median")
	f.BoolVar(&cfg.Verify, "verify", true, "in the first run, read every CDC topic back and check its events")
	f.DurationVar(&cfg.Poll, "poll", 10*time.Millisecond, "how often a topic's end offsets are read")
	f.DurationVar(&cfg.DBPoll, "db-poll", 100*time.Millisecond, "how often the sink's table is counted")
	// Debezium streams a few thousand rows/s on a busy 2-core machine: 200 k
	// rows take minutes.
	f.DurationVar(&cfg.PhaseTimeout, "phase-timeout", 10*time.Minute, "give up on a phase (its rows not all delivered) after this long")
	f.StringVar(&cfg.Dir, "dir", "", "where data dirs go (default: a new temp dir, removed afterwards)")
	f.BoolVar(&cfg.Keep, "keep", false, "keep the data dirs and logs (fjord dev's broker.log, Kafka's and Kafka Connect's logs)")
	f.StringVar(&cfg.Bin, "fjord-bin", "", "fjord binary to run as \"fjord dev\" (default: this executable)")
	f.IntVar(&fjordPort, "fjord-port", 19730, "fjord dev's Kafka port")
	f.IntVar(&fjordHTTPPort, "fjord-http-port", 19731, "fjord dev's HTTP port (Connect REST API)")
	f.IntVar(&kafkaPort, "kafka-port", 19732, "Apache Kafka's port (controller on the next one)")
	f.IntVar(&connectPort, "connect-port", 19734, "Kafka Connect's REST port")
	f.StringArrayVar(&connectProps, "connect-prop", nil, "Kafka Connect worker property key=value over fjord dev's (repeatable; an experiment, stated in the report)")
	f.StringVar(&cfg.KafkaScript, "kafka-script", "scripts/kafka.sh", "the script that fetches and formats Apache Kafka")
	f.StringVar(&cfg.DebeziumScript, "debezium-script", "scripts/debezium-connect.sh", "the script that fetches Debezium and Kafka Connect")
	f.BoolVar(&quick, "quick", false, "smoke run: 20 k rows, 2 k × 10 updates, 1 run (what the package test runs)")
	f.BoolVar(&write, "write", false, "update the Postgres block of --benchmarks-file")
	f.StringVar(&benchFile, "benchmarks-file", "BENCHMARKS.md", "file --write updates")
	f.StringVar(&cfg.Note, "note", "", "a line for the report's header (e.g. whether the machine was quiet)")
	f.StringVar(&jsonOut, "json", "", "also write the full report, every sample, to this JSON file")
	cfg.WarmupFrac = 0.1
	cfg.StartTimeout, cfg.StopGrace = 180*time.Second, 30*time.Second
	return cmd
}

// Quick sizes keep a smoke run to seconds per phase while still spanning
// several load transactions and many polls.
const (
	QuickPostgresRows       = 20_000
	QuickPostgresUpdateRows = 2_000
)

func applyPostgresQuick(cfg *PostgresBenchConfig, changed func(string) bool) {
	if !changed("rows") {
		cfg.Rows = QuickPostgresRows
	}
	if !changed("update-rows") {
		cfg.UpdateRows = QuickPostgresUpdateRows
	}
	if !changed("runs") {
		cfg.Runs = 1
	}
	if !changed("db-poll") {
		cfg.DBPoll = 20 * time.Millisecond // a few hundred ms of sink work
	}
	if !changed("phase-timeout") {
		cfg.PhaseTimeout = 2 * time.Minute
	}
	cfg.StopGrace = 10 * time.Second
}
