package partitioner

import (
	"strings"

	"github.com/fjordhq/fjord/connect"
)

// fieldPath is a field name that may name a nested field with dots
// ("user.address.city"), as Confluent's DataUtils reads it.
type fieldPath struct {
	name string
	segs []string
}

// newFieldPath splits name as Java's name.split("\\.") does, which drops
// trailing empty parts: "a." names field a, and "." names nothing.
func newFieldPath(name string) fieldPath {
	segs := strings.Split(name, ".")
	if len(segs) > 1 {
		for len(segs) > 0 && segs[len(segs)-1] == "" {
			segs = segs[:len(segs)-1]
		}
	}
	return fieldPath{name: name, segs: segs}
}

// nestedField is DataUtils.getNestedField: the field the path names in a
// STRUCT schema, or nil when a part is missing. A part before the last
// that is not a struct is an error (Kafka's "Cannot look up fields on
// non-struct type").
func nestedField(s *connect.Schema, p fieldPath) (*connect.Field, error) {
	if s == nil || len(p.segs) == 0 {
		return nil, nil
	}
	var f *connect.Field
	cur := s
	for _, name := range p.segs {
		if cur.Type != connect.StructType {
			return nil, &connect.DataError{Msg: "Unable to get field '" + p.name + "' from schema " + s.String() + "."}
		}
		if f = cur.Field(name); f == nil {
			return nil, nil
		}
		cur = f.Schema
	}
	return f, nil
}

// nestedValue is DataUtils.getNestedFieldValue: it walks structs and
// string-keyed maps; ok is false when a part is missing or null (where
// Confluent throws "The field '...' does not exist.").
func nestedValue(v any, p fieldPath) (any, bool) {
	if len(p.segs) == 0 {
		return nil, false
	}
	for _, name := range p.segs {
		switch x := v.(type) {
		case *connect.Struct:
			if x == nil {
				return nil, false
			}
			f := x.Schema().Field(name)
			if f == nil {
				return nil, false
			}
			v = x.GetField(f)
		case map[string]any:
			v = x[name]
		case map[any]any:
			v = x[name]
		default:
			return nil, false
		}
		if v == nil {
			return nil, false
		}
	}
	return v, true
}
