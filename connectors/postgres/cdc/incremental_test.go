package cdc_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fjordhq/fjord/internal/testkit"
)

// An execute-snapshot signal snapshots a table in chunks while changes
// stream on: replaying the topic gives exactly the table, so no snapshot
// row overwrote a newer change and none was lost.
func TestIncrementalSnapshotWithConcurrentWrites(t *testing.T) {
	s := newStack(t)
	const rows = 5000
	s.pg.Exec(t, s.db,
		`CREATE TABLE dbz_signal (id varchar(42) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048))`,
		`CREATE TABLE accounts (id int PRIMARY KEY, version int NOT NULL, balance bigint NOT NULL, note text)`,
		fmt.Sprintf(`INSERT INTO accounts SELECT g, 1, 0, 'n' FROM generate_series(1, %d) g`, rows))
	s.worker.Create(t, s.config("incr", "snapshot.mode", "no_data", "signal.data.collection", "public.dbz_signal",
		"incremental.snapshot.chunk.size", "200", "table.include.list", "public.accounts"))
	waitSlot(t, s, "slot_incr")

	ctx := testkit.Context(t, 2*time.Minute)
	c, err := pgx.Connect(ctx, s.pg.DSN(s.db))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	done := make(chan error, 1)
	go func() { // writes all through the snapshot
		rnd := rand.New(rand.NewPCG(1, 2))
		next := rows + 1
		stop := time.Now().Add(4 * time.Second) // outlasts the snapshot's 25 chunks
		for i := 0; i < 20000 && time.Now().Before(stop); i++ {
			var err error
			switch rnd.IntN(10) {
			case 0:
				_, err = c.Exec(ctx, `DELETE FROM accounts WHERE id = $1`, 1+rnd.IntN(rows))
			case 1:
				_, err = c.Exec(ctx, `INSERT INTO accounts VALUES ($1, 1, 0, 'new')`, next)
				next++
			default:
				_, err = c.Exec(ctx, `UPDATE accounts SET version = version + 1, balance = balance + 1 WHERE id = $1`, 1+rnd.IntN(rows))
			}
			if err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	time.Sleep(100 * time.Millisecond)
	s.pg.Exec(t, s.db, `INSERT INTO dbz_signal VALUES ('ad-hoc-1', 'execute-snapshot', '{"data-collections": ["public.accounts"], "type": "incremental"}')`)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	want := tableVersions(t, s.pg.DSN(s.db))
	var incremental int
	testkit.CheckFor(t, 120*time.Second, 500*time.Millisecond, func() error {
		if err := s.worker.Failed(); err != nil {
			t.Fatal(err)
		}
		recs := readAll(t, s.broker.Addr, "test.public.accounts")
		got, _, _ := replay(t, recs)
		incremental = 0
		for _, r := range recs {
			if r.Value != nil {
				if e := decodeEvent(t, r); e.op() == "r" {
					if e.source()["snapshot"] != "incremental" {
						t.Fatalf("snapshot event marked %v", e.source()["snapshot"])
					}
					incremental++
				}
			}
		}
		if d := diffVersions(want, got); d != "" {
			return fmt.Errorf("%s", d)
		}
		return nil
	})
	if incremental < rows/2 {
		t.Errorf("%d incremental snapshot events for %d rows", incremental, rows)
	}
	t.Logf("%d incremental snapshot events; %d rows in the table", incremental, len(want))
}
