// Package jvm renders and reads values the way the JVM does, for
// converters whose bytes must match Kafka Connect's: Java's
// Double.toString and Float.toString, BigDecimal.toString,
// java.util.Date.toString, Object.toString of Connect values (what
// StringConverter writes), and new String(bytes, UTF_8) with its
// replacement of malformed input.
//
// Floating point follows the shortest-digits rule Java specifies since
// JDK 19 (Raffaello Giulietti's Schubfach); JDK 17's older algorithm
// sometimes printed one more digit (2.82879384806159008E17 for
// 2.82879384806159E17). Both parse back to the same double.
package jvm

import (
	"math"
	"math/big"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/fjordhq/fjord/connect"
)

// AppendDouble appends Java's Double.toString(f).
func AppendDouble(dst []byte, f float64) []byte {
	return appendJavaFloat(dst, f, 64)
}

// AppendFloat appends Java's Float.toString(f).
func AppendFloat(dst []byte, f float32) []byte {
	return appendJavaFloat(dst, float64(f), 32)
}

// Double returns Java's Double.toString(f).
func Double(f float64) string { return string(AppendDouble(nil, f)) }

// Float returns Java's Float.toString(f).
func Float(f float32) string { return string(AppendFloat(nil, f)) }

func appendJavaFloat(dst []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case f == 0:
		if math.Signbit(f) {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	// Shortest digits that round-trip, as d.dddde±XX.
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, bits)
	neg := e[0] == '-'
	if neg {
		e = e[1:]
		dst = append(dst, '-')
	}
	// Split mantissa digits and exponent.
	var digits [24]byte
	nd := 0
	i := 0
	for ; i < len(e) && e[i] != 'e'; i++ {
		if e[i] != '.' {
			digits[nd] = e[i]
			nd++
		}
	}
	exp := 0
	for _, c := range e[i+2:] { // e[i+1] is the exponent's sign
		exp = exp*10 + int(c-'0')
	}
	if e[i+1] == '-' {
		exp = -exp
	}
	if nd == 1 {
		// Java prints at least two significant digits (d.d) and, when
		// one digit would do, picks the two-digit decimal closest to the
		// exact value: Double.MIN_VALUE is 4.9E-324, not 5.0E-324.
		e = strconv.AppendFloat(buf[:0], math.Abs(f), 'e', 1, bits)
		digits[0], digits[1] = e[0], e[2]
		nd = 2
		if digits[1] == '0' {
			nd = 1
		}
	}
	// Java: plain notation for 1e-3 <= |f| < 1e7, else computerized
	// scientific notation, always with a digit after the point.
	if exp >= -3 && exp < 7 {
		if exp < 0 {
			dst = append(dst, '0', '.')
			for j := 0; j < -exp-1; j++ {
				dst = append(dst, '0')
			}
			return append(dst, digits[:nd]...)
		}
		intDigits := exp + 1
		for j := 0; j < intDigits; j++ {
			if j < nd {
				dst = append(dst, digits[j])
			} else {
				dst = append(dst, '0')
			}
		}
		dst = append(dst, '.')
		if nd > intDigits {
			return append(dst, digits[intDigits:nd]...)
		}
		return append(dst, '0')
	}
	dst = append(dst, digits[0], '.')
	if nd > 1 {
		dst = append(dst, digits[1:nd]...)
	} else {
		dst = append(dst, '0')
	}
	dst = append(dst, 'E')
	return strconv.AppendInt(dst, int64(exp), 10)
}

// AppendDecimal appends Java's BigDecimal.toString(): plain notation
// when the scale is not negative and the adjusted exponent is at least
// -6, otherwise scientific ("1.5E+3", "1E-9").
func AppendDecimal(dst []byte, d connect.Decimal) []byte {
	var unscaled *big.Int
	if d.Unscaled != nil {
		unscaled = d.Unscaled
	} else {
		unscaled = new(big.Int)
	}
	if d.Scale == 0 {
		return unscaled.Append(dst, 10)
	}
	var buf [40]byte
	coeff := unscaled.Append(buf[:0], 10)
	if coeff[0] == '-' {
		dst = append(dst, '-')
		coeff = coeff[1:]
	}
	adjusted := -int64(d.Scale) + int64(len(coeff)-1)
	if d.Scale > 0 && adjusted >= -6 {
		pad := int(d.Scale) - len(coeff)
		if pad >= 0 {
			dst = append(dst, '0', '.')
			for ; pad > 0; pad-- {
				dst = append(dst, '0')
			}
			return append(dst, coeff...)
		}
		point := len(coeff) - int(d.Scale)
		dst = append(dst, coeff[:point]...)
		dst = append(dst, '.')
		return append(dst, coeff[point:]...)
	}
	dst = append(dst, coeff[0])
	if len(coeff) > 1 {
		dst = append(dst, '.')
		dst = append(dst, coeff[1:]...)
	}
	dst = append(dst, 'E')
	if adjusted > 0 {
		dst = append(dst, '+')
	}
	return strconv.AppendInt(dst, adjusted, 10)
}

// Decimal returns Java's BigDecimal.toString().
func Decimal(d connect.Decimal) string { return string(AppendDecimal(nil, d)) }

// DateString is java.util.Date.toString() in UTC ("Thu Jan 01 00:00:00
// UTC 1970"); Kafka Connect workers run with the JVM in UTC.
func DateString(t time.Time) string {
	return t.UTC().Format("Mon Jan 02 15:04:05 UTC 2006")
}

// DecodeUTF8 is Java's new String(b, UTF_8): malformed input becomes
// U+FFFD, one per maximal ill-formed subpart (the Unicode practice Java
// follows, except that an encoded surrogate is one malformed sequence),
// where Go's conversions would keep the bytes or replace per byte.
func DecodeUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	out := make([]byte, 0, len(b)+8)
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r != utf8.RuneError || n > 1 {
			out = append(out, b[i:i+n]...)
			i += n
			continue
		}
		out = utf8.AppendRune(out, utf8.RuneError)
		i += illFormedLen(b[i:])
	}
	return string(out)
}

// illFormedLen returns the length of the maximal ill-formed subpart at
// the start of b: a lead byte followed by the continuation bytes that
// could still have completed a well-formed sequence.
func illFormedLen(b []byte) int {
	c := b[0]
	var need int
	lo, hi := byte(0x80), byte(0xbf)
	switch {
	case c >= 0xc2 && c <= 0xdf:
		need = 1
	case c == 0xe0:
		need, lo = 2, 0xa0
	case c >= 0xe1 && c <= 0xef:
		// Java decodes ED A0..BF xx (a UTF-16 surrogate) before refusing
		// it: one replacement for the three bytes.
		need = 2
	case c == 0xf0:
		need, lo = 3, 0x90
	case c >= 0xf1 && c <= 0xf3:
		need = 3
	case c == 0xf4:
		need, hi = 3, 0x8f
	default:
		return 1
	}
	n := 1
	for k := 0; k < need && n < len(b); k++ {
		x := b[n]
		if k > 0 {
			lo, hi = 0x80, 0xbf
		}
		if x < lo || x > hi {
			break
		}
		n++
	}
	return n
}
