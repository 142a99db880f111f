// Package avsc parses, prints and compares Avro schemas the way Apache
// Avro's Java library does, because Confluent's schema registry and
// AvroData are built on it: the schema text the registry stores and
// serves is Java's Schema.toString, and compatibility follows Java's
// SchemaCompatibility (reader/writer resolution).
//
//	s, err := avsc.Parse(`{"type":"record","name":"User","fields":[{"name":"id","type":"long"}]}`)
//	s.String()                         // Java's canonical string, dedupes registrations
//	avsc.Compatible(reader, writer)    // incompatibilities, Java's messages and paths
//
// Binary encoding is not here: the converter uses goavro for that.
package avsc

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Type is an Avro schema type.
type Type string

const (
	Null    Type = "null"
	Boolean Type = "boolean"
	Int     Type = "int"
	Long    Type = "long"
	Float   Type = "float"
	Double  Type = "double"
	Bytes   Type = "bytes"
	String  Type = "string"
	Record  Type = "record"
	Enum    Type = "enum"
	Array   Type = "array"
	Map     Type = "map"
	Union   Type = "union"
	Fixed   Type = "fixed"
)

var primitives = map[string]Type{
	"null": Null, "boolean": Boolean, "int": Int, "long": Long, "float": Float,
	"double": Double, "bytes": Bytes, "string": String,
}

// Schema is a parsed Avro schema. Named types (record, enum, fixed) are
// shared: every reference to a name points to the same *Schema, so a
// recursive record refers to itself.
type Schema struct {
	Type Type
	// Name and Namespace of a record, enum or fixed.
	Name      string
	Namespace string
	Doc       *string
	// Aliases are full names.
	Aliases []string
	// IsError marks a record declared with "type":"error".
	IsError bool
	Fields  []*Field
	Symbols []string
	// EnumDefault is an enum's "default" symbol.
	EnumDefault *string
	Size        int
	Items       *Schema // array
	Values      *Schema // map
	Branches    []*Schema
	// Props are the other properties, in their written order
	// (logicalType, connect.name, ...).
	Props Object
}

// Field is a record field.
type Field struct {
	Name string
	Type *Schema
	Doc  *string
	// Default is the JSON default (nil, bool, json.Number, string, []any,
	// Object) when HasDefault.
	Default    any
	HasDefault bool
	// Order is "ascending" (the default), "descending" or "ignore".
	Order   string
	Aliases []string
	Props   Object
	Pos     int
}

// FullName is namespace.name, or name without a namespace.
func (s *Schema) FullName() string {
	if s.Namespace == "" {
		return s.Name
	}
	return s.Namespace + "." + s.Name
}

// IsNamed reports whether s is a record, enum or fixed.
func (s *Schema) IsNamed() bool { return s.Type == Record || s.Type == Enum || s.Type == Fixed }

// Prop returns a property's JSON value, or nil.
func (s *Schema) Prop(key string) any {
	v, _ := s.Props.Get(key)
	return v
}

// StringProp returns a string property, or "".
func (s *Schema) StringProp(key string) string {
	v, _ := s.Props.Get(key)
	str, _ := v.(string)
	return str
}

// Field returns the named field of a record, or nil.
func (s *Schema) Field(name string) *Field {
	for _, f := range s.Fields {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// ParseError is an invalid schema (Java's SchemaParseException).
type ParseError struct{ Msg string }

func (e *ParseError) Error() string { return e.Msg }

func parseErrorf(format string, args ...any) error {
	return &ParseError{Msg: fmt.Sprintf(format, args...)}
}

// Parse parses an Avro schema text as Java's Schema.Parser does (with
// name and default validation on).
func Parse(text string) (*Schema, error) {
	v, err := ParseJSON([]byte(text))
	if err != nil {
		return nil, parseErrorf("Invalid schema: %v", err)
	}
	p := &parser{names: map[string]*Schema{}}
	s, err := p.parse(v, "", 0)
	if err != nil {
		return nil, err
	}
	return s, nil
}

type parser struct {
	names map[string]*Schema
}

func (p *parser) parse(v any, space string, depth int) (*Schema, error) {
	if depth > maxDepth {
		return nil, parseErrorf("schema nested too deeply")
	}
	switch x := v.(type) {
	case string:
		return p.find(x, space)
	case []any:
		return p.parseUnion(x, space, depth)
	case Object:
		tv, ok := x.Get("type")
		if !ok {
			return nil, parseErrorf("No type: %s", AppendJSON(nil, x))
		}
		t, ok := tv.(string)
		if !ok {
			// {"type": {...}} or {"type": [...]}: Java requires text.
			return nil, parseErrorf("No type: %s", AppendJSON(nil, x))
		}
		if pt, ok := primitives[t]; ok {
			return &Schema{Type: pt, Props: props(x, schemaReserved)}, nil
		}
		switch t {
		case "record", "error":
			return p.parseRecord(x, space, t == "error", depth)
		case "enum":
			return p.parseEnum(x, space)
		case "array":
			items, ok := x.Get("items")
			if !ok {
				return nil, parseErrorf("Array has no items type: %s", AppendJSON(nil, x))
			}
			it, err := p.parse(items, space, depth+1)
			if err != nil {
				return nil, err
			}
			return &Schema{Type: Array, Items: it, Props: props(x, schemaReserved)}, nil
		case "map":
			values, ok := x.Get("values")
			if !ok {
				return nil, parseErrorf("Map has no values type: %s", AppendJSON(nil, x))
			}
			vt, err := p.parse(values, space, depth+1)
			if err != nil {
				return nil, err
			}
			return &Schema{Type: Map, Values: vt, Props: props(x, schemaReserved)}, nil
		case "fixed":
			return p.parseFixed(x, space)
		}
		// A named type used as {"type": "com.acme.User"}.
		if s, err := p.find(t, space); err == nil {
			return s, nil
		}
		return nil, parseErrorf("A schema \"type\" MUST be a primitive type or one of \"enum\", \"fixed\", \"record\", \"error\", \"array\" or \"map\".")
	}
	return nil, parseErrorf("Schema not yet supported: %s", AppendJSON(nil, v))
}

var (
	schemaReserved = set("doc", "fields", "items", "name", "namespace", "size", "symbols", "values", "type", "aliases")
	enumReserved   = set("doc", "fields", "items", "name", "namespace", "size", "symbols", "values", "type", "aliases", "default")
	fieldReserved  = set("default", "doc", "name", "order", "type", "aliases")
)

func set(keys ...string) map[string]bool {
	m := map[string]bool{}
	for _, k := range keys {
		m[k] = true
	}
	return m
}

func props(o Object, reserved map[string]bool) Object {
	var out Object
	for _, m := range o {
		if !reserved[m.Key] {
			out = append(out, m)
		}
	}
	return out
}

func (p *parser) find(name, space string) (*Schema, error) {
	if t, ok := primitives[name]; ok {
		return &Schema{Type: t}, nil
	}
	if !strings.Contains(name, ".") && space != "" {
		if s, ok := p.names[space+"."+name]; ok {
			return s, nil
		}
	}
	if s, ok := p.names[name]; ok {
		return s, nil
	}
	return nil, parseErrorf("Undefined name: %q", name)
}

// name resolves a named type's name and namespace as Java's Name: a
// dotted name carries its namespace, else the "namespace" property,
// else the enclosing one.
func (p *parser) name(o Object, space string) (name, ns string, err error) {
	nv, ok := o.Get("name")
	n, isStr := nv.(string)
	if !ok || !isStr {
		return "", "", parseErrorf("No name in schema: %s", AppendJSON(nil, o))
	}
	ns = space
	if v, ok := o.Get("namespace"); ok {
		s, isStr := v.(string)
		if !isStr && v != nil {
			return "", "", parseErrorf("Namespace must be a string: %s", AppendJSON(nil, o))
		}
		ns = s
	}
	if i := strings.LastIndexByte(n, '.'); i >= 0 {
		ns, n = n[:i], n[i+1:]
	}
	if err := validateName(n); err != nil {
		return "", "", err
	}
	if ns != "" {
		for _, part := range strings.Split(ns, ".") {
			if err := validateName(part); err != nil {
				return "", "", err
			}
		}
	}
	if _, ok := primitives[n]; ok && ns == "" {
		return "", "", parseErrorf("Can't redefine: %s", n)
	}
	return n, ns, nil
}

func validateName(n string) error {
	if n == "" {
		return parseErrorf("Empty name")
	}
	for i, r := range n {
		ok := r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (i > 0 && r >= '0' && r <= '9')
		if !ok {
			return parseErrorf("Illegal character in: %s", n)
		}
	}
	return nil
}

func (p *parser) define(s *Schema) error {
	full := s.FullName()
	if _, ok := p.names[full]; ok {
		return parseErrorf("Can't redefine: %s", full)
	}
	p.names[full] = s
	return nil
}

func doc(o Object) *string {
	if v, ok := o.Get("doc"); ok {
		if s, ok := v.(string); ok {
			return &s
		}
	}
	return nil
}

func aliases(o Object, space string) ([]string, error) {
	v, ok := o.Get("aliases")
	if !ok {
		return nil, nil
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, parseErrorf("aliases not an array: %s", AppendJSON(nil, o))
	}
	var out []string
	for _, a := range arr {
		s, ok := a.(string)
		if !ok {
			return nil, parseErrorf("alias not a string: %s", AppendJSON(nil, a))
		}
		if space != "" && !strings.Contains(s, ".") {
			s = space + "." + s
		}
		out = append(out, s)
	}
	return out, nil
}

func (p *parser) parseRecord(o Object, space string, isError bool, depth int) (*Schema, error) {
	n, ns, err := p.name(o, space)
	if err != nil {
		return nil, err
	}
	s := &Schema{Type: Record, Name: n, Namespace: ns, Doc: doc(o), IsError: isError}
	// Defined before its fields so a field can refer to the record.
	if err := p.define(s); err != nil {
		return nil, err
	}
	fv, ok := o.Get("fields")
	fields, isArr := fv.([]any)
	if !ok || !isArr {
		return nil, parseErrorf("Record has no fields: %s", AppendJSON(nil, o))
	}
	seen := map[string]bool{}
	for i, f := range fields {
		fo, ok := f.(Object)
		if !ok {
			return nil, parseErrorf("Not a field: %s", AppendJSON(nil, f))
		}
		field, err := p.parseField(fo, ns, depth)
		if err != nil {
			return nil, err
		}
		if seen[field.Name] {
			return nil, parseErrorf("Duplicate field %s in record %s: %s.", field.Name, s.FullName(), AppendJSON(nil, fo))
		}
		seen[field.Name] = true
		field.Pos = i
		s.Fields = append(s.Fields, field)
	}
	s.Props = props(o, schemaReserved)
	if s.Aliases, err = aliases(o, ns); err != nil {
		return nil, err
	}
	return s, nil
}

func (p *parser) parseField(o Object, space string, depth int) (*Field, error) {
	nv, _ := o.Get("name")
	n, ok := nv.(string)
	if !ok {
		return nil, parseErrorf("No field name: %s", AppendJSON(nil, o))
	}
	if err := validateName(n); err != nil {
		return nil, err
	}
	tv, ok := o.Get("type")
	if !ok {
		return nil, parseErrorf("No field type: %s", AppendJSON(nil, o))
	}
	t, err := p.parse(tv, space, depth+1)
	if err != nil {
		return nil, err
	}
	f := &Field{Name: n, Type: t, Doc: doc(o), Order: "ascending", Props: props(o, fieldReserved)}
	if ov, ok := o.Get("order"); ok {
		os, _ := ov.(string)
		switch strings.ToLower(os) {
		case "ascending", "descending", "ignore":
			f.Order = strings.ToLower(os)
		default:
			return nil, parseErrorf("No enum constant org.apache.avro.Schema.Field.Order.%s", strings.ToUpper(os))
		}
	}
	if dv, ok := o.Get("default"); ok {
		// Java turns a textual default of a float or double field into
		// a number.
		if s, isStr := dv.(string); isStr && (t.Type == Float || t.Type == Double) {
			dv = json.Number(s)
		}
		if !ValidDefault(t, dv) {
			return nil, parseErrorf("Invalid default for field %s: %s not a %s", n, AppendJSON(nil, dv), typeDesc(t))
		}
		f.Default, f.HasDefault = dv, true
	}
	if av, ok := o.Get("aliases"); ok {
		arr, isArr := av.([]any)
		if !isArr {
			return nil, parseErrorf("aliases not an array: %s", AppendJSON(nil, o))
		}
		for _, a := range arr {
			s, isStr := a.(string)
			if !isStr {
				return nil, parseErrorf("alias not a string: %s", AppendJSON(nil, a))
			}
			f.Aliases = append(f.Aliases, s)
		}
	}
	return f, nil
}

func typeDesc(s *Schema) string {
	if s.Type == Union {
		parts := make([]string, len(s.Branches))
		for i, b := range s.Branches {
			parts[i] = string(b.Type)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	return `"` + string(s.Type) + `"`
}

func (p *parser) parseEnum(o Object, space string) (*Schema, error) {
	n, ns, err := p.name(o, space)
	if err != nil {
		return nil, err
	}
	s := &Schema{Type: Enum, Name: n, Namespace: ns, Doc: doc(o)}
	sv, _ := o.Get("symbols")
	syms, ok := sv.([]any)
	if !ok {
		return nil, parseErrorf("Enum has no symbols: %s", AppendJSON(nil, o))
	}
	seen := map[string]bool{}
	for _, sym := range syms {
		str, ok := sym.(string)
		if !ok {
			return nil, parseErrorf("Enum symbol is not a string: %s", AppendJSON(nil, sym))
		}
		if err := validateName(str); err != nil {
			return nil, err
		}
		if seen[str] {
			return nil, parseErrorf("Duplicate enum symbol: %s", str)
		}
		seen[str] = true
		s.Symbols = append(s.Symbols, str)
	}
	if dv, ok := o.Get("default"); ok {
		d, isStr := dv.(string)
		if !isStr || !seen[d] {
			return nil, parseErrorf("The Enum Default: %s is not in the enum symbol set: %v", AppendJSON(nil, dv), s.Symbols)
		}
		s.EnumDefault = &d
	}
	s.Props = props(o, enumReserved)
	if s.Aliases, err = aliases(o, ns); err != nil {
		return nil, err
	}
	return s, p.define(s)
}

func (p *parser) parseFixed(o Object, space string) (*Schema, error) {
	n, ns, err := p.name(o, space)
	if err != nil {
		return nil, err
	}
	sv, _ := o.Get("size")
	num, ok := sv.(json.Number)
	size, err := num.Int64()
	if !ok || err != nil || size < 0 || size > 1<<31-1 {
		return nil, parseErrorf("Invalid or no size: %s", AppendJSON(nil, o))
	}
	s := &Schema{Type: Fixed, Name: n, Namespace: ns, Doc: doc(o), Size: int(size), Props: props(o, schemaReserved)}
	if s.Aliases, err = aliases(o, ns); err != nil {
		return nil, err
	}
	return s, p.define(s)
}

func (p *parser) parseUnion(arr []any, space string, depth int) (*Schema, error) {
	s := &Schema{Type: Union}
	seen := map[string]bool{}
	for _, b := range arr {
		bs, err := p.parse(b, space, depth+1)
		if err != nil {
			return nil, err
		}
		if bs.Type == Union {
			return nil, parseErrorf("Nested union: %s", AppendJSON(nil, arr))
		}
		key := string(bs.Type)
		if bs.IsNamed() {
			key = bs.FullName()
		}
		if seen[key] {
			return nil, parseErrorf("Duplicate in union:%s", key)
		}
		seen[key] = true
		s.Branches = append(s.Branches, bs)
	}
	return s, nil
}

// ValidDefault reports whether a JSON default value fits the schema, as
// Java's Schema.isValidDefault (a union's default may match any branch).
func ValidDefault(s *Schema, v any) bool {
	switch s.Type {
	case String, Bytes, Enum, Fixed:
		_, ok := v.(string)
		return ok
	case Int:
		n, ok := v.(json.Number)
		if !ok || strings.ContainsAny(string(n), ".eE") {
			return false
		}
		i, err := n.Int64()
		return err == nil && i >= -1<<31 && i <= 1<<31-1
	case Long:
		n, ok := v.(json.Number)
		if !ok || strings.ContainsAny(string(n), ".eE") {
			return false
		}
		_, err := n.Int64()
		return err == nil
	case Float, Double:
		_, ok := v.(json.Number)
		return ok
	case Boolean:
		_, ok := v.(bool)
		return ok
	case Null:
		return v == nil
	case Array:
		arr, ok := v.([]any)
		if !ok {
			return false
		}
		for _, e := range arr {
			if !ValidDefault(s.Items, e) {
				return false
			}
		}
		return true
	case Map:
		obj, ok := v.(Object)
		if !ok {
			return false
		}
		for _, m := range obj {
			if !ValidDefault(s.Values, m.Value) {
				return false
			}
		}
		return true
	case Union:
		for _, b := range s.Branches {
			if ValidDefault(b, v) {
				return true
			}
		}
		return false
	case Record:
		obj, ok := v.(Object)
		if !ok {
			return false
		}
		for _, f := range s.Fields {
			fv, ok := obj.Get(f.Name)
			if !ok {
				if !f.HasDefault {
					return false
				}
				fv = f.Default
			}
			if !ValidDefault(f.Type, fv) {
				return false
			}
		}
		return true
	}
	return false
}
