package main

import (
	"github.com/spf13/cobra"

	"github.com/fjordhq/fjord/internal/cli"
)

func init() { addCommand(newGroupCmd()) }

// newGroupCmd builds `fjord group`, the kafka-consumer-groups.sh of Fjord.
func newGroupCmd() *cobra.Command {
	var conn cli.ClientOptions
	var output string
	printer := func(cmd *cobra.Command) (*cli.Printer, error) {
		return cli.NewPrinter(cmd.OutOrStdout(), output)
	}
	cmd := &cobra.Command{
		Use:   "group",
		Short: "List, describe (with lag), reset offsets of, and delete consumer groups",
	}
	conn.AddFlags(cmd.PersistentFlags())
	cmd.PersistentFlags().StringVarP(&output, "output", "o", cli.OutputText, "output format: text or json")

	listCmd := &cobra.Command{
		Use:   "list",
		Short: "List consumer groups with their state",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := printer(cmd)
			if err != nil {
				return err
			}
			return cli.GroupList(cmd.Context(), &conn, p)
		},
	}

	describeCmd := &cobra.Command{
		Use:   "describe [GROUP...]",
		Short: "Show state, members, and per-partition offsets and lag of groups (all groups if none named)",
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := printer(cmd)
			if err != nil {
				return err
			}
			return cli.GroupDescribe(cmd.Context(), &conn, args, p)
		},
	}

	var reset cli.ResetOptions
	var dryRun bool
	resetCmd := &cobra.Command{
		Use:   "reset-offsets GROUP",
		Short: "Move an inactive group's committed offsets (dry run unless --execute)",
		Example: `  fjord group reset-offsets billing --topic orders --to-earliest            # show the plan
  fjord group reset-offsets billing --topic orders:0,1 --shift-by -10 --execute
  fjord group reset-offsets billing --all-topics --by-duration 1h --execute`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := printer(cmd)
			if err != nil {
				return err
			}
			if dryRun {
				reset.Execute = false
			}
			return cli.GroupResetOffsets(cmd.Context(), &conn, args[0], reset, p)
		},
	}
	f := resetCmd.Flags()
	f.StringArrayVarP(&reset.Topics, "topic", "t", nil, "TOPIC or TOPIC:P1,P2 to reset (repeatable)")
	f.BoolVar(&reset.AllTopics, "all-topics", false, "reset every topic the group has committed offsets for")
	f.BoolVar(&reset.ToEarliest, "to-earliest", false, "move to the earliest offset")
	f.BoolVar(&reset.ToLatest, "to-latest", false, "move to the latest offset (skip everything)")
	f.StringVar(&reset.ToOffset, "to-offset", "", "move to this offset (clamped to the partition's range)")
	f.StringVar(&reset.ToDatetime, "to-datetime", "", "move to the first record at or after this time (RFC 3339)")
	f.StringVar(&reset.ShiftBy, "shift-by", "", "move by N records from the committed offset (negative: back)")
	f.StringVar(&reset.ByDuration, "by-duration", "", "move to the first record within this duration of now (1h30m or PT1H30M)")
	f.BoolVar(&dryRun, "dry-run", false, "only show the new offsets (the default)")
	f.BoolVar(&reset.Execute, "execute", false, "commit the new offsets")
	resetCmd.MarkFlagsMutuallyExclusive("dry-run", "execute")
	resetCmd.MarkFlagsMutuallyExclusive("topic", "all-topics")

	deleteCmd := &cobra.Command{
		Use:   "delete GROUP...",
		Short: "Delete inactive groups and their committed offsets",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := printer(cmd)
			if err != nil {
				return err
			}
			return cli.GroupDelete(cmd.Context(), &conn, args, p)
		},
	}

	cmd.AddCommand(listCmd, describeCmd, resetCmd, deleteCmd)
	return cmd
}
