package transforms

import "github.com/fjordhq/fjord/connect"

// Flatten is Kafka's org.apache.kafka.connect.transforms.Flatten
// $Key/$Value: nested structs (or maps) become top-level fields named by
// joining the path with "delimiter" (default "."). Arrays are left alone.
// A flattened field is optional when any ancestor is, and takes its
// default from the nearest ancestor default.
type Flatten struct {
	side
	delimiter string
	cache     schemaCache
}

func flattenConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().Define(connect.ConfigKey{
		Name: "delimiter", Type: connect.TypeString, Default: ".", Importance: connect.Medium,
		Doc: "Delimiter to insert between field names from the input record when generating field names for the output record",
	})
}

func (t *Flatten) Config() *connect.ConfigDef { return flattenConfigDef() }
func (t *Flatten) Close() error               { return nil }

func (t *Flatten) Configure(props map[string]string) error {
	cfg, err := parseConfig(flattenConfigDef(), props)
	if err != nil {
		return err
	}
	t.delimiter = cfg.String("delimiter")
	return nil
}

func (t *Flatten) name(prefix, field string) string {
	if prefix == "" {
		return field
	}
	return prefix + t.delimiter + field
}

func (t *Flatten) Apply(r *connect.Record) (*connect.Record, error) {
	if r == nil {
		return nil, nil
	}
	v := t.value(r)
	if v == nil {
		return r, nil
	}
	s := t.schema(r)
	if s == nil {
		m, err := requireMap(v, "flattening")
		if err != nil {
			return nil, err
		}
		out := map[string]any{}
		if err := t.flattenMap(m, "", out); err != nil {
			return nil, err
		}
		return t.with(r, nil, out), nil
	}
	st, err := requireStructOrNull(v, "flattening")
	if err != nil {
		return nil, err
	}
	updated, err := t.cache.getOrBuild(s, func() (*connect.Schema, error) {
		b := copyBasics(s, connect.NewStruct())
		def, _ := s.Default.(*connect.Struct)
		if err := t.flattenSchema(s, "", b, s.Optional, def); err != nil {
			return nil, err
		}
		return b.BuildE()
	})
	if err != nil {
		return nil, err
	}
	out := connect.NewStructValue(updated)
	if err := t.flattenStruct(st, "", out); err != nil {
		return nil, err
	}
	return t.with(r, updated, out), nil
}

func (t *Flatten) flattenMap(m map[string]any, prefix string, out map[string]any) error {
	for k, v := range m {
		name := t.name(prefix, k)
		if v == nil {
			out[name] = nil
			continue
		}
		typ := inferType(v)
		switch {
		case typ == 0:
			return dataErr("Flatten transformation was passed a value of type %s which is not supported by Connect's data API", javaClass(v))
		case typ.IsPrimitive() || typ == connect.Array:
			out[name] = v
		case typ == connect.Map:
			nested, err := requireMap(v, "flattening")
			if err != nil {
				return err
			}
			if err := t.flattenMap(nested, name, out); err != nil {
				return err
			}
		default:
			return dataErr("Flatten transformation does not support %s for record without schemas (for field %s).", javaClass(v), name)
		}
	}
	return nil
}

func (t *Flatten) flattenSchema(s *connect.Schema, prefix string, b *connect.SchemaBuilder, optional bool, parentDefault *connect.Struct) error {
	for i := range s.Fields {
		f := &s.Fields[i]
		name := t.name(prefix, f.Name)
		fieldOptional := optional || f.Schema.Optional
		var def any
		if f.Schema.Default != nil {
			def = f.Schema.Default
		} else if parentDefault != nil {
			def = parentDefault.GetField(f)
		}
		switch {
		case f.Schema.Type.IsPrimitive() || f.Schema.Type == connect.Array:
			fb := copyBasicsOf(f.Schema)
			if fieldOptional {
				fb.Optional()
			}
			if def != nil {
				fb.Default(def)
			}
			fs, err := fb.BuildE()
			if err != nil {
				return err
			}
			b.Field(name, fs)
		case f.Schema.Type == connect.StructType:
			nestedDefault, _ := def.(*connect.Struct)
			if err := t.flattenSchema(f.Schema, name, b, fieldOptional, nestedDefault); err != nil {
				return err
			}
		default:
			return dataErr("Flatten transformation does not support %s for record with schemas (for field %s).", f.Schema.Type, name)
		}
	}
	return nil
}

func (t *Flatten) flattenStruct(st *connect.Struct, prefix string, out *connect.Struct) error {
	if st == nil {
		return nil
	}
	for i := range st.Schema().Fields {
		f := &st.Schema().Fields[i]
		name := t.name(prefix, f.Name)
		switch {
		case f.Schema.Type.IsPrimitive() || f.Schema.Type == connect.Array:
			if err := kput(out, name, st.GetField(f)); err != nil {
				return err
			}
		case f.Schema.Type == connect.StructType:
			nested, err := requireStructOrNull(st.GetField(f), "flattening")
			if err != nil {
				return err
			}
			if err := t.flattenStruct(nested, name, out); err != nil {
				return err
			}
		default:
			return dataErr("Flatten transformation does not support %s for record with schemas (for field %s).", f.Schema.Type, name)
		}
	}
	return nil
}
