package cdc

import (
	"testing"

	"github.com/fjordhq/fjord/connect"
	jsonconv "github.com/fjordhq/fjord/converters/json"
)

// render is the JsonConverter's bytes (schemas enabled) of v under s.
func render(t testing.TB, s *connect.Schema, v any) string {
	t.Helper()
	b, err := jsonconv.New().FromConnectData("t", nil, s, v)
	if err != nil {
		t.Fatalf("JsonConverter: %v", err)
	}
	return string(b)
}

// decodeOne maps one column and decodes one value of it (nil text is
// SQL NULL), returning the field schema and value.
func decodeOne(t testing.TB, c Column, o TypeOptions, text *string, toasted bool) (*connect.Schema, any, error) {
	t.Helper()
	if c.TypeMod == 0 {
		c.TypeMod = -1
	}
	tbl := &Table{Schema: "public", Name: "t", Columns: []Column{c}}
	ts, err := NewTableSchemas("p", tbl, o)
	if err != nil {
		return nil, nil, err
	}
	if len(ts.Value.Fields) == 0 {
		return nil, nil, nil
	}
	var vals [][]byte
	if text != nil {
		vals = [][]byte{[]byte(*text)}
	} else {
		vals = [][]byte{nil}
	}
	row, err := ts.Row(vals, []bool{toasted})
	if err != nil {
		return ts.Value.Fields[0].Schema, nil, err
	}
	return ts.Value.Fields[0].Schema, row.GetFieldWithoutDefault(&ts.Value.Fields[0]), nil
}

func sp(s string) *string { return &s }
