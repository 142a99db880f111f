package cdc

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fjordhq/fjord/connect"
)

// decoder turns one non-NULL value in PostgreSQL's text output into its
// Connect value. Strings it returns may live in the row's arena.
type decoder func(b []byte, a *arena) (any, error)

// mapping is how one column (or array element) becomes a Connect field,
// as Debezium's PostgresValueConverter maps it.
type mapping struct {
	schema func() *connect.SchemaBuilder // the field schema before optionality and default
	dec    decoder
	// fallback is Debezium's converter fallback for a NULL in a NOT NULL
	// column (when the schema has no default).
	fallback any
	// toast is the unchanged-TOAST placeholder in this type's shape, or
	// toastErr when Debezium's converter fails on it (null then).
	toast    any
	toastErr error
	// def parses a column default expression into the schema default;
	// nil when Debezium has no default mapper for the type.
	def func(expr string) (any, bool)
	// bind, when set, receives the built field (or element) schema:
	// struct values (VariableScaleDecimal, Point) are made with it.
	bind func(s *connect.Schema)
	// defFromDecimal converts a numeric default as the decoder converts
	// a value.
	defFromDecimal func(d connect.Decimal) (any, error)
	// arena: the decoder keeps strings in the row's arena.
	arena bool
}

// fieldSchema builds the column's field schema: optional as the column,
// with the default Debezium derives. It also returns the value a NULL
// takes in a NOT NULL column.
func (m *mapping) fieldSchema(c *Column, o *typeOpts) (*connect.Schema, any, error) {
	b := m.schema()
	if c.Optional {
		b.Optional()
	}
	if c.Default != "" && m.def != nil {
		if v, ok := m.def(c.Default); ok && v != nil {
			b.Default(v)
		}
	}
	s, err := b.BuildE()
	if err != nil {
		// A default that does not fit the schema: Debezium logs it and
		// leaves the default out.
		b = m.schema()
		if c.Optional {
			b.Optional()
		}
		if s, err = b.BuildE(); err != nil {
			return nil, nil, err
		}
	}
	if m.bind != nil {
		m.bind(s)
	}
	fb := m.fallback
	if s.Default != nil {
		fb = s.Default
	}
	return s, fb, nil
}

// typeInfo is a column's type as Debezium resolves it: domains replaced by
// their root base type.
type typeInfo struct {
	name     string // root typname
	kind     byte
	elem     string // arrays: element typname
	elemKind byte
	enum     []string
	mod      int32
}

func resolveType(c *Column) typeInfo {
	t := typeInfo{name: c.TypeName, kind: c.TypeKind, elem: c.ElemName, elemKind: c.ElemKind, enum: c.EnumValues, mod: c.TypeMod}
	if t.kind == 'd' {
		t.name, t.kind = c.BaseName, 'b'
		if t.elem == "" && len(t.enum) > 0 {
			t.kind = 'e'
		}
	}
	if t.kind == 0 && t.elem == "" && len(t.enum) > 0 {
		t.kind = 'e'
	}
	return t
}

// mapColumn returns the column's mapping, or nil when Debezium leaves such
// columns out of its events.
func mapColumn(c *Column, o *typeOpts) (*mapping, error) {
	t := resolveType(c)
	if t.name == "" && t.elem == "" {
		if c.TypeKind == 'd' {
			return nil, fmt.Errorf("domain %q has no BaseName (its root base type)", c.TypeName)
		}
		return nil, fmt.Errorf("no type name")
	}
	if t.elem != "" {
		return mapArray(c, t, o)
	}
	var m *mapping
	if t.kind == 'e' {
		m = enumMapping(t.enum, o.placeholderStr)
	} else {
		m = mapScalar(t, o, false)
	}
	if m == nil && o.includeUnknown && c.TypeKind != 'd' {
		m = unknownMapping(o)
	}
	// Debezium looks default mappers up by the column's own type name,
	// so domains get none.
	if m != nil && c.Default != "" && c.TypeKind != 'd' {
		m.def = defaultParser(t, m, o)
	}
	return m, nil
}

// Debezium's logical type names.
const (
	dbzJSON           = "io.debezium.data.Json"
	dbzXML            = "io.debezium.data.Xml"
	dbzUUID           = "io.debezium.data.Uuid"
	dbzEnum           = "io.debezium.data.Enum"
	dbzBits           = "io.debezium.data.Bits"
	dbzVarDecimal     = "io.debezium.data.VariableScaleDecimal"
	dbzLtree          = "io.debezium.data.Ltree"
	dbzTsvector       = "io.debezium.data.Tsvector"
	dbzPoint          = "io.debezium.data.geometry.Point"
	dbzDate           = "io.debezium.time.Date"
	dbzTime           = "io.debezium.time.Time"
	dbzMicroTime      = "io.debezium.time.MicroTime"
	dbzNanoTime       = "io.debezium.time.NanoTime"
	dbzTimestamp      = "io.debezium.time.Timestamp"
	dbzMicroTimestamp = "io.debezium.time.MicroTimestamp"
	dbzNanoTimestamp  = "io.debezium.time.NanoTimestamp"
	dbzZonedTimestamp = "io.debezium.time.ZonedTimestamp"
	dbzZonedTime      = "io.debezium.time.ZonedTime"
	dbzMicroDuration  = "io.debezium.time.MicroDuration"
	dbzInterval       = "io.debezium.time.Interval"
	dbzIsoDate        = "io.debezium.time.IsoDate"
	dbzIsoTime        = "io.debezium.time.IsoTime"
	dbzIsoTimestamp   = "io.debezium.time.IsoTimestamp"
	decimalPrecision  = "connect.decimal.precision"
)

func plain(t connect.Type) func() *connect.SchemaBuilder {
	return func() *connect.SchemaBuilder { return connect.NewSchema(t) }
}

func named(t connect.Type, name string) func() *connect.SchemaBuilder {
	return func() *connect.SchemaBuilder { return connect.NewSchema(t).Name(name).Version(1) }
}

// Variable-length numeric (no precision) is "precision" 131089 in
// pgjdbc's terms, the display size it reports for it.
const variableScaleLength = 131089

// numericMod splits a numeric type modifier as pgjdbc does (length =
// precision, or the display size when there is none).
func numericMod(mod int32) (length, scale int32) {
	if mod == -1 {
		return variableScaleLength, 0
	}
	return int32(uint32((mod-4))&0xFFFF0000) >> 16, (mod - 4) & 0xFFFF
}

// timeScale is the fractional-seconds precision pgjdbc reports for a
// time/timestamp modifier (6 when none).
func timeScale(mod int32) int32 {
	if mod == -1 {
		return 6
	}
	return mod
}

// bitLength is the length pgjdbc reports for bit/varbit (unbounded
// varbit: Integer.MAX_VALUE, its unknownLength).
func bitLength(name string, mod int32) int32 {
	if name == "varbit" && mod == -1 {
		return 2147483647
	}
	return mod
}

// mapScalar maps a base type by name; elem is set when mapping an array's
// elements, where Debezium reads values through pgjdbc's array parsing
// (some types lose precision there).
func mapScalar(t typeInfo, o *typeOpts, elem bool) *mapping {
	ph := o.placeholderStr
	str := func(schema func() *connect.SchemaBuilder) *mapping {
		return &mapping{schema: schema, dec: decString, fallback: "", toast: ph, arena: true}
	}
	switch t.name {
	case "bool":
		return &mapping{schema: plain(connect.Boolean), dec: decBool, fallback: false, toastErr: errToastType}
	case "int2":
		return &mapping{schema: plain(connect.Int16), dec: decInt16, fallback: int16(0), toastErr: errToastType}
	case "int4":
		return &mapping{schema: plain(connect.Int32), dec: decInt32, fallback: int32(0), toastErr: errToastType}
	case "int8", "oid":
		return &mapping{schema: plain(connect.Int64), dec: decInt64, fallback: int64(0), toastErr: errToastType}
	case "float4":
		return &mapping{schema: plain(connect.Float32), dec: decFloat32, fallback: float32(0), toastErr: errToastType}
	case "float8":
		return &mapping{schema: plain(connect.Float64), dec: decFloat64, fallback: float64(0), toastErr: errToastType}
	case "numeric":
		return numericMapping(t.mod, o, elem)
	case "money":
		return moneyMapping(o)
	case "text", "varchar", "bpchar", "char", "name", "citext", "isbn",
		"inet", "cidr", "macaddr", "macaddr8",
		"int4range", "int8range", "numrange", "tsrange", "tstzrange", "daterange":
		return str(plain(connect.String))
	case "json", "jsonb":
		return str(named(connect.String, dbzJSON))
	case "xml":
		return str(named(connect.String, dbzXML))
	case "uuid":
		return str(named(connect.String, dbzUUID))
	case "ltree":
		return str(named(connect.String, dbzLtree))
	case "tsvector":
		return str(named(connect.String, dbzTsvector))
	case "bytea":
		return byteaMapping(o)
	case "bit", "varbit":
		return bitsMapping(t.name, bitLength(t.name, t.mod), o)
	case "date":
		return dateMapping(o)
	case "time":
		return timeMapping(timeScale(t.mod), o, elem)
	case "timetz":
		return timetzMapping(o, elem)
	case "timestamp":
		return timestampMapping(timeScale(t.mod), o)
	case "timestamptz":
		return timestamptzMapping(timeScale(t.mod), o)
	case "interval":
		return intervalMapping(o)
	case "point":
		return pointMapping()
	case "hstore":
		return hstoreMapping(o)
	case "vector", "halfvec":
		return vectorMapping(t.name == "halfvec")
	case "sparsevec":
		return sparseVectorMapping()
	}
	return nil
}

// errToastType: the type is never TOASTed in practice; if it were,
// Debezium's converter would get its placeholder string for a non-string
// schema and leave the value null.
var errToastType = convFailure("an unchanged TOASTed value has no placeholder for this type")

func enumMapping(values []string, placeholder string) *mapping {
	allowed := strings.Join(values, ",")
	return &mapping{
		schema: func() *connect.SchemaBuilder {
			return connect.NewSchema(connect.String).Name(dbzEnum).Version(1).Parameter("allowed", allowed)
		},
		dec: decString, fallback: "", arena: true, toast: placeholder,
	}
}

// unknownMapping is include.unknown.datatypes: the value's text as
// binary.
func unknownMapping(o *typeOpts) *mapping {
	m := byteaMapping(o)
	m.dec = binaryDecoder(o.binary, func(b []byte) ([]byte, error) { return append([]byte(nil), b...), nil })
	return m
}

// Text, booleans, integers and floating point.

func decString(b []byte, a *arena) (any, error) { return a.str(b), nil }

func decBool(b []byte, _ *arena) (any, error) {
	// pgoutput's asBoolean: "t" (any case) is true, anything else false.
	return len(b) == 1 && (b[0] == 't' || b[0] == 'T'), nil
}

func decInt16(b []byte, _ *arena) (any, error) {
	n, err := parseInt(b, 32) // Integer.valueOf, then Number.shortValue
	if err != nil {
		return nil, err
	}
	return int16(n), nil
}

func decInt32(b []byte, _ *arena) (any, error) {
	n, err := parseInt(b, 32)
	if err != nil {
		return nil, err
	}
	return int32(n), nil
}

func decInt64(b []byte, _ *arena) (any, error) {
	n, err := parseInt(b, 64)
	if err != nil {
		return nil, err
	}
	return n, nil
}

// parseInt parses decimal digits with an optional sign without
// allocating.
func parseInt(b []byte, bits int) (int64, error) {
	if len(b) == 0 || len(b) > 20 {
		return 0, errSyntax
	}
	neg := false
	i := 0
	switch b[0] {
	case '-':
		neg, i = true, 1
	case '+':
		i = 1
	}
	if i == len(b) {
		return 0, errSyntax
	}
	var u uint64
	for ; i < len(b); i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return 0, errSyntax
		}
		if u > (1<<63)/10 {
			return 0, errSyntax
		}
		u = u*10 + uint64(c-'0')
	}
	limit := uint64(1) << (bits - 1)
	if (!neg && u >= limit) || (neg && u > limit) {
		return 0, errSyntax
	}
	if neg {
		return -int64(u), nil
	}
	return int64(u), nil
}

func decFloat32(b []byte, _ *arena) (any, error) {
	f, err := parseFloat(b, 32)
	return float32(f), err
}

func decFloat64(b []byte, _ *arena) (any, error) {
	return parseFloat(b, 64)
}

// parseFloat reads float4/float8 output: digits, exponents, NaN and
// ±Infinity (Java's Float.valueOf/Double.valueOf accept them all).
func parseFloat(b []byte, bits int) (float64, error) {
	if len(b) == 0 {
		return 0, errSyntax
	}
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9', c == '.', c == '-', c == '+', c == 'e', c == 'E':
		case c == 'N' || c == 'a' || c == 'I' || c == 'n' || c == 'f' || c == 'i' || c == 't' || c == 'y':
		default:
			return 0, errSyntax
		}
	}
	f, err := strconv.ParseFloat(string(b), bits)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return f, nil // ±Inf or 0, as Java rounds out-of-range literals
		}
		return 0, errSyntax
	}
	return f, nil
}
