package format

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect"
)

// jsonLines decodes an object's lines with encoding/json, independently
// of the converter that wrote them.
func jsonLines(t *testing.T, b []byte) []any {
	t.Helper()
	if !bytes.HasSuffix(b, []byte("\n")) {
		t.Fatalf("object does not end with a line separator: %q", b)
	}
	var out []any
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		d := json.NewDecoder(strings.NewReader(line))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		out = append(out, v)
	}
	return out
}

func TestJSONWritesConverterJSONLines(t *testing.T) {
	f := mustNew(t, "io.confluent.connect.s3.format.json.JsonFormat", nil)
	b := writeAll(t, f, richSchema, structsAsAny(richRecords())...)
	lines := jsonLines(t, b)
	if len(lines) != 3 {
		t.Fatalf("%d lines", len(lines))
	}
	r1 := lines[0].(map[string]any)
	want := map[string]string{
		"i8": "-8", "i16": "1600", "i64": "1099511627776", "f32": "1.5", "f64": "2.25",
		"day": "19782", "tod": "49501234", "ts": "1718000000123", "opt_i64": "-7",
	}
	for k, v := range want {
		if got := r1[k].(json.Number).String(); got != v {
			t.Errorf("%s = %s, want %s", k, got, v)
		}
	}
	if r1["str"] != "héllo \"wörld\"\n" || r1["raw"] != "AAEC/w==" || r1["flag"] != true {
		t.Errorf("str/raw/flag: %v %v %v", r1["str"], r1["raw"], r1["flag"])
	}
	// Decimal -123.45 in BASE64: the unscaled -12345 as two's complement.
	if r1["dec"] != "z8c=" {
		t.Errorf("dec = %v", r1["dec"])
	}
	if inner := r1["inner"].(map[string]any); inner["a"].(json.Number) != "1" || inner["b"] != "one" {
		t.Errorf("inner = %v", inner)
	}
	// Maps with non-string keys are arrays of [key, value] pairs, as
	// Kafka's JsonConverter writes them.
	names := r1["names"].([]any)
	if len(names) != 2 {
		t.Errorf("names = %v", names)
	}
	r2 := lines[1].(map[string]any)
	for _, k := range []string{"opt_str", "opt_i64", "opt_dec", "opt_ts", "opt_inner", "opt_longs"} {
		if v, ok := r2[k]; !ok || v != nil {
			t.Errorf("%s = %v (present %v), want null", k, v, ok)
		}
	}
	if len(r2["tags"].([]any)) != 0 || len(r2["counts"].(map[string]any)) != 0 {
		t.Errorf("empty collections: %v %v", r2["tags"], r2["counts"])
	}
}

func TestJSONDecimalNumeric(t *testing.T) {
	f := mustNew(t, "JsonFormat", map[string]string{JSONDecimalFormatConfig: "numeric"})
	b := writeAll(t, f, richSchema, richRecords()[0])
	r := jsonLines(t, b)[0].(map[string]any)
	if r["dec"].(json.Number) != "-123.45" || r["opt_dec"].(json.Number) != "0.999" {
		t.Errorf("dec %v opt_dec %v", r["dec"], r["opt_dec"])
	}
}

// Confluent writes values that are not structs with Jackson: logical
// types at the top level become epoch milliseconds and
// BigDecimal.toString.
func TestJSONTopLevelValues(t *testing.T) {
	f := mustNew(t, "JsonFormat", nil)
	var buf bytes.Buffer
	w, _ := f.NewWriter(&buf)
	must := func(s *connect.Schema, v any) {
		t.Helper()
		if err := w.Write(s, v); err != nil {
			t.Fatal(err)
		}
	}
	must(nil, nil)
	must(connect.StringSchema, "x\ty")
	must(nil, map[string]any{"n": int64(1), "l": []any{true, 2.5}})
	must(dateSchema, time.Date(1970, 1, 2, 0, 0, 0, 0, time.UTC))
	must(tsSchema, time.UnixMilli(5).UTC())
	must(connect.DecimalSchema(-2).Build(), connect.NewDecimal(15, -2))
	must(decSchema, connect.NewDecimal(-5, 2))
	must(connect.BytesSchema, []byte("hi"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := "null\n\"x\\ty\"\n{\"l\":[true,2.5],\"n\":1}\n86400000\n5\n1.5E+3\n-0.05\n\"aGk=\"\n"
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
}

func TestJSONGzip(t *testing.T) {
	plain := mustNew(t, "JsonFormat", nil)
	gz := mustNew(t, "JsonFormat", map[string]string{CompressionTypeConfig: "gzip", CompressionLevelConfig: "9"})
	if gz.Extension() != ".json.gz" || plain.Extension() != ".json" {
		t.Fatalf("extensions %q %q", gz.Extension(), plain.Extension())
	}
	values := structsAsAny(richRecords())
	want := writeAll(t, plain, richSchema, values...)
	zb := writeAll(t, gz, richSchema, values...)
	zr, err := gzip.NewReader(bytes.NewReader(zb))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("gunzipped object differs from the plain one")
	}
	// Both read back the same, the plain format sniffing gzip too.
	for _, f := range []Format{gz, plain} {
		recs := readAll(t, f, zb)
		if len(recs) != 3 {
			t.Fatalf("%d records", len(recs))
		}
	}
}

func TestJSONReadsSchemaless(t *testing.T) {
	f := mustNew(t, "JsonFormat", nil)
	obj := []byte("{\"a\":1,\"b\":[1.5,\"x\",null],\"c\":{\"d\":true}}\r\n\nnull\n\"s\"\n42")
	recs := readAll(t, f, obj)
	want := []any{
		map[string]any{"a": int64(1), "b": []any{1.5, "x", nil}, "c": map[string]any{"d": true}},
		nil, "s", int64(42),
	}
	if len(recs) != len(want) {
		t.Fatalf("%d records: %v", len(recs), recs)
	}
	for i, r := range recs {
		if r.s != nil {
			t.Errorf("record %d has schema %v", i, r.s)
		}
		if err := sameValue(want[i], r.v); err != nil {
			t.Errorf("record %d: %v", i, err)
		}
	}
	if _, err := f.NewReader(bytes.NewReader(nil), 0); err != nil {
		t.Errorf("empty object: %v", err)
	}
	bad := []byte("{\"a\":\n")
	r, _ := f.NewReader(bytes.NewReader(bad), int64(len(bad)))
	if _, _, err := r.Next(); err == nil {
		t.Error("a broken line read without error")
	}
}

func TestJSONRefusesWhatTheConverterRefuses(t *testing.T) {
	f := mustNew(t, "JsonFormat", nil)
	w, _ := f.NewWriter(io.Discard)
	st := connect.NewStructValue(innerSchema) // a is required and unset
	if err := w.Write(innerSchema, st); err == nil {
		t.Error("a struct missing a required field was written")
	}
	// The failed record left nothing behind.
	var buf bytes.Buffer
	w, _ = f.NewWriter(&buf)
	_ = w.Write(innerSchema, st)
	_ = w.Write(connect.StringSchema, "ok")
	_ = w.Close()
	if buf.String() != "\"ok\"\n" {
		t.Errorf("object %q", buf.String())
	}
}
