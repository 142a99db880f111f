package avsc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Object is a JSON object whose member order is kept: Avro's Java
// library keeps schema properties in the order they were written, and
// the canonical string the registry stores and serves depends on it.
type Object []Member

// Member is one name/value pair of an Object.
type Member struct {
	Key   string
	Value any
}

// Get returns the value of key and whether it is present.
func (o Object) Get(key string) (any, bool) {
	for _, m := range o {
		if m.Key == key {
			return m.Value, true
		}
	}
	return nil, false
}

// With returns o with key set to v: replaced in place when present,
// appended otherwise (Java's JsonProperties.addProp keeps the first
// position).
func (o Object) With(key string, v any) Object {
	for i := range o {
		if o[i].Key == key {
			out := append(Object(nil), o...)
			out[i].Value = v
			return out
		}
	}
	return append(append(Object(nil), o...), Member{key, v})
}

// ParseJSON decodes JSON keeping object member order. Values are nil,
// bool, json.Number, string, []any or Object.
func ParseJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return v, nil
}

// maxDepth bounds nesting so hostile input cannot exhaust the stack.
const maxDepth = 1000

func decodeValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxDepth {
		return nil, errors.New("JSON nested too deeply")
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			obj := Object{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object key is %v", kt)
				}
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				// Jackson keeps the last of duplicate keys.
				obj = obj.With(key, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return obj, nil
		case '[':
			arr := []any{}
			for dec.More() {
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return arr, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return tok, nil
	}
}

// AppendJSON appends v as compact JSON the way Jackson writes it: no
// spaces, non-ASCII kept as UTF-8, integral numbers as written,
// fractional ones as Java's Double.toString.
func AppendJSON(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, x)
	case json.Number:
		return appendNumber(b, string(x))
	case string:
		return appendString(b, x)
	case int:
		return strconv.AppendInt(b, int64(x), 10)
	case int32:
		return strconv.AppendInt(b, int64(x), 10)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case float32:
		return append(b, javaDouble(float64(x))...)
	case float64:
		return append(b, javaDouble(x)...)
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendJSON(b, e)
		}
		return append(b, ']')
	case Object:
		b = append(b, '{')
		for i, m := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, m.Key)
			b = append(b, ':')
			b = AppendJSON(b, m.Value)
		}
		return append(b, '}')
	}
	panic(fmt.Sprintf("avsc: cannot encode %T as JSON", v))
}

func appendNumber(b []byte, s string) []byte {
	if !strings.ContainsAny(s, ".eE") {
		return append(b, s...)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return append(b, s...)
	}
	return append(b, javaDouble(f)...)
}

// javaDouble formats f as Java's Double.toString: plain decimal with at
// least one fractional digit for 1e-3 <= |f| < 1e7, otherwise
// d.dddE±n.
func javaDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	abs := math.Abs(f)
	if abs >= 1e-3 && abs < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±xx
	mant, exp, _ := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}

func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for _, r := range s {
		switch r {
		case '"':
			b = append(b, '\\', '"')
		case '\\':
			b = append(b, '\\', '\\')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		default:
			if r < 0x20 {
				b = fmt.Appendf(b, "\\u%04X", r)
			} else {
				b = append(b, string(r)...)
			}
		}
	}
	return append(b, '"')
}
