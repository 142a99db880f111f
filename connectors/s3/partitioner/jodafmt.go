package partitioner

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// pathFormat is a compiled Joda-Time DateTimeFormat pattern (path.format),
// printing what Joda prints for the ISO chronology. Pattern letters:
//
//	G era (AD)              C century of era      Y year of era
//	y year                  x ISO week year       M month (MMM, MMMM: name)
//	d day of month          D day of year         w ISO week of week year
//	e day of week (1=Mon)   E day name (EEE, EEEE) a AM/PM
//	H hour 0-23             k hour 1-24           K hour 0-11
//	h hour 1-12             m minute              s second
//	S fraction of second    Z offset (Z +0800, ZZ +08:00, ZZZ zone id)
//
// A run of n letters prints at least n digits (YY, yy and xx print the
// last two digits of the year); text between single quotes is literal,
// two single quotes print one, and other characters than ASCII letters
// are literal.
// Joda's z (zone names) is not supported: Joda takes the names from the
// JDK's locale data, which Go does not have.
type pathFormat struct {
	items []fmtItem
	// text is set when the pattern prints names (months, days, AM/PM,
	// era), which depend on the locale.
	text bool
}

type fmtItem struct {
	letter byte // 0 for a literal
	n      int
	lit    string
}

func isASCIILetter(c byte) bool { return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' }

// compileFormat splits a pattern into tokens as Joda's
// DateTimeFormat.parseToken does. Errors carry Joda's message, which
// Confluent reports as the reason path.format is invalid.
func compileFormat(p string) (*pathFormat, error) {
	if p == "" {
		return nil, errors.New("Invalid pattern specification")
	}
	f := &pathFormat{}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if isASCIILetter(c) {
			j := i
			for j+1 < len(p) && p[j+1] == c {
				j++
			}
			n := j - i + 1
			switch c {
			case 'G', 'C', 'Y', 'y', 'x', 'M', 'd', 'a', 'h', 'H', 'k', 'K', 'm', 's', 'S', 'e', 'E', 'D', 'w', 'Z':
			case 'z':
				return nil, errors.New("Fjord does not print time zone names (pattern component " + p[i:j+1] +
					"); use ZZZ for the zone id or Z/ZZ for the offset")
			default:
				return nil, errors.New("Illegal pattern component: " + p[i:j+1])
			}
			if c == 'G' || c == 'a' || c == 'E' || c == 'M' && n >= 3 {
				f.text = true
			}
			f.items = append(f.items, fmtItem{letter: c, n: n})
			i = j
			continue
		}
		// A literal runs to the next letter outside quotes.
		var lit []byte
		quoted := false
		for ; i < len(p); i++ {
			c = p[i]
			switch {
			case c == '\'':
				if i+1 < len(p) && p[i+1] == '\'' {
					i++
					lit = append(lit, c)
				} else {
					quoted = !quoted
				}
			case !quoted && isASCIILetter(c):
				i--
				goto done
			default:
				lit = append(lit, c)
			}
		}
	done:
		f.items = append(f.items, fmtItem{lit: string(lit)})
	}
	return f, nil
}

var (
	monthNames = [...]string{"January", "February", "March", "April", "May", "June", "July",
		"August", "September", "October", "November", "December"}
	dayNames = [...]string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}
)

// isEnglish reports whether Joda would print English names for a locale
// setting. Confluent builds the locale with new Locale(s), which lowers
// the whole string into the language: "en", "en_US" and "en-US" all name
// English or fall back to the JVM's (English) default.
func isEnglish(locale string) bool {
	l := strings.ToLower(strings.TrimSpace(locale))
	return l == "en" || strings.HasPrefix(l, "en_") || strings.HasPrefix(l, "en-")
}

// appendPadded writes v with at least n digits after the sign, as Joda's
// FormatUtils.appendPaddedInteger (the sign does not count).
func appendPadded(b []byte, v int64, n int) []byte {
	if v < 0 {
		b = append(b, '-')
		v = -v
	}
	var tmp [20]byte
	d := strconv.AppendUint(tmp[:0], uint64(v), 10)
	for i := len(d); i < n; i++ {
		b = append(b, '0')
	}
	return append(b, d...)
}

// appendFraction prints the millisecond of the second with n digits as
// Joda's fraction printer does: truncated below 3 digits, zero-extended
// above. Joda caps the digits at 15 (where 1000·10^digits would overflow
// a long) and, having no scalar for 19 digits or more, prints zeros then.
func appendFraction(b []byte, ms int64, n int) []byte {
	digits, scaled := n, int64(0)
	if n < 19 {
		digits = min(n, 15)
		scale := int64(1)
		for range digits {
			scale *= 10
		}
		scaled = ms * scale / 1000
	}
	return appendPadded(b, scaled, digits)
}

// appendTo prints t (already in the partitioner's zone) with the
// pattern; zoneID is what ZZZ prints.
func (f *pathFormat) appendTo(b []byte, t time.Time, zoneID string) []byte {
	year, month, day := t.Date()
	hour, minute, sec := t.Clock()
	yoe := year
	if year <= 0 {
		yoe = 1 - year
	}
	twoDigit := func(y int) []byte {
		if y < 0 {
			y = -y
		}
		return appendPadded(b, int64(y%100), 2)
	}
	for _, it := range f.items {
		n := it.n
		switch it.letter {
		case 0:
			b = append(b, it.lit...)
		case 'G':
			if year > 0 {
				b = append(b, "AD"...)
			} else {
				b = append(b, "BC"...)
			}
		case 'C':
			b = appendPadded(b, int64(yoe/100), n)
		case 'Y':
			if n == 2 {
				b = twoDigit(year)
			} else {
				b = appendPadded(b, int64(yoe), n)
			}
		case 'y':
			if n == 2 {
				b = twoDigit(year)
			} else {
				b = appendPadded(b, int64(year), n)
			}
		case 'x':
			wy, _ := t.ISOWeek()
			if n == 2 {
				b = twoDigit(wy)
			} else {
				b = appendPadded(b, int64(wy), n)
			}
		case 'M':
			switch {
			case n >= 4:
				b = append(b, monthNames[month-1]...)
			case n == 3:
				b = append(b, monthNames[month-1][:3]...)
			default:
				b = appendPadded(b, int64(month), n)
			}
		case 'd':
			b = appendPadded(b, int64(day), n)
		case 'D':
			b = appendPadded(b, int64(t.YearDay()), n)
		case 'w':
			_, w := t.ISOWeek()
			b = appendPadded(b, int64(w), n)
		case 'e':
			b = appendPadded(b, int64(isoWeekday(t)), n)
		case 'E':
			name := dayNames[isoWeekday(t)-1]
			if n < 4 {
				name = name[:3]
			}
			b = append(b, name...)
		case 'a':
			if hour < 12 {
				b = append(b, "AM"...)
			} else {
				b = append(b, "PM"...)
			}
		case 'H':
			b = appendPadded(b, int64(hour), n)
		case 'k':
			h := hour
			if h == 0 {
				h = 24
			}
			b = appendPadded(b, int64(h), n)
		case 'K':
			b = appendPadded(b, int64(hour%12), n)
		case 'h':
			h := hour % 12
			if h == 0 {
				h = 12
			}
			b = appendPadded(b, int64(h), n)
		case 'm':
			b = appendPadded(b, int64(minute), n)
		case 's':
			b = appendPadded(b, int64(sec), n)
		case 'S':
			b = appendFraction(b, int64(t.Nanosecond()/1e6), n)
		case 'Z':
			if n >= 3 {
				b = append(b, zoneID...)
				break
			}
			_, off := t.Zone()
			if off < 0 {
				b = append(b, '-')
				off = -off
			} else {
				b = append(b, '+')
			}
			b = appendPadded(b, int64(off/3600), 2)
			if n == 2 {
				b = append(b, ':')
			}
			b = appendPadded(b, int64(off/60%60), 2)
		}
	}
	return b
}

// isoWeekday is Joda's day of week: Monday 1 to Sunday 7.
func isoWeekday(t time.Time) int {
	if d := t.Weekday(); d != time.Sunday {
		return int(d)
	}
	return 7
}
