package cdc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// prepare checks what the user must fix before anything is read: the
// login, wal_level, the REPLICATION attribute; then makes sure the
// publication exists.
func (t *Task) prepare(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, err := t.s.connect(cctx)
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	if err := checkServer(cctx, c, t.s.user); err != nil {
		return err
	}
	if err := t.ensurePublication(cctx, c); err != nil {
		return err
	}
	t.warnWithoutIdentity(cctx, c)
	return nil
}

// warnWithoutIdentity names the captured tables whose updates and deletes
// PostgreSQL itself will refuse while they are published (no primary key
// and REPLICA IDENTITY DEFAULT or NOTHING): their events are inserts only,
// and the fix is on the database side.
func (t *Task) warnWithoutIdentity(ctx context.Context, c *pgx.Conn) {
	rows, err := c.Query(ctx, `SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind IN ('r', 'p') AND c.relreplident IN ('d', 'n')
		AND NOT EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary)`)
	if err != nil {
		return
	}
	defer rows.Close()
	for rows.Next() {
		var s, n string
		if rows.Scan(&s, &n) == nil && t.s.filters.includeTable(s, n) {
			t.log.Warn("captured table has no primary key and no replica identity: PostgreSQL refuses its UPDATEs and DELETEs while it is published, and its events have null keys; add a primary key or run ALTER TABLE ... REPLICA IDENTITY FULL",
				"table", s+"."+n)
		}
	}
}

// checkServer verifies wal_level and the user's replication rights.
func checkServer(ctx context.Context, c *pgx.Conn, user string) error {
	var level string
	if err := c.QueryRow(ctx, "SHOW wal_level").Scan(&level); err != nil {
		return fmt.Errorf("read wal_level: %w", err)
	}
	if level != "logical" {
		return fmt.Errorf("the PostgreSQL server's wal_level is %q but must be 'logical' for change data capture: set wal_level = logical in postgresql.conf (ALTER SYSTEM SET wal_level = logical) and restart the server", level)
	}
	var super, repl bool
	if err := c.QueryRow(ctx, "SELECT rolsuper, rolreplication FROM pg_roles WHERE rolname = current_user").Scan(&super, &repl); err != nil {
		return fmt.Errorf("read the privileges of %q: %w", user, err)
	}
	if !super && !repl {
		return fmt.Errorf("the database user %q lacks the REPLICATION attribute needed to stream changes: run ALTER ROLE %s REPLICATION (it also needs SELECT on the captured tables)",
			user, pgx.Identifier{user}.Sanitize())
	}
	return nil
}

// ensurePublication creates or checks the publication according to
// publication.autocreate.mode.
func (t *Task) ensurePublication(ctx context.Context, c *pgx.Conn) error {
	var allTables bool
	err := c.QueryRow(ctx, "SELECT puballtables FROM pg_publication WHERE pubname = $1", t.s.publication).Scan(&allTables)
	exists := err == nil
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("look up publication %q: %w", t.s.publication, err)
	}
	name := pgx.Identifier{t.s.publication}.Sanitize()
	switch t.s.pubMode {
	case "disabled":
		if !exists {
			return fmt.Errorf("publication %q does not exist and %s=disabled: create it (CREATE PUBLICATION %s FOR TABLE ...) or choose all_tables or filtered",
				t.s.publication, PublicationAutocreate, name)
		}
		return nil
	case "all_tables":
		if exists {
			return nil
		}
		if _, err := c.Exec(ctx, "CREATE PUBLICATION "+name+" FOR ALL TABLES"); err != nil {
			return fmt.Errorf("create publication %q FOR ALL TABLES (needs superuser; or create it yourself and set %s=disabled): %w", t.s.publication, PublicationAutocreate, err)
		}
		return nil
	case "no_tables":
		if !exists {
			if _, err := c.Exec(ctx, "CREATE PUBLICATION "+name); err != nil {
				return fmt.Errorf("create publication %q: %w", t.s.publication, err)
			}
		}
		return nil
	}
	// filtered: the publication names exactly the captured tables (and
	// the signal table).
	tables, err := t.capturedTableNames(ctx, c)
	if err != nil {
		return err
	}
	if len(tables) == 0 {
		return fmt.Errorf("%s=filtered but no table matches the include/exclude lists: check %s", PublicationAutocreate, TableIncludeConfig)
	}
	list := make([]string, len(tables))
	for i, tn := range tables {
		list[i] = pgx.Identifier{tn[0], tn[1]}.Sanitize()
	}
	stmt := "CREATE PUBLICATION " + name + " FOR TABLE " + strings.Join(list, ", ")
	if exists {
		if allTables {
			return nil
		}
		stmt = "ALTER PUBLICATION " + name + " SET TABLE " + strings.Join(list, ", ")
	}
	if _, err := c.Exec(ctx, stmt); err != nil {
		return fmt.Errorf("%s: %w", stmt, err)
	}
	return nil
}

// capturedTableNames lists the ordinary and partitioned tables the
// filters include (plus the signal table), as [schema, name].
func (t *Task) capturedTableNames(ctx context.Context, c *pgx.Conn) ([][2]string, error) {
	rows, err := c.Query(ctx, `SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY n.nspname COLLATE "C", c.relname COLLATE "C"`)
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	defer rows.Close()
	var out [][2]string
	for rows.Next() {
		var s, n string
		if err := rows.Scan(&s, &n); err != nil {
			return nil, err
		}
		if t.s.filters.includeTable(s, n) || s+"."+n == t.s.signalTable {
			out = append(out, [2]string{s, n})
		}
	}
	return out, rows.Err()
}

// slotState is a replication slot as pg_replication_slots shows it.
type slotState struct {
	exists         bool
	plugin         string
	database       string
	active         bool
	confirmedFlush uint64
}

func readSlot(ctx context.Context, c *pgx.Conn, name string) (slotState, error) {
	var st slotState
	var plugin, db *string
	var confirmed *string
	err := c.QueryRow(ctx, `SELECT plugin, database, active, confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1`, name).
		Scan(&plugin, &db, &st.active, &confirmed)
	if errors.Is(err, pgx.ErrNoRows) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("look up replication slot %q: %w", name, err)
	}
	st.exists = true
	if plugin != nil {
		st.plugin = *plugin
	}
	if db != nil {
		st.database = *db
	}
	if confirmed != nil {
		l, err := pglogrepl.ParseLSN(*confirmed)
		if err != nil {
			return st, err
		}
		st.confirmedFlush = uint64(l)
	}
	return st, nil
}

// createSlot creates the slot on a replication connection; with export
// the result names a snapshot that stays importable until the
// connection's next command.
func createSlot(ctx context.Context, rc *pgconn.PgConn, name string, export bool) (pglogrepl.CreateReplicationSlotResult, error) {
	action := "NOEXPORT_SNAPSHOT"
	if export {
		action = "EXPORT_SNAPSHOT"
	}
	res, err := pglogrepl.CreateReplicationSlot(ctx, rc, name, "pgoutput",
		pglogrepl.CreateReplicationSlotOptions{Mode: pglogrepl.LogicalReplication, SnapshotAction: action})
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "53400" {
			return res, fmt.Errorf("create replication slot %q: %s; raise max_replication_slots or drop unused slots", name, pgErr.Message)
		}
		return res, fmt.Errorf("create replication slot %q: %w", name, err)
	}
	return res, nil
}

// dropSlot drops the slot, waiting for a walsender that still holds it.
func dropSlot(ctx context.Context, c *pgx.Conn, name string) error {
	for i := 0; ; i++ {
		_, err := c.Exec(ctx, "SELECT pg_drop_replication_slot($1) FROM pg_replication_slots WHERE slot_name = $1", name)
		if err == nil {
			return nil
		}
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "55006" && i < 50 { // object in use
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		return fmt.Errorf("drop replication slot %q: %w", name, err)
	}
}
