package main

import (
	"github.com/spf13/cobra"

	"github.com/fjordhq/fjord/internal/cli"
)

func init() { addCommand(newTopicCmd()) }

// newTopicCmd builds `fjord topic`, the kafka-topics.sh of Fjord. Commands
// are built by constructors, not package variables, so tests can run them
// many times in one process with fresh flags.
func newTopicCmd() *cobra.Command {
	var conn cli.ClientOptions
	var output string
	printer := func(cmd *cobra.Command) (*cli.Printer, error) {
		return cli.NewPrinter(cmd.OutOrStdout(), output)
	}
	cmd := &cobra.Command{
		Use:   "topic",
		Short: "Create, list, describe, alter and delete topics",
	}
	conn.AddFlags(cmd.PersistentFlags())
	cmd.PersistentFlags().StringVarP(&output, "output", "o", cli.OutputText, "output format: text or json")

	var create cli.TopicCreateOptions
	var partitions, rf int
	createCmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a topic",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := printer(cmd)
			if err != nil {
				return err
			}
			create.Partitions, create.ReplicationFactor = int32(partitions), int16(rf)
			return cli.TopicCreate(cmd.Context(), &conn, args[0], create, p)
		},
	}
	createCmd.Flags().IntVarP(&partitions, "partitions", "p", -1, "number of partitions (default: the broker's num.partitions)")
	createCmd.Flags().IntVarP(&rf, "replication-factor", "r", -1, "replicas per partition (default: the broker's default.replication.factor)")
	createCmd.Flags().StringArrayVarP(&create.Configs, "config", "c", nil, "topic config key=value (repeatable), e.g. cleanup.policy=compact")
	createCmd.Flags().BoolVar(&create.IfNotExists, "if-not-exists", false, "succeed if the topic already exists")
	createCmd.Flags().BoolVar(&create.ValidateOnly, "validate-only", false, "ask the broker to check the request without creating the topic")

	var internal bool
	listCmd := &cobra.Command{
		Use:   "list",
		Short: "List topics with their partition count and replication factor",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := printer(cmd)
			if err != nil {
				return err
			}
			return cli.TopicList(cmd.Context(), &conn, internal, p)
		},
	}
	listCmd.Flags().BoolVar(&internal, "internal", false, "include internal topics such as __consumer_offsets")

	describeCmd := &cobra.Command{
		Use:   "describe [NAME...]",
		Short: "Show partitions (leader, replicas, ISR) and non-default configs of topics (all topics if none named)",
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := printer(cmd)
			if err != nil {
				return err
			}
			return cli.TopicDescribe(cmd.Context(), &conn, args, p)
		},
	}

	var alter cli.TopicAlterOptions
	var alterPartitions int
	alterCmd := &cobra.Command{
		Use:   "alter NAME",
		Short: "Change a topic's configs or grow its partition count",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := printer(cmd)
			if err != nil {
				return err
			}
			alter.Partitions = int32(alterPartitions)
			return cli.TopicAlter(cmd.Context(), &conn, args[0], alter, p)
		},
	}
	alterCmd.Flags().StringArrayVarP(&alter.Set, "config", "c", nil, "set topic config key=value (repeatable)")
	alterCmd.Flags().StringArrayVar(&alter.Delete, "delete-config", nil, "return config key to its default (repeatable)")
	alterCmd.Flags().IntVarP(&alterPartitions, "partitions", "p", 0, "new total number of partitions (can only grow)")
	alterCmd.Flags().BoolVar(&alter.ValidateOnly, "validate-only", false, "ask the broker to check the change without applying it")

	var ifExists bool
	deleteCmd := &cobra.Command{
		Use:   "delete NAME...",
		Short: "Delete topics",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := printer(cmd)
			if err != nil {
				return err
			}
			return cli.TopicDelete(cmd.Context(), &conn, args, ifExists, p)
		},
	}
	deleteCmd.Flags().BoolVar(&ifExists, "if-exists", false, "skip topics that do not exist")

	cmd.AddCommand(createCmd, listCmd, describeCmd, alterCmd, deleteCmd)
	return cmd
}
