package json

import (
	"bufio"
	"bytes"
	"encoding/base64"
	stdjson "encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/converters/internal/dump"
)

// The golden files come from Kafka 4.4's own JsonConverter
// (testdata/kafkagen, rerun with testdata/kafkagen/gen.sh from the
// converters directory).

func configured(t testing.TB, cfg string) *Converter {
	t.Helper()
	c, err := configure(cfg)
	if err != nil {
		t.Fatalf("configure %q: %v", cfg, err)
	}
	return c
}

// configure reads a generator config: k=v pairs joined by commas, with
// schema.content (JSON, commas and all) last, taking the rest.
func configure(cfg string) (*Converter, error) {
	props := map[string]string{}
	if i := strings.Index(cfg, SchemaContentConfig+"="); i >= 0 {
		props[SchemaContentConfig] = cfg[i+len(SchemaContentConfig)+1:]
		cfg = strings.TrimSuffix(cfg[:i], ",")
	}
	if cfg != "" {
		for _, kv := range strings.Split(cfg, ",") {
			k, v, _ := strings.Cut(kv, "=")
			props[k] = v
		}
	}
	c := New()
	return c, c.Configure(props, false)
}

// sameMessage compares Kafka's message with ours; Kafka names Java
// classes ("class java.lang.String") where we name Go types.
func sameMessage(java, got string) bool {
	if i := strings.Index(java, "class "); i >= 0 {
		return strings.HasPrefix(got, java[:i])
	}
	return java == got
}

func TestGoldenEncode(t *testing.T) {
	cases := goldenCases()
	f, err := os.Open("../../converters/json/testdata/golden/encode.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		name, cfg, wantSchema, wantValue, result := cols[0], cols[1], cols[2], cols[3], cols[4]
		n++
		t.Run(name, func(t *testing.T) {
			gc, ok := cases[name]
			if !ok {
				t.Fatalf("no Go case %q (add it to goldenCases)", name)
			}
			if got := dump.Schema(gc.schema); got != wantSchema {
				t.Fatalf("Go case schema differs from Kafka's:\n got %s\nwant %s", got, wantSchema)
			}
			if got := dump.Value(gc.value); got != wantValue {
				t.Fatalf("Go case value differs from Kafka's:\n got %s\nwant %s", got, wantValue)
			}
			c := configured(t, cfg)
			out, err := c.FromConnectData("topic", nil, gc.schema, gc.value)
			switch {
			case result == "null":
				if err != nil || out != nil {
					t.Fatalf("want nil bytes, got %q, %v", out, err)
				}
			case strings.HasPrefix(result, "error: "):
				var de *connect.DataError
				if !errors.As(err, &de) {
					t.Fatalf("want DataError %q, got %q, %v", result, out, err)
				}
				if !sameMessage(strings.TrimPrefix(result, "error: "), err.Error()) {
					t.Fatalf("message:\n got %s\nwant %s", err, result)
				}
			default:
				want, rerr := os.ReadFile(filepath.Join("testdata/golden/encode", name+".json"))
				if rerr != nil {
					t.Fatal(rerr)
				}
				if err != nil {
					t.Fatalf("error %v, want %s", err, want)
				}
				if !bytes.Equal(out, want) {
					t.Fatalf("bytes differ from Kafka's:\n got %s\nwant %s", out, want)
				}
			}
		})
	}
	if n < 100 {
		t.Fatalf("only %d golden cases read", n)
	}
}

// Inputs where we knowingly answer differently from Kafka, and why.
var decodeDivergences = map[string]string{
	"raw_3":           "Jackson accepts the overlong UTF-8 C0 80 as U+0000; Go's UTF-8 rules (and ours) refuse it",
	"raw_5":           "Jackson decodes the out-of-range UTF-8 F4 90 80 80 into lone surrogates; refused here",
	"raw_10":          "Jackson guesses UTF-16LE from a NUL second byte; only UTF-8 is read here",
	"schema_28_value": "a map key of type ARRAY (a Java List) cannot be a Go map key; refused with a DataError",
}

type decodeRecord struct {
	Name, Config, Schema, Value, Error string
	Input                              *string
}

func readDecodeGolden(t testing.TB) []decodeRecord {
	t.Helper()
	data, err := os.ReadFile("testdata/golden/decode.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var recs []decodeRecord
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var r decodeRecord
		if err := stdjson.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	return recs
}

func (r decodeRecord) input(t testing.TB) []byte {
	if r.Input == nil {
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(*r.Input)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestGoldenDecode(t *testing.T) {
	recs := readDecodeGolden(t)
	if len(recs) < 1000 {
		t.Fatalf("only %d golden decode cases", len(recs))
	}
	for _, r := range recs {
		t.Run(r.Name, func(t *testing.T) {
			c, err := configure(r.Config)
			var (
				s *connect.Schema
				v any
			)
			if err == nil {
				s, v, err = c.ToConnectData("topic", nil, r.input(t))
			}
			if why, ok := decodeDivergences[r.Name]; ok {
				var de *connect.DataError
				if err == nil || !errors.As(err, &de) {
					t.Fatalf("known divergence (%s): want a DataError, got %s %s", why, dump.Schema(s), dump.Value(v))
				}
				return
			}
			if r.Error != "" {
				var de *connect.DataError
				if !errors.As(err, &de) {
					t.Fatalf("want error %q, got %v (%s %s)", r.Error, err, dump.Schema(s), dump.Value(v))
				}
				if r.Error == errSerialization || r.Error == errContentSerialization {
					if !strings.HasPrefix(err.Error(), r.Error) {
						t.Fatalf("want a serialization error, got %q", err)
					}
				} else if err.Error() != r.Error {
					t.Fatalf("message:\n got %s\nwant %s", err, r.Error)
				}
				return
			}
			if err != nil {
				t.Fatalf("error %v, want %s %s", err, r.Schema, r.Value)
			}
			if got := dump.Schema(s); got != r.Schema {
				t.Fatalf("schema:\n got %s\nwant %s", got, r.Schema)
			}
			if got := dump.Value(v); !dump.Equal(r.Value, got) {
				t.Fatalf("value:\n got %s\nwant %s", got, r.Value)
			}
		})
	}
}
