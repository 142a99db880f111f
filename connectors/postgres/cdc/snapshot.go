package cdc

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fjordhq/fjord/connect"
)

// snapshot reads every captured table in one REPEATABLE READ transaction
// (importing snapName when the slot exported one) and queues op=r
// records. Rows stream through COPY ... TO STDOUT: the queue's
// back-pressure stops reading from the socket, so memory stays bounded
// whatever the table size. lsn is the position the stream starts from,
// stored in the snapshot records' offsets.
func (t *Task) snapshot(ctx context.Context, snapName string, lsn uint64) error {
	c := t.conn
	started := time.Now()
	if _, err := c.Exec(ctx, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"); err != nil {
		return fmt.Errorf("snapshot: begin: %w", err)
	}
	defer c.Exec(context.Background(), "ROLLBACK")
	if snapName != "" {
		if _, err := c.Exec(ctx, "SET TRANSACTION SNAPSHOT '"+strings.ReplaceAll(snapName, "'", "''")+"'"); err != nil {
			return fmt.Errorf("snapshot: import the slot's exported snapshot %s: %w", snapName, err)
		}
	}
	tables, err := t.capturedTableNames(ctx, c)
	if err != nil {
		return err
	}
	var captured []*capturedTable
	for _, tn := range tables {
		if tn[0]+"."+tn[1] == t.s.signalTable && !t.s.filters.includeTable(tn[0], tn[1]) {
			continue
		}
		var oid uint32
		if err := c.QueryRow(ctx, "SELECT $1::regclass::oid", pgx.Identifier{tn[0], tn[1]}.Sanitize()).Scan(&oid); err != nil {
			return fmt.Errorf("snapshot: look up %s.%s: %w", tn[0], tn[1], err)
		}
		ti, err := loadTable(ctx, c, oid)
		if err != nil {
			return err
		}
		rel := make([]relColumn, len(ti.columns))
		for i, cc := range ti.columns {
			rel[i] = relColumn{name: cc.name, typeOID: cc.typeOID, typeMod: cc.typeMod}
		}
		ct, err := t.newCapturedTable(ti, rel)
		if err != nil {
			return err
		}
		captured = append(captured, ct)
	}
	t.log.Info("snapshot started", "tables", len(captured), "lsn", lsnString(lsn), "exported", snapName != "")
	em := &snapshotEmitter{t: t, lsn: lsn, tsUs: started.UnixMicro()}
	// Debezium reports the snapshot transaction's id in source.txId.
	var xid int64
	if err := c.QueryRow(ctx, "SELECT txid_current()").Scan(&xid); err == nil {
		em.txID = &xid
	} else {
		return fmt.Errorf("snapshot: read the transaction id: %w", err)
	}
	total := 0
	for _, ct := range captured {
		em.table, em.firstInTable = ct, true
		n, err := t.copyTable(ctx, ct, em)
		if err != nil {
			return err
		}
		if err := em.endTable(ctx); err != nil {
			return err
		}
		total += n
		t.log.Info("snapshot: table read", "table", ct.schema+"."+ct.name, "rows", n)
	}
	if err := em.flush(ctx); err != nil {
		return err
	}
	t.log.Info("snapshot completed", "tables", len(captured), "rows", total, "took", time.Since(started).Round(time.Millisecond))
	return nil
}

// copyTable streams one table through COPY and returns its row count.
func (t *Task) copyTable(ctx context.Context, ct *capturedTable, em *snapshotEmitter) (int, error) {
	cols := ct.schemas.Table.Columns
	if len(cols) == 0 {
		return 0, nil
	}
	names := make([]string, len(cols))
	for i, col := range cols {
		names[i] = pgx.Identifier{col.Name}.Sanitize()
	}
	sql := "COPY (SELECT " + strings.Join(names, ", ") + " FROM " + pgx.Identifier{ct.schema, ct.name}.Sanitize() + ") TO STDOUT"
	// The snapshot's tuples are in column order already: map them 1:1.
	direct := ct.inColumnOrder()
	w := &copyRowWriter{ctx: ctx, ct: direct, em: em}
	if _, err := t.conn.PgConn().CopyTo(ctx, w, sql); err != nil {
		if w.err != nil {
			return w.rows, w.err
		}
		return w.rows, fmt.Errorf("snapshot: read %s.%s: %w", ct.schema, ct.name, err)
	}
	return w.rows, w.err
}

// copyRowWriter parses COPY's text format: one row per line, columns
// separated by tabs, \N for NULL, backslash escapes.
type copyRowWriter struct {
	ctx context.Context
	ct  *capturedTable
	em  *snapshotEmitter
	// sink, when set, takes the rows instead of em (incremental chunks).
	sink    func(ctx context.Context, ct *capturedTable, row *connect.Struct, tp *tuple) error
	partial []byte
	tp      tuple
	scratch []byte
	rows    int
	err     error
}

func (w *copyRowWriter) Write(p []byte) (int, error) {
	n := len(p)
	if len(w.partial) > 0 {
		w.partial = append(w.partial, p...)
		p = w.partial
	}
	for {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			break
		}
		if err := w.row(p[:i]); err != nil {
			w.err = err
			return 0, err
		}
		p = p[i+1:]
	}
	w.partial = append(w.partial[:0], p...)
	return n, nil
}

func (w *copyRowWriter) row(line []byte) error {
	w.tp.kinds = w.tp.kinds[:0]
	w.tp.values = w.tp.values[:0]
	w.scratch = w.scratch[:0]
	type span struct{ start, end int }
	var spans [64]span
	sp := spans[:0]
	for {
		i := bytes.IndexByte(line, '\t')
		field := line
		if i >= 0 {
			field = line[:i]
		}
		if len(field) == 2 && field[0] == '\\' && field[1] == 'N' {
			w.tp.kinds = append(w.tp.kinds, tupleNull)
			w.tp.values = append(w.tp.values, nil)
			sp = append(sp, span{-1, -1})
		} else if bytes.IndexByte(field, '\\') < 0 {
			w.tp.kinds = append(w.tp.kinds, tupleText)
			w.tp.values = append(w.tp.values, field)
			sp = append(sp, span{-1, -1})
		} else {
			start := len(w.scratch)
			var err error
			if w.scratch, err = unescapeCopy(w.scratch, field); err != nil {
				return fmt.Errorf("snapshot: %s.%s: %w", w.ct.schema, w.ct.name, err)
			}
			w.tp.kinds = append(w.tp.kinds, tupleText)
			w.tp.values = append(w.tp.values, nil)
			sp = append(sp, span{start, len(w.scratch)})
		}
		if i < 0 {
			break
		}
		line = line[i+1:]
	}
	// Unescaped fields point into scratch, which may have moved while it
	// grew: slice them only now.
	for i, s := range sp {
		if s.start >= 0 {
			w.tp.values[i] = w.scratch[s.start:s.end:s.end]
		}
	}
	row, err := w.ct.row(&w.tp)
	if err != nil {
		return err
	}
	w.rows++
	if w.sink != nil {
		return w.sink(w.ctx, w.ct, row, &w.tp)
	}
	return w.em.add(w.ctx, w.em.table, row)
}

// unescapeCopy appends field with COPY's backslash escapes decoded.
func unescapeCopy(dst, field []byte) ([]byte, error) {
	for i := 0; i < len(field); i++ {
		c := field[i]
		if c != '\\' {
			dst = append(dst, c)
			continue
		}
		i++
		if i >= len(field) {
			return dst, fmt.Errorf("COPY field ends with a lone backslash")
		}
		switch c = field[i]; c {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'v':
			dst = append(dst, '\v')
		case 'x':
			v, n := 0, 0
			for n < 2 && i+1 < len(field) && isHex(field[i+1]) {
				i++
				v = v*16 + hexVal(field[i])
				n++
			}
			if n == 0 {
				dst = append(dst, 'x')
			} else {
				dst = append(dst, byte(v))
			}
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v, n := int(c-'0'), 1
			for n < 3 && i+1 < len(field) && field[i+1] >= '0' && field[i+1] <= '7' {
				i++
				v = v*8 + int(field[i]-'0')
				n++
			}
			dst = append(dst, byte(v))
		default:
			dst = append(dst, c)
		}
	}
	return dst, nil
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
func hexVal(c byte) int {
	switch {
	case c <= '9':
		return int(c - '0')
	case c >= 'a':
		return int(c-'a') + 10
	}
	return int(c-'A') + 10
}

// snapshotEmitter holds back one row so the last row of a table and of
// the whole snapshot get Debezium's markers (source.snapshot = first,
// first_in_data_collection, last_in_data_collection, last, true) and the
// last record's offset says the snapshot is complete.
type snapshotEmitter struct {
	t            *Task
	lsn          uint64
	tsUs         int64
	table        *capturedTable
	firstInTable bool
	emitted      int
	txID         *int64

	pending        *connect.Struct
	pendingTable   *capturedTable
	pendingFirstIn bool
	pendingLastIn  bool
	batch          []*connect.SourceRecord

	// What every row but the last shares, made once: the source offset
	// (lsn and ts_usec are the snapshot's, fixed from its start; nothing
	// changes a record's offset map after it is emitted), the source
	// block's lsn and sequence. A map per row was 5% of a snapshot's CPU.
	sharedOffset map[string]any
	lsnValue     *int64
	sequence     string
}

func (e *snapshotEmitter) add(ctx context.Context, ct *capturedTable, row *connect.Struct) error {
	if e.pending != nil {
		if err := e.emit(ctx, false); err != nil {
			return err
		}
	}
	e.pending, e.pendingTable, e.pendingFirstIn, e.pendingLastIn = row, ct, e.firstInTable, false
	e.firstInTable = false
	return nil
}

// endTable is called after a table's last row: the held-back row is its
// last (it is emitted with the next row, or as the snapshot's last).
func (e *snapshotEmitter) endTable(context.Context) error {
	if e.pending != nil && e.pendingTable == e.table {
		e.pendingLastIn = true
	}
	return nil
}

// flush emits the held-back row as the snapshot's last and queues the
// batch.
func (e *snapshotEmitter) flush(ctx context.Context) error {
	if e.pending != nil {
		if err := e.emit(ctx, true); err != nil {
			return err
		}
	}
	if len(e.batch) > 0 {
		err := e.t.queue.put(ctx, e.batch...)
		e.batch = nil
		return err
	}
	return nil
}

func (e *snapshotEmitter) emit(ctx context.Context, last bool) error {
	lastInTable := e.pendingLastIn
	ct, row := e.pendingTable, e.pending
	e.pending = nil
	marker := "true"
	switch {
	case e.emitted == 0:
		marker = "first"
	case last:
		marker = "last"
	case lastInTable:
		marker = "last_in_data_collection"
	case e.pendingFirstIn:
		marker = "first_in_data_collection"
	}
	e.emitted++
	if e.lsnValue == nil {
		lsn := int64(e.lsn)
		e.lsnValue, e.sequence = &lsn, `[null,"`+strconv.FormatUint(e.lsn, 10)+`"]`
	}
	src := SourceInfo{Name: e.t.s.prefix, TsUs: e.tsUs, Snapshot: marker, DB: e.t.s.db, Schema: ct.schema, Table: ct.name,
		LSN: e.lsnValue, TxID: e.txID, Sequence: e.sequence}
	value := ct.schemas.Envelope("r", nil, row, src, time.Now())
	key, err := ct.schemas.KeyOf(row)
	if err != nil {
		return err
	}
	var offMap map[string]any
	if last {
		offMap = offset{lsn: e.lsn, snapshot: true, lastSnapshot: true, tsUsec: e.tsUs}.toMap()
	} else {
		if e.sharedOffset == nil {
			e.sharedOffset = offset{lsn: e.lsn, snapshot: true, tsUsec: e.tsUs}.toMap()
		}
		offMap = e.sharedOffset
	}
	rec := connect.NewSourceRecord(e.t.partition, offMap, ct.topic, ct.schemas.Key, structOrNil(key), ct.schemas.EnvelopeSchema, value)
	rec.Headers = e.t.contextHeaders(nil)
	e.batch = append(e.batch, rec)
	if len(e.batch) >= 256 || last {
		err := e.t.queue.put(ctx, e.batch...)
		e.batch = e.batch[:0:0]
		return err
	}
	return nil
}

// structOrNil keeps a nil *Struct from becoming a non-nil interface.
func structOrNil(s *connect.Struct) any {
	if s == nil {
		return nil
	}
	return s
}

// inColumnOrder is ct for tuples that hold exactly its kept columns, in
// order (what SELECTing them gives), instead of the relation's columns.
func (ct *capturedTable) inColumnOrder() *capturedTable {
	d := *ct
	d.pos = make([]int, ct.nkept)
	for i := range d.pos {
		d.pos[i] = i
	}
	return &d
}
