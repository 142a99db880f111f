package cdc

import (
	"strings"
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect"
)

func int64p(v int64) *int64 { return &v }

func TestEnvelopeSourceStruct(t *testing.T) {
	origin := "o1"
	src := SourceInfo{Name: "p", TsUs: -1500, Snapshot: "last", DB: "db", Sequence: `["1","2"]`, Schema: "s", Table: "t",
		TxID: int64p(7), LSN: int64p(8), Xmin: int64p(9), Origin: &origin, OriginLSN: int64p(10)}
	got := render(t, SourceSchema(), src.Struct())
	want := `{"schema":{"type":"struct","fields":[{"type":"string","optional":false,"field":"version"},{"type":"string","optional":false,"field":"connector"},` +
		`{"type":"string","optional":false,"field":"name"},{"type":"int64","optional":false,"field":"ts_ms"},` +
		`{"type":"string","optional":true,"name":"io.debezium.data.Enum","version":1,"parameters":{"allowed":"true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"},"default":"false","field":"snapshot"},` +
		`{"type":"string","optional":false,"field":"db"},{"type":"string","optional":true,"field":"sequence"},{"type":"int64","optional":true,"field":"ts_us"},` +
		`{"type":"int64","optional":true,"field":"ts_ns"},{"type":"string","optional":false,"field":"schema"},{"type":"string","optional":false,"field":"table"},` +
		`{"type":"int64","optional":true,"field":"txId"},{"type":"int64","optional":true,"field":"lsn"},{"type":"int64","optional":true,"field":"xmin"},` +
		`{"type":"string","optional":true,"field":"origin"},{"type":"int64","optional":true,"field":"origin_lsn"}],"optional":false,"name":"io.debezium.connector.postgresql.Source","version":1},` +
		`"payload":{"version":"3.6.1.Final","connector":"postgresql","name":"p","ts_ms":-2,"snapshot":"last","db":"db","sequence":"[\"1\",\"2\"]","ts_us":-1500,"ts_ns":-1500000,` +
		`"schema":"s","table":"t","txId":7,"lsn":8,"xmin":9,"origin":"o1","origin_lsn":10}}`
	if got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}

	// Streaming: snapshot left unset (its default says false);
	// incremental snapshots carry no txId, lsn or xmin.
	st := SourceInfo{Snapshot: "false", TxID: int64p(1)}.Struct()
	if v, _ := st.GetWithoutDefault("snapshot"); v != nil {
		t.Errorf("streaming snapshot field set to %v", v)
	}
	if v, _ := st.Get("snapshot"); v != "false" {
		t.Errorf("snapshot default %v", v)
	}
	st = SourceInfo{Snapshot: "incremental", TxID: int64p(1), LSN: int64p(2), Xmin: int64p(3), Version: "x"}.Struct()
	for _, f := range []string{"txId", "lsn", "xmin", "sequence"} {
		if v, _ := st.Get(f); v != nil {
			t.Errorf("incremental: %s = %v", f, v)
		}
	}
	if v, _ := st.Get("version"); v != "x" {
		t.Errorf("version override: %v", v)
	}
	if err := st.Validate(); err != nil {
		t.Error(err)
	}
}

func TestEnvelopeSequence(t *testing.T) {
	a, b := uint64(27629752), uint64(1)
	for _, c := range []struct {
		last, lsn *uint64
		want      string
	}{
		{nil, &a, `[null,"27629752"]`},
		{&b, &a, `["1","27629752"]`},
		{nil, nil, `[null,null]`},
	} {
		if got := SourceSequence(c.last, c.lsn); got != c.want {
			t.Errorf("got %s want %s", got, c.want)
		}
	}
}

func TestEnvelopeTopicNames(t *testing.T) {
	for _, c := range []struct{ prefix, schema, table, want string }{
		{"p", "inventory", "Mixed Case", "p.inventory.Mixed_Case"},
		{"p", "", "t", "p.t"},
		{"p", "s", "t\U0001F680", "p.s.t__"},
		{"p", "sch-ema", "t.1_x", "p.sch-ema.t.1_x"},
		{"p", "s", strings.Repeat("x", 300), "p.s." + strings.Repeat("x", 245)},
	} {
		if got := DataChangeTopic(c.prefix, c.schema, c.table); got != c.want {
			t.Errorf("%q %q %q: got %q want %q", c.prefix, c.schema, c.table, got, c.want)
		}
	}
	tbl := &Table{Schema: "inventory", Name: "Mixed Case", Columns: []Column{{Name: "Id", TypeName: "int4", TypeMod: -1}}, Key: []string{"Id"}}
	ts, err := NewTableSchemas("p", tbl, TypeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for s, want := range map[*connect.Schema]string{ts.Key: "p.inventory.Mixed_Case.Key", ts.Value: "p.inventory.Mixed_Case.Value",
		ts.EnvelopeSchema: "p.inventory.Mixed_Case.Envelope"} {
		if s.Name != want {
			t.Errorf("schema %q, want %q", s.Name, want)
		}
	}
}

func TestEnvelopeEvents(t *testing.T) {
	tbl := &Table{Schema: "s", Name: "t", Key: []string{"b", "a"}, Columns: []Column{
		{Name: "a", TypeName: "int4", TypeMod: -1},
		{Name: "b", TypeName: "text", TypeMod: -1},
		{Name: "c", TypeName: "tsquery", TypeMod: -1, Optional: true}, // left out
		{Name: "d", TypeName: "int8", TypeMod: -1, Optional: true},
	}}
	ts, err := NewTableSchemas("p", tbl, TypeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	row, err := ts.Row([][]byte{[]byte("1"), []byte("x"), []byte("'q'"), nil}, nil)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ts.KeyOf(row)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := render(t, ts.Key, key), `{"schema":{"type":"struct","fields":[{"type":"string","optional":false,"field":"b"},{"type":"int32","optional":false,"field":"a"}],"optional":false,"name":"p.s.t.Key"},"payload":{"b":"x","a":1}}`; got != want {
		t.Errorf("key\n got %s\nwant %s", got, want)
	}
	now := time.Unix(1700000000, 123456789)
	env := ts.EnvelopeTx("c", nil, row, SourceInfo{Name: "p", DB: "db", Schema: "s", Table: "t", TsUs: 5}, now,
		&TxBlock{ID: "770:123", TotalOrder: 2, DataCollectionOrder: 1})
	if err := env.Validate(); err != nil {
		t.Fatal(err)
	}
	got := render(t, ts.EnvelopeSchema, env)
	for _, want := range []string{
		`"name":"p.s.t.Envelope","version":2}`,
		`{"type":"struct","fields":[{"type":"string","optional":false,"field":"id"},{"type":"int64","optional":false,"field":"total_order"},{"type":"int64","optional":false,"field":"data_collection_order"}],"optional":true,"name":"event.block","version":1,"field":"transaction"},{"type":"string","optional":false,"field":"op"},{"type":"int64","optional":true,"field":"ts_ms"},{"type":"int64","optional":true,"field":"ts_us"},{"type":"int64","optional":true,"field":"ts_ns"}]`,
		`"payload":{"before":null,"after":{"a":1,"b":"x","d":null},`,
		`"transaction":{"id":"770:123","total_order":2,"data_collection_order":1},"op":"c","ts_ms":1700000000123,"ts_us":1700000000123456,"ts_ns":1700000000123456789}`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("envelope %s\nlacks %s", got, want)
		}
	}
	if e := ts.Envelope("t", nil, nil, SourceInfo{}, now); e.Validate() != nil {
		t.Errorf("truncate envelope: %v", e.Validate())
	}

	if k, err := ts.KeyOf(nil); k != nil || err != nil {
		t.Errorf("KeyOf(nil) = %v, %v", k, err)
	}
	other, _ := NewTableSchemas("p", &Table{Schema: "s", Name: "u", Columns: tbl.Columns, Key: tbl.Key}, TypeOptions{})
	if _, err := other.KeyOf(row); err == nil {
		t.Error("KeyOf of another table's row: no error")
	}
	if _, err := ts.Row([][]byte{nil}, nil); err == nil {
		t.Error("short row: no error")
	}
	if _, err := ts.Row(make([][]byte, 4), []bool{true}); err == nil {
		t.Error("short TOAST flags: no error")
	}
	nokey, _ := NewTableSchemas("p", &Table{Schema: "s", Name: "v", Columns: tbl.Columns}, TypeOptions{})
	if nokey.Key != nil {
		t.Error("table without key has a key schema")
	}
	if k, err := nokey.KeyOf(row); k != nil || err != nil {
		t.Errorf("no key: KeyOf = %v, %v", k, err)
	}
}
