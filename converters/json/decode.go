package json

import (
	"bytes"
	"errors"
	"time"

	"github.com/fjordhq/fjord/connect"
)

// Kafka's messages for bytes it cannot convert.
const (
	errSerialization = "Converting byte[] to Kafka Connect data failed due to serialization error: "
	errEnvelope      = "JsonConverter with schemas.enable requires \"schema\" and \"payload\" fields and may not contain additional fields." +
		" If you are trying to deserialize plain JSON data, set schemas.enable=false in your converter configuration."
)

// decoder converts JSON to Connect data in one pass over the bytes, with
// the answers Kafka's JsonConverter gives: Kafka parses into a Jackson
// tree, then converts the tree. Errors keep Kafka's precedence: a syntax
// error anywhere beats a conversion error (on a conversion error the
// whole document is validated again); struct fields fail in schema
// order; a duplicate key's last value wins.
type decoder struct {
	scanner
	bx          *boxes // where scalars and strings go (nil: the heap)
	replaceNull bool
	// nilRequired is set when a coercion made a nil for a required
	// schema (a number read as STRING); only then do struct fields
	// need Kafka's Struct.put validation of nested nils.
	nilRequired bool
}

type nodeKind uint8

const (
	kNumber nodeKind = iota + 1
	kString
	kBoolean
	kNull
	kArray
	kObject
)

// String is Jackson's JsonNodeType name, which Kafka's messages show.
func (k nodeKind) String() string {
	return [...]string{"MISSING", "NUMBER", "STRING", "BOOLEAN", "NULL", "ARRAY", "OBJECT"}[k]
}

func kindOf(c byte) nodeKind {
	switch c {
	case '{':
		return kObject
	case '[':
		return kArray
	case '"':
		return kString
	case 't', 'f':
		return kBoolean
	case 'n':
		return kNull
	}
	return kNumber
}

// node is a scalar as read (containers are skipped, their kind kept).
type node struct {
	kind    nodeKind
	text    []byte // number text, or string content (undecoded)
	float   bool   // number with fraction or exponent
	escaped bool   // string with escapes
	b       bool
}

func (d *decoder) node() (node, error) {
	c := d.peek()
	switch c {
	case '{', '[':
		return node{kind: kindOf(c)}, d.skip()
	case '"':
		raw, esc, err := d.stringRaw()
		return node{kind: kString, text: raw, escaped: esc}, err
	case 't':
		return node{kind: kBoolean, b: true}, d.literal("true")
	case 'f':
		return node{kind: kBoolean}, d.literal("false")
	case 'n':
		return node{kind: kNull}, d.literal("null")
	}
	if c == '-' || (c >= '0' && c <= '9') {
		text, float, err := d.number()
		return node{kind: kNumber, text: text, float: float}, err
	}
	return node{}, d.unexpected()
}

func (d *decoder) nodeString(n node) string {
	if !n.escaped {
		return d.bx.string(n.text)
	}
	d.scratch = unescape(d.scratch[:0], n.text)
	return d.bx.string(d.scratch)
}

func (d *decoder) nodeBytes(n node) []byte {
	if !n.escaped {
		return n.text
	}
	d.scratch = unescape(d.scratch[:0], n.text)
	return d.scratch
}

func isConversion(err error) bool {
	var de *connect.DataError
	return errors.As(err, &de)
}

// decode is ToConnectData for non-nil bytes.
func (c *Converter) decode(b []byte) (*connect.Schema, any, error) {
	d := decoder{scanner: scanner{data: b}, replaceNull: !c.keepNull}
	d.skipBOM()
	if c.schemasDisabled {
		first := d.peek()
		if d.pos >= len(d.data) { // no content: Jackson's MissingNode, read as null
			return nil, nil, nil
		}
		v, err := d.schemaless()
		if err == nil {
			err = d.rootEnd(first == '-' || (first >= '0' && first <= '9'))
		}
		if err != nil {
			return nil, nil, serializationError(err)
		}
		return nil, v, nil
	}
	d.bx = c.boxes.get()
	defer c.boxes.put(d.bx)
	if c.content != nil {
		return c.decodeContent(&d)
	}
	return c.decodeEnvelope(&d)
}

// decodeContent reads a message without the envelope as data of the
// schema.content schema (Kafka 4.x, KIP-1054): the whole document is the
// payload; an envelope in it is just a struct or map value.
func (c *Converter) decodeContent(d *decoder) (*connect.Schema, any, error) {
	s := c.content
	first := d.peek()
	if d.pos >= len(d.data) { // no content: Jackson's MissingNode
		v, err := d.missing(s)
		if err != nil {
			return nil, nil, err
		}
		return s, v, nil
	}
	v, err := d.convert(s)
	if err == nil {
		err = d.rootEnd(first == '-' || (first >= '0' && first <= '9'))
	}
	if err != nil {
		return nil, nil, d.finish(err)
	}
	return s, v, nil
}

func serializationError(err error) error {
	return &connect.DataError{Msg: errSerialization + err.Error()}
}

// finish maps a decoding error to what Kafka raises: syntax errors are
// serialization errors, and a conversion error loses to a syntax error
// elsewhere in the document.
func (d *decoder) finish(err error) error {
	if !isConversion(err) {
		return serializationError(err)
	}
	if serr := validateRoot(d.data); serr != nil {
		return serializationError(serr)
	}
	return err
}

type span struct{ start, end int }

// decodeEnvelope reads {"schema":...,"payload":...}. In the usual order
// (schema first) the payload is converted while it is scanned.
func (c *Converter) decodeEnvelope(d *decoder) (*connect.Schema, any, error) {
	if d.peek() != '{' {
		if err := validateRoot(d.data); err != nil {
			return nil, nil, serializationError(err)
		}
		return nil, nil, &connect.DataError{Msg: errEnvelope}
	}
	if err := d.enter(); err != nil {
		return nil, nil, serializationError(err)
	}
	d.pos++
	var (
		haveSchema, havePayload, extra bool
		schema                         *connect.Schema
		schemaErr                      error
		schemaAt, payloadAt            span
		value                          any
		valueErr                       error
		decodedWith                    = -1 // schemaAt.start the payload was converted with
		decodedAt                      = -1 // payloadAt.start converted
	)
	if d.peek() == '}' {
		return nil, nil, &connect.DataError{Msg: errEnvelope}
	}
	for {
		if d.peek() != '"' {
			return nil, nil, serializationError(d.unexpected())
		}
		raw, esc, err := d.stringRaw()
		if err != nil {
			return nil, nil, serializationError(err)
		}
		key := raw
		if esc {
			key = bytes.Clone(unescape(nil, raw))
		}
		if d.peek() != ':' {
			return nil, nil, serializationError(d.unexpected())
		}
		d.pos++
		d.ws()
		start := d.pos
		switch string(key) {
		case "schema":
			haveSchema = true
			if ds := c.lastDec.Load(); ds != nil && bytes.HasPrefix(d.data[start:], ds.raw) {
				d.pos += len(ds.raw)
				schema, schemaErr = ds.s, nil
			} else {
				if err := d.skip(); err != nil {
					return nil, nil, serializationError(err)
				}
				schema, schemaErr = c.schemaFor(d.data[start:d.pos])
			}
			schemaAt = span{start, d.pos}
		case "payload":
			havePayload = true
			if haveSchema && schemaErr == nil && !extra {
				value, valueErr = d.convert(schema)
				if valueErr != nil {
					if !isConversion(valueErr) {
						return nil, nil, serializationError(valueErr)
					}
					d.pos = start
					if err := d.skip(); err != nil {
						return nil, nil, serializationError(err)
					}
				}
				decodedWith, decodedAt = schemaAt.start, start
			} else if err := d.skip(); err != nil {
				return nil, nil, serializationError(err)
			}
			payloadAt = span{start, d.pos}
		default:
			extra = true
			if err := d.skip(); err != nil {
				return nil, nil, serializationError(err)
			}
		}
		switch d.peek() {
		case ',':
			d.pos++
			continue
		case '}':
			d.pos++
		default:
			return nil, nil, serializationError(d.unexpected())
		}
		break
	}
	// Jackson reads no further than the root object.
	if extra || !haveSchema || !havePayload {
		return nil, nil, &connect.DataError{Msg: errEnvelope}
	}
	if schemaErr != nil {
		return nil, nil, schemaErr
	}
	if decodedWith != schemaAt.start || decodedAt != payloadAt.start {
		d.pos, d.depth = payloadAt.start, 1
		value, valueErr = d.convert(schema)
		if valueErr != nil && !isConversion(valueErr) {
			return nil, nil, serializationError(valueErr)
		}
	}
	if valueErr != nil {
		return nil, nil, valueErr
	}
	return schema, value, nil
}

// convert reads the next value as data of schema s (nil: schemaless),
// as Kafka's convertToConnect.
func (d *decoder) convert(s *connect.Schema) (any, error) {
	if s == nil {
		return d.schemaless()
	}
	c := d.peek()
	if c == 'n' {
		if err := d.literal("null"); err != nil {
			return nil, err
		}
		return d.null(s)
	}
	if c == 0 {
		return nil, d.unexpected()
	}
	if s.Name != "" {
		switch s.Name {
		case connect.DecimalName:
			return d.decimal(s)
		case connect.DateName, connect.TimeName:
			return d.dateOrTime(s)
		case connect.TimestampName:
			return d.timestamp()
		}
	}
	switch s.Type {
	case connect.Int8, connect.Int16, connect.Int32, connect.Int64:
		n, err := d.node()
		if err != nil {
			return nil, err
		}
		var bits int64
		if n.kind == kNumber {
			bits = intBits(n.text, n.float)
		}
		switch s.Type {
		case connect.Int8:
			return d.bx.int8(int8(bits)), nil
		case connect.Int16:
			return d.bx.int16(int16(bits)), nil
		case connect.Int32:
			return d.bx.int32(int32(bits)), nil
		}
		return d.bx.int64(bits), nil
	case connect.Float32:
		n, err := d.node()
		if err != nil || n.kind != kNumber {
			return float32(0), err
		}
		return d.bx.float32(float32Value(n.text)), nil
	case connect.Float64:
		n, err := d.node()
		if err != nil || n.kind != kNumber {
			return float64(0), err
		}
		return d.bx.float64(float64Value(n.text)), nil
	case connect.Boolean:
		n, err := d.node()
		return n.kind == kBoolean && n.b, err
	case connect.String:
		n, err := d.node()
		if err != nil {
			return nil, err
		}
		if n.kind != kString {
			d.nilRequired = d.nilRequired || !s.Optional
			return nil, nil
		}
		if !n.escaped {
			return d.bx.str(n.text), nil
		}
		d.scratch = unescape(d.scratch[:0], n.text)
		return d.bx.str(d.scratch), nil
	case connect.Bytes:
		n, err := d.node()
		if err != nil {
			return nil, err
		}
		if n.kind != kString {
			d.nilRequired = d.nilRequired || !s.Optional
			return nil, nil
		}
		b, ok := decodeBase64(d.nodeBytes(n))
		if !ok {
			return nil, &connect.DataError{Msg: "Invalid bytes field"}
		}
		return b, nil
	case connect.Array:
		return d.array(s)
	case connect.Map:
		if s.KeySchema != nil && s.KeySchema.Type == connect.String {
			return d.stringMap(s)
		}
		return d.pairMap(s)
	case connect.StructType:
		return d.structValue(s)
	}
	return nil, dataErrorf("Unknown schema type: %s", s.Type)
}

// missing is convertToConnect of Jackson's MissingNode (what an empty
// document reads as): not null, so scalars take Jackson's defaults for a
// non-number (0, false, null text), arrays are empty and every type that
// checks the node's kind names it MISSING.
func (d *decoder) missing(s *connect.Schema) (any, error) {
	const k nodeKind = 0 // MISSING
	switch s.Name {
	case connect.DecimalName:
		return nil, dataErrorf("Invalid type for Decimal, underlying representation should be numeric or bytes but was %s", k)
	case connect.DateName:
		return nil, dataErrorf("Invalid type for Date, underlying representation should be integer but was %s", k)
	case connect.TimeName:
		return nil, dataErrorf("Invalid type for Time, underlying representation should be integer but was %s", k)
	case connect.TimestampName:
		return nil, dataErrorf("Invalid type for Timestamp, underlying representation should be integral but was %s", k)
	}
	switch s.Type {
	case connect.Int8:
		return int8(0), nil
	case connect.Int16:
		return int16(0), nil
	case connect.Int32:
		return int32(0), nil
	case connect.Int64:
		return int64(0), nil
	case connect.Float32:
		return float32(0), nil
	case connect.Float64:
		return float64(0), nil
	case connect.Boolean:
		return false, nil
	case connect.String, connect.Bytes:
		return nil, nil
	case connect.Array:
		return []any{}, nil
	case connect.Map:
		if s.KeySchema != nil && s.KeySchema.Type == connect.String {
			return nil, dataErrorf("Maps with string fields should be encoded as JSON objects, but found %s", k)
		}
		return nil, dataErrorf("Maps with non-string fields should be encoded as JSON array of tuples, but found %s", k)
	case connect.StructType:
		return nil, dataErrorf("Structs should be encoded as JSON objects, but found %s", k)
	}
	return nil, dataErrorf("Unknown schema type: %s", s.Type)
}

func (d *decoder) null(s *connect.Schema) (any, error) {
	if s.Default != nil && d.replaceNull {
		return s.Default, nil
	}
	if s.Optional {
		return nil, nil
	}
	return nil, dataErrorf("Invalid null value for required %s field", s.Type)
}

func (d *decoder) decimal(s *connect.Schema) (any, error) {
	n, err := d.node()
	if err != nil {
		return nil, err
	}
	switch n.kind {
	case kNumber:
		dec, err := decimalValue(n.text)
		if err != nil {
			return nil, &connect.DataError{Msg: "Invalid bytes for Decimal field"}
		}
		return dec, nil
	case kString:
		var buf [32]byte
		b, ok := decodeBase64To(buf[:0], d.nodeBytes(n))
		if !ok || len(b) == 0 {
			return nil, &connect.DataError{Msg: "Invalid bytes for Decimal field"}
		}
		scale, err := connect.DecimalScale(s)
		if err != nil {
			return nil, &connect.DataError{Msg: "Invalid bytes for Decimal field"}
		}
		return connect.Decimal{Unscaled: unscaledFromBytes(b), Scale: scale}, nil
	}
	return nil, dataErrorf("Invalid type for Decimal, underlying representation should be numeric or bytes but was %s", n.kind)
}

const msPerDay = 24 * 60 * 60 * 1000

func (d *decoder) dateOrTime(s *connect.Schema) (any, error) {
	n, err := d.node()
	if err != nil {
		return nil, err
	}
	name := "Date"
	if s.Name == connect.TimeName {
		name = "Time"
	}
	if n.kind != kNumber || !isInt(n.text, n.float) {
		return nil, dataErrorf("Invalid type for %s, underlying representation should be integer but was %s", name, n.kind)
	}
	v := int32(intBits(n.text, false))
	if name == "Date" {
		return connect.DaysToDate(v), nil
	}
	if v < 0 || v > msPerDay {
		return nil, &connect.DataError{Msg: "Time values must use number of milliseconds greater than 0 and less than 86400000"}
	}
	return connect.MillisToTime(v), nil
}

func (d *decoder) timestamp() (any, error) {
	n, err := d.node()
	if err != nil {
		return nil, err
	}
	if n.kind != kNumber || n.float {
		return nil, dataErrorf("Invalid type for Timestamp, underlying representation should be integral but was %s", n.kind)
	}
	return d.bx.time(time.UnixMilli(intBits(n.text, false)).UTC()), nil
}
