package main

import (
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/fjordhq/fjord/internal/cli"
)

func init() { addCommand(newConsumeCmd()) }

// newConsumeCmd builds `fjord consume`, the kafka-console-consumer.sh (and
// kcat -C) of Fjord.
func newConsumeCmd() *cobra.Command {
	var conn cli.ClientOptions
	var o cli.ConsumeOptions
	var partition int
	var timeoutMS int64
	cmd := &cobra.Command{
		Use:   "consume TOPIC",
		Short: "Print a topic's records to stdout",
		Long: `Print a topic's records to stdout until --max-messages, --timeout-ms of silence,
or Ctrl-C. With --group the consumer joins that group and, before exiting, commits
the offsets of the records it printed.`,
		Example: `  fjord consume orders --from-beginning --max-messages 10
  fjord consume orders --group billing --format '%p/%o %k=%v\n'
  fjord consume orders --offset -5 --format json --timeout-ms 2000`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			o.Topic, o.Partition = args[0], int32(partition)
			o.IdleTimeout = time.Duration(timeoutMS) * time.Millisecond
			_, err := cli.Consume(ctx, &conn, o, cmd.OutOrStdout(), cmd.ErrOrStderr())
			return err
		},
	}
	conn.AddFlags(cmd.Flags())
	f := cmd.Flags()
	f.BoolVar(&o.FromBeginning, "from-beginning", false, "start at the earliest offset when there is no committed one (default: latest)")
	f.StringVarP(&o.Group, "group", "g", "", "consume as this consumer group and commit printed offsets")
	f.Int64VarP(&o.MaxMessages, "max-messages", "n", 0, "exit after printing this many records (0: no limit)")
	f.IntVarP(&partition, "partition", "p", -1, "read only this partition")
	f.StringVarP(&o.Offset, "offset", "O", "", "where to start without a group: earliest, latest, an offset, or -N for the last N records")
	f.Int64Var(&timeoutMS, "timeout-ms", 0, "exit when no record arrives for this many milliseconds (0: wait forever)")
	f.StringVarP(&o.Format, "format", "f", "", cli.FormatHelp)
	f.BoolVar(&o.PrintKey, "print-key", false, "print key TAB value (when --format is not given)")
	f.StringVar(&o.IsolationLevel, "isolation-level", "read_uncommitted", "read_uncommitted or read_committed (skip aborted transactions)")
	return cmd
}
