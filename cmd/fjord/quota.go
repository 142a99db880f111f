package main

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fjordhq/fjord/internal/cli"
)

func init() { addCommand(newQuotaCmd()) }

// newQuotaCmd builds `fjord quota`: client quotas, as kafka-configs
// --entity-type users|clients --add-config producer_byte_rate=... manages
// them.
func newQuotaCmd() *cobra.Command {
	var conn cli.ClientOptions
	var output string
	printer := func(cmd *cobra.Command) (*cli.Printer, error) {
		return cli.NewPrinter(cmd.OutOrStdout(), output)
	}
	cmd := &cobra.Command{
		Use:   "quota",
		Short: "Set, describe and delete client quotas (byte rates per user and/or client id)",
		Long: `Client quotas limit what a user (the authenticated principal's name;
ANONYMOUS on PLAINTEXT), a client id, or a user's client id may send and
fetch per second on each broker. The brokers enforce producer_byte_rate and
consumer_byte_rate by throttling; request_percentage and
controller_mutation_rate are stored but not enforced.

The most specific quota applies: user+client-id, user+default client,
user, default user+client-id, default user+default client, default user,
client-id, default client.`,
	}
	conn.AddFlags(cmd.PersistentFlags())
	cmd.PersistentFlags().StringVarP(&output, "output", "o", cli.OutputText, "output format: text or json")

	// The subcommands' flag sets share ent: only one subcommand runs.
	var ent cli.QuotaEntityOptions
	entityFlags := func(fs *pflag.FlagSet, describe bool) {
		fs.StringVar(&ent.User, "user", "", "the user (principal name)")
		fs.BoolVar(&ent.UserDefault, "user-default", false, "the default user entity")
		fs.StringVar(&ent.ClientID, "client-id", "", "the client id")
		fs.BoolVar(&ent.ClientDefault, "client-default", false, "the default client-id entity")
		if describe {
			fs.BoolVar(&ent.AnyUser, "any-user", false, "entities with any user part (named or default)")
			fs.BoolVar(&ent.AnyClientID, "any-client-id", false, "entities with any client-id part (named or default)")
		}
	}
	named := func(cmd *cobra.Command) {
		ent.SetNamed(cmd.Flags().Changed("user"), cmd.Flags().Changed("client-id"))
	}

	var producer, consumer int64
	var requestPct, mutationRate float64
	var dryRun bool
	setCmd := &cobra.Command{
		Use:   "set {--user U | --user-default} {--client-id C | --client-default} --producer-byte-rate N ...",
		Short: "Set quota values of a user, a client id, or a user's client id (other keys are kept)",
		Example: `  fjord quota set --user alice --producer-byte-rate 1048576 --consumer-byte-rate 2097152
  fjord quota set --client-default --producer-byte-rate 524288
  fjord quota set --user alice --client-id reporting --consumer-byte-rate 102400 --dry-run`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			named(cmd)
			p, err := printer(cmd)
			if err != nil {
				return err
			}
			o := cli.QuotaSetOptions{Values: map[string]float64{}, DryRun: dryRun}
			if cmd.Flags().Changed("producer-byte-rate") {
				o.Values["producer_byte_rate"] = float64(producer)
			}
			if cmd.Flags().Changed("consumer-byte-rate") {
				o.Values["consumer_byte_rate"] = float64(consumer)
			}
			if cmd.Flags().Changed("request-percentage") {
				o.Values["request_percentage"] = requestPct
			}
			if cmd.Flags().Changed("controller-mutation-rate") {
				o.Values["controller_mutation_rate"] = mutationRate
			}
			return cli.QuotaSet(cmd.Context(), &conn, ent, o, p)
		},
	}
	entityFlags(setCmd.Flags(), false)
	setCmd.Flags().Int64Var(&producer, "producer-byte-rate", 0, "producer_byte_rate: bytes/s of produce requests, per broker (enforced)")
	setCmd.Flags().Int64Var(&consumer, "consumer-byte-rate", 0, "consumer_byte_rate: bytes/s of fetch responses, per broker (enforced)")
	setCmd.Flags().Float64Var(&requestPct, "request-percentage", 0, "request_percentage (stored, not enforced)")
	setCmd.Flags().Float64Var(&mutationRate, "controller-mutation-rate", 0, "controller_mutation_rate (stored, not enforced)")
	setCmd.Flags().BoolVar(&dryRun, "dry-run", false, "have the brokers validate only (validate_only), storing nothing")

	var strict bool
	describeCmd := &cobra.Command{
		Use:   "describe [--user U | --user-default | --any-user] [--client-id C | --client-default | --any-client-id]",
		Short: "Show quotas: every entity, or those matching the flags",
		Example: `  fjord quota describe
  fjord quota describe --user alice
  fjord quota describe --any-user --strict=false -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			named(cmd)
			p, err := printer(cmd)
			if err != nil {
				return err
			}
			return cli.QuotaDescribe(cmd.Context(), &conn, ent, strict, p)
		},
	}
	entityFlags(describeCmd.Flags(), true)
	describeCmd.Flags().BoolVar(&strict, "strict", true, "only entities with exactly the parts named (false: also those combining them with another part)")

	var keys []string
	deleteCmd := &cobra.Command{
		Use:   "delete {--user U | --user-default} {--client-id C | --client-default} [--key K...]",
		Short: "Remove quota keys of an entity (every key it has if --key is not given)",
		Example: `  fjord quota delete --user alice --key producer_byte_rate
  fjord quota delete --client-default`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			named(cmd)
			p, err := printer(cmd)
			if err != nil {
				return err
			}
			return cli.QuotaDelete(cmd.Context(), &conn, ent, keys, p)
		},
	}
	entityFlags(deleteCmd.Flags(), false)
	deleteCmd.Flags().StringSliceVar(&keys, "key", nil, "quota key to remove (producer_byte_rate, consumer_byte_rate, request_percentage, controller_mutation_rate); repeatable")

	cmd.AddCommand(setCmd, describeCmd, deleteCmd)
	return cmd
}
