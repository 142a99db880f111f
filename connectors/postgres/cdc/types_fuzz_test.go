package cdc

import (
	"strings"
	"testing"
)

// fuzzColumns are columns of every mapped kind, for FuzzTypesRow.
var fuzzColumns = []Column{
	{TypeName: "bool"}, {TypeName: "int2"}, {TypeName: "int4"}, {TypeName: "int8"}, {TypeName: "float4"}, {TypeName: "float8"},
	{TypeName: "numeric", TypeMod: numericMod2(10, 2)}, {TypeName: "numeric"}, {TypeName: "money"}, {TypeName: "text"},
	{TypeName: "bytea"}, {TypeName: "bit", TypeMod: 1}, {TypeName: "bit", TypeMod: 12}, {TypeName: "varbit"},
	{TypeName: "date"}, {TypeName: "time", TypeMod: 3}, {TypeName: "time"}, {TypeName: "timetz"}, {TypeName: "timestamp"},
	{TypeName: "timestamp", TypeMod: 3}, {TypeName: "timestamptz"}, {TypeName: "timestamptz", TypeMod: 0}, {TypeName: "interval"},
	{TypeName: "uuid"}, {TypeName: "jsonb"}, {TypeName: "point"}, {TypeName: "hstore"},
	{TypeName: "mood", TypeKind: 'e', EnumValues: mood},
	{TypeName: "_int4", ElemName: "int4"}, {TypeName: "_text", ElemName: "text"}, {TypeName: "_numeric", ElemName: "numeric"},
	{TypeName: "_timestamptz", ElemName: "timestamptz"}, {TypeName: "_time", ElemName: "time"}, {TypeName: "_bytea", ElemName: "bytea"},
	{TypeName: "_mood", ElemName: "mood", ElemKind: 'e', EnumValues: mood}, {TypeName: "_hstore", ElemName: "hstore"},
	{TypeName: "vector"}, {TypeName: "halfvec"}, {TypeName: "sparsevec"},
}

var fuzzModes = []TypeOptions{
	{},
	{DecimalMode: "string", TimePrecisionMode: "connect", BinaryMode: "hex", IntervalMode: "string", HStoreMode: "map"},
	{DecimalMode: "double", TimePrecisionMode: "nanoseconds", BinaryMode: "base64", FailureMode: "fail"},
	{TimePrecisionMode: "isostring", BinaryMode: "base64-url-safe", FailureMode: "skip"},
}

// FuzzTypesRow decodes arbitrary text as every column type in every
// mode: it must never panic, and every error must name the column.
func FuzzTypesRow(f *testing.F) {
	for _, s := range []string{"1", "-1", "t", "1.5", "NaN", "-Infinity", "$1,234.50", `\x00ff`, "101", "2024-02-29",
		"0044-03-15 BC", "24:00:00", "13:14:15.123456+02", "2024-02-29 13:14:15.123456+02", "infinity",
		"1 year 2 mons -3 days 04:05:06.5", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", `{"a": 1}`, "(1.5,-2)",
		`"a"=>"1", "b"=>NULL`, "ok", `{1,NULL,3}`, `{"a b","c\"d"}`, `{{1,2},{3,4}}`, `[0:1]={t,f}`, "[1,2.5]", "{1:1.5,3:2}/5", ""} {
		f.Add(uint8(0), uint8(0), []byte(s), false)
	}
	tables := make([][]*TableSchemas, len(fuzzModes))
	for m, o := range fuzzModes {
		for i, c := range fuzzColumns {
			c.Name = "c"
			if c.TypeMod == 0 && c.TypeName != "timestamptz" {
				c.TypeMod = -1
			}
			c.Optional = i%2 == 0
			ts, err := NewTableSchemas("p", &Table{Schema: "s", Name: "t", Columns: []Column{c}}, o)
			if err != nil {
				f.Fatal(err)
			}
			tables[m] = append(tables[m], ts)
		}
	}
	f.Fuzz(func(t *testing.T, col, mode uint8, text []byte, toast bool) {
		ts := tables[int(mode)%len(tables)][int(col)%len(fuzzColumns)]
		row, err := ts.Row([][]byte{text}, []bool{toast})
		if err != nil {
			if !strings.Contains(err.Error(), `column "c"`) {
				t.Fatalf("error does not name the column: %v", err)
			}
			return
		}
		if row == nil {
			t.Fatal("nil row without error")
		}
		if _, err := ts.KeyOf(row); err != nil {
			t.Fatal(err)
		}
	})
}
