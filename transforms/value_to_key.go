package transforms

import "github.com/fjordhq/fjord/connect"

// ValueToKey is Kafka's org.apache.kafka.connect.transforms.ValueToKey:
// the key becomes a Struct (or map) of the listed value fields (nested
// paths with field.syntax.version=V2).
type ValueToKey struct {
	fields      []string
	paths       []fieldPath
	replaceNull bool
	cache       schemaCache
}

func valueToKeyConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "fields", Type: connect.TypeList, Default: connect.NoDefault, Validator: nonDuplicateList(false), Importance: connect.High,
			Doc: "Field names on the record value to extract as the record key."}).
		Define(replaceNullWithDefaultKey()).
		Define(fieldSyntaxKey())
}

func (t *ValueToKey) Config() *connect.ConfigDef { return valueToKeyConfigDef() }
func (t *ValueToKey) Close() error               { return nil }

func (t *ValueToKey) Configure(props map[string]string) error {
	cfg, err := parseConfig(valueToKeyConfigDef(), props)
	if err != nil {
		return err
	}
	t.fields = cfg.List("fields")
	t.paths = make([]fieldPath, len(t.fields))
	for i, f := range t.fields {
		if t.paths[i], err = newFieldPath(f, fieldSyntaxV2(cfg)); err != nil {
			return err
		}
	}
	t.replaceNull = cfg.Bool("replace.null.with.default")
	return nil
}

const valueToKeyPurpose = "copying fields from value to key"

func (t *ValueToKey) Apply(r *connect.Record) (*connect.Record, error) {
	if r == nil {
		return nil, nil
	}
	if r.ValueSchema == nil {
		m, err := requireMap(r.Value, valueToKeyPurpose)
		if err != nil {
			return nil, err
		}
		key := make(map[string]any, len(t.fields))
		for i, f := range t.fields {
			if key[f], err = t.paths[i].mapValue(m); err != nil {
				return nil, err
			}
		}
		c := r.Clone()
		c.KeySchema, c.Key = nil, key
		return c, nil
	}
	st, err := requireStruct(r.Value, valueToKeyPurpose)
	if err != nil {
		return nil, err
	}
	keySchema, err := t.cache.getOrBuild(st.Schema(), func() (*connect.Schema, error) {
		b := connect.NewStruct()
		for i, name := range t.fields {
			f := t.paths[i].fieldFrom(st.Schema())
			if f == nil {
				return nil, dataErr("Field does not exist: %s", name)
			}
			b.Field(name, f.Schema)
		}
		return b.BuildE()
	})
	if err != nil {
		return nil, err
	}
	key := connect.NewStructValue(keySchema)
	for i, name := range t.fields {
		v, err := t.paths[i].structValue(st, t.replaceNull)
		if err != nil {
			return nil, err
		}
		if err := kput(key, name, v); err != nil {
			return nil, err
		}
	}
	c := r.Clone()
	c.KeySchema, c.Key = keySchema, key
	// Kafka sets the value schema to the value struct's own schema.
	c.ValueSchema = st.Schema()
	return c, nil
}
