package sink

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"unsafe"

	"github.com/fjordhq/fjord/connect"
)

// reportFunc hands a record that cannot be written to the errant record
// reporter; an error means the task must fail (no reporter, or the
// tolerance is exceeded).
type reportFunc func(ctx context.Context, r *connect.Record, err error) error

// writer turns a put's records into one transaction.
type writer struct {
	s      *settings
	log    *slog.Logger
	db     *db
	tables map[tableID]*table
	plans  map[planKey]*plan
	topics map[string]tableID
	buf    []byte
	packed []byte
	rows   []row
	keep   []int
}

type planKey struct {
	table      tableID
	key, value *connect.Schema
	kind       planKind
	flag       bool
}

// row is one rendered record: its line in writer.buf.
type row struct {
	rec        *connect.Record
	start, end int
	keyEnd     int
	del        bool
	superseded bool
}

// chunk is what one COPY sends: rows of one plan.
type chunk struct {
	p    *plan
	data []byte
	recs []*connect.Record
}

func newWriter(s *settings, log *slog.Logger) *writer {
	return &writer{s: s, log: log, db: &db{s: s, log: log}, tables: map[tableID]*table{},
		plans: map[planKey]*plan{}, topics: map[string]tableID{}}
}

// unrollMode says when write falls back to writing record by record.
type unrollMode uint8

const (
	unrollNever       unrollMode = iota // errors are returned
	unrollOnDataError                   // a statement refused on its data is unrolled
	unrollAlways                        // record by record from the start
)

// recordError is a problem of one record (reported, or fatal without a
// reporter); any other error of write is about the database.
type recordError struct{ err error }

func (e *recordError) Error() string { return e.err.Error() }
func (e *recordError) Unwrap() error { return e.err }

// write writes recs in one transaction. Records that cannot be written
// (bad values, a schema the table cannot take) go to report. When unroll
// is set, a statement failing on the data is retried record by record
// and the failing records reported; otherwise, and for connection
// errors, the error is returned for the task to retry or fail.
func (w *writer) write(ctx context.Context, recs []*connect.Record, report reportFunc, unroll unrollMode) error {
	if w.s.socketTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, w.s.socketTimeout)
		defer cancel()
	}
	if err := w.db.ensure(ctx); err != nil {
		return err
	}
	g := grouper{s: w.s, last: map[tableID]*run{}}
	for _, r := range recs {
		if err := w.s.checkRecord(r); err != nil {
			if rerr := report(ctx, r, err); rerr != nil {
				return rerr
			}
			continue
		}
		id, err := w.tableFor(r.Topic)
		if err != nil {
			if rerr := report(ctx, r, err); rerr != nil {
				return rerr
			}
			continue
		}
		g.add(id, r)
	}
	w.buf, w.packed = w.buf[:0], w.packed[:0]
	var chunks []chunk
	for _, rn := range g.runs {
		cs, err := w.prepare(ctx, rn, report)
		if err != nil {
			return err
		}
		chunks = append(chunks, cs...)
	}
	if len(chunks) == 0 {
		return nil
	}
	if unroll == unrollAlways {
		return w.unroll(ctx, chunks, report)
	}
	err := w.exec(ctx, chunks)
	if err == nil || !isServerError(err) || transient(err) || unroll == unrollNever {
		return err
	}
	// A statement failed on the data: write the records one by one to
	// find those to blame (Confluent's unrollAndRetry).
	w.log.Warn("write failed; retrying record by record to report the failing ones", "records", len(recs), "err", err)
	w.forget()
	return w.unroll(ctx, chunks, report)
}

func (w *writer) tableFor(topic string) (tableID, error) {
	if id, ok := w.topics[topic]; ok {
		return id, nil
	}
	id, err := w.s.tableFor(topic)
	if err != nil {
		return id, err
	}
	if len(w.topics) > 10000 {
		clear(w.topics)
	}
	w.topics[topic] = id
	return id, nil
}

// prepare plans a run's statements (creating or altering its table when
// allowed) and renders its rows into chunks.
func (w *writer) prepare(ctx context.Context, rn *run, report reportFunc) ([]chunk, error) {
	kind, flag := planWrite, false
	valueSchema := rn.valueSchema
	switch {
	case rn.writes() == 0:
		kind = planDelete
	case rn.deletes > 0:
		flag = true // upsert with deletes: one staging table, one flag
	}
	p, err := w.plan(ctx, rn.table, rn.keySchema, valueSchema, kind, flag)
	if err != nil {
		if !errors.As(err, new(*recordError)) {
			return nil, err
		}
		for _, r := range rn.recs {
			if rerr := report(ctx, r, err); rerr != nil {
				return nil, rerr
			}
		}
		return nil, nil
	}
	if p == nil { // deletes from a table that does not exist: nothing to do
		return nil, nil
	}
	rows := w.rows[:0]
	var scratch []byte
	for _, r := range rn.recs {
		del := w.s.isDelete(r)
		start := len(w.buf)
		var keyEnd int
		w.buf, keyEnd, err = p.appendRow(w.buf, r, del, w.s.replaceNull, &scratch)
		if err != nil {
			w.buf = w.buf[:start]
			err = fmt.Errorf("record at (topic='%s',partition=%d,offset=%d) for table %s: %w", r.Topic, r.Partition, r.Offset, rn.table, err)
			if rerr := report(ctx, r, err); rerr != nil {
				return nil, rerr
			}
			continue
		}
		rows = append(rows, row{rec: r, start: start, end: len(w.buf), keyEnd: start + keyEnd, del: del})
	}
	w.rows = rows
	if w.s.dedupes(p) {
		last := make(map[string]int, len(rows))
		for i := range rows {
			k := rows[i].key(w.buf)
			if j, ok := last[k]; ok {
				rows[j].superseded = true
			}
			last[k] = i
		}
	}
	return w.chunks(p, rows), nil
}

func (r *row) key(buf []byte) string {
	// The buffer is not written again before the put ends: its bytes can
	// back the map keys.
	return unsafe.String(&buf[r.start], r.keyEnd-r.start)
}

// chunks cuts the rows that count (not superseded) into batch.size
// pieces: slices of the buffer when their lines lie together, else
// packed copies.
func (w *writer) chunks(p *plan, rows []row) []chunk {
	keep := w.keep[:0]
	for i := range rows {
		if !rows[i].superseded {
			keep = append(keep, i)
		}
	}
	w.keep = keep
	size := max(w.s.batchSize, 1)
	var out []chunk
	for from := 0; from < len(keep); from += size {
		part := keep[from:min(from+size, len(keep))]
		c := chunk{p: p, recs: make([]*connect.Record, len(part))}
		contiguous := true
		for k, i := range part {
			c.recs[k] = rows[i].rec
			if k > 0 && rows[part[k-1]].end != rows[i].start {
				contiguous = false
			}
		}
		if contiguous {
			c.data = w.buf[rows[part[0]].start:rows[part[len(part)-1]].end]
		} else {
			start := len(w.packed)
			for _, i := range part {
				w.packed = append(w.packed, w.buf[rows[i].start:rows[i].end]...)
			}
			c.data = w.packed[start:]
		}
		out = append(out, c)
	}
	return out
}

// forget drops what the writer knows of tables and plans: after a data
// error the table may have changed under the sink.
func (w *writer) forget() {
	clear(w.tables)
	clear(w.plans)
}

// reset drops the connection (after a connection error) and the caches.
func (w *writer) reset() {
	w.db.close()
	w.forget()
}

func (w *writer) close() { w.db.close() }
