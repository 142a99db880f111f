package sink

import "time"

// PostgreSQL's text input for dates and times, written without fmt: the
// renderers run once per column of every row.

// appendDate writes YYYY-MM-DD and reports whether the year is BC
// (PostgreSQL wants " BC" after the whole value, not after the date).
func appendDate(dst []byte, t time.Time) ([]byte, bool) {
	y, m, d := t.Date()
	bc := y <= 0
	if bc {
		y = 1 - y // year 0 is 1 BC
	}
	if y < 10000 {
		dst = appendPadded(dst, y, 4)
	} else {
		dst = appendPadded(dst, y, 1)
	}
	dst = append(dst, '-')
	dst = appendPadded(dst, int(m), 2)
	dst = append(dst, '-')
	return appendPadded(dst, d, 2), bc
}

// appendClock writes HH:MM:SS[.fraction] (fraction without trailing zeros).
func appendClock(dst []byte, h, m, s, nanos int) []byte {
	dst = appendPadded(dst, h, 2)
	dst = append(dst, ':')
	dst = appendPadded(dst, m, 2)
	dst = append(dst, ':')
	dst = appendPadded(dst, s, 2)
	if nanos > 0 {
		dst = append(dst, '.')
		n := len(dst)
		dst = appendPadded(dst, nanos, 9)
		end := len(dst)
		for end > n+1 && dst[end-1] == '0' {
			end--
		}
		dst = dst[:end]
	}
	return dst
}

// appendOffset writes +HH:MM (or +HH:MM:SS for historical offsets).
func appendOffset(dst []byte, secs int) []byte {
	if secs < 0 {
		dst = append(dst, '-')
		secs = -secs
	} else {
		dst = append(dst, '+')
	}
	dst = appendPadded(dst, secs/3600, 2)
	dst = append(dst, ':')
	dst = appendPadded(dst, secs/60%60, 2)
	if secs%60 != 0 {
		dst = append(dst, ':')
		dst = appendPadded(dst, secs%60, 2)
	}
	return dst
}

// appendDateTime writes t's wall clock in its location, with the offset
// when withOffset (a timestamptz reads the instant; a timestamp column
// ignores the offset and keeps the wall clock).
func appendDateTime(dst []byte, t time.Time, withOffset bool) []byte {
	dst, bc := appendDate(dst, t)
	dst = append(dst, ' ')
	h, m, s := t.Clock()
	dst = appendClock(dst, h, m, s, t.Nanosecond())
	if withOffset {
		_, off := t.Zone()
		dst = appendOffset(dst, off)
	}
	if bc {
		dst = append(dst, " BC"...)
	}
	return dst
}

// appendTimeOfDay writes a duration since midnight as a time of day;
// PostgreSQL's time type takes 24:00:00.
func appendTimeOfDay(dst []byte, d time.Duration) []byte {
	if d < 0 {
		d = 0
	}
	ns := int64(d)
	h := ns / int64(time.Hour)
	ns -= h * int64(time.Hour)
	m := ns / int64(time.Minute)
	ns -= m * int64(time.Minute)
	s := ns / int64(time.Second)
	ns -= s * int64(time.Second)
	return appendClock(dst, int(h), int(m), int(s), int(ns))
}

func appendPadded(dst []byte, v, width int) []byte {
	var b [20]byte
	i := len(b)
	for v >= 10 {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
	}
	i--
	b[i] = byte('0' + v)
	for n := len(b) - i; n < width; n++ {
		dst = append(dst, '0')
	}
	return append(dst, b[i:]...)
}
