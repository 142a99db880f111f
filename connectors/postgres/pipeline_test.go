// Package postgres_test runs the Postgres connectors together: the CDC
// source feeding the sink through Debezium's ExtractNewRecordState.
package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	_ "github.com/fjordhq/fjord/connectors/postgres/cdc"
	_ "github.com/fjordhq/fjord/connectors/postgres/sink"
	_ "github.com/fjordhq/fjord/converters/header"
	_ "github.com/fjordhq/fjord/converters/json"
	"github.com/fjordhq/fjord/internal/testkit"
	"github.com/fjordhq/fjord/internal/testkit/connectkit"
	_ "github.com/fjordhq/fjord/transforms"
)

const schemaDDL = `
CREATE TABLE customers (id int PRIMARY KEY, name text NOT NULL, email varchar(200), vip boolean, created timestamptz, born date);
CREATE TABLE orders (id bigint PRIMARY KEY, customer int NOT NULL, total numeric(12,2), note text, placed timestamp(3), tags text[]);
CREATE TABLE lines (order_id bigint, line int, sku text NOT NULL, qty smallint, price double precision, PRIMARY KEY (order_id, line));`

// Postgres A → CDC source → topics → ExtractNewRecordState → Postgres
// sink → Postgres B: after a mixed insert/update/delete load (snapshot
// first, then streaming), the two databases are equal row for row.
func TestPostgresToPostgres(t *testing.T) {
	testkit.SkipShort(t, "end to end on Postgres and a broker")
	pg := testkit.StartPostgres(t)
	pg.CreateDatabase(t, "a")
	pg.CreateDatabase(t, "b")
	pg.Exec(t, "a", schemaDDL)
	pg.Exec(t, "b", schemaDDL)
	b := testkit.StartBroker(t, nil)
	w := connectkit.Start(t, b.Addr, connectkit.Options{})

	rnd := rand.New(rand.NewPCG(5, 5))
	ctx := testkit.Context(t, 5*time.Minute)
	a := pg.Connect(t, "a")
	// Rows before the connector starts: the snapshot carries them.
	load(t, ctx, a, rnd, 0, 300)

	w.Create(t, map[string]string{
		"name": "cdc", "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
		"database.hostname": pg.Host, "database.port": fmt.Sprint(pg.Port), "database.user": pg.User,
		"database.password": testkit.PostgresPassword, "database.dbname": "a", "topic.prefix": "a",
		"slot.name": "pipeline", "publication.name": "pipeline",
	})
	w.Create(t, map[string]string{
		"name": "sink", "connector.class": "io.confluent.connect.jdbc.JdbcSinkConnector",
		"topics": "a.public.customers,a.public.orders,a.public.lines", "connection.url": pg.JDBCURL("b"),
		"connection.user": pg.User, "connection.password": testkit.PostgresPassword,
		"insert.mode": "upsert", "pk.mode": "record_key", "delete.enabled": "true",
		"transforms":                             "unwrap,route",
		"transforms.unwrap.type":                 "io.debezium.transforms.ExtractNewRecordState",
		"transforms.unwrap.drop.tombstones":      "false",
		"transforms.unwrap.delete.handling.mode": "none",
		"transforms.route.type":                  "org.apache.kafka.connect.transforms.RegexRouter",
		"transforms.route.regex":                 `a\.public\.(.*)`,
		"transforms.route.replacement":           "$1",
	})
	// Changes while streaming, in transactions of several statements.
	load(t, ctx, a, rnd, 300, 2000)

	for _, table := range []string{"customers", "orders", "lines"} {
		testkit.CheckFor(t, 120*time.Second, 250*time.Millisecond, func() error {
			if err := w.Failed(); err != nil {
				t.Fatal(err)
			}
			return sameRows(ctx, pg, table)
		})
	}
}

// load runs n random statements (as transactions of 1-5 statements):
// inserts, updates (key changes included) and deletes over the three
// tables.
func load(t *testing.T, ctx context.Context, c *pgx.Conn, rnd *rand.Rand, from, n int) {
	t.Helper()
	for i := from; i < from+n; {
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for k := 1 + rnd.IntN(5); k > 0 && i < from+n; k-- {
			id := rnd.IntN(200)
			var stmt string
			var args []any
			switch op := rnd.IntN(10); {
			case op < 5:
				switch rnd.IntN(3) {
				case 0:
					stmt = `INSERT INTO customers VALUES ($1::int, $2, $3, $4, now() - $5::int * interval '1 minute', DATE '1990-01-01' + $1::int) ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name`
					args = []any{id, fmt.Sprintf("name %d 'q' \t\\ é", i), nullable(rnd, fmt.Sprintf("c%d@x.org", id)), rnd.IntN(2) == 0, i}
				case 1:
					stmt = `INSERT INTO orders VALUES ($1::bigint, $2, $3, $4, TIMESTAMP '2026-01-01 10:00:00.123' + $1::bigint * interval '1 hour', $5) ON CONFLICT (id) DO UPDATE SET total = EXCLUDED.total`
					args = []any{id, rnd.IntN(200), fmt.Sprintf("%d.%02d", rnd.IntN(100000), rnd.IntN(100)), nullable(rnd, strings.Repeat("n", rnd.IntN(50))), []string{"a", fmt.Sprint(i), "c d"}}
				default:
					stmt = `INSERT INTO lines VALUES ($1, $2, $3, $4, $5) ON CONFLICT (order_id, line) DO UPDATE SET qty = EXCLUDED.qty`
					args = []any{id, rnd.IntN(4), fmt.Sprintf("sku-%d", i), rnd.IntN(1000), rnd.Float64() * 1000}
				}
			case op < 8:
				switch rnd.IntN(3) {
				case 0:
					stmt, args = `UPDATE customers SET email = $2, vip = NOT coalesce(vip, false) WHERE id = $1`, []any{id, fmt.Sprintf("u%d@x.org", i)}
				case 1:
					stmt, args = `UPDATE orders SET total = total + 1, note = NULL WHERE id = $1`, []any{id}
				default:
					// A primary key change: delete + create downstream.
					stmt, args = `UPDATE lines SET line = line + 10 WHERE order_id = $1 AND line < 4 AND NOT EXISTS (SELECT 1 FROM lines l WHERE l.order_id = $1 AND l.line >= 10)`, []any{id}
				}
			default:
				table := []string{"customers", "orders", "lines"}[rnd.IntN(3)]
				col := map[string]string{"customers": "id", "orders": "id", "lines": "order_id"}[table]
				stmt, args = `DELETE FROM `+table+` WHERE `+col+` = $1`, []any{id}
			}
			if _, err := tx.Exec(ctx, stmt, args...); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
			i++
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

func nullable(rnd *rand.Rand, s string) any {
	if rnd.IntN(4) == 0 {
		return nil
	}
	return s
}

// sameRows compares a table of databases a and b, row by row, as text.
func sameRows(ctx context.Context, pg *testkit.Postgres, table string) error {
	dump := func(db string) ([]string, error) {
		c, err := pgx.Connect(ctx, pg.DSN(db))
		if err != nil {
			return nil, err
		}
		defer c.Close(context.Background())
		rows, err := c.Query(ctx, `SELECT t::text FROM `+table+` t ORDER BY 1`)
		if err != nil {
			return nil, err
		}
		return pgx.CollectRows(rows, pgx.RowTo[string])
	}
	a, err := dump("a")
	if err != nil {
		return err
	}
	b, err := dump("b")
	if err != nil {
		return err
	}
	if len(a) != len(b) {
		return fmt.Errorf("%s: %d rows in a, %d in b", table, len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			return fmt.Errorf("%s row %d: a %s, b %s", table, i, a[i], b[i])
		}
	}
	return nil
}
