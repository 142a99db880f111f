package transforms

import (
	"strings"
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect"
)

func TestJavaDateFormat(t *testing.T) {
	ts := time.Date(2024, 2, 29, 13, 4, 5, 678e6, time.UTC)
	for pattern, want := range map[string]string{
		"yyyy-MM-dd'T'HH:mm:ss.SSSXXX": "2024-02-29T13:04:05.678Z",
		"yyyyMMdd":                     "20240229",
		"yy/M/d h:m:s a":               "24/2/29 1:4:5 PM",
		"EEEE, MMMM d, yyyy 'at' k''K": "Thursday, February 29, 2024 at 13'1",
		"EEE MMM dd HH:mm:ss z yyyy":   "Thu Feb 29 13:04:05 UTC 2024",
		"D w W F u G Z":                "60 9 5 5 4 AD +0000",
		"SSSS S":                       "0678 678",
		"''yyyy''":                     "'2024'",
	} {
		f, err := compileJavaDateFormat(pattern)
		if err != nil {
			t.Fatalf("%s: %v", pattern, err)
		}
		if got := f.format(ts); got != want {
			t.Errorf("format %q = %q, want %q", pattern, got, want)
		}
	}
	if _, err := compileJavaDateFormat("yyyy-qq"); err == nil || err.Error() != "Illegal pattern character 'q'" {
		t.Errorf("bad letter: %v", err)
	}
	if _, err := compileJavaDateFormat("'open"); err == nil {
		t.Error("unterminated quote accepted")
	}
}

func TestJavaDateParse(t *testing.T) {
	for _, c := range []struct{ pattern, in, want string }{
		{"yyyy-MM-dd HH:mm:ss.SSS", "2024-02-29 13:14:15.678", "2024-02-29T13:14:15.678Z"},
		{"yyyyMMddHHmmss", "20240229131415", "2024-02-29T13:14:15Z"},
		{"yyyy-MM-dd", "2024-13-01", "2025-01-01T00:00:00Z"},          // lenient roll-over
		{"yyyy-MM-dd", "2024-02-29 trailing", "2024-02-29T00:00:00Z"}, // text after the last field is ignored
		{"dd MMM yyyy hh:mm a", "01 jan 2020 12:30 PM", "2020-01-01T12:30:00Z"},
		{"dd MMMM yyyy hh:mm a", "01 March 2020 12:30 AM", "2020-03-01T00:30:00Z"},
		{"yyyy-MM-dd'T'HH:mmXXX", "2024-01-01T10:00+02:00", "2024-01-01T08:00:00Z"},
		{"yyyy-MM-dd'T'HH:mmZ", "2024-01-01T10:00-0130", "2024-01-01T11:30:00Z"},
		{"EEE, d MMM yyyy", "Mon, 5 Feb 2024", "2024-02-05T00:00:00Z"},
	} {
		f, err := compileJavaDateFormat(c.pattern)
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.parse(c.in)
		if err != nil {
			t.Errorf("parse %q with %q: %v", c.in, c.pattern, err)
			continue
		}
		if s := got.Format("2006-01-02T15:04:05.999Z07:00"); s != c.want {
			t.Errorf("parse %q with %q = %s, want %s", c.in, c.pattern, s, c.want)
		}
	}
	for _, c := range []struct{ pattern, in string }{
		{"yyyy-MM-dd", "29/02/2024"}, {"dd/MM/yyyy", "2024-02-29"}, {"yyyy", ""}, {"MMM", "Foo"},
	} {
		f, _ := compileJavaDateFormat(c.pattern)
		if got, err := f.parse(c.in); err == nil {
			t.Errorf("parse %q with %q = %v, want an error", c.in, c.pattern, got)
		}
	}
}

func TestJavaDouble(t *testing.T) {
	for f, want := range map[float64]string{
		1: "1.0", 0.5: "0.5", 1e7: "1.0E7", 1.5e-4: "1.5E-4", 0.001: "0.001", 123456.789: "123456.789",
		-2.5e10: "-2.5E10", 0: "0.0",
	} {
		if got := javaDouble(f); got != want {
			t.Errorf("javaDouble(%v) = %s, want %s", f, got, want)
		}
	}
	if got := javaFloat(0.1); got != "0.1" {
		t.Errorf("javaFloat(0.1) = %s", got)
	}
	if got := javaBigDecimal(connect.NewDecimal(15, 9)); got != "1.5E-8" {
		t.Errorf("BigDecimal = %s", got)
	}
}

func TestJavaReplacement(t *testing.T) {
	re, err := compileJavaRegex(`(?<name>[a-z]+)-(\d+)`)
	if err != nil {
		t.Fatal(err)
	}
	for repl, want := range map[string]string{
		"$2.$1":    "42.abc",
		"${name}!": "abc!",
		`\$1-$10`:  "$1-abc0", // $10 is group 1 then "0": there is no group 10
		"x$2$2":    "x4242",
		`a\\b`:     `a\b`,
	} {
		got, err := re.replaceFirst("abc-42", repl)
		if err != nil || got != want {
			t.Errorf("replace %q = %q, %v; want %q", repl, got, err, want)
		}
	}
	for _, bad := range []string{"$", "$x", "${nope}", `trailing\`, "$3"} {
		if _, err := re.replaceFirst("abc-42", bad); err == nil {
			t.Errorf("replacement %q accepted", bad)
		}
	}
}

func TestParseValueString(t *testing.T) {
	for in, want := range map[string]struct {
		typ connect.Type
		v   any
	}{
		"42":         {connect.Int8, int8(42)},
		"300":        {connect.Int16, int16(300)},
		"70000":      {connect.Int32, int32(70000)},
		"5000000000": {connect.Int64, int64(5000000000)},
		"-7":         {connect.Int8, int8(-7)},
		"true":       {connect.Boolean, true},
		"hello":      {connect.String, "hello"},
		"3.25":       {connect.Float32, float32(3.25)},
		"":           {connect.String, ""},
	} {
		s, v := parseValueString(in)
		if s == nil || s.Type != want.typ || !connect.ValuesEqual(v, want.v) {
			t.Errorf("parse %q = %v %#v, want %v %#v", in, s, v, want.typ, want.v)
		}
	}
	if s, v := parseValueString("null"); s != nil || v != nil {
		t.Errorf("null = %v %v", s, v)
	}
	s, v := parseValueString("[1,2,300]")
	if s.Type != connect.Array || s.ValueSchema.Type != connect.Int16 || !connect.ValuesEqual(v, []any{int16(1), int16(2), int16(300)}) {
		t.Errorf("array = %v %#v", s, v)
	}
	// Unquoted keys do not parse embedded: Kafka keeps the text.
	if s, v = parseValueString("{a:1,b:2}"); s.Type != connect.String || v != "{a:1,b:2}" {
		t.Errorf("unquoted map = %v %#v", s, v)
	}
	s, v = parseValueString(`{"a":1,"b":300}`)
	if s.Type != connect.Map || !connect.ValuesEqual(v, map[string]any{"a": int16(1), "b": int16(300)}) {
		t.Errorf("map = %v %#v", s, v)
	}
	if s, v = parseValueString("2024-01-02"); s.Name != connect.DateName || !v.(time.Time).Equal(time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("date = %v %v", s, v)
	}
	if s, v = parseValueString("[1,"); s.Type != connect.String || v != "[1," {
		t.Errorf("broken array = %v %v", s, v)
	}
}

func TestFieldPathV2(t *testing.T) {
	for in, want := range map[string]string{
		"a.b.c":      "a|b|c",
		"`a.b`.c":    "a.b|c",
		"a.":         "a|",
		"`a\\`.b`.c": "a`.b|c",
		"plain":      "plain",
	} {
		p, err := newFieldPath(in, true)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if got := strings.Join(p.steps, "|"); got != want {
			t.Errorf("path %q = %q, want %q", in, got, want)
		}
	}
	if p, _ := newFieldPath("a.b", false); len(p.steps) != 1 {
		t.Error("V1 split the path")
	}
}

func TestSchemaCacheByEquality(t *testing.T) {
	var c schemaCache
	a := connect.NewStruct().Name("x").Field("f", connect.Int32Schema).Build()
	b := connect.NewStruct().Name("x").Field("f", connect.Int32Schema).Build()
	out := connect.NewStruct().Build()
	c.put(a, out)
	if c.get(a) != out || c.get(b) != out {
		t.Fatal("equal schema missed the cache")
	}
	for i := 0; i < schemaCacheSize; i++ {
		c.put(connect.NewStruct().Name(strings.Repeat("n", i+1)).Build(), out)
	}
	if c.get(a) != nil || len(c.entries) != schemaCacheSize {
		t.Fatalf("LRU did not evict: %d entries", len(c.entries))
	}
}
