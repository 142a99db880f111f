package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestParsePropertiesGolden compares ParseProperties with what
// java.util.Properties.load produced (Java 17) for each file in
// testdata/properties: load(Reader, UTF-8) for valid UTF-8 input and
// load(InputStream), i.e. ISO-8859-1 as Kafka reads it, otherwise.
func TestParsePropertiesGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/properties/*.properties")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			in, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			goldenBytes, err := os.ReadFile(strings.TrimSuffix(f, ".properties") + ".json")
			if err != nil {
				t.Fatal(err)
			}
			var golden struct {
				Stream map[string]string `json:"stream_latin1"`
				Reader map[string]string `json:"reader_utf8"`
			}
			if err := json.Unmarshal(goldenBytes, &golden); err != nil {
				t.Fatal(err)
			}
			want := golden.Stream
			if utf8.Valid(in) {
				want = golden.Reader
			}
			got, err := ParseProperties(strings.NewReader(string(in)))
			if javaErr, isErr := want["error"]; isErr && len(want) == 1 {
				if err == nil {
					t.Fatalf("Java failed with %q, we parsed %v", javaErr, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("mismatch with java.util.Properties:\n%s", diffMaps(got, want))
			}
		})
	}
}

func diffMaps(got, want map[string]string) string {
	var lines []string
	for k, w := range want {
		if g, ok := got[k]; !ok {
			lines = append(lines, "missing "+strconvQuote(k)+" = "+strconvQuote(w))
		} else if g != w {
			lines = append(lines, "key "+strconvQuote(k)+": got "+strconvQuote(g)+", want "+strconvQuote(w))
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			lines = append(lines, "extra "+strconvQuote(k)+" = "+strconvQuote(g))
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

func TestParsePropertiesTable(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     map[string]string
		wantErr  string
	}{
		{name: "empty", in: "", want: map[string]string{}},
		{name: "only comments", in: "# a\n! b\n   # c\n", want: map[string]string{}},
		{name: "equals", in: "a=b", want: map[string]string{"a": "b"}},
		{name: "colon", in: "a:b", want: map[string]string{"a": "b"}},
		{name: "space", in: "a b", want: map[string]string{"a": "b"}},
		{name: "spaces around equals", in: "a  =  b  ", want: map[string]string{"a": "b  "}},
		{name: "second separator is value", in: "a = = b", want: map[string]string{"a": "= b"}},
		{name: "escaped separators in key", in: `a\=b\:c\ d=e`, want: map[string]string{"a=b:c d": "e"}},
		{name: "continuation strips leading space", in: "a=1\\\n   2\\\n\t3", want: map[string]string{"a": "123"}},
		{name: "even backslashes do not continue", in: "a=1\\\\\nb=2", want: map[string]string{"a": `1\`, "b": "2"}},
		{name: "comment does not continue", in: "# x\\\na=1", want: map[string]string{"a": "1"}},
		{name: "hash inside continuation is text", in: "a=1\\\n#2", want: map[string]string{"a": "1#2"}},
		{name: "unicode escape", in: `a=\u0041\u00e9`, want: map[string]string{"a": "Aé"}},
		{name: "surrogate pair", in: `a=\ud83d\ude00`, want: map[string]string{"a": "😀"}},
		{name: "unknown escape keeps char", in: `a=\x\y`, want: map[string]string{"a": "xy"}},
		{name: "last duplicate wins", in: "a=1\na=2", want: map[string]string{"a": "2"}},
		{name: "crlf", in: "a=1\r\nb=2\r\n", want: map[string]string{"a": "1", "b": "2"}},
		{name: "malformed unicode", in: `a=\u12`, wantErr: "properties line 1: malformed"},
		{name: "malformed unicode hex", in: "x=1\ny=\\uZZZZ", wantErr: "properties line 2: malformed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseProperties(strings.NewReader(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("\n%s", diffMaps(got, tc.want))
			}
		})
	}
}

// escapeProperty writes s the way Properties.store does, so that parsing
// it back must give s again.
func escapeProperty(s string, isKey bool) string {
	var sb strings.Builder
	for i, c := range s {
		switch {
		case c == ' ' && (i == 0 || isKey):
			sb.WriteString(`\ `)
		case c == '\t':
			sb.WriteString(`\t`)
		case c == '\n':
			sb.WriteString(`\n`)
		case c == '\r':
			sb.WriteString(`\r`)
		case c == '\f':
			sb.WriteString(`\f`)
		case strings.ContainsRune(`=:#!\`, c):
			sb.WriteByte('\\')
			sb.WriteRune(c)
		default:
			sb.WriteRune(c)
		}
	}
	return sb.String()
}

func FuzzParseProperties(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/properties/*.properties")
	for _, s := range seeds {
		b, _ := os.ReadFile(s)
		f.Add(string(b), "k", "v")
	}
	f.Add("a=b\\\n  c", "key with space", " value ")
	f.Fuzz(func(t *testing.T, doc, key, value string) {
		// Arbitrary input must parse or fail cleanly.
		_, _ = ParseProperties(strings.NewReader(doc))
		// A stored key/value pair must read back unchanged.
		if key == "" || !utf8.ValidString(key) || !utf8.ValidString(value) {
			return
		}
		line := escapeProperty(key, true) + "=" + escapeProperty(value, false) + "\n"
		got, err := ParseProperties(strings.NewReader(line))
		if err != nil {
			t.Fatalf("parse %q: %v", line, err)
		}
		if len(got) != 1 || got[key] != value {
			t.Fatalf("round trip of %q = %q via %q gave %v", key, value, line, got)
		}
	})
}

func TestApplyOverrides(t *testing.T) {
	props := map[string]string{"a": "1", "b": "2"}
	if err := ApplyOverrides(props, []string{"a=x=y", " c =", "b=3"}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": "x=y", "b": "3", "c": ""}
	if !reflect.DeepEqual(props, want) {
		t.Errorf("got %v, want %v", props, want)
	}
	for _, bad := range []string{"novalue", "=v"} {
		if err := ApplyOverrides(map[string]string{}, []string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
