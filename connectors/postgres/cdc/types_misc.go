package cdc

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"math"
	"sort"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/fjordhq/fjord/connect"
)

// arena holds the strings of one row: one allocation for all of them
// instead of one per value.
type arena struct{ buf []byte }

func (a *arena) reserve(n int) {
	if n > 0 {
		a.buf = make([]byte, 0, n)
	}
}

// str returns b as a string living in the arena. The arena never grows
// (that would move strings already handed out); past its capacity the
// string is allocated on its own.
func (a *arena) str(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if a == nil || cap(a.buf)-len(a.buf) < len(b) {
		return string(b)
	}
	start := len(a.buf)
	a.buf = append(a.buf, b...)
	return unsafe.String(&a.buf[start], len(b))
}

// bytea and binary.handling.mode.

func decodeHex(b []byte) ([]byte, error) {
	out := make([]byte, hex.DecodedLen(len(b)))
	if len(b)%2 != 0 {
		return nil, errSyntax
	}
	if _, err := hex.Decode(out, b); err != nil {
		return nil, errSyntax
	}
	return out, nil
}

// byteaBytes reads bytea_output=hex ("\x0102").
func byteaBytes(b []byte) ([]byte, error) {
	if len(b) < 2 || b[0] != '\\' || b[1] != 'x' {
		return nil, errSyntax
	}
	return decodeHex(b[2:])
}

// binaryDecoder renders bytes as binary.handling.mode says: the bytes, or
// a base64 (padded, standard or URL alphabet) or lowercase hex string.
func binaryDecoder(mode string, raw func([]byte) ([]byte, error)) decoder {
	return func(b []byte, _ *arena) (any, error) {
		v, err := raw(b)
		if err != nil {
			return nil, err
		}
		switch mode {
		case BinaryBase64:
			return base64.StdEncoding.EncodeToString(v), nil
		case BinaryBase64URLSafe:
			return base64.URLEncoding.EncodeToString(v), nil
		case BinaryHex:
			return hex.EncodeToString(v), nil
		}
		return v, nil
	}
}

func byteaMapping(o *typeOpts) *mapping {
	m := &mapping{dec: binaryDecoder(o.binary, byteaBytes)}
	switch o.binary {
	case BinaryBytes:
		m.schema, m.fallback, m.toast = plain(connect.Bytes), []byte{}, o.placeholder
	case BinaryHex:
		m.schema, m.fallback, m.toast = plain(connect.String), "", o.placeholderStr
	case BinaryBase64URLSafe:
		m.schema, m.fallback, m.toast = plain(connect.String), "", base64.URLEncoding.EncodeToString(o.placeholder)
	default:
		// Debezium 3.6's base64 converter does not recognise the unchanged
		// TOAST marker and delivers null: a wrong null, which Fjord does
		// not copy. The placeholder's bytes, encoded as the mode says,
		// are what bytes mode and hex mode give in their own forms.
		m.schema, m.fallback, m.toast = plain(connect.String), "", base64.StdEncoding.EncodeToString(o.placeholder)
	}
	return m
}

// bit and varbit: a boolean for length 1, else io.debezium.data.Bits,
// little-endian bytes as long as the highest set bit needs (Debezium's
// BitSet.toByteArray).

func bitsMapping(name string, length int32, o *typeOpts) *mapping {
	if length <= 1 {
		return &mapping{schema: plain(connect.Boolean), dec: decBit1, fallback: false, toastErr: errToastType}
	}
	return &mapping{
		schema: func() *connect.SchemaBuilder {
			return connect.NewSchema(connect.Bytes).Name(dbzBits).Version(1).Parameter("length", strconv.Itoa(int(length)))
		},
		dec: decBits, fallback: []byte{}, toastErr: errToastType,
	}
}

// decBit1 is Integer.valueOf(s, 2) != 0: an empty or over-long string is
// a conversion failure there.
func decBit1(b []byte, _ *arena) (any, error) {
	if len(b) == 0 || len(b) > 31 {
		return nil, convFailure("For input string: %q under radix 2", b)
	}
	one := false
	for _, c := range b {
		switch c {
		case '0':
		case '1':
			one = true
		default:
			return nil, errSyntax
		}
	}
	return one, nil
}

func decBits(b []byte, _ *arena) (any, error) {
	n := len(b)
	out := make([]byte, (n+7)/8)
	last := -1
	for i := 0; i < n; i++ {
		switch b[n-1-i] {
		case '1':
			out[i/8] |= 1 << (i % 8)
			last = i / 8
		case '0':
		default:
			return nil, errSyntax
		}
	}
	return out[:last+1], nil
}

// point: io.debezium.data.geometry.Point {x, y, wkb, srid}.

func pointSchema() *connect.SchemaBuilder {
	return connect.NewStruct().Name(dbzPoint).Version(1).Doc("Geometry (POINT)").
		Field("x", connect.Float64Schema).Field("y", connect.Float64Schema).
		Field("wkb", connect.OptionalBytesSchema).Field("srid", connect.OptionalInt32Schema)
}

// pointValue is Point.createValue: the coordinates and their WKB (byte
// order mark 1, then little-endian type 1, x and y).
func pointValue(s *connect.Schema, x, y float64) *connect.Struct {
	wkb := make([]byte, 21)
	wkb[0] = 1
	binary.LittleEndian.PutUint32(wkb[1:], 1)
	binary.LittleEndian.PutUint64(wkb[5:], math.Float64bits(x))
	binary.LittleEndian.PutUint64(wkb[13:], math.Float64bits(y))
	st := connect.NewStructValue(s)
	st.PutFieldUnchecked(&s.Fields[0], x)
	st.PutFieldUnchecked(&s.Fields[1], y)
	st.PutFieldUnchecked(&s.Fields[2], wkb)
	return st
}

func pointMapping() *mapping {
	var schema *connect.Schema
	m := &mapping{schema: pointSchema, toastErr: errToastType}
	m.bind = func(s *connect.Schema) {
		schema = s
		m.fallback = pointValue(s, 0, 0)
	}
	m.dec = func(b []byte, _ *arena) (any, error) {
		x, y, err := parsePoint(b)
		if err != nil {
			return nil, err
		}
		return pointValue(schema, x, y), nil
	}
	return m
}

// parsePoint reads "(x,y)" as pgjdbc's PGpoint.
func parsePoint(b []byte) (x, y float64, err error) {
	if len(b) < 2 || b[0] != '(' || b[len(b)-1] != ')' {
		return 0, 0, errSyntax
	}
	inner := b[1 : len(b)-1]
	comma := indexByte(inner, ',')
	if comma < 0 {
		return 0, 0, errSyntax
	}
	if x, err = parseFloat(trimSpace(inner[:comma]), 64); err != nil {
		return 0, 0, err
	}
	if y, err = parseFloat(trimSpace(inner[comma+1:]), 64); err != nil {
		return 0, 0, err
	}
	return x, y, nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && b[0] <= ' ' {
		b = b[1:]
	}
	for len(b) > 0 && b[len(b)-1] <= ' ' {
		b = b[:len(b)-1]
	}
	return b
}

// hstore: a JSON object string (json mode) or a map (map mode).

type hstorePair struct {
	key string
	val *string
}

// parseHstore reads hstore output ("a"=>"1", "b"=>NULL) as pgjdbc's
// HStoreConverter.fromString.
func parseHstore(b []byte) ([]hstorePair, error) {
	var out []hstorePair
	i := 0
	for i < len(b) {
		q := indexByte(b[i:], '"')
		if q < 0 {
			if len(trimSpace(b[i:])) == 0 {
				break
			}
			return nil, errSyntax
		}
		key, end, ok := untilQuote(b, i+q)
		if !ok || end+3 > len(b) || string(b[end:end+3]) != `"=>` {
			return nil, errSyntax
		}
		i = end + 3
		p := hstorePair{key: key}
		switch {
		case i+4 <= len(b) && string(b[i:i+4]) == "NULL":
			i += 4
		case i < len(b) && b[i] == '"':
			v, vend, ok := untilQuote(b, i)
			if !ok {
				return nil, errSyntax
			}
			p.val = &v
			i = vend + 1
		default:
			return nil, errSyntax
		}
		out = append(out, p)
		// Then ", " before the next pair.
		for i < len(b) && (b[i] == ',' || b[i] == ' ') {
			i++
		}
	}
	return out, nil
}

// untilQuote reads a quoted string starting at b[start] == '"', undoing
// backslash escapes; end is the index of the closing quote.
func untilQuote(b []byte, start int) (s string, end int, ok bool) {
	var out []byte
	for i := start + 1; i < len(b); i++ {
		c := b[i]
		if c == '"' {
			return string(out), i, true
		}
		if c == '\\' {
			i++
			if i >= len(b) {
				return "", 0, false
			}
			c = b[i]
		}
		out = append(out, c)
	}
	return "", 0, false
}

// javaHashMapOrder orders pairs as a java.util.HashMap of them iterates:
// by bucket of String.hashCode (spread as HashMap.hash) in the final
// table, then in insertion order. (Bins of 8 and more colliding keys,
// which HashMap turns into trees, are not modelled.) A key put twice
// keeps its first place and its last value.
func javaHashMapOrder(pairs []hstorePair) []hstorePair {
	idx := make(map[string]int, len(pairs))
	uniq := make([]hstorePair, 0, len(pairs))
	for _, p := range pairs {
		if i, ok := idx[p.key]; ok {
			uniq[i].val = p.val
			continue
		}
		idx[p.key] = len(uniq)
		uniq = append(uniq, p)
	}
	capacity := 16
	for len(uniq) > capacity*3/4 {
		capacity *= 2
	}
	buckets := make([]int, len(uniq))
	for i, p := range uniq {
		h := javaStringHash(p.key)
		h ^= int32(uint32(h) >> 16)
		buckets[i] = int(uint32(h) & uint32(capacity-1))
	}
	order := make([]int, len(uniq))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return buckets[order[a]] < buckets[order[b]] })
	out := make([]hstorePair, len(uniq))
	for i, o := range order {
		out[i] = uniq[o]
	}
	return out
}

// javaStringHash is String.hashCode over UTF-16 code units.
func javaStringHash(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 {
			r1, r2 := utf16.EncodeRune(r)
			h = 31*h + int32(r1)
			h = 31*h + int32(r2)
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}

// appendJacksonString writes s as Jackson's JsonGenerator does: quotes,
// backslashes and control characters escaped (\b \t \n \f \r, others as
// \u00XX), everything else as is.
func appendJacksonString(dst []byte, s string) []byte {
	const hexDigits = "0123456789ABCDEF"
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c == '\b':
			dst = append(dst, '\\', 'b')
		case c == '\t':
			dst = append(dst, '\\', 't')
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\f':
			dst = append(dst, '\\', 'f')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}

// hstoreJSON is Debezium's JSON of an hstore: the HashMap's entries as
// Jackson writes an object of string fields.
func hstoreJSON(pairs []hstorePair) string {
	dst := []byte{'{'}
	for i, p := range javaHashMapOrder(pairs) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJacksonString(dst, p.key)
		dst = append(dst, ':')
		if p.val == nil {
			dst = append(dst, "null"...)
		} else {
			dst = appendJacksonString(dst, *p.val)
		}
	}
	return string(append(dst, '}'))
}

func hstoreMap(pairs []hstorePair) map[string]any {
	m := make(map[string]any, len(pairs))
	for _, p := range pairs {
		if p.val == nil {
			m[p.key] = nil
		} else {
			m[p.key] = *p.val
		}
	}
	return m
}

func hstoreMapping(o *typeOpts) *mapping {
	ph := o.placeholderStr
	toastPairs := []hstorePair{{key: ph, val: &ph}}
	if o.hstore == HStoreMap {
		return &mapping{
			schema: func() *connect.SchemaBuilder {
				return connect.NewMap(connect.StringSchema, connect.OptionalStringSchema)
			},
			dec: func(b []byte, _ *arena) (any, error) {
				p, err := parseHstore(b)
				if err != nil {
					return nil, err
				}
				return hstoreMap(p), nil
			},
			fallback: map[string]any{}, toast: hstoreMap(toastPairs),
		}
	}
	return &mapping{
		schema: named(connect.String, dbzJSON),
		dec: func(b []byte, _ *arena) (any, error) {
			p, err := parseHstore(b)
			if err != nil {
				return nil, err
			}
			return hstoreJSON(p), nil
		},
		fallback: "{}", toast: hstoreJSON(toastPairs),
	}
}

// javaNameUUID is UUID.nameUUIDFromBytes (version 3).
func javaNameUUID(b []byte) string {
	h := md5.Sum(b)
	h[6] = h[6]&0x0f | 0x30
	h[8] = h[8]&0x3f | 0x80
	s := hex.EncodeToString(h[:])
	return s[0:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:]
}

// stripCurrency drops one leading currency character (a whole UTF-8
// sequence, as Java drops one char).
func stripCurrency(s []byte) []byte {
	if len(s) == 0 {
		return s
	}
	_, n := utf8.DecodeRune(s)
	return s[n:]
}
