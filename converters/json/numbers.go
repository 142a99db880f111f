package json

import (
	"math"
	"strconv"

	"github.com/fjordhq/fjord/connect"
)

// Kafka reads JSON into Jackson nodes and converts them with the node's
// intValue(), longValue(), floatValue(), ... whatever the schema says: a
// 1.9 read as INT32 is 1, 3000000000 is -1294967296 (the low 32 bits),
// "5" is 0. These helpers compute those answers from the number's text,
// without big numbers.

// intBits returns longValue() of a number token: the value truncated
// toward zero, reduced to its low 64 bits (two's complement), which is
// also what intValue(), (short) and (byte) keep the low bits of.
func intBits(text []byte, float bool) int64 {
	if !float && len(text) <= 18 {
		n, err := strconv.ParseInt(string(text), 10, 64)
		if err == nil {
			return n
		}
	}
	neg := text[0] == '-'
	if neg {
		text = text[1:]
	}
	var digits []byte
	exp := 0
	if !float {
		digits = text
	} else {
		// Split into significand digits and a decimal exponent.
		i := 0
		for i < len(text) && text[i] >= '0' && text[i] <= '9' {
			i++
		}
		intPart := text[:i]
		var frac []byte
		if i < len(text) && text[i] == '.' {
			j := i + 1
			for j < len(text) && text[j] >= '0' && text[j] <= '9' {
				j++
			}
			frac = text[i+1 : j]
			i = j
		}
		if i < len(text) { // exponent
			e, ok := parseExp(text[i+1:])
			if !ok { // beyond any int: 10^e has no low bits, or the value truncates to 0
				return 0
			}
			exp = e
		}
		exp -= len(frac)
		digits = make([]byte, 0, len(intPart)+len(frac))
		digits = append(append(digits, intPart...), frac...)
	}
	var v uint64
	if exp < 0 {
		keep := len(digits) + exp
		if keep <= 0 {
			return 0
		}
		digits = digits[:keep]
		exp = 0
	}
	for _, c := range digits {
		v = v*10 + uint64(c-'0')
	}
	if exp >= 64 { // 10^exp = 2^exp * 5^exp: no bits below 2^64
		return 0
	}
	for ; exp > 0; exp-- {
		v *= 10
	}
	if neg {
		v = -v
	}
	return int64(v)
}

// parseExp parses an exponent ("+12", "-3", "7"); ok is false when it
// is too large to matter (|e| > 1e9).
func parseExp(b []byte) (int, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '+' || b[0] == '-') {
		neg = b[0] == '-'
		b = b[1:]
	}
	for len(b) > 1 && b[0] == '0' {
		b = b[1:]
	}
	if len(b) > 9 {
		return 0, false
	}
	n, _ := strconv.Atoi(string(b))
	if neg {
		n = -n
	}
	return n, true
}

// isZero reports whether a number token is exactly zero: Java's
// BigDecimal has no negative zero, so -0.0 reads as 0.0.
func isZero(text []byte) bool {
	for _, c := range text {
		if c >= '1' && c <= '9' {
			return false
		}
		if c == 'e' || c == 'E' {
			break
		}
	}
	return true
}

// float64Value is doubleValue() of a number token (correctly rounded,
// as BigDecimal.doubleValue and (double) of an integer are).
func float64Value(text []byte) float64 {
	if isZero(text) {
		return 0
	}
	f, err := strconv.ParseFloat(string(text), 64)
	if err != nil && !math.IsInf(f, 0) && f != 0 {
		return 0
	}
	return f
}

// float32Value is floatValue() of a number token.
func float32Value(text []byte) float32 {
	if isZero(text) {
		return 0
	}
	f, _ := strconv.ParseFloat(string(text), 32)
	return float32(f)
}

// isInt reports whether Jackson makes an IntNode of the token: an
// integer that fits 32 bits (the Date and Time logical types want one).
func isInt(text []byte, float bool) bool {
	if float || len(text) > 12 {
		return false
	}
	n, err := strconv.ParseInt(string(text), 10, 64)
	return err == nil && n >= math.MinInt32 && n <= math.MaxInt32
}

// decimalValue is decimalValue() of a number token: the BigDecimal
// exactly as written (1.50 keeps scale 2, 1E+3 has scale -3).
func decimalValue(text []byte) (connect.Decimal, error) {
	return connect.ParseDecimal(string(text))
}
