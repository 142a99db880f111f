package transforms

import (
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect"
)

// FuzzJavaDateFormat: any pattern compiles or is refused, and a compiled
// one formats and parses any input without panicking; what it formats it
// reads back to the same instant when the pattern holds every field down
// to the millisecond.
func FuzzJavaDateFormat(f *testing.F) {
	f.Add("yyyy-MM-dd'T'HH:mm:ss.SSSXXX", "2024-02-29T13:14:15.678Z", int64(1700000000123))
	f.Add("EEE, d MMM yyyy hh:mm:ss a z", "Thu, 29 Feb 2024 01:14:15 PM UTC", int64(0))
	f.Add("''yyyy''MMdd", "'2024'0229", int64(-86400000))
	f.Add("yyyyMMddHHmmssSSS", "20240229131415678", int64(951782400000))
	f.Fuzz(func(t *testing.T, pattern, input string, ms int64) {
		df, err := compileJavaDateFormat(pattern)
		if err != nil {
			return
		}
		_, _ = df.parse(input)
		ts := time.UnixMilli(ms % (1 << 44)).UTC()
		s := df.format(ts)
		if pattern == "yyyy-MM-dd'T'HH:mm:ss.SSSXXX" && ts.Year() >= 1000 && ts.Year() <= 9999 {
			back, err := df.parse(s)
			if err != nil || !back.Equal(ts) {
				t.Fatalf("round trip %v -> %q -> %v, %v", ts, s, back, err)
			}
		}
	})
}

// FuzzParseValueString: Values.parseString never panics and what it
// returns is valid for the schema it infers.
func FuzzParseValueString(f *testing.F) {
	for _, s := range []string{"42", "[1,2.5]", `{"k":"v"}`, "2024-01-02T03:04:05.678Z", "[1,", "null", "1e400", `["a",[1],{"x":null}]`, `\:`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, v := parseValueString(in)
		if s == nil {
			switch v.(type) {
			case nil, []any, map[string]any, map[any]any:
			default:
				t.Fatalf("%q: value %v (%T) without a schema", in, v, v)
			}
			return
		}
		if err := connect.Validate(s, v); err != nil {
			t.Fatalf("%q: %v does not match %v: %v", in, v, s, err)
		}
	})
}

// FuzzFieldPath: any V2 path parses or is refused, never panics, and
// looking it up in a struct and a map is safe.
func FuzzFieldPath(f *testing.F) {
	for _, s := range []string{"a.b", "`a.b`.c", "`a\\`.b`", "a.", ".", "``", "`", "a..b"} {
		f.Add(s)
	}
	s := connect.NewStruct().Field("a", connect.NewStruct().Optional().Field("b", connect.OptionalInt32Schema).Build()).Build()
	st := connect.NewStructValue(s)
	m := map[string]any{"a": map[string]any{"b": int64(1)}}
	f.Fuzz(func(t *testing.T, path string) {
		p, err := newFieldPath(path, true)
		if err != nil {
			return
		}
		_ = p.fieldFrom(s)
		_, _ = p.structValue(st, true)
		_, _ = p.mapValue(m)
	})
}

// FuzzJavaReplacement: any replacement string expands or is refused.
func FuzzJavaReplacement(f *testing.F) {
	for _, s := range []string{"$1", "${name}", `\$`, "$10", "${", "$"} {
		f.Add(s)
	}
	re, err := compileJavaRegex(`(?<name>[a-z]+)-(\d+)?`)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, repl string) {
		_, _ = re.replaceFirst("abc-", repl)
	})
}
