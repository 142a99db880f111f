package cdc

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
)

// run is the reader: it decides between snapshot and streaming from the
// stored offset and the slot, then does them. It returns when ctx is
// cancelled (Stop) or on an error the task must fail with.
func (t *Task) run(ctx context.Context, off offset) error {
	conn, err := t.s.connect(ctx)
	if err != nil {
		return err
	}
	t.conn = conn
	defer conn.Close(context.Background())
	if err := t.reloadCatalog(); err != nil {
		return err
	}
	slot, err := readSlot(ctx, conn, t.s.slot)
	if err != nil {
		return err
	}
	if slot.exists && slot.plugin != "pgoutput" {
		return fmt.Errorf("replication slot %q uses the %q plugin; Fjord needs pgoutput: drop the slot or choose another %s", t.s.slot, slot.plugin, SlotNameConfig)
	}
	if slot.exists && slot.database != t.s.db {
		return fmt.Errorf("replication slot %q belongs to database %q, not %q: choose another %s", t.s.slot, slot.database, t.s.db, SlotNameConfig)
	}
	mode := t.s.snapshotMode
	defer func() {
		if t.s.dropSlotOnStop && ctx.Err() != nil {
			dctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := dropSlot(dctx, conn, t.s.slot); err != nil {
				t.log.Warn("slot.drop.on.stop: could not drop the slot", "err", err)
			}
		}
	}()

	if mode == SnapshotInitialOnly && off.present && !off.snapshotting() {
		// The snapshot is done and initial_only never streams (it has no
		// slot): nothing to do.
		t.log.Info("snapshot.mode=initial_only: the snapshot was completed before; not streaming")
		<-ctx.Done()
		return nil
	}
	if off.present && !off.snapshotting() {
		// Resume streaming where the stored offsets end.
		lost := ""
		switch {
		case !slot.exists:
			lost = fmt.Sprintf("replication slot %q no longer exists", t.s.slot)
		case slot.confirmedFlush > off.lsn:
			lost = fmt.Sprintf("replication slot %q was advanced to %s, past the connector's committed position %s", t.s.slot, lsnString(slot.confirmedFlush), lsnString(off.lsn))
		}
		if lost != "" {
			if mode != SnapshotWhenNeeded {
				return fmt.Errorf("%s: the changes after %s are gone from the server. Set %s=%s to take a new snapshot, or reset the connector's offsets", lost, lsnString(off.lsn), SnapshotModeConfig, SnapshotWhenNeeded)
			}
			t.log.Warn("taking a new snapshot: "+lost, "committed", lsnString(off.lsn))
			if slot.exists {
				if err := dropSlot(ctx, conn, t.s.slot); err != nil {
					return err
				}
			}
			return t.snapshotThenStream(ctx)
		}
		if mode == SnapshotAlways {
			if err := t.snapshot(ctx, "", off.lsn); err != nil {
				return err
			}
		}
		return t.stream(ctx, nil, off.lsn, off)
	}

	// No offsets yet, or a snapshot that a crash cut short.
	switch mode {
	case SnapshotNoData:
		start := slot.confirmedFlush
		var rc *pgconn.PgConn
		if !slot.exists {
			if rc, start, _, err = t.newSlot(ctx, false); err != nil {
				return err
			}
		}
		return t.stream(ctx, rc, start, offset{})
	case SnapshotInitialOnly:
		if err := t.snapshot(ctx, "", 0); err != nil {
			return err
		}
		t.log.Info("snapshot.mode=initial_only: snapshot done, not streaming")
		<-ctx.Done()
		return nil
	}
	if slot.exists && off.snapshotting() {
		// Our snapshot was interrupted: nothing was streamed from the slot
		// yet, so a new slot with a new exported snapshot replaces it
		// exactly (no gap, no overlap).
		t.log.Info("the previous snapshot did not finish; starting it again")
		if err := dropSlot(ctx, conn, t.s.slot); err != nil {
			return err
		}
		slot.exists = false
	}
	if slot.exists {
		// A slot without offsets (created by hand, or by an earlier
		// connector): snapshot now and stream from the slot's position; the
		// changes in between may arrive twice, none is lost.
		if err := t.snapshot(ctx, "", slot.confirmedFlush); err != nil {
			return err
		}
		return t.stream(ctx, nil, slot.confirmedFlush, offset{})
	}
	return t.snapshotThenStream(ctx)
}

// snapshotThenStream creates the slot exporting its snapshot, reads the
// tables in that snapshot, then streams from the slot's consistent point:
// every change is either in the snapshot or in the stream, exactly once.
func (t *Task) snapshotThenStream(ctx context.Context) error {
	rc, l, snapName, err := t.newSlot(ctx, true)
	if err != nil {
		return err
	}
	// The exported snapshot lives until rc's next command: the snapshot
	// imports it first thing, then rc is free to stream.
	if err := t.snapshot(ctx, snapName, l); err != nil {
		rc.Close(context.Background())
		return err
	}
	return t.stream(ctx, rc, l, offset{})
}

// newSlot creates the slot on a new replication connection and returns
// the connection (the exported snapshot, if any, lives until its next
// command), the slot's consistent point and the snapshot's name.
func (t *Task) newSlot(ctx context.Context, export bool) (*pgconn.PgConn, uint64, string, error) {
	rc, err := t.s.connectReplication(ctx)
	if err != nil {
		return nil, 0, "", err
	}
	res, err := createSlot(ctx, rc, t.s.slot, export)
	if err == nil {
		var l pglogrepl.LSN
		if l, err = pglogrepl.ParseLSN(res.ConsistentPoint); err == nil {
			return rc, uint64(l), res.SnapshotName, nil
		}
	}
	rc.Close(context.Background())
	return nil, 0, "", err
}

func (t *Task) reloadCatalog() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cat, err := loadCatalog(ctx, t.conn)
	if err != nil {
		return err
	}
	t.cat = cat
	return nil
}
