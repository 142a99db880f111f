package datagen

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/fjordhq/fjord/connect"
)

// A spec describes generated data in one config value (value.schema,
// key.schema):
//
//	id:int64:seq, user:string:User_{1..9}, amount:float64:0..100, ok:boolean
//
// is a STRUCT with four fields; a lone TYPE[:GEN] (e.g. "int64:seq" or
// "string:8..16") is a primitive value. Types: int8, int16, int32 (int),
// int64 (long), float32 (float), float64 (double), boolean (bool),
// string, bytes, timestamp (Kafka's Timestamp logical type). Generators:
//
//	seq         the record's sequence number (0, 1, 2, ... across tasks)
//	MIN..MAX    uniform in [MIN, MAX] (floats: [MIN, MAX)); for string and
//	            bytes, a random length in [MIN, MAX]
//	a|b|c       one of the values
//	now         the wall clock (int64, timestamp; not reproducible)
//	text{...}   a string template: {MIN..MAX} is a random integer, {seq}
//	            the sequence number, e.g. User_{1..9}, order-{seq}
//
// Without a generator: integers uniform over the type, floats in [0, 1),
// random booleans, 8 random letters and digits, 16 random bytes, now.
// Names, values and templates cannot contain commas.
type spec struct {
	schema  *connect.Schema
	fields  []*fieldGen // one per STRUCT field, or one for a primitive
	struct_ bool
}

type genKind int8

const (
	genDefault genKind = iota
	genSeq
	genRange
	genOptions
	genNow
	genTemplate
	genFunc   // quickstarts: fn computes the value
	genStruct // quickstarts: a nested STRUCT built from sub
)

type fieldGen struct {
	name      string
	typ       connect.Type
	timestamp bool
	kind      genKind
	lo, hi    int64   // genRange for integers, lengths, timestamps
	flo, fhi  float64 // genRange for floats
	options   []any   // genOptions, boxed once
	template  []tmplPart
	fn        func(r *rng, seq int64, a *arena) any
	sub       *spec
	doc       string // the field schema's doc (quickstarts)
}

type tmplPart struct {
	text   string
	seq    bool
	random bool
	lo, hi int64
}

var typeNames = map[string]connect.Type{
	"int8": connect.Int8, "int16": connect.Int16, "int32": connect.Int32, "int": connect.Int32,
	"int64": connect.Int64, "long": connect.Int64, "float32": connect.Float32, "float": connect.Float32,
	"float64": connect.Float64, "double": connect.Float64, "boolean": connect.Boolean, "bool": connect.Boolean,
	"string": connect.String, "bytes": connect.Bytes, "timestamp": connect.Int64,
}

func isTypeName(s string) bool { _, ok := typeNames[strings.ToLower(strings.TrimSpace(s))]; return ok }

// parseSpec parses a spec; name names the STRUCT schema ("" for none).
func parseSpec(text, name string) (*spec, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, fmt.Errorf("empty spec")
	}
	items := strings.Split(text, ",")
	if len(items) == 1 {
		parts := strings.SplitN(items[0], ":", 3)
		if isTypeName(parts[0]) && (len(parts) == 1 || len(parts) == 2 && !isTypeName(parts[1])) {
			gen := ""
			if len(parts) == 2 {
				gen = parts[1]
			}
			f, err := parseField("", parts[0], gen)
			if err != nil {
				return nil, err
			}
			return &spec{schema: fieldSchema(f), fields: []*fieldGen{f}}, nil
		}
	}
	b := connect.NewStruct()
	if name != "" {
		b.Name(name)
	}
	sp := &spec{struct_: true}
	for _, it := range items {
		parts := strings.SplitN(it, ":", 3)
		if len(parts) < 2 {
			return nil, fmt.Errorf("field %q: want NAME:TYPE[:GENERATOR]", strings.TrimSpace(it))
		}
		fname := strings.TrimSpace(parts[0])
		gen := ""
		if len(parts) == 3 {
			gen = parts[2]
		}
		f, err := parseField(fname, parts[1], gen)
		if err != nil {
			return nil, err
		}
		if fname == "" {
			return nil, fmt.Errorf("field %q: empty name", strings.TrimSpace(it))
		}
		b.Field(fname, fieldSchema(f))
		sp.fields = append(sp.fields, f)
	}
	s, err := b.BuildE()
	if err != nil {
		return nil, err
	}
	sp.schema = s
	return sp, nil
}

func fieldSchema(f *fieldGen) *connect.Schema {
	if f.doc != "" {
		g := *f
		g.doc = ""
		return connect.FromSchema(fieldSchema(&g)).Doc(f.doc).Build()
	}
	if f.sub != nil {
		return f.sub.schema
	}
	if f.timestamp {
		return timestampSchema
	}
	switch f.typ {
	case connect.Int8:
		return connect.Int8Schema
	case connect.Int16:
		return connect.Int16Schema
	case connect.Int32:
		return connect.Int32Schema
	case connect.Int64:
		return connect.Int64Schema
	case connect.Float32:
		return connect.Float32Schema
	case connect.Float64:
		return connect.Float64Schema
	case connect.Boolean:
		return connect.BooleanSchema
	case connect.Bytes:
		return connect.BytesSchema
	}
	return connect.StringSchema
}

var timestampSchema = connect.TimestampSchema().Build()

func parseField(name, typ, gen string) (*fieldGen, error) {
	where := "value"
	if name != "" {
		where = "field " + name
	}
	typ = strings.ToLower(strings.TrimSpace(typ))
	t, ok := typeNames[typ]
	if !ok {
		return nil, fmt.Errorf("%s: unknown type %q (use int8, int16, int32, int64, float32, float64, boolean, string, bytes or timestamp)", where, typ)
	}
	f := &fieldGen{name: name, typ: t, timestamp: typ == "timestamp"}
	gen = strings.TrimSpace(gen)
	if err := f.parseGen(gen); err != nil {
		return nil, fmt.Errorf("%s: generator %q: %w", where, gen, err)
	}
	return f, nil
}

func (f *fieldGen) isInt() bool {
	return f.typ == connect.Int8 || f.typ == connect.Int16 || f.typ == connect.Int32 || f.typ == connect.Int64
}

func (f *fieldGen) parseGen(gen string) error {
	switch {
	case gen == "":
		f.kind = genDefault
		if f.timestamp {
			f.kind = genNow
		}
		switch f.typ {
		case connect.String:
			f.lo, f.hi = 8, 8
		case connect.Bytes:
			f.lo, f.hi = 16, 16
		}
		return nil
	case gen == "seq":
		f.kind = genSeq
		if f.typ == connect.Boolean {
			return fmt.Errorf("a boolean has no sequence")
		}
		return nil
	case gen == "now":
		if f.typ != connect.Int64 {
			return fmt.Errorf("now is for int64 and timestamp")
		}
		f.kind = genNow
		return nil
	case strings.Contains(gen, "{"):
		if f.typ != connect.String {
			return fmt.Errorf("templates are for strings")
		}
		f.kind = genTemplate
		return f.parseTemplate(gen)
	case strings.Contains(gen, "|"):
		f.kind = genOptions
		for _, o := range strings.Split(gen, "|") {
			v, err := parseValue(f, strings.TrimSpace(o))
			if err != nil {
				return err
			}
			f.options = append(f.options, v)
		}
		return nil
	case strings.Contains(gen, ".."):
		f.kind = genRange
		lo, hi, _ := strings.Cut(gen, "..")
		lo, hi = strings.TrimSpace(lo), strings.TrimSpace(hi)
		switch {
		case f.typ == connect.Float32 || f.typ == connect.Float64:
			a, err1 := strconv.ParseFloat(lo, 64)
			b, err2 := strconv.ParseFloat(hi, 64)
			if err1 != nil || err2 != nil || !(a <= b) || math.IsInf(b-a, 0) {
				return fmt.Errorf("want MIN..MAX with numbers MIN <= MAX")
			}
			f.flo, f.fhi = a, b
		case f.isInt() || f.typ == connect.String || f.typ == connect.Bytes:
			a, err1 := strconv.ParseInt(lo, 10, 64)
			b, err2 := strconv.ParseInt(hi, 10, 64)
			if err1 != nil || err2 != nil || a > b {
				return fmt.Errorf("want MIN..MAX with integers MIN <= MAX")
			}
			if (f.typ == connect.String || f.typ == connect.Bytes) && (a < 0 || b > 1<<20) {
				return fmt.Errorf("lengths must be within 0..1048576")
			}
			if f.isInt() && !f.timestamp {
				min, max := intBounds(f.typ)
				if a < min || b > max {
					return fmt.Errorf("range out of %s bounds %d..%d", f.typ, min, max)
				}
			}
			f.lo, f.hi = a, b
		default:
			return fmt.Errorf("ranges are for numbers, strings, bytes and timestamps")
		}
		return nil
	}
	// A single value: a constant.
	v, err := parseValue(f, gen)
	if err != nil {
		return err
	}
	f.kind, f.options = genOptions, []any{v}
	return nil
}

func intBounds(t connect.Type) (int64, int64) {
	switch t {
	case connect.Int8:
		return math.MinInt8, math.MaxInt8
	case connect.Int16:
		return math.MinInt16, math.MaxInt16
	case connect.Int32:
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

// parseValue parses one option as a value of the field's type.
func parseValue(f *fieldGen, s string) (any, error) {
	if f.timestamp {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a timestamp in epoch milliseconds", s)
		}
		return time.UnixMilli(n).UTC(), nil
	}
	switch f.typ {
	case connect.String:
		return s, nil
	case connect.Bytes:
		return []byte(s), nil
	case connect.Boolean:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, fmt.Errorf("%q is not a boolean", s)
		}
		return b, nil
	case connect.Float32, connect.Float64:
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", s)
		}
		if f.typ == connect.Float32 {
			return float32(x), nil
		}
		return x, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	min, max := intBounds(f.typ)
	if err != nil || n < min || n > max {
		return nil, fmt.Errorf("%q is not an %s", s, f.typ)
	}
	return castInt(f.typ, n), nil
}

func castInt(t connect.Type, n int64) any {
	switch t {
	case connect.Int8:
		return int8(n)
	case connect.Int16:
		return int16(n)
	case connect.Int32:
		return int32(n)
	}
	return n
}

func (f *fieldGen) parseTemplate(s string) error {
	for s != "" {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			f.template = append(f.template, tmplPart{text: s})
			break
		}
		if i > 0 {
			f.template = append(f.template, tmplPart{text: s[:i]})
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return fmt.Errorf("unclosed {")
		}
		inner := strings.TrimSpace(s[i+1 : i+j])
		switch {
		case inner == "seq":
			f.template = append(f.template, tmplPart{seq: true})
		case strings.Contains(inner, ".."):
			lo, hi, _ := strings.Cut(inner, "..")
			a, err1 := strconv.ParseInt(strings.TrimSpace(lo), 10, 64)
			b, err2 := strconv.ParseInt(strings.TrimSpace(hi), 10, 64)
			if err1 != nil || err2 != nil || a > b {
				return fmt.Errorf("want {MIN..MAX} with integers MIN <= MAX, or {seq}")
			}
			f.template = append(f.template, tmplPart{random: true, lo: a, hi: b})
		default:
			return fmt.Errorf("unknown placeholder {%s}: want {MIN..MAX} or {seq}", inner)
		}
		s = s[i+j+1:]
	}
	return nil
}

// arena hands out string and byte memory from large blocks, so a batch of
// generated strings costs a few allocations instead of one each.
type arena struct{ buf []byte }

const arenaBlock = 64 << 10

func (a *arena) grow(n int) {
	if cap(a.buf)-len(a.buf) < n {
		a.buf = make([]byte, 0, max(arenaBlock, n))
	}
}

// str returns the bytes appended since start as a string. The block is
// never written again below len, so the string stays immutable.
func (a *arena) str(start int) string {
	b := a.buf[start:]
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// value generates the field's value for sequence number seq.
func (f *fieldGen) value(r *rng, seq int64, a *arena) any {
	switch f.kind {
	case genFunc:
		return f.fn(r, seq, a)
	case genStruct:
		return f.sub.build(r, seq, a)
	case genOptions:
		if len(f.options) == 1 {
			return f.options[0]
		}
		return f.options[r.intn(uint64(len(f.options)))]
	case genNow:
		now := time.Now()
		if f.timestamp {
			return now.UTC().Truncate(time.Millisecond)
		}
		return now.UnixMilli()
	case genTemplate:
		return f.templateValue(r, seq, a)
	case genSeq:
		switch f.typ {
		case connect.Float32:
			return float32(seq)
		case connect.Float64:
			return float64(seq)
		case connect.String:
			a.grow(20)
			start := len(a.buf)
			a.buf = strconv.AppendInt(a.buf, seq, 10)
			return a.str(start)
		case connect.Bytes:
			return strconv.AppendInt(nil, seq, 10)
		}
		if f.timestamp {
			return time.UnixMilli(seq).UTC()
		}
		return castInt(f.typ, seq)
	}
	switch f.typ {
	case connect.Boolean:
		return r.next()&1 == 1
	case connect.Float32, connect.Float64:
		x := r.float()
		if f.kind == genRange {
			x = f.flo + x*(f.fhi-f.flo)
		}
		if f.typ == connect.Float32 {
			return float32(x)
		}
		return x
	case connect.String:
		n := int(r.between(f.lo, f.hi))
		a.grow(n)
		start := len(a.buf)
		for range n {
			a.buf = append(a.buf, alnum[r.intn(uint64(len(alnum)))])
		}
		return a.str(start)
	case connect.Bytes:
		n := int(r.between(f.lo, f.hi))
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.next())
		}
		return b
	}
	lo, hi := intBounds(f.typ)
	if f.kind == genRange {
		lo, hi = f.lo, f.hi
	}
	n := r.between(lo, hi)
	if f.timestamp {
		return time.UnixMilli(n).UTC()
	}
	return castInt(f.typ, n)
}

func (f *fieldGen) templateValue(r *rng, seq int64, a *arena) string {
	a.grow(64)
	start := len(a.buf)
	for _, p := range f.template {
		switch {
		case p.seq:
			a.buf = strconv.AppendInt(a.buf, seq, 10)
		case p.random:
			a.buf = strconv.AppendInt(a.buf, r.between(p.lo, p.hi), 10)
		default:
			a.buf = append(a.buf, p.text...)
		}
	}
	return a.str(start) // if append moved to a new block, start is still right: the prefix was copied
}

// build generates a STRUCT value (or the primitive value) of the spec.
func (sp *spec) build(r *rng, seq int64, a *arena) any {
	if !sp.struct_ {
		return sp.fields[0].value(r, seq, a)
	}
	st := connect.NewStructValue(sp.schema)
	for i, f := range sp.fields {
		st.PutFieldUnchecked(&sp.schema.Fields[i], f.value(r, seq, a))
	}
	return st
}
