package transforms

import "github.com/fjordhq/fjord/connect"

// InsertHeader is Kafka's org.apache.kafka.connect.transforms.InsertHeader:
// adds a header whose value is parsed from value.literal as Kafka's
// Values.parseString does ("42" is an INT8, "true" a BOOLEAN, "[1,2]" an
// ARRAY, anything unparseable a STRING).
type InsertHeader struct {
	header string
	schema *connect.Schema
	value  any
}

func insertHeaderConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "header", Type: connect.TypeString, Default: connect.NoDefault, Importance: connect.High, Doc: "The name of the header."}).
		Define(connect.ConfigKey{Name: "value.literal", Type: connect.TypeString, Default: connect.NoDefault, Importance: connect.High,
			Doc: "The literal value that is to be set as the header value on all records."})
}

func (t *InsertHeader) Config() *connect.ConfigDef { return insertHeaderConfigDef() }
func (t *InsertHeader) Close() error               { return nil }

func (t *InsertHeader) Configure(props map[string]string) error {
	cfg, err := parseConfig(insertHeaderConfigDef(), props)
	if err != nil {
		return err
	}
	t.header = cfg.String("header")
	t.schema, t.value = parseValueString(cfg.String("value.literal"))
	return nil
}

func (t *InsertHeader) Apply(r *connect.Record) (*connect.Record, error) {
	if r == nil {
		return nil, nil
	}
	c := r.Clone()
	c.Headers.Add(t.header, t.schema, t.value)
	return c, nil
}
