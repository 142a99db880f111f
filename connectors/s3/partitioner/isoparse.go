package partitioner

import (
	"fmt"
	"math"
	"strconv"
)

// parseTimestampString reads a timestamp field given as a string, as
// Confluent's RecordFieldTimestampExtractor does: a string of at most 19
// digits (with an optional minus) that fits a long is epoch
// milliseconds; anything else is parsed as Joda's
// ISODateTimeFormat.dateTimeParser() parses it.
func parseTimestampString(s string) (int64, error) {
	if isMillisString(s) {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, nil
		}
	}
	return parseISO(s)
}

// isMillisString is Confluent's ^-?[0-9]{1,19}$.
func isMillisString(s string) bool {
	d := s
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 19 {
		return false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return false
		}
	}
	return true
}

// isoTime is what the ISO grammar read, before it is checked and turned
// into an instant (Joda's parser bucket).
type isoTime struct {
	date byte // 's' year[-month[-day]], 'o' year-dayOfYear, 'w' week date, 0 none (1970-01-01)
	// year is the year, or the week year of a week date.
	year, month, day, dayOfYear, week, dayOfWeek int64
	hour, minute, second                         int64
	// fraction is the milliseconds a decimal fraction of the hour, the
	// minute or the second added.
	fraction  int64
	hasOffset bool
	offset    int64 // ms east of UTC
}

// parseISO parses Joda's ISO dateTimeParser grammar:
//
//	datetime          = time | date-opt-time
//	time              = 'T' time-element [offset]
//	date-opt-time     = date-element ['T' [time-element] [offset]]
//	date-element      = yyyy ['-' MM ['-' dd]] | yyyy '-' DDD | xxxx '-W' ww ['-' e]
//	time-element      = HH [':' mm [':' ss [fraction] | fraction] | fraction]
//	fraction          = ('.' | ',') digit+
//	offset            = 'Z' | ('+' | '-') HH [':' mm [':' ss [('.' | ',') SSS]]]
//
// with Joda's leniencies: numbers take 1 to their width of digits (years
// up to 9 and a sign), literals match either case, offsets may leave out
// the colons, and among alternatives the longest match wins. A string
// without an offset is read in UTC: Joda uses the JVM's default zone,
// which is UTC where Connect runs in Confluent's images.
func parseISO(s string) (int64, error) {
	best, bestPos := isoTime{}, -1
	if t, p, ok := parseTimeOnly(s, 0); ok {
		best, bestPos = t, p
	}
	if bestPos < len(s) {
		if t, p, ok := parseDateOptTime(s, 0); ok && p > bestPos {
			best, bestPos = t, p
		}
	}
	if bestPos < len(s) {
		return 0, fmt.Errorf("%s", isoFormatError(s, max(bestPos, 0)))
	}
	return best.millis(s)
}

// isoFormatError is Joda's message for text the grammar does not match.
func isoFormatError(s string, pos int) string {
	sample := s
	if len(s) > pos+32+3 {
		sample = s[:pos+32] + "..."
	}
	switch {
	case pos <= 0:
		return `Invalid format: "` + sample + `"`
	case pos >= len(s):
		return `Invalid format: "` + sample + `" is too short`
	}
	return `Invalid format: "` + sample + `" is malformed at "` + sample[pos:] + `"`
}

func foldEq(a, b byte) bool {
	if a == b {
		return true
	}
	if 'a' <= a && a <= 'z' {
		a -= 'a' - 'A'
	}
	if 'a' <= b && b <= 'z' {
		b -= 'a' - 'A'
	}
	return a == b
}

// lit matches a literal at pos, either case (Joda's literal parsers).
func lit(s string, pos int, l string) (int, bool) {
	if len(s)-pos < len(l) {
		return pos, false
	}
	for i := 0; i < len(l); i++ {
		if !foldEq(s[pos+i], l[i]) {
			return pos, false
		}
	}
	return pos + len(l), true
}

// num reads 1 to width digits (Joda's number parsers ignore the minimum
// width when parsing); signed also takes a leading '-' or '+'.
func num(s string, pos, width int, signed bool) (int64, int, bool) {
	neg := false
	start := pos
	if signed && pos+1 < len(s) && (s[pos] == '-' || s[pos] == '+') && s[pos+1] >= '0' && s[pos+1] <= '9' {
		neg = s[pos] == '-'
		pos++
	}
	var v int64
	n := 0
	for n < width && pos < len(s) && s[pos] >= '0' && s[pos] <= '9' {
		v = v*10 + int64(s[pos]-'0')
		pos++
		n++
	}
	if n == 0 {
		return 0, start, false
	}
	if neg {
		v = -v
	}
	return v, pos, true
}

// fraction reads a decimal point and up to 9 digits as a part of unit
// milliseconds, truncating as Joda's fraction parser does digit by digit.
func fraction(s string, pos int, unit int64) (int64, int, bool) {
	if pos >= len(s) || (s[pos] != '.' && s[pos] != ',') {
		return 0, pos, false
	}
	p := pos + 1
	var v int64
	n := unit * 10
	digits := 0
	for digits < 9 && p < len(s) && s[p] >= '0' && s[p] <= '9' {
		n /= 10
		v += int64(s[p]-'0') * n
		p++
		digits++
	}
	if digits == 0 {
		return 0, pos, false
	}
	return v / 10, p, true
}

func parseTimeOnly(s string, pos int) (isoTime, int, bool) {
	var t isoTime
	p, ok := lit(s, pos, "T")
	if !ok {
		return t, pos, false
	}
	if p, ok = parseTimeElement(&t, s, p); !ok {
		return t, pos, false
	}
	p = parseOffset(&t, s, p)
	return t, p, true
}

func parseDateOptTime(s string, pos int) (isoTime, int, bool) {
	t, p, ok := parseDateElement(s, pos)
	if !ok {
		return t, pos, false
	}
	if q, ok := lit(s, p, "T"); ok {
		if q2, ok := parseTimeElement(&t, s, q); ok {
			q = q2
		}
		p = parseOffset(&t, s, q)
	}
	return t, p, true
}

// parseDateElement tries the three date forms and keeps the longest
// match, the first on a tie (Joda's MatchingParser).
func parseDateElement(s string, pos int) (isoTime, int, bool) {
	best, bestPos := isoTime{}, -1
	try := func(t isoTime, p int, ok bool) {
		if ok && p > bestPos {
			best, bestPos = t, p
		}
	}
	try(parseStdDate(s, pos))
	try(parseWeekDate(s, pos))
	try(parseOrdinalDate(s, pos))
	return best, bestPos, bestPos >= 0
}

func parseStdDate(s string, pos int) (isoTime, int, bool) {
	t := isoTime{date: 's', month: 1, day: 1}
	y, p, ok := num(s, pos, 9, true)
	if !ok {
		return t, pos, false
	}
	t.year = y
	if q, ok := lit(s, p, "-"); ok {
		if m, q, ok := num(s, q, 2, false); ok {
			t.month, p = m, q
			if q, ok := lit(s, p, "-"); ok {
				if d, q, ok := num(s, q, 2, false); ok {
					t.day, p = d, q
				}
			}
		}
	}
	return t, p, true
}

func parseWeekDate(s string, pos int) (isoTime, int, bool) {
	t := isoTime{date: 'w', dayOfWeek: 1}
	y, p, ok := num(s, pos, 9, true)
	if !ok {
		return t, pos, false
	}
	t.year = y
	if p, ok = lit(s, p, "-W"); !ok {
		return t, pos, false
	}
	if t.week, p, ok = num(s, p, 2, false); !ok {
		return t, pos, false
	}
	if q, ok := lit(s, p, "-"); ok {
		if d, q, ok := num(s, q, 1, false); ok {
			t.dayOfWeek, p = d, q
		}
	}
	return t, p, true
}

func parseOrdinalDate(s string, pos int) (isoTime, int, bool) {
	t := isoTime{date: 'o'}
	y, p, ok := num(s, pos, 9, true)
	if !ok {
		return t, pos, false
	}
	t.year = y
	if p, ok = lit(s, p, "-"); !ok {
		return t, pos, false
	}
	if t.dayOfYear, p, ok = num(s, p, 3, false); !ok {
		return t, pos, false
	}
	return t, p, true
}

// parseTimeElement reads HH [':' mm [':' ss [fraction] | fraction] |
// fraction] into t.
func parseTimeElement(t *isoTime, s string, pos int) (int, bool) {
	h, p, ok := num(s, pos, 2, false)
	if !ok {
		return pos, false
	}
	t.hour = h
	if f, q, ok := fraction(s, p, 3_600_000); ok {
		t.fraction = f
		return q, true
	}
	q, ok := lit(s, p, ":")
	if !ok {
		return p, true
	}
	m, q, ok := num(s, q, 2, false)
	if !ok {
		return p, true
	}
	t.minute, p = m, q
	if f, q, ok := fraction(s, p, 60_000); ok {
		t.fraction = f
		return q, true
	}
	q, ok = lit(s, p, ":")
	if !ok {
		return p, true
	}
	sec, q, ok := num(s, q, 2, false)
	if !ok {
		return p, true
	}
	t.second, p = sec, q
	if f, q, ok := fraction(s, p, 1000); ok {
		t.fraction = f
		p = q
	}
	return p, true
}

// parseOffset reads an optional offset as Joda's TimeZoneOffset parser
// with "Z" for zero: hours, then minutes, seconds and milliseconds, with
// colons or without; it returns pos unchanged when there is none.
func parseOffset(t *isoTime, s string, pos int) int {
	if p, ok := lit(s, pos, "Z"); ok {
		t.hasOffset, t.offset = true, 0
		return p
	}
	if len(s)-pos <= 1 || (s[pos] != '+' && s[pos] != '-') {
		return pos
	}
	neg := s[pos] == '-'
	p := pos + 1
	two := func(p int) (int64, bool) {
		if len(s)-p < 2 || s[p] < '0' || s[p] > '9' || s[p+1] < '0' || s[p+1] > '9' {
			return 0, false
		}
		return int64(s[p]-'0')*10 + int64(s[p+1]-'0'), true
	}
	h, ok := two(p)
	if !ok || h > 23 {
		return pos
	}
	off := h * 3_600_000
	p += 2
	finish := func(p int) int {
		if neg {
			off = -off
		}
		t.hasOffset, t.offset = true, off
		return p
	}
	if p >= len(s) {
		return finish(p)
	}
	seps := s[p] == ':'
	if seps {
		p++
	} else if s[p] < '0' || s[p] > '9' {
		return finish(p)
	}
	// Joda fails the whole offset on a separator not followed by two
	// digits, and stops quietly when digits simply end.
	m, ok := two(p)
	if !ok {
		if !seps && (p >= len(s) || s[p] < '0' || s[p] > '9') {
			return finish(p)
		}
		return pos
	}
	if m > 59 {
		return pos
	}
	off += m * 60_000
	p += 2
	if p >= len(s) {
		return finish(p)
	}
	if seps {
		if s[p] != ':' {
			return finish(p)
		}
		p++
	}
	sec, ok := two(p)
	if !ok {
		if !seps && (p >= len(s) || s[p] < '0' || s[p] > '9') {
			return finish(p)
		}
		return pos
	}
	if sec > 59 {
		return pos
	}
	off += sec * 1000
	p += 2
	if p >= len(s) {
		return finish(p)
	}
	if seps {
		if s[p] != '.' && s[p] != ',' {
			return finish(p)
		}
		p++
	}
	digits := 0
	for digits < 3 && p+digits < len(s) && s[p+digits] >= '0' && s[p+digits] <= '9' {
		digits++
	}
	if digits == 0 {
		if !seps {
			return finish(p)
		}
		return pos
	}
	scale := int64(100)
	for i := 0; i < digits; i++ {
		off += int64(s[p+i]-'0') * scale
		scale /= 10
	}
	return finish(p + digits)
}

// Joda's ISO chronology year range.
const (
	minJodaYear = -292275054
	maxJodaYear = 292278993
)

func rangeError(s string, v int64, field string, lo, hi int64) error {
	return fmt.Errorf(`Cannot parse "%s": Value %d for %s must be in the range [%d,%d]`, s, v, field, lo, hi)
}

// millis checks the fields as Joda's chronology does and returns the
// instant.
func (t isoTime) millis(s string) (int64, error) {
	var days int64
	if t.date != 0 {
		if t.year < minJodaYear || t.year > maxJodaYear {
			name := "year"
			if t.date == 'w' {
				name = "weekyear"
			}
			return 0, rangeError(s, t.year, name, minJodaYear, maxJodaYear)
		}
	}
	switch t.date {
	case 's':
		if t.month < 1 || t.month > 12 {
			return 0, rangeError(s, t.month, "monthOfYear", 1, 12)
		}
		if dim := daysInMonth(t.year, t.month); t.day < 1 || t.day > dim {
			return 0, rangeError(s, t.day, "dayOfMonth", 1, dim)
		}
		days = daysFromCivil(t.year, t.month, t.day)
	case 'o':
		diy := int64(365)
		if isLeap(t.year) {
			diy = 366
		}
		if t.dayOfYear < 1 || t.dayOfYear > diy {
			return 0, rangeError(s, t.dayOfYear, "dayOfYear", 1, diy)
		}
		days = daysFromCivil(t.year, 1, 1) + t.dayOfYear - 1
	case 'w':
		if wiy := isoWeeksInYear(t.year); t.week < 1 || t.week > wiy {
			return 0, rangeError(s, t.week, "weekOfWeekyear", 1, wiy)
		}
		if t.dayOfWeek < 1 || t.dayOfWeek > 7 {
			return 0, rangeError(s, t.dayOfWeek, "dayOfWeek", 1, 7)
		}
		jan4 := daysFromCivil(t.year, 1, 4)
		days = jan4 - (isoDayOfWeek(jan4) - 1) + (t.week-1)*7 + t.dayOfWeek - 1
	}
	switch {
	case t.hour > 23:
		return 0, rangeError(s, t.hour, "hourOfDay", 0, 23)
	case t.minute > 59:
		return 0, rangeError(s, t.minute, "minuteOfHour", 0, 59)
	case t.second > 59:
		return 0, rangeError(s, t.second, "secondOfMinute", 0, 59)
	}
	ms := t.hour*3_600_000 + t.minute*60_000 + t.second*1000 + t.fraction
	if days > (math.MaxInt64-ms)/86_400_000 || days < (math.MinInt64+86_400_000)/86_400_000 {
		return 0, fmt.Errorf(`Cannot parse "%s": instant out of range`, s)
	}
	ms += days * 86_400_000
	if t.hasOffset {
		ms -= t.offset
	}
	return ms, nil
}

func isLeap(y int64) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func daysInMonth(y, m int64) int64 {
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil is the number of days from 1970-01-01 to y-m-d in the
// proleptic Gregorian calendar (Joda's ISO chronology).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// isoDayOfWeek is 1 (Monday) to 7 (Sunday) for days since 1970-01-01, a
// Thursday.
func isoDayOfWeek(days int64) int64 {
	d := (days + 3) % 7
	if d < 0 {
		d += 7
	}
	return d + 1
}

// isoWeeksInYear is 53 when the year starts on a Thursday, or on a
// Wednesday in a leap year, else 52.
func isoWeeksInYear(y int64) int64 {
	jan1 := isoDayOfWeek(daysFromCivil(y, 1, 1))
	if jan1 == 4 || (jan1 == 3 && isLeap(y)) {
		return 53
	}
	return 52
}
