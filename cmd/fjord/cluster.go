package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/fjordhq/fjord/internal/cli"
)

func init() { addCommand(newClusterCmd()) }

// newClusterCmd builds `fjord cluster`: describe, elect-leaders, reassign
// (kafka-reassign-partitions.sh) and remove-broker.
func newClusterCmd() *cobra.Command {
	var conn cli.ClientOptions
	var output string
	printer := func(cmd *cobra.Command) (*cli.Printer, error) {
		return cli.NewPrinter(cmd.OutOrStdout(), output)
	}
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Inspect and operate a broker cluster: describe, elect leaders, reassign partitions, remove a broker",
	}
	conn.AddFlags(cmd.PersistentFlags())
	cmd.PersistentFlags().StringVarP(&output, "output", "o", cli.OutputText, "output format: text or json")

	describeCmd := &cobra.Command{
		Use:   "describe",
		Short: "Show the cluster id, controller, brokers, and under-replicated, offline and not-preferred-leader partitions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := printer(cmd)
			if err != nil {
				return err
			}
			return cli.ClusterDescribe(cmd.Context(), &conn, p)
		},
	}

	var elect cli.ElectLeadersOptions
	var electPartition int
	electCmd := &cobra.Command{
		Use:   "elect-leaders (--topic T [--partition N] | --all) [--type preferred|unclean]",
		Short: "Run a preferred or unclean leader election (kafka-leader-election.sh)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := printer(cmd)
			if err != nil {
				return err
			}
			elect.Partition = int32(electPartition)
			if !cmd.Flags().Changed("partition") {
				elect.Partition = -1
			} else if electPartition < 0 {
				return fmt.Errorf("--partition %d: want a partition number", electPartition)
			}
			return cli.ElectLeaders(cmd.Context(), &conn, elect, p)
		},
	}
	electCmd.Flags().StringVar(&elect.Type, "type", "preferred", "election type: preferred (move leadership back to the first replica) or unclean (elect an out-of-sync replica of a leaderless partition; may lose data)")
	electCmd.Flags().StringVar(&elect.Type, "election-type", "preferred", "alias of --type, as kafka-leader-election.sh names it")
	electCmd.Flags().StringVar(&elect.Topic, "topic", "", "topic whose partitions to elect leaders for")
	electCmd.Flags().IntVar(&electPartition, "partition", -1, "only this partition of --topic")
	electCmd.Flags().BoolVar(&elect.All, "all", false, "every partition of every topic")
	electCmd.Flags().BoolVar(&elect.All, "all-topic-partitions", false, "alias of --all, as kafka-leader-election.sh names it")
	electCmd.Flags().MarkHidden("election-type")
	electCmd.Flags().MarkHidden("all-topic-partitions")

	cmd.AddCommand(describeCmd, electCmd, newReassignCmd(&conn, printer), newRemoveBrokerCmd(&conn, printer))
	return cmd
}

func newReassignCmd(conn *cli.ClientOptions, printer func(*cobra.Command) (*cli.Printer, error)) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "reassign",
		Short: "Move partition replicas between brokers (kafka-reassign-partitions.sh's JSON files and steps)",
		Long: `Move partition replicas between brokers, with kafka-reassign-partitions.sh's JSON files:

  generate  propose an assignment of some topics onto a list of brokers
  execute   start the reassignment in a file (optionally throttled)
  verify    show progress; once nothing is moving, remove the throttle
  cancel    stop the file's reassignments that are still running
  list      show every reassignment in progress`,
	}

	var topicsFile, brokerList string
	var disableRackAware bool
	generateCmd := &cobra.Command{
		Use:   "generate --topics-to-move-json-file F --broker-list 1,2,3",
		Short: "Print the current assignment of some topics and a proposed one on the given brokers",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := printer(cmd)
			if err != nil {
				return err
			}
			return cli.ReassignGenerate(cmd.Context(), conn, topicsFile, brokerList, disableRackAware, p)
		},
	}
	generateCmd.Flags().StringVar(&topicsFile, "topics-to-move-json-file", "", `JSON file of the topics to move: {"version":1,"topics":[{"topic":"foo"}]}`)
	generateCmd.Flags().StringVar(&brokerList, "broker-list", "", "comma-separated ids of the brokers to place the topics on")
	generateCmd.Flags().BoolVar(&disableRackAware, "disable-rack-aware", false, "ignore broker.rack when placing replicas")

	var exec cli.ReassignExecuteOptions
	executeCmd := &cobra.Command{
		Use:   "execute --reassignment-json-file F [--throttle BYTES_PER_SEC]",
		Short: "Start the reassignment in a file",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := printer(cmd)
			if err != nil {
				return err
			}
			return cli.ReassignExecute(cmd.Context(), conn, exec, p)
		},
	}
	executeCmd.Flags().StringVar(&exec.File, "reassignment-json-file", "", "reassignment JSON (as generate prints it)")
	executeCmd.Flags().Int64Var(&exec.Throttle, "throttle", -1, "limit inter-broker replication of the moving replicas to this many bytes/s (remove it with verify)")
	executeCmd.Flags().BoolVar(&exec.Additional, "additional", false, "start even though other reassignments are in progress (or change the throttle of a running one)")

	var verifyFile string
	var preserve bool
	verifyCmd := &cobra.Command{
		Use:   "verify --reassignment-json-file F",
		Short: "Show the state of each partition of a reassignment; remove the throttle once nothing is moving",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := printer(cmd)
			if err != nil {
				return err
			}
			return cli.ReassignVerify(cmd.Context(), conn, verifyFile, preserve, p)
		},
	}
	verifyCmd.Flags().StringVar(&verifyFile, "reassignment-json-file", "", "the reassignment JSON given to execute")
	verifyCmd.Flags().BoolVar(&preserve, "preserve-throttles", false, "leave the throttle configs in place")

	var cancelFile string
	var cancelPreserve bool
	cancelCmd := &cobra.Command{
		Use:   "cancel --reassignment-json-file F",
		Short: "Cancel the reassignments of a file that are still running",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := printer(cmd)
			if err != nil {
				return err
			}
			return cli.ReassignCancel(cmd.Context(), conn, cancelFile, cancelPreserve, p)
		},
	}
	cancelCmd.Flags().StringVar(&cancelFile, "reassignment-json-file", "", "the reassignment JSON given to execute")
	cancelCmd.Flags().BoolVar(&cancelPreserve, "preserve-throttles", false, "leave the throttle configs in place")

	listCmd := &cobra.Command{
		Use:   "list",
		Short: "List the reassignments in progress",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := printer(cmd)
			if err != nil {
				return err
			}
			return cli.ReassignList(cmd.Context(), conn, p)
		},
	}
	cmd.AddCommand(generateCmd, executeCmd, verifyCmd, cancelCmd, listCmd)
	return cmd
}

func newRemoveBrokerCmd(conn *cli.ClientOptions, printer func(*cobra.Command) (*cli.Printer, error)) *cobra.Command {
	var o cli.RemoveBrokerOptions
	cmd := &cobra.Command{
		Use:   "remove-broker ID",
		Short: "Move every replica off a broker (same replication factor, rack-aware), wait, then unregister it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := strconv.ParseInt(args[0], 10, 32)
			if err != nil || id < 0 {
				return fmt.Errorf("broker id %q: want a number, as `fjord cluster describe` lists them", args[0])
			}
			p, err := printer(cmd)
			if err != nil {
				return err
			}
			return cli.RemoveBroker(cmd.Context(), conn, int32(id), o, p)
		},
	}
	cmd.Flags().Int64Var(&o.Throttle, "throttle", -1, "limit the replication of moving replicas to this many bytes/s while they move")
	cmd.Flags().BoolVar(&o.DryRun, "dry-run", false, "print the moves without making them")
	cmd.Flags().DurationVar(&o.Wait, "wait", time.Hour, "how long to wait for the moves before giving up (they keep running)")
	return cmd
}
