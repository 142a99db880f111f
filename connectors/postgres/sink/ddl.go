package sink

import (
	"context"
	"fmt"
	"strings"

	"github.com/fjordhq/fjord/connect"
)

// plan returns the plan of a run's shape, building it (and creating or
// altering the table) the first time. Problems the records cause (no
// table and auto.create off, an unmappable type, ...) are recordErrors;
// nil, nil means deletes from a table that does not exist.
func (w *writer) plan(ctx context.Context, id tableID, ks, vs *connect.Schema, kind planKind, flag bool) (*plan, error) {
	if w.s.pkMode != PKModeRecordKey {
		ks = nil // the key does not shape the columns
	}
	if kind == planDelete {
		vs = nil
	}
	k := planKey{table: id, key: ks, value: vs, kind: kind, flag: flag}
	if p, ok := w.plans[k]; ok {
		return p, nil
	}
	// Equal schemas in other instances (a converter without a cache).
	for ok, p := range w.plans {
		if ok.table == id && ok.kind == kind && ok.flag == flag && equalOrNil(ok.key, ks) && equalOrNil(ok.value, vs) {
			w.plans[k] = p
			return p, nil
		}
	}
	sh, err := w.s.shapeOf(id.String(), ks, vs)
	if err != nil {
		return nil, &recordError{err}
	}
	t, err := w.ensureTable(ctx, id, sh, kind == planWrite)
	if err != nil || t == nil {
		return nil, err
	}
	p, err := w.s.newPlan(t, sh, kind, flag)
	if err != nil {
		return nil, &recordError{fmt.Errorf("table %s: %w", id, err)}
	}
	if len(w.plans) > 1000 {
		clear(w.plans)
	}
	w.plans[k] = p
	return p, nil
}

func equalOrNil(a, b *connect.Schema) bool {
	if a == nil || b == nil {
		return a == b
	}
	return sameSchema(a, b)
}

// table returns the cached table, loading it when unknown or when fresh
// is set (then plans built on the old one are dropped).
func (w *writer) table(ctx context.Context, id tableID, fresh bool) (*table, error) {
	if t := w.tables[id]; t != nil && !fresh {
		return t, nil
	}
	t, err := loadTable(ctx, w.db.conn, id, w.db.schema)
	if err != nil {
		return nil, err
	}
	w.tables[id] = t
	for k := range w.plans {
		if k.table == id {
			delete(w.plans, k)
		}
	}
	return t, nil
}

// ensureTable makes the table fit the shape, as Confluent's DbStructure:
// CREATE when missing and auto.create is on, ALTER ... ADD for missing
// optional (or defaulted) fields when auto.evolve is on.
func (w *writer) ensureTable(ctx context.Context, id tableID, sh *shape, write bool) (*table, error) {
	t, err := w.table(ctx, id, false)
	if err != nil {
		return nil, err
	}
	if !t.exists {
		if t, err = w.table(ctx, id, true); err != nil { // created meanwhile?
			return nil, err
		}
	}
	if !t.exists {
		if !write {
			return nil, nil
		}
		if !w.s.autoCreate {
			return nil, &recordError{fmt.Errorf("Table %s is missing and auto-creation is disabled", id)}
		}
		sql, err := w.s.createTableSQL(t, sh)
		if err != nil {
			return nil, &recordError{fmt.Errorf("cannot create table %s: %w", id, err)}
		}
		w.log.Info("creating table", "table", id.String(), "sql", sql)
		if _, err := w.db.conn.Exec(ctx, sql); err != nil {
			// Another task may have created it: go on if it is there now.
			if t2, lerr := w.table(ctx, id, true); lerr != nil || !t2.exists {
				return nil, ddlError("create table "+id.String(), err)
			}
		}
		if t, err = w.table(ctx, id, true); err != nil {
			return nil, err
		}
	}
	if !w.s.allowsKind(t.kind) {
		return nil, &recordError{fmt.Errorf("%s is a %s, which table.types does not include", id, kindName(t.kind))}
	}
	if !write {
		for _, k := range sh.keys {
			if t.find(w.s, k.name) == nil {
				return nil, &recordError{fmt.Errorf("table %s has no column for key field %s", id, k.name)}
			}
		}
		return t, nil
	}
	missing := w.s.missingFields(t, sh)
	if len(missing) == 0 {
		return t, nil
	}
	if t, err = w.table(ctx, id, true); err != nil {
		return nil, err
	}
	if missing = w.s.missingFields(t, sh); len(missing) == 0 {
		return t, nil
	}
	if t.kind != 'r' && t.kind != 'p' {
		return nil, &recordError{fmt.Errorf("%s %s is missing fields (%s) and ALTER %s is unsupported", kindName(t.kind), id, fieldNames(missing), kindName(t.kind))}
	}
	for _, f := range missing {
		if !f.optional() && f.schema.Default == nil {
			return nil, &recordError{fmt.Errorf("Cannot ALTER TABLE %s to add missing field %s, as the field is not optional and does not have a default value", id, f.name)}
		}
	}
	if !w.s.autoEvolve {
		return nil, &recordError{fmt.Errorf("Table %s is missing fields (%s) and auto-evolution is disabled", id, fieldNames(missing))}
	}
	sql, err := w.s.alterTableSQL(t, missing)
	if err != nil {
		return nil, &recordError{fmt.Errorf("cannot alter table %s: %w", id, err)}
	}
	w.log.Info("adding columns", "table", id.String(), "fields", fieldNames(missing), "sql", sql)
	if _, err := w.db.conn.Exec(ctx, sql); err != nil {
		return nil, ddlError("alter table "+id.String(), err)
	}
	if t, err = w.table(ctx, id, true); err != nil {
		return nil, err
	}
	if missing = w.s.missingFields(t, sh); len(missing) > 0 {
		return nil, &recordError{fmt.Errorf("table %s still lacks columns for fields %s after ALTER TABLE", id, fieldNames(missing))}
	}
	return t, nil
}

// ddlError: a refused statement is the records' problem (reported), a
// lost connection is retried.
func ddlError(what string, err error) error {
	err = fmt.Errorf("%s: %w", what, err)
	if isServerError(err) && !transient(err) {
		return &recordError{err}
	}
	return err
}

// sqlFor fills in a plan's staging table name.
func sqlFor(s, staging string) string {
	if staging == "" {
		return s
	}
	return strings.ReplaceAll(s, stagingName, staging)
}
