package bench

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// The rows every phase of `fjord bench postgres` moves: an order of nine
// columns of the common types (about 150 bytes per row), its id the
// primary key. Each value is a function of the id, so any table of n rows
// holds the same data whoever loaded it.
//
// Autovacuum is off for these tables (and the server): a vacuum that
// starts in the middle of one target's phase and not another's would be
// measured as the target's cost.
const benchTableColumns = `id bigint PRIMARY KEY, customer text NOT NULL, email text NOT NULL,
	amount double precision NOT NULL, quantity integer NOT NULL, paid boolean NOT NULL,
	status text NOT NULL, created timestamptz NOT NULL, note text NOT NULL`

// benchRowsSelect produces rows $1..$2 (inclusive).
const benchRowsSelect = `SELECT i, 'customer-' || (i % 100000), 'user' || i || '@example.com',
	(i % 10000)::float8 / 3, (i % 100)::int + 1, i % 2 = 0,
	(ARRAY['NEW','PAID','SHIPPED','DELIVERED','RETURNED'])[i % 5 + 1],
	timestamptz '2024-01-01 00:00:00+00' + i * interval '1 second', md5(i::text)
	FROM generate_series($1::bigint, $2::bigint) AS i`

// The sink's table has the columns the sink's records carry: the same
// order without its timestamp (JSON records carry no timestamptz the
// way Postgres stores it, and the sink is measured on plain types).
const sinkTableColumns = `id bigint PRIMARY KEY, customer text NOT NULL, email text NOT NULL,
	amount double precision NOT NULL, quantity integer NOT NULL, paid boolean NOT NULL,
	status text NOT NULL, note text NOT NULL`

var sinkColumnNames = []string{"id", "customer", "email", "amount", "quantity", "paid", "status", "note"}

var benchStatuses = [5]string{"NEW", "PAID", "SHIPPED", "DELIVERED", "RETURNED"}

// sinkRow is row i of the sink's data, as benchRowsSelect makes it.
func sinkRow(i int64) []any {
	sum := md5.Sum([]byte(strconv.FormatInt(i, 10)))
	return []any{i, "customer-" + strconv.FormatInt(i%100000, 10), "user" + strconv.FormatInt(i, 10) + "@example.com",
		float64(i%10000) / 3, int32(i%100) + 1, i%2 == 0, benchStatuses[i%5], hex.EncodeToString(sum[:])}
}

// pgSession is one connection of the benchmark to the database under test.
type pgSession struct {
	conn *pgx.Conn
}

// dialLoader opens the connection a load runs on. Its commits wait for
// their WAL to be flushed (synchronous_commit=on, which the test server
// turns off): a walsender decodes flushed WAL only, so each transaction
// reaches the slot's consumer as it commits instead of when the WAL
// writer next wakes (up to 200 ms later). fsync stays off, so the flush
// costs a write, no disk wait.
func dialLoader(ctx context.Context, dsn string) (*pgSession, error) {
	s, err := dialPG(ctx, dsn)
	if err != nil {
		return nil, err
	}
	if err := s.exec(ctx, "SET synchronous_commit = on"); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

func dialPG(ctx context.Context, dsn string) (*pgSession, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("connect to postgres: %w", err)
	}
	return &pgSession{conn: c}, nil
}

func (s *pgSession) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.conn.Close(ctx)
}

// exec runs statements one by one, each bounded.
func (s *pgSession) exec(ctx context.Context, stmts ...string) error {
	for _, q := range stmts {
		qctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		_, err := s.conn.Exec(qctx, q)
		cancel()
		if err != nil {
			return fmt.Errorf("postgres: %s: %w", oneLine(q, 120), err)
		}
	}
	return nil
}

func ident(name string) string { return pgx.Identifier{name}.Sanitize() }

// literal quotes s as an SQL string literal (standard_conforming_strings
// is on, so only quotes need doubling).
func literal(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// createBenchTable creates table (dropping an old one) with rows 1..n,
// vacuumed and frozen so that no reader pays for setting hint bits.
func (s *pgSession) createBenchTable(ctx context.Context, table string, n int) error {
	if err := s.exec(ctx, "DROP TABLE IF EXISTS "+ident(table),
		"CREATE TABLE "+ident(table)+" ("+benchTableColumns+") WITH (autovacuum_enabled = false)"); err != nil {
		return err
	}
	if n > 0 {
		if err := s.insertRange(ctx, table, 1, int64(n)); err != nil {
			return err
		}
		if err := s.exec(ctx, "VACUUM (FREEZE, ANALYZE) "+ident(table)); err != nil {
			return err
		}
	}
	return nil
}

func (s *pgSession) insertRange(ctx context.Context, table string, from, to int64) error {
	qctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if _, err := s.conn.Exec(qctx, "INSERT INTO "+ident(table)+" "+benchRowsSelect, from, to); err != nil {
		return fmt.Errorf("insert rows %d..%d into %s: %w", from, to, table, err)
	}
	return nil
}

func (s *pgSession) updateRange(ctx context.Context, table string, from, to int64) error {
	qctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	q := "UPDATE " + ident(table) + " SET amount = amount + 1, quantity = quantity + 1 WHERE id BETWEEN $1 AND $2"
	if _, err := s.conn.Exec(qctx, q, from, to); err != nil {
		return fmt.Errorf("update rows %d..%d of %s: %w", from, to, table, err)
	}
	return nil
}

// pgLoad is the write load of a streaming phase: its statements, each
// one transaction (autocommit) of at most txnRows rows.
type pgLoad struct {
	table   string
	update  bool  // UPDATE rows 1..rows, passes times; else INSERT rows 1..rows
	rows    int64 // distinct rows
	passes  int   // updates per row (update loads)
	txnRows int64
}

// changes is how many row changes the load makes.
func (l pgLoad) changes() int64 {
	if l.update {
		return l.rows * int64(l.passes)
	}
	return l.rows
}

// run executes the load and returns how long its statements took.
func (l pgLoad) run(ctx context.Context, s *pgSession) (time.Duration, error) {
	start := time.Now()
	passes := 1
	if l.update {
		passes = l.passes
	}
	for range passes {
		for from := int64(1); from <= l.rows; from += l.txnRows {
			to := min(from+l.txnRows-1, l.rows)
			var err error
			if l.update {
				err = s.updateRange(ctx, l.table, from, to)
			} else {
				err = s.insertRange(ctx, l.table, from, to)
			}
			if err != nil {
				return 0, err
			}
		}
	}
	return time.Since(start), nil
}

// slotActive reports whether a walsender streams from slot.
func (s *pgSession) slotActive(ctx context.Context, slot string) (exists, active bool, err error) {
	qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err = s.conn.QueryRow(qctx, "SELECT active FROM pg_replication_slots WHERE slot_name = $1", slot).Scan(&active)
	if err == pgx.ErrNoRows {
		return false, false, nil
	}
	return err == nil, active, err
}

// awaitSlotActive waits until a consumer streams from slot, checking
// failed (a connector's status) between readings.
func (s *pgSession) awaitSlotActive(ctx context.Context, slot string, timeout time.Duration, failed func() error) error {
	deadline := time.Now().Add(timeout)
	var lastErr error
	for {
		_, active, err := s.slotActive(ctx, slot)
		if err == nil && active {
			return nil
		}
		lastErr = err
		if failed != nil {
			if err := failed(); err != nil {
				return err
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no consumer streams from slot %s after %s (last error: %v)", slot, timeout, lastErr)
		}
		if !sleepCtx(ctx, 50*time.Millisecond) { // polling pg_replication_slots
			return ctx.Err()
		}
	}
}

// dropSlot drops slot once no walsender holds it (a stopping consumer
// lets go within seconds); a missing slot is fine.
func (s *pgSession) dropSlot(ctx context.Context, slot string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		exists, active, err := s.slotActive(ctx, slot)
		if err != nil {
			return err
		}
		if !exists {
			return nil
		}
		if !active {
			err := s.exec(ctx, "SELECT pg_drop_replication_slot("+literal(slot)+")")
			if err == nil {
				return nil
			}
			if time.Now().After(deadline) {
				return err
			}
		} else if time.Now().After(deadline) {
			return fmt.Errorf("slot %s still in use 30 s after its consumer stopped", slot)
		}
		if !sleepCtx(ctx, 50*time.Millisecond) { // polling the walsender's exit
			return ctx.Err()
		}
	}
}

// flushedLSN is the end of the WAL flushed so far: what a walsender
// can decode.
func (s *pgSession) flushedLSN(ctx context.Context) (string, error) {
	var lsn string
	qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err := s.conn.QueryRow(qctx, "SELECT pg_current_wal_flush_lsn()::text").Scan(&lsn)
	return lsn, err
}

// count returns the rows of table.
func (s *pgSession) count(ctx context.Context, table string) (int64, error) {
	var n int64
	qctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := s.conn.QueryRow(qctx, "SELECT count(*) FROM "+ident(table)).Scan(&n)
	return n, err
}

// copyOut runs COPY table TO STDOUT into io.Discard and returns its time.
func (s *pgSession) copyOut(ctx context.Context, table string) (time.Duration, error) {
	qctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	start := time.Now()
	if _, err := s.conn.PgConn().CopyTo(qctx, io.Discard, "COPY "+ident(table)+" TO STDOUT"); err != nil {
		return 0, fmt.Errorf("COPY %s TO STDOUT: %w", table, err)
	}
	return time.Since(start), nil
}

// copyIn runs COPY table FROM STDIN (pgx's binary COPY) with rows 1..n of
// the sink's data, built beforehand, and returns its time.
func (s *pgSession) copyIn(ctx context.Context, table string, n int) (time.Duration, error) {
	rows := make([][]any, n)
	for i := range rows {
		rows[i] = sinkRow(int64(i + 1))
	}
	qctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	start := time.Now()
	got, err := s.conn.CopyFrom(qctx, pgx.Identifier{table}, sinkColumnNames, pgx.CopyFromRows(rows))
	if err != nil {
		return 0, fmt.Errorf("COPY %s FROM STDIN: %w", table, err)
	}
	d := time.Since(start)
	if got != int64(n) {
		return 0, fmt.Errorf("COPY %s FROM STDIN copied %d rows, want %d", table, got, n)
	}
	return d, nil
}

// sinkChecksum is what a table holding rows 1..n of the sink's data sums
// to, so that a sink's table can be checked without reading it back row by
// row: the row count, the id sum, the quantity sum, and the count of paid
// rows.
func sinkChecksum(n int64) [4]int64 {
	var c [4]int64
	c[0] = n
	for i := int64(1); i <= n; i++ {
		c[1] += i
		c[2] += i%100 + 1
		if i%2 == 0 {
			c[3]++
		}
	}
	return c
}

func (s *pgSession) tableChecksum(ctx context.Context, table string) ([4]int64, error) {
	var c [4]int64
	qctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := s.conn.QueryRow(qctx, "SELECT count(*), coalesce(sum(id), 0)::bigint, coalesce(sum(quantity), 0)::bigint, "+
		"count(*) FILTER (WHERE paid) FROM "+ident(table)).Scan(&c[0], &c[1], &c[2], &c[3])
	return c, err
}
