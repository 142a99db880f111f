package transforms

import (
	"slices"

	"github.com/fjordhq/fjord/connect"
)

// HeaderFrom is Kafka's org.apache.kafka.connect.transforms.HeaderFrom
// $Key/$Value: copies or moves fields of the key/value into headers
// (fields[i] goes to headers[i], with the field's schema).
type HeaderFrom struct {
	side
	fields, headers []string
	move            bool
	operation       string
	replaceNull     bool
	cache           schemaCache
}

func headerFromConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "fields", Type: connect.TypeList, Default: connect.NoDefault, Validator: nonEmptyList, Importance: connect.High,
			Doc: "Field names in the record whose values are to be copied or moved to headers."}).
		Define(connect.ConfigKey{Name: "headers", Type: connect.TypeList, Default: connect.NoDefault, Validator: nonEmptyList, Importance: connect.High,
			Doc: "Header names, in the same order as the field names listed in the fields configuration property."}).
		Define(connect.ConfigKey{Name: "operation", Type: connect.TypeString, Default: connect.NoDefault, Validator: connect.OneOf("move", "copy"), Importance: connect.High,
			Doc: "Either <code>move</code> if the fields are to be moved to the headers (removed from the key/value), or <code>copy</code> if the fields are to be copied to the headers (retained in the key/value)."}).
		Define(replaceNullWithDefaultKey())
}

func (t *HeaderFrom) Config() *connect.ConfigDef { return headerFromConfigDef() }
func (t *HeaderFrom) Close() error               { return nil }

func (t *HeaderFrom) Configure(props map[string]string) error {
	cfg, err := parseConfig(headerFromConfigDef(), props)
	if err != nil {
		return err
	}
	t.fields, t.headers = cfg.List("fields"), cfg.List("headers")
	if len(t.fields) != len(t.headers) {
		return configErr("headers", "'fields' config must have the same number of elements as 'headers' config.")
	}
	t.operation = cfg.String("operation")
	t.move = t.operation == "move"
	t.replaceNull = cfg.Bool("replace.null.with.default")
	return nil
}

func (t *HeaderFrom) Apply(r *connect.Record) (*connect.Record, error) {
	if r == nil {
		return nil, nil
	}
	s, v := t.schema(r), t.value(r)
	purpose := "header " + t.operation
	if s == nil {
		m, err := requireMap(v, purpose)
		if err != nil {
			return nil, err
		}
		updated := make(map[string]any, len(m))
		for k, x := range m {
			updated[k] = x
		}
		out := t.with(r, nil, updated)
		for i, f := range t.fields {
			if t.move {
				delete(updated, f)
			}
			out.Headers.Add(t.headers[i], nil, m[f])
		}
		return out, nil
	}
	st, err := requireStruct(v, purpose)
	if err != nil {
		return nil, err
	}
	updatedSchema, updatedValue := s, st
	if t.move {
		updatedSchema, err = t.cache.getOrBuild(s, func() (*connect.Schema, error) {
			b := copyBasics(s, connect.NewStruct())
			for _, f := range s.Fields {
				if !slices.Contains(t.fields, f.Name) {
					b.Field(f.Name, f.Schema)
				}
			}
			return b.BuildE()
		})
		if err != nil {
			return nil, err
		}
		updatedValue = connect.NewStructValue(updatedSchema)
		for i := range updatedSchema.Fields {
			f := &updatedSchema.Fields[i]
			if err := kput(updatedValue, f.Name, fieldValue(st, st.Schema().Field(f.Name), t.replaceNull)); err != nil {
				return nil, err
			}
		}
	}
	out := t.with(r, updatedSchema, updatedValue)
	for i, name := range t.fields {
		f := s.Field(name)
		if f == nil {
			// Kafka fails here with this NullPointerException.
			return nil, dataErr(`Cannot invoke "org.apache.kafka.connect.data.Field.schema()" because the return value of "org.apache.kafka.connect.data.Schema.field(String)" is null`)
		}
		var fv any
		if sf := st.Schema().Field(name); sf != nil {
			fv = fieldValue(st, sf, t.replaceNull)
		}
		out.Headers.Add(t.headers[i], f.Schema, fv)
	}
	return out, nil
}
