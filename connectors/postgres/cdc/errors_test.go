package cdc_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fjordhq/fjord/internal/testkit"
	"github.com/fjordhq/fjord/internal/testkit/connectkit"
)

// Bad input fails the task with what to fix, never silently.
func TestBadInputFailsClearly(t *testing.T) {
	s := newStack(t)
	s.pg.Exec(t, s.db, `CREATE TABLE t (id int PRIMARY KEY)`, `CREATE ROLE plain LOGIN PASSWORD 'pw'`)
	cases := []struct {
		name string
		kv   []string
		want string
	}{
		{"password", []string{"database.password", "wrong"}, "check database.user and database.password"},
		{"unreachable", []string{"database.port", "1"}, "cannot reach PostgreSQL"},
		{"nodb", []string{"database.dbname", "nope"}, `database "nope" does not exist`},
		{"rights", []string{"database.user", "plain", "database.password", "pw"}, "lacks the REPLICATION attribute"},
		{"nopub", []string{"publication.autocreate.mode", "disabled"}, "does not exist and publication.autocreate.mode=disabled"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msg := createOrFail(t, s, s.config("bad-"+c.name, c.kv...))
			if !strings.Contains(msg, c.want) {
				t.Errorf("error %q does not say %q", firstLines(msg), c.want)
			}
		})
	}
}

// A server without wal_level=logical is refused with how to fix it.
func TestWalLevelNotLogical(t *testing.T) {
	pg := testkit.StartPostgres(t, testkit.PostgresOptions{Settings: map[string]string{"wal_level": "replica", "max_wal_senders": "5"}})
	b := testkit.StartBroker(t, nil)
	s := &stack{pg: pg, broker: b, db: "postgres", worker: connectkit.Start(t, b.Addr, connectkit.Options{})}
	trace := createOrFail(t, s, s.config("wal"))
	if !strings.Contains(trace, "wal_level") || !strings.Contains(trace, "logical") {
		t.Errorf("trace %q does not explain wal_level", firstLines(trace))
	}
}

// A slot dropped while the connector was stopped means lost changes: the
// connector fails loudly, unless snapshot.mode=when_needed lets it take a
// new snapshot.
func TestSlotLostWhileStopped(t *testing.T) {
	s := newStack(t)
	s.pg.Exec(t, s.db, `CREATE TABLE t (id int PRIMARY KEY)`, `INSERT INTO t VALUES (1)`)
	offsets := t.TempDir() + "/offsets"
	s.worker.Close()
	w := connectkitStart(t, s, offsets)
	cfg := s.config("lost")
	w.Create(t, cfg)
	c := s.consume(t, "test.public.t")
	c.w = w
	c.next(1, 60*time.Second)
	s.pg.Exec(t, s.db, `INSERT INTO t VALUES (2)`)
	c.next(1, 30*time.Second)
	time.Sleep(300 * time.Millisecond)
	w.Close()
	dropSlot(t, s, "slot_lost")
	s.pg.Exec(t, s.db, `INSERT INTO t VALUES (3)`)

	w = connectkitStart(t, s, offsets)
	w.Create(t, cfg)
	trace := w.WaitFailed(t, "lost", 60*time.Second)
	if !strings.Contains(trace, "no longer exists") || !strings.Contains(trace, "snapshot.mode=when_needed") {
		t.Fatalf("trace %q does not explain the lost slot", firstLines(trace))
	}
	w.Close()

	w = connectkitStart(t, s, offsets)
	w.Create(t, with(cfg, "snapshot.mode", "when_needed"))
	c.w = w
	evs := c.next(3, 60*time.Second)
	ids := map[float64]bool{}
	for _, e := range evs {
		if e.op() != "r" {
			t.Errorf("event %v, want a new snapshot", e.Value)
		}
		ids[e.after()["id"].(float64)] = true
	}
	if len(ids) != 3 {
		t.Errorf("new snapshot rows %v, want 1, 2, 3", ids)
	}
}

// The validate endpoint lists every bad field, unknown keys included.
func TestValidateListsEveryBadField(t *testing.T) {
	s := newStack(t)
	cfg := s.config("v", "database.password", "wrong", "snapshot.mode", "sometimes", "decimal.handling.mode", "exact",
		"plugin.name", "decoderbufs", "slot.name", "Bad-Slot", "table.include.list", "public.a", "table.exclude.list", "public.b",
		"tombstones.on.delet", "false")
	delete(cfg, "topic.prefix")
	res, err := s.worker.H.ValidateConnectorConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	errs := map[string]string{}
	for _, c := range res.Configs {
		if len(c.Value.Errors) > 0 {
			errs[c.Value.Name] = strings.Join(c.Value.Errors, "; ")
		}
	}
	for _, k := range []string{"snapshot.mode", "decimal.handling.mode", "plugin.name", "slot.name", "table.exclude.list", "tombstones.on.delet", "topic.prefix"} {
		if errs[k] == "" {
			t.Errorf("no error for %s (errors: %v)", k, errs)
		}
	}
	if res.ErrorCount < 7 {
		t.Errorf("error_count %d, want at least 7: %v", res.ErrorCount, errs)
	}
	// With the fields right, a wrong password is reported on the password.
	res, err = s.worker.H.ValidateConnectorConfig(context.Background(), s.config("v", "database.password", "wrong"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Configs {
		if c.Value.Name == "database.password" && !strings.Contains(strings.Join(c.Value.Errors, ""), "password authentication failed") {
			t.Errorf("database.password errors %v", c.Value.Errors)
		}
	}
}

// createOrFail creates a connector with a bad config and returns why it
// cannot run: the validation error that refuses it (Connect validates a
// config when it is created, and the connector checks the database then,
// as Debezium does), or else the trace of its FAILED task.
func createOrFail(t *testing.T, s *stack, cfg map[string]string) string {
	t.Helper()
	_, _, err := s.worker.H.PutConnectorConfig(testkit.Context(t, 30*time.Second), cfg["name"], cfg, "", false)
	if err != nil {
		return err.Error()
	}
	defer s.worker.Delete(t, cfg["name"])
	return s.worker.WaitFailed(t, cfg["name"], 60*time.Second)
}

func dropSlot(t *testing.T, s *stack, slot string) {
	t.Helper()
	testkitCheck(t, 30*time.Second, func() error {
		var ok bool
		return queryRow(s, `SELECT pg_drop_replication_slot($1) IS NULL`, []any{slot}, &ok)
	})
}

func firstLines(s string) string {
	lines := strings.SplitN(s, "\n", 4)
	if len(lines) > 3 {
		lines = lines[:3]
	}
	return strings.Join(lines, "\n")
}

// snapshot.mode=initial_only snapshots once, without a slot; a restart
// after it finished neither fails nor snapshots again.
func TestInitialOnlyRestart(t *testing.T) {
	s := newStack(t)
	s.pg.Exec(t, s.db, `CREATE TABLE t (id int PRIMARY KEY)`, `INSERT INTO t SELECT generate_series(1, 5)`)
	offsets := t.TempDir() + "/offsets"
	s.worker.Close()
	w := connectkitStart(t, s, offsets)
	cfg := s.config("once", "snapshot.mode", "initial_only")
	w.Create(t, cfg)
	c := s.consume(t, "test.public.t")
	c.w = w
	c.next(5, 60*time.Second)
	time.Sleep(300 * time.Millisecond) // an offset flush
	w.Close()
	s.pg.Exec(t, s.db, `INSERT INTO t VALUES (6)`)
	w = connectkitStart(t, s, offsets)
	w.Create(t, cfg)
	c.w = w
	c.none(2 * time.Second)
	if err := w.Failed(); err != nil {
		t.Fatal(err)
	}
	var slots int
	if err := queryRow(s, `SELECT count(*) FROM pg_replication_slots`, nil, &slots); err != nil || slots != 0 {
		t.Errorf("initial_only left %d slots (%v)", slots, err)
	}
}
