package avro

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/converters/avro/avsc"
)

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func sortEntries(es [][2]any) {
	slices.SortFunc(es, func(a, b [2]any) int { return strings.Compare(fmt.Sprint(a[0]), fmt.Sprint(b[0])) })
}

// branchName is how goavro names a union branch: the full name of a
// named type, else the type name (codecs are built from the Parsing
// Canonical Form, so logical types are plain base types).
func branchName(s *avsc.Schema) string {
	if s.IsNamed() {
		return s.FullName()
	}
	return string(s.Type)
}

// writeBranchName is branchName in the writing codec, where maps are
// arrays of entries (see Converter.codec).
func writeBranchName(s *avsc.Schema) string {
	if s.Type == avsc.Map {
		return string(avsc.Array)
	}
	return branchName(s)
}

// toAvro converts a Connect value to goavro's native form for a (the
// Avro schema fromConnectSchema made for s), as AvroData.fromConnectData.
func toAvro(s *connect.Schema, a *avsc.Schema, v any) (any, error) {
	if v == nil {
		// A struct field's default was applied by Struct.GetField.
		if !s.Optional {
			return nil, dataErr("Found null value for non-optional schema")
		}
		return nil, nil
	}
	if a.Type == avsc.Union {
		if s.Type == connect.StructType && s.Name == unionName {
			st, ok := v.(*connect.Struct)
			if !ok {
				return nil, dataErr("Invalid value for union %s: %T", s, v)
			}
			for i := range s.Fields {
				f := &s.Fields[i]
				fv := st.GetField(f)
				if fv == nil {
					continue
				}
				for _, b := range a.Branches {
					if b.Type == avsc.Null {
						continue
					}
					if memberName(b) == f.Name {
						nv, err := toAvro(nonOptional(f.Schema), b, fv)
						if err != nil {
							return nil, err
						}
						return map[string]any{writeBranchName(b): nv}, nil
					}
				}
				return nil, dataErr("union member %s has no Avro branch", f.Name)
			}
			return nil, nil
		}
		// An optional schema: [null, T] or [T, null].
		for _, b := range a.Branches {
			if b.Type != avsc.Null {
				nv, err := toAvro(s, b, v)
				if err != nil {
					return nil, err
				}
				return map[string]any{writeBranchName(b): nv}, nil
			}
		}
		return nil, dataErr("union %s has no non-null branch", a)
	}
	v, err := toAvroLogical(s, v)
	if err != nil {
		return nil, err
	}
	bad := func() error {
		return dataErr("Invalid type for %s: %T", s.Type, v)
	}
	switch s.Type {
	case connect.Int8:
		n, ok := v.(int8)
		if !ok {
			return nil, bad()
		}
		return int32(n), nil
	case connect.Int16:
		n, ok := v.(int16)
		if !ok {
			return nil, bad()
		}
		return int32(n), nil
	case connect.Int32:
		n, ok := v.(int32)
		if !ok {
			return nil, bad()
		}
		return n, nil
	case connect.Int64:
		n, ok := v.(int64)
		if !ok {
			return nil, bad()
		}
		return n, nil
	case connect.Float32:
		n, ok := v.(float32)
		if !ok {
			return nil, bad()
		}
		return n, nil
	case connect.Float64:
		n, ok := v.(float64)
		if !ok {
			return nil, bad()
		}
		return n, nil
	case connect.Boolean:
		b, ok := v.(bool)
		if !ok {
			return nil, bad()
		}
		return b, nil
	case connect.String:
		str, ok := v.(string)
		if !ok {
			return nil, bad()
		}
		if a.Type == avsc.Enum && !slices.Contains(a.Symbols, str) {
			return nil, dataErr("%q is not a symbol of enum %s", str, a.FullName())
		}
		return str, nil
	case connect.Bytes:
		b, ok := v.([]byte)
		if !ok {
			return nil, bad()
		}
		if a.Type == avsc.Fixed {
			if len(b) > a.Size {
				return nil, dataErr("value of %d bytes is too long for fixed %s of size %d", len(b), a.FullName(), a.Size)
			}
			if len(b) < a.Size {
				// Decimals are sign-extended to the fixed size.
				pad := byte(0)
				if len(b) > 0 && b[0]&0x80 != 0 && s.Name == connect.DecimalName {
					pad = 0xff
				}
				p := make([]byte, a.Size-len(b), a.Size)
				for i := range p {
					p[i] = pad
				}
				b = append(p, b...)
			}
		}
		return b, nil
	case connect.Array:
		items, ok := v.([]any)
		if !ok {
			return nil, bad()
		}
		out := make([]any, len(items))
		for i, it := range items {
			nv, err := toAvro(s.ValueSchema, a.Items, it)
			if err != nil {
				return nil, err
			}
			out[i] = nv
		}
		return out, nil
	case connect.Map:
		if a.Type == avsc.Map {
			// Entries sorted by key, for the writing codec's array of
			// records (see Converter.codec): equal maps, equal bytes.
			m, ok := v.(map[string]any)
			if !ok {
				return nil, bad()
			}
			out := make([]any, 0, len(m))
			for _, k := range sortedKeys(m) {
				nv, err := toAvro(s.ValueSchema, a.Values, m[k])
				if err != nil {
					return nil, err
				}
				out = append(out, map[string]any{"key": k, "value": nv})
			}
			return out, nil
		}
		entry := a.Items
		var out []any
		for _, e := range mapEntries(v) {
			k, err := toAvro(s.KeySchema, entry.Fields[0].Type, e[0])
			if err != nil {
				return nil, err
			}
			val, err := toAvro(s.ValueSchema, entry.Fields[1].Type, e[1])
			if err != nil {
				return nil, err
			}
			out = append(out, map[string]any{"key": k, "value": val})
		}
		if out == nil {
			out = []any{}
		}
		return out, nil
	case connect.StructType:
		st, ok := v.(*connect.Struct)
		if !ok {
			return nil, bad()
		}
		if !st.Schema().Equal(s) {
			return nil, dataErr("Mismatching struct schema")
		}
		out := make(map[string]any, len(s.Fields))
		for i := range s.Fields {
			f := &s.Fields[i]
			nv, err := toAvro(f.Schema, a.Fields[i].Type, st.GetField(f))
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Name, err)
			}
			out[a.Fields[i].Name] = nv
		}
		return out, nil
	}
	return nil, dataErr("Unknown schema type: %s", s.Type)
}

// memberName is the Connect field name of a union member
// (AvroData.unionMemberFieldName without enhanced support).
func memberName(b *avsc.Schema) string {
	if b.IsNamed() {
		return b.Name
	}
	return string(b.Type)
}

// toConnectSchema is AvroData.toConnectSchema: version is the registry
// version to use when the schema carries no connect.version (nil: none).
func (d *avroData) toConnectSchema(a *avsc.Schema, version *int32) (*connect.Schema, error) {
	return d.toConnect(a, false, nil, false, version, map[*avsc.Schema]bool{})
}

func (d *avroData) toConnect(a *avsc.Schema, forceOptional bool, fieldDefault any, hasFieldDefault bool, version *int32, inProgress map[*avsc.Schema]bool) (*connect.Schema, error) {
	if inProgress[a] {
		return nil, dataErr("recursive Avro schema %s cannot be converted to a Connect schema", a.FullName())
	}
	logical := a.StringProp(logicalTypeProp)
	var b *connect.SchemaBuilder
	switch a.Type {
	case avsc.Boolean:
		b = connect.NewSchema(connect.Boolean)
	case avsc.Bytes, avsc.Fixed:
		if strings.EqualFold(logical, logicalDecimal) {
			scale := int32(0)
			if n, ok := a.Prop("scale").(json.Number); ok {
				v, _ := n.Int64()
				scale = int32(v)
			}
			b = connect.DecimalSchema(scale)
			if p := a.Prop("precision"); p != nil {
				n, ok := p.(json.Number)
				if !ok {
					return nil, dataErr("precision property must be a JSON Integer. https://avro.apache.org/docs/1.9.1/spec.html#Decimal")
				}
				if v, _ := n.Int64(); v != defaultPrecision {
					b.Parameter(paramPrecision, strconv.FormatInt(v, 10))
				}
			}
		} else {
			b = connect.NewSchema(connect.Bytes)
		}
		if a.Type == avsc.Fixed {
			b.Parameter(paramFixedSize, strconv.Itoa(a.Size))
		}
	case avsc.Double:
		b = connect.NewSchema(connect.Float64)
	case avsc.Float:
		b = connect.NewSchema(connect.Float32)
	case avsc.Int:
		t := a.StringProp(propType)
		switch {
		case t == "" && logical == "":
			b = connect.NewSchema(connect.Int32)
		case strings.EqualFold(logical, logicalDate):
			b = connect.DateSchema()
		case strings.EqualFold(logical, logicalTimeMillis):
			b = connect.TimeSchema()
		case logical != "":
			b = connect.NewSchema(connect.Int32)
		case t == "int8":
			b = connect.NewSchema(connect.Int8)
		case t == "int16":
			b = connect.NewSchema(connect.Int16)
		default:
			return nil, dataErr("Connect type annotation for Avro int field is null")
		}
	case avsc.Long:
		if strings.EqualFold(logical, logicalTimestampMs) {
			b = connect.TimestampSchema()
		} else {
			b = connect.NewSchema(connect.Int64)
		}
	case avsc.String:
		b = connect.NewSchema(connect.String)
	case avsc.Array:
		if isMapEntry(a.Items) {
			e := a.Items
			if len(e.Fields) != 2 || e.Field("key") == nil || e.Field("value") == nil {
				return nil, dataErr("Found map encoded as array of key-value pairs, but array elements do not match the expected format.")
			}
			k, err := d.toConnect(e.Field("key").Type, false, nil, false, nil, inProgress)
			if err != nil {
				return nil, err
			}
			v, err := d.toConnect(e.Field("value").Type, false, nil, false, nil, inProgress)
			if err != nil {
				return nil, err
			}
			b = connect.NewMap(k, v)
		} else {
			items, err := d.toConnect(a.Items, false, nil, false, nil, inProgress)
			if err != nil {
				return nil, err
			}
			b = connect.NewArray(items)
		}
	case avsc.Map:
		values, err := d.toConnect(a.Values, false, nil, false, nil, inProgress)
		if err != nil {
			return nil, err
		}
		b = connect.NewMap(connect.StringSchema, values)
	case avsc.Record:
		b = connect.NewStruct()
		if d.connectMeta && a.Doc != nil {
			b.Parameter(recordDocParam, *a.Doc)
		}
		inProgress[a] = true
		for _, f := range a.Fields {
			if d.connectMeta && f.Doc != nil {
				b.Parameter(fieldDocPrefix+f.Name, *f.Doc)
			}
			fs, err := d.toConnect(f.Type, false, f.Default, f.HasDefault, nil, inProgress)
			if err != nil {
				return nil, err
			}
			b.Field(f.Name, fs)
		}
		delete(inProgress, a)
	case avsc.Enum:
		b = connect.NewSchema(connect.String)
		if d.connectMeta {
			if a.Doc != nil {
				b.Parameter(enumDocPrefix+a.Name, *a.Doc)
			}
			if a.EnumDefault != nil {
				b.Parameter(enumDefaultPrefix+a.Name, *a.EnumDefault)
			}
		}
		b.Parameter(enumParam, a.FullName())
		for _, sym := range a.Symbols {
			b.Parameter(enumParam+"."+sym, sym)
		}
	case avsc.Union:
		if len(a.Branches) == 2 {
			for i, br := range a.Branches {
				if br.Type == avsc.Null {
					return d.toConnect(a.Branches[1-i], true, nil, false, nil, inProgress)
				}
			}
		}
		b = connect.NewStruct().Name(unionName)
		seen := map[string]bool{}
		for _, br := range a.Branches {
			if br.Type == avsc.Null {
				b.Optional()
				continue
			}
			name := memberName(br)
			if seen[name] {
				return nil, dataErr("Multiple union schemas map to the Connect union field name")
			}
			seen[name] = true
			fs, err := d.toConnect(br, true, nil, false, nil, inProgress)
			if err != nil {
				return nil, err
			}
			b.Field(name, fs)
		}
	case avsc.Null:
		return nil, dataErr("Standalone null schemas are not supported by this converter")
	default:
		return nil, dataErr("Couldn't translate unsupported schema type %s.", a.Type)
	}

	if d.connectMeta {
		if doc := a.StringProp(propDoc); doc != "" {
			b.Doc(doc)
		}
	}
	if v := a.Prop(propVersion); v != nil {
		n, ok := v.(json.Number)
		iv, err := n.Int64()
		if !ok || err != nil {
			return nil, dataErr("Invalid Connect version found: %s", avsc.AppendJSON(nil, v))
		}
		b.Version(int32(iv))
	} else if version != nil {
		b.Version(*version)
	}
	if p := a.Prop(propParameters); d.connectMeta && p != nil {
		obj, ok := p.(avsc.Object)
		if !ok {
			return nil, dataErr("Expected JSON object for schema parameters but found: %s", avsc.AppendJSON(nil, p))
		}
		for _, m := range obj {
			s, ok := m.Value.(string)
			if !ok {
				return nil, dataErr("Expected schema parameter values to be strings but found: %s", avsc.AppendJSON(nil, m.Value))
			}
			b.Parameter(m.Key, s)
		}
	}
	for _, m := range a.Props {
		if strings.HasPrefix(m.Key, "avro") {
			if s, ok := m.Value.(string); ok {
				b.Parameter(m.Key, s)
			} else {
				b.Parameter(m.Key, string(avsc.AppendJSON(nil, m.Value)))
			}
		}
	}
	connectDefault, hasConnectDefault := a.Props.Get(propDefault)
	if !hasFieldDefault && hasConnectDefault {
		fieldDefault, hasFieldDefault = connectDefault, true
	} else if hasFieldDefault && d.connectMeta && !hasConnectDefault {
		b.Parameter(fieldDefaultFlag, "true")
	}

	name := a.StringProp(propName)
	if name == "" && (a.Type == avsc.Record || a.Type == avsc.Enum || (a.Type == avsc.Fixed && !strings.EqualFold(logical, logicalDecimal))) {
		name = a.FullName()
	}
	if name != "" && !strings.HasPrefix(name, defaultFullNameStem) {
		if a.Type == avsc.Union {
			// unions keep their io.confluent.connect.avro.Union name
		} else {
			b.Name(name)
		}
	}
	if forceOptional {
		b.Optional()
	}
	s, err := b.BuildE()
	if err != nil {
		return nil, dataErr("%v", err)
	}
	if hasFieldDefault && fieldDefault != nil {
		// An invalid default is dropped, as Java logs and ignores it.
		if dv, err := defaultFromJSON(s, fieldDefault); err == nil && dv != nil {
			if withDefault, err := connect.FromSchema(s).Default(dv).BuildE(); err == nil {
				s = withDefault
			}
		}
	}
	return s, nil
}

func isMapEntry(a *avsc.Schema) bool {
	if a.Type != avsc.Record {
		return false
	}
	return (a.Namespace == namespace && a.Name == mapEntryName) || a.StringProp(propInternalType) == mapEntryName
}

// defaultFromJSON converts an Avro JSON default to a Connect value of s
// (AvroData.defaultValueFromAvro, without struct defaults).
func defaultFromJSON(s *connect.Schema, j any) (any, error) {
	if j == nil {
		return nil, nil
	}
	num := func() (json.Number, error) {
		n, ok := j.(json.Number)
		if !ok {
			return "", dataErr("default %v is not a number", j)
		}
		return n, nil
	}
	switch s.Type {
	case connect.Int8, connect.Int16, connect.Int32, connect.Int64:
		n, err := num()
		if err != nil {
			return nil, err
		}
		i, err := n.Int64()
		if err != nil {
			return nil, dataErr("default %s is not an integer", n)
		}
		switch {
		case s.Type == connect.Int8:
			return int8(i), nil
		case s.Type == connect.Int16:
			return int16(i), nil
		case s.Name == connect.DateName:
			return connect.DaysToDate(int32(i)), nil
		case s.Name == connect.TimeName:
			return connect.MillisToTime(int32(i)), nil
		case s.Type == connect.Int32:
			return int32(i), nil
		case s.Name == connect.TimestampName:
			return time.UnixMilli(i).UTC(), nil
		}
		return i, nil
	case connect.Float32, connect.Float64:
		n, err := num()
		if err != nil {
			return nil, err
		}
		f, err := n.Float64()
		if err != nil {
			return nil, dataErr("default %s is not a number", n)
		}
		if s.Type == connect.Float32 {
			return float32(f), nil
		}
		return f, nil
	case connect.Boolean:
		b, ok := j.(bool)
		if !ok {
			return nil, dataErr("default %v is not a boolean", j)
		}
		return b, nil
	case connect.String:
		str, ok := j.(string)
		if !ok {
			return nil, dataErr("default %v is not a string", j)
		}
		return str, nil
	case connect.Bytes:
		str, ok := j.(string)
		if !ok {
			return nil, dataErr("default %v is not a string", j)
		}
		b := make([]byte, 0, len(str))
		for _, r := range str {
			b = append(b, byte(r))
		}
		if s.Name == connect.DecimalName {
			return connect.DecimalFromBytes(s, b)
		}
		return b, nil
	case connect.Array:
		arr, ok := j.([]any)
		if !ok {
			return nil, dataErr("default %v is not an array", j)
		}
		out := make([]any, len(arr))
		for i, e := range arr {
			v, err := defaultFromJSON(s.ValueSchema, e)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case connect.Map:
		if obj, ok := j.(avsc.Object); ok && s.KeySchema.Type == connect.String {
			out := map[string]any{}
			for _, m := range obj {
				v, err := defaultFromJSON(s.ValueSchema, m.Value)
				if err != nil {
					return nil, err
				}
				out[m.Key] = v
			}
			return out, nil
		}
		arr, ok := j.([]any)
		if !ok {
			return nil, dataErr("default %v is not a map", j)
		}
		out := map[any]any{}
		for _, e := range arr {
			var k, v any
			switch x := e.(type) {
			case []any:
				if len(x) != 2 {
					return nil, dataErr("map default entry %v is not a pair", e)
				}
				k, v = x[0], x[1]
			case avsc.Object:
				k, _ = x.Get("key")
				v, _ = x.Get("value")
			default:
				return nil, dataErr("map default entry %v is not a pair", e)
			}
			kv, err := defaultFromJSON(s.KeySchema, k)
			if err != nil {
				return nil, err
			}
			vv, err := defaultFromJSON(s.ValueSchema, v)
			if err != nil {
				return nil, err
			}
			out[kv] = vv
		}
		return out, nil
	}
	return nil, dataErr("struct defaults are not converted")
}

// fromAvro converts goavro's native value (decoded with a's canonical
// form) to a Connect value of s (AvroData.toConnectData).
func fromAvro(s *connect.Schema, a *avsc.Schema, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	if a.Type == avsc.Union {
		m, ok := v.(map[string]any)
		if !ok || len(m) != 1 {
			return nil, dataErr("union value %T is not a single branch", v)
		}
		for name, bv := range m {
			for _, br := range a.Branches {
				if branchName(br) != name {
					continue
				}
				if s.Type == connect.StructType && s.Name == unionName {
					st := connect.NewStructValue(s)
					f := s.Field(memberName(br))
					if f == nil {
						return nil, dataErr("union branch %s has no Connect field", name)
					}
					fv, err := fromAvro(f.Schema, br, bv)
					if err != nil {
						return nil, err
					}
					st.PutFieldUnchecked(f, fv)
					return st, nil
				}
				return fromAvro(s, br, bv)
			}
			return nil, dataErr("union has no branch %s", name)
		}
	}
	bad := func() error { return dataErr("Avro value %T does not match %s", v, a.Type) }
	switch s.Type {
	case connect.Int8, connect.Int16, connect.Int32:
		n, ok := v.(int32)
		if !ok {
			return nil, bad()
		}
		switch {
		case s.Type == connect.Int8:
			return int8(n), nil
		case s.Type == connect.Int16:
			return int16(n), nil
		case s.Name == connect.DateName:
			return connect.DaysToDate(n), nil
		case s.Name == connect.TimeName:
			return connect.MillisToTime(n), nil
		}
		return n, nil
	case connect.Int64:
		n, ok := v.(int64)
		if !ok {
			return nil, bad()
		}
		if s.Name == connect.TimestampName {
			return time.UnixMilli(n).UTC(), nil
		}
		return n, nil
	case connect.Float32:
		n, ok := v.(float32)
		if !ok {
			return nil, bad()
		}
		return n, nil
	case connect.Float64:
		n, ok := v.(float64)
		if !ok {
			return nil, bad()
		}
		return n, nil
	case connect.Boolean:
		n, ok := v.(bool)
		if !ok {
			return nil, bad()
		}
		return n, nil
	case connect.String:
		n, ok := v.(string)
		if !ok {
			return nil, bad()
		}
		return n, nil
	case connect.Bytes:
		n, ok := v.([]byte)
		if !ok {
			return nil, bad()
		}
		if s.Name == connect.DecimalName {
			return connect.DecimalFromBytes(s, n)
		}
		// goavro's bytes share the message buffer, which the runtime reuses.
		return bytes.Clone(n), nil
	case connect.Array:
		items, ok := v.([]any)
		if !ok {
			return nil, bad()
		}
		out := make([]any, len(items))
		for i, it := range items {
			cv, err := fromAvro(s.ValueSchema, a.Items, it)
			if err != nil {
				return nil, err
			}
			out[i] = cv
		}
		return out, nil
	case connect.Map:
		if a.Type == avsc.Map {
			m, ok := v.(map[string]any)
			if !ok {
				return nil, bad()
			}
			out := make(map[string]any, len(m))
			for k, val := range m {
				cv, err := fromAvro(s.ValueSchema, a.Values, val)
				if err != nil {
					return nil, err
				}
				out[k] = cv
			}
			return out, nil
		}
		items, ok := v.([]any)
		if !ok {
			return nil, bad()
		}
		entry := a.Items
		stringKeys := s.KeySchema.Type == connect.String
		outS, outA := map[string]any{}, map[any]any{}
		for _, it := range items {
			e, ok := it.(map[string]any)
			if !ok {
				return nil, bad()
			}
			k, err := fromAvro(s.KeySchema, entry.Fields[0].Type, e["key"])
			if err != nil {
				return nil, err
			}
			val, err := fromAvro(s.ValueSchema, entry.Fields[1].Type, e["value"])
			if err != nil {
				return nil, err
			}
			if stringKeys {
				ks, _ := k.(string)
				outS[ks] = val
			} else {
				if !comparable(k) {
					return nil, dataErr("map key of type %T cannot be a Go map key", k)
				}
				outA[k] = val
			}
		}
		if stringKeys {
			return outS, nil
		}
		return outA, nil
	case connect.StructType:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, bad()
		}
		st := connect.NewStructValue(s)
		for i := range s.Fields {
			f := &s.Fields[i]
			af := a.Field(f.Name)
			if af == nil {
				continue
			}
			cv, err := fromAvro(f.Schema, af.Type, m[f.Name])
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Name, err)
			}
			st.PutFieldUnchecked(f, cv)
		}
		return st, nil
	}
	return nil, dataErr("Unknown schema type: %s", s.Type)
}

// comparable reports whether v can key a Go map (Connect map keys of
// struct, array or bytes type cannot).
func comparable(v any) bool {
	switch v.(type) {
	case []byte, []any, map[string]any, map[any]any:
		return false
	}
	return true
}
