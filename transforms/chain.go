package transforms

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/plugins"
)

// Chain is a connector's configured transformations, applied in order
// (Kafka's TransformationChain). Build it with BuildChain.
type Chain struct {
	Stages []*Stage
}

// Stage is one transformation with its optional predicate (Kafka's
// TransformationStage): the transformation runs when there is no
// predicate, or when the predicate's answer differs from Negate.
type Stage struct {
	Alias          string
	Class          string
	Transformation connect.Transformation
	// PredicateAlias and Predicate are empty/nil without a predicate.
	PredicateAlias string
	Predicate      connect.Predicate
	Negate         bool
}

// Apply runs the stage on r; nil means the record was dropped.
func (s *Stage) Apply(r *connect.Record) (*connect.Record, error) {
	if s.Predicate == nil || s.Negate != s.Predicate.Test(r) {
		return s.Transformation.Apply(r)
	}
	return r, nil
}

// Apply runs every stage in turn, stopping when one drops the record
// (then it returns nil, nil). An error names the failing stage and wraps
// the transformation's error (a *connect.DataError for bad data), so the
// runtime's errors.tolerance can report it.
func (c *Chain) Apply(r *connect.Record) (*connect.Record, error) {
	if c == nil {
		return r, nil
	}
	for _, s := range c.Stages {
		if r == nil {
			return nil, nil
		}
		out, err := s.Apply(r)
		if err != nil {
			return nil, &StageError{Alias: s.Alias, Class: s.Class, Err: err}
		}
		r = out
	}
	return r, nil
}

// Close closes every transformation and predicate.
func (c *Chain) Close() error {
	if c == nil {
		return nil
	}
	var errs []error
	closed := map[string]bool{} // stages may share a predicate
	for _, s := range c.Stages {
		if err := s.Transformation.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close transformation %s: %w", s.Alias, err))
		}
		if s.Predicate != nil && !closed[s.PredicateAlias] {
			closed[s.PredicateAlias] = true
			if err := s.Predicate.Close(); err != nil {
				errs = append(errs, fmt.Errorf("close predicate %s: %w", s.PredicateAlias, err))
			}
		}
	}
	return errors.Join(errs...)
}

// StageError is a transformation's failure on a record.
type StageError struct {
	Alias, Class string
	Err          error
}

func (e *StageError) Error() string {
	return fmt.Sprintf("transformation %s (%s) failed: %v", e.Alias, e.Class, e.Err)
}

func (e *StageError) Unwrap() error { return e.Err }

// BuildChain builds the chain a connector config asks for, from Kafka's
// keys: "transforms" (aliases, in order), "transforms.<a>.type",
// "transforms.<a>.predicate", "transforms.<a>.negate", the
// transformation's own "transforms.<a>.*" keys, and "predicates",
// "predicates.<p>.type", "predicates.<p>.*". Every problem found is
// returned in one *connect.ConfigError whose problem keys are the full
// connector keys, with Kafka's messages. An empty "transforms" gives an
// empty chain.
func BuildChain(props map[string]string) (*Chain, error) {
	var problems []connect.ConfigProblem
	add := func(key, msg string) { problems = append(problems, connect.ConfigProblem{Key: key, Message: msg}) }

	transforms, tErr := aliasList(props, "transforms")
	if tErr != "" {
		add("transforms", tErr)
	}
	predAliases, pErr := aliasList(props, "predicates")
	if pErr != "" {
		add("predicates", pErr)
	}
	preds := map[string]connect.Predicate{}
	for _, alias := range predAliases {
		prefix := "predicates." + alias + "."
		p, _, msg := newPlugin(props, prefix+"type", plugins.Predicate)
		if msg != "" {
			add(prefix+"type", msg)
			continue
		}
		pred := p.(connect.Predicate)
		if bad := validatePrefixed(pred.Config(), prefix, props, false); len(bad) > 0 {
			problems = append(problems, bad...)
			continue
		}
		if err := pred.Configure(connect.WithPrefix(props, prefix)); err != nil {
			addConfigProblems(add, prefix, err)
			continue
		}
		preds[alias] = pred
	}

	chain := &Chain{}
	for _, alias := range transforms {
		prefix := "transforms." + alias + "."
		t, class, msg := newPlugin(props, prefix+"type", plugins.Transformation)
		if msg != "" {
			add(prefix+"type", msg)
			continue
		}
		tr := t.(connect.Transformation)
		cfg := connect.WithPrefix(props, prefix)
		predAlias, hasPred := cfg["predicate"]
		negateRaw, hasNegate := cfg["negate"]
		delete(cfg, "predicate")
		delete(cfg, "negate")
		delete(cfg, "type")
		if hasNegate && !hasPred {
			// Kafka reports it on the type key.
			add(prefix+"type", "Config '"+prefix+"negate' was provided but there is no config '"+prefix+"predicate' defining a predicate to be negated.")
		}
		stage := &Stage{Alias: alias, Class: class, Transformation: tr}
		if hasPred {
			predAlias = strings.TrimSpace(predAlias)
			stage.PredicateAlias = predAlias
			stage.Predicate = preds[predAlias]
			stage.Negate = strings.EqualFold(strings.TrimSpace(negateRaw), "true")
			if !slices.Contains(predAliases, predAlias) {
				add(prefix+"predicate", "Invalid value "+predAlias+" for configuration "+prefix+"predicate: predicate '"+predAlias+"' is not defined; list it in 'predicates' and set 'predicates."+predAlias+".type'")
			}
		}
		if bad := validatePrefixed(tr.Config(), prefix, props, true); len(bad) > 0 {
			problems = append(problems, bad...)
			continue
		}
		// Configure also finds what per-key validation cannot (Kafka only
		// finds these when the task starts): InsertField with nothing to
		// insert, HeaderFrom lists of different lengths, ...
		if err := tr.Configure(cfg); err != nil {
			addConfigProblems(add, prefix, err)
			continue
		}
		chain.Stages = append(chain.Stages, stage)
	}
	if len(problems) > 0 {
		for _, s := range chain.Stages {
			_ = s.Transformation.Close()
		}
		for _, p := range preds {
			_ = p.Close()
		}
		return nil, &connect.ConfigError{Problems: problems}
	}
	// Predicates no stage uses are closed now; Chain.Close closes the rest.
	for alias, p := range preds {
		if !slices.ContainsFunc(chain.Stages, func(s *Stage) bool { return s.PredicateAlias == alias }) {
			_ = p.Close()
		}
	}
	return chain, nil
}

// aliasList parses an alias list with Kafka's duplicate check.
func aliasList(props map[string]string, key string) ([]string, string) {
	raw, ok := props[key]
	if !ok {
		return nil, ""
	}
	v, _ := connect.ParseValue(connect.TypeList, key, raw)
	aliases, _ := v.([]string)
	seen := map[string]bool{}
	var out []string
	for _, a := range aliases {
		if seen[a] {
			return out, "Invalid value " + javaString(aliases) + " for configuration " + key + ": Duplicate alias provided."
		}
		seen[a] = true
		if a != "" {
			out = append(out, a)
		}
	}
	return out, ""
}

// newPlugin instantiates the plugin named by props[typeKey].
func newPlugin(props map[string]string, typeKey string, kind plugins.Kind) (any, string, string) {
	name, ok := props[typeKey]
	if !ok || strings.TrimSpace(name) == "" {
		return nil, "", fmt.Sprintf("Missing required configuration %q which has no default value.", typeKey)
	}
	name = strings.TrimSpace(name)
	p, found := plugins.Lookup(name)
	if !found {
		return nil, "", "Invalid value " + name + " for configuration " + typeKey + ": Class " + name + " could not be found."
	}
	if p.Kind != kind {
		noun := "Transformation"
		if kind == plugins.Predicate {
			noun = "Predicate"
		}
		return nil, "", "Class class " + p.Class + " does not implement the " + noun + " interface"
	}
	return p.New(), p.Class, ""
}

// validatePrefixed validates a plugin's keys as Kafka's enriched
// connector ConfigDef does: under their full names ("transforms.a.spec"),
// so messages name the keys the user wrote. Transformations' implicit
// "predicate" and "negate" keys mask the plugin's own.
func validatePrefixed(def *connect.ConfigDef, prefix string, props map[string]string, transformation bool) []connect.ConfigProblem {
	prefixed := connect.NewConfigDef()
	for _, k := range embedKeys(def, prefix, "", transformation) {
		prefixed.Define(k)
	}
	var out []connect.ConfigProblem
	for _, v := range prefixed.Validate(props) {
		for _, msg := range v.Errors {
			out = append(out, connect.ConfigProblem{Key: v.Name, Message: msg})
		}
	}
	return out
}

// embedKeys is Kafka's ConfigDef.embed: the plugin's keys under prefix
// (in group, when given), their validators still seeing the plugin's own
// key names so messages say "configuration fields". Transformations'
// implicit "predicate" and "negate" keys mask the plugin's own.
func embedKeys(def *connect.ConfigDef, prefix, group string, transformation bool) []connect.ConfigKey {
	var out []connect.ConfigKey
	for _, k := range def.Keys() {
		if transformation && (k.Name == "predicate" || k.Name == "negate") {
			continue
		}
		name := k.Name
		k.Name = prefix + name
		k.DisplayName = ""
		if group != "" {
			k.Group = group
		}
		if v := k.Validator; v != nil {
			k.Validator = func(_ string, value any) error {
				err := v(name, value)
				if err == nil {
					return nil
				}
				var verbatim *connect.VerbatimError
				if errors.As(err, &verbatim) {
					return verbatim
				}
				return &connect.VerbatimError{Msg: "Invalid value " + javaString(value) + " for configuration " + name + ": " + err.Error()}
			}
		}
		out = append(out, k)
	}
	return out
}

// addConfigProblems re-keys a plugin's configuration problems under the
// connector-level prefix.
func addConfigProblems(add func(key, msg string), prefix string, err error) {
	var ce *connect.ConfigError
	if errors.As(err, &ce) {
		for _, p := range ce.Problems {
			key := prefix + p.Key
			if p.Key == "" {
				key = strings.TrimSuffix(prefix, ".")
			}
			add(key, p.Message)
		}
		return
	}
	add(strings.TrimSuffix(prefix, "."), err.Error())
}

// ChainConfigDef is Kafka's ConnectorConfig.enrich for transforms and
// predicates: the keys "transforms" and "predicates", and for each alias
// in props its ".type" key and the plugin's own keys under the alias
// prefix (with "predicate" and "negate" for transformations), grouped
// "Transforms: <alias>" and "Predicates: <alias>". The validate endpoint
// merges it with the connector's keys.
func ChainConfigDef(props map[string]string) *connect.ConfigDef {
	def := connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "transforms", Type: connect.TypeList, Default: []string{}, Importance: connect.Low,
			Doc: "Aliases for the transformations to be applied to records.", Group: "Transforms", Width: connect.WidthLong, DisplayName: "Transforms",
			Validator: uniqueAliases}).
		Define(connect.ConfigKey{Name: "predicates", Type: connect.TypeList, Default: []string{}, Importance: connect.Low,
			Doc: "Aliases for the predicates used by transformations.", Group: "Predicates", Width: connect.WidthLong, DisplayName: "Predicates",
			Validator: uniqueAliases})
	embed := func(listKey, groupName string, kind plugins.Kind, noun string) {
		aliases, _ := aliasList(props, listKey)
		for _, alias := range aliases {
			prefix := listKey + "." + alias + "."
			group := groupName + ": " + alias
			typeKey := prefix + "type"
			def.Define(connect.ConfigKey{Name: typeKey, Type: connect.TypeClass, Default: connect.NoDefault, Importance: connect.High,
				Doc: "Class for the '" + alias + "' " + strings.ToLower(noun) + ".", Group: group, Width: connect.WidthLong,
				DisplayName: noun + " type for " + alias,
				Validator: func(name string, v any) error {
					if _, _, msg := newPlugin(map[string]string{name: fmt.Sprint(v)}, name, kind); msg != "" {
						return &connect.VerbatimError{Msg: msg}
					}
					_, hasNegate := props[prefix+"negate"]
					if _, hasPred := props[prefix+"predicate"]; kind == plugins.Transformation && hasNegate && !hasPred {
						return &connect.VerbatimError{Msg: "Config '" + prefix + "negate' was provided but there is no config '" + prefix + "predicate' defining a predicate to be negated."}
					}
					return nil
				}})
			if kind == plugins.Transformation {
				def.Define(connect.ConfigKey{Name: prefix + "predicate", Type: connect.TypeString, Default: nil, Importance: connect.Medium,
					Doc: "The alias of a predicate used to determine whether to apply this transformation.", Group: group})
				def.Define(connect.ConfigKey{Name: prefix + "negate", Type: connect.TypeBoolean, Default: false, Importance: connect.Medium,
					Doc: "Whether the configured predicate should be negated.", Group: group})
			}
			p, _, msg := newPlugin(props, typeKey, kind)
			if msg != "" {
				continue
			}
			var pd *connect.ConfigDef
			switch x := p.(type) {
			case connect.Transformation:
				pd = x.Config()
			case connect.Predicate:
				pd = x.Config()
			}
			for _, k := range embedKeys(pd, prefix, group, kind == plugins.Transformation) {
				def.Define(k)
			}
		}
	}
	embed("transforms", "Transforms", plugins.Transformation, "Transformation")
	embed("predicates", "Predicates", plugins.Predicate, "Predicate")
	return def
}

func uniqueAliases(name string, v any) error {
	items, _ := v.([]string)
	seen := map[string]bool{}
	for _, it := range items {
		if seen[it] {
			return &connect.VerbatimError{Msg: "Invalid value " + javaString(items) + " for configuration " + name + ": Duplicate alias provided."}
		}
		seen[it] = true
	}
	return nil
}
