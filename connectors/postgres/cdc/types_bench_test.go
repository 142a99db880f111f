package cdc

import (
	"testing"
	"time"
)

var benchNow = time.Unix(1700000000, 0)

// benchTable is a typical 10-column table and one row of it as pgoutput
// sends it.
func benchTable(b *testing.B) (*TableSchemas, [][]byte) {
	tbl := &Table{Schema: "public", Name: "orders", Key: []string{"id"}, Columns: []Column{
		{Name: "id", TypeName: "int8", TypeMod: -1, Default: "nextval('orders_id_seq'::regclass)"},
		{Name: "customer_id", TypeName: "int4", TypeMod: -1},
		{Name: "status", TypeName: "varchar", TypeMod: 36, Optional: true},
		{Name: "note", TypeName: "text", TypeMod: -1, Optional: true},
		{Name: "amount", TypeName: "numeric", TypeMod: numericMod2(10, 2), Optional: true},
		{Name: "paid", TypeName: "bool", TypeMod: -1, Optional: true},
		{Name: "weight", TypeName: "float8", TypeMod: -1, Optional: true},
		{Name: "created_at", TypeName: "timestamptz", TypeMod: -1},
		{Name: "ship_date", TypeName: "date", TypeMod: -1, Optional: true},
		{Name: "attrs", TypeName: "jsonb", TypeMod: -1, Optional: true},
	}}
	ts, err := NewTableSchemas("bench", tbl, TypeOptions{})
	if err != nil {
		b.Fatal(err)
	}
	row := [][]byte{
		[]byte("1234567"), []byte("42"), []byte("shipped"), []byte("leave at the door, ring twice"), []byte("1234.56"),
		[]byte("t"), []byte("12.5"), []byte("2026-11-29 12:00:00.123456+00"), []byte("2026-12-01"), []byte(`{"gift": true, "tags": ["a", "b"]}`),
	}
	return ts, row
}

// BenchmarkTypesRow decodes a 10-column row (the CDC source does it once
// per change, and must stream 100k+ rows/s on 2 cores).
func BenchmarkTypesRow(b *testing.B) {
	ts, row := benchTable(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ts.Row(row, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTypesEvent is Row, KeyOf and Envelope: all of an insert event
// this package builds.
func BenchmarkTypesEvent(b *testing.B) {
	ts, row := benchTable(b)
	lsn, tx := int64(123456789), int64(770)
	src := SourceInfo{Name: "bench", TsUs: 1700000000000000, Snapshot: "false", DB: "db", Sequence: `["1","2"]`,
		Schema: "public", Table: "orders", TxID: &tx, LSN: &lsn}
	b.ReportAllocs()
	for b.Loop() {
		after, err := ts.Row(row, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ts.KeyOf(after); err != nil {
			b.Fatal(err)
		}
		ts.Envelope("c", nil, after, src, benchNow)
	}
}
