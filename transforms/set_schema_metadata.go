package transforms

import "github.com/fjordhq/fjord/connect"

// SetSchemaMetadata is Kafka's
// org.apache.kafka.connect.transforms.SetSchemaMetadata$Key/$Value: sets
// the key or value schema's name and/or version (a Struct value is
// rebuilt on the renamed schema).
type SetSchemaMetadata struct {
	side
	name        *string
	version     *int32
	replaceNull bool
	// Kafka builds a new schema per record; Fjord caches it like the
	// other transforms so converters can cache by schema pointer.
	cache schemaCache
}

func setSchemaMetadataConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "schema.name", Type: connect.TypeString, Default: nil, Importance: connect.High, Doc: "Schema name to set."}).
		Define(connect.ConfigKey{Name: "schema.version", Type: connect.TypeInt, Default: nil, Importance: connect.High, Doc: "Schema version to set."}).
		Define(replaceNullWithDefaultKey())
}

func (t *SetSchemaMetadata) Config() *connect.ConfigDef { return setSchemaMetadataConfigDef() }
func (t *SetSchemaMetadata) Close() error               { return nil }

func (t *SetSchemaMetadata) Configure(props map[string]string) error {
	cfg, err := parseConfig(setSchemaMetadataConfigDef(), props)
	if err != nil {
		return err
	}
	t.name, t.version = nil, nil
	if !cfg.IsNull("schema.name") {
		n := cfg.String("schema.name")
		t.name = &n
	}
	if !cfg.IsNull("schema.version") {
		v := cfg.Int("schema.version")
		t.version = &v
	}
	t.replaceNull = cfg.Bool("replace.null.with.default")
	if t.name == nil && t.version == nil {
		return configErr("", "Neither schema name nor version configured")
	}
	return nil
}

func (t *SetSchemaMetadata) Apply(r *connect.Record) (*connect.Record, error) {
	if r == nil {
		return nil, nil
	}
	s, v := t.schema(r), t.value(r)
	if s == nil && v == nil {
		return r, nil
	}
	if s == nil {
		return nil, dataErr("Schema required for [updating schema metadata]")
	}
	// Kafka 4.4 builds a new ConnectSchema from schema.fields(), which
	// fails for anything but a STRUCT: only struct schemas can be renamed.
	if s.Type != connect.StructType {
		return nil, errNotStruct
	}
	updated, err := t.cache.getOrBuild(s, func() (*connect.Schema, error) {
		b := connect.FromSchema(s)
		if t.name != nil {
			b.Name(*t.name)
		}
		if t.version != nil {
			b.Version(*t.version)
		}
		return b.BuildE()
	})
	if err != nil {
		return nil, err
	}
	if st, ok := v.(*connect.Struct); ok && st != nil {
		ns := connect.NewStructValue(updated)
		for i := range updated.Fields {
			f := &updated.Fields[i]
			if err := kput(ns, f.Name, fieldValue(st, st.Schema().Field(f.Name), t.replaceNull)); err != nil {
				return nil, err
			}
		}
		v = ns
	}
	return t.with(r, updated, v), nil
}
