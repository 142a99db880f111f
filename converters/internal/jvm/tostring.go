package jvm

import (
	"math/big"
	"strconv"
	"time"

	"github.com/fjordhq/fjord/connect"
)

// AppendString appends Java's String.valueOf(v) for a Connect value, as
// Kafka's StringConverter writes any value: numbers as Java prints them,
// lists as "[a, b]", maps as "{k=v, k2=v2}" (Go maps in key order),
// structs as "Struct{a=1,b=x}" (set fields only), dates with
// java.util.Date.toString. Bytes, which Java would print as an object
// identity ("[B@1b6d3586"), are appended as they are.
func AppendString(dst []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...)
	case string:
		return append(dst, x...)
	case []byte:
		return append(dst, x...)
	case int8:
		return strconv.AppendInt(dst, int64(x), 10)
	case int16:
		return strconv.AppendInt(dst, int64(x), 10)
	case int32:
		return strconv.AppendInt(dst, int64(x), 10)
	case int64:
		return strconv.AppendInt(dst, x, 10)
	case int:
		return strconv.AppendInt(dst, int64(x), 10)
	case float32:
		return AppendFloat(dst, x)
	case float64:
		return AppendDouble(dst, x)
	case bool:
		return strconv.AppendBool(dst, x)
	case connect.Decimal:
		return AppendDecimal(dst, x)
	case *big.Int:
		return x.Append(dst, 10)
	case time.Time:
		return append(dst, DateString(x)...)
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',', ' ')
			}
			dst = AppendString(dst, e)
		}
		return append(dst, ']')
	case map[string]any:
		dst = append(dst, '{')
		for i, k := range SortedKeys(x) {
			if i > 0 {
				dst = append(dst, ',', ' ')
			}
			dst = append(dst, k...)
			dst = append(dst, '=')
			dst = AppendString(dst, x[k])
		}
		return append(dst, '}')
	case map[any]any:
		dst = append(dst, '{')
		for i, k := range SortedAnyKeys(x) {
			if i > 0 {
				dst = append(dst, ',', ' ')
			}
			dst = AppendString(dst, k)
			dst = append(dst, '=')
			dst = AppendString(dst, x[k])
		}
		return append(dst, '}')
	case *connect.Struct:
		dst = append(dst, "Struct{"...)
		first := true
		s := x.Schema()
		for i := range s.Fields {
			fv := x.GetFieldWithoutDefault(&s.Fields[i])
			if fv == nil {
				continue
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = append(dst, s.Fields[i].Name...)
			dst = append(dst, '=')
			dst = AppendString(dst, fv)
		}
		return append(dst, '}')
	}
	return append(dst, "?"...)
}
