package format

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"
	pformat "github.com/parquet-go/parquet-go/format"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/converters/avro/avsc"
)

// The Parquet schema of a Connect schema, as Confluent gets it: AvroData
// makes an Avro schema, which parquet-avro's AvroSchemaConverter turns
// into Parquet:
//
//	record        group, fields in order
//	[null, T]     T, OPTIONAL
//	int           INT32 (Connect INT8 and INT16 too: no annotation)
//	  date        INT32 (DATE)
//	  time-millis INT32 (TIME(MILLIS, UTC))
//	long          INT64; timestamp-millis INT64 (TIMESTAMP(MILLIS, UTC))
//	float, double, boolean
//	string        BINARY (STRING); enum BINARY (ENUM)
//	bytes         BINARY; decimal BINARY (DECIMAL(precision, scale))
//	fixed         FIXED_LEN_BYTE_ARRAY(size)
//	map           group (MAP) { repeated group key_value { required binary key (STRING); value } }
//	array         group (LIST) { repeated T array }: parquet-avro's default
//	              two-level lists, or, when the Connect schema has an
//	              array of optional items anywhere (Confluent then sets
//	              parquet.avro.write-old-list-structure=false), the
//	              three-level group (LIST) { repeated group list { T element } }
//	union         group of optional member0, member1, ...
//
// Maps with keys other than required strings are, as in Avro, arrays of
// key/value records. The message is named after the record's full name.

// plan is how one Parquet node is written from (and read into) Connect
// values.
type plan struct {
	kind     planKind
	cs       *connect.Schema
	optional bool
	def, rep int // levels when this node holds a value
	first    int // leaf columns [first, last)
	last     int

	leaf leafKind
	col  int
	size int // fixed length

	fields []*plan // struct and union members, in Connect field order
	elem   *plan   // list element, map value
	key    *plan   // map key
	// repDef and repRep are the levels of a list's or map's repeated
	// node (the element itself in a two-level list).
	repDef, repRep int
}

type planKind uint8

const (
	kindLeaf planKind = iota
	kindStruct
	kindList    // Connect ARRAY
	kindMap     // Connect MAP with string keys: Parquet MAP
	kindEntries // Connect MAP with other keys: a LIST of key/value groups
)

type leafKind uint8

const (
	leafInt8 leafKind = iota
	leafInt16
	leafInt32
	leafDate
	leafTime
	leafInt64
	leafTimestamp
	leafFloat32
	leafFloat64
	leafBool
	leafString
	leafBytes
	leafDecimal
)

// builder carries one schema conversion's state.
type builder struct {
	threeLevel bool
	col        int
}

// parquetSchemaFor converts a struct schema and its Avro schema.
func parquetSchemaFor(cs *connect.Schema, a *avsc.Schema) (*parquet.Schema, *plan, error) {
	if a.Type != avsc.Record || cs.Type != connect.StructType {
		return nil, nil, fmt.Errorf("ParquetFormat writes records: the schema is %s", cs)
	}
	b := &builder{threeLevel: hasArrayOfOptional(cs, map[*connect.Schema]bool{})}
	root, p, err := b.record(cs, a, 0, 0)
	if err != nil {
		return nil, nil, err
	}
	return parquet.NewSchema(a.FullName(), root), p, nil
}

// hasArrayOfOptional is Confluent's schemaHasArrayOfOptionalItems.
func hasArrayOfOptional(s *connect.Schema, seen map[*connect.Schema]bool) bool {
	if s == nil || seen[s] {
		return false
	}
	seen[s] = true
	switch s.Type {
	case connect.StructType:
		for _, f := range s.Fields {
			if hasArrayOfOptional(f.Schema, seen) {
				return true
			}
		}
	case connect.Map:
		return hasArrayOfOptional(s.ValueSchema, seen)
	case connect.Array:
		return s.ValueSchema.Optional || hasArrayOfOptional(s.ValueSchema, seen)
	}
	return false
}

type repetition uint8

const (
	required repetition = iota
	optional
	repeated
)

func (r repetition) wrap(n parquet.Node) parquet.Node {
	switch r {
	case optional:
		return parquet.Optional(n)
	case repeated:
		return parquet.Repeated(n)
	}
	return n
}

// levels are a node's definition and repetition levels given its
// parent's and its own repetition.
func levels(def, rep int, r repetition) (int, int) {
	switch r {
	case optional:
		return def + 1, rep
	case repeated:
		return def + 1, rep + 1
	}
	return def, rep
}

// field converts a field (or element) of Connect schema cs and Avro
// schema a: parquet-avro's convertField, with unions resolved first.
func (b *builder) field(cs *connect.Schema, a *avsc.Schema, r repetition, def, rep int) (parquet.Node, *plan, error) {
	if a.Type == avsc.Union {
		var nonNull []*avsc.Schema
		hasNull := false
		for _, br := range a.Branches {
			if br.Type == avsc.Null {
				hasNull = true
			} else {
				nonNull = append(nonNull, br)
			}
		}
		if hasNull && r == required {
			r = optional
		}
		switch {
		case len(nonNull) == 0:
			return nil, nil, fmt.Errorf("Cannot convert Avro union of only nulls")
		case len(nonNull) == 1 && hasNull && cs.Name != unionName:
			return b.field(cs, nonNull[0], r, def, rep)
		}
		return b.union(cs, nonNull, r, def, rep)
	}
	d, rp := levels(def, rep, r)
	first := b.col
	var node parquet.Node
	p := &plan{cs: cs, optional: r == optional, def: d, rep: rp, first: first}
	switch a.Type {
	case avsc.Record:
		if cs.Type == connect.StructType {
			n, sp, err := b.record(cs, a, d, rp)
			if err != nil {
				return nil, nil, err
			}
			sp.optional = r == optional
			return r.wrap(n), sp, nil
		}
		return nil, nil, fmt.Errorf("Avro record %s for Connect %s", a.FullName(), cs.Type)
	case avsc.Array:
		n, err := b.list(p, cs, a)
		if err != nil {
			return nil, nil, err
		}
		node = n
	case avsc.Map:
		n, err := b.mapNode(p, cs, a)
		if err != nil {
			return nil, nil, err
		}
		node = n
	default:
		n, err := b.leaf(p, cs, a)
		if err != nil {
			return nil, nil, err
		}
		node = n
	}
	p.last = b.col
	return r.wrap(node), p, nil
}

// record converts a struct: a group of its fields, in order.
func (b *builder) record(cs *connect.Schema, a *avsc.Schema, def, rep int) (parquet.Node, *plan, error) {
	if len(a.Fields) == 0 || len(a.Fields) != len(cs.Fields) {
		return nil, nil, fmt.Errorf("Cannot write a schema with an empty group: %s", a.FullName())
	}
	p := &plan{kind: kindStruct, cs: cs, def: def, rep: rep, first: b.col}
	g := &group{typ: parquet.Group{}.Type()}
	for i, af := range a.Fields {
		n, fp, err := b.field(cs.Fields[i].Schema, af.Type, required, def, rep)
		if err != nil {
			return nil, nil, fmt.Errorf("field %s: %w", af.Name, err)
		}
		g.fields = append(g.fields, &groupField{Node: n, name: af.Name})
		p.fields = append(p.fields, fp)
	}
	p.last = b.col
	return g, p, nil
}

// union converts Connect's union struct (or a union without null) to a
// group of optional members, parquet-avro's convertUnionToGroupType.
func (b *builder) union(cs *connect.Schema, branches []*avsc.Schema, r repetition, def, rep int) (parquet.Node, *plan, error) {
	if cs.Type != connect.StructType || cs.Name != unionName || len(cs.Fields) != len(branches) {
		return nil, nil, fmt.Errorf("Avro union for Connect %s", cs)
	}
	d, rp := levels(def, rep, r)
	p := &plan{kind: kindStruct, cs: cs, optional: r == optional, def: d, rep: rp, first: b.col}
	g := &group{typ: parquet.Group{}.Type()}
	for i, br := range branches {
		n, fp, err := b.field(cs.Fields[i].Schema, br, optional, d, rp)
		if err != nil {
			return nil, nil, err
		}
		g.fields = append(g.fields, &groupField{Node: n, name: "member" + strconv.Itoa(i)})
		p.fields = append(p.fields, fp)
	}
	p.last = b.col
	return r.wrap(g), p, nil
}

var (
	listType = parquet.List(parquet.Leaf(parquet.Int32Type)).Type()
	mapType  = parquet.Map(parquet.String(), parquet.Leaf(parquet.Int32Type)).Type()
)

// list converts an Avro array: a Connect ARRAY, or a Connect MAP whose
// keys Avro maps cannot hold (an array of key/value records).
func (b *builder) list(p *plan, cs *connect.Schema, a *avsc.Schema) (parquet.Node, error) {
	var elemCS *connect.Schema
	switch cs.Type {
	case connect.Array:
		p.kind, elemCS = kindList, cs.ValueSchema
	case connect.Map:
		p.kind = kindEntries
	default:
		return nil, fmt.Errorf("Avro array for Connect %s", cs.Type)
	}
	p.repDef, p.repRep = p.def+1, p.rep+1
	var elem parquet.Node
	var ep *plan
	var err error
	if p.kind == kindEntries {
		elem, ep, err = b.entry(cs, a.Items, p)
	} else if b.threeLevel {
		elem, ep, err = b.field(elemCS, a.Items, required, p.repDef, p.repRep)
		if err == nil {
			elem = parquet.Repeated(&group{typ: parquet.Group{}.Type(), fields: []parquet.Field{&groupField{Node: elem, name: "element"}}})
		}
	} else {
		elem, ep, err = b.field(elemCS, a.Items, repeated, p.def, p.rep)
	}
	if err != nil {
		return nil, err
	}
	p.elem = ep
	name := "array"
	if b.threeLevel {
		name = "list"
	}
	return &group{typ: listType, fields: []parquet.Field{&groupField{Node: elem, name: name}}}, nil
}

// entry is the element of a map written as an array of key/value
// records (AvroData's MapEntry).
func (b *builder) entry(cs *connect.Schema, rec *avsc.Schema, p *plan) (parquet.Node, *plan, error) {
	if rec == nil || rec.Type != avsc.Record || len(rec.Fields) != 2 {
		return nil, nil, fmt.Errorf("map entries need a key/value record")
	}
	// In a three-level list the entry record is the required element
	// inside the repeated group; in a two-level list it is the repeated
	// node itself. Either way it is present at the repeated level.
	ep := &plan{kind: kindStruct, def: p.repDef, rep: p.repRep, first: b.col}
	g := &group{typ: parquet.Group{}.Type()}
	for i, s := range []*connect.Schema{cs.KeySchema, cs.ValueSchema} {
		n, fp, err := b.field(s, rec.Fields[i].Type, required, p.repDef, p.repRep)
		if err != nil {
			return nil, nil, err
		}
		g.fields = append(g.fields, &groupField{Node: n, name: rec.Fields[i].Name})
		ep.fields = append(ep.fields, fp)
	}
	ep.last = b.col
	var node parquet.Node = g
	if b.threeLevel {
		node = parquet.Repeated(&group{typ: parquet.Group{}.Type(), fields: []parquet.Field{&groupField{Node: g, name: "element"}}})
	} else {
		node = parquet.Repeated(g)
	}
	return node, ep, nil
}

// mapNode converts an Avro map: group (MAP) { repeated group key_value
// { required binary key (STRING); value } }.
func (b *builder) mapNode(p *plan, cs *connect.Schema, a *avsc.Schema) (parquet.Node, error) {
	if cs.Type != connect.Map {
		return nil, fmt.Errorf("Avro map for Connect %s", cs.Type)
	}
	p.kind = kindMap
	p.repDef, p.repRep = p.def+1, p.rep+1
	p.key = &plan{kind: kindLeaf, cs: cs.KeySchema, leaf: leafString, col: b.col, def: p.repDef, rep: p.repRep, first: b.col}
	b.col++
	p.key.last = b.col
	vn, vp, err := b.field(cs.ValueSchema, a.Values, required, p.repDef, p.repRep)
	if err != nil {
		return nil, err
	}
	p.elem = vp
	kv := &group{typ: parquet.Group{}.Type(), fields: []parquet.Field{
		&groupField{Node: parquet.String(), name: "key"},
		&groupField{Node: vn, name: "value"},
	}}
	return &group{typ: mapType, fields: []parquet.Field{&groupField{Node: parquet.Repeated(kv), name: "key_value"}}}, nil
}

// leaf converts a primitive.
func (b *builder) leaf(p *plan, cs *connect.Schema, a *avsc.Schema) (parquet.Node, error) {
	p.kind, p.col = kindLeaf, b.col
	b.col++
	logical := a.StringProp("logicalType")
	bad := func() error { return fmt.Errorf("Avro %s for Connect %s", a.Type, cs) }
	var n parquet.Node
	switch a.Type {
	case avsc.Int:
		switch {
		case cs.Type == connect.Int8:
			p.leaf = leafInt8
		case cs.Type == connect.Int16:
			p.leaf = leafInt16
		case cs.Type == connect.Int32 && cs.Name == connect.DateName:
			p.leaf = leafDate
		case cs.Type == connect.Int32 && cs.Name == connect.TimeName:
			p.leaf = leafTime
		case cs.Type == connect.Int32:
			p.leaf = leafInt32
		default:
			return nil, bad()
		}
		switch logical {
		case "date":
			n = parquet.Date()
		case "time-millis":
			n = parquet.Time(parquet.Millisecond)
		default:
			n = parquet.Leaf(plainType{parquet.Int32Type})
		}
	case avsc.Long:
		switch {
		case cs.Type == connect.Int64 && cs.Name == connect.TimestampName:
			p.leaf = leafTimestamp
		case cs.Type == connect.Int64:
			p.leaf = leafInt64
		default:
			return nil, bad()
		}
		if logical == "timestamp-millis" {
			n = parquet.Timestamp(parquet.Millisecond)
		} else {
			n = parquet.Leaf(plainType{parquet.Int64Type})
		}
	case avsc.Float:
		p.leaf, n = leafFloat32, parquet.Leaf(parquet.FloatType)
	case avsc.Double:
		p.leaf, n = leafFloat64, parquet.Leaf(parquet.DoubleType)
	case avsc.Boolean:
		p.leaf, n = leafBool, parquet.Leaf(parquet.BooleanType)
	case avsc.String:
		p.leaf, n = leafString, parquet.Encoded(parquet.String(), &parquet.PlainDictionary)
	case avsc.Enum:
		p.leaf, n = leafString, parquet.Encoded(parquet.Enum(), &parquet.PlainDictionary)
	case avsc.Bytes, avsc.Fixed:
		p.leaf = leafBytes
		if cs.Type != connect.Bytes {
			return nil, bad()
		}
		if cs.Name == connect.DecimalName {
			p.leaf = leafDecimal
		}
		var t parquet.Type = parquet.ByteArrayType
		if a.Type == avsc.Fixed {
			p.size = a.Size
			t = parquet.FixedLenByteArrayType(a.Size)
		}
		n = parquet.Leaf(t)
		if logical == "decimal" {
			// AvroData attaches Avro's decimal logical type (which
			// parquet-avro annotates) only for 0 <= scale <= precision.
			scale, precision := jsonIntProp(a, "scale", 0), jsonIntProp(a, "precision", 64)
			if scale >= 0 && scale <= precision && precision > 0 {
				n = parquet.Decimal(scale, precision, t)
			}
		}
	default:
		return nil, fmt.Errorf("Avro %s cannot be written to Parquet", a.Type)
	}
	return n, nil
}

func jsonIntProp(a *avsc.Schema, key string, def int) int {
	if n, ok := a.Prop(key).(json.Number); ok {
		if v, err := n.Int64(); err == nil {
			return int(v)
		}
	}
	return def
}

// plainType is an INT32 or INT64 without parquet-go's INT(32|64, signed)
// annotation: parquet-avro writes plain int and long columns.
type plainType struct{ parquet.Type }

func (plainType) LogicalType() *pformat.LogicalType { return nil }

// group is a Parquet group whose fields keep their order (parquet.Group
// sorts them by name; parquet-avro writes them in schema order).
type group struct {
	typ    parquet.Type
	fields []parquet.Field
}

func (g *group) ID() int                     { return 0 }
func (g *group) String() string              { return parquet.Group{}.String() }
func (g *group) Type() parquet.Type          { return g.typ }
func (g *group) Optional() bool              { return false }
func (g *group) Repeated() bool              { return false }
func (g *group) Required() bool              { return true }
func (g *group) Leaf() bool                  { return false }
func (g *group) Fields() []parquet.Field     { return g.fields }
func (g *group) Encoding() encoding.Encoding { return nil }
func (g *group) Compression() compress.Codec { return nil }
func (g *group) GoType() reflect.Type        { return reflect.TypeFor[map[string]any]() }

type groupField struct {
	parquet.Node
	name string
}

func (f *groupField) Name() string { return f.name }

// Value is for parquet-go's reflection over Go structs, which these
// schemas are never used with.
func (f *groupField) Value(base reflect.Value) reflect.Value { return reflect.Value{} }
