package partitioner

import (
	"errors"
	"math"
	"time"

	// Zone names must resolve in a container without /usr/share/zoneinfo
	// too: a sink that cannot load its timezone cannot name any object.
	_ "time/tzdata"
)

// Zone resolves a timezone setting as Joda-Time's DateTimeZone.forID
// does (Confluent's partitioners and scheduled rotation use it): "UTC",
// an IANA name such as "America/Los_Angeles" (case-sensitive), or a fixed
// offset "[+-]hh", "[+-]hh:mm", "[+-]hhmm", "[+-]hh:mm:ss"; an offset of
// zero is UTC. The error message is Joda's.
func Zone(id string) (*time.Location, error) {
	z, err := loadZone(id)
	if err != nil {
		return nil, err
	}
	return z.loc, nil
}

// zone is a resolved timezone with the two queries Joda's bucketing
// makes: the offset at an instant and the next transition after it.
type zone struct {
	id  string // as Joda names it: the ID given, or the normalized offset
	loc *time.Location
}

func zoneNotRecognised(id string) error {
	return errors.New("The datetime zone id '" + id + "' is not recognised")
}

func loadZone(id string) (*zone, error) {
	if id == "UTC" {
		return &zone{id: "UTC", loc: time.UTC}, nil
	}
	if id != "" && (id[0] == '+' || id[0] == '-') {
		off, ok := parseFixedOffset(id)
		if !ok {
			return nil, zoneNotRecognised(id)
		}
		if off == 0 {
			return &zone{id: "UTC", loc: time.UTC}, nil
		}
		name := printOffset(off)
		return &zone{id: name, loc: time.FixedZone(name, off)}, nil
	}
	// Go's "Local" and "" are not tz database names; Joda knows neither.
	if id == "" || id == "Local" {
		return nil, zoneNotRecognised(id)
	}
	loc, err := time.LoadLocation(id)
	if err != nil {
		return nil, zoneNotRecognised(id)
	}
	return &zone{id: id, loc: loc}, nil
}

// parseFixedOffset reads Joda's offset syntax after the sign: two-digit
// hours (at most 23), then optionally minutes and seconds, with colons
// or without. Joda also takes milliseconds; Go zones have whole seconds,
// so they are refused rather than rounded.
func parseFixedOffset(s string) (int, bool) {
	neg := s[0] == '-'
	s = s[1:]
	two := func(s string) (int, bool) {
		if len(s) < 2 || s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9' {
			return 0, false
		}
		return int(s[0]-'0')*10 + int(s[1]-'0'), true
	}
	h, ok := two(s)
	if !ok || h > 23 {
		return 0, false
	}
	secs := h * 3600
	s = s[2:]
	colons := len(s) > 0 && s[0] == ':'
	for _, unit := range []int{60, 1} {
		if s == "" {
			break
		}
		if colons {
			if s[0] != ':' {
				return 0, false
			}
			s = s[1:]
		}
		n, ok := two(s)
		if !ok || n > 59 {
			return 0, false
		}
		secs += n * unit
		s = s[2:]
	}
	if s != "" {
		return 0, false
	}
	if neg {
		secs = -secs
	}
	return secs, true
}

// printOffset is Joda's name for a fixed zone: "+05:30", "-08:00",
// "+01:02:03".
func printOffset(secs int) string {
	b := []byte{'+'}
	if secs < 0 {
		b[0] = '-'
		secs = -secs
	}
	pad2 := func(n int) {
		b = append(b, byte('0'+n/10), byte('0'+n%10))
	}
	pad2(secs / 3600)
	b = append(b, ':')
	pad2(secs / 60 % 60)
	if s := secs % 60; s != 0 {
		b = append(b, ':')
		pad2(s)
	}
	return string(b)
}

// period returns the offset in ms at instant ms (UTC) and the bounds
// [start, end) of the span with that offset, MinInt64/MaxInt64 when
// open.
func (z *zone) period(ms int64) (offset, start, end int64) {
	t := time.UnixMilli(ms).In(z.loc)
	_, off := t.Zone()
	s, e := t.ZoneBounds()
	start, end = math.MinInt64, math.MaxInt64
	if !s.IsZero() {
		start = s.UnixMilli()
	}
	if !e.IsZero() {
		end = e.UnixMilli()
	}
	return int64(off) * 1000, start, end
}

func (z *zone) offset(ms int64) int64 {
	_, off := time.UnixMilli(ms).In(z.loc).Zone()
	return int64(off) * 1000
}

// nextTransition is the first transition after ms, MaxInt64 when there
// is none (Joda returns its argument then; the callers map that to
// Long.MAX_VALUE).
func (z *zone) nextTransition(ms int64) int64 {
	_, end := time.UnixMilli(ms).In(z.loc).ZoneBounds()
	if end.IsZero() {
		return math.MaxInt64
	}
	return end.UnixMilli()
}

var errOffsetOverflow = errors.New("Adding time zone offset caused overflow")

// utcToLocal is Joda's DateTimeZone.convertUTCToLocal.
func utcToLocal(utc, offset int64) (int64, error) {
	local := utc + offset
	if (utc^local) < 0 && (utc^offset) >= 0 {
		return 0, errOffsetOverflow
	}
	return local, nil
}

// localToUTC is Joda's DateTimeZone.convertLocalToUTC(local, false),
// which Confluent's TimeBasedPartitioner.getPartition uses to turn the
// floored local time back into an instant. Its choices at transitions
// decide which directory a bucket is named after, so they are kept as
// they are: the offset at the first estimate's instant wins (in an
// overlap the earlier offset west of Greenwich, the later one east of
// it), except in a gap west of Greenwich, where the offset before the
// gap is used.
func (z *zone) localToUTC(local int64) (int64, error) {
	offsetLocal := z.offset(local)
	offset := z.offset(local - offsetLocal)
	if offsetLocal != offset && offsetLocal < 0 {
		nextLocal := z.nextTransition(local - offsetLocal)
		nextAdjusted := z.nextTransition(local - offset)
		if nextLocal != nextAdjusted {
			// In the gap: the estimate's offset gives a local time
			// before the cutover.
			offset = offsetLocal
		}
	}
	utc := local - offset
	if (local^utc) < 0 && (local^offset) < 0 {
		return 0, errors.New("Subtracting time zone offset caused overflow")
	}
	return utc, nil
}

// String is the zone's Joda ID.
func (z *zone) String() string { return z.id }
