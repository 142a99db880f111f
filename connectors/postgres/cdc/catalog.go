package cdc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fjordhq/fjord/connect"
)

// sessionParams are set on every connection, snapshot and replication,
// so values arrive in the one text format the decoders read.
var sessionParams = map[string]string{
	"DateStyle":          "ISO",
	"TimeZone":           "UTC",
	"IntervalStyle":      "postgres",
	"extra_float_digits": "3",
	"lc_monetary":        "C", // money as $1,234.56 whatever the server's locale
	"bytea_output":       "hex",
	"application_name":   "fjord-postgres-cdc",
}

// connConfig builds the connection config of s; replication adds
// replication=database (the walsender protocol).
func (s *settings) connConfig(replication bool) (*pgx.ConnConfig, error) {
	dsn := fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=%s connect_timeout=10",
		quoteDSN(s.host), s.port, quoteDSN(s.user), quoteDSN(s.db), s.sslMode)
	if s.password != "" {
		dsn += " password=" + quoteDSN(s.password)
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	for k, v := range sessionParams {
		cfg.RuntimeParams[k] = v
	}
	if replication {
		cfg.RuntimeParams["replication"] = "database"
		// The walsender speaks the simple query protocol only.
		cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	}
	return cfg, nil
}

func quoteDSN(v string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
}

// connect opens a regular connection and runs database.initial.statements.
func (s *settings) connect(ctx context.Context) (*pgx.Conn, error) {
	cfg, err := s.connConfig(false)
	if err != nil {
		return nil, err
	}
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, s.explainConnectError(err)
	}
	for _, st := range s.initialStatements {
		if _, err := c.Exec(ctx, st); err != nil {
			c.Close(context.Background())
			return nil, fmt.Errorf("%s %q failed: %w", InitialStatementsConfig, st, err)
		}
	}
	return c, nil
}

// connectReplication opens a walsender connection.
func (s *settings) connectReplication(ctx context.Context) (*pgconn.PgConn, error) {
	cfg, err := s.connConfig(true)
	if err != nil {
		return nil, err
	}
	c, err := pgconn.ConnectConfig(ctx, &cfg.Config)
	if err != nil {
		return nil, s.explainConnectError(err)
	}
	return c, nil
}

// explainConnectError says what to fix.
func (s *settings) explainConnectError(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "28P01", "28000":
			return &wrapped{msg: fmt.Sprintf("cannot log in to PostgreSQL at %s:%d as %q: %s (SQLSTATE %s); check %s and %s",
				s.host, s.port, s.user, pgErr.Message, pgErr.Code, UserConfig, PasswordConfig), err: err}
		case "3D000":
			return fmt.Errorf("database %q does not exist on %s:%d; check %s", s.db, s.host, s.port, DBNameConfig)
		}
		return fmt.Errorf("cannot connect to PostgreSQL at %s:%d: %s (SQLSTATE %s)", s.host, s.port, pgErr.Message, pgErr.Code)
	}
	var netErr net.Error
	if errors.As(err, &netErr) || strings.Contains(err.Error(), "connect") {
		return fmt.Errorf("cannot reach PostgreSQL at %s:%d: %v; check %s and %s and that the server accepts TCP connections",
			s.host, s.port, err, HostnameConfig, PortConfig)
	}
	return fmt.Errorf("cannot connect to PostgreSQL at %s:%d: %w", s.host, s.port, err)
}

// wrapped is an error with its own message that still unwraps to the
// driver's error.
type wrapped struct {
	msg string
	err error
}

func (w *wrapped) Error() string { return w.msg }
func (w *wrapped) Unwrap() error { return w.err }

// isAuthError reports a failed login (wrong user or password).
func isAuthError(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "28P01" || pgErr.Code == "28000")
}

// pgType is one row of pg_type.
type pgType struct {
	name     string
	kind     byte
	elem     uint32 // arrays: element type
	base     uint32 // domains: base type
	typmod   int32  // domains: the modifier of the base type (numeric(10,2))
	category byte
}

// catalog caches type information of one database.
type catalog struct {
	types map[uint32]pgType
	enums map[uint32][]string
}

func loadCatalog(ctx context.Context, c *pgx.Conn) (*catalog, error) {
	cat := &catalog{types: map[uint32]pgType{}, enums: map[uint32][]string{}}
	rows, err := c.Query(ctx, `SELECT oid, typname, typtype, typelem, typbasetype, typtypmod, typcategory FROM pg_type`)
	if err != nil {
		return nil, fmt.Errorf("read pg_type: %w", err)
	}
	for rows.Next() {
		var oid, elem, base uint32
		var name, kind, cat_ string
		var typmod int32
		if err := rows.Scan(&oid, &name, &kind, &elem, &base, &typmod, &cat_); err != nil {
			rows.Close()
			return nil, err
		}
		t := pgType{name: name, elem: elem, base: base, typmod: typmod}
		if kind != "" {
			t.kind = kind[0]
		}
		if cat_ != "" {
			t.category = cat_[0]
		}
		cat.types[oid] = t
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read pg_type: %w", err)
	}
	rows, err = c.Query(ctx, `SELECT enumtypid, enumlabel FROM pg_enum ORDER BY enumtypid, enumsortorder`)
	if err != nil {
		return nil, fmt.Errorf("read pg_enum: %w", err)
	}
	for rows.Next() {
		var oid uint32
		var label string
		if err := rows.Scan(&oid, &label); err != nil {
			rows.Close()
			return nil, err
		}
		cat.enums[oid] = append(cat.enums[oid], label)
	}
	return cat, rows.Err()
}

// column fills a Column's type fields from the type oid; known reports
// whether the oid was in the cache (a type created after it was loaded
// is not).
func (cat *catalog) column(name string, oid uint32, mod int32) (Column, bool) {
	t, ok := cat.types[oid]
	col := Column{Name: name, TypeOID: oid, TypeName: t.name, TypeKind: t.kind, TypeMod: mod, Optional: true}
	if !ok {
		return col, false
	}
	switch {
	case t.kind == 'e':
		col.EnumValues = cat.enums[oid]
	case t.kind == 'd':
		// Debezium maps a domain as its root base type, with the first
		// modifier up the domain chain when the column has none.
		b, boid := t, oid
		for i := 0; b.kind == 'd' && i < 32; i++ {
			if col.TypeMod == -1 {
				col.TypeMod = b.typmod
			}
			boid = b.base
			b = cat.types[boid]
		}
		col.BaseName = b.name
		switch {
		case b.kind == 'e':
			col.EnumValues = cat.enums[boid]
		case b.elem != 0 && b.category == 'A':
			if e, ok := cat.types[b.elem]; ok {
				col.ElemName, col.ElemKind = e.name, e.kind
				if e.kind == 'e' {
					col.EnumValues = cat.enums[b.elem]
				}
			}
		}
	case t.elem != 0 && t.category == 'A':
		if e, ok := cat.types[t.elem]; ok {
			col.ElemName, col.ElemKind = e.name, e.kind
			if e.kind == 'e' {
				col.EnumValues = cat.enums[t.elem]
			}
		}
	}
	return col, true
}

// tableInfo is what the catalog says about a table now.
type tableInfo struct {
	oid          uint32
	schema, name string
	columns      []catalogColumn
	key          []string
	identity     byte // relreplident: d, n, f, i
}

type catalogColumn struct {
	name     string
	typeOID  uint32
	typeMod  int32
	optional bool
	def      string
}

// loadTable reads a table's columns, primary key and replica identity.
func loadTable(ctx context.Context, c *pgx.Conn, oid uint32) (*tableInfo, error) {
	ti := &tableInfo{oid: oid}
	var ident string
	err := c.QueryRow(ctx, `SELECT n.nspname, c.relname, c.relreplident FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = $1`, oid).
		Scan(&ti.schema, &ti.name, &ident)
	if err != nil {
		return nil, fmt.Errorf("look up table %d: %w", oid, err)
	}
	if ident != "" {
		ti.identity = ident[0]
	}
	rows, err := c.Query(ctx, `SELECT a.attname, a.atttypid, a.atttypmod, NOT a.attnotnull, COALESCE(pg_get_expr(d.adbin, d.adrelid), '')
		FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
		WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '' ORDER BY a.attnum`, oid)
	if err != nil {
		return nil, fmt.Errorf("read columns of %s.%s: %w", ti.schema, ti.name, err)
	}
	for rows.Next() {
		var cc catalogColumn
		if err := rows.Scan(&cc.name, &cc.typeOID, &cc.typeMod, &cc.optional, &cc.def); err != nil {
			rows.Close()
			return nil, err
		}
		ti.columns = append(ti.columns, cc)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = c.Query(ctx, `SELECT a.attname FROM pg_index i
		JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord) ON true
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
		WHERE i.indrelid = $1 AND i.indisprimary ORDER BY k.ord`, oid)
	if err != nil {
		return nil, fmt.Errorf("read the primary key of %s.%s: %w", ti.schema, ti.name, err)
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, err
		}
		ti.key = append(ti.key, n)
	}
	return ti, rows.Err()
}

// capturedTable is a table as the connector emits it: the columns kept
// after column filters, their schemas, and where each tuple position
// goes.
type capturedTable struct {
	oid     uint32
	schema  string
	name    string
	topic   string
	schemas *TableSchemas
	// pos[i] is the index in schemas.Table.Columns of the i-th column of
	// the source tuple (the relation's column order), -1 when filtered.
	pos      []int
	nkept    int
	identity byte
	// signal marks the signal table; hidden, that its changes are read
	// for signals only (the filters do not capture it).
	signal, hidden bool
	// scratch buffers for Row.
	vals    [][]byte
	toasted []bool
}

// relColumn is one column of a relation as pgoutput describes it.
type relColumn struct {
	name    string
	typeOID uint32
	typeMod int32
}

// newCapturedTable builds the emitted shape of a table whose tuples have
// the columns rel (in tuple order), enriched by what the catalog says
// (nullability, defaults, primary key).
func (t *Task) newCapturedTable(ti *tableInfo, rel []relColumn) (*capturedTable, error) {
	byName := map[string]catalogColumn{}
	for _, c := range ti.columns {
		byName[c.name] = c
	}
	tbl := &Table{Schema: ti.schema, Name: ti.name}
	ct := &capturedTable{oid: ti.oid, schema: ti.schema, name: ti.name, identity: ti.identity,
		topic: DataChangeTopic(t.s.prefix, ti.schema, ti.name)}
	kept := map[string]bool{}
	for _, rc := range rel {
		if !t.s.filters.includeColumn(ti.schema, ti.name, rc.name) {
			ct.pos = append(ct.pos, -1)
			continue
		}
		col, known := t.cat.column(rc.name, rc.typeOID, rc.typeMod)
		if !known {
			if err := t.reloadCatalog(); err != nil {
				return nil, err
			}
			col, _ = t.cat.column(rc.name, rc.typeOID, rc.typeMod)
		}
		// Nullability comes from the catalog as it is now, as Debezium reads
		// it; a default only when the column still has the streamed type.
		if cc, ok := byName[rc.name]; ok {
			col.Optional = cc.optional
			if cc.typeOID == rc.typeOID {
				col.Default = cc.def
			}
		}
		ct.pos = append(ct.pos, len(tbl.Columns))
		tbl.Columns = append(tbl.Columns, col)
		kept[rc.name] = true
	}
	for _, k := range ti.key {
		if kept[k] {
			tbl.Key = append(tbl.Key, k)
		}
	}
	if len(tbl.Key) != len(ti.key) {
		tbl.Key = nil // a filtered key column: no key, as Debezium
	}
	ts, err := NewTableSchemas(t.s.prefix, tbl, t.s.types)
	if err != nil {
		return nil, fmt.Errorf("table %s.%s: %w", ti.schema, ti.name, err)
	}
	ct.schemas = ts
	ct.nkept = len(tbl.Columns)
	ct.vals = make([][]byte, ct.nkept)
	ct.toasted = make([]bool, ct.nkept)
	return ct, nil
}

// row converts a tuple into the table's value struct.
func (ct *capturedTable) row(tp *tuple) (*connect.Struct, error) {
	if len(tp.values) != len(ct.pos) {
		return nil, fmt.Errorf("table %s.%s: tuple has %d columns, the relation %d", ct.schema, ct.name, len(tp.values), len(ct.pos))
	}
	for i := range ct.vals {
		ct.vals[i], ct.toasted[i] = nil, false
	}
	for i, p := range ct.pos {
		if p < 0 {
			continue
		}
		switch tp.kinds[i] {
		case tupleText:
			ct.vals[p] = tp.values[i]
		case tupleUnchanged:
			ct.toasted[p] = true
		case tupleBinary:
			return nil, fmt.Errorf("table %s.%s: binary tuple values are not supported", ct.schema, ct.name)
		}
	}
	st, err := ct.schemas.Row(ct.vals, ct.toasted)
	if err != nil {
		return nil, fmt.Errorf("table %s.%s: %w", ct.schema, ct.name, err)
	}
	return st, nil
}

func lsnString(l uint64) string {
	return strconv.FormatUint(l>>32, 16) + "/" + strconv.FormatUint(l&0xffffffff, 16)
}
