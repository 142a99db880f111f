package avro

import (
	"bytes"

	"github.com/fjordhq/fjord/converters/avro/avsc"
)

// Schemaless data travels as Confluent's io.confluent.connect.avro.Anything
// record (AvroData.ANYTHING_SCHEMA): one optional field per type, the one
// set holding the value; arrays hold Anything records and maps are
// arrays of key/value Anything records.
const anythingText = `{"type":"record","name":"Anything","namespace":"io.confluent.connect.avro","fields":[` +
	`{"name":"boolean","type":["null","boolean"],"default":null},` +
	`{"name":"bytes","type":["null","bytes"],"default":null},` +
	`{"name":"double","type":["null","double"],"default":null},` +
	`{"name":"float","type":["null","float"],"default":null},` +
	`{"name":"int","type":["null","int"],"default":null},` +
	`{"name":"long","type":["null","long"],"default":null},` +
	`{"name":"string","type":["null","string"],"default":null},` +
	`{"name":"array","type":["null",{"type":"array","items":"Anything"}],"default":null},` +
	`{"name":"map","type":["null",{"type":"array","items":{"type":"record","name":"MapEntry","fields":[` +
	`{"name":"key","type":"Anything"},{"name":"value","type":"Anything"}]}}],"default":null}]}`

var anythingSchema = func() *avsc.Schema {
	s, err := avsc.Parse(anythingText)
	if err != nil {
		panic(err)
	}
	return s
}()

const anythingFullName = namespace + ".Anything"

// isAnything reports whether a writer schema is the Anything record.
func isAnything(s *avsc.Schema) bool {
	return s.Type == avsc.Record && s.FullName() == anythingFullName && s.Canonical() == anythingSchema.Canonical()
}

// anyToAvro wraps a schemaless Connect value in Anything records (in
// goavro's native form; nil is a record with no field set).
func anyToAvro(v any) (map[string]any, error) {
	set := func(field, branch string, val any) map[string]any {
		return map[string]any{field: map[string]any{branch: val}}
	}
	switch x := v.(type) {
	case nil:
		return map[string]any{}, nil
	case bool:
		return set("boolean", "boolean", x), nil
	case []byte:
		return set("bytes", "bytes", x), nil
	case float64:
		return set("double", "double", x), nil
	case float32:
		return set("float", "float", x), nil
	case int8:
		return set("int", "int", int32(x)), nil
	case int16:
		return set("int", "int", int32(x)), nil
	case int32:
		return set("int", "int", x), nil
	case int64:
		return set("long", "long", x), nil
	case string:
		return set("string", "string", x), nil
	case []any:
		items := make([]any, len(x))
		for i, it := range x {
			a, err := anyToAvro(it)
			if err != nil {
				return nil, err
			}
			items[i] = a
		}
		return set("array", "array", items), nil
	case map[string]any, map[any]any:
		var entries []any
		for _, e := range mapEntries(x) {
			k, err := anyToAvro(e[0])
			if err != nil {
				return nil, err
			}
			val, err := anyToAvro(e[1])
			if err != nil {
				return nil, err
			}
			entries = append(entries, map[string]any{"key": k, "value": val})
		}
		if entries == nil {
			entries = []any{}
		}
		return set("map", "array", entries), nil
	}
	return nil, dataErr("Unknown Java type for schemaless data: %T", v)
}

// anyFromAvro unwraps a decoded Anything record: the first field set,
// in the record's order, as AvroData.toConnectData.
func anyFromAvro(v any) (any, error) {
	rec, ok := v.(map[string]any)
	if !ok {
		return nil, dataErr("Anything value %T is not a record", v)
	}
	for _, f := range anythingSchema.Fields {
		u, ok := rec[f.Name].(map[string]any)
		if !ok || len(u) != 1 {
			continue
		}
		for _, val := range u {
			switch f.Name {
			case "bytes":
				b, _ := val.([]byte)
				return bytes.Clone(b), nil
			case "array":
				items, _ := val.([]any)
				out := make([]any, len(items))
				for i, it := range items {
					cv, err := anyFromAvro(it)
					if err != nil {
						return nil, err
					}
					out[i] = cv
				}
				return out, nil
			case "map":
				entries, _ := val.([]any)
				byString := map[string]any{}
				byAny := map[any]any{}
				allStrings := true
				for _, e := range entries {
					em, ok := e.(map[string]any)
					if !ok {
						return nil, dataErr("Anything map entry %T is not a record", e)
					}
					k, err := anyFromAvro(em["key"])
					if err != nil {
						return nil, err
					}
					cv, err := anyFromAvro(em["value"])
					if err != nil {
						return nil, err
					}
					if ks, ok := k.(string); ok {
						byString[ks] = cv
					} else {
						allStrings = false
					}
					if !comparable(k) {
						return nil, dataErr("schemaless map key of type %T cannot be a Go map key", k)
					}
					byAny[k] = cv
				}
				if allStrings {
					return byString, nil
				}
				return byAny, nil
			}
			return val, nil
		}
	}
	return nil, nil
}
