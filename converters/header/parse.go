package header

import (
	"errors"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/fjordhq/fjord/connect"
)

// This file is Kafka's Values.parseString: a tokenizer over the
// delimiters : , { } [ ] " (a backslash escapes the next character), and
// a recursive parser that infers schemas, as Kafka's ValueParser does,
// including its quirks (whitespace-only tokens inside quotes are lost,
// "1,000" reads as 1, a trailing comma in an array is accepted).

// errParse is Kafka's DataException inside the parser: it makes an
// array or map fall back to a string.
var errParse = errors.New("unparsable")

// tokenizer is Kafka's Values.Parser.
type tokenizer struct {
	s       string
	pos     int
	next    string
	hasNext bool // next holds a token read ahead
	prev    string
}

func (p *tokenizer) mark() int {
	if p.hasNext {
		return p.pos - len(p.next)
	}
	return p.pos
}

func (p *tokenizer) rewindTo(pos int) {
	p.pos = pos
	p.hasNext = false
	p.prev = ""
}

func (p *tokenizer) more() bool { return p.hasNext || p.pos < len(p.s) }

func (p *tokenizer) nextToken() string {
	if p.hasNext {
		p.prev, p.hasNext = p.next, false
	} else {
		p.prev = p.consume()
	}
	return p.prev
}

// nextN returns the text of the next n tokens, or false (and nothing
// consumed) if there are fewer.
func (p *tokenizer) nextN(n int) (string, bool) {
	start := p.mark()
	for i := 0; i < n; i++ {
		if !p.more() {
			p.rewindTo(start)
			return "", false
		}
		p.nextToken()
	}
	return p.s[start:p.pos], true
}

func isDelimiter(c byte) bool {
	switch c {
	case ':', ',', '{', '}', '[', ']', '"':
		return true
	}
	return false
}

func (p *tokenizer) consume() string {
	escaped := false
	start := p.pos
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		switch {
		case c == '\\':
			escaped = !escaped
		case isDelimiter(c):
			if !escaped {
				if start < p.pos {
					return p.s[start:p.pos]
				}
				p.pos++
				return p.s[start:p.pos]
			}
			escaped = false
		default:
			escaped = false
		}
		p.pos++
	}
	return p.s[start:p.pos]
}

// javaTrim is String.trim(): it strips characters up to U+0020.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

func isBlank(s string) bool { return javaTrim(s) == "" }

// isNext reads ahead, skipping whitespace-only tokens, and compares the
// trimmed token with want.
func (p *tokenizer) isNext(want string) bool {
	if !p.hasNext {
		if !p.more() {
			return false
		}
		p.next, p.hasNext = p.consume(), true
	}
	for isBlank(p.next) && p.pos < len(p.s) {
		p.next = p.consume()
	}
	return javaTrim(p.next) == want
}

func (p *tokenizer) canConsume(want string) bool {
	if p.isNext(want) {
		p.hasNext = false
		return true
	}
	return false
}

// parsed is a SchemaAndValue; nil means Java's null SchemaAndValue.
type parsed struct {
	schema *connect.Schema
	value  any
}

type valueParser struct{ p tokenizer }

// ParseString is Kafka's Values.parseString: the schema and value a
// header's text stands for. ok is false for the literal null (Kafka's
// null SchemaAndValue); an error means Kafka's parser failed, where
// SimpleHeaderConverter keeps the raw bytes.
func ParseString(s string) (schema *connect.Schema, value any, err error) {
	if s == "" {
		return connect.StringSchema, "", nil
	}
	vp := valueParser{p: tokenizer{s: s}}
	r, err := vp.parse(false)
	if err != nil || r == nil {
		return nil, nil, err
	}
	return r.schema, r.value, nil
}

func (vp *valueParser) literal(embedded bool, word string) bool {
	start := vp.p.mark()
	if vp.p.canConsume(word) && (embedded || !vp.p.more()) {
		return true
	}
	vp.p.rewindTo(start)
	return false
}

func (vp *valueParser) parse(embedded bool) (*parsed, error) {
	p := &vp.p
	if !p.more() {
		return nil, nil
	}
	if embedded && p.canConsume(`"`) {
		return vp.quoted(), nil
	}
	switch {
	case vp.literal(embedded, "null"):
		return nil, nil
	case vp.literal(embedded, "true"):
		return &parsed{connect.BooleanSchema, true}, nil
	case vp.literal(embedded, "false"):
		return &parsed{connect.BooleanSchema, false}, nil
	}
	start := p.mark()
	var r *parsed
	var err error
	switch {
	case p.canConsume("["):
		r, err = vp.array()
	case p.canConsume("{"):
		r, err = vp.mapValue()
	}
	switch {
	case err == nil && r != nil:
		return r, nil
	case errors.Is(err, errFatal):
		return nil, err
	case err != nil:
		// Not an array or map after all: read it as a token.
		p.rewindTo(start)
	}
	token := p.nextToken()
	if isBlank(token) {
		return &parsed{connect.StringSchema, token}, nil
	}
	return vp.token(embedded, javaTrim(token))
}

func (vp *valueParser) token(embedded bool, token string) (*parsed, error) {
	first, _ := utf8.DecodeRuneInString(token)
	firstIsDigit := javaDigit(first) >= 0
	if firstIsDigit {
		if r := vp.temporalTokens(token); r != nil {
			return r, nil
		}
	}
	if firstIsDigit || first == '+' || first == '-' {
		if s, v, ok := parseNumber(token); ok {
			return &parsed{s, v}, nil
		}
	}
	if embedded {
		return nil, errParse
	}
	return &parsed{connect.StringSchema, vp.p.s}, nil
}

// temporalTokens tries the token with the next four (a time's colons are
// delimiters), then the token alone.
func (vp *valueParser) temporalTokens(token string) *parsed {
	p := &vp.p
	pos := p.mark()
	if rest, ok := p.nextN(4); ok {
		if r := parseTemporal(token + rest); r != nil {
			return r
		}
	}
	p.rewindTo(pos)
	return parseTemporal(token)
}

func (vp *valueParser) quoted() *parsed {
	p := &vp.p
	var b strings.Builder
	for p.more() {
		if p.canConsume(`"`) {
			break
		}
		b.WriteString(p.nextToken())
	}
	content := b.String()
	if r := parseTemporal(content); r != nil {
		return r
	}
	return &parsed{connect.StringSchema, content}
}

// parseTemporal reads a date, time or timestamp by the text's length in
// UTF-16 units (10, 13, 24), after unescaping "\:".
func parseTemporal(token string) *parsed {
	token = strings.ReplaceAll(token, `\:`, ":")
	runes := []rune(token)
	n := 0
	for _, r := range runes {
		n += utf16.RuneLen(r)
	}
	var pattern []patElem
	var s *connect.Schema
	switch n {
	case 13:
		pattern, s = timePattern, timeSchema
	case 24:
		pattern, s = timestampPattern, timestampSchema
	case 10:
		pattern, s = datePattern, dateSchema
	default:
		return nil
	}
	ms, ok := parseLenient(runes, pattern)
	if !ok {
		return nil
	}
	return &parsed{s, timeOf(ms)}
}

func (vp *valueParser) array() (*parsed, error) {
	p := &vp.p
	var result []any
	var merger schemaMerger
	for p.more() {
		if p.canConsume("]") {
			if !merger.has() {
				return &parsed{&connect.Schema{Type: connect.Array}, nonNil(result)}, nil
			}
			s := &connect.Schema{Type: connect.Array, ValueSchema: merger.common}
			aligned := make([]any, 0, len(result))
			for _, v := range result {
				c, err := convertTo(s.ValueSchema, v)
				if err != nil {
					return nil, err
				}
				aligned = append(aligned, c)
			}
			return &parsed{s, aligned}, nil
		}
		if p.canConsume(",") {
			return nil, errParse
		}
		el, err := vp.parse(true)
		if err != nil {
			return nil, err
		}
		merger.merge(el)
		if el != nil {
			result = append(result, el.value)
		} else {
			result = append(result, nil)
		}
		pos := p.mark()
		if p.canConsume("]") {
			p.rewindTo(pos)
		} else if !p.canConsume(",") {
			return nil, errParse
		}
	}
	return nil, errParse
}

func nonNil(v []any) []any {
	if v == nil {
		return []any{}
	}
	return v
}

type entry struct{ k, v any }

func (vp *valueParser) mapValue() (*parsed, error) {
	p := &vp.p
	var entries []entry // in order; a repeated key keeps its place
	var keys, values schemaMerger
	for p.more() {
		if p.canConsume("}") {
			return buildMap(entries, &keys, &values)
		}
		if p.canConsume(",") {
			return nil, errParse
		}
		k, err := vp.parse(true)
		if err != nil {
			return nil, err
		}
		if k == nil || k.value == nil || !p.canConsume(":") {
			return nil, errParse
		}
		v, err := vp.parse(true)
		if err != nil {
			return nil, err
		}
		var val any
		if v != nil {
			val = v.value
		}
		if !hashable(k.value) {
			// A Java map takes lists and maps as keys; a Go map cannot.
			return nil, errParse
		}
		entries = putEntry(entries, k.value, val)
		p.canConsume(",")
		keys.merge(k)
		values.merge(v)
	}
	return nil, errParse
}

func putEntry(entries []entry, k, v any) []entry {
	for i := range entries {
		if entries[i].k == k {
			entries[i].v = v
			return entries
		}
	}
	return append(entries, entry{k, v})
}

func hashable(k any) bool {
	switch k.(type) {
	case []byte, []any, map[string]any, map[any]any:
		return false
	}
	return true
}

func buildMap(entries []entry, keys, values *schemaMerger) (*parsed, error) {
	s := &connect.Schema{Type: connect.Map}
	if keys.has() {
		s.KeySchema = keys.common
		if values.has() {
			s.ValueSchema = values.common
		}
		for i := range entries {
			k, err := convertTo(s.KeySchema, entries[i].k)
			if err != nil {
				return nil, err
			}
			entries[i].k = k
			if s.ValueSchema != nil {
				v, err := convertTo(s.ValueSchema, entries[i].v)
				if err != nil {
					return nil, err
				}
				entries[i].v = v
			}
		}
	}
	if s.KeySchema != nil && s.KeySchema.Type == connect.String {
		m := make(map[string]any, len(entries))
		for _, e := range entries {
			k, _ := e.k.(string)
			m[k] = e.v
		}
		return &parsed{s, m}, nil
	}
	m := make(map[any]any, len(entries))
	for _, e := range entries {
		if !hashable(e.k) {
			return nil, errParse
		}
		m[e.k] = e.v
	}
	return &parsed{s, m}, nil
}
