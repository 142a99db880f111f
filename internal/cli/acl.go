package cli

// `fjord acl`: Kafka's kafka-acls (--add, --list, --remove) over
// CreateAcls, DescribeAcls and DeleteAcls, built with kadm's ACLBuilder.
// Names follow kafka-acls: --allow-principal User:alice, --operation Read,
// --topic, --group, --cluster, --transactional-id,
// --resource-pattern-type literal|prefixed (match|any to filter).

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/auth"
)

// ACLResources are the resource flags shared by add, list and remove.
type ACLResources struct {
	Topics           []string
	Groups           []string
	Cluster          bool
	TransactionalIDs []string
	// PatternType is literal or prefixed (add), or also match or any
	// (list, remove). Empty: literal, or any for a list/remove that names
	// no resource.
	PatternType string
}

func (r ACLResources) named() bool {
	return len(r.Topics)+len(r.Groups)+len(r.TransactionalIDs) > 0 || r.Cluster
}

// ACLAddOptions are `fjord acl add`'s flags.
type ACLAddOptions struct {
	ACLResources
	AllowPrincipals, DenyPrincipals []string
	AllowHosts, DenyHosts           []string
	Operations                      []string // default All, as kafka-acls
}

// ACLFilterOptions select ACLs for list and remove.
type ACLFilterOptions struct {
	ACLResources
	// Principals match either permission; AllowPrincipals and
	// DenyPrincipals only that one. None: every principal.
	Principals, AllowPrincipals, DenyPrincipals []string
	Hosts                                       []string // none: every host
	Operations                                  []string // none: every operation
}

func parsePattern(s, def string) (kadm.ACLPattern, error) {
	if s == "" {
		s = def
	}
	pt, ok := auth.ParsePatternType(s)
	if !ok || pt == auth.PatternUnknown {
		return 0, fmt.Errorf("--resource-pattern-type %q: want literal, prefixed, match or any", s)
	}
	return kadm.ACLPattern(pt), nil
}

func parseOperations(names []string, def kadm.ACLOperation) ([]kadm.ACLOperation, error) {
	if len(names) == 0 {
		return []kadm.ACLOperation{def}, nil
	}
	var ops []kadm.ACLOperation
	for _, n := range names {
		for part := range strings.SplitSeq(n, ",") {
			op, ok := auth.ParseOperation(strings.TrimSpace(part))
			if !ok || op == auth.OpUnknown {
				return nil, fmt.Errorf("--operation %q: want one of Read, Write, Create, Delete, Alter, Describe, ClusterAction, DescribeConfigs, AlterConfigs, IdempotentWrite, CreateTokens, DescribeTokens, All", part)
			}
			ops = append(ops, kadm.ACLOperation(op))
		}
	}
	return ops, nil
}

func checkPrincipals(ps []string) error {
	for _, p := range ps {
		if _, err := auth.ParsePrincipal(p); err != nil {
			return err
		}
	}
	return nil
}

func (r ACLResources) apply(b *kadm.ACLBuilder) {
	if len(r.Topics) > 0 {
		b.Topics(r.Topics...)
	}
	if len(r.Groups) > 0 {
		b.Groups(r.Groups...)
	}
	if len(r.TransactionalIDs) > 0 {
		b.TransactionalIDs(r.TransactionalIDs...)
	}
	if r.Cluster {
		b.Clusters()
	}
}

// aclErr says what to do next for the errors people hit on ACLs.
func aclErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, kerr.SecurityDisabled):
		return fmt.Errorf("the brokers have no authorizer: set authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer in their server.properties: %w", err)
	case errors.Is(err, kerr.ClusterAuthorizationFailed):
		return fmt.Errorf("not authorized: managing ACLs needs ALTER (listing DESCRIBE) on the cluster; use a super user: %w", err)
	}
	return err
}

// aclJSON is one ACL as `fjord acl` prints it.
type aclJSON struct {
	Principal    string `json:"principal"`
	Host         string `json:"host"`
	Operation    string `json:"operation"`
	Permission   string `json:"permission"`
	ResourceType string `json:"resource_type"`
	ResourceName string `json:"resource_name"`
	PatternType  string `json:"pattern_type"`
}

func toACLJSON(principal, host string, op kadm.ACLOperation, perm kmsg.ACLPermissionType, rt kmsg.ACLResourceType, name string, pt kadm.ACLPattern) aclJSON {
	return aclJSON{principal, host, auth.Operation(op).String(), auth.Permission(perm).String(),
		auth.ResourceType(rt).String(), name, auth.PatternType(pt).String()}
}

func sortACLs(acls []aclJSON) []aclJSON {
	slices.SortFunc(acls, func(a, b aclJSON) int {
		return cmp.Or(cmp.Compare(a.ResourceType, b.ResourceType), cmp.Compare(a.PatternType, b.PatternType),
			cmp.Compare(a.ResourceName, b.ResourceName), cmp.Compare(a.Principal, b.Principal),
			cmp.Compare(a.Host, b.Host), cmp.Compare(a.Operation, b.Operation), cmp.Compare(a.Permission, b.Permission))
	})
	return slices.Compact(acls)
}

func printACLs(p *Printer, acls []aclJSON) error {
	if p.JSONMode() {
		return p.JSON(acls)
	}
	var rows [][]string
	for _, a := range acls {
		rows = append(rows, []string{a.ResourceType, a.ResourceName, a.PatternType, a.Principal, a.Host, a.Operation, a.Permission})
	}
	return p.Table([]string{"RESOURCE-TYPE", "RESOURCE", "PATTERN", "PRINCIPAL", "HOST", "OPERATION", "PERMISSION"}, rows)
}

// ACLAdd creates ACLs: every principal × host × operation × resource.
func ACLAdd(ctx context.Context, co *ClientOptions, o ACLAddOptions, p *Printer) error {
	if !o.named() {
		return errors.New("name a resource: --topic, --group, --cluster or --transactional-id")
	}
	if len(o.AllowPrincipals)+len(o.DenyPrincipals) == 0 {
		return errors.New("name a principal: --allow-principal User:NAME or --deny-principal User:NAME (User:* for everyone)")
	}
	if len(o.AllowHosts) > 0 && len(o.AllowPrincipals) == 0 {
		return errors.New("--allow-host needs --allow-principal: name who may connect from there")
	}
	if len(o.DenyHosts) > 0 && len(o.DenyPrincipals) == 0 {
		return errors.New("--deny-host needs --deny-principal: name who is denied from there")
	}
	if err := checkPrincipals(append(slices.Clone(o.AllowPrincipals), o.DenyPrincipals...)); err != nil {
		return err
	}
	pt, err := parsePattern(o.PatternType, "literal")
	if err != nil {
		return err
	}
	if pt != kadm.ACLPatternLiteral && pt != kadm.ACLPatternPrefixed {
		return fmt.Errorf("--resource-pattern-type %s is only for filtering (list, remove); add takes literal or prefixed", o.PatternType)
	}
	ops, err := parseOperations(o.Operations, kadm.OpAll)
	if err != nil {
		return err
	}
	b := kadm.NewACLs().ResourcePatternType(pt).Operations(ops...)
	o.apply(b)
	if len(o.AllowPrincipals) > 0 {
		b.Allow(o.AllowPrincipals...).AllowHosts(o.AllowHosts...)
	}
	if len(o.DenyPrincipals) > 0 {
		b.Deny(o.DenyPrincipals...).DenyHosts(o.DenyHosts...)
	}
	c, err := co.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	results, err := c.Admin.CreateACLs(ctx, b)
	if err != nil {
		return aclErr(err)
	}
	var added []aclJSON
	var errs []error
	for _, r := range results {
		a := toACLJSON(r.Principal, r.Host, r.Operation, r.Permission, r.Type, r.Name, r.Pattern)
		if r.Err != nil {
			errs = append(errs, fmt.Errorf("%s %s %s on %s %s: %w", a.Permission, a.Principal, a.Operation, a.ResourceType, a.ResourceName, aclErr(brokerErr(r.Err, r.ErrMessage))))
			continue
		}
		added = append(added, a)
	}
	if len(added) > 0 || p.JSONMode() {
		if err := printACLs(p, sortACLs(added)); err != nil {
			return err
		}
	}
	return errors.Join(errs...)
}

// builder turns filter options into a kadm builder for describe/delete.
func (o ACLFilterOptions) builder() (*kadm.ACLBuilder, error) {
	if err := checkPrincipals(slices.Concat(o.Principals, o.AllowPrincipals, o.DenyPrincipals)); err != nil {
		return nil, err
	}
	def := "literal"
	if !o.named() {
		def = "any"
	}
	pt, err := parsePattern(o.PatternType, def)
	if err != nil {
		return nil, err
	}
	ops, err := parseOperations(o.Operations, kadm.OpAny)
	if err != nil {
		return nil, err
	}
	b := kadm.NewACLs().ResourcePatternType(pt).Operations(ops...)
	if o.named() {
		o.apply(b)
	} else {
		b.AnyResource()
	}
	allow := slices.Concat(o.Principals, o.AllowPrincipals)
	deny := slices.Concat(o.Principals, o.DenyPrincipals)
	// Each permission side filters on its principals (all of them when
	// no principal is named at all) and the hosts.
	anyPrincipal := len(allow)+len(deny) == 0
	if anyPrincipal || len(allow) > 0 {
		b.Allow(allow...).AllowHosts(o.Hosts...)
	} else {
		b.MaybeAllow()
	}
	if anyPrincipal || len(deny) > 0 {
		b.Deny(deny...).DenyHosts(o.Hosts...)
	} else {
		b.MaybeDeny()
	}
	return b, nil
}

// ACLList prints the ACLs the filter selects.
func ACLList(ctx context.Context, co *ClientOptions, o ACLFilterOptions, p *Printer) error {
	b, err := o.builder()
	if err != nil {
		return err
	}
	c, err := co.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	acls, err := describeACLs(ctx, c, b)
	if err != nil {
		return err
	}
	return printACLs(p, acls)
}

func describeACLs(ctx context.Context, c *Conn, b *kadm.ACLBuilder) ([]aclJSON, error) {
	results, err := c.Admin.DescribeACLs(ctx, b)
	if err != nil {
		return nil, aclErr(err)
	}
	acls := []aclJSON{}
	for _, r := range results {
		if r.Err != nil {
			return nil, aclErr(brokerErr(r.Err, r.ErrMessage))
		}
		for _, d := range r.Described {
			acls = append(acls, toACLJSON(d.Principal, d.Host, d.Operation, d.Permission, d.Type, d.Name, d.Pattern))
		}
	}
	return sortACLs(acls), nil
}

// ACLRemove deletes the ACLs the filter selects; without force it only
// shows them (kafka-acls asks for confirmation instead).
func ACLRemove(ctx context.Context, co *ClientOptions, o ACLFilterOptions, force bool, p *Printer) error {
	if !o.named() && len(slices.Concat(o.Principals, o.AllowPrincipals, o.DenyPrincipals)) == 0 {
		return errors.New("name what to remove: a resource (--topic, --group, --cluster, --transactional-id) or a principal (--principal)")
	}
	b, err := o.builder()
	if err != nil {
		return err
	}
	c, err := co.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	if !force {
		acls, err := describeACLs(ctx, c, b)
		if err != nil {
			return err
		}
		if p.JSONMode() {
			return p.JSON(map[string]any{"removed": false, "acls": acls})
		}
		if err := printACLs(p, acls); err != nil {
			return err
		}
		p.Linef("Dry run: %d ACL(s) match; pass --force to remove them.", len(acls))
		return nil
	}
	results, err := c.Admin.DeleteACLs(ctx, b)
	if err != nil {
		return aclErr(err)
	}
	removed := []aclJSON{}
	for _, r := range results {
		if r.Err != nil {
			return aclErr(brokerErr(r.Err, r.ErrMessage))
		}
		for _, d := range r.Deleted {
			if d.Err != nil {
				return aclErr(brokerErr(d.Err, d.ErrMessage))
			}
			removed = append(removed, toACLJSON(d.Principal, d.Host, d.Operation, d.Permission, d.Type, d.Name, d.Pattern))
		}
	}
	removed = sortACLs(removed)
	if p.JSONMode() {
		return p.JSON(map[string]any{"removed": true, "acls": removed})
	}
	if err := printACLs(p, removed); err != nil {
		return err
	}
	p.Linef("Removed %d ACL(s).", len(removed))
	return nil
}
