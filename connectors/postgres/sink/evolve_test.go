package sink

import (
	"context"
	"strings"
	"testing"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/internal/testkit"
)

// TestAutoEvolve: a new optional field mid-stream adds a column (and a
// required one with a default); without auto.evolve, or for a required
// field without default, the put fails with Confluent's message.
func TestAutoEvolve(t *testing.T) {
	pg := testkit.StartPostgres(t)
	v1 := connect.NewStruct().Name("v").Field("id", connect.Int64Schema).Field("a", connect.StringSchema).Build()
	v2 := connect.NewStruct().Name("v").Field("id", connect.Int64Schema).Field("a", connect.StringSchema).
		Field("b", connect.OptionalInt32Schema).
		Field("c", connect.NewSchema(connect.String).Default("cdef").Build()).Build()
	v3 := connect.NewStruct().Name("v").Field("id", connect.Int64Schema).Field("a", connect.StringSchema).
		Field("d", connect.Int32Schema).Build()
	props := pgProps(pg, "postgres", "auto.create", "true", "auto.evolve", "true", "pk.mode", "record_value", "pk.fields", "id", "insert.mode", "upsert")
	task, _ := startTask(t, props, false)
	// One put: the schema changes mid-put.
	put(t, task,
		rec("evolve", 0, nil, nil, v1, structOf(v1, "id", int64(1), "a", "x")),
		rec("evolve", 1, nil, nil, v2, structOf(v2, "id", int64(2), "a", "y", "b", int32(5), "c", "set")),
		rec("evolve", 2, nil, nil, v1, structOf(v1, "id", int64(3), "a", "z")))
	wantRows(t, textRows(t, pg, "postgres", "evolve", "id"),
		`{"a": "x", "b": null, "c": "cdef", "id": 1}`, `{"a": "y", "b": 5, "c": "set", "id": 2}`, `{"a": "z", "b": null, "c": "cdef", "id": 3}`)
	wantRows(t, rows(t, pg, "postgres", `SELECT column_name, data_type, is_nullable, coalesce(column_default, '') FROM information_schema.columns WHERE table_name = 'evolve' ORDER BY ordinal_position`),
		"id|bigint|NO|", "a|text|NO|", "b|integer|YES|", "c|text|YES|'cdef'::text")

	err := task.Put(context.Background(), []*connect.Record{rec("evolve", 3, nil, nil, v3, structOf(v3, "id", int64(4), "a", "w", "d", int32(1)))})
	if err == nil || !strings.Contains(err.Error(), `Cannot ALTER TABLE "evolve" to add missing field d, as the field is not optional and does not have a default value`) {
		t.Fatalf("put of a required new field: %v", err)
	}

	noEvolve, tc := startTask(t, merged(props, "auto.evolve", "false", "table.name.format", "fixed"), true)
	pg.Exec(t, "postgres", "CREATE TABLE fixed (id BIGINT PRIMARY KEY, a TEXT)")
	put(t, noEvolve, rec("x", 0, nil, nil, v2, structOf(v2, "id", int64(1), "a", "y", "b", int32(5), "c", "set")),
		rec("x", 1, nil, nil, v1, structOf(v1, "id", int64(2), "a", "ok")))
	if len(tc.reported) != 1 || !strings.Contains(tc.errs[0].Error(), `Table "fixed" is missing fields ([b, c]) and auto-evolution is disabled`) {
		t.Fatalf("reported %d records: %v", len(tc.reported), tc.errs)
	}
	wantRows(t, textRows(t, pg, "postgres", "fixed", "id"), `{"a": "ok", "id": 2}`)

	noCreate, _ := startTask(t, merged(props, "auto.create", "false"), false)
	err = noCreate.Put(context.Background(), []*connect.Record{rec("absent", 0, nil, nil, v1, structOf(v1, "id", int64(1), "a", "x"))})
	if err == nil || !strings.Contains(err.Error(), `Table "absent" is missing and auto-creation is disabled`) {
		t.Fatalf("put into a missing table: %v", err)
	}
}

// TestDataMapping covers fields.whitelist, table.name.format (with a
// schema), quote.sql.identifiers=never, STRING values,
// replace.null.with.default and table.types.
func TestDataMapping(t *testing.T) {
	pg := testkit.StartPostgres(t)
	vs := connect.NewStruct().Field("Id", connect.Int64Schema).Field("Keep", connect.StringSchema).
		Field("drop_me", connect.StringSchema).
		Field("opt", connect.NewSchema(connect.String).Optional().Default("d").Build()).Build()
	v := structOf(vs, "Id", int64(1), "Keep", "k", "drop_me", "x")

	t.Run("whitelist-and-format", func(t *testing.T) {
		pg.Exec(t, "postgres", "CREATE SCHEMA staging")
		task, _ := startTask(t, pgProps(pg, "postgres", "auto.create", "true", "fields.whitelist", "Keep,opt",
			"pk.mode", "record_value", "pk.fields", "Id", "table.name.format", "staging.kafka_${topic}"), false)
		put(t, task, rec("orders", 0, nil, nil, vs, v))
		wantRows(t, textRows(t, pg, "postgres", `staging."kafka_orders"`, `"Id"`), `{"Id": 1, "opt": "d", "Keep": "k"}`)
	})
	t.Run("replace.null.with.default=false", func(t *testing.T) {
		task, _ := startTask(t, pgProps(pg, "postgres", "auto.create", "true", "replace.null.with.default", "false",
			"table.name.format", "nulls"), false)
		put(t, task, rec("orders", 0, nil, nil, vs, v))
		wantRows(t, rows(t, pg, "postgres", `SELECT coalesce(opt, 'NULL') FROM nulls`), "NULL")
	})
	t.Run("quote-never", func(t *testing.T) {
		task, _ := startTask(t, pgProps(pg, "postgres", "auto.create", "true", "auto.evolve", "true", "quote.sql.identifiers", "never",
			"table.name.format", "Mixed_${topic}"), false)
		put(t, task, rec("Case", 0, nil, nil, vs, v))
		// Unquoted names fold to lower case, table and columns alike.
		wantRows(t, textRows(t, pg, "postgres", "mixed_case", "id"), `{"id": 1, "opt": "d", "keep": "k", "drop_me": "x"}`)
		put(t, task, rec("Case", 1, nil, nil, vs, structOf(vs, "Id", int64(2), "Keep", "k2", "drop_me", "y")))
		wantRows(t, rows(t, pg, "postgres", `SELECT count(*) FROM mixed_case`), "2")
	})
	t.Run("string-values", func(t *testing.T) {
		task, _ := startTask(t, pgProps(pg, "postgres", "auto.create", "true", "pk.mode", "kafka",
			"string.output.value.column.name", "line"), false)
		put(t, task, rec("lines", 4, nil, nil, connect.StringSchema, "hello\tworld"))
		wantRows(t, rows(t, pg, "postgres", `SELECT __connect_offset, line FROM lines`), "4|hello\tworld")
	})
	t.Run("table.types", func(t *testing.T) {
		pg.Exec(t, "postgres", "CREATE TABLE base (id BIGINT PRIMARY KEY, a TEXT)", "CREATE VIEW v AS SELECT * FROM base")
		small := connect.NewStruct().Field("id", connect.Int64Schema).Field("a", connect.StringSchema).Build()
		r := rec("v", 0, nil, nil, small, structOf(small, "id", int64(7), "a", "via view"))
		task, _ := startTask(t, pgProps(pg, "postgres"), false)
		if err := task.Put(context.Background(), []*connect.Record{r}); err == nil || !strings.Contains(err.Error(), `"v" is a VIEW, which table.types does not include`) {
			t.Fatalf("put into a view: %v", err)
		}
		views, _ := startTask(t, pgProps(pg, "postgres", "table.types", "TABLE,VIEW"), false)
		put(t, views, r)
		wantRows(t, rows(t, pg, "postgres", `SELECT id, a FROM base`), "7|via view")
	})
}
