package main

import (
	"bufio"
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fjordhq/fjord/internal/cli"
)

func init() { addCommand(newUserCmd()) }

// newUserCmd builds `fjord user`: SCRAM credentials, as kafka-configs
// --entity-type users --add-config 'SCRAM-SHA-256=[...]' manages them.
func newUserCmd() *cobra.Command {
	var conn cli.ClientOptions
	var output string
	printer := func(cmd *cobra.Command) (*cli.Printer, error) {
		return cli.NewPrinter(cmd.OutOrStdout(), output)
	}
	cmd := &cobra.Command{
		Use:   "user",
		Short: "Set, describe and delete users' SASL/SCRAM credentials (stored salted by the brokers)",
	}
	conn.AddFlags(cmd.PersistentFlags())
	cmd.PersistentFlags().StringVarP(&output, "output", "o", cli.OutputText, "output format: text or json")

	var set cli.UserSetOptions
	var fromStdin bool
	setCmd := &cobra.Command{
		Use:   "set USER",
		Short: "Create or replace a user's SCRAM credential for one mechanism",
		Example: `  fjord user set alice --mechanism SCRAM-SHA-256 --password alice-secret
  echo "$PASSWORD" | fjord user set alice --mechanism SCRAM-SHA-512 --password-stdin --iterations 8192`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := printer(cmd)
			if err != nil {
				return err
			}
			if fromStdin {
				if set.Password != "" {
					return errors.New("--password and --password-stdin: give one")
				}
				line, err := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
				if err != nil && line == "" {
					return errors.New("--password-stdin: no password on standard input")
				}
				set.Password = strings.TrimRight(line, "\r\n")
			}
			return cli.UserSet(cmd.Context(), &conn, args[0], set, p)
		},
	}
	setCmd.Flags().StringVar(&set.Mechanism, "mechanism", "SCRAM-SHA-256", "SCRAM-SHA-256 or SCRAM-SHA-512")
	setCmd.Flags().StringVar(&set.Password, "password", "", "the password (visible to other local users in the process list; prefer --password-stdin)")
	setCmd.Flags().BoolVar(&fromStdin, "password-stdin", false, "read the password from the first line of standard input")
	setCmd.Flags().Int32Var(&set.Iterations, "iterations", cli.DefaultScramIterations, "PBKDF2 iterations, 4096..16384")

	describeCmd := &cobra.Command{
		Use:   "describe [USER...]",
		Short: "Show users' SCRAM mechanisms and iterations (every user if none named)",
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := printer(cmd)
			if err != nil {
				return err
			}
			return cli.UserDescribe(cmd.Context(), &conn, args, p)
		},
	}

	var mechanism string
	deleteCmd := &cobra.Command{
		Use:   "delete USER",
		Short: "Delete a user's SCRAM credential for --mechanism (every mechanism if not given)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := printer(cmd)
			if err != nil {
				return err
			}
			return cli.UserDelete(cmd.Context(), &conn, args[0], mechanism, p)
		},
	}
	deleteCmd.Flags().StringVar(&mechanism, "mechanism", "", "SCRAM-SHA-256 or SCRAM-SHA-512 (default: all the user has)")

	cmd.AddCommand(setCmd, describeCmd, deleteCmd)
	return cmd
}
