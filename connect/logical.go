package connect

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Logical type names, as Kafka's.
const (
	DecimalName   = "org.apache.kafka.connect.data.Decimal"
	DateName      = "org.apache.kafka.connect.data.Date"
	TimeName      = "org.apache.kafka.connect.data.Time"
	TimestampName = "org.apache.kafka.connect.data.Timestamp"
	// DecimalScaleParam is the Decimal schema parameter holding the scale.
	DecimalScaleParam = "scale"
)

type logicalType struct {
	base    Type
	accepts func(v any) bool
}

var logicalTypes = map[string]logicalType{
	DecimalName:   {Bytes, func(v any) bool { _, ok := v.(Decimal); return ok }},
	DateName:      {Int32, isTime},
	TimeName:      {Int32, isTime},
	TimestampName: {Int64, isTime},
}

func isTime(v any) bool { _, ok := v.(time.Time); return ok }

// Decimal is an arbitrary-precision decimal: Unscaled × 10^-Scale, Java's
// BigDecimal.
type Decimal struct {
	Unscaled *big.Int
	Scale    int32
}

// NewDecimal returns unscaled × 10^-scale.
func NewDecimal(unscaled int64, scale int32) Decimal {
	return Decimal{Unscaled: big.NewInt(unscaled), Scale: scale}
}

// ParseDecimal parses a decimal string as Java's new BigDecimal(s):
// "-12.345" has scale 3, "1.5E+3" scale -2 (unscaled 15).
func ParseDecimal(s string) (Decimal, error) {
	mant, exp := s, int64(0)
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.ParseInt(s[i+1:], 10, 32)
		if err != nil {
			return Decimal{}, fmt.Errorf("invalid decimal %q", s)
		}
		mant, exp = s[:i], e
	}
	scale := int64(0)
	digits := mant
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		scale = int64(len(mant) - i - 1)
		digits = mant[:i] + mant[i+1:]
	}
	n, ok := new(big.Int).SetString(digits, 10)
	if !ok || digits == "" || digits == "-" || digits == "+" {
		return Decimal{}, fmt.Errorf("invalid decimal %q", s)
	}
	scale -= exp
	if scale > math.MaxInt32 || scale < math.MinInt32 {
		return Decimal{}, fmt.Errorf("decimal %q out of range", s)
	}
	return Decimal{Unscaled: n, Scale: int32(scale)}, nil
}

// String formats as Java's BigDecimal.toPlainString.
func (d Decimal) String() string {
	if d.Unscaled == nil {
		return "0"
	}
	s := new(big.Int).Abs(d.Unscaled).String()
	neg := d.Unscaled.Sign() < 0
	if d.Scale > 0 {
		for len(s) <= int(d.Scale) {
			s = "0" + s
		}
		s = s[:len(s)-int(d.Scale)] + "." + s[len(s)-int(d.Scale):]
	} else if d.Scale < 0 {
		for i := int32(0); i < -d.Scale; i++ {
			s += "0"
		}
	}
	if neg {
		return "-" + s
	}
	return s
}

// Float64 returns the nearest float64.
func (d Decimal) Float64() float64 {
	f, _ := new(big.Rat).SetFrac(d.Unscaled, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.Scale)), nil)).Float64()
	return f
}

// DecimalSchema builds a Decimal schema with the given scale.
func DecimalSchema(scale int32) *SchemaBuilder {
	return NewSchema(Bytes).Name(DecimalName).Version(1).Parameter(DecimalScaleParam, strconv.Itoa(int(scale)))
}

// DecimalScale returns a Decimal schema's scale.
func DecimalScale(s *Schema) (int32, error) {
	v, ok := s.Parameters[DecimalScaleParam]
	if !ok {
		return 0, dataErrorf("Invalid Decimal schema: scale parameter not found.")
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0, dataErrorf("Invalid scale parameter found in Decimal schema: %s", v)
	}
	return int32(n), nil
}

// DecimalToBytes encodes d as Kafka does: the unscaled value's big-endian
// two's-complement bytes (Java's BigInteger.toByteArray). The scale must
// match the schema's.
func DecimalToBytes(s *Schema, d Decimal) ([]byte, error) {
	scale, err := DecimalScale(s)
	if err != nil {
		return nil, err
	}
	if d.Scale != scale {
		return nil, dataErrorf("Decimal value has mismatching scale for given Decimal schema")
	}
	return TwosComplement(d.Unscaled), nil
}

// DecimalFromBytes decodes the unscaled two's-complement bytes.
func DecimalFromBytes(s *Schema, b []byte) (Decimal, error) {
	scale, err := DecimalScale(s)
	if err != nil {
		return Decimal{}, err
	}
	return Decimal{Unscaled: fromTwosComplement(b), Scale: scale}, nil
}

// TwosComplement is n as Java's BigInteger.toByteArray writes it: minimal
// big-endian two's complement (Decimal's bytes, Debezium's
// VariableScaleDecimal value).
func TwosComplement(n *big.Int) []byte {
	if n.Sign() >= 0 {
		b := n.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// -n = ~(n-1): encode |n|-1 and invert, with a sign byte if needed.
	m := new(big.Int).Sub(new(big.Int).Neg(n), big.NewInt(1))
	b := m.Bytes()
	if len(b) == 0 || b[0]&0x80 != 0 {
		b = append([]byte{0}, b...)
	}
	for i := range b {
		b[i] = ^b[i]
	}
	return b
}

func fromTwosComplement(b []byte) *big.Int {
	n := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(len(b)*8)))
	}
	return n
}

// DateSchema, TimeSchema and TimestampSchema build the logical schemas.
func DateSchema() *SchemaBuilder      { return NewSchema(Int32).Name(DateName).Version(1) }
func TimeSchema() *SchemaBuilder      { return NewSchema(Int32).Name(TimeName).Version(1) }
func TimestampSchema() *SchemaBuilder { return NewSchema(Int64).Name(TimestampName).Version(1) }

const msPerDay = 24 * 60 * 60 * 1000

// DateToDays converts a Date value (UTC midnight) to days since the epoch.
func DateToDays(t time.Time) (int32, error) {
	ms := t.UnixMilli()
	if ms%msPerDay != 0 {
		return 0, dataErrorf("Kafka Connect Date type should not have any time fields set to non-zero values.")
	}
	return int32(ms / msPerDay), nil
}

// DaysToDate converts days since the epoch to a Date value.
func DaysToDate(days int32) time.Time { return time.UnixMilli(int64(days) * msPerDay).UTC() }

// TimeToMillis converts a Time value (on 1970-01-01) to milliseconds of the day.
func TimeToMillis(t time.Time) (int32, error) {
	ms := t.UnixMilli()
	// Kafka's Time.fromLogical accepts a whole day (24:00:00, which
	// PostgreSQL's time type has): unixMillis > MILLIS_PER_DAY fails.
	if ms < 0 || ms > msPerDay {
		return 0, dataErrorf("Kafka Connect Time type should not have any date fields set to non-zero values.")
	}
	return int32(ms), nil
}

// MillisToTime converts milliseconds of the day to a Time value.
func MillisToTime(ms int32) time.Time { return time.UnixMilli(int64(ms)).UTC() }

// ValuesEqual compares Connect values deeply: bytes by content, decimals
// by value and scale, times by instant, structs by schema and values.
func ValuesEqual(a, b any) bool {
	switch x := a.(type) {
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	case Decimal:
		y, ok := b.(Decimal)
		return ok && x.Scale == y.Scale && x.Unscaled.Cmp(y.Unscaled) == 0
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Equal(y)
	case *Struct:
		y, ok := b.(*Struct)
		return ok && x.Equal(y)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !ValuesEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !ValuesEqual(v, w) {
				return false
			}
		}
		return true
	case map[any]any:
		y, ok := b.(map[any]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !ValuesEqual(v, w) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}
