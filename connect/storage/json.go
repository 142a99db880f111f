package storage

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
)

// EncodeJSON writes v as Kafka's JsonConverter does with schemas disabled,
// with object keys sorted so equal values give equal bytes (Kafka's
// HashMap order is arbitrary; readers must not depend on it). Integers of
// any width become JSON integers, floats always carry a fraction or
// exponent so they read back as floats, []byte becomes base64 as Jackson
// writes binary nodes.
func EncodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := appendJSON(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func appendJSON(b *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case string:
		appendString(b, x)
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case int:
		b.WriteString(strconv.FormatInt(int64(x), 10))
	case int8:
		b.WriteString(strconv.FormatInt(int64(x), 10))
	case int16:
		b.WriteString(strconv.FormatInt(int64(x), 10))
	case int32:
		b.WriteString(strconv.FormatInt(int64(x), 10))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case uint8:
		b.WriteString(strconv.FormatUint(uint64(x), 10))
	case uint16:
		b.WriteString(strconv.FormatUint(uint64(x), 10))
	case uint32:
		b.WriteString(strconv.FormatUint(uint64(x), 10))
	case uint64:
		b.WriteString(strconv.FormatUint(x, 10))
	case uint:
		b.WriteString(strconv.FormatUint(uint64(x), 10))
	case float32:
		return appendFloat(b, float64(x), 32)
	case float64:
		return appendFloat(b, x, 64)
	case []byte:
		appendString(b, base64.StdEncoding.EncodeToString(x))
	case json.Number:
		b.WriteString(x.String())
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			appendString(b, k)
			b.WriteByte(':')
			if err := appendJSON(b, x[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case map[string]string:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			appendString(b, k)
			b.WriteByte(':')
			appendString(b, x[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := appendJSON(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	default:
		// Other slices and maps (e.g. []string, map[string]int64) go
		// through reflection into the cases above.
		rv := reflect.ValueOf(v)
		switch rv.Kind() {
		case reflect.Slice, reflect.Array:
			items := make([]any, rv.Len())
			for i := range items {
				items[i] = rv.Index(i).Interface()
			}
			return appendJSON(b, items)
		case reflect.Map:
			if rv.Type().Key().Kind() != reflect.String {
				return fmt.Errorf("cannot write a map keyed by %s as JSON", rv.Type().Key())
			}
			m := make(map[string]any, rv.Len())
			for it := rv.MapRange(); it.Next(); {
				m[it.Key().String()] = it.Value().Interface()
			}
			return appendJSON(b, m)
		}
		return fmt.Errorf("cannot write %T as JSON", v)
	}
	return nil
}

func appendString(b *bytes.Buffer, s string) {
	// encoding/json escapes <, > and & for HTML; Jackson does not, and
	// the bytes should be Kafka's.
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	b.Truncate(b.Len() - 1)
}

func appendFloat(b *bytes.Buffer, f float64, bits int) error {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		// Jackson writes "NaN"/"Infinity" as strings when quoting
		// non-numeric numbers; plain JSON cannot carry them.
		return fmt.Errorf("cannot write %v as JSON", f)
	}
	s := strconv.FormatFloat(f, 'g', -1, bits)
	if !bytes.ContainsAny([]byte(s), ".eE") {
		s += ".0"
	}
	b.WriteString(s)
	return nil
}

// marshalJSON encodes a record value struct without HTML escaping (Jackson
// writes "<" as is, and the bytes should be Kafka's). Values here are
// plain structs of strings and numbers, which always encode.
func marshalJSON(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("storage: encode %T: %v", v, err))
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'})
}

// DecodeJSON parses a JSON document the way JsonConverter does with
// schemas disabled: objects become map[string]any, arrays []any,
// integers int64 (floats when they overflow), other numbers float64.
func DecodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("unexpected data after the JSON value")
	}
	return normalizeNumbers(v), nil
}

func normalizeNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		s := x.String()
		if !bytes.ContainsAny([]byte(s), ".eE") {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				return n
			}
		}
		f, _ := strconv.ParseFloat(s, 64)
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalizeNumbers(e)
		}
	}
	return v
}

// PartitionKey is the canonical JSON of a source partition: the key under
// which OffsetReader.Offsets returns its offset.
func PartitionKey(partition map[string]any) string {
	b, err := EncodeJSON(partition)
	if err != nil {
		return fmt.Sprintf("%v", partition)
	}
	return string(b)
}
