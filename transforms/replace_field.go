package transforms

import (
	"log/slog"
	"slices"

	"github.com/fjordhq/fjord/connect"
)

// ReplaceField is Kafka's org.apache.kafka.connect.transforms.ReplaceField
// $Key/$Value: keeps only "include" fields (all when empty), drops
// "exclude" fields (which win) and renames by "renames" (old:new,...).
// The deprecated "blacklist"/"whitelist" keys that Kafka 4 removed are
// still accepted, as Kafka 3 did, when exclude/include are not set.
type ReplaceField struct {
	side
	exclude, include []string
	renames, reverse map[string]string
	replaceNull      bool
	cache            schemaCache
}

func replaceFieldConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "exclude", Type: connect.TypeList, Default: []string{}, Validator: nonDuplicateList(true), Importance: connect.Medium,
			Doc: "Fields to exclude. This takes precedence over the fields to include."}).
		Define(connect.ConfigKey{Name: "include", Type: connect.TypeList, Default: []string{}, Validator: nonDuplicateList(true), Importance: connect.Medium,
			Doc: "Fields to include. If specified, only these fields will be used."}).
		Define(connect.ConfigKey{Name: "renames", Type: connect.TypeList, Default: []string{}, Importance: connect.Medium, Doc: "Field rename mappings.",
			Validator: func(name string, v any) error {
				items, _ := v.([]string)
				if _, err := parseRenames(items); err != nil {
					return &connect.VerbatimError{Msg: err.Error()}
				}
				return nil
			}}).
		Define(replaceNullWithDefaultKey()).
		Define(connect.ConfigKey{Name: "blacklist", Type: connect.TypeList, Default: nil, Importance: connect.Low,
			Doc: "Deprecated (removed in Kafka 4). Use exclude instead."}).
		Define(connect.ConfigKey{Name: "whitelist", Type: connect.TypeList, Default: nil, Importance: connect.Low,
			Doc: "Deprecated (removed in Kafka 4). Use include instead."})
}

func parseRenames(mappings []string) (map[string]string, error) {
	m := map[string]string{}
	for _, mapping := range mappings {
		parts := javaSplit(mapping, ":")
		if len(parts) != 2 {
			return nil, configErr("renames", "Invalid value "+javaString(mappings)+" for configuration renames: Invalid rename mapping: "+mapping)
		}
		m[parts[0]] = parts[1]
	}
	return m, nil
}

func (t *ReplaceField) Config() *connect.ConfigDef { return replaceFieldConfigDef() }
func (t *ReplaceField) Close() error               { return nil }

func (t *ReplaceField) Configure(props map[string]string) error {
	cfg, err := parseConfig(replaceFieldConfigDef(), props)
	if err != nil {
		return err
	}
	t.exclude, t.include = cfg.List("exclude"), cfg.List("include")
	deprecated := func(old, replacement string, target *[]string) {
		if _, set := props[old]; !set {
			return
		}
		if _, set := props[replacement]; set {
			slog.Warn("ignoring deprecated ReplaceField key, its replacement is set", "key", old, "replacement", replacement)
			return
		}
		slog.Warn("deprecated ReplaceField key (removed in Kafka 4)", "key", old, "replacement", replacement)
		*target = cfg.List(old)
	}
	deprecated("blacklist", "exclude", &t.exclude)
	deprecated("whitelist", "include", &t.include)
	if t.renames, err = parseRenames(cfg.List("renames")); err != nil {
		return err
	}
	t.reverse = make(map[string]string, len(t.renames))
	for k, v := range t.renames {
		t.reverse[v] = k
	}
	t.replaceNull = cfg.Bool("replace.null.with.default")
	return nil
}

func (t *ReplaceField) keep(name string) bool {
	return !slices.Contains(t.exclude, name) && (len(t.include) == 0 || slices.Contains(t.include, name))
}

func (t *ReplaceField) renamed(name string) string {
	if n, ok := t.renames[name]; ok {
		return n
	}
	return name
}

func (t *ReplaceField) Apply(r *connect.Record) (*connect.Record, error) {
	if r == nil {
		return nil, nil
	}
	v := t.value(r)
	if v == nil {
		return r, nil
	}
	s := t.schema(r)
	if s == nil {
		m, err := requireMap(v, "field replacement")
		if err != nil {
			return nil, err
		}
		// When a rename lands on an existing key, the renamed field wins
		// (what Kafka does for the usual input order, where the original
		// comes first); Go maps have no order, so make it explicit.
		updated := make(map[string]any, len(m))
		for k, x := range m {
			if _, renamed := t.renames[k]; t.keep(k) && !renamed {
				updated[k] = x
			}
		}
		for k, x := range m {
			if n, renamed := t.renames[k]; t.keep(k) && renamed {
				updated[n] = x
			}
		}
		return t.with(r, nil, updated), nil
	}
	st, err := requireStruct(v, "field replacement")
	if err != nil {
		return nil, err
	}
	updatedSchema, err := t.cache.getOrBuild(st.Schema(), func() (*connect.Schema, error) {
		b := copyBasics(st.Schema(), connect.NewStruct())
		for _, f := range st.Schema().Fields {
			if t.keep(f.Name) {
				b.Field(t.renamed(f.Name), f.Schema)
			}
		}
		return b.BuildE()
	})
	if err != nil {
		return nil, err
	}
	out := connect.NewStructValue(updatedSchema)
	for i := range updatedSchema.Fields {
		name := updatedSchema.Fields[i].Name
		orig := name
		if o, ok := t.reverse[name]; ok {
			orig = o
		}
		f := st.Schema().Field(orig)
		if f == nil {
			return nil, dataErr("%s is not a valid field name", orig)
		}
		if err := kput(out, name, fieldValue(st, f, t.replaceNull)); err != nil {
			return nil, err
		}
	}
	return t.with(r, updatedSchema, out), nil
}
