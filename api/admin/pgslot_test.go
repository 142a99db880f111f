package admin

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect/herder"
	"github.com/fjordhq/fjord/internal/testkit"
)

const cxJSONConverter = "org.apache.kafka.connect.json.JsonConverter"

// TestPipelinesPostgresSlotLag runs the real postgres-cdc connector
// against a real PostgreSQL (it fails, never skips, when PostgreSQL is
// not installed), stops it, and writes to the table: the Postgres hop's
// lag in bytes grows with the WAL the stopped connector has not
// confirmed, and its lag in seconds counts from the last change the
// connector committed. With the database down, the view still answers,
// the hop saying why its lags are null.
func TestPipelinesPostgresSlotLag(t *testing.T) {
	testkit.SkipShort(t, "PostgreSQL CDC with a Connect worker")
	pg := testkit.StartPostgres(t)
	pg.CreateDatabase(t, "app")
	pg.Exec(t, "app", `CREATE TABLE items (id serial PRIMARY KEY, name text NOT NULL)`,
		`INSERT INTO items (name) SELECT 'before-' || g FROM generate_series(1, 5) g`)
	b := testkit.StartBroker(t, nil)
	w := cxStartWorker(t, b.Addr, cxJSONConverter, nil)
	api := cxStartAPI(t, Options{ClientOpts: cxSeeds(b.Addr), Herder: w.h})

	w.create(t, map[string]string{
		"name": "cdc", "connector.class": "postgres-cdc", // Fjord's alias of Debezium's class
		"database.hostname": pg.Host, "database.port": fmt.Sprint(pg.Port), "database.user": pg.User,
		"database.password": testkit.PostgresPassword, "database.dbname": "app", "database.sslmode": "disable",
		"topic.prefix": "shop", "plugin.name": "pgoutput", "slot.name": "cdc_slot", "publication.name": "cdc_pub",
	})
	pgName := fmt.Sprintf("%s:%d/app", pg.Host, pg.Port)

	// Snapshot, then a streamed change: the connector's committed
	// offset then carries the change's ts_usec.
	testkit.CheckFor(t, 60*time.Second, 100*time.Millisecond, func() error {
		if err := w.failed(); err != nil {
			t.Fatal(err)
		}
		p, ok := findPipeline(api.pipelines(t), "cdc")
		if want := "postgres:" + pgName + " → source:cdc → topic:shop.public.items"; !ok || p.shape() != want {
			return fmt.Errorf("pipeline cdc is %q, want %q", p.shape(), want)
		}
		return nil
	})
	pg.Exec(t, "app", `INSERT INTO items (name) VALUES ('streamed')`)
	ctx := testkit.Context(t, 60*time.Second)
	testkit.CheckFor(t, 60*time.Second, 100*time.Millisecond, func() error {
		if _, ok := api.srv.sourceOffsetTime(ctx, "cdc"); !ok {
			return fmt.Errorf("the connector has not committed a streamed change")
		}
		p, _ := findPipeline(api.pipelines(t), "cdc")
		if d := p.Hops[2].Detail; d != "1 partition, 6 records" {
			return fmt.Errorf("topic hop %v, want the 6 rows", p.Hops[2])
		}
		if h := p.Hops[0]; h.LagBytes == nil || !strings.Contains(h.Detail, "replication slot cdc_slot, streamed by the connector") {
			return fmt.Errorf("postgres hop %v, want the slot's lag, streamed", h)
		}
		return nil
	})

	// Stopped, the connector confirms nothing more: every write is lag.
	if err := w.h.StopConnector(ctx, "cdc"); err != nil {
		t.Fatal(err)
	}
	var stopped hop
	testkit.CheckFor(t, 30*time.Second, 100*time.Millisecond, func() error {
		p, _ := findPipeline(api.pipelines(t), "cdc")
		stopped = p.Hops[0]
		if p.Hops[1].State == nil || *p.Hops[1].State != string(herder.StateStopped) {
			return fmt.Errorf("source hop %v, want STOPPED", p.Hops[1])
		}
		if stopped.LagBytes == nil || !strings.Contains(stopped.Detail, "not streamed now") {
			return fmt.Errorf("postgres hop %v, want the slot's lag, not streamed", stopped)
		}
		return nil
	})
	pg.Exec(t, "app", `INSERT INTO items (name) SELECT 'after-' || g FROM generate_series(1, 2000) g`)
	time.Sleep(20 * time.Millisecond) // lag_seconds counts from the committed change: let time pass
	p, _ := findPipeline(api.pipelines(t), "cdc")
	grown := p.Hops[0]
	if grown.Kind != hopPostgres || grown.Name != pgName || grown.State != nil || grown.LagRecords != nil {
		t.Fatalf("postgres hop %v", grown)
	}
	if grown.LagBytes == nil || *grown.LagBytes <= *stopped.LagBytes || *grown.LagBytes < 2000*20 {
		t.Fatalf("after 2000 inserts the slot lag is %v, was %v: want it grown by their WAL", grown, stopped)
	}
	if grown.LagSeconds == nil || *grown.LagSeconds <= 0 || *grown.LagSeconds > 120 {
		t.Fatalf("postgres hop %v: lag_seconds should count from the last committed change", grown)
	}
	// The slot lag is what Postgres itself reports for it.
	var direct int64
	if err := pg.Connect(t, "app").QueryRow(ctx,
		`SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::bigint FROM pg_replication_slots WHERE slot_name = 'cdc_slot'`).Scan(&direct); err != nil {
		t.Fatal(err)
	}
	if direct < *grown.LagBytes {
		t.Fatalf("Postgres reports %d bytes behind, the API %d (the WAL only grows)", direct, *grown.LagBytes)
	}

	// The database goes away: the view answers, the hop says why.
	pg.Close()
	start := time.Now()
	p, _ = findPipeline(api.pipelines(t), "cdc")
	if h := p.Hops[0]; h.LagBytes != nil || h.LagSeconds != nil || !strings.Contains(h.Detail, "cannot reach PostgreSQL at "+pgName) {
		t.Fatalf("postgres hop with the database down: %v", h)
	}
	if d := time.Since(start); d > 2*pgTimeout {
		t.Errorf("the view took %s with the database down", d)
	}
}

// TestPgSettings: Debezium's defaults, and the errors a broken config
// gets instead of a connection attempt.
func TestPgSettings(t *testing.T) {
	s, err := pgSettingsOf(map[string]string{"database.hostname": "db", "database.dbname": "app", "database.user": "u"})
	if err != nil || s.port != 5432 || s.sslMode != "prefer" || s.slot != "debezium" || s.name() != "db:5432/app" {
		t.Fatalf("%+v %v, want port 5432, sslmode prefer, slot debezium", s, err)
	}
	if _, err := pgSettingsOf(map[string]string{"database.hostname": "db", "database.dbname": "app", "database.port": "x"}); err == nil {
		t.Fatal("a non-numeric port was accepted")
	}
	if _, err := pgSettingsOf(map[string]string{"database.dbname": "app"}); err == nil {
		t.Fatal("a config without database.hostname was accepted")
	}
	// A password holding quotes and backslashes reaches pgx unchanged.
	s, _ = pgSettingsOf(map[string]string{"database.hostname": "db", "database.dbname": "app", "database.password": `it's \ odd`})
	cfg, err := s.connConfig()
	if err != nil || cfg.Password != `it's \ odd` || cfg.Host != "db" || cfg.Database != "app" {
		t.Fatalf("%v %+v", err, cfg)
	}
}
