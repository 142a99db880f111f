package transforms

import (
	"math"
	"strconv"
	"strings"
)

// javaDouble formats f as Java's Double.toString: plain notation with at
// least one fractional digit for 1e-3 <= |f| < 1e7, else computerized
// scientific notation ("1.0E10", "1.5E-4"), shortest digits that round
// trip.
func javaDouble(f float64) string { return javaFloating(f, 64) }

// javaFloat formats f as Java's Float.toString.
func javaFloat(f float32) string { return javaFloating(float64(f), 32) }

func javaFloating(f float64, bits int) string {
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
	// Shortest round-tripping digits and decimal exponent.
	s := strconv.FormatFloat(f, 'e', -1, bits) // d.ddddde±xx
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	mant, expStr, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(expStr)
	digits := strings.Replace(mant, ".", "", 1)
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	abs := math.Abs(f)
	if abs >= 1e-3 && abs < 1e7 {
		if exp >= 0 {
			for len(digits) < exp+1 {
				digits += "0"
			}
			b.WriteString(digits[:exp+1])
			b.WriteByte('.')
			if frac := digits[exp+1:]; frac != "" {
				b.WriteString(frac)
			} else {
				b.WriteByte('0')
			}
		} else {
			b.WriteString("0.")
			b.WriteString(strings.Repeat("0", -exp-1))
			b.WriteString(digits)
		}
		return b.String()
	}
	b.WriteString(digits[:1])
	b.WriteByte('.')
	if len(digits) > 1 {
		b.WriteString(digits[1:])
	} else {
		b.WriteByte('0')
	}
	b.WriteByte('E')
	b.WriteString(strconv.Itoa(exp))
	return b.String()
}
