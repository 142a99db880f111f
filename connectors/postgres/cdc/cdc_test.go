package cdc_test

import (
	"strings"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
)

// A snapshot of the rows already there, then the stream of changes after
// it: no gap, no overlap, Debezium's envelopes and markers.
func TestSnapshotThenStream(t *testing.T) {
	s := newStack(t)
	s.pg.Exec(t, s.db,
		`CREATE TABLE items (id serial PRIMARY KEY, name text NOT NULL, qty int)`,
		`CREATE TABLE other (k text PRIMARY KEY, v text)`,
		`INSERT INTO items (name, qty) VALUES ('a', 1), ('b', 2), ('c', 3)`,
		`INSERT INTO other VALUES ('x', 'y')`)
	s.worker.Create(t, s.config("snap"))
	items := s.consume(t, "test.public.items")
	evs := items.next(3, 60*time.Second)
	for i, e := range evs {
		if e.op() != "r" {
			t.Fatalf("snapshot event %d op %q, want r", i, e.op())
		}
		if got := e.after()["name"]; got != string(rune('a'+i)) {
			t.Errorf("snapshot event %d name %v", i, got)
		}
		if e.Key["id"] != float64(i+1) {
			t.Errorf("snapshot event %d key %v", i, e.Key)
		}
		if e.source()["table"] != "items" || e.source()["schema"] != "public" || e.source()["db"] != "app" || e.source()["name"] != "test" {
			t.Errorf("snapshot event %d source %v", i, e.source())
		}
	}
	// Debezium's markers: the whole snapshot's first and last records,
	// and the first/last of each table.
	other := s.consume(t, "test.public.other").next(1, 30*time.Second)
	markers := []string{evs[0].source()["snapshot"].(string), evs[1].source()["snapshot"].(string), evs[2].source()["snapshot"].(string), other[0].source()["snapshot"].(string)}
	if strings.Join(markers, ",") != "first,true,last_in_data_collection,last" {
		t.Errorf("snapshot markers %v, want first,true,last_in_data_collection,last", markers)
	}

	s.pg.Exec(t, s.db,
		`INSERT INTO items (name, qty) VALUES ('d', 4)`,
		`UPDATE items SET qty = 20 WHERE id = 2`,
		`DELETE FROM items WHERE id = 3`,
		`BEGIN; INSERT INTO items (name) VALUES ('e'); UPDATE items SET name = 'E' WHERE name = 'e'; COMMIT`)
	evs = items.next(6, 30*time.Second)
	if got := ops(evs); got != "cud-cu" {
		t.Fatalf("ops %q, want cud-cu (insert, update, delete, tombstone, insert, update)", got)
	}
	if evs[0].after()["name"] != "d" || evs[0].before() != nil || evs[0].source()["snapshot"] != "false" {
		t.Errorf("insert event %v", evs[0].Value)
	}
	if evs[1].after()["qty"] != float64(20) || evs[1].before() != nil {
		t.Errorf("update event (default replica identity: no before) %v", evs[1].Value)
	}
	if evs[2].before()["id"] != float64(3) || evs[2].after() != nil || evs[3].Key["id"] != float64(3) {
		t.Errorf("delete %v / tombstone key %v", evs[2].Value, evs[3].Key)
	}
	if evs[4].source()["txId"] != evs[5].source()["txId"] || evs[4].source()["txId"] == evs[1].source()["txId"] {
		t.Errorf("transaction ids: %v %v %v", evs[1].source()["txId"], evs[4].source()["txId"], evs[5].source()["txId"])
	}
	if _, ok := evs[0].source()["lsn"].(float64); !ok {
		t.Errorf("source.lsn %v", evs[0].source()["lsn"])
	}
}

// REPLICA IDENTITY FULL gives the before image; a primary key change is
// a delete of the old key and a create of the new one; unchanged TOASTed
// values are Debezium's placeholder; truncates are events when not
// skipped.
func TestReplicaIdentityKeysToastTruncate(t *testing.T) {
	s := newStack(t)
	s.pg.Exec(t, s.db,
		`CREATE TABLE full_t (id int PRIMARY KEY, v text)`,
		`ALTER TABLE full_t REPLICA IDENTITY FULL`,
		`CREATE TABLE toast_t (id int PRIMARY KEY, small int, big text)`,
		`ALTER TABLE toast_t ALTER COLUMN big SET STORAGE EXTERNAL`,
		`INSERT INTO full_t VALUES (1, 'one')`,
		`INSERT INTO toast_t VALUES (1, 0, repeat('x', 10000))`)
	s.worker.Create(t, s.config("ident", "skipped.operations", "none", "snapshot.mode", "no_data"))
	waitSlot(t, s, "slot_ident")
	full := s.consume(t, "test.public.full_t")
	toast := s.consume(t, "test.public.toast_t")
	s.pg.Exec(t, s.db,
		`UPDATE full_t SET v = 'uno' WHERE id = 1`,
		`UPDATE full_t SET id = 2 WHERE id = 1`,
		`UPDATE toast_t SET small = 1 WHERE id = 1`,
		`TRUNCATE full_t`)
	evs := full.next(5, 60*time.Second)
	if got := ops(evs); got != "ud-ct" {
		t.Fatalf("full_t ops %q, want ud-ct", got)
	}
	if evs[0].before()["v"] != "one" || evs[0].after()["v"] != "uno" {
		t.Errorf("FULL identity update: before %v after %v", evs[0].before(), evs[0].after())
	}
	if evs[1].Key["id"] != float64(1) || evs[3].Key["id"] != float64(2) || evs[1].before()["v"] != "uno" {
		t.Errorf("key change: delete key %v before %v, create key %v", evs[1].Key, evs[1].before(), evs[3].Key)
	}
	if !strings.Contains(evs[1].Headers["__debezium.newkey"], "2") || !strings.Contains(evs[3].Headers["__debezium.oldkey"], "1") {
		t.Errorf("key change headers: %v / %v", evs[1].Headers, evs[3].Headers)
	}
	if evs[4].Key != nil || evs[4].before() != nil || evs[4].after() != nil {
		t.Errorf("truncate event %v key %v", evs[4].Value, evs[4].Key)
	}
	te := toast.next(1, 30*time.Second)[0]
	if te.after()["small"] != float64(1) || te.after()["big"] != "__debezium_unavailable_value" {
		t.Errorf("TOAST: after %v, want small=1 and big=__debezium_unavailable_value", te.after())
	}
}

// Relation messages change the schema mid-stream: added, dropped and
// retyped columns.
func TestSchemaChangesMidStream(t *testing.T) {
	s := newStack(t)
	s.pg.Exec(t, s.db, `CREATE TABLE t (id int PRIMARY KEY, a int)`)
	s.worker.Create(t, s.config("ddl", "snapshot.mode", "no_data"))
	waitSlot(t, s, "slot_ddl")
	c := s.consume(t, "test.public.t")
	s.pg.Exec(t, s.db,
		`INSERT INTO t VALUES (1, 1)`,
		`ALTER TABLE t ADD COLUMN b text`,
		`INSERT INTO t VALUES (2, 2, 'two')`,
		`ALTER TABLE t DROP COLUMN a`,
		`INSERT INTO t VALUES (3, 'three')`,
		`ALTER TABLE t ALTER COLUMN b TYPE int USING length(b)`,
		`INSERT INTO t VALUES (4, 44)`)
	evs := c.next(4, 60*time.Second)
	fields := func(e event) string {
		after := e.ValueSchema["fields"].([]any)[1].(map[string]any)["fields"].([]any)
		var names []string
		for _, f := range after {
			fm := f.(map[string]any)
			names = append(names, fm["field"].(string)+":"+fm["type"].(string))
		}
		return strings.Join(names, ",")
	}
	want := []string{"id:int32,a:int32", "id:int32,a:int32,b:string", "id:int32,b:string", "id:int32,b:int32"}
	for i, e := range evs {
		if got := fields(e); got != want[i] {
			t.Errorf("event %d after fields %s, want %s", i, got, want[i])
		}
	}
	if evs[3].after()["b"] != float64(44) || evs[2].after()["b"] != "three" {
		t.Errorf("values after schema changes: %v %v", evs[2].after(), evs[3].after())
	}
}

// Stopping and restarting the worker resumes from the committed
// position: nothing lost, and duplicates only from the uncommitted
// window.
func TestRestartResumes(t *testing.T) {
	s := newStack(t)
	s.pg.Exec(t, s.db, `CREATE TABLE t (id int PRIMARY KEY)`, `INSERT INTO t SELECT generate_series(1, 100)`)
	offsets := t.TempDir() + "/offsets"
	s.worker.Close()
	w1 := connectkitStart(t, s, offsets)
	cfg := s.config("resume")
	w1.Create(t, cfg)
	c := s.consume(t, "test.public.t")
	c.w = w1
	c.next(100, 60*time.Second)
	s.pg.Exec(t, s.db, `INSERT INTO t SELECT generate_series(101, 200)`)
	c.next(100, 30*time.Second)
	time.Sleep(300 * time.Millisecond) // an offset flush (100 ms)
	w1.Close()
	s.pg.Exec(t, s.db, `INSERT INTO t SELECT generate_series(201, 300)`, `DELETE FROM t WHERE id <= 10`)
	w2 := connectkitStart(t, s, offsets)
	w2.Create(t, cfg)
	c.w = w2
	evs := c.next(120, 60*time.Second) // 100 inserts, 10 deletes + 10 tombstones
	seen := map[float64]int{}
	for _, e := range evs {
		if e.Value != nil && e.op() == "c" {
			seen[e.after()["id"].(float64)]++
		}
		if e.op() == "r" {
			t.Fatalf("restart took a new snapshot: %v", e.Value)
		}
	}
	for id := 201.0; id <= 300; id++ {
		if seen[id] != 1 {
			t.Fatalf("row %v seen %d times after the restart", id, seen[id])
		}
	}
	c.none(500 * time.Millisecond)
}

// With heartbeats on, the slot of an idle database keeps advancing while
// another database of the same server writes, so WAL is not retained.
func TestHeartbeatAdvancesIdleSlot(t *testing.T) {
	s := newStack(t)
	s.pg.CreateDatabase(t, "busy")
	s.pg.Exec(t, "busy", `CREATE TABLE w (id serial PRIMARY KEY, v text)`)
	s.pg.Exec(t, s.db, `CREATE TABLE idle (id int PRIMARY KEY)`)
	s.worker.Create(t, s.config("hb", "heartbeat.interval.ms", "200", "snapshot.mode", "no_data"))
	waitSlot(t, s, "slot_hb")
	start := slotLSN(t, s, "slot_hb")
	hb := s.consume(t, "__debezium-heartbeat.test")
	deadline := time.Now().Add(60 * time.Second)
	for {
		s.pg.Exec(t, "busy", `INSERT INTO w (v) SELECT repeat('x', 100) FROM generate_series(1, 1000)`)
		if now := slotLSN(t, s, "slot_hb"); now > start+100_000 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("confirmed_flush_lsn stayed at %s (start %s)", lsnStr(slotLSN(t, s, "slot_hb")), lsnStr(start))
		}
		time.Sleep(200 * time.Millisecond)
	}
	e := hb.next(1, 10*time.Second)[0]
	if e.Key["serverName"] != "test" || e.Value["ts_ms"] == nil {
		t.Errorf("heartbeat record key %v value %v", e.Key, e.Value)
	}
}

func waitSlot(t *testing.T, s *stack, slot string) {
	t.Helper()
	testkitCheck(t, 60*time.Second, func() error {
		if err := s.worker.Failed(); err != nil {
			t.Fatal(err)
		}
		var active bool
		err := queryRow(s, `SELECT active FROM pg_replication_slots WHERE slot_name = $1`, []any{slot}, &active)
		if err == nil && !active {
			err = errNotYet
		}
		return err
	})
}

func slotLSN(t *testing.T, s *stack, slot string) uint64 {
	t.Helper()
	var l string
	if err := queryRow(s, `SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1`, []any{slot}, &l); err != nil {
		t.Fatal(err)
	}
	v, err := pglogrepl.ParseLSN(l)
	if err != nil {
		t.Fatal(err)
	}
	return uint64(v)
}

func lsnStr(l uint64) string { return pglogrepl.LSN(l).String() }
