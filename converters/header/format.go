package header

import (
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/converters/internal/jvm"
)

// FormatString is Kafka's Values.convertToString: a value as the text
// SimpleHeaderConverter writes. Strings are written as they are at the
// top level and quoted (with \ and " escaped) inside arrays, maps and
// structs; numbers as Java prints them; bytes in base64; dates with
// Values' ISO-8601 patterns; maps with their keys sorted (Go maps have no
// order). The schema is not consulted, as in Kafka.
func FormatString(s *connect.Schema, v any) (string, error) {
	if v == nil {
		return "", nil
	}
	b, err := appendValue(nil, v, false)
	return string(b), err
}

func appendValue(b []byte, v any, embedded bool) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case int8, int16, int32, int64, float32, float64, connect.Decimal:
		return jvm.AppendString(b, x), nil
	case bool:
		return jvm.AppendString(b, x), nil
	case string:
		if !embedded {
			return append(b, x...), nil
		}
		b = append(b, '"')
		b = append(b, escape(x)...)
		return append(b, '"'), nil
	case []byte:
		if embedded {
			b = append(b, '"')
		}
		b = base64.StdEncoding.AppendEncode(b, x)
		if embedded {
			b = append(b, '"')
		}
		return b, nil
	case []any:
		b = append(b, '[')
		var err error
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendValue(b, e, true); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	case map[string]any:
		b = append(b, '{')
		var err error
		for i, k := range jvm.SortedKeys(x) {
			if i > 0 {
				b = append(b, ',')
			}
			b, _ = appendValue(b, k, true)
			b = append(b, ':')
			if b, err = appendValue(b, x[k], true); err != nil {
				return b, err
			}
		}
		return append(b, '}'), nil
	case map[any]any:
		b = append(b, '{')
		var err error
		for i, k := range jvm.SortedAnyKeys(x) {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendValue(b, k, true); err != nil {
				return b, err
			}
			b = append(b, ':')
			if b, err = appendValue(b, x[k], true); err != nil {
				return b, err
			}
		}
		return append(b, '}'), nil
	case *connect.Struct:
		b = append(b, '{')
		s := x.Schema()
		var err error
		for i := range s.Fields {
			if i > 0 {
				b = append(b, ',')
			}
			b, _ = appendValue(b, s.Fields[i].Name, true)
			b = append(b, ':')
			if b, err = appendValue(b, x.GetField(&s.Fields[i]), true); err != nil {
				return b, err
			}
		}
		return append(b, '}'), nil
	case time.Time:
		return append(b, formatDate(x)...), nil
	}
	return b, &connect.DataError{Msg: fmt.Sprintf("Failed to serialize unexpected value type %T: %v", v, v)}
}

var escaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`)

func escape(s string) string { return escaper.Replace(s) }
