package sink

import (
	"testing"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/internal/testkit"
)

func TestSmoke(t *testing.T) {
	pg := testkit.StartPostgres(t)
	ks := connect.NewStruct().Field("id", connect.Int64Schema).Build()
	vs := connect.NewStruct().Field("id", connect.Int64Schema).Field("name", connect.OptionalStringSchema).Build()
	task, _ := startTask(t, pgProps(pg, "postgres", "insert.mode", "upsert", "pk.mode", "record_key", "auto.create", "true", "delete.enabled", "true"), false)
	put(t, task,
		rec("users", 0, ks, structOf(ks, "id", int64(1)), vs, structOf(vs, "id", int64(1), "name", "a\tb\\c\nd")),
		rec("users", 1, ks, structOf(ks, "id", int64(2)), vs, structOf(vs, "id", int64(2), "name", "x")),
		rec("users", 2, ks, structOf(ks, "id", int64(1)), vs, structOf(vs, "id", int64(1), "name", "ann")),
		rec("users", 3, ks, structOf(ks, "id", int64(2)), nil, nil),
	)
	wantRows(t, textRows(t, pg, "postgres", "users", "id"), `{"id": 1, "name": "ann"}`)
	put(t, task,
		rec("users", 4, ks, structOf(ks, "id", int64(3)), vs, structOf(vs, "id", int64(3), "name", "a\tb\\c\nd")),
	)
	wantRows(t, textRows(t, pg, "postgres", "users", "id"), `{"id": 1, "name": "ann"}`, `{"id": 3, "name": "a\tb\\c\nd"}`)
}
