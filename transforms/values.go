package transforms

import (
	"math"
	"math/big"
	"reflect"
	"strings"
	"time"
	"unicode"

	"github.com/fjordhq/fjord/connect"
)

// parseValueString is Kafka's Values.parseString: it infers a schema and
// value from a literal, as InsertHeader's value.literal and Kafka's
// SimpleHeaderConverter do. "null" is no schema and no value; true/false
// are BOOLEAN; integers take the smallest of INT8..INT64 that holds them;
// other numbers FLOAT32 when finite as a float, else FLOAT64, else
// Decimal; ISO dates, times and timestamps their logical types; [..] an
// ARRAY and {k:v,..} a MAP when every element parses (with a common
// schema when the elements agree); anything else the STRING itself.
func parseValueString(s string) (*connect.Schema, any) {
	if s == "" {
		return connect.StringSchema, s
	}
	p := &valueParser{tok: &tokenizer{src: s}}
	sv, err := p.parse(false)
	if err != nil || sv == nil {
		if err != nil {
			return connect.StringSchema, s
		}
		return nil, nil
	}
	// A top-level ARRAY or MAP literal always comes back; a schemaless
	// one (no common element schema) keeps its value.
	return sv.schema, sv.value
}

type schemaAndValue struct {
	schema *connect.Schema
	value  any
}

// tokenizer is Kafka's Values.Parser: tokens are runs of characters
// between the delimiters " , : [ ] { } (each delimiter its own token),
// with backslash escaping a delimiter.
type tokenizer struct {
	src      string
	pos      int
	next     *string
	previous *string
}

func (t *tokenizer) mark() int {
	if t.next != nil {
		return t.pos - len(*t.next)
	}
	return t.pos
}

func (t *tokenizer) rewind(pos int) { t.pos, t.next, t.previous = pos, nil, nil }

func (t *tokenizer) hasNext() bool { return t.next != nil || t.pos < len(t.src) }

func (t *tokenizer) nextToken() string {
	var tok string
	if t.next != nil {
		tok, t.next = *t.next, nil
	} else {
		tok = t.consume()
	}
	t.previous = &tok
	return tok
}

func (t *tokenizer) nextN(n int) (string, bool) {
	start := t.mark()
	for i := 0; i < n; i++ {
		if !t.hasNext() {
			t.rewind(start)
			return "", false
		}
		t.nextToken()
	}
	return t.src[start:t.pos], true
}

func (t *tokenizer) consume() string {
	escaped := false
	start := t.pos
	for ; t.pos < len(t.src); t.pos++ {
		switch c := t.src[t.pos]; c {
		case '"', ',', ':', '[', ']', '{', '}':
			if !escaped {
				if start < t.pos {
					return t.src[start:t.pos]
				}
				t.pos++
				return t.src[start : start+1]
			}
			escaped = false
		case '\\':
			escaped = !escaped
		default:
			escaped = false
		}
	}
	return t.src[start:t.pos]
}

func isBlank(s string) bool { return strings.TrimSpace(s) == "" }

func (t *tokenizer) canConsume(expected string) bool {
	if t.next == nil {
		if !t.hasNext() {
			return false
		}
		tok := t.consume()
		t.next = &tok
	}
	for isBlank(*t.next) && t.pos < len(t.src) {
		tok := t.consume()
		t.next = &tok
	}
	if strings.TrimSpace(*t.next) == expected {
		t.next = nil
		return true
	}
	return false
}

type valueParser struct{ tok *tokenizer }

type parseFailure struct{ msg string }

func (e *parseFailure) Error() string { return e.msg }

func (p *valueParser) singleLiteral(embedded bool, lit string) bool {
	start := p.tok.mark()
	if !p.tok.canConsume(lit) || (!embedded && p.tok.hasNext()) {
		p.tok.rewind(start)
		return false
	}
	return true
}

func (p *valueParser) parse(embedded bool) (*schemaAndValue, error) {
	if !p.tok.hasNext() {
		return nil, nil
	}
	if embedded && p.tok.canConsume(`"`) {
		var b strings.Builder
		for p.tok.hasNext() && !p.tok.canConsume(`"`) {
			b.WriteString(p.tok.nextToken())
		}
		if sv := parseTemporal(b.String()); sv != nil {
			return sv, nil
		}
		return &schemaAndValue{connect.StringSchema, b.String()}, nil
	}
	if p.singleLiteral(embedded, "null") {
		return nil, nil
	}
	if p.singleLiteral(embedded, "true") {
		return &schemaAndValue{connect.BooleanSchema, true}, nil
	}
	if p.singleLiteral(embedded, "false") {
		return &schemaAndValue{connect.BooleanSchema, false}, nil
	}
	start := p.tok.mark()
	var sv *schemaAndValue
	var err error
	switch {
	case p.tok.canConsume("["):
		sv, err = p.parseArray()
	case p.tok.canConsume("{"):
		sv, err = p.parseMap()
	}
	if sv != nil && err == nil {
		return sv, nil
	}
	if err != nil {
		p.tok.rewind(start)
	}
	token := p.tok.nextToken()
	if isBlank(token) {
		return &schemaAndValue{connect.StringSchema, token}, nil
	}
	token = strings.TrimSpace(token)
	first := rune(token[0])
	if unicode.IsDigit(first) {
		mark := p.tok.mark()
		if rest, ok := p.tok.nextN(4); ok {
			if t := parseTemporal(token + rest); t != nil {
				return t, nil
			}
		}
		p.tok.rewind(mark)
		if t := parseTemporal(token); t != nil {
			return t, nil
		}
	}
	if unicode.IsDigit(first) || first == '+' || first == '-' {
		if n := parseNumber(token); n != nil {
			return n, nil
		}
	}
	if embedded {
		return nil, &parseFailure{"Failed to parse embedded value"}
	}
	return &schemaAndValue{connect.StringSchema, p.tok.src}, nil
}

func (p *valueParser) parseArray() (*schemaAndValue, error) {
	var result []any
	var merger schemaMerger
	for p.tok.hasNext() {
		if p.tok.canConsume("]") {
			if merger.common == nil {
				// Kafka's arrayOfNull has no element schema, which Fjord's
				// schemas cannot express: the list is returned schemaless.
				return &schemaAndValue{nil, nonNilList(result)}, nil
			}
			s := connect.NewArray(merger.common).Build()
			for i, v := range result {
				if v == nil && !merger.common.Optional {
					// Kafka's convertTo refuses null for a required schema.
					return nil, &parseFailure{"Unable to convert a null value to a schema that requires a value"}
				}
				result[i] = alignNumber(merger.common, v)
			}
			return &schemaAndValue{s, nonNilList(result)}, nil
		}
		if p.tok.canConsume(",") {
			return nil, &parseFailure{"Unable to parse an empty array element: " + p.tok.src}
		}
		el, err := p.parse(true)
		if err != nil {
			return nil, err
		}
		merger.merge(el)
		if el != nil {
			result = append(result, el.value)
		} else {
			result = append(result, nil)
		}
		mark := p.tok.mark()
		if p.tok.canConsume("]") {
			p.tok.rewind(mark)
		} else if !p.tok.canConsume(",") {
			return nil, &parseFailure{"Array elements missing ',' delimiter"}
		}
	}
	return nil, &parseFailure{"Array is missing terminating ']': " + p.tok.src}
}

func nonNilList(l []any) []any {
	if l == nil {
		return []any{}
	}
	return l
}

func (p *valueParser) parseMap() (*schemaAndValue, error) {
	type entry struct{ k, v any }
	var entries []entry
	var keys, vals schemaMerger
	for p.tok.hasNext() {
		if p.tok.canConsume("}") {
			var s *connect.Schema
			if keys.common != nil && vals.common != nil {
				s = connect.NewMap(keys.common, vals.common).Build()
			}
			if s == nil {
				// No common key and value schemas (Kafka's mapOfNull or
				// mapWithNullValues): the map is returned schemaless.
				out := map[string]any{}
				outAny := map[any]any{}
				allString := true
				for _, e := range entries {
					if ks, ok := e.k.(string); ok {
						out[ks] = e.v
					} else {
						allString = false
					}
					outAny[e.k] = e.v
				}
				if allString {
					return &schemaAndValue{nil, out}, nil
				}
				return &schemaAndValue{nil, outAny}, nil
			}
			out := map[string]any{}
			outAny := map[any]any{}
			for _, e := range entries {
				if e.v == nil && !vals.common.Optional {
					return nil, &parseFailure{"Unable to convert a null value to a schema that requires a value"}
				}
				k := alignNumber(keys.common, e.k)
				v := e.v
				if vals.common != nil {
					v = alignNumber(vals.common, v)
				}
				if ks, ok := k.(string); ok {
					out[ks] = v
				}
				outAny[k] = v
			}
			if keys.common.Type == connect.String {
				return &schemaAndValue{s, out}, nil
			}
			return &schemaAndValue{s, outAny}, nil
		}
		if p.tok.canConsume(",") {
			return nil, &parseFailure{"Unable to parse a map entry with no key or value: " + p.tok.src}
		}
		k, err := p.parse(true)
		if err != nil {
			return nil, err
		}
		if k == nil || k.value == nil {
			return nil, &parseFailure{"Map entry may not have a null key: " + p.tok.src}
		}
		if !reflect.TypeOf(k.value).Comparable() {
			// Kafka accepts list or map keys; Go maps cannot hold them.
			return nil, &parseFailure{"Map entry key is not a primitive: " + p.tok.src}
		}
		if !p.tok.canConsume(":") {
			return nil, &parseFailure{"Map entry is missing ':'"}
		}
		v, err := p.parse(true)
		if err != nil {
			return nil, err
		}
		var val any
		if v != nil {
			val = v.value
		}
		entries = append(entries, entry{k.value, val})
		p.tok.canConsume(",")
		keys.merge(k)
		vals.merge(v)
	}
	return nil, &parseFailure{"Map is missing terminating '}': " + p.tok.src}
}

// schemaMerger is Kafka's Values.SchemaMerger: the common schema of a
// list's elements, widening numbers; nil once two disagree.
type schemaMerger struct {
	common       *connect.Schema
	incompatible bool
}

var numericRank = map[connect.Type]int{connect.Int8: 1, connect.Int16: 2, connect.Int32: 3, connect.Int64: 4, connect.Float32: 5, connect.Float64: 6}

func (m *schemaMerger) merge(sv *schemaAndValue) {
	if sv == nil || m.incompatible {
		return
	}
	if sv.schema == nil {
		// A nested list or map without a common schema (Kafka's
		// arrayOfNull/mapOfNull) agrees with nothing Fjord can express.
		if sv.value != nil {
			m.common, m.incompatible = nil, true
		}
		return
	}
	if m.common == nil {
		m.common = sv.schema
		return
	}
	prev, next := m.common, sv.schema
	switch {
	case prev.Type != next.Type:
		pr, pok := numericRank[prev.Type]
		nr, nok := numericRank[next.Type]
		if !pok || !nok || prev.Name != "" || next.Name != "" {
			m.common = nil
		} else if nr > pr {
			m.common = next
		}
	case prev.Optional == next.Optional:
		if !prev.Optional {
			m.common = next
		}
	case !prev.Equal(next):
		m.common = nil
	}
	m.incompatible = m.common == nil
}

// alignNumber widens a parsed number to the common numeric schema.
func alignNumber(s *connect.Schema, v any) any {
	if s == nil || v == nil || s.Name != "" {
		return v
	}
	n, isInt := numberToInt64(v)
	f, isNum := numberToFloat64(v)
	if !isNum {
		return v
	}
	_, isFloat := v.(float32)
	if _, ok := v.(float64); ok {
		isFloat = true
	}
	if !isInt || isFloat {
		n = javaF2L(f)
	}
	switch s.Type {
	case connect.Int8:
		return int8(n)
	case connect.Int16:
		return int16(n)
	case connect.Int32:
		return int32(n)
	case connect.Int64:
		return n
	case connect.Float32:
		return float32(f)
	case connect.Float64:
		return f
	}
	return v
}

var biggerThanLong = new(big.Float).SetFloat64(1e19)

func parseNumber(token string) *schemaAndValue {
	d, err := connect.ParseDecimal(strings.TrimPrefix(token, "+"))
	if err != nil {
		return nil
	}
	if d.Unscaled.Sign() == 0 {
		return &schemaAndValue{connect.Int8Schema, int8(0)}
	}
	// Bound the work for huge exponents ("1E99999999"): past ±400 decimal
	// digits floats are infinite or zero whatever the digits.
	exp10 := int64(len(new(big.Int).Abs(d.Unscaled).String())) - 1 - int64(d.Scale)
	switch {
	case exp10 > 400:
		return &schemaAndValue{connect.DecimalSchema(d.Scale).Build(), d}
	case exp10 < -400:
		if d.Unscaled.Sign() < 0 {
			return &schemaAndValue{connect.Float32Schema, float32(math.Copysign(0, -1))}
		}
		return &schemaAndValue{connect.Float32Schema, float32(0)}
	}
	r := new(big.Rat).SetFrac(d.Unscaled, big.NewInt(1))
	if d.Scale > 0 {
		r.SetFrac(d.Unscaled, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.Scale)), nil))
	} else if d.Scale < 0 {
		r.SetInt(new(big.Int).Mul(d.Unscaled, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-d.Scale)), nil)))
	}
	abs := new(big.Rat).Abs(r)
	absF, _ := new(big.Float).SetRat(abs).Float64()
	if r.IsInt() && (abs.Sign() == 0 || abs.Cmp(big.NewRat(1, 1)) >= 0) && big.NewFloat(absF).Cmp(biggerThanLong) <= 0 {
		if n := r.Num(); n.IsInt64() {
			v := n.Int64()
			switch {
			case v >= math.MinInt8 && v <= math.MaxInt8:
				return &schemaAndValue{connect.Int8Schema, int8(v)}
			case v >= math.MinInt16 && v <= math.MaxInt16:
				return &schemaAndValue{connect.Int16Schema, int16(v)}
			case v >= math.MinInt32 && v <= math.MaxInt32:
				return &schemaAndValue{connect.Int32Schema, int32(v)}
			}
			return &schemaAndValue{connect.Int64Schema, v}
		}
	}
	f, _ := r.Float64()
	f32, _ := r.Float32()
	if !math.IsInf(float64(f32), 0) && d.Scale != 0 {
		return &schemaAndValue{connect.Float32Schema, f32}
	}
	if !math.IsInf(f, 0) && d.Scale != 0 {
		return &schemaAndValue{connect.Float64Schema, f}
	}
	return &schemaAndValue{connect.DecimalSchema(d.Scale).Build(), d}
}

// parseTemporal is Values.parseAsTemporal: a whole ISO-8601 time
// (HH:mm:ss.SSSZ), timestamp (yyyy-MM-ddTHH:mm:ss.SSSZ) or date.
func parseTemporal(token string) *schemaAndValue {
	token = strings.ReplaceAll(token, `\:`, ":")
	switch len(token) {
	case len("HH:mm:ss.SSSZ"):
		if t, err := time.Parse("15:04:05.000Z", token); err == nil {
			return &schemaAndValue{connect.TimeSchema().Build(), time.UnixMilli(int64(t.Hour())*3600000 + int64(t.Minute())*60000 + int64(t.Second())*1000 + int64(t.Nanosecond()/1e6)).UTC()}
		}
	case len("yyyy-MM-ddTHH:mm:ss.SSSZ"):
		if t, err := time.Parse("2006-01-02T15:04:05.000Z", token); err == nil {
			return &schemaAndValue{connect.TimestampSchema().Build(), t.UTC()}
		}
	case len("yyyy-MM-dd"):
		if t, err := time.Parse("2006-01-02", token); err == nil {
			return &schemaAndValue{connect.DateSchema().Build(), t.UTC()}
		}
	}
	return nil
}
