package connect

import (
	"fmt"
	"strings"
)

// Struct is a value of a STRUCT schema: a value per field, in field order.
type Struct struct {
	schema *Schema
	values []any
}

// NewStructValue returns an empty struct of schema s (which must be a
// STRUCT schema).
func NewStructValue(s *Schema) *Struct {
	if s == nil || s.Type != StructType {
		panic(fmt.Sprintf("connect: NewStructValue needs a STRUCT schema, got %v", s))
	}
	// The struct and its values in one allocation (for up to 32 fields):
	// decoders and generators make one per record.
	switch n := len(s.Fields); {
	case n <= 4:
		p := &struct4{Struct: Struct{schema: s}}
		p.values = p.vals[:n:n]
		return &p.Struct
	case n <= 8:
		p := &struct8{Struct: Struct{schema: s}}
		p.values = p.vals[:n:n]
		return &p.Struct
	case n <= 12:
		p := &struct12{Struct: Struct{schema: s}}
		p.values = p.vals[:n:n]
		return &p.Struct
	case n <= 16:
		p := &struct16{Struct: Struct{schema: s}}
		p.values = p.vals[:n:n]
		return &p.Struct
	case n <= 32:
		p := &struct32{Struct: Struct{schema: s}}
		p.values = p.vals[:n:n]
		return &p.Struct
	}
	return &Struct{schema: s, values: make([]any, len(s.Fields))}
}

type (
	struct4 struct {
		Struct
		vals [4]any
	}
	struct8 struct {
		Struct
		vals [8]any
	}
	struct12 struct {
		Struct
		vals [12]any
	}
	struct16 struct {
		Struct
		vals [16]any
	}
	struct32 struct {
		Struct
		vals [32]any
	}
)

// Schema returns the struct's schema.
func (st *Struct) Schema() *Schema { return st.schema }

// Get returns a field's value, or its schema's default when unset. It
// returns an error for an unknown field, as Kafka's Struct.get throws.
func (st *Struct) Get(name string) (any, error) {
	f := st.schema.Field(name)
	if f == nil {
		return nil, dataErrorf("%s is not a valid field name", name)
	}
	return st.GetField(f), nil
}

// GetField returns the value of f (a field of this struct's schema), or
// its default when unset.
func (st *Struct) GetField(f *Field) any {
	v := st.values[f.Index]
	if v == nil {
		return f.Schema.Default
	}
	return v
}

// GetFieldWithoutDefault returns the value of f (a field of this struct's
// schema) as set, without applying its default: converters need to tell
// an unset field from one holding its default (Kafka's
// JsonConverter with replace.null.with.default=false).
func (st *Struct) GetFieldWithoutDefault(f *Field) any { return st.values[f.Index] }

// PutFieldUnchecked sets the value of f (a field of this struct's schema)
// without validating it. It is for decoders that build values already
// checked against the schema (converters), where Put's validation would
// cost as much as the decoding; everyone else uses Put.
func (st *Struct) PutFieldUnchecked(f *Field, v any) { st.values[f.Index] = v }

// GetWithoutDefault returns a field's value without applying its default.
func (st *Struct) GetWithoutDefault(name string) (any, error) {
	f := st.schema.Field(name)
	if f == nil {
		return nil, dataErrorf("%s is not a valid field name", name)
	}
	return st.values[f.Index], nil
}

// Put sets a field after validating the value against the field schema.
func (st *Struct) Put(name string, v any) error {
	f := st.schema.Field(name)
	if f == nil {
		return dataErrorf("%s is not a valid field name", name)
	}
	if err := validate(name, f.Schema, v); err != nil {
		return err
	}
	st.values[f.Index] = v
	return nil
}

// MustPut is Put for values known to be valid (tests, generated data).
func (st *Struct) MustPut(name string, v any) *Struct {
	if err := st.Put(name, v); err != nil {
		panic(err)
	}
	return st
}

// Validate checks that every required field is set (or has a default)
// and every value matches its field schema.
func (st *Struct) Validate() error {
	for i := range st.schema.Fields {
		f := &st.schema.Fields[i]
		if err := validate(f.Name, f.Schema, st.values[i]); err != nil {
			return err
		}
	}
	return nil
}

// Equal reports whether two structs have equal schemas and values.
func (st *Struct) Equal(o *Struct) bool {
	if st == nil || o == nil {
		return st == o
	}
	if !st.schema.Equal(o.schema) {
		return false
	}
	for i := range st.values {
		if !ValuesEqual(st.values[i], o.values[i]) {
			return false
		}
	}
	return true
}

// String renders the struct as Kafka's Struct.toString does:
// Struct{a=1,b=x}, skipping unset fields.
func (st *Struct) String() string {
	var b strings.Builder
	b.WriteString("Struct{")
	first := true
	for i, f := range st.schema.Fields {
		if st.values[i] == nil {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		fmt.Fprintf(&b, "%s=%v", f.Name, st.values[i])
	}
	b.WriteByte('}')
	return b.String()
}
