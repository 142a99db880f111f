package header

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/fjordhq/fjord/converters/internal/dump"
)

type parseRecord struct {
	Name, Schema, Value, Error string
	Input                      *string
	Format                     *string
}

// Inputs where we knowingly answer differently from Kafka, and why.
var parseDivergences = map[string]string{}

func TestGoldenParse(t *testing.T) {
	data, err := os.ReadFile("testdata/golden/parse.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	c := New()
	n := 0
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var r parseRecord
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		n++
		var in []byte
		if r.Input != nil {
			in, _ = base64.StdEncoding.DecodeString(*r.Input)
		}
		t.Run(r.Name, func(t *testing.T) {
			if why, ok := parseDivergences[r.Name]; ok {
				t.Skipf("known divergence: %s", why)
			}
			s, v, err := c.ToConnectHeader("t", "k", in)
			if err != nil {
				t.Fatalf("%q: %v", in, err)
			}
			if dump.Schema(s) != r.Schema || !dump.Equal(r.Value, dump.Value(v)) {
				t.Fatalf("%q:\n got %s %s\nwant %s %s", in, dump.Schema(s), dump.Value(v), r.Schema, r.Value)
			}
			if r.Format == nil {
				return
			}
			got, err := c.FromConnectHeader("t", "k", s, v)
			if err != nil {
				t.Fatalf("format %s: %v", dump.Value(v), err)
			}
			// Maps with several keys format in Kafka's parse order here
			// only when that order is sorted.
			if string(got) != *r.Format && !unorderedMap(v) {
				t.Fatalf("format %s:\n got %q\nwant %q", dump.Value(v), got, *r.Format)
			}
		})
	}
	if n < 700 {
		t.Fatalf("%d cases", n)
	}
}

func unorderedMap(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		return len(x) > 1 || anyUnordered(x)
	case map[any]any:
		if len(x) > 1 {
			return true
		}
		for _, e := range x {
			if unorderedMap(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if unorderedMap(e) {
				return true
			}
		}
	}
	return false
}

func anyUnordered(m map[string]any) bool {
	for _, e := range m {
		if unorderedMap(e) {
			return true
		}
	}
	return false
}

var _ = strings.TrimSpace
