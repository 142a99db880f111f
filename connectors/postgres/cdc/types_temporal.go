package cdc

import (
	"time"

	"github.com/fjordhq/fjord/connect"
)

// Temporal columns under time.precision.mode (timestamptz, timetz and
// interval do not depend on it).

// zoneSlack is room the arena keeps for formatted timestamps, which can
// be longer than their text ("+00" becomes ".000000Z").
const zoneSlack = 8

func dateMapping(o *typeOpts) *mapping {
	m := &mapping{toastErr: errToastType}
	switch o.time {
	case TimeConnect:
		m.schema = func() *connect.SchemaBuilder { return connect.DateSchema() }
		m.fallback = connect.DaysToDate(0)
		m.dec = func(b []byte, _ *arena) (any, error) {
			d, err := parseDate(b)
			if err != nil {
				return nil, err
			}
			return connect.DaysToDate(int32(d)), nil
		}
	case TimeIsoString:
		m.schema = named(connect.String, dbzIsoDate)
		m.fallback, m.toast, m.toastErr, m.arena = "1970-01-01Z", o.placeholderStr, nil, true
		m.dec = func(b []byte, a *arena) (any, error) {
			d, err := parseDate(b)
			if err != nil {
				return nil, err
			}
			var buf [24]byte
			return a.str(append(appendLocalDate(buf[:0], d), 'Z')), nil
		}
	default:
		m.schema = named(connect.Int32, dbzDate)
		m.fallback = int32(0)
		m.dec = func(b []byte, _ *arena) (any, error) {
			d, err := parseDate(b)
			if err != nil {
				return nil, err
			}
			return int32(d), nil // (int) epochDay, wrapping as Java's cast
		}
	}
	return m
}

// timeMapping maps time(p). In arrays (elem) pgjdbc reads values as
// java.sql.Time, which keeps milliseconds only and turns 24:00:00 into
// midnight.
func timeMapping(scale int32, o *typeOpts, elem bool) *mapping {
	nanos := func(b []byte) (int64, error) {
		n, err := parseTime(b)
		if err == nil && elem {
			n = floorMod(n, nanosPerDay)
			n -= n % 1_000_000
		}
		return n, err
	}
	kind := o.time
	if kind == TimeAdaptive {
		switch {
		case scale <= 3:
			kind = "millis"
		case scale <= 6:
			kind = TimeMicroseconds
		default:
			kind = TimeNanoseconds
		}
	} else if kind == TimeAdaptiveMicros {
		kind = TimeMicroseconds
	}
	m := &mapping{toastErr: errToastType}
	switch kind {
	case "millis":
		m.schema, m.fallback = named(connect.Int32, dbzTime), int32(0)
		m.dec = func(b []byte, _ *arena) (any, error) {
			n, err := nanos(b)
			return int32(n / 1_000_000), err
		}
	case TimeMicroseconds:
		m.schema, m.fallback = named(connect.Int64, dbzMicroTime), int64(0)
		m.dec = func(b []byte, _ *arena) (any, error) {
			n, err := nanos(b)
			return n / 1000, err
		}
	case TimeNanoseconds:
		m.schema, m.fallback = named(connect.Int64, dbzNanoTime), int64(0)
		m.dec = func(b []byte, _ *arena) (any, error) { return nanos(b) }
	case TimeConnect:
		m.schema = func() *connect.SchemaBuilder { return connect.TimeSchema() }
		m.fallback = connect.MillisToTime(0)
		m.dec = func(b []byte, _ *arena) (any, error) {
			n, err := nanos(b)
			if err != nil {
				return nil, err
			}
			return time.UnixMilli(n / 1_000_000).UTC(), nil
		}
	default: // isostring: LocalTime.of(0, 0).plus(duration), at UTC
		m.schema = named(connect.String, dbzIsoTime)
		m.fallback, m.toast, m.toastErr, m.arena = "00:00:00Z", o.placeholderStr, nil, true
		m.dec = func(b []byte, a *arena) (any, error) {
			n, err := nanos(b)
			if err != nil {
				return nil, err
			}
			var buf [24]byte
			return a.str(append(appendClock(buf[:0], floorMod(n, nanosPerDay), 0), 'Z')), nil
		}
	}
	return m
}

// timetzMapping maps timetz to io.debezium.time.ZonedTime at UTC. In
// arrays pgjdbc's java.sql.Time drops the fraction of a second.
func timetzMapping(o *typeOpts, elem bool) *mapping {
	return &mapping{
		schema: named(connect.String, dbzZonedTime), fallback: "00:00:00Z", toast: o.placeholderStr, arena: true,
		dec: func(b []byte, a *arena) (any, error) {
			n, err := parseTimetz(b)
			if err != nil {
				return nil, err
			}
			if elem {
				n -= n % nanosPerSecond
			}
			var buf [24]byte
			return a.str(append(appendClock(buf[:0], n, 0), 'Z')), nil
		},
	}
}

func timestampMapping(scale int32, o *typeOpts) *mapping {
	kind := o.time
	if kind == TimeAdaptive || kind == TimeAdaptiveMicros {
		switch {
		case scale <= 3:
			kind = "millis"
		case scale <= 6:
			kind = TimeMicroseconds
		default:
			kind = TimeNanoseconds
		}
	}
	m := &mapping{toastErr: errToastType}
	switch kind {
	case "millis":
		m.schema, m.fallback = named(connect.Int64, dbzTimestamp), int64(0)
		m.dec = func(b []byte, _ *arena) (any, error) {
			t, err := parseTimestamp(b)
			return t.epochMillis(), err
		}
	case TimeMicroseconds:
		m.schema, m.fallback = named(connect.Int64, dbzMicroTimestamp), int64(0)
		m.dec = func(b []byte, _ *arena) (any, error) {
			t, err := parseTimestamp(b)
			return t.epochMicros(), err
		}
	case TimeNanoseconds:
		m.schema, m.fallback = named(connect.Int64, dbzNanoTimestamp), int64(0)
		m.dec = func(b []byte, _ *arena) (any, error) {
			t, err := parseTimestamp(b)
			if err != nil {
				return nil, err
			}
			switch t {
			case posInfinityInstant:
				return int64(1<<63 - 1), nil
			case negInfinityInstant:
				return int64(-1 << 63), nil
			}
			n, ok := t.epochNanos()
			if !ok {
				return nil, convFailure("Value %q is outside the representable range for INT64 epoch nanoseconds", b)
			}
			return n, nil
		}
	case TimeConnect:
		m.schema = func() *connect.SchemaBuilder { return connect.TimestampSchema() }
		m.fallback = time.UnixMilli(0).UTC()
		m.dec = func(b []byte, _ *arena) (any, error) {
			t, err := parseTimestamp(b)
			if err != nil {
				return nil, err
			}
			return time.UnixMilli(t.epochMillis()).UTC(), nil
		}
	default: // isostring
		m.schema = named(connect.String, dbzIsoTimestamp)
		m.fallback, m.toast, m.toastErr, m.arena = "1970-01-01T00:00:00Z", o.placeholderStr, nil, true
		m.dec = func(b []byte, a *arena) (any, error) {
			t, err := parseTimestamp(b)
			if err != nil {
				return nil, err
			}
			var buf [48]byte
			return a.str(appendInstant(buf[:0], t, 0)), nil
		}
	}
	return m
}

// timestamptzMapping maps timestamptz to io.debezium.time.ZonedTimestamp
// at UTC with as many fraction digits as the column's precision;
// ±infinity stay "infinity" and "-infinity".
func timestamptzMapping(scale int32, o *typeOpts) *mapping {
	width := zonedWidth(scale)
	return &mapping{
		schema: named(connect.String, dbzZonedTimestamp), fallback: "1970-01-01T00:00:00Z", toast: o.placeholderStr, arena: true,
		dec: func(b []byte, a *arena) (any, error) {
			t, inf, err := parseTimestamptz(b)
			switch {
			case err != nil:
				return nil, err
			case inf > 0:
				return "infinity", nil
			case inf < 0:
				return "-infinity", nil
			}
			var buf [48]byte
			return a.str(appendInstant(buf[:0], t, width)), nil
		},
	}
}

func intervalMapping(o *typeOpts) *mapping {
	if o.interval == IntervalString {
		return &mapping{
			schema: named(connect.String, dbzInterval), fallback: "P0Y0M0DT0H0M0S", toast: o.placeholderStr,
			dec: func(b []byte, _ *arena) (any, error) {
				iv, err := parseInterval(b)
				if err != nil {
					return nil, err
				}
				return iv.isoString(), nil
			},
		}
	}
	return &mapping{
		schema: named(connect.Int64, dbzMicroDuration), fallback: int64(0), toastErr: errToastType,
		dec: func(b []byte, _ *arena) (any, error) {
			iv, err := parseInterval(b)
			if err != nil {
				return nil, err
			}
			return iv.microDuration(), nil
		},
	}
}
