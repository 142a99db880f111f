package cdc

import (
	"errors"
	"math"
	"strconv"
)

// Dates, times and timestamps in PostgreSQL's ISO output (DateStyle=ISO,
// TimeZone=UTC), turned into what Debezium's converters make of them.
// Calendar arithmetic is proleptic Gregorian with astronomical years (1 BC
// is year 0), as java.time's.

const (
	nanosPerSecond = int64(1_000_000_000)
	secondsPerDay  = int64(86_400)
	nanosPerDay    = secondsPerDay * nanosPerSecond
)

var errSyntax = errors.New("malformed value")

// instant is a point in time: seconds since the epoch (floored) and the
// nanoseconds past them, as java.time.Instant.
type instant struct {
	sec  int64
	nsec int64 // 0..999_999_999
}

// Debezium's stand-ins for PostgreSQL's ±infinity timestamps: pgjdbc's
// DATE_POSITIVE_INFINITY / DATE_NEGATIVE_INFINITY read as microseconds
// (PostgresValueConverter.POSITIVE_INFINITY_INSTANT and its negative).
var (
	posInfinityInstant = instantFromMicros(9223372036825200000)
	negInfinityInstant = instantFromMicros(-9223372036832400000)
)

// Debezium's stand-ins for ±infinity dates, LocalDate.parse("-5877611-06-21")
// and "-5877611-06-22": their epoch days cast to int are Integer.MAX_VALUE
// and Integer.MIN_VALUE.
var (
	posInfinityDays = daysFromCivil(-5877611, 6, 21)
	negInfinityDays = daysFromCivil(-5877611, 6, 22)
)

func instantFromMicros(us int64) instant {
	return instant{sec: floorDiv(us, 1_000_000), nsec: floorMod(us, 1_000_000) * 1000}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }

// daysFromCivil is the epoch day of a proleptic Gregorian date.
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := floorDiv(y, 400)
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// civilFromDays is the proleptic Gregorian date of an epoch day.
func civilFromDays(z int64) (y, m, d int64) {
	z += 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	if mp < 10 {
		m = mp + 3
	} else {
		m = mp - 9
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

func daysInMonth(y, m int64) int64 {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// cursor reads a value left to right.
type cursor struct {
	b []byte
	i int
}

func (c *cursor) done() bool { return c.i >= len(c.b) }

func (c *cursor) peek() byte {
	if c.i < len(c.b) {
		return c.b[c.i]
	}
	return 0
}

func (c *cursor) eat(ch byte) bool {
	if c.peek() == ch && c.i < len(c.b) {
		c.i++
		return true
	}
	return false
}

// digits reads between min and max decimal digits.
func (c *cursor) digits(min, max int) (int64, bool) {
	start := c.i
	var n int64
	for c.i < len(c.b) && c.i-start < max && c.b[c.i] >= '0' && c.b[c.i] <= '9' {
		n = n*10 + int64(c.b[c.i]-'0')
		c.i++
	}
	return n, c.i-start >= min
}

// fraction reads ".ddd" (up to 9 digits) as nanoseconds; none gives 0.
func (c *cursor) fraction() (int64, bool) {
	if !c.eat('.') {
		return 0, true
	}
	start := c.i
	n, ok := c.digits(1, 9)
	if !ok {
		return 0, false
	}
	for k := c.i - start; k < 9; k++ {
		n *= 10
	}
	return n, true
}

// suffix reads a literal.
func (c *cursor) suffix(s string) bool {
	if len(c.b)-c.i >= len(s) && string(c.b[c.i:c.i+len(s)]) == s {
		c.i += len(s)
		return true
	}
	return false
}

// date reads "Y...Y-MM-DD" (4 to 10 year digits, as Debezium's
// formatter) and returns the year of era, month and day.
func (c *cursor) date() (y, m, d int64, ok bool) {
	if y, ok = c.digits(4, 10); !ok || !c.eat('-') {
		return 0, 0, 0, false
	}
	if m, ok = c.digits(2, 2); !ok || !c.eat('-') {
		return 0, 0, 0, false
	}
	if d, ok = c.digits(2, 2); !ok {
		return 0, 0, 0, false
	}
	return y, m, d, m >= 1 && m <= 12 && d >= 1 && y >= 1
}

// era reads an optional " BC" and turns the year of era into a proleptic
// year.
func (c *cursor) era(yoe int64) int64 {
	if c.suffix(" BC") {
		return 1 - yoe
	}
	c.suffix(" AD")
	return yoe
}

// clock reads "HH:MM:SS[.f]" as nanoseconds of the day; hour 24 is
// accepted only when allow24 (PostgreSQL's time type has 24:00:00).
func (c *cursor) clock(allow24 bool) (int64, bool) {
	h, ok := c.digits(2, 2)
	if !ok || !c.eat(':') {
		return 0, false
	}
	mi, ok := c.digits(2, 2)
	if !ok {
		return 0, false
	}
	var s int64
	if c.eat(':') {
		if s, ok = c.digits(2, 2); !ok {
			return 0, false
		}
	}
	ns, ok := c.fraction()
	if !ok || mi > 59 || s > 59 || h > 24 || (h == 24 && (!allow24 || mi != 0 || s != 0 || ns != 0)) {
		return 0, false
	}
	return ((h*60+mi)*60+s)*nanosPerSecond + ns, true
}

// offset reads "+HH", "+HH:MM" and, when withSeconds, "+HH:MM:SS", in
// seconds east of UTC.
func (c *cursor) offset(withSeconds bool) (int64, bool) {
	sign := int64(1)
	switch {
	case c.eat('+'):
	case c.eat('-'):
		sign = -1
	default:
		return 0, false
	}
	h, ok := c.digits(2, 2)
	if !ok {
		return 0, false
	}
	var m, s int64
	if c.eat(':') {
		if m, ok = c.digits(2, 2); !ok {
			return 0, false
		}
		if withSeconds && c.eat(':') {
			if s, ok = c.digits(2, 2); !ok {
				return 0, false
			}
		}
	}
	if h > 18 || m > 59 || s > 59 {
		return 0, false
	}
	return sign * (h*3600 + m*60 + s), true
}

// parseDate reads a date column's text as an epoch day; ±infinity give
// Debezium's stand-ins.
func parseDate(b []byte) (int64, error) {
	switch string(b) {
	case "infinity":
		return posInfinityDays, nil
	case "-infinity":
		return negInfinityDays, nil
	}
	c := cursor{b: b}
	yoe, m, d, ok := c.date()
	if !ok {
		return 0, errSyntax
	}
	y := c.era(yoe)
	if !c.done() || d > daysInMonth(y, m) {
		return 0, errSyntax
	}
	return daysFromCivil(y, m, d), nil
}

// parseTimestamp reads a timestamp column's text ("YYYY-MM-DD
// HH:MM:SS[.f][ BC]") as the instant of that local time in UTC.
func parseTimestamp(b []byte) (instant, error) {
	switch string(b) {
	case "infinity":
		return posInfinityInstant, nil
	case "-infinity":
		return negInfinityInstant, nil
	}
	c := cursor{b: b}
	yoe, m, d, ok := c.date()
	if !ok || !c.eat(' ') {
		return instant{}, errSyntax
	}
	nod, ok := c.clock(false)
	if !ok {
		return instant{}, errSyntax
	}
	y := c.era(yoe)
	if !c.done() || d > daysInMonth(y, m) {
		return instant{}, errSyntax
	}
	return instant{sec: daysFromCivil(y, m, d)*secondsPerDay + nod/nanosPerSecond, nsec: nod % nanosPerSecond}, nil
}

// parseTimestamptz reads a timestamptz column's text ("YYYY-MM-DD
// HH:MM:SS[.f]+HH[:MM[:SS]][ BC]") as an instant. inf is +1 or -1 for
// ±infinity.
func parseTimestamptz(b []byte) (t instant, inf int, err error) {
	switch string(b) {
	case "infinity":
		return instant{}, 1, nil
	case "-infinity":
		return instant{}, -1, nil
	}
	c := cursor{b: b}
	yoe, m, d, ok := c.date()
	if !ok || !c.eat(' ') {
		return instant{}, 0, errSyntax
	}
	nod, ok := c.clock(false)
	if !ok {
		return instant{}, 0, errSyntax
	}
	off, ok := c.offset(true)
	if !ok {
		return instant{}, 0, errSyntax
	}
	y := c.era(yoe)
	if !c.done() || d > daysInMonth(y, m) {
		return instant{}, 0, errSyntax
	}
	sec := daysFromCivil(y, m, d)*secondsPerDay + nod/nanosPerSecond - off
	return instant{sec: sec, nsec: nod % nanosPerSecond}, 0, nil
}

// parseTime reads a time column's text as nanoseconds since midnight, as
// Debezium's Strings.asDuration (24:00:00 is a whole day).
func parseTime(b []byte) (int64, error) {
	c := cursor{b: b}
	nod, ok := c.clock(true)
	if !ok || !c.done() {
		return 0, errSyntax
	}
	return nod, nil
}

// parseTimetz reads a timetz column's text and shifts it to UTC,
// returning nanoseconds of the UTC day. Debezium parses it with
// ISO_LOCAL_TIME and an "+HH:mm" offset, so 24:00:00 and offsets with
// seconds fail there too.
func parseTimetz(b []byte) (int64, error) {
	c := cursor{b: b}
	nod, ok := c.clock(false)
	if !ok {
		return 0, errSyntax
	}
	off, ok := c.offset(false)
	if !ok || !c.done() {
		return 0, errSyntax
	}
	return floorMod(nod-off*nanosPerSecond, nanosPerDay), nil
}

// The epoch counts Debezium's temporal types carry.

// epochMillis is Instant.toEpochMilli.
func (t instant) epochMillis() int64 { return t.sec*1000 + t.nsec/1_000_000 }

// epochMicros is Debezium's Conversions.toEpochMicros: TimeUnit
// saturates the seconds part, then the sum wraps as Java's long does.
func (t instant) epochMicros() int64 { return satMul(t.sec, 1_000_000) + t.nsec/1000 }

// epochNanos is NanoTimestamp.toEpochNanos: out of the long range it is
// an error (Debezium's converter then leaves the value null).
func (t instant) epochNanos() (int64, bool) {
	day := floorDiv(t.sec, secondsPerDay)
	nod := floorMod(t.sec, secondsPerDay)*nanosPerSecond + t.nsec
	if day > math.MaxInt64/nanosPerDay || day < math.MinInt64/nanosPerDay {
		return 0, false
	}
	n := day * nanosPerDay
	if n > 0 && nod > math.MaxInt64-n {
		return 0, false
	}
	return n + nod, true
}

func satMul(a, b int64) int64 {
	if a > math.MaxInt64/b {
		return math.MaxInt64
	}
	if a < math.MinInt64/b {
		return math.MinInt64
	}
	return a * b
}

// Formatting as java.time's ISO formatters do.

// appendYear writes a year as ISO_LOCAL_DATE: four digits at least, a
// sign when negative or longer than four digits.
func appendYear(dst []byte, y int64) []byte {
	switch {
	case y > 9999:
		dst = append(dst, '+')
	case y < 0:
		dst = append(dst, '-')
		y = -y
	}
	return appendPadded(dst, y, 4)
}

func appendPadded(dst []byte, n int64, width int) []byte {
	var buf [20]byte
	s := strconv.AppendInt(buf[:0], n, 10)
	for i := len(s); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

// appendLocalDate writes YYYY-MM-DD of an epoch day.
func appendLocalDate(dst []byte, days int64) []byte {
	y, m, d := civilFromDays(days)
	dst = appendYear(dst, y)
	dst = append(dst, '-')
	dst = appendPadded(dst, m, 2)
	dst = append(dst, '-')
	return appendPadded(dst, d, 2)
}

// appendClock writes HH:mm:ss of nanoseconds of the day, then the
// fraction: width digits exactly when width > 0, else as
// ISO_LOCAL_TIME does (none when zero, trailing zeros dropped).
func appendClock(dst []byte, nod int64, width int) []byte {
	s := nod / nanosPerSecond
	ns := nod % nanosPerSecond
	dst = appendPadded(dst, s/3600, 2)
	dst = append(dst, ':')
	dst = appendPadded(dst, s/60%60, 2)
	dst = append(dst, ':')
	dst = appendPadded(dst, s%60, 2)
	if width > 0 {
		dst = append(dst, '.')
		var buf [9]byte
		frac := appendPadded(buf[:0], ns, 9)
		return append(dst, frac[:width]...)
	}
	if ns == 0 {
		return dst
	}
	var buf [9]byte
	frac := appendPadded(buf[:0], ns, 9)
	n := len(frac)
	for n > 0 && frac[n-1] == '0' {
		n--
	}
	dst = append(dst, '.')
	return append(dst, frac[:n]...)
}

// appendInstant writes an instant as ISO_OFFSET_DATE_TIME at UTC (width
// 0) or as Debezium's ZonedTimestamp formatter of fixed fraction width.
func appendInstant(dst []byte, t instant, width int) []byte {
	days := floorDiv(t.sec, secondsPerDay)
	nod := floorMod(t.sec, secondsPerDay)*nanosPerSecond + t.nsec
	dst = appendLocalDate(dst, days)
	dst = append(dst, 'T')
	dst = appendClock(dst, nod, width)
	return append(dst, 'Z')
}

// zonedWidth is the fraction width Debezium's ZonedTimestamp gives a
// timestamptz of the given scale (0 or beyond 9: ISO's own).
func zonedWidth(scale int32) int {
	if scale <= 0 || scale > 9 {
		return 0
	}
	return int(scale)
}

// Intervals, as pgjdbc's PGInterval reads IntervalStyle=postgres output.

type pgInterval struct {
	years, months, days, hours, minutes int32
	wholeSeconds, microSeconds          int32
}

// seconds is PGInterval.getSeconds.
func (iv pgInterval) seconds() float64 {
	return float64(iv.wholeSeconds) + float64(iv.microSeconds)/1e6
}

// parseInterval reads "1 year 2 mons -3 days 04:05:06.5" and the like as
// PGInterval.setValue does.
func parseInterval(b []byte) (pgInterval, error) {
	var iv pgInterval
	var hours, minutes int32
	var years, months, days int32
	seconds := 0.0
	var valueToken []byte
	haveValue := false
	i, n := 0, 0
	for {
		// Tokens are separated by spaces; '+' counts as a space, as in
		// PGInterval (it replaces '+' with ' ' before tokenizing).
		for i < len(b) && (b[i] == ' ' || b[i] == '+' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r' || b[i] == '\f') {
			i++
		}
		if i >= len(b) {
			break
		}
		start := i
		for i < len(b) && !(b[i] == ' ' || b[i] == '+' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r' || b[i] == '\f') {
			i++
		}
		tok := b[start:i]
		n++
		if n%2 == 1 {
			colon := indexByte(tok, ':')
			if colon < 0 {
				valueToken, haveValue = tok, true
				continue
			}
			neg := tok[0] == '-'
			off := 0
			if neg {
				off = 1
			}
			h, err := javaParseInt(tok[off:colon])
			if err != nil || colon+3 > len(tok) {
				return iv, errSyntax
			}
			mi, err := javaParseInt(tok[colon+1 : colon+3])
			if err != nil {
				return iv, errSyntax
			}
			var s float64
			if c2 := indexByte(tok[colon+1:], ':'); c2 >= 0 {
				if s, err = strconv.ParseFloat(string(tok[colon+1+c2+1:]), 64); err != nil {
					return iv, errSyntax
				}
			}
			if neg {
				h, mi, s = -h, -mi, -s
			}
			hours, minutes, seconds = h, mi, s
			haveValue = false
			continue
		}
		var err error
		lower := toLowerASCII(tok)
		switch {
		case hasPrefix(lower, "year"):
			years, err = nullSafeInt(valueToken, haveValue)
		case hasPrefix(lower, "mon"):
			months, err = nullSafeInt(valueToken, haveValue)
		case hasPrefix(lower, "day"):
			days, err = nullSafeInt(valueToken, haveValue)
		case hasPrefix(lower, "hour"):
			hours, err = nullSafeInt(valueToken, haveValue)
		case hasPrefix(lower, "min"):
			minutes, err = nullSafeInt(valueToken, haveValue)
		case hasPrefix(lower, "sec"):
			if haveValue {
				seconds, err = strconv.ParseFloat(string(valueToken), 64)
			}
		}
		if err != nil {
			return iv, errSyntax
		}
	}
	iv.years, iv.months, iv.days, iv.hours, iv.minutes = years, months, days, hours, minutes
	// PGInterval.setSeconds keeps whole seconds and rounded microseconds.
	micros := seconds * 1e6
	if math.IsNaN(micros) || micros > math.MaxInt64 || micros < math.MinInt64 {
		return iv, errSyntax
	}
	total := javaRound(micros)
	iv.wholeSeconds = int32(total / 1_000_000)
	iv.microSeconds = int32(total % 1_000_000)
	return iv, nil
}

func nullSafeInt(tok []byte, have bool) (int32, error) {
	if !have {
		return 0, nil
	}
	return javaParseInt(tok)
}

// javaParseInt is Integer.parseInt: an optional sign and decimal digits
// within the int range.
func javaParseInt(b []byte) (int32, error) {
	if len(b) == 0 {
		return 0, errSyntax
	}
	s := b
	if s[0] == '+' || s[0] == '-' {
		s = s[1:]
	}
	if len(s) == 0 {
		return 0, errSyntax
	}
	for _, ch := range s {
		if ch < '0' || ch > '9' {
			return 0, errSyntax
		}
	}
	n, err := strconv.ParseInt(string(b), 10, 32)
	if err != nil {
		return 0, errSyntax
	}
	return int32(n), nil
}

// javaRound is Math.round: the closest long, ties toward positive
// infinity, saturating.
func javaRound(x float64) int64 {
	f := math.Floor(x)
	if x-f >= 0.5 {
		f++
	}
	return javaLong(f)
}

// javaLong is Java's (long) cast of a double: toward zero, saturating,
// NaN to 0.
func javaLong(x float64) int64 {
	switch {
	case math.IsNaN(x):
		return 0
	case x >= 9.223372036854775807e18:
		return math.MaxInt64
	case x <= -9.223372036854775808e18:
		return math.MinInt64
	}
	return int64(x)
}

// microDuration is Debezium's MicroDuration.durationMicros with
// DAYS_PER_MONTH_AVG, in the same double arithmetic (each step rounded:
// the explicit conversions keep Go from fusing multiply-adds).
func (iv pgInterval) microDuration() int64 {
	const daysPerMonthAvg = 365.25 / 12.0
	months := iv.years*12 + iv.months // int arithmetic, wrapping as Java's
	numberOfDays := float64(float64(months)*daysPerMonthAvg) + float64(iv.days)
	x := float64(float64(numberOfDays*24) + float64(iv.hours))
	x = float64(float64(x*60) + float64(iv.minutes))
	numberOfSeconds := float64(float64(x*60) + iv.seconds())
	return javaLong(float64(numberOfSeconds*1e6) + 0)
}

// isoString is Debezium's Interval.toIsoString of a PGInterval:
// PnYnMnDTnHnMnS, the seconds as BigDecimal.valueOf(double) without
// trailing zeros.
func (iv pgInterval) isoString() string {
	dst := make([]byte, 0, 32)
	dst = append(dst, 'P')
	dst = strconv.AppendInt(dst, int64(iv.years), 10)
	dst = append(dst, 'Y')
	dst = strconv.AppendInt(dst, int64(iv.months), 10)
	dst = append(dst, 'M')
	dst = strconv.AppendInt(dst, int64(iv.days), 10)
	dst = append(dst, 'D', 'T')
	dst = strconv.AppendInt(dst, int64(iv.hours), 10)
	dst = append(dst, 'H')
	dst = strconv.AppendInt(dst, int64(iv.minutes), 10)
	dst = append(dst, 'M')
	dst = append(dst, plainSeconds(iv.seconds())...)
	return string(append(dst, 'S'))
}

// plainSeconds is BigDecimal.valueOf(s) cut to 9 decimals,
// stripTrailingZeros().toPlainString(). Go's shortest representation
// equals Java's Double.toString for the microsecond values intervals
// hold.
func plainSeconds(s float64) string {
	str := strconv.FormatFloat(s, 'f', -1, 64)
	if dot := indexByte([]byte(str), '.'); dot >= 0 {
		if len(str)-dot-1 > 9 {
			str = str[:dot+10]
		}
		for str[len(str)-1] == '0' {
			str = str[:len(str)-1]
		}
		str = trimSuffix(str, ".")
	}
	if str == "-0" {
		return "0"
	}
	return str
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

func hasPrefix(b []byte, p string) bool { return len(b) >= len(p) && string(b[:len(p)]) == p }

func trimSuffix(s, suf string) string {
	if len(s) >= len(suf) && s[len(s)-len(suf):] == suf {
		return s[:len(s)-len(suf)]
	}
	return s
}

func toLowerASCII(b []byte) []byte {
	for _, c := range b {
		if c >= 'A' && c <= 'Z' {
			out := make([]byte, len(b))
			for i, c := range b {
				if c >= 'A' && c <= 'Z' {
					c += 'a' - 'A'
				}
				out[i] = c
			}
			return out
		}
	}
	return b
}
