package json

import (
	"bytes"

	"github.com/fjordhq/fjord/connect"
)

// decodedSchema is the last envelope schema decoded, kept with its bytes:
// a record whose "schema" starts with the same bytes reuses it without
// scanning them.
type decodedSchema struct {
	raw []byte
	s   *connect.Schema
}

// schemaFor returns the Connect schema of an envelope's "schema" JSON
// (already validated), from the cache when these bytes were seen.
func (c *Converter) schemaFor(raw []byte) (*connect.Schema, error) {
	if len(raw) == 4 && string(raw) == "null" {
		return nil, nil
	}
	cache := c.decCache()
	if s, ok := cache.get(string(raw)); ok {
		c.lastDec.Store(&decodedSchema{raw: bytes.Clone(raw), s: s})
		return s, nil
	}
	sc := scanner{data: raw}
	n, err := parseNode(&sc)
	if err != nil {
		return nil, serializationError(err)
	}
	s, err := c.asConnectSchema(n)
	if err != nil || s == nil {
		return s, err
	}
	cache.put(string(raw), s)
	c.lastDec.Store(&decodedSchema{raw: bytes.Clone(raw), s: s})
	return s, nil
}

// jnode is a parsed JSON value, for schemas (read once, then cached).
type jnode struct {
	kind  nodeKind
	text  []byte // number
	str   string
	raw   []byte // the value's bytes
	keys  []string
	vals  []*jnode // object: a duplicate key keeps its first place, last value
	elems []*jnode
}

func (n *jnode) get(k string) *jnode {
	if n == nil || n.kind != kObject {
		return nil
	}
	for i, key := range n.keys {
		if key == k {
			return n.vals[i]
		}
	}
	return nil
}

func parseNode(s *scanner) (*jnode, error) {
	s.ws()
	start := s.pos
	n := &jnode{}
	switch c := s.peek(); c {
	case '{':
		n.kind = kObject
		s.pos++
		if s.peek() == '}' {
			s.pos++
			break
		}
		for {
			if s.peek() != '"' {
				return nil, s.unexpected()
			}
			k, err := s.str()
			if err != nil {
				return nil, err
			}
			if s.peek() != ':' {
				return nil, s.unexpected()
			}
			s.pos++
			v, err := parseNode(s)
			if err != nil {
				return nil, err
			}
			replaced := false
			for i := range n.keys {
				if n.keys[i] == k {
					n.vals[i], replaced = v, true
				}
			}
			if !replaced {
				n.keys = append(n.keys, k)
				n.vals = append(n.vals, v)
			}
			if s.peek() == ',' {
				s.pos++
				continue
			}
			if s.peek() != '}' {
				return nil, s.unexpected()
			}
			s.pos++
			break
		}
	case '[':
		n.kind = kArray
		s.pos++
		if s.peek() == ']' {
			s.pos++
			break
		}
		for {
			v, err := parseNode(s)
			if err != nil {
				return nil, err
			}
			n.elems = append(n.elems, v)
			if s.peek() == ',' {
				s.pos++
				continue
			}
			if s.peek() != ']' {
				return nil, s.unexpected()
			}
			s.pos++
			break
		}
	case '"':
		n.kind = kString
		str, err := s.str()
		if err != nil {
			return nil, err
		}
		n.str = str
	case 't', 'f':
		n.kind = kBoolean
		word := "true"
		if c == 'f' {
			word = "false"
		}
		n.str = word
		if err := s.literal(word); err != nil {
			return nil, err
		}
	case 'n':
		n.kind = kNull
		if err := s.literal("null"); err != nil {
			return nil, err
		}
	default:
		n.kind = kNumber
		text, float, err := s.number()
		if err != nil {
			return nil, err
		}
		n.text = text
		if float {
			n.str = "float"
		}
	}
	n.raw = s.data[start:s.pos]
	return n, nil
}

var primitiveTypes = map[string]connect.Type{
	"boolean": connect.Boolean, "int8": connect.Int8, "int16": connect.Int16, "int32": connect.Int32,
	"int64": connect.Int64, "float": connect.Float32, "double": connect.Float64, "bytes": connect.Bytes,
	"string": connect.String,
}

// asConnectSchema is Kafka's JsonConverter.asConnectSchema, with its
// messages.
func (c *Converter) asConnectSchema(n *jnode) (*connect.Schema, error) {
	if n.kind == kNull {
		return nil, nil
	}
	t := n.get("type")
	if t == nil || t.kind != kString {
		return nil, &connect.DataError{Msg: "Schema must contain 'type' field"}
	}
	var b *connect.SchemaBuilder
	if pt, ok := primitiveTypes[t.str]; ok {
		b = connect.NewSchema(pt)
	} else {
		switch t.str {
		case "array":
			items := n.get("items")
			if items == nil || items.kind == kNull {
				return nil, &connect.DataError{Msg: "Array schema did not specify the element type"}
			}
			elem, err := c.asConnectSchema(items)
			if err != nil {
				return nil, err
			}
			b = connect.NewArray(elem)
		case "map":
			kn, vn := n.get("keys"), n.get("values")
			if kn == nil {
				return nil, &connect.DataError{Msg: "Map schema did not specify the key type"}
			}
			if vn == nil {
				return nil, &connect.DataError{Msg: "Map schema did not specify the value type"}
			}
			ks, err := c.asConnectSchema(kn)
			if err != nil {
				return nil, err
			}
			vs, err := c.asConnectSchema(vn)
			if err != nil {
				return nil, err
			}
			if ks == nil {
				return nil, &connect.DataError{Msg: "keySchema cannot be null."}
			}
			if vs == nil {
				return nil, &connect.DataError{Msg: "valueSchema cannot be null."}
			}
			b = connect.NewMap(ks, vs)
		case "struct":
			fields := n.get("fields")
			if fields == nil || fields.kind != kArray {
				return nil, &connect.DataError{Msg: "Struct schema's \"fields\" argument is not an array."}
			}
			b = connect.NewStruct()
			names := make(map[string]bool, len(fields.elems))
			for _, f := range fields.elems {
				name := f.get("field")
				if name == nil || name.kind != kString {
					return nil, &connect.DataError{Msg: "Struct schema's field name not specified properly"}
				}
				fs, err := c.asConnectSchema(f)
				if err != nil {
					return nil, err
				}
				if name.str == "" {
					return nil, &connect.DataError{Msg: "fieldName cannot be null."}
				}
				if names[name.str] {
					return nil, dataErrorf("Cannot create field because of field name duplication %s", name.str)
				}
				names[name.str] = true
				b.Field(name.str, fs)
			}
		default:
			return nil, dataErrorf("Unknown schema type: %s", t.str)
		}
	}
	if o := n.get("optional"); o != nil && o.kind == kBoolean && o.str == "true" {
		b.Optional()
	}
	if x := n.get("name"); x != nil && x.kind == kString {
		b.Name(x.str)
	}
	if x := n.get("version"); x != nil && x.kind == kNumber && x.str == "" {
		b.Version(int32(intBits(x.text, false)))
	}
	if x := n.get("doc"); x != nil && x.kind == kString {
		b.Doc(x.str)
	}
	if x := n.get("parameters"); x != nil && x.kind == kObject {
		for i, k := range x.keys {
			if x.vals[i].kind != kString {
				return nil, &connect.DataError{Msg: "Schema parameters must have string values."}
			}
			b.Parameter(k, x.vals[i].str)
		}
	}
	s, err := b.BuildE()
	if err != nil {
		return nil, &connect.DataError{Msg: err.Error()}
	}
	dn := n.get("default")
	if dn == nil {
		return s, nil
	}
	return c.withDefault(s, dn)
}

// withDefault converts a schema's "default" with the schema and sets
// it, failing as Kafka's SchemaBuilder.defaultValue does ("Invalid
// default value"; always for a struct, whose default Kafka builds
// against the unfinished schema).
func (c *Converter) withDefault(s *connect.Schema, dn *jnode) (*connect.Schema, error) {
	d := decoder{scanner: scanner{data: dn.raw}, replaceNull: !c.keepNull}
	v, err := d.convert(s)
	if err != nil {
		if isConversion(err) {
			return nil, err
		}
		return nil, serializationError(err)
	}
	invalid := &connect.DataError{Msg: "Invalid default value"}
	if v == nil {
		if !s.Optional {
			return nil, invalid
		}
		return s, nil
	}
	if s.Type == connect.StructType {
		return nil, invalid
	}
	if err := checkNested(s, v, "value"); err != nil {
		return nil, invalid
	}
	out, err := connect.FromSchema(s).Default(v).BuildE()
	if err != nil {
		return nil, invalid
	}
	return out, nil
}
