package cdc

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fjordhq/fjord/connect"
)

// Ad-hoc incremental snapshots (Debezium's execute-snapshot signal), with
// DBLog's watermarks: while streaming goes on, each table is read in
// chunks in primary key order. For a chunk, the connector inserts a
// window-open row into the signal table, SELECTs the chunk, and inserts a
// window-close row. Both inserts come back through the stream; changes
// streamed between them win over the chunk's rows of the same key (they
// are at least as new), and at the window's close the chunk's remaining
// rows are emitted as op=r with source.snapshot=incremental. Every change
// is thus emitted in order, and no snapshot row overwrites a newer change.
// Progress is in the offsets, so a restart resumes at the last chunk.

// Signal types (Debezium's).
const (
	signalExecuteSnapshot = "execute-snapshot"
	signalWindowOpen      = "snapshot-window-open"
	signalWindowClose     = "snapshot-window-close"
)

// incrementalState is what the offsets keep of an incremental snapshot:
// the tables still to read (the first is being read) and the last key
// emitted from it (its text form, nil before the first chunk).
type incrementalState struct {
	Tables  []string `json:"tables"`
	LastKey []string `json:"last_key,omitempty"`
}

// incremental is the streamer's incremental snapshot in progress.
type incremental struct {
	state incrementalState
	// The open window: its id, whether its open marker came through the
	// stream yet, and the chunk's rows by key, in key order.
	windowID string
	open     bool
	table    *capturedTable
	rows     []*connect.Struct
	keys     []string
	byKey    map[string]int // key -> index in rows (-1 once superseded)
	chunkEnd []string       // text key of the chunk's last row
	full     bool           // the chunk had chunk.size rows: more may follow
}

// signal handles a row inserted into the signal table.
func (st *streamer) signal(ctx context.Context, row *connect.Struct) error {
	str := func(name string) string {
		v, _ := row.Get(name)
		s, _ := v.(string)
		return s
	}
	id, typ, data := str("id"), str("type"), str("data")
	switch typ {
	case signalExecuteSnapshot:
		var req struct {
			Collections []string `json:"data-collections"`
			Type        string   `json:"type"`
		}
		if err := json.Unmarshal([]byte(data), &req); err != nil {
			st.t.log.Warn("ignoring an execute-snapshot signal whose data is not JSON", "id", id, "err", err)
			return nil
		}
		if req.Type != "" && !strings.EqualFold(req.Type, "incremental") {
			st.t.log.Warn("ignoring an execute-snapshot signal: only incremental snapshots are supported", "id", id, "type", req.Type)
			return nil
		}
		if st.incr == nil {
			st.incr = &incremental{}
		}
		for _, c := range req.Collections {
			if !slices.Contains(st.incr.state.Tables, c) {
				st.incr.state.Tables = append(st.incr.state.Tables, c)
			}
		}
		st.t.log.Info("incremental snapshot requested", "signal", id, "tables", req.Collections)
		if st.incr.windowID == "" {
			return st.nextChunk(ctx)
		}
	case signalWindowOpen:
		if st.incr != nil && id == st.incr.windowID+"-open" {
			st.incr.open = true
		}
	case signalWindowClose:
		if st.incr != nil && id == st.incr.windowID+"-close" {
			return st.closeWindow(ctx)
		}
	}
	return nil
}

// nextChunk opens the window of the next chunk: it writes the open
// marker, reads the chunk and writes the close marker.
func (st *streamer) nextChunk(ctx context.Context) error {
	in := st.incr
	t := st.t
	for len(in.state.Tables) > 0 {
		name := in.state.Tables[0]
		ct, err := st.snapshotTable(ctx, name)
		if err != nil {
			return err
		}
		if ct == nil || len(ct.schemas.Table.Key) == 0 {
			t.log.Warn("incremental snapshot: skipping a table that does not exist, is not captured or has no primary key", "table", name)
			in.state.Tables, in.state.LastKey = in.state.Tables[1:], nil
			continue
		}
		in.table = ct
		in.windowID = newRunID()
		if err := st.insertSignal(ctx, in.windowID+"-open", signalWindowOpen); err != nil {
			return err
		}
		if err := st.readChunk(ctx, ct); err != nil {
			return err
		}
		return st.insertSignal(ctx, in.windowID+"-close", signalWindowClose)
	}
	t.log.Info("incremental snapshot completed")
	st.incr = nil
	return nil
}

func (st *streamer) insertSignal(ctx context.Context, id, typ string) error {
	parts := strings.SplitN(st.t.s.signalTable, ".", 2)
	_, err := st.t.conn.Exec(ctx, "INSERT INTO "+pgx.Identifier{parts[0], parts[1]}.Sanitize()+" (id, type, data) VALUES ($1, $2, NULL)", id, typ)
	if err != nil {
		return fmt.Errorf("incremental snapshot: write the %s marker into %s (the connector's user needs INSERT on it): %w", typ, st.t.s.signalTable, err)
	}
	return nil
}

// snapshotTable builds the captured shape of schema.table from the
// catalog (nil when it does not exist or is not captured).
func (st *streamer) snapshotTable(ctx context.Context, name string) (*capturedTable, error) {
	parts := strings.SplitN(name, ".", 2)
	if len(parts) != 2 || !st.t.s.filters.includeTable(parts[0], parts[1]) {
		return nil, nil
	}
	var oid uint32
	err := st.t.conn.QueryRow(ctx, "SELECT to_regclass($1)::oid", pgx.Identifier{parts[0], parts[1]}.Sanitize()).Scan(&oid)
	if err != nil || oid == 0 {
		return nil, nil
	}
	ti, err := loadTable(ctx, st.t.conn, oid)
	if err != nil {
		return nil, err
	}
	rel := make([]relColumn, len(ti.columns))
	for i, cc := range ti.columns {
		rel[i] = relColumn{name: cc.name, typeOID: cc.typeOID, typeMod: cc.typeMod}
	}
	return st.t.newCapturedTable(ti, rel)
}

// readChunk reads the chunk after the last key into the window.
func (st *streamer) readChunk(ctx context.Context, ct *capturedTable) error {
	in := st.incr
	cols := ct.schemas.Table.Columns
	names := make([]string, len(cols))
	types := map[string]string{}
	for i, c := range cols {
		names[i] = pgx.Identifier{c.Name}.Sanitize()
		types[c.Name] = c.TypeName
	}
	keys := ct.schemas.Table.Key
	keyCols := make([]string, len(keys))
	for i, k := range keys {
		keyCols[i] = pgx.Identifier{k}.Sanitize()
	}
	where := ""
	if in.state.LastKey != nil {
		lits := make([]string, len(keys))
		for i, v := range in.state.LastKey {
			lits[i] = "'" + strings.ReplaceAll(v, "'", "''") + "'::" + pgx.Identifier{types[keys[i]]}.Sanitize()
		}
		where = " WHERE (" + strings.Join(keyCols, ", ") + ") > (" + strings.Join(lits, ", ") + ")"
	}
	sql := fmt.Sprintf("COPY (SELECT %s FROM %s%s ORDER BY %s LIMIT %d) TO STDOUT", strings.Join(names, ", "),
		pgx.Identifier{ct.schema, ct.name}.Sanitize(), where, strings.Join(keyCols, ", "), st.t.s.chunkSize)
	direct := ct.inColumnOrder()
	keyPos := make([]int, len(keys))
	for i, k := range keys {
		for j, c := range cols {
			if c.Name == k {
				keyPos[i] = j
			}
		}
	}
	in.rows, in.keys, in.byKey, in.open = in.rows[:0], in.keys[:0], map[string]int{}, false
	w := &copyRowWriter{ctx: ctx, ct: direct, sink: func(_ context.Context, _ *capturedTable, row *connect.Struct, tp *tuple) error {
		k, err := ct.schemas.KeyOf(row)
		if err != nil {
			return err
		}
		ks := k.String()
		in.byKey[ks] = len(in.rows)
		in.rows = append(in.rows, row)
		in.keys = append(in.keys, ks)
		in.chunkEnd = in.chunkEnd[:0]
		for _, p := range keyPos {
			in.chunkEnd = append(in.chunkEnd, string(tp.values[p]))
		}
		return nil
	}}
	if _, err := st.t.conn.PgConn().CopyTo(ctx, w, sql); err != nil {
		if w.err != nil {
			return w.err
		}
		return fmt.Errorf("incremental snapshot: read a chunk of %s.%s: %w", ct.schema, ct.name, err)
	}
	in.full = len(in.rows) >= st.t.s.chunkSize
	return w.err
}

// windowChange drops the chunk's row of a key that changed while the
// window is open: the streamed change is at least as new.
func (st *streamer) windowChange(ct *capturedTable, key *connect.Struct) {
	in := st.incr
	if in == nil || !in.open || key == nil || in.table == nil || ct.oid != in.table.oid {
		return
	}
	if i, ok := in.byKey[key.String()]; ok && i >= 0 {
		in.rows[i] = nil
		in.byKey[key.String()] = -1
	}
}

// closeWindow emits the chunk's remaining rows and moves on.
func (st *streamer) closeWindow(ctx context.Context) error {
	in := st.incr
	ct := in.table
	now := time.Now()
	src := SourceInfo{Name: st.t.s.prefix, TsUs: now.UnixMicro(), Snapshot: "incremental", DB: st.t.s.db, Schema: ct.schema, Table: ct.name}
	for _, row := range in.rows {
		if row == nil {
			continue
		}
		key, err := ct.schemas.KeyOf(row)
		if err != nil {
			return err
		}
		st.add(ct.topic, ct.schemas.Key, structOrNil(key), ct.schemas.EnvelopeSchema, ct.schemas.Envelope("r", nil, row, src, now), 0, nil)
	}
	if in.full {
		in.state.LastKey = append([]string(nil), in.chunkEnd...)
	} else {
		st.t.log.Info("incremental snapshot: table done", "table", ct.schema+"."+ct.name)
		in.state.Tables, in.state.LastKey = in.state.Tables[1:], nil
	}
	in.windowID, in.open, in.rows = "", false, in.rows[:0]
	return st.nextChunk(ctx)
}

// stateJSON is the incremental snapshot's progress for the offsets ("" when none).
func (st *streamer) incrementalJSON() string {
	if st.incr == nil || len(st.incr.state.Tables) == 0 {
		return ""
	}
	b, _ := json.Marshal(st.incr.state)
	return string(b)
}
