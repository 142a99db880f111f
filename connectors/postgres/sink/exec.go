package sink

import (
	"bytes"
	"context"
	"fmt"
	"strings"
)

// exec writes the chunks in one transaction. Each chunk is one round
// trip: COPY of its rows followed, in the same query, by the statements
// that apply them. A put of one chunk needs no BEGIN/COMMIT: a query of
// several statements is one (implicit) transaction.
func (w *writer) exec(ctx context.Context, chunks []chunk) error {
	names, err := w.stagingNames(ctx, chunks)
	if err != nil {
		return err
	}
	pg := w.db.conn.PgConn()
	single := len(chunks) == 1
	used := map[string]bool{}
	for i, c := range chunks {
		sql := chunkSQL(c.p, names[i], used)
		if !single && i == 0 {
			sql = "BEGIN;\n" + sql
		}
		if _, err := pg.CopyFrom(ctx, bytes.NewReader(c.data), sql); err != nil {
			// pgconn's CopyFrom may still be reading c.data in its own
			// goroutine after a failed round trip: the next put must not
			// write into the same buffers.
			w.buf, w.packed = nil, nil
			w.db.rollback()
			return fmt.Errorf("write %d records to %s: %w", len(c.recs), c.p.t.id, err)
		}
	}
	if single {
		return nil
	}
	return w.commit(ctx)
}

func (w *writer) commit(ctx context.Context) error {
	res, err := w.db.conn.PgConn().Exec(ctx, "COMMIT").ReadAll()
	if err != nil {
		w.db.rollback()
		return fmt.Errorf("commit: %w", err)
	}
	if len(res) != 1 || res[0].CommandTag.String() != "COMMIT" {
		return fmt.Errorf("commit: the transaction was rolled back")
	}
	return nil
}

// stagingNames creates (once per session) the chunks' staging tables.
func (w *writer) stagingNames(ctx context.Context, chunks []chunk) ([]string, error) {
	names := make([]string, len(chunks))
	for i, c := range chunks {
		if c.p.staging == "" {
			continue
		}
		name, err := w.db.stagingTable(ctx, c.p)
		if err != nil {
			return nil, err
		}
		names[i] = name
	}
	return names, nil
}

// chunkSQL is a chunk's query: COPY, then the plan's statements. A
// staging table used before in the transaction is emptied first (it
// empties itself at commit).
func chunkSQL(p *plan, staging string, used map[string]bool) string {
	var b strings.Builder
	if staging != "" && used[staging] {
		b.WriteString("TRUNCATE " + staging + ";\n")
	}
	b.WriteString("COPY " + sqlFor(p.copyCols, staging) + " FROM STDIN")
	if p.post != "" {
		b.WriteString(";\n" + sqlFor(p.post, staging))
	}
	if staging != "" {
		used[staging] = true
	}
	return b.String()
}

// unroll writes the chunks again record by record, each in a savepoint
// of one transaction, and reports the records whose statements fail.
func (w *writer) unroll(ctx context.Context, chunks []chunk, report reportFunc) error {
	names, err := w.stagingNames(ctx, chunks)
	if err != nil {
		return err
	}
	pg := w.db.conn.PgConn()
	if err := pg.Exec(ctx, "BEGIN").Close(); err != nil {
		return err
	}
	used := map[string]bool{}
	first := true
	for i, c := range chunks {
		data := c.data
		for k := 0; len(data) > 0; k++ {
			n := bytes.IndexByte(data, '\n') + 1
			line := data[:n]
			data = data[n:]
			sql := "SAVEPOINT fjord_row;\n"
			if !first {
				sql = "RELEASE SAVEPOINT fjord_row;\n" + sql
			}
			first = false
			_, err := pg.CopyFrom(ctx, bytes.NewReader(line), sql+chunkSQL(c.p, names[i], used))
			if err == nil {
				continue
			}
			if !isServerError(err) || serverTrouble(err) {
				w.buf, w.packed = nil, nil // as in exec: CopyFrom may still read line
				w.db.rollback()
				return fmt.Errorf("write to %s: %w", c.p.t.id, err)
			}
			if rerr := pg.Exec(ctx, "ROLLBACK TO SAVEPOINT fjord_row").Close(); rerr != nil {
				w.db.rollback()
				return rerr
			}
			r := c.recs[k]
			err = fmt.Errorf("record at (topic='%s',partition=%d,offset=%d) for table %s: %w", r.Topic, r.Partition, r.Offset, c.p.t.id, err)
			if rerr := report(ctx, r, err); rerr != nil {
				w.db.rollback()
				return rerr
			}
		}
	}
	return w.commit(ctx)
}
