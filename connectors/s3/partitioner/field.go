package partitioner

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fjordhq/fjord/connect"
)

// fieldPartitioner is Confluent's FieldPartitioner:
// "<name>=<value>" for each of partition.field.name, joined by
// directory.delim. Struct values follow Confluent: the field must be in
// the value schema, INT8 to INT64, STRING and BOOLEAN fields are
// printed, a null (or a null struct on the way to a nested field) prints
// "null", and other types fail with Confluent's PartitionException
// message. Schemaless map values are a Fjord extension (Confluent fails
// them as "Value is not Struct type."): integers, strings and booleans
// are printed, a missing or null entry prints "null".
type fieldPartitioner struct {
	fields []fieldPath
	delim  string
	bufs   sync.Pool
	mu     sync.Mutex
	// interned returns the same string for the same encoding, so a
	// record whose fields repeat a recent value costs no allocation.
	interned map[string]string
}

// maxInterned bounds the interned encodings; the map starts over when
// full.
const maxInterned = 4096

func newFieldPartitioner(fields []fieldPath, delim string) *fieldPartitioner {
	p := &fieldPartitioner{fields: fields, delim: delim, interned: map[string]string{}}
	p.bufs.New = func() any { b := make([]byte, 0, 64); return &b }
	return p
}

func (p *fieldPartitioner) Encode(r *connect.SinkRecord, _ time.Time) (string, error) {
	bp := p.bufs.Get().(*[]byte)
	b, err := p.appendEncoded((*bp)[:0], r)
	var s string
	if err == nil {
		s = p.intern(b)
	}
	*bp = b[:0]
	p.bufs.Put(bp)
	return s, err
}

func (p *fieldPartitioner) intern(b []byte) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s, ok := p.interned[string(b)]; ok {
		return s
	}
	if len(p.interned) >= maxInterned {
		clear(p.interned)
	}
	s := string(b)
	p.interned[s] = s
	return s
}

func (p *fieldPartitioner) appendEncoded(b []byte, r *connect.SinkRecord) ([]byte, error) {
	switch v := r.Value.(type) {
	case *connect.Struct:
		if v == nil {
			break
		}
		schema := r.ValueSchema
		if schema == nil {
			schema = v.Schema()
		}
		for i, f := range p.fields {
			if i > 0 {
				b = append(b, p.delim...)
			}
			field, err := nestedField(schema, f)
			if err != nil {
				return b, err
			}
			if field == nil {
				return b, &connect.DataError{Msg: "Field '" + f.name + "' is not present in the schema."}
			}
			b = append(append(b, f.name...), '=')
			val, ok := nestedValue(v, f)
			if !ok {
				b = append(b, "null"...)
				continue
			}
			if b, err = appendStructValue(b, field.Schema, val); err != nil {
				return b, err
			}
		}
		return b, nil
	case map[string]any, map[any]any:
		for i, f := range p.fields {
			if i > 0 {
				b = append(b, p.delim...)
			}
			b = append(append(b, f.name...), '=')
			val, ok := nestedValue(v, f)
			if !ok {
				b = append(b, "null"...)
				continue
			}
			var err error
			if b, err = appendSchemaless(b, val); err != nil {
				return b, err
			}
		}
		return b, nil
	}
	return b, errEncoding("Value is not Struct type.")
}

func appendStructValue(b []byte, s *connect.Schema, v any) ([]byte, error) {
	switch s.Type {
	case connect.Int8, connect.Int16, connect.Int32, connect.Int64:
		if n, ok := integer(v); ok {
			return strconv.AppendInt(b, n, 10), nil
		}
		// A Timestamp, Date or Time value: Confluent's cast to Number
		// fails.
		return b, errEncoding("a " + s.String() + " value is not a number")
	case connect.String:
		if x, ok := v.(string); ok {
			return append(b, x...), nil
		}
	case connect.Boolean:
		if x, ok := v.(bool); ok {
			return strconv.AppendBool(b, x), nil
		}
	}
	return b, errEncoding("Type " + strings.ToLower(s.Type.String()) + " is not supported as a partition key.")
}

func appendSchemaless(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case string:
		return append(b, x...), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	}
	if n, ok := integer(v); ok {
		return strconv.AppendInt(b, n, 10), nil
	}
	if x, ok := v.(uint64); ok {
		return strconv.AppendUint(b, x, 10), nil
	}
	return b, errEncoding(fmt.Sprintf("A schemaless value of type %T is not supported as a partition key.", v))
}

// integer returns the signed integer types' values.
func integer(v any) (int64, bool) {
	switch x := v.(type) {
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case int:
		return int64(x), true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	}
	return 0, false
}
