// Package connect is Fjord's Kafka Connect plugin API and data model: the
// Go shapes of Kafka Connect's Connector, SourceTask, SinkTask, Converter,
// HeaderConverter, Transformation, Predicate and ConfigDef, and of its
// data: Schema, Struct, logical types, headers and records.
//
// Connectors, converters and transforms depend on this package only; the
// runtime (connect/runtime) drives them. The model follows Kafka's
// org.apache.kafka.connect.data closely so that data converted by Fjord is
// what Kafka Connect would produce:
//
//	Schema type   Go value
//	INT8..INT64   int8, int16, int32, int64
//	FLOAT32/64    float32, float64
//	BOOLEAN       bool
//	STRING        string
//	BYTES         []byte
//	ARRAY         []any
//	MAP           map[string]any when the key schema is STRING (and for
//	              schemaless maps), otherwise map[any]any
//	STRUCT        *Struct
//	Decimal       Decimal            (logical, BYTES)
//	Date, Time,   time.Time (UTC)    (logical, INT32, INT32, INT64)
//	Timestamp
//
// Schemaless data (a nil *Schema) uses the same Go types, with integers as
// int64 and floating point as float64 (what Kafka's JsonConverter yields).
package connect

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// Type is a Connect schema type.
type Type int8

const (
	Int8 Type = iota + 1
	Int16
	Int32
	Int64
	Float32
	Float64
	Boolean
	String
	Bytes
	Array
	Map
	StructType
)

var typeNames = map[Type]string{
	Int8: "INT8", Int16: "INT16", Int32: "INT32", Int64: "INT64", Float32: "FLOAT32", Float64: "FLOAT64",
	Boolean: "BOOLEAN", String: "STRING", Bytes: "BYTES", Array: "ARRAY", Map: "MAP", StructType: "STRUCT",
}

// String is Kafka's name for the type (INT32, STRUCT, ...).
func (t Type) String() string {
	if n, ok := typeNames[t]; ok {
		return n
	}
	return fmt.Sprintf("Type(%d)", int8(t))
}

// ParseType parses Kafka's type name, case-insensitively.
func ParseType(s string) (Type, bool) {
	for t, n := range typeNames {
		if strings.EqualFold(n, s) {
			return t, true
		}
	}
	return 0, false
}

// IsPrimitive reports whether t is not ARRAY, MAP or STRUCT.
func (t Type) IsPrimitive() bool { return t >= Int8 && t <= Bytes }

// Schema describes a value. Schemas are immutable once built: share them
// freely, build new ones with SchemaBuilder.
type Schema struct {
	Type       Type
	Optional   bool
	Default    any // nil: no default
	Name       string
	Version    *int32
	Doc        string
	Parameters map[string]string
	// Fields of a STRUCT, in order.
	Fields []Field
	// KeySchema of a MAP; ValueSchema of a MAP or ARRAY.
	KeySchema   *Schema
	ValueSchema *Schema

	fieldIndex map[string]int
	// paramOrder is the order in which SchemaBuilder.Parameter added the
	// parameters: Kafka keeps them in a LinkedHashMap, and converters
	// that write them (JsonConverter's envelope) must keep that order.
	paramOrder []string
}

// ParameterKeys returns the parameter names in the order they were added
// with SchemaBuilder.Parameter (Kafka's LinkedHashMap order); names set
// otherwise (a Schema literal, SchemaBuilder.Parameters) follow, sorted.
func (s *Schema) ParameterKeys() []string {
	if len(s.Parameters) == 0 {
		return nil
	}
	keys := make([]string, 0, len(s.Parameters))
	for _, k := range s.paramOrder {
		if _, ok := s.Parameters[k]; ok && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	if len(keys) == len(s.Parameters) {
		return keys
	}
	var rest []string
	for k := range s.Parameters {
		if !slices.Contains(keys, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	return append(keys, rest...)
}

// Field is a named STRUCT field.
type Field struct {
	Name   string
	Index  int
	Schema *Schema
}

// Field returns the named field of a STRUCT schema, or nil.
func (s *Schema) Field(name string) *Field {
	if s == nil {
		return nil
	}
	if s.fieldIndex != nil {
		if i, ok := s.fieldIndex[name]; ok {
			return &s.Fields[i]
		}
		return nil
	}
	for i := range s.Fields {
		if s.Fields[i].Name == name {
			return &s.Fields[i]
		}
	}
	return nil
}

// String renders the schema for error messages.
func (s *Schema) String() string {
	if s == nil {
		return "null"
	}
	if s.Name != "" {
		return "Schema{" + s.Name + ":" + s.Type.String() + "}"
	}
	return "Schema{" + s.Type.String() + "}"
}

// Equal reports deep equality, as Kafka's ConnectSchema.equals.
func (s *Schema) Equal(o *Schema) bool {
	if s == o {
		return true
	}
	if s == nil || o == nil {
		return false
	}
	if s.Type != o.Type || s.Optional != o.Optional || s.Name != o.Name || s.Doc != o.Doc ||
		!versionEqual(s.Version, o.Version) || !maps.Equal(s.Parameters, o.Parameters) ||
		!reflect.DeepEqual(s.Default, o.Default) || len(s.Fields) != len(o.Fields) ||
		!s.KeySchema.Equal(o.KeySchema) || !s.ValueSchema.Equal(o.ValueSchema) {
		return false
	}
	for i := range s.Fields {
		if s.Fields[i].Name != o.Fields[i].Name || !s.Fields[i].Schema.Equal(o.Fields[i].Schema) {
			return false
		}
	}
	return true
}

func versionEqual(a, b *int32) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// Predefined schemas, as Kafka's Schema.INT32_SCHEMA and friends.
var (
	Int8Schema            = &Schema{Type: Int8}
	Int16Schema           = &Schema{Type: Int16}
	Int32Schema           = &Schema{Type: Int32}
	Int64Schema           = &Schema{Type: Int64}
	Float32Schema         = &Schema{Type: Float32}
	Float64Schema         = &Schema{Type: Float64}
	BooleanSchema         = &Schema{Type: Boolean}
	StringSchema          = &Schema{Type: String}
	BytesSchema           = &Schema{Type: Bytes}
	OptionalInt8Schema    = &Schema{Type: Int8, Optional: true}
	OptionalInt16Schema   = &Schema{Type: Int16, Optional: true}
	OptionalInt32Schema   = &Schema{Type: Int32, Optional: true}
	OptionalInt64Schema   = &Schema{Type: Int64, Optional: true}
	OptionalFloat32Schema = &Schema{Type: Float32, Optional: true}
	OptionalFloat64Schema = &Schema{Type: Float64, Optional: true}
	OptionalBooleanSchema = &Schema{Type: Boolean, Optional: true}
	OptionalStringSchema  = &Schema{Type: String, Optional: true}
	OptionalBytesSchema   = &Schema{Type: Bytes, Optional: true}
)

// SchemaBuilder builds a Schema, as Kafka's SchemaBuilder:
//
//	s := connect.NewStruct().Name("user").
//		Field("id", connect.Int64Schema).
//		Field("email", connect.OptionalStringSchema).Build()
type SchemaBuilder struct {
	s   Schema
	err error
}

// NewSchema starts a schema of type t.
func NewSchema(t Type) *SchemaBuilder { return &SchemaBuilder{s: Schema{Type: t}} }

// NewStruct starts a STRUCT schema.
func NewStruct() *SchemaBuilder { return NewSchema(StructType) }

// NewArray starts an ARRAY of elem.
func NewArray(elem *Schema) *SchemaBuilder {
	b := NewSchema(Array)
	b.s.ValueSchema = elem
	return b
}

// NewMap starts a MAP from key to value.
func NewMap(key, value *Schema) *SchemaBuilder {
	b := NewSchema(Map)
	b.s.KeySchema, b.s.ValueSchema = key, value
	return b
}

// FromSchema starts a builder holding a copy of s (to derive a schema).
func FromSchema(s *Schema) *SchemaBuilder {
	c := *s
	c.Parameters = maps.Clone(s.Parameters)
	c.Fields = slices.Clone(s.Fields)
	c.fieldIndex = nil
	c.paramOrder = s.ParameterKeys()
	return &SchemaBuilder{s: c}
}

func (b *SchemaBuilder) Optional() *SchemaBuilder       { b.s.Optional = true; return b }
func (b *SchemaBuilder) Required() *SchemaBuilder       { b.s.Optional = false; return b }
func (b *SchemaBuilder) Name(n string) *SchemaBuilder   { b.s.Name = n; return b }
func (b *SchemaBuilder) Doc(d string) *SchemaBuilder    { b.s.Doc = d; return b }
func (b *SchemaBuilder) Version(v int32) *SchemaBuilder { b.s.Version = &v; return b }
func (b *SchemaBuilder) Parameter(k, v string) *SchemaBuilder {
	if b.s.Parameters == nil {
		b.s.Parameters = map[string]string{}
	}
	if _, ok := b.s.Parameters[k]; !ok {
		b.s.paramOrder = append(b.s.paramOrder, k)
	}
	b.s.Parameters[k] = v
	return b
}

// Parameters replaces all parameters.
func (b *SchemaBuilder) Parameters(p map[string]string) *SchemaBuilder {
	b.s.Parameters = maps.Clone(p)
	b.s.paramOrder = slices.Sorted(maps.Keys(p))
	return b
}

// Default sets the default value; it must be valid for the schema.
func (b *SchemaBuilder) Default(v any) *SchemaBuilder {
	b.s.Default = v
	return b
}

// Field appends a STRUCT field.
func (b *SchemaBuilder) Field(name string, s *Schema) *SchemaBuilder {
	if b.s.Type != StructType {
		b.err = fmt.Errorf("cannot add field %q to a %s schema", name, b.s.Type)
		return b
	}
	if name == "" {
		b.err = fmt.Errorf("field name cannot be empty")
		return b
	}
	for _, f := range b.s.Fields {
		if f.Name == name {
			b.err = fmt.Errorf("Cannot create field because of field name duplication %s", name)
			return b
		}
	}
	b.s.Fields = append(b.s.Fields, Field{Name: name, Index: len(b.s.Fields), Schema: s})
	return b
}

// Build returns the schema, or panics if the builder was misused (a
// programming error, as in Kafka). Use BuildE to get the error.
func (b *SchemaBuilder) Build() *Schema {
	s, err := b.BuildE()
	if err != nil {
		panic(err)
	}
	return s
}

// BuildE returns the schema or the first building error.
func (b *SchemaBuilder) BuildE() (*Schema, error) {
	if b.err != nil {
		return nil, b.err
	}
	s := b.s
	s.Fields = slices.Clone(s.Fields)
	s.paramOrder = slices.Clone(s.paramOrder)
	if len(s.Fields) > 0 {
		s.fieldIndex = make(map[string]int, len(s.Fields))
		for i := range s.Fields {
			s.Fields[i].Index = i
			s.fieldIndex[s.Fields[i].Name] = i
		}
	}
	if s.Type == Array && s.ValueSchema == nil {
		return nil, fmt.Errorf("array schema needs an element schema")
	}
	if s.Type == Map && (s.KeySchema == nil || s.ValueSchema == nil) {
		return nil, fmt.Errorf("map schema needs key and value schemas")
	}
	if s.Default != nil {
		if err := Validate(&s, s.Default); err != nil {
			return nil, fmt.Errorf("invalid default value: %w", err)
		}
	}
	return &s, nil
}

// DataError is a value that does not match its schema (Kafka's
// DataException).
type DataError struct{ Msg string }

func (e *DataError) Error() string { return e.Msg }

func dataErrorf(format string, args ...any) error {
	return &DataError{Msg: fmt.Sprintf(format, args...)}
}

// Validate checks v against s as Kafka's ConnectSchema.validateValue: nil
// only for optional schemas (or when there is a default), Go types as
// listed in the package doc, logical types by their value types, struct
// values with an equal schema.
func Validate(s *Schema, v any) error {
	return validate("", s, v)
}

// forField is the " for field: \"f\"" suffix of validation messages, built
// only when a value is refused (validation runs for every struct put).
func forField(field string) string {
	if field == "" {
		return ""
	}
	return " for field: \"" + field + "\""
}

func validate(field string, s *Schema, v any) error {
	if v == nil {
		if s.Optional || s.Default != nil {
			return nil
		}
		return dataErrorf("Invalid value: null used for required field: %q, schema type: %s", field, s.Type)
	}
	if lt, ok := logicalTypes[s.Name]; ok && lt.base == s.Type {
		if !lt.accepts(v) {
			return dataErrorf("Invalid Java object for schema %q with type %s: %T%s", s.Name, s.Type, v, forField(field))
		}
		return nil
	}
	ok := false
	switch s.Type {
	case Int8:
		_, ok = v.(int8)
	case Int16:
		_, ok = v.(int16)
	case Int32:
		_, ok = v.(int32)
	case Int64:
		_, ok = v.(int64)
	case Float32:
		_, ok = v.(float32)
	case Float64:
		_, ok = v.(float64)
	case Boolean:
		_, ok = v.(bool)
	case String:
		_, ok = v.(string)
	case Bytes:
		_, ok = v.([]byte)
	case Array:
		var items []any
		if items, ok = v.([]any); ok {
			for _, it := range items {
				if err := validate(field, s.ValueSchema, it); err != nil {
					return err
				}
			}
		}
	case Map:
		switch m := v.(type) {
		case map[string]any:
			ok = s.KeySchema.Type == String
			for k, val := range m {
				if err := validate(field, s.KeySchema, k); err != nil {
					return err
				}
				if err := validate(field, s.ValueSchema, val); err != nil {
					return err
				}
			}
		case map[any]any:
			ok = true
			for k, val := range m {
				if err := validate(field, s.KeySchema, k); err != nil {
					return err
				}
				if err := validate(field, s.ValueSchema, val); err != nil {
					return err
				}
			}
		}
	case StructType:
		var st *Struct
		if st, ok = v.(*Struct); ok {
			if !st.Schema().Equal(s) {
				return dataErrorf("Struct schemas do not match.")
			}
			return st.Validate()
		}
	}
	if !ok {
		return dataErrorf("Invalid Java object for schema with type %s: %T%s", s.Type, v, forField(field))
	}
	return nil
}
