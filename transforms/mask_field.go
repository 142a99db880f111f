package transforms

import (
	"math/big"
	"slices"
	"time"

	"github.com/fjordhq/fjord/connect"
)

// MaskField is Kafka's org.apache.kafka.connect.transforms.MaskField
// $Key/$Value: replaces the listed fields with their type's zero value
// (0, false, "", empty list or map, the epoch) or with "replacement"
// converted to the field's type (numbers and strings only).
type MaskField struct {
	side
	fields      []string
	replacement *string
	replaceNull bool
}

func maskFieldConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "fields", Type: connect.TypeList, Default: connect.NoDefault, Validator: nonDuplicateList(false), Importance: connect.High, Doc: "Names of fields to mask."}).
		Define(connect.ConfigKey{Name: "replacement", Type: connect.TypeString, Default: nil, Validator: nonEmptyString, Importance: connect.Low,
			Doc: "Custom value replacement, that will be applied to all 'fields' values (numeric or non-empty string values only)."}).
		Define(replaceNullWithDefaultKey())
}

func (t *MaskField) Config() *connect.ConfigDef { return maskFieldConfigDef() }
func (t *MaskField) Close() error               { return nil }

func (t *MaskField) Configure(props map[string]string) error {
	cfg, err := parseConfig(maskFieldConfigDef(), props)
	if err != nil {
		return err
	}
	t.fields = cfg.List("fields")
	if !cfg.IsNull("replacement") {
		s := cfg.String("replacement")
		t.replacement = &s
	}
	t.replaceNull = cfg.Bool("replace.null.with.default")
	return nil
}

func (t *MaskField) Apply(r *connect.Record) (*connect.Record, error) {
	if r == nil {
		return nil, nil
	}
	s, v := t.schema(r), t.value(r)
	if s == nil {
		m, err := requireMap(v, "mask fields")
		if err != nil {
			return nil, err
		}
		updated := make(map[string]any, len(m))
		for k, x := range m {
			updated[k] = x
		}
		for _, f := range t.fields {
			mv, err := t.mask(m[f])
			if err != nil {
				return nil, err
			}
			updated[f] = mv
		}
		return t.with(r, nil, updated), nil
	}
	st, err := requireStruct(v, "mask fields")
	if err != nil {
		return nil, err
	}
	out := connect.NewStructValue(st.Schema())
	for i := range st.Schema().Fields {
		f := &st.Schema().Fields[i]
		fv := fieldValue(st, f, t.replaceNull)
		if slices.Contains(t.fields, f.Name) {
			if fv, err = t.mask(fv); err != nil {
				return nil, err
			}
		}
		if err := kput(out, f.Name, fv); err != nil {
			return nil, err
		}
	}
	// Kafka keeps the record's schema object for the value side.
	return t.with(r, s, out), nil
}

func (t *MaskField) mask(v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	if t.replacement == nil {
		switch v.(type) {
		case bool:
			return false, nil
		case int8:
			return int8(0), nil
		case int16:
			return int16(0), nil
		case int32:
			return int32(0), nil
		case int64:
			return int64(0), nil
		case float32:
			return float32(0), nil
		case float64:
			return float64(0), nil
		case connect.Decimal:
			return connect.Decimal{Unscaled: big.NewInt(0)}, nil
		case time.Time:
			return time.UnixMilli(0).UTC(), nil
		case string:
			return "", nil
		case []any:
			return []any{}, nil
		case map[string]any:
			return map[string]any{}, nil
		case map[any]any:
			return map[any]any{}, nil
		}
		return nil, dataErr("Cannot mask value of type: %s", javaClass(v))
	}
	repl := *t.replacement
	notNumber := func() error {
		return dataErr("Unable to convert %s (class java.lang.String) to a number", repl)
	}
	switch v.(type) {
	case string:
		return repl, nil
	case int8, int16, int32, int64:
		d, err := connect.ParseDecimal(repl)
		if err != nil {
			return nil, notNumber()
		}
		n, _ := numberToInt64(d)
		switch v.(type) {
		case int8:
			return int8(n), nil
		case int16:
			return int16(n), nil
		case int32:
			return int32(n), nil
		}
		return n, nil
	case float32, float64:
		d, err := connect.ParseDecimal(repl)
		if err != nil {
			return nil, notNumber()
		}
		f, _ := numberToFloat64(d)
		if _, ok := v.(float32); ok {
			return float32(f), nil
		}
		return f, nil
	case connect.Decimal:
		d, err := connect.ParseDecimal(repl)
		if err != nil {
			return nil, dataErr("Unable to convert %s (class java.lang.String) to number", repl)
		}
		return d, nil
	}
	return nil, dataErr("Cannot mask value of type %s with custom replacement.", javaClass(v))
}
