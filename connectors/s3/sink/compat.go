package sink

import (
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/fjordhq/fjord/connect"
)

// shouldChangeSchema is Confluent's StorageSchemaCompatibility check of a
// record's value schema against the current file's: true when the files
// must be committed and a new one started with the record's schema.
func shouldChangeSchema(compat string, record, current *connect.Schema) (bool, error) {
	if record == current || (record == nil && current == nil) {
		return false, nil
	}
	if record == nil || current == nil {
		return false, errors.New("Switch between schema-based and schema-less data is not supported")
	}
	if compat == "NONE" {
		return !record.Equal(current), nil
	}
	if record.Version == nil || current.Version == nil {
		return false, fmt.Errorf("Schema version required for %s compatibility", compat)
	}
	if incompatible(record, current) {
		return true, nil
	}
	if compat == "FORWARD" {
		return *record.Version < *current.Version, nil
	}
	return *record.Version > *current.Version, nil // BACKWARD, FULL
}

var promotable = map[connect.Type]int{connect.Int8: 1, connect.Int16: 2, connect.Int32: 3, connect.Int64: 4, connect.Float32: 5, connect.Float64: 6}

func canPromote(from, to connect.Type) bool {
	a, ok1 := promotable[from]
	b, ok2 := promotable[to]
	return ok1 && ok2 && a <= b
}

// metadataParams drops the parameters converters add for their own
// bookkeeping (Confluent's SchemaProjector.filterMetadataParameters).
func metadataParams(p map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range p {
		if !strings.HasPrefix(k, "connect.record.") && !strings.HasPrefix(k, "io.confluent.connect.avro.field.") {
			out[k] = v
		}
	}
	return out
}

// incompatible is Confluent's checkSchemaCompatibility: types (numeric
// promotion allowed), names, parameters, optionality, and recursively the
// struct fields, array elements and map keys and values.
func incompatible(orig, cur *connect.Schema) bool {
	if orig.Type != cur.Type && !canPromote(orig.Type, cur.Type) {
		return true
	}
	if orig.Name != cur.Name {
		return true
	}
	if !maps.Equal(metadataParams(orig.Parameters), metadataParams(cur.Parameters)) {
		return true
	}
	if orig.Optional && !cur.Optional && cur.Default == nil {
		return true
	}
	switch orig.Type {
	case connect.StructType:
		for _, f := range orig.Fields {
			if cf := cur.Field(f.Name); cf != nil && incompatible(f.Schema, cf.Schema) {
				return true
			}
		}
		for _, f := range cur.Fields {
			if orig.Field(f.Name) == nil && !f.Schema.Optional && f.Schema.Default == nil {
				return true
			}
		}
	case connect.Array:
		return incompatible(orig.ValueSchema, cur.ValueSchema)
	case connect.Map:
		return incompatible(orig.KeySchema, cur.KeySchema) || incompatible(orig.ValueSchema, cur.ValueSchema)
	}
	return false
}

// project rewrites v (of schema from) to schema to, as Kafka's
// SchemaProjector: struct fields by name (missing ones take the target's
// default, extra ones are dropped), numbers promoted.
func project(from, to *connect.Schema, v any) (any, error) {
	if v == nil {
		if to.Optional {
			return nil, nil
		}
		if to.Default != nil {
			return to.Default, nil
		}
		return nil, fmt.Errorf("cannot project a null value onto the required schema %s", to)
	}
	switch to.Type {
	case connect.StructType:
		st, ok := v.(*connect.Struct)
		if !ok {
			return nil, fmt.Errorf("cannot project %T onto a struct", v)
		}
		out := connect.NewStructValue(to)
		for i := range to.Fields {
			tf := &to.Fields[i]
			ff := from.Field(tf.Name)
			if ff == nil {
				if tf.Schema.Default == nil && !tf.Schema.Optional {
					return nil, fmt.Errorf("field %s is missing in the record and has no default in the file's schema", tf.Name)
				}
				out.PutFieldUnchecked(tf, tf.Schema.Default)
				continue
			}
			fv, err := project(ff.Schema, tf.Schema, st.GetField(ff))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", tf.Name, err)
			}
			out.PutFieldUnchecked(tf, fv)
		}
		return out, nil
	case connect.Array:
		a, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("cannot project %T onto an array", v)
		}
		out := make([]any, len(a))
		for i, x := range a {
			p, err := project(from.ValueSchema, to.ValueSchema, x)
			if err != nil {
				return nil, err
			}
			out[i] = p
		}
		return out, nil
	case connect.Map:
		return v, nil
	}
	if from.Type != to.Type {
		return promote(v, to.Type)
	}
	return v, nil
}

func promote(v any, to connect.Type) (any, error) {
	var i int64
	var f float64
	isFloat := false
	switch x := v.(type) {
	case int8:
		i = int64(x)
	case int16:
		i = int64(x)
	case int32:
		i = int64(x)
	case int64:
		i = x
	case float32:
		f, isFloat = float64(x), true
	case float64:
		f, isFloat = x, true
	default:
		return nil, fmt.Errorf("cannot promote %T to %s", v, to)
	}
	if !isFloat {
		f = float64(i)
	}
	switch to {
	case connect.Int16:
		return int16(i), nil
	case connect.Int32:
		return int32(i), nil
	case connect.Int64:
		return i, nil
	case connect.Float32:
		return float32(f), nil
	case connect.Float64:
		return f, nil
	}
	return nil, fmt.Errorf("cannot promote %T to %s", v, to)
}
