package transforms

import "github.com/fjordhq/fjord/connect"

// HoistField is Kafka's org.apache.kafka.connect.transforms.HoistField
// $Key/$Value: wraps the key or value in a Struct (or map) with one field.
type HoistField struct {
	side
	field string
	cache schemaCache
}

func hoistFieldConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().Define(connect.ConfigKey{
		Name: "field", Type: connect.TypeString, Default: connect.NoDefault, Importance: connect.Medium,
		Doc: "Field name for the single field that will be created in the resulting Struct or Map.",
	})
}

func (t *HoistField) Config() *connect.ConfigDef { return hoistFieldConfigDef() }
func (t *HoistField) Close() error               { return nil }

func (t *HoistField) Configure(props map[string]string) error {
	cfg, err := parseConfig(hoistFieldConfigDef(), props)
	if err != nil {
		return err
	}
	t.field = cfg.String("field")
	return nil
}

func (t *HoistField) Apply(r *connect.Record) (*connect.Record, error) {
	if r == nil {
		return nil, nil
	}
	s, v := t.schema(r), t.value(r)
	if s == nil {
		return t.with(r, nil, map[string]any{t.field: v}), nil
	}
	updated, err := t.cache.getOrBuild(s, func() (*connect.Schema, error) {
		return connect.NewStruct().Field(t.field, s).BuildE()
	})
	if err != nil {
		return nil, err
	}
	st := connect.NewStructValue(updated)
	if err := kput(st, t.field, v); err != nil {
		return nil, err
	}
	return t.with(r, updated, st), nil
}
