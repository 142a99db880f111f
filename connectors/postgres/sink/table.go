package sink

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// maxIdentifierLength is PostgreSQL's NAMEDATALEN-1: longer table names
// are truncated (as the server would, and as Confluent's dialect does), so
// the sink finds the table it created.
const maxIdentifierLength = 63

// tableID names a destination table; schema "" means the connection's
// current schema.
type tableID struct {
	catalog, schema, name string
}

func (id tableID) String() string {
	parts := []string{id.name}
	if id.schema != "" {
		parts = append([]string{id.schema}, parts...)
	}
	if id.catalog != "" {
		parts = append([]string{id.catalog}, parts...)
	}
	return `"` + strings.Join(parts, `"."`) + `"`
}

// tableFor applies table.name.format to a topic; dots separate a schema
// (and catalog) name, double quotes keep a dot in a name.
func (s *settings) tableFor(topic string) (tableID, error) {
	name := strings.ReplaceAll(s.tableFormat, "${topic}", topic)
	if strings.TrimSpace(name) == "" {
		return tableID{}, fmt.Errorf("Destination table name for topic '%s' is empty using the format string '%s'", topic, s.tableFormat)
	}
	parts, err := splitIdentifier(name)
	if err != nil {
		return tableID{}, fmt.Errorf("table name %q (from table.name.format %q and topic %q): %w", name, s.tableFormat, topic, err)
	}
	var id tableID
	switch len(parts) {
	case 1:
		id.name = parts[0]
	case 2:
		id.schema, id.name = parts[0], parts[1]
	case 3:
		id.catalog, id.schema, id.name = parts[0], parts[1], parts[2]
	default:
		return tableID{}, fmt.Errorf("table name %q has more than three dot-separated parts", name)
	}
	if len(id.name) > maxIdentifierLength {
		id.name = truncateUTF8(id.name, maxIdentifierLength)
	}
	if !s.quote {
		id.name = strings.ToLower(id.name)
	}
	return id, nil
}

func splitIdentifier(s string) ([]string, error) {
	var parts []string
	var cur strings.Builder
	quoted, inQuotes := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inQuotes && c == '"' && i+1 < len(s) && s[i+1] == '"':
			cur.WriteByte('"')
			i++
		case c == '"':
			inQuotes, quoted = !inQuotes, true
		case c == '.' && !inQuotes:
			if cur.Len() == 0 && !quoted {
				return nil, errors.New("empty name part")
			}
			parts = append(parts, cur.String())
			cur.Reset()
			quoted = false
		default:
			cur.WriteByte(c)
		}
	}
	if inQuotes {
		return nil, errors.New("unterminated quote")
	}
	if cur.Len() == 0 && !quoted {
		return nil, errors.New("empty name part")
	}
	return append(parts, cur.String()), nil
}

func truncateUTF8(s string, n int) string {
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// ident writes an identifier as quote.sql.identifiers says.
func (s *settings) ident(name string) string {
	if !s.quote {
		return name
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// qualified writes a table name with its (resolved) schema.
func (s *settings) qualified(t *table) string {
	q := s.ident(t.schema) + "." + s.ident(t.id.name)
	if t.id.catalog != "" {
		q = s.ident(t.id.catalog) + "." + q
	}
	return q
}

// table is what the sink knows of a destination table.
type table struct {
	id     tableID
	schema string // resolved schema name
	exists bool
	kind   byte // pg_class.relkind
	cols   []*column
	byName map[string]*column
	byFold map[string]*column // lower-case names, for Confluent's case-insensitive match
}

// column is an existing column.
type column struct {
	name      string
	typ       string // format_type
	cat       byte   // pg_type.typcategory
	notNull   bool
	generated bool
}

// find returns the column for a field: the exact name (the folded name
// when identifiers are not quoted), else a name differing only in case.
func (t *table) find(s *settings, name string) *column {
	if !s.quote {
		name = strings.ToLower(name)
	}
	if c := t.byName[name]; c != nil {
		return c
	}
	return t.byFold[strings.ToLower(name)]
}

func kindName(k byte) string {
	switch k {
	case 'r':
		return "TABLE"
	case 'p':
		return "PARTITIONED TABLE"
	case 'v':
		return "VIEW"
	case 'm':
		return "MATERIALIZED VIEW"
	case 'f':
		return "FOREIGN TABLE"
	}
	return fmt.Sprintf("relation of kind %q", k)
}

// loadTable reads a table's columns from the catalog.
func loadTable(ctx context.Context, conn *pgx.Conn, id tableID, defaultSchema string) (*table, error) {
	t := &table{id: id, schema: id.schema}
	if t.schema == "" {
		t.schema = defaultSchema
	}
	var oid uint32
	var kind string
	err := conn.QueryRow(ctx, `SELECT c.oid, c.relkind::text FROM pg_catalog.pg_class c
		JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2`,
		t.schema, id.name).Scan(&oid, &kind)
	if errors.Is(err, pgx.ErrNoRows) {
		return t, nil
	}
	if err != nil {
		return nil, fmt.Errorf("look up table %s: %w", id, err)
	}
	t.exists, t.kind = true, kind[0]
	rows, err := conn.Query(ctx, `SELECT a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod),
		COALESCE(bt.typcategory, ty.typcategory)::text, a.attnotnull, a.attgenerated <> ''
		FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_type ty ON ty.oid = a.atttypid
		LEFT JOIN pg_catalog.pg_type bt ON ty.typtype = 'd' AND bt.oid = ty.typbasetype
		WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`, oid)
	if err != nil {
		return nil, fmt.Errorf("read columns of %s: %w", id, err)
	}
	defer rows.Close()
	t.byName, t.byFold = map[string]*column{}, map[string]*column{}
	for rows.Next() {
		c := &column{}
		var cat string
		if err := rows.Scan(&c.name, &c.typ, &cat, &c.notNull, &c.generated); err != nil {
			return nil, fmt.Errorf("read columns of %s: %w", id, err)
		}
		if cat != "" {
			c.cat = cat[0]
		}
		t.cols = append(t.cols, c)
		t.byName[c.name] = c
		if _, dup := t.byFold[strings.ToLower(c.name)]; !dup {
			t.byFold[strings.ToLower(c.name)] = c
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read columns of %s: %w", id, err)
	}
	return t, nil
}

// createTableSQL is Confluent's CREATE TABLE for a shape.
func (s *settings) createTableSQL(t *table, sh *shape) (string, error) {
	var b strings.Builder
	b.WriteString("CREATE TABLE " + s.qualified(t) + " (")
	for i := range sh.ordered {
		if i > 0 {
			b.WriteByte(',')
		}
		spec, err := s.columnSpec(&sh.ordered[i])
		if err != nil {
			return "", err
		}
		b.WriteString("\n" + spec)
	}
	if len(sh.keys) > 0 {
		b.WriteString(",\nPRIMARY KEY(")
		for i, k := range sh.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(s.ident(k.name))
		}
		b.WriteByte(')')
	}
	b.WriteByte(')')
	return b.String(), nil
}

// alterTableSQL adds missing columns (IF NOT EXISTS: another task may
// have added them meanwhile).
func (s *settings) alterTableSQL(t *table, missing []*field) (string, error) {
	var b strings.Builder
	b.WriteString("ALTER TABLE " + s.qualified(t))
	for i, f := range missing {
		if i > 0 {
			b.WriteByte(',')
		}
		spec, err := s.columnSpec(f)
		if err != nil {
			return "", err
		}
		b.WriteString("\nADD COLUMN IF NOT EXISTS " + spec)
	}
	return b.String(), nil
}

// columnSpec is Confluent's writeColumnSpec: a default, else NULL or NOT NULL.
func (s *settings) columnSpec(f *field) (string, error) {
	typ, err := s.columnType(f.name, f.schema)
	if err != nil {
		return "", err
	}
	spec := s.ident(f.name) + " " + typ.name
	switch {
	case f.schema.Default != nil:
		r, err := s.renderer(f.name, f.schema, typ.cat)
		if err != nil {
			return "", err
		}
		lit, err := sqlLiteral(r, f.schema.Default)
		if err != nil {
			return "", fmt.Errorf("default of field %s: %w", f.name, err)
		}
		spec += " DEFAULT " + lit
	case f.optional():
		spec += " NULL"
	default:
		spec += " NOT NULL"
	}
	return spec, nil
}

// missingFields are the shape's fields without a column.
func (s *settings) missingFields(t *table, sh *shape) []*field {
	var out []*field
	for i := range sh.ordered {
		if t.find(s, sh.ordered[i].name) == nil {
			out = append(out, &sh.ordered[i])
		}
	}
	return out
}

func fieldNames(fs []*field) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.name
	}
	return "[" + strings.Join(names, ", ") + "]"
}

func (s *settings) allowsKind(k byte) bool { return slices.Contains(s.tableKinds, k) }
