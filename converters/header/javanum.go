package header

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/fjordhq/fjord/connect"
)

// bigDecimal is a number parsed as Java's new BigDecimal(String):
// unscaled digits and a scale.
type bigDecimal struct {
	neg    bool
	digits string // ASCII digits, leading zeros kept
	scale  int64  // value = digits × 10^-scale
}

// parseBigDecimal accepts BigDecimal's grammar: an optional sign, digits
// (of any script) with at most one '.', at least one digit, an optional
// exponent (e or E, optional sign, digits).
func parseBigDecimal(s string) (bigDecimal, bool) {
	var d bigDecimal
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		d.neg = s[i] == '-'
		i++
	}
	var digits []byte
	frac := int64(0)
	seenDot := false
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == '.' {
			if seenDot {
				return d, false
			}
			seenDot = true
			i += n
			continue
		}
		v := javaDigit(r)
		if v < 0 {
			break
		}
		digits = append(digits, byte('0'+v))
		if seenDot {
			frac++
		}
		i += n
	}
	if len(digits) == 0 {
		return d, false
	}
	exp := int64(0)
	if i < len(s) {
		if s[i] != 'e' && s[i] != 'E' {
			return d, false
		}
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		if i >= len(s) {
			return d, false
		}
		for i < len(s) {
			r, n := utf8.DecodeRuneInString(s[i:])
			v := javaDigit(r)
			if v < 0 {
				return d, false
			}
			exp = exp*10 + int64(v)
			if exp > math.MaxInt32 {
				return d, false
			}
			i += n
		}
		if eneg {
			exp = -exp
		}
	}
	d.digits = string(digits)
	d.scale = frac - exp
	if d.scale > math.MaxInt32 || d.scale < math.MinInt32 {
		return d, false
	}
	return d, true
}

func (d bigDecimal) isZero() bool { return strings.Trim(d.digits, "0") == "" }

// text is a decimal string Go's parsers read.
func (d bigDecimal) text() string {
	var b strings.Builder
	if d.neg {
		b.WriteByte('-')
	}
	b.WriteString(d.digits)
	b.WriteString("e")
	b.WriteString(strconv.FormatInt(-d.scale, 10))
	return b.String()
}

func (d bigDecimal) decimal() connect.Decimal {
	n, _ := new(big.Int).SetString(d.digits, 10)
	if d.neg {
		n.Neg(n)
	}
	return connect.Decimal{Unscaled: n, Scale: int32(d.scale)}
}

// exactInteger is Values.parseAsExactDecimal: the value as an int64 when
// it is an integer within a long's range. It never materialises huge
// exponents, which would stall Java.
func (d bigDecimal) exactInteger() (int64, bool) {
	sig := strings.TrimLeft(d.digits, "0")
	if sig == "" {
		return 0, true
	}
	scale := d.scale
	if scale > 0 {
		// Integral only if the last scale digits are zeros.
		if int64(len(sig)) <= scale {
			return 0, false
		}
		tail := sig[int64(len(sig))-scale:]
		if strings.Trim(tail, "0") != "" {
			return 0, false
		}
		sig = sig[:int64(len(sig))-scale]
		scale = 0
	}
	if int64(len(sig))-scale > 19 {
		return 0, false
	}
	n, ok := new(big.Int).SetString(sig+strings.Repeat("0", int(-scale)), 10)
	if !ok {
		return 0, false
	}
	if d.neg {
		n.Neg(n)
	}
	if !n.IsInt64() {
		return 0, false
	}
	return n.Int64(), true
}

// parseNumber is Values.parseAsNumber: the smallest integer type that
// holds an integral value, else FLOAT32 when it stays finite and has a
// scale, else FLOAT64, else a Decimal.
func parseNumber(token string) (*connect.Schema, any, bool) {
	d, ok := parseBigDecimal(token)
	if !ok {
		return nil, nil, false
	}
	if v, ok := d.exactInteger(); ok {
		switch {
		case v == int64(int8(v)):
			return connect.Int8Schema, int8(v), true
		case v == int64(int16(v)):
			return connect.Int16Schema, int16(v), true
		case v == int64(int32(v)):
			return connect.Int32Schema, int32(v), true
		}
		return connect.Int64Schema, v, true
	}
	if d.scale != 0 {
		if d.isZero() {
			return connect.Float32Schema, float32(0), true
		}
		f32, _ := strconv.ParseFloat(d.text(), 32)
		if !math.IsInf(f32, 0) {
			return connect.Float32Schema, float32(f32), true
		}
		f64, _ := strconv.ParseFloat(d.text(), 64)
		if !math.IsInf(f64, 0) {
			return connect.Float64Schema, f64, true
		}
	}
	return connect.DecimalSchema(int32(d.scale)).Build(), d.decimal(), true
}
