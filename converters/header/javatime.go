package header

import (
	"math"
	"strconv"
	"time"
	"unicode"
)

// Kafka's Values reads and writes dates with java.text.SimpleDateFormat
// in the JVM's time zone (UTC on Connect workers): lenient parsing
// (month 13 rolls into the next year, 25:00 into the next day, digits of
// any script), and java.util.GregorianCalendar's Julian calendar before
// 15 October 1582. This file reproduces the three patterns Values uses.

const (
	msPerDay = 24 * 60 * 60 * 1000
	// epochJDN is the Julian day number of 1970-01-01.
	epochJDN = 2440588
)

// gregorianCutoverDay is 1582-10-15 in days since the epoch: earlier
// days are in the Julian calendar, as GregorianCalendar's default.
var gregorianCutoverDay = gregorianDays(1582, 10, 15)

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// gregorianDays is the proleptic Gregorian date's days since the epoch.
func gregorianDays(y, m, d int64) int64 {
	a := floorDiv(14-m, 12)
	yy := y + 4800 - a
	mm := m + 12*a - 3
	jdn := d + floorDiv(153*mm+2, 5) + 365*yy + floorDiv(yy, 4) - floorDiv(yy, 100) + floorDiv(yy, 400) - 32045
	return jdn - epochJDN
}

// julianDays is the Julian calendar date's days since the epoch.
func julianDays(y, m, d int64) int64 {
	a := floorDiv(14-m, 12)
	yy := y + 4800 - a
	mm := m + 12*a - 3
	jdn := d + floorDiv(153*mm+2, 5) + 365*yy + floorDiv(yy, 4) - 32083
	return jdn - epochJDN
}

// fields are the calendar fields a pattern set; unset ones take
// GregorianCalendar's defaults (1970-01-01 00:00:00.000).
type fields struct {
	year, month, day                  int64 // month 1-based
	hour, minute, second, millisecond int64
}

// epochMillis combines lenient fields into an instant, as
// GregorianCalendar.computeTime does in UTC.
func (f fields) epochMillis() int64 {
	timeOfDay := ((f.hour*60+f.minute)*60+f.second)*1000 + f.millisecond
	dayOffset := floorDiv(timeOfDay, msPerDay)
	timeOfDay -= dayOffset * msPerDay
	// Month overflow moves the year; the day is added to the month's first.
	y, m := f.year, f.month-1
	y += floorDiv(m, 12)
	m -= floorDiv(m, 12) * 12
	var day int64
	if f.year > 1582 {
		day = gregorianDays(y, m+1, 1)
		if day+f.day-1+dayOffset < gregorianCutoverDay {
			day = julianDays(y, m+1, 1)
		}
	} else {
		day = julianDays(y, m+1, 1)
		if day+f.day-1+dayOffset >= gregorianCutoverDay {
			day = gregorianDays(y, m+1, 1)
		}
	}
	day += f.day - 1 + dayOffset
	return day*msPerDay + timeOfDay
}

// calendarFields splits an instant into the fields GregorianCalendar
// reports in UTC (Julian before the cutover; year 0 and below are the
// years BC, reported as positive era years by SimpleDateFormat).
func calendarFields(ms int64) (f fields) {
	day := floorDiv(ms, msPerDay)
	tod := ms - day*msPerDay
	f.hour, tod = tod/3600000, tod%3600000
	f.minute, tod = tod/60000, tod%60000
	f.second, f.millisecond = tod/1000, tod%1000
	jdn := day + epochJDN
	if day >= gregorianCutoverDay {
		a := jdn + 32044
		b := floorDiv(4*a+3, 146097)
		c := a - floorDiv(146097*b, 4)
		d := floorDiv(4*c+3, 1461)
		e := c - floorDiv(1461*d, 4)
		m := floorDiv(5*e+2, 153)
		f.day = e - floorDiv(153*m+2, 5) + 1
		f.month = m + 3 - 12*floorDiv(m, 10)
		f.year = 100*b + d - 4800 + floorDiv(m, 10)
	} else {
		c := jdn + 32082
		d := floorDiv(4*c+3, 1461)
		e := c - floorDiv(1461*d, 4)
		m := floorDiv(5*e+2, 153)
		f.day = e - floorDiv(153*m+2, 5) + 1
		f.month = m + 3 - 12*floorDiv(m, 10)
		f.year = d - 4800 + floorDiv(m, 10)
	}
	return f
}

// The patterns Values uses, as sequences of numeric fields and literal
// characters.
type patElem struct {
	field   byte // 'y','M','d','H','m','s','S'; 0 for a literal
	literal rune
}

func compile(p string) []patElem {
	var out []patElem
	for _, c := range p {
		switch c {
		case 'y', 'M', 'd', 'H', 'm', 's', 'S':
			if n := len(out); n > 0 && out[n-1].field == byte(c) {
				continue
			}
			out = append(out, patElem{field: byte(c)})
		default:
			out = append(out, patElem{literal: c})
		}
	}
	return out
}

// Values' patterns: "yyyy-MM-dd", "HH:mm:ss.SSS'Z'" and
// "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'" (quoted letters are literals).
var (
	datePattern      = compile("yyyy-MM-dd")
	timePattern      = compile("HH:mm:ss.SSSZ")
	timestampPattern = compile("yyyy-MM-ddTHH:mm:ss.SSSZ")
)

// parseLenient is SimpleDateFormat(pattern).parse(text, pos) with
// lenient parsing: ok when the whole pattern matched a prefix of text.
func parseLenient(text []rune, pattern []patElem) (int64, bool) {
	f := fields{year: 1970, month: 1, day: 1}
	pos := 0
	for _, el := range pattern {
		if el.field == 0 {
			if pos >= len(text) || text[pos] != el.literal {
				return 0, false
			}
			pos++
			continue
		}
		// Numbers: spaces and tabs skipped, then DecimalFormat's integer
		// parse (a minus sign, digits of any script, an exponent).
		for pos < len(text) && (text[pos] == ' ' || text[pos] == '\t') {
			pos++
		}
		v, n, ok := parseJavaInt(text[pos:])
		if !ok {
			return 0, false
		}
		pos += n
		switch el.field {
		case 'y':
			f.year = v
		case 'M':
			f.month = v
		case 'd':
			f.day = v
		case 'H':
			f.hour = v
		case 'm':
			f.minute = v
		case 's':
			f.second = v
		case 'S':
			f.millisecond = v
		}
	}
	return f.epochMillis(), true
}

// parseJavaInt reads what DecimalFormat (integer only, no grouping)
// parses at the start of text, as the int SimpleDateFormat keeps.
func parseJavaInt(text []rune) (v int64, n int, ok bool) {
	neg := false
	if n < len(text) && text[n] == '-' {
		neg = true
		n++
	}
	start := n
	var digits []byte
	for n < len(text) {
		d := javaDigit(text[n])
		if d < 0 {
			break
		}
		digits = append(digits, byte('0'+d))
		n++
	}
	if n == start {
		return 0, 0, false
	}
	exp := 0
	if n+1 < len(text) && text[n] == 'E' {
		k := n + 1
		eneg := false
		if text[k] == '-' {
			eneg = true
			k++
		}
		es := k
		e := 0
		for k < len(text) {
			d := javaDigit(text[k])
			if d < 0 {
				break
			}
			if e < 1e6 {
				e = e*10 + d
			}
			k++
		}
		if k > es {
			n = k
			if eneg {
				exp = -e
			} else {
				exp = e
			}
		}
	}
	s := string(digits)
	if exp != 0 {
		s += "e" + strconv.Itoa(exp)
	}
	f, _ := strconv.ParseFloat(s, 64)
	if neg {
		f = -f
	}
	// Number.intValue(): a long keeps its low 32 bits, a double
	// saturates.
	if exp == 0 && len(digits) <= 18 {
		l, _ := strconv.ParseInt(s, 10, 64)
		if neg {
			l = -l
		}
		return int64(int32(l)), n, true
	}
	switch {
	case f != f:
		return 0, n, true
	case f >= math.MaxInt32:
		return math.MaxInt32, n, true
	case f <= math.MinInt32:
		return math.MinInt32, n, true
	}
	return int64(int32(f)), n, true
}

// javaDigit is Character.digit(r, 10): decimal digits of any script.
func javaDigit(r rune) int {
	if r >= '0' && r <= '9' {
		return int(r - '0')
	}
	if r < 0x80 || r > 0xffff || !unicode.IsDigit(r) {
		return -1
	}
	// Unicode decimal digits come in runs of ten starting at zero.
	for _, rg := range unicode.Nd.R16 {
		if uint16(r) >= rg.Lo && uint16(r) <= rg.Hi {
			return int(uint16(r)-rg.Lo) % 10
		}
	}
	return -1
}

// formatDate is Values.dateFormatFor(t).format(t): a time of day for
// instants before one day after the epoch (including every negative
// one), a date for midnights, a timestamp otherwise.
func formatDate(t time.Time) string {
	ms := t.UnixMilli()
	f := calendarFields(ms)
	var b []byte
	switch {
	case ms < msPerDay:
		b = appendTime(b, f)
	case ms%msPerDay == 0:
		b = appendDate(b, f)
	default:
		b = appendDate(b, f)
		b = append(b, 'T')
		b = appendTime(b, f)
	}
	return string(b)
}

func appendDate(b []byte, f fields) []byte {
	y := f.year
	if y <= 0 { // SimpleDateFormat prints the year of the era
		y = 1 - y
	}
	b = appendPadded(b, y, 4)
	b = append(b, '-')
	b = appendPadded(b, f.month, 2)
	b = append(b, '-')
	return appendPadded(b, f.day, 2)
}

func appendTime(b []byte, f fields) []byte {
	b = appendPadded(b, f.hour, 2)
	b = append(b, ':')
	b = appendPadded(b, f.minute, 2)
	b = append(b, ':')
	b = appendPadded(b, f.second, 2)
	b = append(b, '.')
	b = appendPadded(b, f.millisecond, 3)
	return append(b, 'Z')
}

func appendPadded(b []byte, v int64, width int) []byte {
	s := strconv.FormatInt(v, 10)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}
