package sink

import (
	"fmt"
	"slices"
	"sort"

	"github.com/fjordhq/fjord/connect"
)

// source says where a column's value comes from in a record.
type source uint8

const (
	srcTopic source = iota
	srcPartition
	srcOffset
	srcKey        // a primitive key
	srcKeyField   // a field of a struct key
	srcValueField // a field of a struct value
	srcValue      // a STRING value
)

// field is one column of a write: Confluent's SinkRecordField.
type field struct {
	name   string
	schema *connect.Schema
	key    bool
	src    source
	f      *connect.Field // srcKeyField, srcValueField
}

// optional is Confluent's SinkRecordField.isOptional: key columns never are.
func (f *field) optional() bool { return !f.key && f.schema.Optional }

// shape is the columns of records with one key schema and value schema
// (Confluent's FieldsMetadata): key columns first, then the others.
type shape struct {
	keys, values []field
	// ordered is the column order of CREATE TABLE: Kafka coordinates,
	// then the value's fields, then the key fields not in the value.
	ordered []field
}

func (sh *shape) all() []field { return append(slices.Clone(sh.keys), sh.values...) }

// shapeOf works out the columns as Confluent's FieldsMetadata.extract does.
// A nil valueSchema (a delete) gives the key columns only.
func (s *settings) shapeOf(table string, keySchema, valueSchema *connect.Schema) (*shape, error) {
	if valueSchema != nil && valueSchema.Type != connect.StructType && valueSchema.Type != connect.String {
		return nil, fmt.Errorf("Value schema must be of type Struct or String, not %s", valueSchema.Type)
	}
	stringValue := valueSchema != nil && valueSchema.Type == connect.String
	sh := &shape{}
	keyNames := map[string]bool{}
	addKey := func(f field) {
		f.key = true
		keyNames[f.name] = true
		sh.keys = append(sh.keys, f)
	}
	switch s.pkMode {
	case PKModeKafka:
		names := s.pkFields
		if len(names) == 0 {
			names = defaultKafkaPKNames
		}
		addKey(field{name: names[0], schema: connect.StringSchema, src: srcTopic})
		addKey(field{name: names[1], schema: connect.Int32Schema, src: srcPartition})
		addKey(field{name: names[2], schema: connect.Int64Schema, src: srcOffset})
	case PKModeRecordKey:
		if keySchema == nil {
			return nil, fmt.Errorf("PK mode for table '%s' is RECORD_KEY, but record key schema is missing", table)
		}
		switch {
		case keySchema.Type.IsPrimitive():
			if len(s.pkFields) != 1 {
				return nil, fmt.Errorf("Need exactly one PK column defined since the key schema for records is a primitive type, defined columns are: %v", s.pkFields)
			}
			addKey(field{name: s.pkFields[0], schema: keySchema, src: srcKey})
		case keySchema.Type == connect.StructType:
			names := s.pkFields
			if len(names) == 0 {
				for _, f := range keySchema.Fields {
					names = append(names, f.Name)
				}
			}
			for _, n := range names {
				f := keySchema.Field(n)
				if f == nil {
					return nil, fmt.Errorf("PK mode for table '%s' is RECORD_KEY with configured PK fields %v, but record key schema does not contain field: %s", table, s.pkFields, n)
				}
				addKey(field{name: n, schema: f.Schema, src: srcKeyField, f: f})
			}
		default:
			return nil, fmt.Errorf("Key schema must be primitive type or Struct, but is of type: %s", keySchema.Type)
		}
	case PKModeRecordValue:
		if stringValue {
			return nil, fmt.Errorf("pk.mode record_value is not supported with String value schemas")
		}
		if valueSchema == nil {
			return nil, fmt.Errorf("PK mode for table '%s' is RECORD_VALUE, but record value schema is missing", table)
		}
		names := s.pkFields
		if len(names) == 0 {
			for _, f := range valueSchema.Fields {
				names = append(names, f.Name)
			}
		}
		for _, n := range names {
			f := valueSchema.Field(n)
			if f == nil {
				return nil, fmt.Errorf("PK mode for table '%s' is RECORD_VALUE with configured PK fields %v, but record value schema does not contain field: %s", table, s.pkFields, n)
			}
			addKey(field{name: n, schema: f.Schema, src: srcValueField, f: f})
		}
	}
	switch {
	case stringValue:
		if keyNames[s.stringValueColumn] {
			return nil, fmt.Errorf("Configured %s '%s' conflicts with a primary key column for table '%s'", StringValueColumnConfig, s.stringValueColumn, table)
		}
		sh.values = append(sh.values, field{name: s.stringValueColumn, schema: connect.OptionalStringSchema, src: srcValue})
	case valueSchema != nil:
		for i := range valueSchema.Fields {
			f := &valueSchema.Fields[i]
			if keyNames[f.Name] || (len(s.whitelist) > 0 && !s.whitelist[f.Name]) {
				continue
			}
			sh.values = append(sh.values, field{name: f.Name, schema: f.Schema, src: srcValueField, f: f})
		}
	}
	if len(sh.keys)+len(sh.values) == 0 {
		return nil, fmt.Errorf("No fields found using key and value schemas for table: %s", table)
	}
	// Confluent's allFieldsOrdered.
	byName := map[string]field{}
	for _, f := range sh.all() {
		byName[f.name] = f
	}
	add := func(n string) {
		if f, ok := byName[n]; ok {
			sh.ordered = append(sh.ordered, f)
			delete(byName, n)
		}
	}
	for _, n := range defaultKafkaPKNames {
		add(n)
	}
	if stringValue {
		add(s.stringValueColumn)
	} else if valueSchema != nil {
		for _, f := range valueSchema.Fields {
			add(f.Name)
		}
	}
	rest := make([]string, 0, len(byName))
	for n := range byName {
		rest = append(rest, n)
	}
	sort.Strings(rest)
	for _, n := range rest {
		add(n)
	}
	return sh, nil
}

// value returns f's value in r (the caller checked r's key and value
// against the shape's schemas).
func (f *field) value(r *connect.Record, replaceNull bool) (any, error) {
	switch f.src {
	case srcTopic:
		return r.Topic, nil
	case srcPartition:
		return r.Partition, nil
	case srcOffset:
		return r.Offset, nil
	case srcKey:
		return r.Key, nil
	case srcKeyField:
		st, ok := r.Key.(*connect.Struct)
		if !ok {
			return nil, fmt.Errorf("record key is a %T, its schema says STRUCT", r.Key)
		}
		return st.GetField(f.f), nil
	case srcValueField:
		st, ok := r.Value.(*connect.Struct)
		if !ok {
			return nil, fmt.Errorf("record value is a %T, its schema says STRUCT", r.Value)
		}
		if replaceNull {
			return st.GetField(f.f), nil
		}
		return st.GetFieldWithoutDefault(f.f), nil
	case srcValue:
		return r.Value, nil
	}
	return nil, nil
}
