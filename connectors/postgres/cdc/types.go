package cdc

import (
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/fjordhq/fjord/connect"
)

// Column is one column of a captured table (from pg_attribute/pg_type and
// pgoutput Relation messages).
//
// Domains: TypeKind is 'd', TypeName the domain's name and BaseName the
// typname of the domain's root base type (following domains over
// domains); TypeMod is the effective type modifier (atttypmod, or when it
// is -1 the first typtypmod other than -1 up the domain chain, which is
// where a domain such as "CREATE DOMAIN price AS numeric(10,2)" keeps its
// precision). A domain over an enum carries the enum's EnumValues, one
// over an array the array's ElemName and ElemKind. That is how Debezium
// maps domains: as their root type, with the domain's modifiers.
type Column struct {
	Name       string
	TypeOID    uint32   // pg_type oid (for arrays the array type's oid)
	TypeName   string   // pg_type.typname: "int4", "numeric", "varchar", "bpchar", "timestamptz", "_int4", "mood" (an enum), a domain's name
	TypeKind   byte     // pg_type.typtype: 'b' base, 'e' enum, 'd' domain, 'c' composite, 'r' range
	BaseName   string   // domains: typname of the root base type ("" otherwise)
	ElemName   string   // arrays: element typname ("" otherwise)
	ElemKind   byte     // arrays: element typtype
	EnumValues []string // enums and arrays of enums: labels in enumsortorder
	TypeMod    int32    // atttypmod, -1 when none (gives varchar length, numeric precision/scale, time precision)
	Optional   bool     // !attnotnull
	Default    string   // pg_get_expr(adbin) of the default, "" when none
}

// Table is one captured table.
type Table struct {
	Schema, Name string
	Columns      []Column
	Key          []string // primary key columns in key order; empty = no key (key schema nil, record key null)
}

// TypeOptions are the connector's type-handling settings, with Debezium's
// names; "" (or zero) means Debezium's default.
type TypeOptions struct {
	DecimalMode       string // decimal.handling.mode: precise (default) | double | string
	TimePrecisionMode string // time.precision.mode: adaptive (default) | adaptive_time_microseconds | connect | microseconds | nanoseconds | isostring
	BinaryMode        string // binary.handling.mode: bytes (default) | base64 | base64-url-safe | hex
	IntervalMode      string // interval.handling.mode: numeric (default) | string
	HStoreMode        string // hstore.handling.mode: json (default) | map
	// MoneyFractionDigits is money.fraction.digits: the scale of money
	// values in precise mode. 0 means Debezium's default, 2, unless
	// MoneyFractionDigitsSet says the 0 was configured.
	MoneyFractionDigits    int
	MoneyFractionDigitsSet bool
	// UnavailablePlaceholder is unavailable.value.placeholder (default
	// "__debezium_unavailable_value"; "hex:<hex>" gives raw bytes), what
	// unchanged TOASTed values are replaced with.
	UnavailablePlaceholder string
	// IncludeUnknownDatatypes is include.unknown.datatypes: columns of
	// types Debezium has no mapping for are left out of the events
	// (false, the default) or carried as their text in binary mode.
	IncludeUnknownDatatypes bool
	// FailureMode is event.converting.failure.handling.mode: what to do
	// when a value cannot be converted to its column's schema (a NaN
	// numeric in precise mode, an enum array holding NULL, ...): warn
	// (default: the value is null and OnConversionFailure is told), skip
	// (null, silently) or fail (Row returns the error).
	FailureMode string
	// OnConversionFailure, when set, is called in warn mode for each
	// value replaced by null (the connector logs it).
	OnConversionFailure func(t *Table, column string, err error)
}

// Debezium's option values.
const (
	DecimalPrecise = "precise"
	DecimalDouble  = "double"
	DecimalString  = "string"

	TimeAdaptive         = "adaptive"
	TimeAdaptiveMicros   = "adaptive_time_microseconds"
	TimeConnect          = "connect"
	TimeMicroseconds     = "microseconds"
	TimeNanoseconds      = "nanoseconds"
	TimeIsoString        = "isostring"
	BinaryBytes          = "bytes"
	BinaryBase64         = "base64"
	BinaryBase64URLSafe  = "base64-url-safe"
	BinaryHex            = "hex"
	IntervalNumeric      = "numeric"
	IntervalString       = "string"
	HStoreJSON           = "json"
	HStoreMap            = "map"
	FailureWarn          = "warn"
	FailureSkip          = "skip"
	FailureFail          = "fail"
	DefaultUnavailable   = "__debezium_unavailable_value"
	defaultMoneyFraction = 2
)

// typeOpts are TypeOptions resolved and checked once per table shape.
type typeOpts struct {
	decimal, time, binary, interval, hstore, failure string
	moneyScale                                       int32
	placeholder                                      []byte
	placeholderStr                                   string
	includeUnknown                                   bool
	onFailure                                        func(*Table, string, error)
}

func resolveOptions(o TypeOptions) (*typeOpts, error) {
	r := &typeOpts{includeUnknown: o.IncludeUnknownDatatypes, onFailure: o.OnConversionFailure}
	var err error
	pick := func(name, v, def string, allowed ...string) string {
		// Debezium parses its enums trimmed and case-insensitively.
		v = strings.ToLower(strings.TrimSpace(v))
		if v == "" {
			return def
		}
		for _, a := range allowed {
			if v == a {
				return v
			}
		}
		if err == nil {
			err = fmt.Errorf("invalid %s %q: expected one of %s", name, v, strings.Join(allowed, ", "))
		}
		return def
	}
	r.decimal = pick("decimal.handling.mode", o.DecimalMode, DecimalPrecise, DecimalPrecise, DecimalDouble, DecimalString)
	r.time = pick("time.precision.mode", o.TimePrecisionMode, TimeAdaptive, TimeAdaptive, TimeAdaptiveMicros, TimeConnect,
		TimeMicroseconds, TimeNanoseconds, TimeIsoString)
	r.binary = pick("binary.handling.mode", o.BinaryMode, BinaryBytes, BinaryBytes, BinaryBase64, BinaryBase64URLSafe, BinaryHex)
	r.interval = pick("interval.handling.mode", o.IntervalMode, IntervalNumeric, IntervalNumeric, IntervalString)
	r.hstore = pick("hstore.handling.mode", o.HStoreMode, HStoreJSON, HStoreJSON, HStoreMap)
	r.failure = pick("event.converting.failure.handling.mode", o.FailureMode, FailureWarn, FailureWarn, FailureSkip, FailureFail)
	if err != nil {
		return nil, err
	}
	r.moneyScale = defaultMoneyFraction
	if o.MoneyFractionDigits != 0 || o.MoneyFractionDigitsSet {
		if o.MoneyFractionDigits < 0 || o.MoneyFractionDigits > 1000 {
			return nil, fmt.Errorf("invalid money.fraction.digits %d", o.MoneyFractionDigits)
		}
		r.moneyScale = int32(o.MoneyFractionDigits)
	}
	ph := o.UnavailablePlaceholder
	if ph == "" {
		ph = DefaultUnavailable
	}
	if h, ok := strings.CutPrefix(ph, "hex:"); ok {
		b, err := decodeHex([]byte(h))
		if err != nil {
			return nil, fmt.Errorf("invalid unavailable.value.placeholder %q: %v", ph, err)
		}
		r.placeholder = b
	} else {
		r.placeholder = []byte(ph)
	}
	r.placeholderStr = string(r.placeholder)
	return r, nil
}

// TableSchemas is one table's Debezium schemas and value decoders, built
// once per table shape. It is safe for concurrent use.
type TableSchemas struct {
	Table *Table
	Key   *connect.Schema // <topic>.Key (nil when Table.Key is empty)
	Value *connect.Schema // <topic>.Value, an optional struct
	// EnvelopeSchema is <topic>.Envelope, the schema of the values
	// Envelope builds (a field cannot share the method's name in Go).
	EnvelopeSchema *connect.Schema

	cols    []columnCodec // one per Table.Columns entry
	keyFrom []int         // value field index of each key field
	opts    *typeOpts
	boxes   atomic.Pointer[boxedSource]
}

// columnCodec turns one column's text into its Connect value.
type columnCodec struct {
	col   *Column
	field *connect.Field // nil: the column is left out, as Debezium does for unmapped types
	dec   decoder
	// fallback is the value of a NULL in a NOT NULL column (a DELETE's
	// old row under REPLICA IDENTITY DEFAULT carries only the key):
	// Debezium puts the schema default or its converter's fallback.
	fallback any
	// toast is the value of an unchanged TOASTed column; toastErr is set
	// instead when Debezium's converter cannot give one (the value is
	// then null, as Debezium leaves it).
	toast    any
	toastErr error
	arena    bool // the decoder keeps strings in the row's arena
}

// NewTableSchemas builds the schemas and decoders of t, whose events go to
// the topic <topicPrefix>.<schema>.<table> (sanitized as Debezium does).
func NewTableSchemas(topicPrefix string, t *Table, opts TypeOptions) (*TableSchemas, error) {
	o, err := resolveOptions(opts)
	if err != nil {
		return nil, err
	}
	topic := DataChangeTopic(topicPrefix, t.Schema, t.Name)
	ts := &TableSchemas{Table: t, opts: o, cols: make([]columnCodec, len(t.Columns))}
	vb := connect.NewStruct().Name(topic + ".Value").Optional()
	seen := make(map[string]int, len(t.Columns))
	nfields := 0
	for i := range t.Columns {
		c := &t.Columns[i]
		if _, dup := seen[c.Name]; dup {
			return nil, fmt.Errorf("column %q appears twice", c.Name)
		}
		seen[c.Name] = -1
		m, err := mapColumn(c, o)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", c.Name, err)
		}
		if m == nil {
			continue // no mapping: Debezium leaves the column out
		}
		fs, fallback, err := m.fieldSchema(c, o)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", c.Name, err)
		}
		seen[c.Name] = nfields
		nfields++
		vb.Field(c.Name, fs)
		ts.cols[i] = columnCodec{col: c, dec: m.dec, fallback: fallback, toast: m.toast, toastErr: m.toastErr, arena: m.arena}
	}
	if ts.Value, err = vb.BuildE(); err != nil {
		return nil, err
	}
	for i := range ts.cols {
		if ts.cols[i].col != nil {
			ts.cols[i].field = ts.Value.Field(ts.cols[i].col.Name)
		}
	}
	if len(t.Key) > 0 {
		kb := connect.NewStruct().Name(topic + ".Key")
		for _, k := range t.Key {
			idx, ok := seen[k]
			if !ok {
				return nil, fmt.Errorf("key column %q is not a column of %s.%s", k, t.Schema, t.Name)
			}
			if idx < 0 {
				return nil, fmt.Errorf("key column %q has a type Debezium cannot map", k)
			}
			f := &ts.Value.Fields[idx]
			kb.Field(f.Name, f.Schema)
			ts.keyFrom = append(ts.keyFrom, idx)
		}
		if ts.Key, err = kb.BuildE(); err != nil {
			return nil, err
		}
	}
	ts.EnvelopeSchema = envelopeSchema(topic, ts.Value)
	return ts, nil
}

// Row decodes one row given in PostgreSQL's text output format,
// values[i] for Table.Columns[i]: nil is SQL NULL; toasted[i] marks an
// unchanged TOASTed value (pgoutput's 'u'), which becomes Debezium's
// placeholder in the column type's shape. toasted may be nil. The values
// are copied: the caller may reuse their buffers.
func (ts *TableSchemas) Row(values [][]byte, toasted []bool) (*connect.Struct, error) {
	if len(values) != len(ts.cols) || (toasted != nil && len(toasted) != len(values)) {
		return nil, fmt.Errorf("row has %d values (%d TOAST flags), table %s.%s has %d columns", len(values), len(toasted),
			ts.Table.Schema, ts.Table.Name, len(ts.cols))
	}
	st := connect.NewStructValue(ts.Value)
	var a arena
	n := 0
	for i := range ts.cols {
		if ts.cols[i].arena && values[i] != nil {
			n += len(values[i]) + zoneSlack
		}
	}
	a.reserve(n)
	for i := range ts.cols {
		c := &ts.cols[i]
		if c.field == nil {
			continue
		}
		var v any
		var err error
		switch {
		case toasted != nil && toasted[i]:
			v, err = c.toast, c.toastErr
		case values[i] == nil:
			if !c.col.Optional {
				v = c.fallback
			}
		default:
			v, err = c.dec(values[i], &a)
		}
		if err != nil {
			if v, err = ts.failed(c, values[i], err); err != nil {
				return nil, err
			}
		}
		st.PutFieldUnchecked(c.field, v)
	}
	return st, nil
}

// failed applies event.converting.failure.handling.mode to a value that
// could not be converted. Malformed text (which PostgreSQL never sends)
// is always an error: emitting null for it would lose data silently.
func (ts *TableSchemas) failed(c *columnCodec, raw []byte, err error) (any, error) {
	cf, ok := err.(*conversionError)
	if !ok || ts.opts.failure == FailureFail {
		if raw != nil {
			return nil, fmt.Errorf("column %q (%s): cannot decode %q: %w", c.col.Name, c.col.TypeName, clipText(raw), err)
		}
		return nil, fmt.Errorf("column %q (%s): %w", c.col.Name, c.col.TypeName, err)
	}
	if ts.opts.failure == FailureWarn && ts.opts.onFailure != nil {
		ts.opts.onFailure(ts.Table, c.col.Name, cf)
	}
	return nil, nil
}

func clipText(b []byte) string {
	if len(b) > 64 {
		return string(b[:64]) + "..."
	}
	return string(b)
}

// KeyOf extracts the key struct from a value row (nil when the table has
// no key or row is nil).
func (ts *TableSchemas) KeyOf(row *connect.Struct) (*connect.Struct, error) {
	if ts.Key == nil || row == nil {
		return nil, nil
	}
	if row.Schema() != ts.Value {
		return nil, fmt.Errorf("row of schema %s is not a row of %s", row.Schema().Name, ts.Value.Name)
	}
	k := connect.NewStructValue(ts.Key)
	for i, idx := range ts.keyFrom {
		k.PutFieldUnchecked(&ts.Key.Fields[i], row.GetFieldWithoutDefault(&ts.Value.Fields[idx]))
	}
	return k, nil
}

// conversionError is a value Debezium's converters reject (its
// event.converting.failure.handling.mode then decides).
type conversionError struct{ msg string }

func (e *conversionError) Error() string { return e.msg }

func convFailure(format string, args ...any) error {
	return &conversionError{msg: fmt.Sprintf(format, args...)}
}
