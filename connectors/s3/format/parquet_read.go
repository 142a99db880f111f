package format

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/big"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	pformat "github.com/parquet-go/parquet-go/format"

	"github.com/fjordhq/fjord/connect"
	avroconv "github.com/fjordhq/fjord/converters/avro"
	"github.com/fjordhq/fjord/converters/avro/avsc"
)

// Reading a Parquet file back. The Connect schema comes from the Avro
// schema parquet-avro (and this package) store under
// "parquet.avro.schema", so INT8, INT16, optional fields, logical types
// and names come back exactly; a file without it (or whose columns do
// not fit it) gets a schema derived from its Parquet types. Rows are
// reassembled from their repetition and definition levels, with the
// list rules of the Parquet spec's backward-compatibility section (two-
// and three-level lists, bare repeated fields) and MAP groups.

func (f *parquetFormat) NewReader(r io.ReaderAt, size int64) (rr RecordReader, err error) {
	if size == 0 {
		return emptyReader{}, nil
	}
	defer recoverCorrupt(&err)
	if err := checkParquetFrame(r, size); err != nil {
		return nil, err
	}
	pf, err := parquet.OpenFile(r, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, fmt.Errorf("reading Parquet: %w", err)
	}
	root := pf.Schema()
	var p *rplan
	if text, ok := pf.Lookup("parquet.avro.schema"); ok {
		if a, err := avsc.Parse(text); err == nil {
			if cs, err := avroconv.SchemaToConnect(a, f.s.connectMeta); err == nil && cs.Type == connect.StructType {
				p, _ = buildRead(root, cs)
			}
		}
	}
	if p == nil {
		if p, err = buildRead(root, nil); err != nil {
			return nil, err
		}
	}
	return &parquetReader{file: pf, plan: p, groups: pf.RowGroups()}, nil
}

type parquetReader struct {
	file   *parquet.File
	plan   *rplan
	groups []parquet.RowGroup
	rows   parquet.Rows
	buf    []parquet.Row
	n, i   int
	asm    assembler
}

// checkParquetFrame checks the magic at both ends and that the footer
// length fits in the file before parquet-go allocates it (it trusts the
// length, up to 4 GiB).
func checkParquetFrame(r io.ReaderAt, size int64) error {
	if size < 12 {
		return errors.New("not a Parquet file: too short")
	}
	var head, tail [8]byte
	if _, err := r.ReadAt(head[:4], 0); err != nil {
		return fmt.Errorf("reading Parquet: %w", err)
	}
	if n, err := r.ReadAt(tail[:], size-8); n != 8 {
		return fmt.Errorf("reading Parquet: %w", err)
	}
	if string(head[:4]) != "PAR1" || string(tail[4:]) != "PAR1" {
		return errors.New("not a Parquet file (no PAR1 magic; encrypted files are not read)")
	}
	if footer := int64(binary.LittleEndian.Uint32(tail[:4])); footer > size-12 {
		return fmt.Errorf("corrupt Parquet file: footer of %d bytes in a %d-byte file", footer, size)
	}
	return nil
}

// recoverCorrupt turns a panic of parquet-go on a corrupt file (it
// trusts offsets and lengths it reads) into an error: objects come from
// a bucket, not from a trusted writer.
func recoverCorrupt(err *error) {
	if p := recover(); p != nil {
		*err = fmt.Errorf("corrupt Parquet file: %v", p)
	}
}

func (r *parquetReader) Next() (s *connect.Schema, v any, err error) {
	defer recoverCorrupt(&err)
	for r.i >= r.n {
		if err := r.fill(); err != nil {
			return nil, nil, err
		}
	}
	row := r.buf[r.i]
	r.i++
	if v, err = r.asm.row(r.plan, row); err != nil {
		return nil, nil, err
	}
	return r.plan.cs, v, nil
}

// fill reads the next batch of rows, moving through the row groups.
func (r *parquetReader) fill() error {
	for {
		if r.rows == nil {
			if len(r.groups) == 0 {
				return io.EOF
			}
			r.rows = r.groups[0].Rows()
			r.groups = r.groups[1:]
		}
		if r.buf == nil {
			r.buf = make([]parquet.Row, 64)
		}
		n, err := r.rows.ReadRows(r.buf)
		if n > 0 {
			r.n, r.i = n, 0
			return nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		r.rows.Close()
		r.rows = nil
	}
}

// rplan is how one Parquet node becomes a Connect value.
type rplan struct {
	kind     planKind
	cs       *connect.Schema
	optional bool
	def, rep int
	first    int
	last     int

	col  int
	conv leafConv
	unit int64 // nanoseconds per unit of a time value

	fields []*rplan // struct: per Parquet child
	index  []int    // struct: the Connect field of each child, -1 for none
	elem   *rplan   // list element, map value (nil: none)
	key    *rplan   // map key; entries: the key/value group's key
	repDef int      // levels of the repeated node
	repRep int
}

type leafConv uint8

const (
	convInt32 leafConv = iota // INT32 to an int type, Date or Time
	convInt64                 // INT64 to INT64, Timestamp or Time
	convInt96
	convFloat32
	convFloat64
	convBool
	convString
	convBytes
	convDecimal
)

// buildRead makes the plan for the file's schema and a Connect struct
// schema, or derives the Connect schema when cs is nil.
func buildRead(root *parquet.Schema, cs *connect.Schema) (*rplan, error) {
	b := &rbuilder{}
	p, err := b.group(root, cs, 0, 0, false)
	if err != nil {
		return nil, err
	}
	if p.kind != kindStruct {
		return nil, errors.New("Parquet schema root is not a group")
	}
	return p, nil
}

type rbuilder struct{ col int }

var errMismatch = errors.New("Parquet column does not fit the Avro schema")

// node builds the plan of a field node. asElement: a repeated node that
// is a list's element (its repetition is the list's).
func (b *rbuilder) node(n parquet.Node, cs *connect.Schema, def, rep int, asElement bool) (*rplan, error) {
	if n.Repeated() && !asElement {
		// A bare repeated field: a list that is never null.
		p := &rplan{kind: kindList, def: def, rep: rep, repDef: def + 1, repRep: rep + 1, first: b.col}
		var elemCS *connect.Schema
		if cs != nil {
			if cs.Type != connect.Array {
				return nil, errMismatch
			}
			elemCS = cs.ValueSchema
		}
		e, err := b.node(n, elemCS, def, rep, true)
		if err != nil {
			return nil, err
		}
		p.elem, p.last = e, b.col
		if p.cs = cs; cs == nil {
			p.cs = connect.NewArray(e.cs).Build()
		}
		return p, nil
	}
	var r repetition
	switch {
	case n.Repeated():
		r = repeated
	case n.Optional():
		r = optional
	}
	d, rp := levels(def, rep, r)
	if n.Leaf() {
		return b.leaf(n, cs, d, rp, r == optional)
	}
	lt := n.Type().LogicalType()
	ct := n.Type().ConvertedType()
	switch {
	case lt != nil && isLogical[*pformat.ListType](lt), ct != nil && *ct == deprecated.List:
		return b.list(n, cs, d, rp, r == optional)
	case lt != nil && isLogical[*pformat.MapType](lt), ct != nil && (*ct == deprecated.Map || *ct == deprecated.MapKeyValue):
		return b.mapNode(n, cs, d, rp, r == optional)
	}
	return b.group(n, cs, d, rp, r == optional)
}

func isLogical[T any](lt *pformat.LogicalType) bool {
	_, ok := lt.Value.(T)
	return ok
}

// group is a struct, or Connect's union struct.
func (b *rbuilder) group(n parquet.Node, cs *connect.Schema, def, rep int, opt bool) (*rplan, error) {
	p := &rplan{kind: kindStruct, def: def, rep: rep, optional: opt, first: b.col}
	fields := n.Fields()
	if len(fields) == 0 {
		return nil, errors.New("Parquet group without fields")
	}
	if cs != nil && cs.Type != connect.StructType {
		return nil, errMismatch
	}
	union := cs != nil && cs.Name == unionName
	var sb *connect.SchemaBuilder
	if cs == nil {
		sb = connect.NewStruct()
	}
	for i, f := range fields {
		var fcs *connect.Schema
		idx := -1
		switch {
		case union:
			if i >= len(cs.Fields) {
				return nil, errMismatch
			}
			idx, fcs = i, cs.Fields[i].Schema
		case cs != nil:
			cf := cs.Field(f.Name())
			if cf == nil {
				return nil, errMismatch
			}
			idx, fcs = cf.Index, cf.Schema
		}
		fp, err := b.node(f, fcs, def, rep, false)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name(), err)
		}
		if cs == nil {
			idx = i
			sb.Field(f.Name(), fp.cs)
		}
		p.fields = append(p.fields, fp)
		p.index = append(p.index, idx)
	}
	p.last = b.col
	if cs == nil {
		if opt {
			sb.Optional()
		}
		var err error
		if cs, err = sb.BuildE(); err != nil {
			return nil, err
		}
	} else if len(p.fields) != len(cs.Fields) {
		return nil, errMismatch
	}
	p.cs = cs
	return p, nil
}

// list is a LIST group, read with the spec's backward-compatibility
// rules for which node is the element.
func (b *rbuilder) list(n parquet.Node, cs *connect.Schema, def, rep int, opt bool) (*rplan, error) {
	fields := n.Fields()
	if len(fields) != 1 || !fields[0].Repeated() {
		return nil, errors.New("LIST group without one repeated field")
	}
	rc := fields[0]
	p := &rplan{kind: kindList, def: def, rep: rep, optional: opt, repDef: def + 1, repRep: rep + 1, first: b.col}
	var elemNode parquet.Node = rc
	twoLevel := rc.Leaf() || len(rc.Fields()) > 1 || rc.Name() == "array" || rc.Name() == listName(n)+"_tuple"
	if cs != nil && cs.Type == connect.Map {
		// A map written as an array of key/value records.
		return b.entries(n, rc, twoLevel, cs, p)
	}
	var elemCS *connect.Schema
	if cs != nil {
		if cs.Type != connect.Array {
			return nil, errMismatch
		}
		elemCS = cs.ValueSchema
	}
	var e *rplan
	var err error
	if twoLevel {
		e, err = b.node(elemNode, elemCS, def, rep, true)
	} else {
		e, err = b.node(rc.Fields()[0], elemCS, p.repDef, p.repRep, false)
	}
	if err != nil {
		return nil, err
	}
	p.elem, p.last = e, b.col
	if p.cs = cs; cs == nil {
		ab := connect.NewArray(e.cs)
		if opt {
			ab.Optional()
		}
		p.cs = ab.Build()
	}
	return p, nil
}

// listName is a node's name, where parquet-go keeps it (fields only).
func listName(n parquet.Node) string {
	if f, ok := n.(parquet.Field); ok {
		return f.Name()
	}
	return ""
}

// entries reads an array of key/value groups into a Connect map.
func (b *rbuilder) entries(n, rc parquet.Node, twoLevel bool, cs *connect.Schema, p *rplan) (*rplan, error) {
	g := rc
	d, rp := p.repDef, p.repRep
	if !twoLevel {
		g = rc.Fields()[0]
		if g.Optional() {
			return nil, errMismatch
		}
	}
	if g.Leaf() {
		return nil, errMismatch
	}
	k, v := fieldNamed(g, "key"), fieldNamed(g, "value")
	if k == nil || v == nil || len(g.Fields()) != 2 {
		return nil, errMismatch
	}
	if g.Fields()[0].Name() != "key" {
		// The key column must come first, as AvroData's MapEntry has it.
		return nil, errMismatch
	}
	p.kind = kindEntries
	var err error
	if p.key, err = b.node(k, cs.KeySchema, d, rp, false); err != nil {
		return nil, err
	}
	if p.elem, err = b.node(v, cs.ValueSchema, d, rp, false); err != nil {
		return nil, err
	}
	p.last, p.cs = b.col, cs
	return p, nil
}

func fieldNamed(n parquet.Node, name string) parquet.Field {
	for _, f := range n.Fields() {
		if f.Name() == name {
			return f
		}
	}
	return nil
}

// mapNode is a MAP group: repeated key_value { key; value }.
func (b *rbuilder) mapNode(n parquet.Node, cs *connect.Schema, def, rep int, opt bool) (*rplan, error) {
	fields := n.Fields()
	if len(fields) != 1 || !fields[0].Repeated() || fields[0].Leaf() {
		return nil, errors.New("MAP group without one repeated key/value group")
	}
	kv := fields[0]
	kvf := kv.Fields()
	if len(kvf) == 0 || len(kvf) > 2 {
		return nil, errors.New("MAP key/value group without a key and a value")
	}
	if cs != nil && cs.Type != connect.Map {
		return nil, errMismatch
	}
	p := &rplan{kind: kindMap, def: def, rep: rep, optional: opt, repDef: def + 1, repRep: rep + 1, first: b.col}
	var kcs, vcs *connect.Schema
	if cs != nil {
		kcs, vcs = cs.KeySchema, cs.ValueSchema
	}
	var err error
	if p.key, err = b.node(kvf[0], kcs, p.repDef, p.repRep, false); err != nil {
		return nil, err
	}
	if p.key.kind != kindLeaf {
		return nil, errors.New("MAP keys must be primitive")
	}
	if len(kvf) == 2 {
		if p.elem, err = b.node(kvf[1], vcs, p.repDef, p.repRep, false); err != nil {
			return nil, err
		}
	} else if cs != nil {
		return nil, errMismatch
	}
	p.last = b.col
	if p.cs = cs; cs == nil {
		vs := connect.OptionalStringSchema
		if p.elem != nil {
			vs = p.elem.cs
		}
		mb := connect.NewMap(p.key.cs, vs)
		if opt {
			mb.Optional()
		}
		p.cs = mb.Build()
	}
	return p, nil
}

// leaf maps a Parquet column to a Connect primitive: cs's when given
// (and compatible), else the one its physical and logical types say.
func (b *rbuilder) leaf(n parquet.Node, cs *connect.Schema, def, rep int, opt bool) (*rplan, error) {
	p := &rplan{kind: kindLeaf, def: def, rep: rep, optional: opt, col: b.col, first: b.col}
	b.col++
	p.last = b.col
	t := n.Type()
	lt := t.LogicalType()
	ct := t.ConvertedType()
	var derived *connect.SchemaBuilder
	switch t.Kind() {
	case parquet.Boolean:
		p.conv, derived = convBool, connect.NewSchema(connect.Boolean)
	case parquet.Int32:
		p.conv, derived = convInt32, connect.NewSchema(connect.Int32)
		switch {
		case lt != nil && isLogical[*pformat.DateType](lt), ct != nil && *ct == deprecated.Date:
			derived = connect.DateSchema()
		case lt != nil && isLogical[*pformat.TimeType](lt), ct != nil && *ct == deprecated.TimeMillis:
			p.unit, derived = int64(time.Millisecond), connect.TimeSchema()
		case lt != nil && isLogical[*pformat.DecimalType](lt):
			p.conv, derived = convDecimal, connect.DecimalSchema(lt.Value.(*pformat.DecimalType).Scale)
		case lt != nil && isLogical[*pformat.IntType](lt):
			it := lt.Value.(*pformat.IntType)
			switch {
			case it.BitWidth == 8 && it.IsSigned:
				derived = connect.NewSchema(connect.Int8)
			case it.BitWidth == 16 && it.IsSigned:
				derived = connect.NewSchema(connect.Int16)
			case !it.IsSigned && it.BitWidth == 32:
				derived = connect.NewSchema(connect.Int64)
			}
		case ct != nil && *ct == deprecated.Int8:
			derived = connect.NewSchema(connect.Int8)
		case ct != nil && *ct == deprecated.Int16:
			derived = connect.NewSchema(connect.Int16)
		}
	case parquet.Int64:
		p.conv, derived = convInt64, connect.NewSchema(connect.Int64)
		switch {
		case lt != nil && isLogical[*pformat.TimestampType](lt):
			p.unit, derived = unitNanos(lt.Value.(*pformat.TimestampType).Unit), connect.TimestampSchema()
		case ct != nil && *ct == deprecated.TimestampMillis:
			p.unit, derived = int64(time.Millisecond), connect.TimestampSchema()
		case ct != nil && *ct == deprecated.TimestampMicros:
			p.unit, derived = int64(time.Microsecond), connect.TimestampSchema()
		case lt != nil && isLogical[*pformat.TimeType](lt):
			p.unit, derived = unitNanos(lt.Value.(*pformat.TimeType).Unit), connect.TimeSchema()
		case ct != nil && *ct == deprecated.TimeMicros:
			p.unit, derived = int64(time.Microsecond), connect.TimeSchema()
		case lt != nil && isLogical[*pformat.DecimalType](lt):
			p.conv, derived = convDecimal, connect.DecimalSchema(lt.Value.(*pformat.DecimalType).Scale)
		}
	case parquet.Int96:
		p.conv, derived = convInt96, connect.TimestampSchema()
	case parquet.Float:
		p.conv, derived = convFloat32, connect.NewSchema(connect.Float32)
	case parquet.Double:
		p.conv, derived = convFloat64, connect.NewSchema(connect.Float64)
	case parquet.ByteArray, parquet.FixedLenByteArray:
		p.conv, derived = convBytes, connect.NewSchema(connect.Bytes)
		switch {
		case lt != nil && isLogical[*pformat.DecimalType](lt):
			p.conv, derived = convDecimal, connect.DecimalSchema(lt.Value.(*pformat.DecimalType).Scale)
		case t.Kind() == parquet.ByteArray && (lt != nil && (isLogical[*pformat.StringType](lt) || isLogical[*pformat.EnumType](lt) ||
			isLogical[*pformat.JsonType](lt)) || ct != nil && (*ct == deprecated.UTF8 || *ct == deprecated.Enum || *ct == deprecated.Json)):
			p.conv, derived = convString, connect.NewSchema(connect.String)
		}
	default:
		return nil, fmt.Errorf("Parquet type %s cannot be read", t)
	}
	if cs == nil {
		if opt {
			derived.Optional()
		}
		s, err := derived.BuildE()
		if err != nil {
			return nil, err
		}
		p.cs = s
		return p, nil
	}
	// The Avro schema's type decides the Connect value; the column's
	// physical type must carry it.
	p.cs = cs
	ok := false
	switch cs.Type {
	case connect.Int8, connect.Int16, connect.Int32:
		ok = p.conv == convInt32
		if cs.Name == connect.TimeName && p.unit == 0 {
			p.unit = int64(time.Millisecond)
		}
	case connect.Int64:
		ok = p.conv == convInt64 || p.conv == convInt96
		if (cs.Name == connect.TimestampName || cs.Name == connect.TimeName) && p.unit == 0 {
			p.unit = int64(time.Millisecond)
		}
	case connect.Float32:
		ok = p.conv == convFloat32
	case connect.Float64:
		ok = p.conv == convFloat64
	case connect.Boolean:
		ok = p.conv == convBool
	case connect.String:
		ok = p.conv == convString || p.conv == convBytes
		p.conv = convString
	case connect.Bytes:
		ok = p.conv == convBytes || p.conv == convDecimal || p.conv == convString
		p.conv = convBytes
		if cs.Name == connect.DecimalName {
			p.conv = convDecimal
		}
	}
	if !ok {
		return nil, errMismatch
	}
	return p, nil
}

func unitNanos(u pformat.TimeUnit) int64 {
	switch u.Value.(type) {
	case *pformat.MicroSeconds:
		return int64(time.Microsecond)
	case *pformat.NanoSeconds:
		return 1
	}
	return int64(time.Millisecond)
}

// assembler turns one row (values grouped by column) back into a
// value: each node reads the range of each of its columns that belongs
// to the current instance.
type assembler struct {
	cols   [][]parquet.Value
	lo, hi []int
}

var errCorrupt = errors.New("Parquet row levels do not fit the schema")

func (a *assembler) row(p *rplan, row parquet.Row) (any, error) {
	if cap(a.cols) < p.last {
		a.cols = make([][]parquet.Value, p.last)
		a.lo, a.hi = make([]int, p.last), make([]int, p.last)
	}
	a.cols = a.cols[:p.last]
	for c := range a.cols {
		a.cols[c] = a.cols[c][:0]
	}
	for _, v := range row {
		c := v.Column()
		if c < 0 || c >= p.last {
			return nil, errCorrupt
		}
		a.cols[c] = append(a.cols[c], v)
	}
	for c := range a.cols {
		if len(a.cols[c]) == 0 {
			return nil, errCorrupt
		}
		a.lo[c], a.hi[c] = 0, len(a.cols[c])
	}
	return a.read(p)
}

// present reports whether p holds a value in the current instance (its
// first column's first value is defined down to p).
func (a *assembler) present(p *rplan) (bool, error) {
	c := p.first
	if a.lo[c] >= a.hi[c] {
		return false, errCorrupt
	}
	if a.cols[c][a.lo[c]].DefinitionLevel() < p.def {
		if !p.optional {
			return false, errCorrupt
		}
		return false, nil
	}
	return true, nil
}

func (a *assembler) read(p *rplan) (any, error) {
	ok, err := a.present(p)
	if err != nil || !ok {
		return nil, err
	}
	switch p.kind {
	case kindLeaf:
		if a.hi[p.col]-a.lo[p.col] != 1 {
			return nil, errCorrupt
		}
		return p.convert(a.cols[p.col][a.lo[p.col]])
	case kindStruct:
		st := connect.NewStructValue(p.cs)
		for i, fp := range p.fields {
			v, err := a.read(fp)
			if err != nil {
				return nil, err
			}
			if i := p.index[i]; i >= 0 {
				st.PutFieldUnchecked(&p.cs.Fields[i], v)
			}
		}
		return st, nil
	}
	// Lists and maps: empty when the first value stops at the list.
	if a.cols[p.first][a.lo[p.first]].DefinitionLevel() < p.repDef {
		switch p.kind {
		case kindList:
			return []any{}, nil
		case kindMap, kindEntries:
			return emptyMap(p.cs), nil
		}
	}
	var items []any
	var keys []any
	err = a.each(p, func() error {
		if p.key != nil {
			k, err := a.read(p.key)
			if err != nil {
				return err
			}
			keys = append(keys, k)
		}
		var v any
		if p.elem != nil {
			var err error
			if v, err = a.read(p.elem); err != nil {
				return err
			}
		}
		items = append(items, v)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if p.kind == kindList {
		return items, nil
	}
	m := emptyMap(p.cs)
	for i, k := range keys {
		switch mm := m.(type) {
		case map[string]any:
			ks, ok := k.(string)
			if !ok {
				return nil, errCorrupt
			}
			mm[ks] = items[i]
		case map[any]any:
			if k == nil || !comparableKey(k) {
				return nil, fmt.Errorf("map key of type %T cannot be a Go map key", k)
			}
			mm[k] = items[i]
		}
	}
	return m, nil
}

func emptyMap(s *connect.Schema) any {
	if s.KeySchema != nil && s.KeySchema.Type == connect.String {
		return map[string]any{}
	}
	return map[any]any{}
}

func comparableKey(v any) bool {
	switch v.(type) {
	case []byte, []any, map[string]any, map[any]any, *connect.Struct:
		return false
	}
	return true
}

// each calls fn once per element of the list or map p, with every
// column's range narrowed to the element: an element starts at a value
// repeated at p's level.
func (a *assembler) each(p *rplan, fn func() error) error {
	n := p.last - p.first
	saved := make([]int, n)
	for c := p.first; c < p.last; c++ {
		saved[c-p.first] = a.hi[c]
	}
	defer func() {
		for c := p.first; c < p.last; c++ {
			a.hi[c] = saved[c-p.first]
		}
	}()
	start := make([]int, n)
	for c := p.first; c < p.last; c++ {
		start[c-p.first] = a.lo[c]
	}
	for {
		done := 0
		for c := p.first; c < p.last; c++ {
			s, hi := start[c-p.first], saved[c-p.first]
			if s >= hi {
				done++
				continue
			}
			e := s + 1
			for e < hi && a.cols[c][e].RepetitionLevel() > p.repRep {
				e++
			}
			if e < hi && a.cols[c][e].RepetitionLevel() < p.repRep {
				return errCorrupt
			}
			a.lo[c], a.hi[c] = s, e
		}
		if done == n {
			break
		}
		if done > 0 {
			return errCorrupt
		}
		if err := fn(); err != nil {
			return err
		}
		for c := p.first; c < p.last; c++ {
			start[c-p.first] = a.hi[c]
		}
	}
	for c := p.first; c < p.last; c++ {
		a.lo[c] = saved[c-p.first]
	}
	return nil
}

// convert turns a leaf value into the Connect value of p.cs.
func (p *rplan) convert(v parquet.Value) (any, error) {
	s := p.cs
	switch p.conv {
	case convInt32:
		n := v.Int32()
		switch {
		case s.Type == connect.Int8:
			return int8(n), nil
		case s.Type == connect.Int16:
			return int16(n), nil
		case s.Name == connect.DateName:
			return connect.DaysToDate(n), nil
		case s.Name == connect.TimeName:
			return time.UnixMilli(int64(n) * p.unit / int64(time.Millisecond)).UTC(), nil
		case s.Name == connect.DecimalName:
			return connect.Decimal{Unscaled: big.NewInt(int64(n)), Scale: p.scale()}, nil
		case s.Type == connect.Int64:
			return int64(uint32(n)), nil
		}
		return n, nil
	case convInt64:
		n := v.Int64()
		switch {
		case s.Name == connect.TimestampName:
			switch p.unit {
			case int64(time.Microsecond):
				return time.UnixMicro(n).UTC(), nil
			case 1:
				return time.Unix(0, n).UTC(), nil
			}
			return time.UnixMilli(n).UTC(), nil
		case s.Name == connect.TimeName:
			return time.UnixMilli(n / (int64(time.Millisecond) / p.unit)).UTC(), nil
		case s.Name == connect.DecimalName:
			return connect.Decimal{Unscaled: big.NewInt(n), Scale: p.scale()}, nil
		}
		return n, nil
	case convInt96:
		// Impala's timestamps: nanoseconds of the day, then the Julian day.
		i96 := v.Int96()
		nanos := int64(uint64(i96[1])<<32 | uint64(i96[0]))
		day := int64(i96[2])
		const julianEpoch = 2440588
		t := time.Unix((day-julianEpoch)*86400, nanos).UTC()
		if s.Name == connect.TimestampName {
			return t.Truncate(time.Millisecond), nil
		}
		return t.UnixMilli(), nil
	case convFloat32:
		return v.Float(), nil
	case convFloat64:
		return v.Double(), nil
	case convBool:
		return v.Boolean(), nil
	case convString:
		return string(v.ByteArray()), nil
	case convBytes:
		return bytes.Clone(v.ByteArray()), nil
	case convDecimal:
		var unscaled *big.Int
		switch v.Kind() {
		case parquet.Int32:
			unscaled = big.NewInt(int64(v.Int32()))
		case parquet.Int64:
			unscaled = big.NewInt(v.Int64())
		default:
			b := v.ByteArray()
			unscaled = new(big.Int).SetBytes(b)
			if len(b) > 0 && b[0]&0x80 != 0 {
				unscaled.Sub(unscaled, new(big.Int).Lsh(big.NewInt(1), uint(len(b)*8)))
			}
		}
		return connect.Decimal{Unscaled: unscaled, Scale: p.scale()}, nil
	}
	return nil, errCorrupt
}

func (p *rplan) scale() int32 {
	sc, _ := connect.DecimalScale(p.cs)
	return sc
}
