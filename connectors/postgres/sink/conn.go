package sink

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// db is the task's one connection and what lives in its session: the
// current schema and the staging tables made so far.
type db struct {
	s       *settings
	log     *slog.Logger
	conn    *pgx.Conn
	schema  string            // current_schema()
	staging map[string]string // CREATE statement -> staging table name
	seq     int
}

// ensure connects if needed: connection.attempts tries,
// connection.backoff.ms apart (Confluent's CachedConnectionProvider).
func (d *db) ensure(ctx context.Context) error {
	if d.conn != nil && !d.conn.IsClosed() {
		return nil
	}
	d.close()
	var err error
	for attempt := 1; ; attempt++ {
		var c *pgx.Conn
		c, err = pgx.ConnectConfig(ctx, d.s.conn.Copy())
		if err == nil {
			var schema *string
			if err = c.QueryRow(ctx, "SELECT current_schema()").Scan(&schema); err == nil && schema == nil {
				err = errors.New("no schema of the search_path exists: set currentSchema in connection.url or create the schema")
			}
			if err == nil {
				d.conn, d.schema, d.staging = c, *schema, map[string]string{}
				return nil
			}
			c.Close(context.Background())
		}
		if ctx.Err() != nil || attempt >= d.s.attempts {
			break
		}
		d.log.Warn("connecting to PostgreSQL failed; trying again", "url", d.s.connectionURLShown,
			"attempt", attempt, "of", d.s.attempts, "after", d.s.connBackoff, "err", err)
		if !sleep(ctx, d.s.connBackoff) {
			break
		}
	}
	return &connectFailure{fmt.Errorf("connect to %s: %w", d.s.connectionURLShown, err)}
}

// close drops the connection (and with it the session's staging tables).
func (d *db) close() {
	if d.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		d.conn.Close(ctx)
		cancel()
	}
	d.conn, d.staging = nil, nil
}

// stagingTable returns the name of the plan's staging table, creating it
// in this session the first time (outside any transaction, so a rolled
// back write does not take it away).
func (d *db) stagingTable(ctx context.Context, p *plan) (string, error) {
	if name, ok := d.staging[p.staging]; ok {
		return name, nil
	}
	d.seq++
	name := "fjord_sink_staging_" + strconv.Itoa(d.seq)
	if _, err := d.conn.Exec(ctx, strings.ReplaceAll(p.staging, stagingName, name)); err != nil {
		return "", fmt.Errorf("create staging table for %s: %w", p.t.id, err)
	}
	d.staging[p.staging] = name
	return name, nil
}

// rollback ends a failed transaction; a connection that cannot is closed.
func (d *db) rollback() {
	if d.conn == nil || d.conn.IsClosed() {
		return
	}
	if d.conn.PgConn().TxStatus() == 'I' {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := d.conn.Exec(ctx, "ROLLBACK"); err != nil {
		d.close()
	}
}

// transient says whether an error may pass by itself: the connection
// (lost, refused, timed out), the server (shutting down, out of
// resources), concurrency (deadlock, serialization, lock timeout), a
// missing referenced row (a foreign key whose parent row another writer
// adds) or a table changed under the sink. Data errors (bad values,
// constraint violations) are not.
func transient(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code[:2] {
		case "08", "40", "53", "57", "58":
			return true
		}
		switch pgErr.Code {
		case "55P03", "55006", "23503":
			return true
		case "42P01", "42703":
			// A table or column the sink knew is gone: someone changed the
			// table; the retry starts from fresh metadata.
			return true
		}
		return false
	}
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		pgconn.SafeToRetry(err) || pgconn.Timeout(err) || isConnError(err)
}

// isConnError: pgx's errors for a connection that is gone.
func isConnError(err error) bool {
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	var cf *connectFailure
	if errors.As(err, &cf) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "conn closed") || strings.Contains(msg, "conn busy") ||
		strings.Contains(msg, "connection reset") || strings.Contains(msg, "broken pipe")
}

// connectFailure: connecting failed, connection.attempts times.
type connectFailure struct{ err error }

func (e *connectFailure) Error() string { return e.err.Error() }
func (e *connectFailure) Unwrap() error { return e.err }

// serverTrouble: a server error that is not about the statement's data
// (the server or the transaction is in trouble, not the record).
func serverTrouble(err error) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return false
	}
	switch pgErr.Code[:2] {
	case "08", "40", "53", "57", "58":
		return true
	}
	switch pgErr.Code {
	case "55P03", "55006", "42P01", "42703":
		return true
	}
	return false
}

// isServerError: the server answered (the statement, not the link, failed).
func isServerError(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr)
}

func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
