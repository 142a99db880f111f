package transforms

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// javaDateFormat is java.text.SimpleDateFormat in the UTC zone and the
// US locale, as TimestampConverter ("format") and TimestampRouter
// ("timestamp.format") use it. It compiles the pattern once into
// literal and field tokens, formats any time.Time, and parses as Java's
// lenient parser does: numeric fields that abut another numeric field
// take exactly their width ("yyyyMMdd"), others take every digit; out of
// range values roll over (month 13 is January of the next year); text
// after the last field is ignored.
//
// Supported letters: G y Y M L d D F E u a H k K h m s S w W z Z X.
type javaDateFormat struct {
	pattern string
	tokens  []dateToken
}

type dateToken struct {
	letter  byte // 0 for a literal
	count   int
	literal string
}

const dateLetters = "GyYMLdDFEuaHkKhmsSwWzZX"

func compileJavaDateFormat(pattern string) (*javaDateFormat, error) {
	f := &javaDateFormat{pattern: pattern}
	lit := func(s string) {
		if n := len(f.tokens); n > 0 && f.tokens[n-1].letter == 0 {
			f.tokens[n-1].literal += s
			return
		}
		f.tokens = append(f.tokens, dateToken{literal: s})
	}
	for i := 0; i < len(pattern); {
		c := pattern[i]
		switch {
		case c == '\'':
			if i+1 < len(pattern) && pattern[i+1] == '\'' {
				lit("'")
				i += 2
				continue
			}
			end := i + 1
			var b strings.Builder
			for {
				if end >= len(pattern) {
					return nil, fmt.Errorf("Unterminated quote")
				}
				if pattern[end] == '\'' {
					if end+1 < len(pattern) && pattern[end+1] == '\'' {
						b.WriteByte('\'')
						end += 2
						continue
					}
					break
				}
				b.WriteByte(pattern[end])
				end++
			}
			lit(b.String())
			i = end + 1
		case (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
			if !strings.ContainsRune(dateLetters, rune(c)) {
				return nil, fmt.Errorf("Illegal pattern character '%c'", c)
			}
			n := 1
			for i+n < len(pattern) && pattern[i+n] == c {
				n++
			}
			f.tokens = append(f.tokens, dateToken{letter: c, count: n})
			i += n
		default:
			lit(string(c))
			i++
		}
	}
	return f, nil
}

var (
	longMonths  = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
	shortMonths = []string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}
	longDays    = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
	shortDays   = []string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}
)

func pad(n, width int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return s
	}
	for len(s) < width {
		s = "0" + s
	}
	return s
}

// usWeek numbers weeks as Java's GregorianCalendar in the US locale:
// weeks start on Sunday and week 1 is the one holding the 1st.
func usWeek(day, weekdayOfFirst int) int { return (day-1+weekdayOfFirst)/7 + 1 }

// usWeekOfYear is GregorianCalendar's WEEK_OF_YEAR in the US locale;
// December days in the week holding next January 1st are in week 1.
func usWeekOfYear(t time.Time) int {
	jan1 := time.Date(t.Year(), 1, 1, 0, 0, 0, 0, time.UTC)
	w := usWeek(t.YearDay(), int(jan1.Weekday()))
	next := time.Date(t.Year()+1, 1, 1, 0, 0, 0, 0, time.UTC)
	midnight := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	if wd := int(next.Weekday()); wd != 0 && int(next.Sub(midnight).Hours()/24) <= wd {
		w = 1
	}
	return w
}

// format renders t (in UTC) with the pattern.
func (f *javaDateFormat) format(t time.Time) string {
	t = t.UTC()
	var b strings.Builder
	for _, tok := range f.tokens {
		if tok.letter == 0 {
			b.WriteString(tok.literal)
			continue
		}
		n := tok.count
		switch tok.letter {
		case 'G':
			if t.Year() > 0 {
				b.WriteString("AD")
			} else {
				b.WriteString("BC")
			}
		case 'y', 'Y':
			y := t.Year()
			if tok.letter == 'Y' && t.Month() == 12 && usWeekOfYear(t) == 1 {
				y++ // the week year of late December days in week 1
			}
			if y <= 0 {
				y = 1 - y
			}
			if n == 2 {
				b.WriteString(pad(y%100, 2))
			} else {
				b.WriteString(pad(y, n))
			}
		case 'M', 'L':
			switch {
			case n >= 4:
				b.WriteString(longMonths[t.Month()-1])
			case n == 3:
				b.WriteString(shortMonths[t.Month()-1])
			default:
				b.WriteString(pad(int(t.Month()), n))
			}
		case 'd':
			b.WriteString(pad(t.Day(), n))
		case 'D':
			b.WriteString(pad(t.YearDay(), n))
		case 'F':
			b.WriteString(pad((t.Day()-1)/7+1, n))
		case 'E':
			if n >= 4 {
				b.WriteString(longDays[t.Weekday()])
			} else {
				b.WriteString(shortDays[t.Weekday()])
			}
		case 'u':
			wd := int(t.Weekday())
			if wd == 0 {
				wd = 7
			}
			b.WriteString(pad(wd, n))
		case 'a':
			if t.Hour() < 12 {
				b.WriteString("AM")
			} else {
				b.WriteString("PM")
			}
		case 'H':
			b.WriteString(pad(t.Hour(), n))
		case 'k':
			h := t.Hour()
			if h == 0 {
				h = 24
			}
			b.WriteString(pad(h, n))
		case 'K':
			b.WriteString(pad(t.Hour()%12, n))
		case 'h':
			h := t.Hour() % 12
			if h == 0 {
				h = 12
			}
			b.WriteString(pad(h, n))
		case 'm':
			b.WriteString(pad(t.Minute(), n))
		case 's':
			b.WriteString(pad(t.Second(), n))
		case 'S':
			b.WriteString(pad(t.Nanosecond()/1e6, n))
		case 'w':
			b.WriteString(pad(usWeekOfYear(t), n))
		case 'W':
			first := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
			b.WriteString(pad(usWeek(t.Day(), int(first.Weekday())), n))
		case 'z':
			if n >= 4 {
				b.WriteString("Coordinated Universal Time")
			} else {
				b.WriteString("UTC")
			}
		case 'Z':
			b.WriteString("+0000")
		case 'X':
			b.WriteString("Z")
		}
	}
	return b.String()
}

func isNumericLetter(c byte, count int) bool {
	switch c {
	case 'y', 'Y', 'd', 'D', 'F', 'u', 'H', 'k', 'K', 'h', 'm', 's', 'S', 'w', 'W':
		return true
	case 'M', 'L':
		return count <= 2
	}
	return false
}

// parse reads a time from s, failing when no field could be read at
// all or a field or literal does not match.
func (f *javaDateFormat) parse(s string) (time.Time, error) {
	fail := func() (time.Time, error) {
		return time.Time{}, fmt.Errorf("Unparseable date: %q", s)
	}
	year, month, day := 1970, 1, 1
	hour, minute, second, milli := 0, 0, 0, 0
	yearDay := -1
	pm, hasAmPm := false, false
	hour12 := -1
	offset := 0
	bc := false
	pos := 0
	for i, tok := range f.tokens {
		if tok.letter == 0 {
			if !strings.HasPrefix(s[pos:], tok.literal) {
				// Java tolerates whitespace differences in literals only
				// loosely; an exact match is required here.
				return fail()
			}
			pos += len(tok.literal)
			continue
		}
		if isNumericLetter(tok.letter, tok.count) {
			abut := i+1 < len(f.tokens) && f.tokens[i+1].letter != 0 && isNumericLetter(f.tokens[i+1].letter, f.tokens[i+1].count)
			for !abut && pos < len(s) && s[pos] == ' ' {
				pos++
			}
			end := pos
			if end < len(s) && (s[end] == '-' || s[end] == '+') && !abut {
				end++
			}
			for end < len(s) && s[end] >= '0' && s[end] <= '9' && (!abut || end-pos < tok.count) {
				end++
			}
			n, err := strconv.Atoi(s[pos:end])
			if err != nil {
				return fail()
			}
			digits := end - pos
			pos = end
			switch tok.letter {
			case 'y', 'Y':
				year = n
				if tok.count <= 2 && digits == 2 {
					year = twoDigitYear(n)
				}
			case 'M', 'L':
				month = n
			case 'd':
				day = n
			case 'D':
				yearDay = n
			case 'H':
				hour = n
			case 'k':
				hour = n % 24
			case 'K':
				hour12 = n
			case 'h':
				hour12 = n % 12
			case 'm':
				minute = n
			case 's':
				second = n
			case 'S':
				milli = n
			}
			continue
		}
		rest := s[pos:]
		switch tok.letter {
		case 'M', 'L':
			k, l := matchName(rest, longMonths, shortMonths)
			if k < 0 {
				return fail()
			}
			month, pos = k+1, pos+l
		case 'E':
			k, l := matchName(rest, longDays, shortDays)
			if k < 0 {
				return fail()
			}
			pos += l
		case 'a':
			k, l := matchName(rest, []string{"AM", "PM"}, nil)
			if k < 0 {
				return fail()
			}
			pm, hasAmPm, pos = k == 1, true, pos+l
		case 'G':
			k, l := matchName(rest, []string{"AD", "BC"}, nil)
			if k < 0 {
				return fail()
			}
			bc, pos = k == 1, pos+l
		case 'z', 'Z', 'X':
			off, l, ok := parseZone(rest)
			if !ok {
				return fail()
			}
			offset, pos = off, pos+l
		}
	}
	if pos == 0 && len(f.tokens) > 0 {
		return fail()
	}
	if hour12 >= 0 {
		hour = hour12
		if hasAmPm && pm {
			hour += 12
		}
	} else if hasAmPm && pm && hour < 12 {
		hour += 12
	}
	if bc {
		year = 1 - year
	}
	t := time.Date(year, time.Month(month), day, hour, minute, second, 0, time.UTC)
	if yearDay >= 0 {
		t = time.Date(year, 1, yearDay, hour, minute, second, 0, time.UTC)
	}
	t = t.Add(time.Duration(milli) * time.Millisecond)
	return t.Add(-time.Duration(offset) * time.Second), nil
}

// twoDigitYear is SimpleDateFormat's default century: the year within
// 80 years before and 20 years after now.
func twoDigitYear(n int) int {
	start := time.Now().UTC().Year() - 80
	y := start/100*100 + n
	if y < start {
		y += 100
	}
	return y
}

func matchName(s string, long, short []string) (int, int) {
	for _, names := range [][]string{long, short} {
		for i, n := range names {
			if len(s) >= len(n) && strings.EqualFold(s[:len(n)], n) {
				return i, len(n)
			}
		}
	}
	return -1, 0
}

// parseZone reads "Z", "UTC", "GMT", "+hh", "+hhmm", "+hh:mm" (optionally
// after GMT/UTC) and returns the offset in seconds east of UTC.
func parseZone(s string) (int, int, bool) {
	if strings.HasPrefix(s, "Z") {
		return 0, 1, true
	}
	l := 0
	for _, p := range []string{"Coordinated Universal Time", "UTC", "GMT"} {
		if strings.HasPrefix(s, p) {
			l = len(p)
			break
		}
	}
	rest := s[l:]
	if rest == "" || (rest[0] != '+' && rest[0] != '-') {
		return 0, l, l > 0
	}
	sign := 1
	if rest[0] == '-' {
		sign = -1
	}
	digits := func(str string, n int) (int, bool) {
		if len(str) < n {
			return 0, false
		}
		for _, c := range str[:n] {
			if !unicode.IsDigit(c) {
				return 0, false
			}
		}
		v, _ := strconv.Atoi(str[:n])
		return v, true
	}
	hh, ok := digits(rest[1:], 2)
	if !ok {
		return 0, 0, false
	}
	used := 3
	mm := 0
	if len(rest) > 3 && rest[3] == ':' {
		if m, ok := digits(rest[4:], 2); ok {
			mm, used = m, 6
		}
	} else if m, ok := digits(rest[3:], 2); ok {
		mm, used = m, 5
	}
	return sign * (hh*3600 + mm*60), l + used, true
}
