package sink

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/internal/testkit"
)

var (
	keySchema   = connect.NewStruct().Name("test.Key").Field("id", connect.Int64Schema).Build()
	valueSchema = connect.NewStruct().Name("test.Value").
			Field("id", connect.Int64Schema).
			Field("name", connect.OptionalStringSchema).
			Field("n", connect.Int32Schema).Build()
)

func key(id int64) *connect.Struct { return structOf(keySchema, "id", id) }
func value(id int64, name string, n int32) *connect.Struct {
	return structOf(valueSchema, "id", id, "name", name, "n", n)
}

// row of the value schema, as to_jsonb renders it.
func jrow(id int64, name string, n int32) string {
	return fmt.Sprintf(`{"n": %d, "id": %d, "name": "%s"}`, n, id, name)
}

// TestInsertAndPKModes runs every insert.mode with every pk.mode that
// makes sense and checks the rows, and the primary key auto.create gave
// the table.
func TestInsertAndPKModes(t *testing.T) {
	pg := testkit.StartPostgres(t)
	pkOf := func(t *testing.T, table string) string {
		got := rows(t, pg, "postgres", fmt.Sprintf(`SELECT coalesce(string_agg(a.attname, ',' ORDER BY array_position(i.indkey, a.attnum)), '')
			FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
			WHERE i.indrelid = '%s'::regclass AND i.indisprimary`, table))
		return got[0]
	}
	primKey := func(id int64) (*connect.Schema, any) { return connect.Int64Schema, id }

	t.Run("insert/none", func(t *testing.T) {
		task, _ := startTask(t, pgProps(pg, "postgres", "auto.create", "true"), false)
		put(t, task, rec("ins_none", 0, nil, nil, valueSchema, value(1, "a", 1)),
			rec("ins_none", 1, nil, nil, valueSchema, value(1, "a", 1)))
		put(t, task, rec("ins_none", 2, nil, nil, valueSchema, value(2, "b", 2)))
		wantRows(t, textRows(t, pg, "postgres", "ins_none", "id"), jrow(1, "a", 1), jrow(1, "a", 1), jrow(2, "b", 2))
		if pk := pkOf(t, "ins_none"); pk != "" {
			t.Errorf("primary key %q, want none", pk)
		}
	})
	t.Run("insert/kafka", func(t *testing.T) {
		task, _ := startTask(t, pgProps(pg, "postgres", "auto.create", "true", "pk.mode", "kafka"), false)
		put(t, task, rec("ins_kafka", 7, nil, nil, valueSchema, value(1, "a", 1)), rec("ins_kafka", 8, nil, nil, valueSchema, value(1, "b", 2)))
		wantRows(t, rows(t, pg, "postgres", `SELECT __connect_topic, __connect_partition, __connect_offset, id, name, n FROM ins_kafka ORDER BY 3`),
			"ins_kafka|0|7|1|a|1", "ins_kafka|0|8|1|b|2")
		if pk := pkOf(t, "ins_kafka"); pk != "__connect_topic,__connect_partition,__connect_offset" {
			t.Errorf("primary key %q", pk)
		}
		// A redelivered record violates the key in insert mode: the task fails.
		err := task.Put(context.Background(), []*connect.Record{rec("ins_kafka", 8, nil, nil, valueSchema, value(1, "b", 2))})
		if err == nil || !strings.Contains(err.Error(), "duplicate key") {
			t.Fatalf("put of a duplicate: %v", err)
		}
	})
	t.Run("insert/kafka/custom-names", func(t *testing.T) {
		task, _ := startTask(t, pgProps(pg, "postgres", "auto.create", "true", "pk.mode", "kafka", "pk.fields", "t,p,o"), false)
		put(t, task, rec("ins_kafka2", 3, nil, nil, valueSchema, value(1, "a", 1)))
		wantRows(t, rows(t, pg, "postgres", `SELECT t, p, o, id FROM ins_kafka2`), "ins_kafka2|0|3|1")
	})
	t.Run("insert/record_key/struct", func(t *testing.T) {
		task, _ := startTask(t, pgProps(pg, "postgres", "auto.create", "true", "pk.mode", "record_key"), false)
		// The key's id wins over the value's (Confluent skips value fields
		// named as key fields).
		put(t, task, rec("ins_rk", 0, keySchema, key(10), valueSchema, value(99, "a", 1)))
		wantRows(t, textRows(t, pg, "postgres", "ins_rk", "id"), jrow(10, "a", 1))
		if pk := pkOf(t, "ins_rk"); pk != "id" {
			t.Errorf("primary key %q", pk)
		}
	})
	t.Run("insert/record_key/primitive", func(t *testing.T) {
		vs := connect.NewStruct().Field("name", connect.OptionalStringSchema).Build()
		task, _ := startTask(t, pgProps(pg, "postgres", "auto.create", "true", "pk.mode", "record_key", "pk.fields", "user_id"), false)
		ks, k := primKey(5)
		put(t, task, rec("ins_rkp", 0, ks, k, vs, structOf(vs, "name", "e")))
		wantRows(t, textRows(t, pg, "postgres", "ins_rkp", "user_id"), `{"name": "e", "user_id": 5}`)
		if pk := pkOf(t, "ins_rkp"); pk != "user_id" {
			t.Errorf("primary key %q", pk)
		}
	})
	t.Run("insert/record_value", func(t *testing.T) {
		task, _ := startTask(t, pgProps(pg, "postgres", "auto.create", "true", "pk.mode", "record_value", "pk.fields", "id,n"), false)
		put(t, task, rec("ins_rv", 0, nil, nil, valueSchema, value(1, "a", 2)))
		wantRows(t, textRows(t, pg, "postgres", "ins_rv", "id"), jrow(1, "a", 2))
		if pk := pkOf(t, "ins_rv"); pk != "id,n" {
			t.Errorf("primary key %q", pk)
		}
	})
	t.Run("upsert/kafka", func(t *testing.T) {
		task, _ := startTask(t, pgProps(pg, "postgres", "auto.create", "true", "pk.mode", "kafka", "insert.mode", "upsert"), false)
		batch := []*connect.Record{rec("ups_kafka", 0, nil, nil, valueSchema, value(1, "a", 1)), rec("ups_kafka", 1, nil, nil, valueSchema, value(1, "b", 1))}
		put(t, task, batch...)
		put(t, task, batch...) // redelivered: the same rows
		wantRows(t, rows(t, pg, "postgres", `SELECT __connect_offset, name FROM ups_kafka ORDER BY 1`), "0|a", "1|b")
	})
	t.Run("upsert/record_key", func(t *testing.T) {
		task, _ := startTask(t, pgProps(pg, "postgres", "auto.create", "true", "pk.mode", "record_key", "insert.mode", "upsert"), false)
		put(t, task, rec("ups_rk", 0, keySchema, key(1), valueSchema, value(1, "a", 1)),
			rec("ups_rk", 1, keySchema, key(2), valueSchema, value(2, "b", 1)),
			rec("ups_rk", 2, keySchema, key(1), valueSchema, value(1, "a2", 2))) // same key twice in a put
		put(t, task, rec("ups_rk", 3, keySchema, key(2), valueSchema, value(2, "b2", 3)))
		wantRows(t, textRows(t, pg, "postgres", "ups_rk", "id"), jrow(1, "a2", 2), jrow(2, "b2", 3))
	})
	t.Run("upsert/record_key/key-only", func(t *testing.T) {
		// Only key columns: ON CONFLICT DO NOTHING.
		vs := connect.NewStruct().Field("id", connect.Int64Schema).Build()
		task, _ := startTask(t, pgProps(pg, "postgres", "auto.create", "true", "pk.mode", "record_key", "insert.mode", "upsert"), false)
		put(t, task, rec("ups_keys", 0, keySchema, key(1), vs, structOf(vs, "id", int64(1))),
			rec("ups_keys", 1, keySchema, key(1), vs, structOf(vs, "id", int64(1))))
		wantRows(t, rows(t, pg, "postgres", `SELECT id FROM ups_keys`), "1")
	})
	t.Run("upsert/record_value", func(t *testing.T) {
		task, _ := startTask(t, pgProps(pg, "postgres", "auto.create", "true", "pk.mode", "record_value", "pk.fields", "id", "insert.mode", "upsert"), false)
		put(t, task, rec("ups_rv", 0, nil, nil, valueSchema, value(1, "a", 1)), rec("ups_rv", 1, nil, nil, valueSchema, value(1, "b", 2)))
		put(t, task, rec("ups_rv", 2, nil, nil, valueSchema, value(2, "c", 3)))
		wantRows(t, textRows(t, pg, "postgres", "ups_rv", "id"), jrow(1, "b", 2), jrow(2, "c", 3))
	})
	for _, pk := range []string{"record_key", "record_value"} {
		t.Run("update/"+pk, func(t *testing.T) {
			table := "upd_" + pk
			pg.Exec(t, "postgres", "CREATE TABLE "+table+" (id BIGINT PRIMARY KEY, name TEXT, n INT NOT NULL)",
				"INSERT INTO "+table+" VALUES (1, 'a', 1), (2, 'b', 2)")
			task, _ := startTask(t, pgProps(pg, "postgres", "pk.mode", pk, "pk.fields", "id", "insert.mode", "update"), false)
			if pk == "record_key" {
				task.s.pkFields = nil // all fields of the struct key
			}
			put(t, task, rec(table, 0, keySchema, key(1), valueSchema, value(1, "a1", 10)),
				rec(table, 1, keySchema, key(3), valueSchema, value(3, "none", 30)), // no such row: nothing happens
				rec(table, 2, keySchema, key(1), valueSchema, value(1, "a2", 20)))
			wantRows(t, textRows(t, pg, "postgres", table, "id"), jrow(1, "a2", 20), jrow(2, "b", 2))
		})
	}
}

// TestDeletes: tombstones delete by key, in order with the writes around
// them, in one put or many, in upsert and insert modes.
func TestDeletes(t *testing.T) {
	pg := testkit.StartPostgres(t)
	ins := func(topic string, off, id int64, name string) *connect.Record {
		return rec(topic, off, keySchema, key(id), valueSchema, value(id, name, int32(off)))
	}
	del := func(topic string, off, id int64) *connect.Record {
		return rec(topic, off, keySchema, key(id), nil, nil)
	}
	seq := func(topic string) []*connect.Record {
		return []*connect.Record{ins(topic, 0, 1, "a"), ins(topic, 1, 2, "b"), del(topic, 2, 1), ins(topic, 3, 3, "c"),
			del(topic, 4, 3), ins(topic, 5, 1, "a2"), del(topic, 6, 9)}
	}
	want := []string{jrow(1, "a2", 5), jrow(2, "b", 1)}
	for _, mode := range []string{"upsert", "insert"} {
		for _, oneByOne := range []bool{false, true} {
			topic := fmt.Sprintf("del_%s_%t", mode, oneByOne)
			t.Run(topic, func(t *testing.T) {
				task, _ := startTask(t, pgProps(pg, "postgres", "auto.create", "true", "pk.mode", "record_key",
					"insert.mode", mode, "delete.enabled", "true"), false)
				if oneByOne {
					for _, r := range seq(topic) {
						put(t, task, r)
					}
				} else {
					put(t, task, seq(topic)...)
				}
				wantRows(t, textRows(t, pg, "postgres", topic, "id"), want...)
			})
		}
	}
	t.Run("tombstone-for-missing-table", func(t *testing.T) {
		task, _ := startTask(t, pgProps(pg, "postgres", "auto.create", "true", "pk.mode", "record_key",
			"insert.mode", "upsert", "delete.enabled", "true"), false)
		put(t, task, del("never_created", 0, 1))
		if got := rows(t, pg, "postgres", `SELECT count(*) FROM pg_class WHERE relname = 'never_created'`); got[0] != "0" {
			t.Fatal("a tombstone created a table")
		}
	})
	t.Run("tombstone-without-delete.enabled", func(t *testing.T) {
		task, _ := startTask(t, pgProps(pg, "postgres", "auto.create", "true", "pk.mode", "record_key", "insert.mode", "upsert"), false)
		err := task.Put(context.Background(), []*connect.Record{del("no_deletes", 0, 1)})
		if err == nil || !strings.Contains(err.Error(), "requires records with a non-null Struct or String value") {
			t.Fatalf("put of a tombstone with deletes disabled: %v", err)
		}
	})
}

// TestUpsertMatchesOneByOne: random puts of writes and deletes over a few
// keys, in random batch sizes, leave the table as applying the records one
// at a time would.
func TestUpsertMatchesOneByOne(t *testing.T) {
	pg := testkit.StartPostgres(t)
	rng := rand.New(rand.NewPCG(1, 2))
	task, _ := startTask(t, pgProps(pg, "postgres", "auto.create", "true", "pk.mode", "record_key",
		"insert.mode", "upsert", "delete.enabled", "true", "batch.size", "37"), false)
	model := map[int64]string{}
	var recs []*connect.Record
	for off := range int64(3000) {
		id := rng.Int64N(40)
		if rng.IntN(4) == 0 {
			recs = append(recs, rec("random", off, keySchema, key(id), nil, nil))
			delete(model, id)
			continue
		}
		name := fmt.Sprintf("v%d", off)
		recs = append(recs, rec("random", off, keySchema, key(id), valueSchema, value(id, name, int32(off))))
		model[id] = jrow(id, name, int32(off))
	}
	for len(recs) > 0 {
		n := min(len(recs), 1+rng.IntN(300))
		put(t, task, recs[:n]...)
		recs = recs[n:]
	}
	var want []string
	for id := range int64(40) {
		if r, ok := model[id]; ok {
			want = append(want, r)
		}
	}
	wantRows(t, textRows(t, pg, "postgres", "random", "id"), want...)
}
