package header

import (
	"errors"
	"math"
	"math/big"
	"time"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/converters/internal/jvm"
)

// The schemas parsing infers, as Kafka's constants.
var (
	dateSchema      = connect.DateSchema().Build()
	timeSchema      = connect.TimeSchema().Build()
	timestampSchema = connect.TimestampSchema().Build()
)

func timeOf(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// schemaMerger is Kafka's Values.SchemaMerger: the common schema of an
// array's elements (or a map's keys or values), widening numbers, or
// none once two are incompatible.
type schemaMerger struct {
	common       *connect.Schema
	incompatible bool
}

func (m *schemaMerger) has() bool { return m.common != nil }

func (m *schemaMerger) merge(p *parsed) {
	if p == nil || p.schema == nil || m.incompatible {
		return
	}
	if m.common == nil {
		m.common = p.schema
		return
	}
	m.common = mergeSchemas(m.common, p.schema)
	m.incompatible = m.common == nil
}

func isInt(t connect.Type) bool {
	return t == connect.Int8 || t == connect.Int16 || t == connect.Int32 || t == connect.Int64
}

// rank orders the numeric types by width.
func rank(t connect.Type) int {
	switch t {
	case connect.Int8:
		return 1
	case connect.Int16:
		return 2
	case connect.Int32:
		return 3
	case connect.Int64:
		return 4
	case connect.Float32:
		return 5
	case connect.Float64:
		return 6
	}
	return 0
}

func mergeSchemas(prev, next *connect.Schema) *connect.Schema {
	if prev.Type != next.Type {
		rp, rn := rank(prev.Type), rank(next.Type)
		if rp == 0 || rn == 0 {
			return nil
		}
		// Integers widen to the wider integer or to any float; floats
		// absorb integers; FLOAT32 widens to FLOAT64.
		if rn > rp {
			return next
		}
		return prev
	}
	if prev.Optional == next.Optional {
		if prev.Optional {
			return prev
		}
		return next
	}
	if !prev.Equal(next) {
		return nil
	}
	return prev
}

// convertTo is Kafka's Values.convertTo(toSchema, null, value), used to
// align parsed elements with their common schema.
func convertTo(to *connect.Schema, v any) (any, error) {
	if v == nil {
		if to.Optional {
			return nil, nil
		}
		return nil, errParse
	}
	switch to.Type {
	case connect.Bytes:
		if to.Name == connect.DecimalName {
			switch x := v.(type) {
			case connect.Decimal:
				return x, nil
			case []byte:
				return connect.DecimalFromBytes(to, x)
			case string:
				d, ok := parseBigDecimal(x)
				if !ok {
					return nil, errParse
				}
				return d.decimal(), nil
			}
			if f, ok := asFloat(v); ok {
				return decimalOfDouble(f)
			}
			return nil, errParse
		}
		if b, ok := v.([]byte); ok {
			return b, nil
		}
		return nil, errParse
	case connect.String:
		return FormatString(nil, v)
	case connect.Boolean:
		switch x := v.(type) {
		case bool:
			return x, nil
		case string:
			if _, pv, err := ParseString(x); err == nil {
				if b, ok := pv.(bool); ok {
					return b, nil
				}
			}
		}
		n, err := asLong(v)
		return n != 0, err
	case connect.Int8:
		if x, ok := v.(int8); ok {
			return x, nil
		}
		n, err := asLong(v)
		return int8(n), err
	case connect.Int16:
		if x, ok := v.(int16); ok {
			return x, nil
		}
		n, err := asLong(v)
		return int16(n), err
	case connect.Int32:
		switch to.Name {
		case connect.DateName:
			return toLogical(v, func(n int64) (any, error) { return connect.DaysToDate(int32(n)), nil })
		case connect.TimeName:
			return toLogical(v, func(n int64) (any, error) {
				if int32(n) < 0 || int32(n) > msPerDay {
					return nil, errParse
				}
				return timeOf(int64(int32(n))), nil
			})
		}
		if x, ok := v.(int32); ok {
			return x, nil
		}
		n, err := asLong(v)
		return int32(n), err
	case connect.Int64:
		if to.Name == connect.TimestampName {
			return toLogical(v, func(n int64) (any, error) { return timeOf(n), nil })
		}
		if x, ok := v.(int64); ok {
			return x, nil
		}
		return asLong(v)
	case connect.Float32:
		if x, ok := v.(float32); ok {
			return x, nil
		}
		f, err := asDouble(v)
		return float32(f), err
	case connect.Float64:
		if x, ok := v.(float64); ok {
			return x, nil
		}
		return asDouble(v)
	case connect.Array:
		if s, ok := v.(string); ok {
			_, pv, err := ParseString(s)
			if err != nil {
				return nil, err
			}
			v = pv
		}
		if l, ok := v.([]any); ok {
			return l, nil
		}
		return nil, errParse
	case connect.Map:
		if s, ok := v.(string); ok {
			_, pv, err := ParseString(s)
			if err != nil {
				return nil, err
			}
			v = pv
		}
		switch v.(type) {
		case map[string]any, map[any]any:
			return v, nil
		}
		return nil, errParse
	}
	return nil, errParse
}

// toLogical converts to a Date, Time or Timestamp: dates stay dates,
// numbers become the logical type's value.
func toLogical(v any, fromNumber func(int64) (any, error)) (any, error) {
	if s, ok := v.(string); ok {
		_, pv, err := ParseString(s)
		if err != nil {
			return nil, err
		}
		v = pv
	}
	if t, ok := v.(time.Time); ok {
		return t, nil
	}
	n, err := asLong(v)
	if err != nil {
		return nil, err
	}
	return fromNumber(n)
}

// asLong is Values.asLong without a schema: Number.longValue().
func asLong(v any) (int64, error) {
	switch x := v.(type) {
	case int8:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case int64:
		return x, nil
	case float32:
		return javaLong(float64(x)), nil
	case float64:
		return javaLong(x), nil
	case connect.Decimal:
		return decimalLong(x), nil
	case string:
		d, ok := parseBigDecimal(x)
		if !ok {
			return 0, errParse
		}
		return decimalLong(d.decimal()), nil
	}
	return 0, errParse
}

func asDouble(v any) (float64, error) {
	if f, ok := asFloat(v); ok {
		return f, nil
	}
	if s, ok := v.(string); ok {
		d, ok := parseBigDecimal(s)
		if !ok {
			return 0, errParse
		}
		return d.decimal().Float64(), nil
	}
	n, err := asLong(v)
	return float64(n), err
}

func asFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int8:
		return float64(x), true
	case int16:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case float32:
		return float64(x), true
	case float64:
		return x, true
	case connect.Decimal:
		return x.Float64(), true
	}
	return 0, false
}

// errFatal is an exception Kafka's parser does not catch (it reaches
// SimpleHeaderConverter, which then keeps the raw bytes).
var errFatal = errors.New("unconvertible")

// decimalOfDouble is BigDecimal.valueOf(double).
func decimalOfDouble(f float64) (any, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, errFatal
	}
	d, ok := parseBigDecimal(jvm.Double(f))
	if !ok {
		return nil, errFatal
	}
	return d.decimal(), nil
}

// javaLong is Java's (long) cast of a double: truncation, saturating,
// NaN to 0.
func javaLong(f float64) int64 {
	switch {
	case f != f:
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// decimalLong is BigDecimal.longValue(): the integer part's low 64 bits.
func decimalLong(d connect.Decimal) int64 {
	n := new(big.Int).Set(d.Unscaled)
	if d.Scale > 0 {
		n.Quo(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.Scale)), nil))
	} else if d.Scale < 0 {
		if d.Scale < -64 { // 10^64 has 64 factors of 2: no low bits left
			return 0
		}
		n.Mul(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-d.Scale)), nil))
	}
	return int64(new(big.Int).And(n, new(big.Int).SetUint64(math.MaxUint64)).Uint64())
}
