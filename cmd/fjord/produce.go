package main

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/fjordhq/fjord/internal/cli"
)

func init() { addCommand(newProduceCmd()) }

// newProduceCmd builds `fjord produce`, the kafka-console-producer.sh of
// Fjord: one record per stdin line.
func newProduceCmd() *cobra.Command {
	var conn cli.ClientOptions
	var o cli.ProduceOptions
	var partition int
	cmd := &cobra.Command{
		Use:   "produce TOPIC",
		Short: "Send stdin lines to a topic, one record per line",
		Long: `Send stdin lines to a topic, one record per line, and report how many the
brokers acknowledged. With --key-separator each line is KEY<SEP>VALUE. The first
record that fails stops the run with its line number and Kafka error.`,
		Example: `  printf 'k1:v1\nk2:v2\n' | fjord produce orders --key-separator :
  echo 'k1:NULL' | fjord produce orders --key-separator : --null-value-marker NULL   # tombstone`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			o.Topic, o.Partition = args[0], int32(partition)
			_, err := cli.Produce(ctx, &conn, o, cmd.InOrStdin(), cmd.ErrOrStderr())
			return err
		},
	}
	conn.AddFlags(cmd.Flags())
	f := cmd.Flags()
	f.StringVarP(&o.KeySeparator, "key-separator", "K", "", "split each line into key and value at the first SEP")
	f.StringArrayVarP(&o.Headers, "headers", "H", nil, `headers for every record: k=v,k2=v2 (repeatable; \ escapes , and =)`)
	f.IntVarP(&partition, "partition", "p", -1, "send every record to this partition (default: by key, like Kafka's partitioner)")
	f.StringVar(&o.Acks, "acks", "all", "acknowledgements to wait for: all, 1 or 0")
	f.StringVarP(&o.Compression, "compression", "z", "none", "batch compression: none, gzip, snappy, lz4 or zstd")
	f.StringVar(&o.NullValueMarker, "null-value-marker", "", "a value equal to this is sent as null (a tombstone)")
	f.DurationVar(&o.Linger, "linger", 0, "how long to wait for more records before sending a batch (linger.ms)")
	f.IntVar(&o.BatchSize, "batch-size", 0, "maximum bytes of one record batch (default 1MB)")
	f.DurationVar(&o.ProgressEvery, "progress-interval", 0, "how often to print progress on stderr (default 5s)")
	return cmd
}
