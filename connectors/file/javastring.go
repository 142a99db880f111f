package file

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fjordhq/fjord/connect"
)

// JavaString renders a Connect value as Java's String.valueOf does for the
// objects Kafka Connect's converters produce, which is what Kafka's
// FileStreamSinkTask prints: "null", numbers as Long/Integer/Double/Float
// toString, decimals as BigDecimal.toString, dates as java.util.Date's
// toString in the local zone, lists as [a, b], maps as {k=v, k2=v2} in
// java.util.HashMap's iteration order, structs as Struct{a=1,b=x}.
//
// Two things cannot be reproduced: byte arrays print as "[B@" and a hash
// of their contents (Java prints an identity hash, different on every
// run), and keys of a map that share a HashMap bucket are ordered by key
// instead of by insertion (a Go map does not keep insertion order).
func JavaString(v any) string {
	if s, ok := v.(string); ok && utf8.ValidString(s) {
		return s
	}
	return string(AppendJavaString(nil, v))
}

// AppendJavaString appends JavaString(v) to b.
func AppendJavaString(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case string:
		if utf8.ValidString(x) {
			return append(b, x...)
		}
		// Java strings hold no invalid UTF-8: its decoders replaced it.
		return appendJavaDecoded(b, []byte(x))
	case bool:
		return strconv.AppendBool(b, x)
	case int8:
		return strconv.AppendInt(b, int64(x), 10)
	case int16:
		return strconv.AppendInt(b, int64(x), 10)
	case int32:
		return strconv.AppendInt(b, int64(x), 10)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case int:
		return strconv.AppendInt(b, int64(x), 10)
	case float64:
		return appendJavaDouble(b, x)
	case float32:
		return appendJavaFloat(b, x)
	case []byte:
		h := fnv.New32a()
		h.Write(x)
		return fmt.Appendf(b, "[B@%x", h.Sum32()&0x7fffffff)
	case connect.Decimal:
		return appendBigDecimal(b, x)
	case time.Time:
		return x.Local().AppendFormat(b, "Mon Jan 02 15:04:05 MST 2006")
	case *connect.Struct:
		if x == nil {
			return append(b, "null"...)
		}
		return appendStruct(b, x)
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = AppendJavaString(b, e)
		}
		return append(b, ']')
	case map[string]any:
		keys := make([]any, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		return appendMap(b, keys, func(k any) any { return x[k.(string)] })
	case map[any]any:
		keys := make([]any, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		return appendMap(b, keys, func(k any) any { return x[k] })
	case fmt.Stringer:
		return append(b, x.String()...)
	}
	return appendReflect(b, v)
}

// appendReflect covers slices and maps of other element types, which
// plugins may hand over although the data model does not use them.
func appendReflect(b []byte, v any) []byte {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		b = append(b, '[')
		for i := range rv.Len() {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = AppendJavaString(b, rv.Index(i).Interface())
		}
		return append(b, ']')
	case reflect.Map:
		keys := make([]any, 0, rv.Len())
		for _, k := range rv.MapKeys() {
			keys = append(keys, k.Interface())
		}
		return appendMap(b, keys, func(k any) any { return rv.MapIndex(reflect.ValueOf(k)).Interface() })
	}
	return fmt.Append(b, v)
}

// appendStruct follows Kafka's Struct.toString: unset fields skipped,
// no space after the comma, raw values (defaults not applied).
func appendStruct(b []byte, st *connect.Struct) []byte {
	b = append(b, "Struct{"...)
	first := true
	fields := st.Schema().Fields
	for i := range fields {
		f := &fields[i]
		v := st.GetFieldWithoutDefault(f)
		if v == nil {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, f.Name...)
		b = append(b, '=')
		b = AppendJavaString(b, v)
	}
	return append(b, '}')
}

// appendMap prints {k=v, k2=v2} in the order java.util.HashMap iterates:
// by bucket (the spread hash masked by the table size the map grew to),
// then by insertion within a bucket, which we replace by key order.
func appendMap(b []byte, keys []any, get func(any) any) []byte {
	table := 16
	for float64(len(keys)) > 0.75*float64(table) {
		table *= 2
	}
	type entry struct {
		bucket int
		key    any
		text   string
	}
	es := make([]entry, len(keys))
	for i, k := range keys {
		h, ok := javaHashCode(k)
		bucket := 0
		if ok {
			h ^= int32(uint32(h) >> 16)
			bucket = int(h) & (table - 1)
		}
		es[i] = entry{bucket, k, JavaString(k)}
	}
	slices.SortFunc(es, func(x, y entry) int {
		if x.bucket != y.bucket {
			return x.bucket - y.bucket
		}
		return strings.Compare(x.text, y.text)
	})
	b = append(b, '{')
	for i, e := range es {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, e.text...)
		b = append(b, '=')
		b = AppendJavaString(b, get(e.key))
	}
	return append(b, '}')
}

// javaHashCode is Java's hashCode for the key types Connect maps use.
func javaHashCode(k any) (int32, bool) {
	switch x := k.(type) {
	case nil:
		return 0, true
	case string:
		var h int32
		for _, r := range x {
			if r >= 0x10000 {
				hi, lo := utf16Surrogates(r)
				h = 31*h + int32(hi)
				h = 31*h + int32(lo)
				continue
			}
			h = 31*h + int32(r)
		}
		return h, true
	case int8:
		return int32(x), true
	case int16:
		return int32(x), true
	case int32:
		return x, true
	case int64:
		return int32(x ^ int64(uint64(x)>>32)), true
	case bool:
		if x {
			return 1231, true
		}
		return 1237, true
	case float64:
		bits := math.Float64bits(x)
		if x != x {
			bits = 0x7ff8000000000000 // doubleToLongBits' canonical NaN
		}
		return int32(bits ^ bits>>32), true
	case float32:
		bits := math.Float32bits(x)
		if x != x {
			bits = 0x7fc00000
		}
		return int32(bits), true
	}
	return 0, false
}

func utf16Surrogates(r rune) (uint16, uint16) {
	r -= 0x10000
	return uint16(0xd800 + (r>>10)&0x3ff), uint16(0xdc00 + r&0x3ff)
}

// appendJavaDouble follows Double.toString (JDK 19+, shortest): plain
// notation for 1e-3 <= |d| < 1e7 with at least one fractional digit,
// otherwise d.dddE±n.
func appendJavaDouble(b []byte, d float64) []byte {
	return appendJavaFloating(b, d, 64)
}

func appendJavaFloat(b []byte, f float32) []byte {
	return appendJavaFloating(b, float64(f), 32)
}

func appendJavaFloating(b []byte, d float64, bits int) []byte {
	switch {
	case math.IsNaN(d):
		return append(b, "NaN"...)
	case math.IsInf(d, 1):
		return append(b, "Infinity"...)
	case math.IsInf(d, -1):
		return append(b, "-Infinity"...)
	case d == 0:
		if math.Signbit(d) {
			return append(b, "-0.0"...)
		}
		return append(b, "0.0"...)
	}
	var scratch [40]byte
	digits, exp := javaDigits(scratch[:0], d, bits) // d = 0.digits × 10^exp
	if d < 0 {
		b = append(b, '-')
	}
	abs := math.Abs(d)
	if abs >= 1e-3 && abs < 1e7 {
		switch {
		case exp <= 0:
			b = append(b, "0."...)
			for range -exp {
				b = append(b, '0')
			}
			return append(b, digits...)
		case exp >= len(digits):
			b = append(b, digits...)
			for range exp - len(digits) {
				b = append(b, '0')
			}
			return append(b, ".0"...)
		default:
			b = append(b, digits[:exp]...)
			b = append(b, '.')
			return append(b, digits[exp:]...)
		}
	}
	b = append(b, digits[0], '.')
	if len(digits) > 1 {
		b = append(b, digits[1:]...)
	} else {
		b = append(b, '0')
	}
	b = append(b, 'E')
	return strconv.AppendInt(b, int64(exp-1), 10)
}

// javaDigits returns the significant digits Java prints for d (appended
// to buf) and the decimal exponent (d = 0.digits × 10^exp). Java picks
// the shortest decimal that rounds to d, except that when one digit
// suffices it may print two if a two-digit decimal is closer
// (Double.MIN_VALUE prints 4.9E-324, not 5E-324).
func javaDigits(buf []byte, d float64, bits int) ([]byte, int) {
	abs := math.Abs(d)
	s := strconv.AppendFloat(buf, abs, 'e', -1, bits)
	if e := bytes.IndexByte(s, 'e'); e == 1 { // one significant digit
		s2 := strconv.FormatFloat(abs, 'e', 1, bits)
		if s2[2] != '0' && roundTrips(s2, abs, bits) && closer(s2, string(s), abs, bits) {
			return splitExp([]byte(s2))
		}
	}
	return splitExp(s)
}

// splitExp turns "1.2345e+06" into ("12345", 7), reusing s's memory.
func splitExp(s []byte) ([]byte, int) {
	e := bytes.IndexByte(s, 'e')
	n := 0
	neg := false
	for _, c := range s[e+1:] {
		switch {
		case c == '-':
			neg = true
		case c >= '0' && c <= '9':
			n = n*10 + int(c-'0')
		}
	}
	if neg {
		n = -n
	}
	digits := s[:e]
	if len(digits) > 1 && digits[1] == '.' {
		digits = append(digits[:1], digits[2:]...)
	}
	for len(digits) > 1 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
	}
	return digits, n + 1
}

func roundTrips(s string, d float64, bits int) bool {
	f, err := strconv.ParseFloat(s, bits)
	return err == nil && f == d
}

// closer reports whether decimal a is strictly closer to d than b.
func closer(a, b string, d float64, bits int) bool {
	x := new(big.Rat)
	if bits == 32 {
		x.SetFloat64(float64(float32(d)))
	} else {
		x.SetFloat64(d)
	}
	ra, _ := new(big.Rat).SetString(a)
	rb, _ := new(big.Rat).SetString(b)
	da := new(big.Rat).Abs(ra.Sub(ra, x))
	db := new(big.Rat).Abs(rb.Sub(rb, x))
	return da.Cmp(db) < 0
}

// appendBigDecimal follows BigDecimal.toString: plain when the scale is
// not negative and the adjusted exponent is at least -6, scientific
// (1.5E+3, 1.23E-7) otherwise.
func appendBigDecimal(b []byte, d connect.Decimal) []byte {
	if d.Unscaled == nil {
		return append(b, '0')
	}
	digits := new(big.Int).Abs(d.Unscaled).String()
	if d.Unscaled.Sign() < 0 {
		b = append(b, '-')
	}
	scale := int64(d.Scale)
	adjusted := -scale + int64(len(digits)-1)
	if scale == 0 {
		return append(b, digits...)
	}
	if scale > 0 && adjusted >= -6 {
		point := int64(len(digits)) - scale
		if point <= 0 {
			b = append(b, "0."...)
			for range -point {
				b = append(b, '0')
			}
			return append(b, digits...)
		}
		b = append(b, digits[:point]...)
		b = append(b, '.')
		return append(b, digits[point:]...)
	}
	b = append(b, digits[0])
	if len(digits) > 1 {
		b = append(b, '.')
		b = append(b, digits[1:]...)
	}
	b = append(b, 'E')
	if adjusted >= 0 {
		b = append(b, '+')
	}
	return strconv.AppendInt(b, adjusted, 10)
}
