package cli

// `fjord quota`: client quotas stored by the brokers (Kafka's
// kafka-configs --entity-type users|clients --add-config
// 'producer_byte_rate=...'), through AlterClientQuotas and
// DescribeClientQuotas. An entity is a user, a client id, or both; each
// part names one user/client id or is the default for those without a
// quota of their own.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Kafka's client quota keys. The brokers enforce the two byte rates;
// request_percentage and controller_mutation_rate are stored only.
var QuotaKeys = []string{"producer_byte_rate", "consumer_byte_rate", "request_percentage", "controller_mutation_rate"}

// QuotaEntityOptions name a quota entity (or, for describe, a filter).
type QuotaEntityOptions struct {
	User          string
	UserDefault   bool
	AnyUser       bool // describe only
	ClientID      string
	ClientDefault bool
	AnyClientID   bool // describe only
	userSet       bool
	clientSet     bool
}

// SetNamed records whether --user / --client-id were given (an empty
// name is Kafka's error to report, not "absent").
func (o *QuotaEntityOptions) SetNamed(user, client bool) { o.userSet, o.clientSet = user, client }

func (o *QuotaEntityOptions) check(describe bool) error {
	count := func(bs ...bool) (n int) {
		for _, b := range bs {
			if b {
				n++
			}
		}
		return n
	}
	if count(o.userSet, o.UserDefault, o.AnyUser) > 1 {
		return errors.New("--user, --user-default and --any-user: give one")
	}
	if count(o.clientSet, o.ClientDefault, o.AnyClientID) > 1 {
		return errors.New("--client-id, --client-default and --any-client-id: give one")
	}
	if !describe {
		if o.AnyUser || o.AnyClientID {
			return errors.New("--any-user and --any-client-id only filter `fjord quota describe`")
		}
		if count(o.userSet, o.UserDefault, o.clientSet, o.ClientDefault) == 0 {
			return errors.New("name the entity: --user NAME or --user-default, and/or --client-id ID or --client-default")
		}
	}
	return nil
}

// entity is the kadm entity the options name (user first, as Kafka lists it).
func (o *QuotaEntityOptions) entity() kadm.ClientQuotaEntity {
	var e kadm.ClientQuotaEntity
	switch {
	case o.userSet:
		u := o.User
		e = append(e, kadm.ClientQuotaEntityComponent{Type: "user", Name: &u})
	case o.UserDefault:
		e = append(e, kadm.ClientQuotaEntityComponent{Type: "user"})
	}
	switch {
	case o.clientSet:
		c := o.ClientID
		e = append(e, kadm.ClientQuotaEntityComponent{Type: "client-id", Name: &c})
	case o.ClientDefault:
		e = append(e, kadm.ClientQuotaEntityComponent{Type: "client-id"})
	}
	return e
}

// filter is the describe filter the options name.
func (o *QuotaEntityOptions) filter() []kadm.DescribeClientQuotaComponent {
	var f []kadm.DescribeClientQuotaComponent
	part := func(typ string, named bool, name string, def, anyName bool) {
		switch {
		case named:
			n := name
			f = append(f, kadm.DescribeClientQuotaComponent{Type: typ, MatchName: &n, MatchType: kmsg.QuotasMatchTypeExact})
		case def:
			f = append(f, kadm.DescribeClientQuotaComponent{Type: typ, MatchType: kmsg.QuotasMatchTypeDefault})
		case anyName:
			f = append(f, kadm.DescribeClientQuotaComponent{Type: typ, MatchType: kmsg.QuotasMatchTypeAny})
		}
	}
	part("user", o.userSet, o.User, o.UserDefault, o.AnyUser)
	part("client-id", o.clientSet, o.ClientID, o.ClientDefault, o.AnyClientID)
	return f
}

// QuotaEntityString prints an entity as "user=alice, client-id=<default>".
func QuotaEntityString(e kadm.ClientQuotaEntity) string {
	s := e.String()
	return strings.TrimSuffix(strings.TrimPrefix(s, "{"), "}")
}

// quotaEntityJSON is an entity as Kafka's ClientQuotaEntity map: type to
// name, null for the default.
func quotaEntityJSON(e kadm.ClientQuotaEntity) map[string]*string {
	m := map[string]*string{}
	for _, c := range e {
		m[c.Type] = c.Name
	}
	return m
}

// quotaErr says what to do next for the errors people hit on quotas.
func quotaErr(what string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, kerr.ClusterAuthorizationFailed):
		return fmt.Errorf("%s: not authorized: client quotas need ALTER_CONFIGS (DESCRIBE_CONFIGS to list) on the cluster: %w", what, err)
	case errors.Is(err, kerr.InvalidRequest):
		return fmt.Errorf("%s: refused by the broker (keys: %s; byte rates are whole numbers > 0): %w", what, strings.Join(QuotaKeys, ", "), err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// QuotaSetOptions are `fjord quota set`'s values: only the keys in
// Values are changed.
type QuotaSetOptions struct {
	Values map[string]float64
	// DryRun asks the brokers to validate only (validate_only).
	DryRun bool
}

// QuotaSet sets quota values of one entity.
func QuotaSet(ctx context.Context, co *ClientOptions, ent QuotaEntityOptions, o QuotaSetOptions, p *Printer) error {
	if err := ent.check(false); err != nil {
		return err
	}
	if len(o.Values) == 0 {
		return errors.New("nothing to set: give --producer-byte-rate, --consumer-byte-rate, --request-percentage or --controller-mutation-rate")
	}
	e := ent.entity()
	var ops []kadm.AlterClientQuotaOp
	for _, k := range slices.Sorted(maps.Keys(o.Values)) {
		ops = append(ops, kadm.AlterClientQuotaOp{Key: k, Value: o.Values[k]})
	}
	if err := alterQuotas(ctx, co, e, ops, o.DryRun); err != nil {
		return err
	}
	if p.JSONMode() {
		return p.JSON(map[string]any{"entity": quotaEntityJSON(e), "set": o.Values, "dryRun": o.DryRun})
	}
	var kv []string
	for _, op := range ops {
		kv = append(kv, op.Key+"="+formatQuota(op.Value))
	}
	verb := "Set"
	if o.DryRun {
		verb = "Validated (not stored)"
	}
	p.Linef("%s %s for %s.", verb, strings.Join(kv, ", "), QuotaEntityString(e))
	return nil
}

func alterQuotas(ctx context.Context, co *ClientOptions, e kadm.ClientQuotaEntity, ops []kadm.AlterClientQuotaOp, dryRun bool) error {
	c, err := co.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	alter := c.Admin.AlterClientQuotas
	if dryRun {
		alter = c.Admin.ValidateAlterClientQuotas
	}
	what := "quota " + QuotaEntityString(e)
	res, err := alter(ctx, []kadm.AlterClientQuotaEntry{{Entity: e, Ops: ops}})
	if err != nil {
		return quotaErr(what, err)
	}
	for _, r := range res {
		if r.Err != nil {
			return quotaErr(what, brokerErr(r.Err, r.ErrMessage))
		}
	}
	return nil
}

func formatQuota(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

type quotaJSON struct {
	Entity map[string]*string `json:"entity"`
	Quotas map[string]float64 `json:"quotas"`
}

// QuotaDescribe lists quotas: every entity without filter flags; with
// them, the entities matching (strict: only those with no other part).
func QuotaDescribe(ctx context.Context, co *ClientOptions, ent QuotaEntityOptions, strict bool, p *Printer) error {
	if err := ent.check(true); err != nil {
		return err
	}
	described, err := describeQuotas(ctx, co, ent, strict)
	if err != nil {
		return err
	}
	out := []quotaJSON{}
	var rows [][]string
	for _, d := range described {
		q := quotaJSON{Entity: quotaEntityJSON(d.Entity), Quotas: map[string]float64{}}
		for _, v := range d.Values {
			q.Quotas[v.Key] = v.Value
		}
		out = append(out, q)
		for _, k := range slices.Sorted(maps.Keys(q.Quotas)) {
			rows = append(rows, []string{QuotaEntityString(d.Entity), k, formatQuota(q.Quotas[k])})
		}
	}
	if p.JSONMode() {
		return p.JSON(out)
	}
	return p.Table([]string{"ENTITY", "KEY", "VALUE"}, rows)
}

func describeQuotas(ctx context.Context, co *ClientOptions, ent QuotaEntityOptions, strict bool) (kadm.DescribedClientQuotas, error) {
	c, err := co.Connect(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	f := ent.filter()
	described, err := c.Admin.DescribeClientQuotas(ctx, strict && len(f) > 0, f)
	if err != nil {
		return nil, quotaErr("describe quotas", err)
	}
	for i := range described {
		// Users first, then client ids, as Kafka lists entity parts.
		slices.SortFunc(described[i].Entity, func(a, b kadm.ClientQuotaEntityComponent) int { return -strings.Compare(a.Type, b.Type) })
	}
	slices.SortFunc(described, func(a, b kadm.DescribedClientQuota) int {
		return strings.Compare(QuotaEntityString(a.Entity), QuotaEntityString(b.Entity))
	})
	return described, nil
}

// QuotaDelete removes quota keys of one entity: keys, or every key the
// entity has when none are named.
func QuotaDelete(ctx context.Context, co *ClientOptions, ent QuotaEntityOptions, keys []string, p *Printer) error {
	if err := ent.check(false); err != nil {
		return err
	}
	e := ent.entity()
	if len(keys) == 0 {
		described, err := describeQuotas(ctx, co, ent, true)
		if err != nil {
			return err
		}
		for _, d := range described {
			for _, v := range d.Values {
				keys = append(keys, v.Key)
			}
		}
		if len(keys) == 0 {
			return fmt.Errorf("%s has no quotas: see `fjord quota describe`", QuotaEntityString(e))
		}
	}
	for _, k := range keys {
		// The brokers accept removing any key (nothing happens), so a
		// typo would pass silently: check here.
		if !slices.Contains(QuotaKeys, k) {
			return fmt.Errorf("--key %q: not a quota key; want one of %s", k, strings.Join(QuotaKeys, ", "))
		}
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	var ops []kadm.AlterClientQuotaOp
	for _, k := range keys {
		ops = append(ops, kadm.AlterClientQuotaOp{Key: k, Remove: true})
	}
	if err := alterQuotas(ctx, co, e, ops, false); err != nil {
		return err
	}
	if p.JSONMode() {
		return p.JSON(map[string]any{"entity": quotaEntityJSON(e), "deleted": keys})
	}
	p.Linef("Deleted %s of %s.", strings.Join(keys, ", "), QuotaEntityString(e))
	return nil
}
