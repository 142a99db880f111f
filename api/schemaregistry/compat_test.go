package schemaregistry

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

func rec(fields ...string) string {
	return `{"type":"record","name":"R","fields":[` + strings.Join(fields, ",") + `]}`
}

func fld(name, typ string, def ...string) string {
	s := fmt.Sprintf(`{"name":%q,"type":%s`, name, typ)
	if len(def) > 0 {
		s += `,"default":` + def[0]
	}
	return s + "}"
}

// Each level against Avro's resolution rules: what may change between
// versions under BACKWARD, FORWARD, FULL, NONE and the transitive forms.
func TestCompatibilityLevels(t *testing.T) {
	a := fld("a", `"int"`)
	enumAB := `{"type":"enum","name":"E","symbols":["A","B"]}`
	enumABC := `{"type":"enum","name":"E","symbols":["A","B","C"]}`
	type want struct{ backward, forward, full bool }
	cases := []struct {
		name     string
		previous []string // oldest first
		next     string
		want     want
	}{
		{"identical", []string{rec(a)}, rec(a), want{true, true, true}},
		{"add field with default", []string{rec(a)}, rec(a, fld("b", `"string"`, `"x"`)), want{true, true, true}},
		{"add field without default", []string{rec(a)}, rec(a, fld("b", `"string"`)), want{false, true, false}},
		{"add optional field", []string{rec(a)}, rec(a, fld("b", `["null","string"]`, "null")), want{true, true, true}},
		{"remove field without default", []string{rec(a, fld("b", `"string"`))}, rec(a), want{true, false, false}},
		{"remove field with default", []string{rec(a, fld("b", `"string"`, `"x"`))}, rec(a), want{true, true, true}},
		{"int to long", []string{rec(a)}, rec(fld("a", `"long"`)), want{true, false, false}},
		{"long to int", []string{rec(fld("a", `"long"`))}, rec(a), want{false, true, false}},
		{"int to double", []string{rec(a)}, rec(fld("a", `"double"`)), want{true, false, false}},
		{"float to double", []string{rec(fld("a", `"float"`))}, rec(fld("a", `"double"`)), want{true, false, false}},
		{"string to bytes", []string{rec(fld("a", `"string"`))}, rec(fld("a", `"bytes"`)), want{true, true, true}},
		{"int to string", []string{rec(a)}, rec(fld("a", `"string"`)), want{false, false, false}},
		{"enum adds symbol", []string{rec(fld("e", enumAB))}, rec(fld("e", enumABC)), want{true, false, false}},
		{"enum drops symbol", []string{rec(fld("e", enumABC))}, rec(fld("e", enumAB)), want{false, true, false}},
		{"union adds branch", []string{rec(fld("u", `["null","int"]`))}, rec(fld("u", `["null","int","string"]`)), want{true, false, false}},
		{"type to union", []string{rec(a)}, rec(fld("a", `["null","int"]`, "null")), want{true, false, false}},
		{"nested record adds defaulted field", []string{rec(fld("n", `{"type":"record","name":"N","fields":[{"name":"x","type":"int"}]}`))},
			rec(fld("n", `{"type":"record","name":"N","fields":[{"name":"x","type":"int"},{"name":"y","type":"int","default":0}]}`)), want{true, true, true}},
		{"record renamed", []string{rec(a)}, `{"type":"record","name":"S","fields":[` + a + `]}`, want{false, false, false}},
		{"record renamed with alias", []string{rec(a)}, `{"type":"record","name":"S","aliases":["R"],"fields":[` + a + `]}`, want{true, false, false}},
		{"field renamed with alias", []string{rec(a)}, rec(`{"name":"b","type":"int","aliases":["a"]}`), want{true, false, false}},
		{"primitive to record", []string{`"string"`}, rec(a), want{false, false, false}},
		// Transitive forms see every version; plain ones only the latest.
		{"only the latest is checked", []string{rec(a), rec(a, fld("b", `"string"`, `"x"`))}, rec(a, fld("b", `"string"`)), want{true, true, true}},
		{"forward: latest reads new", []string{rec(a, fld("b", `"int"`)), rec(a, fld("b", `"int"`, "0"))}, rec(a), want{true, true, true}},
	}
	transitive := map[string]want{
		"only the latest is checked": {false, true, false},
		"forward: latest reads new":  {true, false, false},
	}
	for _, c := range cases {
		for _, level := range []string{None, Backward, Forward, Full, BackwardTransitive, ForwardTransitive, FullTransitive} {
			t.Run(c.name+"/"+level, func(t *testing.T) {
				w := c.want
				if tw, ok := transitive[c.name]; ok && strings.HasSuffix(level, "_TRANSITIVE") {
					w = tw
				}
				expect := map[string]bool{None: true, Backward: w.backward, Forward: w.forward, Full: w.full,
					BackwardTransitive: w.backward, ForwardTransitive: w.forward, FullTransitive: w.full}[level]
				r, err := NewRegistry(NewMemJournal(), nil, None, quiet)
				if err != nil {
					t.Fatal(err)
				}
				ctx := context.Background()
				if err := r.Start(ctx); err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				for _, p := range c.previous {
					if _, err := r.Register(ctx, "s", RegisterRequest{Schema: p}); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := r.SetConfig(ctx, "s", level); err != nil {
					t.Fatal(err)
				}
				msgs, err := r.CheckCompatibility("s", "", RegisterRequest{Schema: c.next})
				if err != nil {
					t.Fatal(err)
				}
				if got := len(msgs) == 0; got != expect {
					t.Errorf("compatible = %v, want %v: %v", got, expect, msgs)
				}
				_, err = r.Register(ctx, "s", RegisterRequest{Schema: c.next})
				var e *Error
				switch {
				case expect && err != nil:
					t.Errorf("register: %v", err)
				case !expect && (err == nil || !asError(err, &e) || e.Code != codeIncompatible):
					t.Errorf("register of an incompatible schema: %v, want 409", err)
				}
			})
		}
	}
}

func asError(err error, e **Error) bool {
	x, ok := err.(*Error)
	*e = x
	return ok
}

// The messages are Confluent's (Difference.toString with "new"/"old"
// filled in, then the old version and schema, then the level), pinned
// here for one incompatibility of each kind of reader/writer check.
func TestCompatibilityMessages(t *testing.T) {
	r, err := NewRegistry(NewMemJournal(), nil, "", quiet)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	old := rec(fld("a", `"int"`))
	if _, err := r.Register(ctx, "s", RegisterRequest{Schema: old}); err != nil {
		t.Fatal(err)
	}
	msgs, err := r.CheckCompatibility("s", "latest", RegisterRequest{Schema: rec(fld("a", `"string"`), fld("b", `"long"`))})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{errorType:'TYPE_MISMATCH', description:'The type (path '/fields/0/type') of a field in the new schema does not match with the old schema', additionalInfo:'reader type: STRING not compatible with writer type: INT'}`,
		`{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field 'b' at path '/fields/1' in the new schema has no default value and is missing in the old schema', additionalInfo:'b'}`,
		`{oldSchemaVersion: 1}`,
		`{oldSchema: '{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}'}`,
		`{validateFields: 'false', compatibility: 'BACKWARD'}`,
	}
	if strings.Join(msgs, "\n") != strings.Join(want, "\n") {
		t.Errorf("messages\n%s\nwant\n%s", strings.Join(msgs, "\n"), strings.Join(want, "\n"))
	}
	if _, err := r.SetConfig(ctx, "s", Full); err != nil {
		t.Fatal(err)
	}
	msgs, err = r.CheckCompatibility("s", "latest", RegisterRequest{Schema: rec(fld("a", `"long"`))})
	if err != nil {
		t.Fatal(err)
	}
	want = []string{
		// FULL: first the old schema reading the new (no version/schema
		// appended), then the new reading the old.
		`{errorType:'TYPE_MISMATCH', description:'The type (path '/fields/0/type') of a field in the old schema does not match with the new schema', additionalInfo:'reader type: INT not compatible with writer type: LONG'}`,
		`{validateFields: 'false', compatibility: 'FULL'}`,
	}
	if strings.Join(msgs, "\n") != strings.Join(want, "\n") {
		t.Errorf("FULL messages\n%s\nwant\n%s", strings.Join(msgs, "\n"), strings.Join(want, "\n"))
	}
}
