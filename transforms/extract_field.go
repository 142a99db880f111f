package transforms

import (
	"fmt"

	"github.com/fjordhq/fjord/connect"
)

// ExtractField is Kafka's org.apache.kafka.connect.transforms.ExtractField
// $Key/$Value: replaces the key or value with one of its fields (nested
// with field.syntax.version=V2). Null keys/values pass through.
type ExtractField struct {
	side
	path         fieldPath
	originalPath string
	replaceNull  bool
}

func extractFieldConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "field", Type: connect.TypeString, Default: connect.NoDefault, Importance: connect.Medium, Doc: "Field name to extract."}).
		Define(replaceNullWithDefaultKey()).
		Define(fieldSyntaxKey())
}

func (t *ExtractField) Config() *connect.ConfigDef { return extractFieldConfigDef() }
func (t *ExtractField) Close() error               { return nil }

func (t *ExtractField) Configure(props map[string]string) error {
	cfg, err := parseConfig(extractFieldConfigDef(), props)
	if err != nil {
		return err
	}
	t.originalPath = cfg.String("field")
	if t.path, err = newFieldPath(t.originalPath, fieldSyntaxV2(cfg)); err != nil {
		return err
	}
	t.replaceNull = cfg.Bool("replace.null.with.default")
	return nil
}

// UnknownFieldError is Kafka's IllegalArgumentException("Unknown field: x")
// from ExtractField on a schema without the field.
type UnknownFieldError struct{ Field string }

func (e *UnknownFieldError) Error() string { return fmt.Sprintf("Unknown field: %s", e.Field) }

func (t *ExtractField) Apply(r *connect.Record) (*connect.Record, error) {
	if r == nil {
		return nil, nil
	}
	s := t.schema(r)
	if s == nil {
		m, err := requireMapOrNull(t.value(r), "field extraction")
		if err != nil {
			return nil, err
		}
		var v any
		if m != nil {
			if v, err = t.path.mapValue(m); err != nil {
				return nil, err
			}
		}
		return t.with(r, nil, v), nil
	}
	st, err := requireStructOrNull(t.value(r), "field extraction")
	if err != nil {
		return nil, err
	}
	f := t.path.fieldFrom(s)
	if f == nil {
		return nil, &UnknownFieldError{Field: t.originalPath}
	}
	var v any
	if st != nil {
		if v, err = t.path.structValue(st, t.replaceNull); err != nil {
			return nil, err
		}
	}
	return t.with(r, f.Schema, v), nil
}
