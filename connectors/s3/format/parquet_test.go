package format

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"

	"github.com/fjordhq/fjord/connect"
	avroconv "github.com/fjordhq/fjord/converters/avro"
)

func openParquet(t *testing.T, b []byte) *parquet.File {
	t.Helper()
	pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pf
}

var convertedNames = map[deprecated.ConvertedType]string{
	deprecated.UTF8: "UTF8", deprecated.Map: "MAP", deprecated.List: "LIST", deprecated.Enum: "ENUM",
	deprecated.Decimal: "DECIMAL", deprecated.Date: "DATE", deprecated.TimeMillis: "TIME_MILLIS",
	deprecated.TimestampMillis: "TIMESTAMP_MILLIS", deprecated.Int8: "INT_8", deprecated.Int32: "INT_32",
}

// schemaElements renders the file's schema as stored in its footer: one
// line per element with its repetition, physical type, converted type
// and logical type.
func schemaElements(pf *parquet.File) string {
	var sb strings.Builder
	for _, e := range pf.Metadata().Schema {
		fmt.Fprintf(&sb, "%s", e.Name)
		if e.RepetitionType.Valid {
			fmt.Fprintf(&sb, " %s", e.RepetitionType.V)
		}
		if e.Type.Valid {
			fmt.Fprintf(&sb, " %s", e.Type.V)
		}
		if e.ConvertedType.Valid {
			fmt.Fprintf(&sb, " converted=%s", convertedNames[e.ConvertedType.V])
		}
		if s := e.LogicalType.String(); s != "" {
			fmt.Fprintf(&sb, " logical=%s", s)
		}
		if e.NumChildren.Valid {
			fmt.Fprintf(&sb, " children=%d", e.NumChildren.V)
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}

// The footer's schema is parquet-avro's for the AvroData schema:
// fields in order, plain INT32 for INT8/INT16, two-level lists (no
// optional items), string-keyed MAPs, arrays of key/value groups for
// other maps, logical types annotated.
func TestParquetSchemaGolden(t *testing.T) {
	f := mustNew(t, "ParquetFormat", nil)
	pf := openParquet(t, writeAll(t, f, richSchema, structsAsAny(richRecords())...))
	want := `com.example.Rich children=24
i8 REQUIRED INT32
i16 REQUIRED INT32
i32 REQUIRED INT32
i64 REQUIRED INT64
f32 REQUIRED FLOAT
f64 REQUIRED DOUBLE
flag REQUIRED BOOLEAN
str REQUIRED BYTE_ARRAY converted=UTF8 logical=STRING
raw REQUIRED BYTE_ARRAY
opt_str OPTIONAL BYTE_ARRAY converted=UTF8 logical=STRING
opt_i64 OPTIONAL INT64
dec REQUIRED BYTE_ARRAY converted=DECIMAL logical=DECIMAL(64,2)
opt_dec OPTIONAL BYTE_ARRAY converted=DECIMAL logical=DECIMAL(64,3)
day REQUIRED INT32 converted=DATE logical=DATE
tod REQUIRED INT32 converted=TIME_MILLIS logical=TIME(isAdjustedToUTC=true,unit=MILLIS)
ts REQUIRED INT64 converted=TIMESTAMP_MILLIS logical=TIMESTAMP(isAdjustedToUTC=true,unit=MILLIS)
opt_ts OPTIONAL INT64 converted=TIMESTAMP_MILLIS logical=TIMESTAMP(isAdjustedToUTC=true,unit=MILLIS)
inner REQUIRED children=2
a REQUIRED INT32
b OPTIONAL BYTE_ARRAY converted=UTF8 logical=STRING
opt_inner OPTIONAL children=2
a REQUIRED INT32
b OPTIONAL BYTE_ARRAY converted=UTF8 logical=STRING
tags REQUIRED converted=LIST logical=LIST children=1
array REPEATED BYTE_ARRAY converted=UTF8 logical=STRING
inners REQUIRED converted=LIST logical=LIST children=1
array REPEATED children=2
a REQUIRED INT32
b OPTIONAL BYTE_ARRAY converted=UTF8 logical=STRING
opt_longs OPTIONAL converted=LIST logical=LIST children=1
array REPEATED INT64
counts REQUIRED converted=MAP logical=MAP children=1
key_value REPEATED children=2
key REQUIRED BYTE_ARRAY converted=UTF8 logical=STRING
value REQUIRED INT32
names REQUIRED converted=LIST logical=LIST children=1
array REPEATED children=2
key REQUIRED INT32
value REQUIRED BYTE_ARRAY converted=UTF8 logical=STRING
`
	if got := schemaElements(pf); got != want {
		t.Errorf("schema\n%s\nwant\n%s", got, want)
	}
	a, _ := avroconv.SchemaFromConnect(richSchema, true)
	if v, _ := pf.Lookup("parquet.avro.schema"); v != a.String() {
		t.Errorf("parquet.avro.schema = %s", v)
	}
	if v, _ := pf.Lookup("writer.model.name"); v != "avro" {
		t.Errorf("writer.model.name = %q", v)
	}
	if c := pf.Metadata().RowGroups[0].Columns[0].MetaData.Codec.String(); c != "SNAPPY" {
		t.Errorf("codec %s", c)
	}
}

// An array of optional items anywhere makes every list three-level, as
// Confluent switches parquet-avro to the new list structure.
func TestParquetThreeLevelLists(t *testing.T) {
	f := mustNew(t, "ParquetFormat", map[string]string{ParquetCodecConfig: "none"})
	pf := openParquet(t, writeAll(t, f, listsSchema, structsAsAny(listsRecords())...))
	want := `com.example.Lists children=4
id REQUIRED INT64
maybe REQUIRED converted=LIST logical=LIST children=1
list REPEATED children=1
element OPTIONAL INT32
nested REQUIRED converted=LIST logical=LIST children=1
list REPEATED children=1
element REQUIRED converted=LIST logical=LIST children=1
list REPEATED children=1
element REQUIRED BYTE_ARRAY converted=UTF8 logical=STRING
by_key OPTIONAL converted=MAP logical=MAP children=1
key_value REPEATED children=2
key REQUIRED BYTE_ARRAY converted=UTF8 logical=STRING
value OPTIONAL BYTE_ARRAY converted=UTF8 logical=STRING
`
	if got := schemaElements(pf); got != want {
		t.Errorf("schema\n%s\nwant\n%s", got, want)
	}
	if c := pf.Metadata().RowGroups[0].Columns[0].MetaData.Codec.String(); c != "UNCOMPRESSED" {
		t.Errorf("codec %s", c)
	}
}

// parquet-go's own row reader sees the leaf values with the levels the
// Dremel encoding gives them.
func TestParquetColumnValues(t *testing.T) {
	f := mustNew(t, "ParquetFormat", nil)
	pf := openParquet(t, writeAll(t, f, listsSchema, structsAsAny(listsRecords())...))
	leaf, ok := pf.Schema().Lookup("maybe", "list", "element")
	if !ok || leaf.MaxDefinitionLevel != 2 || leaf.MaxRepetitionLevel != 1 {
		t.Fatalf("maybe.list.element: %+v", leaf)
	}
	rows := pf.RowGroups()[0].Rows()
	defer rows.Close()
	buf := make([]parquet.Row, 3)
	n, _ := rows.ReadRows(buf)
	if n != 3 {
		t.Fatalf("%d rows", n)
	}
	var got []string
	for _, row := range buf[:n] {
		var vals []string
		for _, v := range row {
			if v.Column() == leaf.ColumnIndex {
				if v.IsNull() {
					vals = append(vals, fmt.Sprintf("null@r%d,d%d", v.RepetitionLevel(), v.DefinitionLevel()))
				} else {
					vals = append(vals, fmt.Sprintf("%d@r%d,d%d", v.Int32(), v.RepetitionLevel(), v.DefinitionLevel()))
				}
			}
		}
		got = append(got, strings.Join(vals, " "))
	}
	want := []string{"1@r0,d2 null@r1,d1 3@r1,d2", "null@r0,d0", "null@r0,d1"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("maybe values %q, want %q", got, want)
	}
}

// Row groups are cut once enough data is buffered; the reader crosses
// them.
func TestParquetRowGroups(t *testing.T) {
	defer func(n int) { rowGroupBytes = n }(rowGroupBytes)
	rowGroupBytes = 4 << 10
	f := mustNew(t, "ParquetFormat", nil)
	const n = 500
	values := make([]any, n)
	for i := range values {
		values[i] = inner(int32(i), strings.Repeat("x", i%50))
	}
	b := writeAll(t, f, innerSchema, values...)
	pf := openParquet(t, b)
	if len(pf.RowGroups()) < 2 || pf.NumRows() != n {
		t.Errorf("%d row groups, %d rows", len(pf.RowGroups()), pf.NumRows())
	}
	recs := readAll(t, f, b)
	if len(recs) != n {
		t.Fatalf("read %d", len(recs))
	}
	for i, r := range recs {
		if err := sameValue(values[i], r.v); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
}

func TestParquetRefuses(t *testing.T) {
	f := mustNew(t, "ParquetFormat", nil)
	for _, c := range []struct {
		s *connect.Schema
		v any
	}{
		{nil, map[string]any{"a": int64(1)}},
		{connect.StringSchema, "x"},
		{innerSchema, nil},
		{innerSchema, connect.NewStructValue(innerSchema)}, // a is required
		{connect.NewStruct().Build(), connect.NewStructValue(connect.NewStruct().Build())},
	} {
		w, _ := f.NewWriter(io.Discard)
		if err := w.Write(c.s, c.v); err == nil {
			t.Errorf("%v %v written", c.s, c.v)
		}
	}
	w, _ := f.NewWriter(io.Discard)
	if err := w.Write(innerSchema, inner(1, nil)); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(richSchema, richRecords()[0]); err == nil {
		t.Error("a second schema went into the same file")
	}
	for _, codec := range []string{"lzo", "lz4"} {
		if _, err := New("ParquetFormat", map[string]string{ParquetCodecConfig: codec}); err == nil {
			t.Errorf("%s accepted", codec)
		}
	}
}

// An optional struct schema at the top is written as its record (a
// Parquet root cannot be null), and the union struct Avro sources give
// becomes a group of optional members.
func TestParquetOptionalRootAndUnion(t *testing.T) {
	union := connect.NewStruct().Name(unionName).Optional().
		Field("int", connect.OptionalInt32Schema).Field("string", connect.OptionalStringSchema).Build()
	s := connect.NewStruct().Name("com.example.U").Optional().Field("u", union).Build()
	v1 := connect.NewStructValue(s).MustPut("u", connect.NewStructValue(union).MustPut("string", "s"))
	v2 := connect.NewStructValue(s).MustPut("u", connect.NewStructValue(union).MustPut("int", int32(4)))
	v3 := connect.NewStructValue(s)
	f := mustNew(t, "ParquetFormat", nil)
	b := writeAll(t, f, s, v1, v2, v3)
	pf := openParquet(t, b)
	want := "com.example.U children=1\nu OPTIONAL children=2\nmember0 OPTIONAL INT32\nmember1 OPTIONAL BYTE_ARRAY converted=UTF8 logical=STRING\n"
	if got := schemaElements(pf); got != want {
		t.Errorf("schema\n%s\nwant\n%s", got, want)
	}
	recs := readAll(t, f, b)
	for i, want := range []any{v1, v2, v3} {
		if err := sameValue(want, recs[i].v); err != nil {
			t.Errorf("record %d: %v", i, err)
		}
	}
}

// A Parquet file no Avro schema describes (here parquet-go's own
// writer, with standard three-level lists and int annotations) reads
// with a schema derived from its Parquet types.
func TestParquetReadsForeignFiles(t *testing.T) {
	type item struct {
		Name string `parquet:"name"`
	}
	type row struct {
		ID    int64             `parquet:"id"`
		Small int8              `parquet:"small"`
		Label *string           `parquet:"label,optional"`
		Tags  []string          `parquet:"tags,list"`
		Items []item            `parquet:"items"`
		Attrs map[string]int32  `parquet:"attrs"`
		Raw   []byte            `parquet:"raw"`
		Score float64           `parquet:"score"`
		Extra map[string]string `parquet:"extra,optional"`
	}
	label := "l"
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[row](&buf)
	if _, err := w.Write([]row{
		{ID: 1, Small: -2, Label: &label, Tags: []string{"a", "b"}, Items: []item{{"x"}, {"y"}}, Attrs: map[string]int32{"k": 3}, Raw: []byte{1}, Score: 0.5},
		{ID: 2, Tags: []string{}, Raw: []byte{}},
	}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f := mustNew(t, "ParquetFormat", nil)
	recs := readAll(t, f, buf.Bytes())
	if len(recs) != 2 {
		t.Fatalf("%d records", len(recs))
	}
	s := recs[0].s
	types := map[string]string{}
	for _, fld := range s.Fields {
		types[fld.Name] = fmt.Sprintf("%s%v", fld.Schema.Type, map[bool]string{true: "?", false: ""}[fld.Schema.Optional])
	}
	want := map[string]string{"id": "INT64", "small": "INT8", "label": "STRING?", "tags": "ARRAY", "items": "ARRAY",
		"attrs": "MAP", "raw": "BYTES", "score": "FLOAT64", "extra": "MAP?"}
	for k, v := range want {
		if types[k] != v {
			t.Errorf("%s is %s, want %s", k, types[k], v)
		}
	}
	r1 := recs[0].v.(*connect.Struct)
	checks := map[string]any{
		"id": int64(1), "small": int8(-2), "label": "l", "tags": []any{"a", "b"},
		"attrs": map[string]any{"k": int32(3)}, "raw": []byte{1}, "score": 0.5, "extra": nil,
	}
	for k, want := range checks {
		got, _ := r1.Get(k)
		if err := sameValue(want, got); err != nil {
			t.Errorf("%s: %v", k, err)
		}
	}
	items, _ := r1.Get("items")
	if fmt.Sprint(items) != "[Struct{name=x} Struct{name=y}]" {
		t.Errorf("items %v", items)
	}
	r2 := recs[1].v.(*connect.Struct)
	if tags, _ := r2.Get("tags"); len(tags.([]any)) != 0 {
		t.Errorf("tags %v", tags)
	}
}
