package sink

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/fjordhq/fjord/connect"
)

// A renderer writes one non-null Connect value as PostgreSQL's text input
// for its column (what COPY's text format and literals carry). Text is
// typed by the column, not the statement, so one renderer serves every
// compatible column type: a string goes into text, json, uuid or inet
// columns alike.
type renderer struct {
	fn func(dst []byte, v any) ([]byte, error)
	// escape: the text may hold characters COPY must escape (strings,
	// bytes, arrays); numbers and dates never do.
	escape bool
	// plain: the value is a Go string written as it is (the hot path
	// escapes it straight into the COPY buffer).
	plain bool
}

func typeError(want string, v any) error {
	return fmt.Errorf("expected a %s value, got %T", want, v)
}

// renderer returns the renderer of a field with schema sc going into a
// column of category cat (0 when unknown). Debezium's semantic types are
// written as dates and times only into date/time columns: a table that
// Confluent's sink created holds them as plain numbers.
func (s *settings) renderer(field string, sc *connect.Schema, cat byte) (renderer, error) {
	switch {
	case sc.Name == connect.DecimalName && sc.Type == connect.Bytes:
		return renderer{fn: func(dst []byte, v any) ([]byte, error) {
			d, ok := v.(connect.Decimal)
			if !ok {
				return dst, typeError("Decimal", v)
			}
			return append(dst, d.String()...), nil
		}}, nil
	case sc.Name == connect.DateName && sc.Type == connect.Int32:
		zone := s.dateZone
		return renderer{fn: func(dst []byte, v any) ([]byte, error) {
			t, ok := v.(time.Time)
			if !ok {
				return dst, typeError("Date", v)
			}
			dst, bc := appendDate(dst, t.In(zone))
			if bc {
				dst = append(dst, " BC"...)
			}
			return dst, nil
		}}, nil
	case sc.Name == connect.TimeName && sc.Type == connect.Int32:
		zone := s.zone
		return renderer{fn: func(dst []byte, v any) ([]byte, error) {
			t, ok := v.(time.Time)
			if !ok {
				return dst, typeError("Time", v)
			}
			t = t.In(zone)
			h, m, sec := t.Clock()
			return appendClock(dst, h, m, sec, t.Nanosecond()), nil
		}}, nil
	case sc.Name == connect.TimestampName && sc.Type == connect.Int64:
		zone := s.zone
		return renderer{fn: func(dst []byte, v any) ([]byte, error) {
			t, ok := v.(time.Time)
			if !ok {
				return dst, typeError("Timestamp", v)
			}
			return appendDateTime(dst, t.In(zone), true), nil
		}}, nil
	case isVariableScaleDecimal(sc):
		scaleF, valueF := sc.Field("scale"), sc.Field("value")
		return renderer{fn: func(dst []byte, v any) ([]byte, error) {
			st, ok := v.(*connect.Struct)
			if !ok {
				return dst, typeError("VariableScaleDecimal", v)
			}
			scale, _ := st.GetField(scaleF).(int32)
			b, _ := st.GetField(valueF).([]byte)
			d, err := connect.DecimalFromBytes(connect.DecimalSchema(scale).Build(), b)
			if err != nil {
				return dst, err
			}
			return append(dst, d.String()...), nil
		}}, nil
	}
	if cat == catDateTime {
		if r, ok := debeziumTimeRenderer(sc); ok {
			return r, nil
		}
	}
	if cat == catTimespan && sc.Name == dbzMicroDuration && sc.Type == connect.Int64 {
		return renderer{fn: func(dst []byte, v any) ([]byte, error) {
			n, ok := v.(int64)
			if !ok {
				return dst, typeError("INT64", v)
			}
			dst = strconv.AppendInt(dst, n, 10)
			return append(dst, " microseconds"...), nil
		}}, nil
	}
	if s.timestampFields[field] && (sc.Type == connect.Int64 || sc.Type == connect.String) {
		return s.epochRenderer(sc.Type), nil
	}
	switch sc.Type {
	case connect.Int8:
		return intRenderer(func(v any) (int64, bool) { n, ok := v.(int8); return int64(n), ok }, "INT8"), nil
	case connect.Int16:
		return intRenderer(func(v any) (int64, bool) { n, ok := v.(int16); return int64(n), ok }, "INT16"), nil
	case connect.Int32:
		return intRenderer(func(v any) (int64, bool) { n, ok := v.(int32); return int64(n), ok }, "INT32"), nil
	case connect.Int64:
		return intRenderer(func(v any) (int64, bool) { n, ok := v.(int64); return n, ok }, "INT64"), nil
	case connect.Float32:
		return renderer{fn: func(dst []byte, v any) ([]byte, error) {
			f, ok := v.(float32)
			if !ok {
				return dst, typeError("FLOAT32", v)
			}
			return appendFloat(dst, float64(f), 32), nil
		}}, nil
	case connect.Float64:
		return renderer{fn: func(dst []byte, v any) ([]byte, error) {
			f, ok := v.(float64)
			if !ok {
				return dst, typeError("FLOAT64", v)
			}
			return appendFloat(dst, f, 64), nil
		}}, nil
	case connect.Boolean:
		return renderer{fn: func(dst []byte, v any) ([]byte, error) {
			b, ok := v.(bool)
			if !ok {
				return dst, typeError("BOOLEAN", v)
			}
			if b {
				return append(dst, 't'), nil
			}
			return append(dst, 'f'), nil
		}}, nil
	case connect.String:
		return renderer{escape: true, plain: true, fn: func(dst []byte, v any) ([]byte, error) {
			str, ok := v.(string)
			if !ok {
				return dst, typeError("STRING", v)
			}
			return append(dst, str...), nil
		}}, nil
	case connect.Bytes:
		return renderer{escape: true, fn: func(dst []byte, v any) ([]byte, error) {
			b, ok := v.([]byte)
			if !ok {
				return dst, typeError("BYTES", v)
			}
			dst = append(dst, `\x`...)
			return hex.AppendEncode(dst, b), nil
		}}, nil
	case connect.Array:
		elemCat := byte(0)
		if t, err := s.columnType(field, sc.ValueSchema); err == nil {
			elemCat = t.cat
		}
		elem, err := s.renderer(field, sc.ValueSchema, elemCat)
		if err != nil {
			return renderer{}, err
		}
		nested := sc.ValueSchema.Type == connect.Array
		return renderer{escape: true, fn: func(dst []byte, v any) ([]byte, error) {
			items, ok := v.([]any)
			if !ok {
				return dst, typeError("ARRAY", v)
			}
			return appendArray(dst, items, elem, nested)
		}}, nil
	}
	return renderer{}, noMapping(sc)
}

func intRenderer(get func(any) (int64, bool), want string) renderer {
	return renderer{fn: func(dst []byte, v any) ([]byte, error) {
		n, ok := get(v)
		if !ok {
			return dst, typeError(want, v)
		}
		return strconv.AppendInt(dst, n, 10), nil
	}}
}

func appendFloat(dst []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	}
	return strconv.AppendFloat(dst, f, 'g', -1, bits)
}

// debeziumTimeRenderer writes Debezium's numeric dates and times as
// dates and times. Debezium's Timestamp types are wall clocks (no zone):
// they are written without an offset.
func debeziumTimeRenderer(sc *connect.Schema) (renderer, bool) {
	unit := time.Duration(0)
	switch {
	case sc.Name == dbzDate && sc.Type == connect.Int32:
		return renderer{fn: func(dst []byte, v any) ([]byte, error) {
			n, ok := v.(int32)
			if !ok {
				return dst, typeError("INT32", v)
			}
			dst, bc := appendDate(dst, connect.DaysToDate(n))
			if bc {
				dst = append(dst, " BC"...)
			}
			return dst, nil
		}}, true
	case sc.Name == dbzTime && sc.Type == connect.Int32:
		return renderer{fn: func(dst []byte, v any) ([]byte, error) {
			n, ok := v.(int32)
			if !ok {
				return dst, typeError("INT32", v)
			}
			return appendTimeOfDay(dst, time.Duration(n)*time.Millisecond), nil
		}}, true
	case sc.Name == dbzMicroTime && sc.Type == connect.Int64:
		unit = time.Microsecond
	case sc.Name == dbzNanoTime && sc.Type == connect.Int64:
		unit = time.Nanosecond
	}
	if unit != 0 {
		return renderer{fn: func(dst []byte, v any) ([]byte, error) {
			n, ok := v.(int64)
			if !ok {
				return dst, typeError("INT64", v)
			}
			return appendTimeOfDay(dst, time.Duration(n)*unit), nil
		}}, true
	}
	var toTime func(int64) time.Time
	switch {
	case sc.Name == dbzTimestamp && sc.Type == connect.Int64:
		toTime = time.UnixMilli
	case sc.Name == dbzMicroTimestamp && sc.Type == connect.Int64:
		toTime = time.UnixMicro
	case sc.Name == dbzNanoTimestamp && sc.Type == connect.Int64:
		toTime = func(n int64) time.Time { return time.Unix(0, n) }
	default:
		return renderer{}, false
	}
	return renderer{fn: func(dst []byte, v any) ([]byte, error) {
		n, ok := v.(int64)
		if !ok {
			return dst, typeError("INT64", v)
		}
		return appendDateTime(dst, toTime(n).UTC(), false), nil
	}}, true
}

// epochRenderer writes timestamp.fields.list values: epoch microseconds
// or nanoseconds, as INT64 or as a decimal string.
func (s *settings) epochRenderer(t connect.Type) renderer {
	zone, nanos := s.zone, s.timestampNanos
	return renderer{fn: func(dst []byte, v any) ([]byte, error) {
		var n *big.Int
		switch x := v.(type) {
		case int64:
			n = big.NewInt(x)
		case string:
			var ok bool
			if n, ok = new(big.Int).SetString(strings.TrimSpace(x), 10); !ok {
				return dst, fmt.Errorf("timestamp field value %q is not a number", x)
			}
		default:
			return dst, typeError(t.String(), v)
		}
		per := big.NewInt(1_000_000)
		if nanos {
			per = big.NewInt(1_000_000_000)
		}
		sec, rem := new(big.Int).DivMod(n, per, new(big.Int))
		if !sec.IsInt64() {
			return dst, fmt.Errorf("timestamp field value %s is out of range", n)
		}
		frac := rem.Int64()
		if !nanos {
			frac *= 1000
		}
		return appendDateTime(dst, time.Unix(sec.Int64(), frac).In(zone), true), nil
	}}
}

// appendArray writes a PostgreSQL array literal: elements quoted when
// they need it, NULL for nulls, nested arrays as they are.
func appendArray(dst []byte, items []any, elem renderer, nested bool) ([]byte, error) {
	dst = append(dst, '{')
	var scratch []byte
	for i, it := range items {
		if i > 0 {
			dst = append(dst, ',')
		}
		if it == nil {
			dst = append(dst, "NULL"...)
			continue
		}
		var err error
		if scratch, err = elem.fn(scratch[:0], it); err != nil {
			return dst, err
		}
		if nested || !needsArrayQuotes(scratch) {
			dst = append(dst, scratch...)
			continue
		}
		dst = append(dst, '"')
		for _, c := range scratch {
			if c == '"' || c == '\\' {
				dst = append(dst, '\\')
			}
			dst = append(dst, c)
		}
		dst = append(dst, '"')
	}
	return append(dst, '}'), nil
}

func needsArrayQuotes(b []byte) bool {
	if len(b) == 0 || (len(b) == 4 && strings.EqualFold(string(b), "null")) {
		return true
	}
	for _, c := range b {
		switch c {
		case '{', '}', ',', '"', '\\', ' ', '\t', '\n', '\r', '\v', '\f':
			return true
		}
	}
	return false
}

var errNUL = errors.New("PostgreSQL text cannot hold the NUL character (0x00)")

// appendCopyString is appendCopyText for a string, without copying it.
func appendCopyString(dst []byte, s string) ([]byte, error) {
	return appendCopyText(dst, unsafe.Slice(unsafe.StringData(s), len(s)))
}

// appendCopyText escapes text for COPY's text format; text must be valid
// UTF-8 without NUL, as PostgreSQL would refuse the whole COPY.
func appendCopyText(dst, text []byte) ([]byte, error) {
	start := 0
	high := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		var esc byte
		switch c {
		case '\\':
			esc = '\\'
		case '\n':
			esc = 'n'
		case '\r':
			esc = 'r'
		case '\t':
			esc = 't'
		case 0:
			return dst, errNUL
		default:
			if c >= utf8.RuneSelf {
				high = true
			}
			continue
		}
		dst = append(dst, text[start:i]...)
		dst = append(dst, '\\', esc)
		start = i + 1
	}
	if high && !utf8.Valid(text) {
		return dst, errors.New("text is not valid UTF-8")
	}
	return append(dst, text[start:]...), nil
}

// sqlLiteral renders v as a quoted SQL literal (for DEFAULT clauses).
func sqlLiteral(r renderer, v any) (string, error) {
	b, err := r.fn(nil, v)
	if err != nil {
		return "", err
	}
	if strings.IndexByte(string(b), 0) >= 0 {
		return "", errNUL
	}
	return "'" + strings.ReplaceAll(string(b), "'", "''") + "'", nil
}
