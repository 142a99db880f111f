package avro

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/converters/avro/avsc"
)

// Names and properties of Confluent's AvroData
// (io.confluent.connect.avro.AvroData), which this file follows.
const (
	namespace           = "io.confluent.connect.avro"
	defaultSchemaName   = "ConnectDefault"
	mapEntryName        = "MapEntry"
	unionName           = namespace + ".Union"
	enumParam           = namespace + ".Enum"
	recordDocParam      = namespace + ".record.doc"
	fieldDocPrefix      = namespace + ".field.doc."
	fieldDefaultFlag    = namespace + ".field.default"
	enumDocPrefix       = namespace + ".enum.doc."
	enumDefaultPrefix   = namespace + ".enum.default."
	propName            = "connect.name"
	propDoc             = "connect.doc"
	propVersion         = "connect.version"
	propDefault         = "connect.default"
	propParameters      = "connect.parameters"
	propType            = "connect.type"
	propInternalType    = "connect.internal.type"
	paramFixedSize      = "connect.fixed.size"
	paramPrecision      = "connect.decimal.precision"
	defaultPrecision    = 64
	logicalTypeProp     = "logicalType"
	logicalDecimal      = "decimal"
	logicalDate         = "date"
	logicalTimeMillis   = "time-millis"
	logicalTimestampMs  = "timestamp-millis"
	defaultFullNameStem = namespace + "." + defaultSchemaName
)

func dataErr(format string, args ...any) error {
	return &connect.DataError{Msg: fmt.Sprintf(format, args...)}
}

// avroData converts between Connect and Avro schemas and values, as
// Confluent's AvroData with its default config (connect.meta.data=true,
// enhanced.avro.schema.support=false, scrub.invalid.names=false).
type avroData struct {
	connectMeta bool
}

// fromCtx carries one conversion's state: Connect schemas already
// converted (equal ones share one Avro schema, so the printer writes a
// repeated record by name) and the ConnectDefault name counter.
type fromCtx struct {
	done      []converted
	nameIndex int
}

type converted struct {
	c *connect.Schema
	a *avsc.Schema
}

// fromConnectSchema is AvroData.fromConnectSchema.
func (d *avroData) fromConnectSchema(s *connect.Schema) (*avsc.Schema, error) {
	if s == nil {
		return anythingSchema, nil
	}
	return d.fromConnect(s, &fromCtx{}, false)
}

func (d *avroData) fromConnect(s *connect.Schema, ctx *fromCtx, ignoreOptional bool) (*avsc.Schema, error) {
	if !s.Optional && s.Name != unionName {
		for _, c := range ctx.done {
			if c.c.Equal(s) {
				return c.a, nil
			}
		}
	}
	var base *avsc.Schema
	connectType := ""
	switch s.Type {
	case connect.Int8:
		connectType, base = "int8", &avsc.Schema{Type: avsc.Int}
	case connect.Int16:
		connectType, base = "int16", &avsc.Schema{Type: avsc.Int}
	case connect.Int32:
		base = &avsc.Schema{Type: avsc.Int}
	case connect.Int64:
		base = &avsc.Schema{Type: avsc.Long}
	case connect.Float32:
		base = &avsc.Schema{Type: avsc.Float}
	case connect.Float64:
		base = &avsc.Schema{Type: avsc.Double}
	case connect.Boolean:
		base = &avsc.Schema{Type: avsc.Boolean}
	case connect.String:
		base = &avsc.Schema{Type: avsc.String}
	case connect.Bytes:
		if size, ok := s.Parameters[paramFixedSize]; ok && s.Name != "" {
			n, err := strconv.Atoi(size)
			if err != nil {
				return nil, dataErr("invalid %s %q", paramFixedSize, size)
			}
			ns, name := d.nameOrDefault(ctx, s.Name)
			base = &avsc.Schema{Type: avsc.Fixed, Name: name, Namespace: ns, Size: n}
		} else {
			base = &avsc.Schema{Type: avsc.Bytes}
		}
		if strings.EqualFold(s.Name, connect.DecimalName) {
			scale, err := strconv.Atoi(s.Parameters[connect.DecimalScaleParam])
			if err != nil {
				return nil, dataErr("Invalid Decimal schema: scale parameter not found.")
			}
			precision := defaultPrecision
			if p, ok := s.Parameters[paramPrecision]; ok {
				if precision, err = strconv.Atoi(p); err != nil {
					return nil, dataErr("invalid %s %q", paramPrecision, p)
				}
			}
			base.Props = base.Props.With("scale", jsonInt(int64(scale))).With("precision", jsonInt(int64(precision)))
		}
	case connect.Array:
		items, err := d.fromConnect(s.ValueSchema, ctx, false)
		if err != nil {
			return nil, err
		}
		base = &avsc.Schema{Type: avsc.Array, Items: items}
	case connect.Map:
		if s.KeySchema.Type == connect.String && !s.KeySchema.Optional {
			values, err := d.fromConnect(s.ValueSchema, ctx, false)
			if err != nil {
				return nil, err
			}
			base = &avsc.Schema{Type: avsc.Map, Values: values}
			break
		}
		// Avro maps have string keys: other keys become an array of
		// key/value records.
		entry := &avsc.Schema{Type: avsc.Record, Name: mapEntryName, Namespace: namespace}
		if s.Name != "" {
			entry.Namespace, entry.Name = d.nameOrDefault(ctx, s.Name)
			entry.Props = entry.Props.With(propInternalType, mapEntryName)
		}
		for i, f := range []struct {
			name string
			s    *connect.Schema
		}{{"key", s.KeySchema}, {"value", s.ValueSchema}} {
			field, err := d.field(f.name, f.s, nil, ctx)
			if err != nil {
				return nil, err
			}
			field.Pos = i
			entry.Fields = append(entry.Fields, field)
		}
		base = &avsc.Schema{Type: avsc.Array, Items: entry}
	case connect.StructType:
		switch {
		case s.Name == unionName:
			u := &avsc.Schema{Type: avsc.Union}
			if s.Optional {
				u.Branches = append(u.Branches, &avsc.Schema{Type: avsc.Null})
			}
			for _, f := range s.Fields {
				b, err := d.fromConnect(nonOptional(f.Schema), ctx, true)
				if err != nil {
					return nil, err
				}
				u.Branches = append(u.Branches, b)
			}
			base = u
		case s.Optional:
			inner, err := d.fromConnect(nonOptional(s), ctx, false)
			if err != nil {
				return nil, err
			}
			base = &avsc.Schema{Type: avsc.Union, Branches: []*avsc.Schema{{Type: avsc.Null}, inner}}
		default:
			ns, name := d.nameOrDefault(ctx, s.Name)
			rec := &avsc.Schema{Type: avsc.Record, Name: name, Namespace: ns}
			if doc, ok := s.Parameters[recordDocParam]; ok {
				rec.Doc = &doc
			}
			// Registered before the fields, so a field of the same schema
			// is written by name.
			ctx.done = append(ctx.done, converted{s, rec})
			for i, f := range s.Fields {
				var doc *string
				if fd, ok := s.Parameters[fieldDocPrefix+f.Name]; ok {
					doc = &fd
				}
				field, err := d.field(f.Name, f.Schema, doc, ctx)
				if err != nil {
					return nil, err
				}
				field.Pos = i
				rec.Fields = append(rec.Fields, field)
			}
			base = rec
		}
	default:
		return nil, dataErr("Unknown schema type: %s", s.Type)
	}

	final := base
	if base.Type != avsc.Union {
		if d.connectMeta {
			if s.Doc != "" {
				base.Props = base.Props.With(propDoc, s.Doc)
			}
			if s.Version != nil {
				base.Props = base.Props.With(propVersion, jsonInt(int64(*s.Version)))
			}
			if keys := s.ParameterKeys(); len(keys) > 0 {
				var params avsc.Object
				for _, k := range keys {
					if k != fieldDefaultFlag {
						params = append(params, avsc.Member{Key: k, Value: s.Parameters[k]})
					}
				}
				if len(params) > 0 {
					base.Props = base.Props.With(propParameters, params)
				}
			}
			if s.Default != nil {
				if _, flagged := s.Parameters[fieldDefaultFlag]; !flagged {
					dv, err := d.defaultToJSON(s, s.Default)
					if err != nil {
						return nil, err
					}
					base.Props = base.Props.With(propDefault, dv)
				}
			}
			if s.Name != "" {
				base.Props = base.Props.With(propName, s.Name)
			}
			if connectType != "" {
				base.Props = base.Props.With(propType, connectType)
			}
		}
		switch {
		case strings.EqualFold(s.Name, connect.DecimalName):
			base.Props = base.Props.With(logicalTypeProp, logicalDecimal)
		case strings.EqualFold(s.Name, connect.TimeName):
			base.Props = base.Props.With(logicalTypeProp, logicalTimeMillis)
		case strings.EqualFold(s.Name, connect.TimestampName):
			base.Props = base.Props.With(logicalTypeProp, logicalTimestampMs)
		case strings.EqualFold(s.Name, connect.DateName):
			base.Props = base.Props.With(logicalTypeProp, logicalDate)
		}
		for _, k := range s.ParameterKeys() {
			if strings.HasPrefix(k, "avro") {
				base.Props = base.Props.With(k, s.Parameters[k])
			}
		}
		if !ignoreOptional && s.Optional {
			if s.Default != nil {
				final = &avsc.Schema{Type: avsc.Union, Branches: []*avsc.Schema{base, {Type: avsc.Null}}}
			} else {
				final = &avsc.Schema{Type: avsc.Union, Branches: []*avsc.Schema{{Type: avsc.Null}, base}}
			}
		}
	}
	if !s.Optional && !(s.Type == connect.StructType && s.Name != unionName) {
		ctx.done = append(ctx.done, converted{s, final})
	}
	return final, nil
}

// field is AvroData.addAvroRecordField: the default is the schema's
// default, or null for an optional schema; an invalid default is
// dropped, as Java does.
func (d *avroData) field(name string, s *connect.Schema, doc *string, ctx *fromCtx) (*avsc.Field, error) {
	t, err := d.fromConnect(s, ctx, false)
	if err != nil {
		return nil, err
	}
	f := &avsc.Field{Name: name, Type: t, Doc: doc, Order: "ascending"}
	switch {
	case s.Default != nil:
		dv, err := d.defaultToJSON(s, s.Default)
		if err != nil {
			return nil, err
		}
		f.Default, f.HasDefault = dv, true
	case s.Optional:
		f.Default, f.HasDefault = nil, true
	}
	if f.HasDefault && !avsc.ValidDefault(t, f.Default) {
		f.Default, f.HasDefault = nil, false
	}
	return f, nil
}

func nonOptional(s *connect.Schema) *connect.Schema {
	if !s.Optional {
		return s
	}
	return connect.FromSchema(s).Required().Build()
}

// nameOrDefault splits a Connect name into namespace and name, or
// numbers ConnectDefault names.
func (d *avroData) nameOrDefault(ctx *fromCtx, name string) (string, string) {
	if name != "" {
		if i := strings.LastIndexByte(name, '.'); i >= 0 {
			return name[:i], name[i+1:]
		}
		return "", name
	}
	ctx.nameIndex++
	if ctx.nameIndex > 1 {
		return namespace, defaultSchemaName + strconv.Itoa(ctx.nameIndex)
	}
	return namespace, defaultSchemaName
}

func jsonInt(i int64) json.Number { return json.Number(strconv.FormatInt(i, 10)) }

// defaultToJSON is AvroData.defaultValueFromConnect.
func (d *avroData) defaultToJSON(s *connect.Schema, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	v, err := toAvroLogical(s, v)
	if err != nil {
		return nil, err
	}
	bad := func() error {
		return dataErr("Invalid type used for default value of %s field: %T", s.Type, v)
	}
	switch s.Type {
	case connect.Int8, connect.Int16, connect.Int32, connect.Int64:
		switch n := v.(type) {
		case int8:
			return jsonInt(int64(n)), nil
		case int16:
			return jsonInt(int64(n)), nil
		case int32:
			return jsonInt(int64(n)), nil
		case int64:
			return jsonInt(n), nil
		}
		return nil, bad()
	case connect.Float32:
		f, ok := v.(float32)
		if !ok {
			return nil, bad()
		}
		return json.Number(strconv.FormatFloat(float64(f), 'g', -1, 32)), nil
	case connect.Float64:
		f, ok := v.(float64)
		if !ok {
			return nil, bad()
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, dataErr("default %v cannot be written as JSON", f)
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), nil
	case connect.Boolean, connect.String:
		return v, nil
	case connect.Bytes:
		b, ok := v.([]byte)
		if !ok {
			return nil, bad()
		}
		// ISO-8859-1: one char per byte, as Java.
		r := make([]rune, len(b))
		for i, c := range b {
			r[i] = rune(c)
		}
		return string(r), nil
	case connect.Array:
		items, ok := v.([]any)
		if !ok {
			return nil, bad()
		}
		out := []any{}
		for _, it := range items {
			j, err := d.defaultToJSON(s.ValueSchema, it)
			if err != nil {
				return nil, err
			}
			out = append(out, j)
		}
		return out, nil
	case connect.Map:
		if s.KeySchema.Type == connect.String && !s.KeySchema.Optional {
			m, ok := v.(map[string]any)
			if !ok {
				return nil, bad()
			}
			out := avsc.Object{}
			for _, k := range sortedKeys(m) {
				j, err := d.defaultToJSON(s.ValueSchema, m[k])
				if err != nil {
					return nil, err
				}
				out = append(out, avsc.Member{Key: k, Value: j})
			}
			return out, nil
		}
		out := []any{}
		for _, e := range mapEntries(v) {
			kj, err := d.defaultToJSON(s.KeySchema, e[0])
			if err != nil {
				return nil, err
			}
			vj, err := d.defaultToJSON(s.ValueSchema, e[1])
			if err != nil {
				return nil, err
			}
			out = append(out, []any{kj, vj})
		}
		return out, nil
	case connect.StructType:
		st, ok := v.(*connect.Struct)
		if !ok {
			return nil, bad()
		}
		out := avsc.Object{}
		for i := range s.Fields {
			f := &s.Fields[i]
			j, err := d.defaultToJSON(f.Schema, st.GetField(f))
			if err != nil {
				return nil, err
			}
			if s.Name == unionName {
				if st.GetField(f) != nil {
					return j, nil
				}
				continue
			}
			out = append(out, avsc.Member{Key: f.Name, Value: j})
		}
		return out, nil
	}
	return nil, dataErr("Unknown schema type:%s", s.Type)
}

// toAvroLogical turns a logical type's Go value into its base value.
func toAvroLogical(s *connect.Schema, v any) (any, error) {
	switch s.Name {
	case connect.DecimalName:
		dec, ok := v.(connect.Decimal)
		if !ok {
			return v, nil
		}
		return connect.DecimalToBytes(s, dec)
	case connect.DateName:
		t, ok := v.(time.Time)
		if !ok {
			return v, nil
		}
		return connect.DateToDays(t)
	case connect.TimeName:
		t, ok := v.(time.Time)
		if !ok {
			return v, nil
		}
		return connect.TimeToMillis(t)
	case connect.TimestampName:
		t, ok := v.(time.Time)
		if !ok {
			return v, nil
		}
		return t.UnixMilli(), nil
	}
	return v, nil
}

// mapEntries lists a map value's entries in a stable order.
func mapEntries(v any) [][2]any {
	var out [][2]any
	switch m := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(m) {
			out = append(out, [2]any{k, m[k]})
		}
	case map[any]any:
		for k, val := range m {
			out = append(out, [2]any{k, val})
		}
		sortEntries(out)
	}
	return out
}
