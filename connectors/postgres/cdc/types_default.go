package cdc

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/fjordhq/fjord/connect"
)

// Column defaults, as Debezium's PostgresDefaultValueConverter derives
// schema defaults from pg_get_expr of a column's default: constants are
// parsed, function calls (nextval, now(), gen_random_uuid(), ...) and
// CURRENT_* give a per-type placeholder, anything else gives no default.

var (
	literalDefault  = regexp.MustCompile(`'(.*?)'`)
	functionDefault = regexp.MustCompile(`^[(]?[A-Za-z0-9_.]+\((?:.+(?:, ?.+)*)?\)`)
	currentDateTime = map[string]bool{"current_timestamp": true, "current_time": true, "current_date": true,
		"localtime": true, "localtimestamp": true}
	// trimmedDefaults are the types whose default expression Debezium
	// trims first.
	trimmedDefaults = map[string]bool{"bit": true, "varbit": true, "bool": true, "numeric": true, "float4": true,
		"float8": true, "int2": true, "int4": true, "serial": true, "int8": true, "bigserial": true, "smallserial": true,
		"uuid": true, "date": true, "time": true, "timestamp": true, "timestamptz": true, "interval": true}
)

// extractDefault is Debezium's extractDefault(String): a raw value, or the
// first quoted literal; "NULL::..." is no value.
func extractDefault(expr string) (string, bool) {
	if !strings.Contains(expr, "'") {
		if strings.HasPrefix(expr, "NULL::") {
			return "", false
		}
		return expr, true
	}
	m := literalDefault.FindStringSubmatch(expr)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// extractOrPlaceholder is extractDefault(String, String): a function call
// or CURRENT_* default maps to the type's placeholder.
func extractOrPlaceholder(expr, placeholder string) (string, bool) {
	if functionDefault.MatchString(expr) || currentDateTime[strings.ToLower(expr)] {
		return placeholder, true
	}
	return extractDefault(expr)
}

// javaTrim is String.trim: drops characters up to ' ' at both ends.
func javaTrim(s string) string {
	i, j := 0, len(s)
	for i < j && s[i] <= ' ' {
		i++
	}
	for j > i && s[j-1] <= ' ' {
		j--
	}
	return s[i:j]
}

// defaultParser returns the parser of a column's default for its type, or
// nil when Debezium has no default mapper for it.
func defaultParser(t typeInfo, m *mapping, o *typeOpts) func(string) (any, bool) {
	name := t.name
	if t.kind == 'e' {
		return func(expr string) (any, bool) { return enumDefault(name, expr) }
	}
	// parse is the mapper (with its placeholder) then the converter.
	var placeholder string
	var conv func(s string) (any, bool)
	nullable := true // parseNullDefault: "NULL::..." is no default
	fromDecoder := func(s string) (any, bool) {
		v, err := m.dec([]byte(s), nil)
		return v, err == nil
	}
	switch name {
	case "bit":
		placeholder, nullable = "00", false
		conv = fromDecoder
	case "varbit":
		placeholder, nullable = "0", false
		conv = fromDecoder
	case "bool":
		placeholder = "false"
		conv = func(s string) (any, bool) { return strings.EqualFold(s, "true"), true } // Boolean.parseBoolean
	case "bpchar", "varchar", "text", "json", "jsonb", "xml":
		placeholder, nullable = map[string]string{"json": "{}", "jsonb": "{}"}[name], false
		conv = func(s string) (any, bool) { return s, true }
	case "numeric":
		placeholder = "0.0"
		conv = func(s string) (any, bool) {
			d, err := connect.ParseDecimal(s)
			if err != nil || m.defFromDecimal == nil {
				return nil, false
			}
			v, err := m.defFromDecimal(d)
			if _, isStruct := v.(*connect.Struct); err != nil || isStruct {
				return nil, false // Debezium drops struct defaults (KAFKA-12694)
			}
			return v, true
		}
	case "float4", "float8":
		placeholder = "0.0"
		bits := 64
		if name == "float4" {
			bits = 32
		}
		conv = func(s string) (any, bool) {
			f, err := strconv.ParseFloat(s, bits)
			if err != nil {
				return nil, false
			}
			if bits == 32 {
				return float32(f), true
			}
			return f, true
		}
	case "int2", "int4", "int8":
		placeholder = "0"
		bits := map[string]int{"int2": 16, "int4": 32, "int8": 64}[name]
		conv = func(s string) (any, bool) {
			n, err := javaParseLong(s, bits)
			if err != nil {
				return nil, false
			}
			switch bits {
			case 16:
				return int16(n), true
			case 32:
				return int32(n), true
			}
			return n, true
		}
	case "uuid":
		placeholder, nullable = "00000000-0000-0000-0000-000000000000", false
		conv = func(s string) (any, bool) {
			if !isUUID(s) {
				return nil, false
			}
			return strings.ToLower(s), true
		}
	case "date":
		placeholder, nullable = "1970-01-01", false
		conv = func(s string) (any, bool) {
			lt, ok := parseDefaultTimestamp(s)
			if !ok {
				return nil, false
			}
			v, err := m.dec([]byte(formatDate(lt.days)), nil)
			return v, err == nil
		}
	case "time":
		placeholder, nullable = "00:00", false
		conv = func(s string) (any, bool) {
			nod, ok := parseDefaultTime(s)
			if !ok {
				return nil, false
			}
			v, err := m.dec(formatTime(nod), nil)
			return v, err == nil
		}
	case "timestamp", "timestamptz":
		placeholder, nullable = "1970-01-01", false
		zoned := name == "timestamptz"
		width := zonedWidth(timeScale(t.mod))
		conv = func(s string) (any, bool) {
			lt, ok := parseDefaultTimestamp(s)
			if !ok {
				return nil, false
			}
			// timestamp keeps the literal's local time (pgjdbc's
			// OffsetDateTime, then its local date-time); timestamptz the
			// instant.
			t := instant{sec: lt.days*secondsPerDay + lt.nod/nanosPerSecond, nsec: lt.nod % nanosPerSecond}
			if zoned {
				t.sec -= lt.offset
				t.nsec = floorMod(t.nsec, nanosPerSecond)
				var buf [48]byte
				return string(appendInstant(buf[:0], t, width)), true
			}
			v, err := m.dec(formatTimestamp(t), nil)
			return v, err == nil
		}
	case "interval":
		placeholder, nullable = "epoch", false
		conv = fromDecoder
	default:
		return nil
	}
	trim := trimmedDefaults[name]
	return func(expr string) (any, bool) {
		if trim {
			expr = javaTrim(expr)
		}
		if nullable && strings.HasPrefix(expr, "NULL::") {
			return nil, false
		}
		s, ok := extractOrPlaceholder(expr, placeholder)
		if !ok {
			return nil, false
		}
		return conv(s)
	}
}

// enumDefault is Debezium's extractEnumDefault: the literal before a
// "::<type>" cast naming the column's enum.
func enumDefault(typeName, expr string) (any, bool) {
	cast := strings.LastIndex(expr, "::")
	if cast < 0 {
		return nil, false
	}
	schema, name, ok := parseTypeID(expr[cast+2:])
	if !ok || name != typeName {
		return nil, false
	}
	_ = schema
	v := expr[:cast]
	if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
		return v[1 : len(v)-1], true
	}
	return nil, false
}

// parseTypeID splits a possibly schema-qualified, possibly quoted type
// name.
func parseTypeID(s string) (schema, name string, ok bool) {
	var parts []string
	for len(s) > 0 {
		var part string
		if s[0] == '"' {
			i := 1
			var b strings.Builder
			for {
				if i >= len(s) {
					return "", "", false
				}
				if s[i] == '"' {
					if i+1 < len(s) && s[i+1] == '"' {
						b.WriteByte('"')
						i += 2
						continue
					}
					i++
					break
				}
				b.WriteByte(s[i])
				i++
			}
			part, s = b.String(), s[i:]
		} else {
			i := strings.IndexByte(s, '.')
			if i < 0 {
				i = len(s)
			}
			part, s = s[:i], s[i:]
		}
		parts = append(parts, part)
		if len(s) > 0 {
			if s[0] != '.' {
				return "", "", false
			}
			s = s[1:]
		}
	}
	switch len(parts) {
	case 1:
		return "", parts[0], parts[0] != ""
	case 2:
		return parts[0], parts[1], parts[1] != ""
	}
	return "", "", false
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// javaParseLong parses as Short/Integer/Long.parseX: optional sign,
// decimal digits, within range.
func javaParseLong(s string, bits int) (int64, error) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || i == 0 && (c == '-' || c == '+')) {
			return 0, errSyntax
		}
	}
	return strconv.ParseInt(s, 10, bits)
}

// localTimestamp is a default literal as pgjdbc's TimestampUtils reads
// it: a date, an optional time of day and an optional UTC offset.
type localTimestamp struct {
	days, nod, offset int64
}

func parseDefaultTimestamp(s string) (localTimestamp, bool) {
	c := cursor{b: []byte(s)}
	yoe, mo, d, ok := c.date()
	if !ok {
		return localTimestamp{}, false
	}
	var lt localTimestamp
	if c.eat(' ') || c.eat('T') {
		if lt.nod, ok = c.clock(false); !ok {
			return localTimestamp{}, false
		}
		if c.peek() == '+' || c.peek() == '-' {
			if lt.offset, ok = c.offset(true); !ok {
				return localTimestamp{}, false
			}
		}
	}
	y := c.era(yoe)
	if !c.done() || d > daysInMonth(y, mo) {
		return localTimestamp{}, false
	}
	lt.days = daysFromCivil(y, mo, d)
	return lt, true
}

// parseDefaultTime reads a time literal ("12:00", "12:00:00.5");
// 24:00:00 is LocalTime.MAX for pgjdbc.
func parseDefaultTime(s string) (int64, bool) {
	c := cursor{b: []byte(s)}
	nod, ok := c.clock(true)
	if !ok || !c.done() {
		return 0, false
	}
	if nod == nanosPerDay {
		nod = nanosPerDay - 1
	}
	return nod, true
}

// Canonical texts handed back to the column's decoder.

func formatDate(days int64) string {
	y, m, d := civilFromDays(days)
	var b []byte
	bc := y <= 0
	if bc {
		y = 1 - y
	}
	b = appendPadded(b, y, 4)
	b = append(b, '-')
	b = appendPadded(b, m, 2)
	b = append(b, '-')
	b = appendPadded(b, d, 2)
	if bc {
		b = append(b, " BC"...)
	}
	return string(b)
}

func formatTime(nod int64) []byte { return appendClock(nil, nod, 0) }

func formatTimestamp(t instant) []byte {
	days := floorDiv(t.sec, secondsPerDay)
	nod := floorMod(t.sec, secondsPerDay)*nanosPerSecond + t.nsec
	s := formatDate(days)
	bc := strings.HasSuffix(s, " BC")
	s = strings.TrimSuffix(s, " BC")
	b := append([]byte(s), ' ')
	b = appendClock(b, nod, 0)
	if bc {
		b = append(b, " BC"...)
	}
	return b
}
