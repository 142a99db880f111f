package main

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fjordhq/fjord/internal/cli"
)

func init() { addCommand(newACLCmd()) }

// newACLCmd builds `fjord acl`, the kafka-acls of Fjord.
func newACLCmd() *cobra.Command {
	var conn cli.ClientOptions
	var output string
	printer := func(cmd *cobra.Command) (*cli.Printer, error) {
		return cli.NewPrinter(cmd.OutOrStdout(), output)
	}
	cmd := &cobra.Command{
		Use:   "acl",
		Short: "Add, list and remove ACLs (the brokers need authorizer.class.name set)",
	}
	conn.AddFlags(cmd.PersistentFlags())
	cmd.PersistentFlags().StringVarP(&output, "output", "o", cli.OutputText, "output format: text or json")

	resourceFlags := func(f *pflag.FlagSet, r *cli.ACLResources, patternHelp string) {
		f.StringArrayVar(&r.Topics, "topic", nil, "topic name, or prefix with --resource-pattern-type prefixed (repeatable; * for all)")
		f.StringArrayVar(&r.Groups, "group", nil, "consumer group (repeatable; * for all)")
		f.BoolVar(&r.Cluster, "cluster", false, "the cluster resource (kafka-cluster)")
		f.StringArrayVar(&r.TransactionalIDs, "transactional-id", nil, "transactional id (repeatable; * for all)")
		f.StringVar(&r.PatternType, "resource-pattern-type", "", patternHelp)
	}

	var add cli.ACLAddOptions
	addCmd := &cobra.Command{
		Use:   "add",
		Short: "Allow or deny principals operations on resources",
		Example: `  fjord acl add --allow-principal User:alice --operation Read --topic orders
  fjord acl add --allow-principal User:etl --operation Write --operation Describe --topic pay --resource-pattern-type prefixed
  fjord acl add --allow-principal User:alice --operation Read --group billing
  fjord acl add --deny-principal User:mallory --deny-host 10.0.0.9 --operation All --topic '*'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := printer(cmd)
			if err != nil {
				return err
			}
			return cli.ACLAdd(cmd.Context(), &conn, add, p)
		},
	}
	f := addCmd.Flags()
	resourceFlags(f, &add.ACLResources, "literal (default) or prefixed")
	f.StringArrayVar(&add.AllowPrincipals, "allow-principal", nil, "principal to allow, Type:Name, e.g. User:alice or User:* (repeatable)")
	f.StringArrayVar(&add.DenyPrincipals, "deny-principal", nil, "principal to deny (repeatable)")
	f.StringArrayVar(&add.AllowHosts, "allow-host", nil, "host the allowed principals may connect from (default *)")
	f.StringArrayVar(&add.DenyHosts, "deny-host", nil, "host the denied principals are denied from (default *)")
	f.StringArrayVar(&add.Operations, "operation", nil, "Read, Write, Create, Delete, Alter, Describe, ClusterAction, DescribeConfigs, AlterConfigs, IdempotentWrite, All (default All; repeatable)")

	filterFlags := func(f *pflag.FlagSet, o *cli.ACLFilterOptions) {
		resourceFlags(f, &o.ACLResources, "literal, prefixed, match (every ACL that applies to the named resource) or any (default: literal with a resource named, else any)")
		f.StringArrayVar(&o.Principals, "principal", nil, "only ACLs of this principal (repeatable)")
		f.StringArrayVar(&o.AllowPrincipals, "allow-principal", nil, "only ALLOW ACLs of this principal (repeatable)")
		f.StringArrayVar(&o.DenyPrincipals, "deny-principal", nil, "only DENY ACLs of this principal (repeatable)")
		f.StringArrayVar(&o.Hosts, "host", nil, "only ACLs for this host (repeatable)")
		f.StringArrayVar(&o.Operations, "operation", nil, "only ACLs of this operation (default: any)")
	}

	var list cli.ACLFilterOptions
	listCmd := &cobra.Command{
		Use:   "list",
		Short: "List ACLs (all, or those matching the filters)",
		Example: `  fjord acl list
  fjord acl list --topic orders
  fjord acl list --topic payments --resource-pattern-type match   # every ACL that applies to topic payments
  fjord acl list --principal User:alice -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := printer(cmd)
			if err != nil {
				return err
			}
			return cli.ACLList(cmd.Context(), &conn, list, p)
		},
	}
	filterFlags(listCmd.Flags(), &list)

	var remove cli.ACLFilterOptions
	var force bool
	removeCmd := &cobra.Command{
		Use:   "remove",
		Short: "Remove the ACLs matching the filters (shows them only, unless --force)",
		Example: `  fjord acl remove --topic orders --principal User:alice            # show what would go
  fjord acl remove --topic orders --principal User:alice --force`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := printer(cmd)
			if err != nil {
				return err
			}
			return cli.ACLRemove(cmd.Context(), &conn, remove, force, p)
		},
	}
	filterFlags(removeCmd.Flags(), &remove)
	removeCmd.Flags().BoolVar(&force, "force", false, "remove them (without it: only list what would be removed)")

	cmd.AddCommand(addCmd, listCmd, removeCmd)
	return cmd
}
