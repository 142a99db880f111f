package json

import (
	"strconv"

	"github.com/fjordhq/fjord/connect"
)

// topSchema returns the cached JSON of a record's schema (and of its
// field names), checking the last one used first, without locking.
func (c *Converter) topSchema(e *encoder, s *connect.Schema) (*schemaBytes, error) {
	if l := c.lastSchema.Load(); l != nil && l.s == s {
		return l, nil
	}
	b, err := c.cachedSchema(e, s)
	if err != nil {
		return nil, err
	}
	sb := &schemaBytes{s: s, b: b}
	if s.Type == connect.StructType {
		for i := range s.Fields {
			sb.names = appendFieldName(sb.names, s.Fields[i].Name)
			sb.ends = append(sb.ends, len(sb.names))
		}
	}
	c.lastSchema.Store(sb)
	return sb, nil
}

func (c *Converter) cachedSchema(e *encoder, s *connect.Schema) ([]byte, error) {
	cache := c.encCache()
	if b, ok := cache.get(s); ok {
		return b, nil
	}
	b, err := c.buildSchemaJSON(nil, e, s)
	if err != nil {
		return nil, err
	}
	cache.put(s, b)
	return b, nil
}

// schemaBytes is the last record schema written: its envelope JSON and,
// for a struct, its fields' "name": prefixes (names[ends[i-1]:ends[i]]).
type schemaBytes struct {
	s     *connect.Schema
	b     []byte
	names []byte
	ends  []int
}

// buildSchemaJSON appends the envelope's "schema" object for s, as
// Kafka's asJsonSchema builds it: "type", then "items" / "keys","values"
// / "fields", then "optional", "name", "version", "doc", "parameters" (in
// insertion order), "default"; a struct field's schema gets "field"
// last. The bytes are cached per schema by the converter.
func (c *Converter) buildSchemaJSON(dst []byte, e *encoder, s *connect.Schema) ([]byte, error) {
	dst = append(dst, `{"type":`...)
	var err error
	switch s.Type {
	case connect.Boolean:
		dst = append(dst, `"boolean"`...)
	case connect.Bytes:
		dst = append(dst, `"bytes"`...)
	case connect.Float64:
		dst = append(dst, `"double"`...)
	case connect.Float32:
		dst = append(dst, `"float"`...)
	case connect.Int8:
		dst = append(dst, `"int8"`...)
	case connect.Int16:
		dst = append(dst, `"int16"`...)
	case connect.Int32:
		dst = append(dst, `"int32"`...)
	case connect.Int64:
		dst = append(dst, `"int64"`...)
	case connect.String:
		dst = append(dst, `"string"`...)
	case connect.Array:
		dst = append(dst, `"array","items":`...)
		if dst, err = c.nestedSchema(dst, e, s.ValueSchema); err != nil {
			return dst, err
		}
	case connect.Map:
		dst = append(dst, `"map","keys":`...)
		if dst, err = c.nestedSchema(dst, e, s.KeySchema); err != nil {
			return dst, err
		}
		dst = append(dst, `,"values":`...)
		if dst, err = c.nestedSchema(dst, e, s.ValueSchema); err != nil {
			return dst, err
		}
	case connect.StructType:
		dst = append(dst, `"struct","fields":[`...)
		for i := range s.Fields {
			if i > 0 {
				dst = append(dst, ',')
			}
			fb, err := c.cachedSchema(e, s.Fields[i].Schema)
			if err != nil {
				return dst, err
			}
			dst = append(dst, fb[:len(fb)-1]...) // without its closing brace
			dst = append(dst, `,"field":`...)
			dst = appendString(dst, s.Fields[i].Name)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	default:
		return dst, dataErrorf("Couldn't translate unsupported schema type %s.", s)
	}
	dst = append(dst, `,"optional":`...)
	dst = strconv.AppendBool(dst, s.Optional)
	if s.Name != "" {
		dst = append(dst, `,"name":`...)
		dst = appendString(dst, s.Name)
	}
	if s.Version != nil {
		dst = append(dst, `,"version":`...)
		dst = strconv.AppendInt(dst, int64(*s.Version), 10)
	}
	if s.Doc != "" {
		dst = append(dst, `,"doc":`...)
		dst = appendString(dst, s.Doc)
	}
	if s.Parameters != nil {
		dst = append(dst, `,"parameters":{`...)
		for i, k := range s.ParameterKeys() {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, k)
			dst = append(dst, ':')
			dst = appendString(dst, s.Parameters[k])
		}
		dst = append(dst, '}')
	}
	if s.Default != nil {
		dst = append(dst, `,"default":`...)
		if dst, err = e.value(dst, s, s.Default); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

func (c *Converter) nestedSchema(dst []byte, e *encoder, s *connect.Schema) ([]byte, error) {
	if s == nil {
		return append(dst, "null"...), nil
	}
	b, err := c.cachedSchema(e, s)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}
