package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kgo"
)

func TestParseProperties(t *testing.T) {
	in := "# comment\n" +
		"! also a comment\n" +
		"client.id = my-app\n" +
		"  security.protocol:PLAINTEXT\n" +
		"sasl.jaas.config org.apache.Module \\\n" +
		"    required user=\"a\";\n" +
		"key\\ with\\ spaces=v\\u0041\\tx\n" +
		"empty=\n" +
		"bare\n" +
		"client.id=later-wins\r\n"
	got, err := parseProperties(in)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"client.id":         "later-wins",
		"security.protocol": "PLAINTEXT",
		"sasl.jaas.config":  `org.apache.Module required user="a";`,
		"key with spaces":   "vA\tx",
		"empty":             "",
		"bare":              "",
	}
	if len(got) != len(want) {
		t.Fatalf("got %d keys %q, want %d", len(got), got, len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%q = %q, want %q", k, got[k], v)
		}
	}
	if _, err := parseProperties(`k=\u12`); err == nil {
		t.Error(`a truncated \u escape was accepted`)
	}
}

func TestParseFormatRenders(t *testing.T) {
	r := &kgo.Record{
		Topic: "t", Partition: 2, Offset: 41, Key: []byte("k"), Value: []byte("v"),
		Headers:   []kgo.RecordHeader{{Key: "a", Value: []byte("1")}, {Key: "n"}},
		Timestamp: time.UnixMilli(1700000000123),
	}
	tomb := &kgo.Record{Topic: "t", Timestamp: time.UnixMilli(5)}
	cases := []struct {
		format string
		rec    *kgo.Record
		want   string
	}{
		{`%t|%p|%o|%k|%v|%h|%T|%K|%S\n`, r, "t|2|41|k|v|a=1,n=null|1700000000123|1|1\n"},
		{`%k=%v %% \t\\\q`, r, "k=v % \t\\\\q"},
		{`%k %v %K %S %h.`, tomb, "null null -1 -1 ."},
		{`plain`, r, "plain"},
		{`trailing\`, r, `trailing\`},
		{"json", r, `{"topic":"t","partition":2,"offset":41,"timestamp":1700000000123,"timestamp_type":"CreateTime","key":"k","value":"v","headers":[{"key":"a","value":"1"},{"key":"n","value":null}]}` + "\n"},
		{"json", &kgo.Record{Topic: "t", Value: []byte{0xff, 0x00, '<'}, Timestamp: time.UnixMilli(0)},
			`{"topic":"t","partition":0,"offset":0,"timestamp":0,"timestamp_type":"CreateTime","key":null,"value":null,"value_base64":"/wA8","headers":[]}` + "\n"},
	}
	for _, c := range cases {
		f, err := ParseFormat(c.format)
		if err != nil {
			t.Fatalf("ParseFormat(%q): %v", c.format, err)
		}
		if got := string(f.Append(nil, c.rec)); got != c.want {
			t.Errorf("format %q:\n got %q\nwant %q", c.format, got, c.want)
		}
	}
	for _, bad := range []string{"%x", "abc%", "%"} {
		if _, err := ParseFormat(bad); err == nil {
			t.Errorf("ParseFormat(%q) accepted", bad)
		}
	}
}

func TestParseHeaderFlags(t *testing.T) {
	hs, err := parseHeaderFlags([]string{`a=1,b=x\,y,c`, `d=e=f,g\=h=2`})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		k string
		v *string
	}{{"a", ptr("1")}, {"b", ptr("x,y")}, {"c", nil}, {"d", ptr("e=f")}, {"g=h", ptr("2")}}
	if len(hs) != len(want) {
		t.Fatalf("got %d headers %+v, want %d", len(hs), hs, len(want))
	}
	for i, w := range want {
		if hs[i].Key != w.k || (w.v == nil) != (hs[i].Value == nil) || w.v != nil && string(hs[i].Value) != *w.v {
			t.Errorf("header %d = %q=%q, want %q=%v", i, hs[i].Key, hs[i].Value, w.k, w.v)
		}
	}
	if _, err := parseHeaderFlags([]string{"=v"}); err == nil {
		t.Error("a header without key was accepted")
	}
}

func ptr(s string) *string { return &s }

func TestLineParser(t *testing.T) {
	o := ProduceOptions{KeySeparator: "::", NullValueMarker: "NULL", Partition: -1}
	lp, err := o.parser()
	if err != nil {
		t.Fatal(err)
	}
	r, err := lp.parse([]byte("a::b::c"))
	if err != nil || string(r.Key) != "a" || string(r.Value) != "b::c" {
		t.Fatalf("parse = %q/%q, %v; want a / b::c", r.Key, r.Value, err)
	}
	r, _ = lp.parse([]byte("k::NULL"))
	if r.Value != nil {
		t.Errorf("null marker gave value %q, want null", r.Value)
	}
	r, _ = lp.parse([]byte("::"))
	if r.Key == nil || len(r.Key) != 0 || r.Value == nil || len(r.Value) != 0 {
		t.Errorf("empty key and value came out as %v / %v, want empty non-null", r.Key, r.Value)
	}
	if _, err := lp.parse([]byte("nosep")); err == nil || !strings.Contains(err.Error(), "no key separator") {
		t.Errorf("line without separator: err = %v", err)
	}
	plain, _ := (&ProduceOptions{Partition: 3}).parser()
	r, _ = plain.parse([]byte(""))
	if r.Key != nil || r.Value == nil || r.Partition != 3 {
		t.Errorf("plain empty line = key %v value %v partition %d; want null key, empty value, partition 3", r.Key, r.Value, r.Partition)
	}
}

func TestReadLinesStripsNewlines(t *testing.T) {
	ch := make(chan inputLine, 10)
	go readLines(strings.NewReader("a\r\nb\n\nlast"), ch, make(chan struct{}))
	var got []string
	for l := range ch {
		got = append(got, string(l.data))
	}
	if strings.Join(got, "|") != "a|b||last" {
		t.Errorf("lines = %q", got)
	}
}

func TestParseOffset(t *testing.T) {
	for _, s := range []string{"earliest", "latest", "0", "17", "-5", "beginning", "end"} {
		if _, err := ParseOffset(s); err != nil {
			t.Errorf("ParseOffset(%q): %v", s, err)
		}
	}
	for _, s := range []string{"", "x", "1.5", "--1"} {
		if _, err := ParseOffset(s); err == nil {
			t.Errorf("ParseOffset(%q) accepted", s)
		}
	}
}

func TestParseDuration(t *testing.T) {
	cases := map[string]time.Duration{
		"90m": 90 * time.Minute, "1h30m": 90 * time.Minute, "PT1H30M": 90 * time.Minute,
		"P1D": 24 * time.Hour, "P1DT2H": 26 * time.Hour, "pt0.5s": 500 * time.Millisecond, "PT10S": 10 * time.Second,
	}
	for s, want := range cases {
		got, err := ParseDuration(s)
		if err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "P", "PT", "P1H", "PT1D", "-1h", "P1DT", "PTT1H", "1 hour", "P99999999999999999D"} {
		if d, err := ParseDuration(s); err == nil {
			t.Errorf("ParseDuration(%q) = %v, want an error", s, d)
		}
	}
}

func TestParseDatetime(t *testing.T) {
	utc, err := ParseDatetime("2024-05-01T10:00:00Z")
	if err != nil || utc.UnixMilli() != 1714557600000 {
		t.Fatalf("RFC 3339: %v %v", utc, err)
	}
	if z, err := ParseDatetime("2024-05-01T12:00:00.000+0200"); err != nil || !z.Equal(utc) {
		t.Errorf("Kafka layout with zone: %v %v", z, err)
	}
	local, err := ParseDatetime("2024-05-01T10:00:00.000")
	if err != nil || local.Location() != time.Local {
		t.Errorf("Kafka layout without zone should be local time: %v %v", local, err)
	}
	if _, err := ParseDatetime("yesterday"); err == nil {
		t.Error("nonsense date accepted")
	}
}

func TestParseTopicScope(t *testing.T) {
	tp, ps, err := parseTopicScope("orders:0, 2")
	if err != nil || tp != "orders" || len(ps) != 2 || ps[1] != 2 {
		t.Errorf("got %q %v %v", tp, ps, err)
	}
	for _, bad := range []string{":1", "t:", "t:a", "t:-1"} {
		if _, _, err := parseTopicScope(bad); err == nil {
			t.Errorf("parseTopicScope(%q) accepted", bad)
		}
	}
}

func TestValidateTopicName(t *testing.T) {
	for _, ok := range []string{"a", "a.b_c-D9", strings.Repeat("x", 249)} {
		if err := validateTopicName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", ".", "..", "a b", "é", strings.Repeat("x", 250)} {
		if err := validateTopicName(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestTableQuotesControlCharacters(t *testing.T) {
	var b bytes.Buffer
	p, _ := NewPrinter(&b, "text")
	if err := p.Table([]string{"A", "B"}, [][]string{{"x\ty", "z"}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"x\ty"  z`) {
		t.Errorf("table = %q", b.String())
	}
	if _, err := NewPrinter(&b, "yaml"); err == nil {
		t.Error("--output yaml accepted")
	}
}

// FuzzParseProperties: any input parses or errors, never panics, and
// every parsed key and value is valid UTF-8 when the input was.
func FuzzParseProperties(f *testing.F) {
	f.Add("client.id=x\n")
	f.Add("a\\\n  b=c\\u00e9\n# c\n! d\nk:v\n")
	f.Add(`\u`)
	f.Fuzz(func(t *testing.T, s string) {
		props, err := parseProperties(s)
		if err != nil {
			return
		}
		if utf8.ValidString(s) {
			for k, v := range props {
				if !utf8.ValidString(k) || !utf8.ValidString(v) {
					t.Fatalf("invalid UTF-8 out of valid input: %q=%q", k, v)
				}
			}
		}
	})
}

// FuzzParseFormat: any template compiles or errors, never panics; one
// without % or \ renders as itself.
func FuzzParseFormat(f *testing.F) {
	f.Add(`%t %p %o %k %v %h %T\n`)
	f.Add("json")
	f.Add(`%%\\%K%S\x`)
	rec := &kgo.Record{Topic: "t", Key: []byte("k"), Headers: []kgo.RecordHeader{{Key: "h"}}}
	f.Fuzz(func(t *testing.T, s string) {
		fm, err := ParseFormat(s)
		if err != nil {
			return
		}
		out := fm.Append(nil, rec)
		if s != "json" && !strings.ContainsAny(s, `%\`) && string(out) != s {
			t.Fatalf("literal template %q rendered %q", s, out)
		}
	})
}

// FuzzParseHeaderFlags: escaping a key and value and joining them parses
// back to the same header.
func FuzzParseHeaderFlags(f *testing.F) {
	f.Add("k", "v")
	f.Add("a=b", "c,d\\")
	f.Fuzz(func(t *testing.T, k, v string) {
		esc := strings.NewReplacer(`\`, `\\`, `,`, `\,`, `=`, `\=`)
		hs, err := parseHeaderFlags([]string{esc.Replace(k) + "=" + esc.Replace(v)})
		if k == "" {
			if err == nil {
				t.Fatalf("empty key accepted: %+v", hs)
			}
			return
		}
		if err != nil || len(hs) != 1 || hs[0].Key != k || string(hs[0].Value) != v {
			t.Fatalf("round trip of %q=%q gave %+v, %v", k, v, hs, err)
		}
	})
}

// FuzzParseDuration: never panics, never negative.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"PT1H30M", "P1DT2H", "1h", "PT0.5S", "P"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if d, err := ParseDuration(s); err == nil && d < 0 {
			t.Fatalf("ParseDuration(%q) = %v", s, d)
		}
	})
}
