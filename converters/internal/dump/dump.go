// Package dump renders Connect schemas and values as canonical text, the
// same text converters/testdata/kafkagen/Dump.java renders for Kafka's
// values, so golden tests compare "what Kafka decoded" with "what we
// decoded" as strings.
package dump

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/converters/internal/jvm"
)

// Quote quotes s as Dump.java does: UTF-16 code units outside printable
// ASCII as \uXXXX.
func Quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, u := range utf16.Encode([]rune(s)) {
		switch {
		case u == '"' || u == '\\':
			b.WriteByte('\\')
			b.WriteByte(byte(u))
		case u < 0x20 || u > 0x7e:
			fmt.Fprintf(&b, "\\u%04x", u)
		default:
			b.WriteByte(byte(u))
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Value renders a Connect value.
func Value(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case int8:
		return "i8:" + strconv.Itoa(int(x))
	case int16:
		return "i16:" + strconv.Itoa(int(x))
	case int32:
		return "i32:" + strconv.Itoa(int(x))
	case int64:
		return "i64:" + strconv.FormatInt(x, 10)
	case float32:
		return "f32:" + jvm.Float(x)
	case float64:
		return "f64:" + jvm.Double(x)
	case bool:
		return "bool:" + strconv.FormatBool(x)
	case string:
		return "str:" + Quote(x)
	case []byte:
		return "bytes:" + base64.StdEncoding.EncodeToString(x)
	case connect.Decimal:
		return "dec:" + x.Unscaled.String() + "/" + strconv.Itoa(int(x.Scale))
	case time.Time:
		return "time:" + strconv.FormatInt(x.UnixMilli(), 10)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = Value(e)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case map[string]any:
		parts := make([]string, 0, len(x))
		for k, e := range x {
			parts = append(parts, Value(k)+"=>"+Value(e))
		}
		return "{" + strings.Join(sortJava(parts), ",") + "}"
	case map[any]any:
		parts := make([]string, 0, len(x))
		for k, e := range x {
			parts = append(parts, Value(k)+"=>"+Value(e))
		}
		return "{" + strings.Join(sortJava(parts), ",") + "}"
	case *connect.Struct:
		s := x.Schema()
		parts := make([]string, len(s.Fields))
		for i := range s.Fields {
			parts[i] = s.Fields[i].Name + "=" + Value(x.GetFieldWithoutDefault(&s.Fields[i]))
		}
		return "struct{" + strings.Join(parts, ",") + "}"
	}
	return fmt.Sprintf("?%T", v)
}

// sortJava sorts as Java's String.compareTo (UTF-16 code units); the
// dumps are ASCII, where that is byte order.
func sortJava(parts []string) []string {
	slices.Sort(parts)
	return parts
}

// Schema renders a schema.
func Schema(s *connect.Schema) string {
	if s == nil {
		return "null"
	}
	var a []string
	if s.Optional {
		a = append(a, "opt")
	}
	if s.Name != "" {
		a = append(a, "name="+Quote(s.Name))
	}
	if s.Version != nil {
		a = append(a, "ver="+strconv.Itoa(int(*s.Version)))
	}
	if s.Doc != "" {
		a = append(a, "doc="+Quote(s.Doc))
	}
	if s.Parameters != nil {
		var p []string
		for _, k := range s.ParameterKeys() {
			p = append(p, k+"="+Quote(s.Parameters[k]))
		}
		a = append(a, "params={"+strings.Join(p, ",")+"}")
	}
	if s.Default != nil {
		a = append(a, "default="+Value(s.Default))
	}
	switch s.Type {
	case connect.StructType:
		f := make([]string, len(s.Fields))
		for i := range s.Fields {
			f[i] = s.Fields[i].Name + ":" + Schema(s.Fields[i].Schema)
		}
		a = append(a, "fields=["+strings.Join(f, ",")+"]")
	case connect.Array:
		a = append(a, "value="+Schema(s.ValueSchema))
	case connect.Map:
		a = append(a, "key="+Schema(s.KeySchema))
		a = append(a, "value="+Schema(s.ValueSchema))
	}
	return s.Type.String() + "(" + strings.Join(a, ",") + ")"
}

var floatToken = regexp.MustCompile(`f(32|64):(-?(?:Infinity|NaN|[0-9.]+(?:E-?[0-9]+)?))`)

// Equal compares two dumps, reading floating point numbers by value:
// JDK 17's Float/Double.toString sometimes prints a digit more than the
// shortest form JDK 19+ (and this package) print, for the same number.
func Equal(want, got string) bool {
	if want == got {
		return true
	}
	canon := func(s string) string {
		return floatToken.ReplaceAllStringFunc(s, func(tok string) string {
			m := floatToken.FindStringSubmatch(tok)
			bits, _ := strconv.Atoi(m[1])
			f, err := strconv.ParseFloat(m[2], bits)
			if err != nil {
				return tok
			}
			return "f" + m[1] + ":" + strconv.FormatFloat(f, 'g', -1, bits)
		})
	}
	return canon(want) == canon(got)
}
