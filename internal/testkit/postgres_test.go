package testkit

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// The harness gives a logical-decoding server that authenticates host
// connections with a password.
func TestPostgresHarness(t *testing.T) {
	pg := StartPostgres(t)
	c := pg.Connect(t, "postgres")
	var level string
	if err := c.QueryRow(context.Background(), "SHOW wal_level").Scan(&level); err != nil {
		t.Fatal(err)
	}
	if level != "logical" {
		t.Fatalf("wal_level = %q, want logical", level)
	}
	pg.CreateDatabase(t, "app")
	pg.Exec(t, "app", "CREATE TABLE t (id int primary key)", "INSERT INTO t VALUES (1)")
	bad := strings.Replace(pg.DSN("app"), ":"+PostgresPassword+"@", ":wrong@", 1)
	if _, err := pgx.Connect(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "password") {
		t.Fatalf("wrong password: err = %v, want a password authentication failure", err)
	}
}
