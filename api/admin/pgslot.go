package admin

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// The Postgres hop of a CDC pipeline: how far the connector's logical
// replication slot trails the database's WAL. The slot's
// confirmed_flush_lsn is what the connector has acknowledged (after its
// offsets were committed), so the distance to pg_current_wal_lsn() is WAL
// the database keeps for it and changes not yet in Kafka.

// pgTimeout bounds connecting and querying: a database that is down
// must not hold the pipelines view.
const pgTimeout = 3 * time.Second

// slotLag is one slot's state.
type slotLag struct {
	slot   string
	bytes  *int64 // null while the slot has confirmed nothing yet
	active bool   // a walsender (the connector's task) is streaming it
}

// pgSettings are the connector's database.* settings, with Debezium's
// defaults.
type pgSettings struct {
	host, user, password, db, sslMode, slot string
	port                                    int
}

func pgSettingsOf(config map[string]string) (pgSettings, error) {
	get := func(k, def string) string {
		if v := strings.TrimSpace(config[k]); v != "" {
			return v
		}
		return def
	}
	s := pgSettings{
		host: get("database.hostname", ""), user: get("database.user", ""), password: config["database.password"],
		db: get("database.dbname", ""), sslMode: get("database.sslmode", "prefer"), slot: get("slot.name", "debezium"),
	}
	port, err := strconv.Atoi(get("database.port", "5432"))
	if err != nil {
		return s, fmt.Errorf("database.port %q is not a port number", config["database.port"])
	}
	s.port = port
	if s.host == "" || s.db == "" {
		return s, errors.New("the connector config has no database.hostname or database.dbname")
	}
	return s, nil
}

// name is how the hop is labelled: the database as a URL would name it.
func (s pgSettings) name() string {
	return fmt.Sprintf("%s:%d/%s", s.host, s.port, s.db)
}

func (s pgSettings) connConfig() (*pgx.ConnConfig, error) {
	dsn := fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=%s connect_timeout=%d application_name=fjord-admin-api",
		quoteDSNValue(s.host), s.port, quoteDSNValue(s.user), quoteDSNValue(s.db), quoteDSNValue(s.sslMode), int(pgTimeout/time.Second))
	if s.password != "" {
		dsn += " password=" + quoteDSNValue(s.password)
	}
	return pgx.ParseConfig(dsn)
}

func quoteDSNValue(v string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
}

// querySlotLag connects to the connector's database (a connection per
// call: the view is polled every few seconds at most, and nothing stays
// open against a database the connector may be deleted from) and reads
// its slot's lag.
func querySlotLag(ctx context.Context, s pgSettings) (*slotLag, error) {
	cfg, err := s.connConfig()
	if err != nil {
		return nil, fmt.Errorf("the connector's database settings do not make a connection string: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, pgTimeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		msg := fmt.Sprintf("cannot reach PostgreSQL at %s: %v", s.name(), err)
		if strings.HasPrefix(s.password, "${") {
			msg += " (database.password is a config provider reference, which the admin API does not resolve)"
		}
		return nil, errors.New(msg)
	}
	defer conn.Close(context.Background())
	out := &slotLag{slot: s.slot}
	var lag *int64
	err = conn.QueryRow(ctx,
		`SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::bigint, active FROM pg_replication_slots WHERE slot_name = $1`,
		s.slot).Scan(&lag, &out.active)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("replication slot %q does not exist in %s (the connector creates it when its task starts)", s.slot, s.name())
	}
	if err != nil {
		return nil, fmt.Errorf("reading replication slot %q in %s: %w", s.slot, s.name(), err)
	}
	if lag != nil && *lag < 0 {
		*lag = 0 // confirmed past the current LSN cannot be behind
	}
	out.bytes = lag
	return out, nil
}
