package cdc_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fjordhq/fjord/connectors/postgres/cdc"
	"github.com/fjordhq/fjord/internal/testkit"
)

// gauge returns the value of name's series labelled connector=name.
func gauge(t *testing.T, reg prometheus.Gatherer, metric, connector string) (float64, bool) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != metric {
			continue
		}
		for _, m := range mf.Metric {
			for _, l := range m.Label {
				if l.GetName() == "connector" && l.GetValue() == connector {
					return m.GetGauge().GetValue(), true
				}
			}
		}
	}
	return 0, false
}

// TestSlotLagMetric: with a real Postgres, the slot lag gauge follows
// the WAL the connector has not confirmed. While the connector is paused
// the WAL of a big insert streams in but is not confirmed: the lag grows
// past its size (and never exceeds what the server itself counts for the
// slot). Resumed, the connector commits the changes and the lag drops
// back. MilliSecondsBehindSource is reported once a transaction streamed.
func TestSlotLagMetric(t *testing.T) {
	reg := prometheus.NewRegistry()
	if err := cdc.RegisterMetrics(reg); err != nil {
		t.Fatal(err)
	}
	s := newStack(t)
	s.pg.Exec(t, s.db, `CREATE TABLE lagged (id serial PRIMARY KEY, payload text NOT NULL)`)
	const name = "lag"
	s.worker.Create(t, s.config(name))
	events := s.consume(t, "test.public.lagged")
	// The first row comes with the snapshot, the second is streamed.
	s.pg.Exec(t, s.db, `INSERT INTO lagged (payload) VALUES ('first')`)
	events.next(1, 60*time.Second)
	s.pg.Exec(t, s.db, `INSERT INTO lagged (payload) VALUES ('second')`)
	if e := events.next(1, 60*time.Second); e[0].op() != "c" {
		t.Fatalf("second row's event op %q, want c", e[0].op())
	}
	testkitCheck(t, 30*time.Second, func() error {
		lag, ok := gauge(t, reg, "fjord_cdc_slot_lag_bytes", name)
		if !ok {
			return fmt.Errorf("no slot lag series for %s yet", name)
		}
		if lag > 64<<10 {
			return fmt.Errorf("slot lag %v bytes with everything streamed", lag)
		}
		return nil
	})
	if ms, ok := gauge(t, reg, "fjord_cdc_milliseconds_behind_source", name); !ok || ms < 0 || ms > 60_000 {
		t.Errorf("milliseconds behind source %v (reported %v)", ms, ok)
	}

	ctx := testkit.Context(t, 30*time.Second)
	if err := s.worker.H.PauseConnector(ctx, name); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // the task sees the pause at its next poll
	const rows, size = 2000, 500
	s.pg.Exec(t, s.db, fmt.Sprintf(`INSERT INTO lagged (payload) SELECT repeat('x', %d) FROM generate_series(1, %d)`, size, rows))
	var paused float64
	testkitCheck(t, 30*time.Second, func() error {
		paused, _ = gauge(t, reg, "fjord_cdc_slot_lag_bytes", name)
		if paused < rows*size {
			return fmt.Errorf("slot lag %v bytes while paused, want at least the %d bytes inserted", paused, rows*size)
		}
		return nil
	})
	var serverLag float64
	if err := queryRow(s, `SELECT (pg_current_wal_lsn() - confirmed_flush_lsn)::float8 FROM pg_replication_slots WHERE slot_name = $1`,
		[]any{"slot_" + name}, &serverLag); err != nil {
		t.Fatal(err)
	}
	if now, _ := gauge(t, reg, "fjord_cdc_slot_lag_bytes", name); now > serverLag {
		t.Errorf("slot lag %v bytes is more than the server counts for the slot (%v)", now, serverLag)
	}
	t.Logf("slot lag while paused: %v bytes (server: %v)", paused, serverLag)

	if err := s.worker.H.ResumeConnector(ctx, name); err != nil {
		t.Fatal(err)
	}
	events.next(rows, 60*time.Second)
	testkitCheck(t, 30*time.Second, func() error {
		if lag, _ := gauge(t, reg, "fjord_cdc_slot_lag_bytes", name); lag > 64<<10 {
			return fmt.Errorf("slot lag %v bytes after the changes were committed", lag)
		}
		return nil
	})
	s.worker.Delete(t, name)
	testkitCheck(t, 30*time.Second, func() error {
		if _, ok := gauge(t, reg, "fjord_cdc_slot_lag_bytes", name); ok {
			return fmt.Errorf("slot lag still reported for a deleted connector")
		}
		return nil
	})
}
