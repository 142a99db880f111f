package sink

import (
	"strings"

	"github.com/fjordhq/fjord/connect"
)

// planKind is what a plan's statements do.
type planKind uint8

const (
	planWrite  planKind = iota // insert, upsert (with deletes when enabled) or update rows
	planDelete                 // delete rows by key
)

// deleteFlag is the column of an upsert's staging table that marks the
// keys to delete.
const deleteFlag = "__fjord_delete"

// plan is how rows of one shape reach one table: COPY into the table
// (insert mode) or into a session-private staging table that one or two
// set-based statements then apply (upsert, update, delete).
type plan struct {
	t     *table
	kind  planKind
	cols  []planCol // key columns first
	nkeys int
	// flag: the rows carry deleteFlag (upsert with deletes enabled).
	flag bool
	// staging is the staging table's CREATE statement ("" for a direct
	// COPY); the connection names the table (db.staging).
	staging string
	// copyCols is COPY's column list; post the statements after COPY,
	// with stagingName standing for the staging table.
	copyCols string
	post     string
}

const stagingName = "\x00staging\x00"

// planCol is one column: where its value comes from and how it is written.
type planCol struct {
	f   field
	col *column
	r   renderer
}

// newPlan builds the statements for shape sh into table t.
func (s *settings) newPlan(t *table, sh *shape, kind planKind, flag bool) (*plan, error) {
	p := &plan{t: t, kind: kind, flag: flag, nkeys: len(sh.keys)}
	fields := sh.keys
	if kind == planWrite {
		fields = sh.all()
	}
	names := make([]string, len(fields))
	for i := range fields {
		c := t.find(s, fields[i].name)
		r, err := s.renderer(fields[i].name, fields[i].schema, c.cat)
		if err != nil {
			return nil, err
		}
		p.cols = append(p.cols, planCol{f: fields[i], col: c, r: r})
		names[i] = s.ident(c.name)
	}
	target := s.qualified(t)
	list := strings.Join(names, ",")
	keyMatch := func() string {
		conds := make([]string, p.nkeys)
		for i := range conds {
			conds[i] = "d." + names[i] + " = s." + names[i]
		}
		return strings.Join(conds, " AND ")
	}
	direct := kind == planWrite && s.insertMode == InsertModeInsert
	if direct && t.kind != 'v' { // COPY cannot write into a view: INSERT from staging
		p.copyCols = target + " (" + list + ")"
		return p, nil
	}
	stagingCols := list
	if flag {
		stagingCols += ",false AS " + deleteFlag
	}
	p.staging = "CREATE TEMPORARY TABLE " + stagingName + " ON COMMIT DELETE ROWS AS SELECT " + stagingCols + " FROM " + target + " WITH NO DATA"
	p.copyCols = stagingName + " (" + list
	if flag {
		p.copyCols += "," + deleteFlag
	}
	p.copyCols += ")"
	switch {
	case direct:
		p.post = "INSERT INTO " + target + " (" + list + ") SELECT " + list + " FROM " + stagingName
	case kind == planDelete:
		p.post = "DELETE FROM " + target + " AS d USING " + stagingName + " AS s WHERE " + keyMatch()
	case s.insertMode == InsertModeUpsert:
		var b strings.Builder
		b.WriteString("INSERT INTO " + target + " (" + list + ") SELECT " + list + " FROM " + stagingName)
		if flag {
			b.WriteString(" WHERE NOT " + deleteFlag)
		}
		b.WriteString(" ON CONFLICT (" + strings.Join(names[:p.nkeys], ",") + ")")
		if len(names) == p.nkeys {
			b.WriteString(" DO NOTHING")
		} else {
			b.WriteString(" DO UPDATE SET ")
			for i, n := range names[p.nkeys:] {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(n + "=EXCLUDED." + n)
			}
		}
		if flag {
			b.WriteString(";\nDELETE FROM " + target + " AS d USING " + stagingName + " AS s WHERE s." + deleteFlag + " AND " + keyMatch())
		}
		p.post = b.String()
	default: // update
		if len(names) == p.nkeys {
			p.post = "" // nothing to set: the rows are already what the records say
			break
		}
		var b strings.Builder
		b.WriteString("UPDATE " + target + " AS d SET ")
		for i, n := range names[p.nkeys:] {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(n + " = s." + n)
		}
		b.WriteString(" FROM " + stagingName + " AS s WHERE " + keyMatch())
		p.post = b.String()
	}
	return p, nil
}

// dedupes: upserts and updates keep the last row of each key (a batch
// that sets a row twice must end with the second; PostgreSQL refuses to
// touch a row twice in one statement). Kafka coordinates never repeat.
func (s *settings) dedupes(p *plan) bool {
	return p.kind == planWrite && s.insertMode != InsertModeInsert && s.pkMode != PKModeKafka
}

// appendRow renders a record as one COPY text line. keyEnd is where the
// key columns end in the line (the identity of the row for dedupe).
func (p *plan) appendRow(dst []byte, r *connect.Record, del, replaceNull bool, scratch *[]byte) (_ []byte, keyEnd int, err error) {
	start := len(dst)
	for i := range p.cols {
		if i > 0 {
			dst = append(dst, '\t')
		}
		if i == p.nkeys {
			keyEnd = len(dst) - start
		}
		c := &p.cols[i]
		if del && i >= p.nkeys {
			dst = append(dst, `\N`...)
			continue
		}
		v, err := c.f.value(r, replaceNull)
		if err != nil {
			return dst, 0, err
		}
		if v == nil {
			dst = append(dst, `\N`...)
			continue
		}
		switch {
		case c.r.plain:
			str, ok := v.(string)
			if !ok {
				return dst, 0, columnError(c, typeError("STRING", v))
			}
			if dst, err = appendCopyString(dst, str); err != nil {
				return dst, 0, columnError(c, err)
			}
		case c.r.escape:
			if *scratch, err = c.r.fn((*scratch)[:0], v); err != nil {
				return dst, 0, columnError(c, err)
			}
			if dst, err = appendCopyText(dst, *scratch); err != nil {
				return dst, 0, columnError(c, err)
			}
		default:
			if dst, err = c.r.fn(dst, v); err != nil {
				return dst, 0, columnError(c, err)
			}
		}
	}
	if len(p.cols) == p.nkeys {
		keyEnd = len(dst) - start
	}
	if p.flag {
		if del {
			dst = append(dst, "\tt"...)
		} else {
			dst = append(dst, "\tf"...)
		}
	}
	return append(dst, '\n'), keyEnd, nil
}

type fieldError struct {
	field, column string
	err           error
}

func (e *fieldError) Error() string {
	return "field " + e.field + " (column " + e.column + "): " + e.err.Error()
}
func (e *fieldError) Unwrap() error { return e.err }

func columnError(c *planCol, err error) error {
	return &fieldError{field: c.f.name, column: c.col.name, err: err}
}
