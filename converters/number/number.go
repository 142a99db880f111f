// Package number is Kafka's converters for single numbers and booleans
// (org.apache.kafka.connect.converters.LongConverter, IntegerConverter,
// ShortConverter, DoubleConverter, FloatConverter and BooleanConverter):
// the big-endian layouts of Kafka's LongSerializer, IntegerSerializer,
// ShortSerializer, DoubleSerializer, FloatSerializer and
// BooleanSerializer. Values must be of the exact Go type (int64 for
// LongConverter, ...); they read back with the optional schema of their
// type. Each is also a header converter.
package number

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/plugins"
)

// Kind describes one of the converters.
type Kind struct {
	class    string
	alias    string
	typeName string // in Kafka's messages
	schema   *connect.Schema
	size     int
	encode   func(dst []byte, v any) ([]byte, bool)
	decode   func(b []byte) (any, error)
}

const pkg = "org.apache.kafka.connect.converters."

var (
	// Long is LongConverter (int64, 8 bytes).
	Long = &Kind{class: pkg + "LongConverter", alias: "LongConverter", typeName: "long", schema: connect.OptionalInt64Schema, size: 8,
		encode: func(dst []byte, v any) ([]byte, bool) {
			x, ok := v.(int64)
			return binary.BigEndian.AppendUint64(dst, uint64(x)), ok
		},
		decode: func(b []byte) (any, error) { return int64(binary.BigEndian.Uint64(b)), nil }}
	// Integer is IntegerConverter (int32, 4 bytes).
	Integer = &Kind{class: pkg + "IntegerConverter", alias: "IntegerConverter", typeName: "integer", schema: connect.OptionalInt32Schema, size: 4,
		encode: func(dst []byte, v any) ([]byte, bool) {
			x, ok := v.(int32)
			return binary.BigEndian.AppendUint32(dst, uint32(x)), ok
		},
		decode: func(b []byte) (any, error) { return int32(binary.BigEndian.Uint32(b)), nil }}
	// Short is ShortConverter (int16, 2 bytes).
	Short = &Kind{class: pkg + "ShortConverter", alias: "ShortConverter", typeName: "short", schema: connect.OptionalInt16Schema, size: 2,
		encode: func(dst []byte, v any) ([]byte, bool) {
			x, ok := v.(int16)
			return binary.BigEndian.AppendUint16(dst, uint16(x)), ok
		},
		decode: func(b []byte) (any, error) { return int16(binary.BigEndian.Uint16(b)), nil }}
	// Double is DoubleConverter (float64, 8 bytes; NaN written as Java's
	// canonical NaN, as doubleToLongBits does).
	Double = &Kind{class: pkg + "DoubleConverter", alias: "DoubleConverter", typeName: "double", schema: connect.OptionalFloat64Schema, size: 8,
		encode: func(dst []byte, v any) ([]byte, bool) {
			x, ok := v.(float64)
			bits := math.Float64bits(x)
			if x != x {
				bits = 0x7ff8000000000000
			}
			return binary.BigEndian.AppendUint64(dst, bits), ok
		},
		decode: func(b []byte) (any, error) { return math.Float64frombits(binary.BigEndian.Uint64(b)), nil }}
	// Float is FloatConverter (float32, 4 bytes, raw bits as
	// floatToRawIntBits).
	Float = &Kind{class: pkg + "FloatConverter", alias: "FloatConverter", typeName: "float", schema: connect.OptionalFloat32Schema, size: 4,
		encode: func(dst []byte, v any) ([]byte, bool) {
			x, ok := v.(float32)
			return binary.BigEndian.AppendUint32(dst, math.Float32bits(x)), ok
		},
		decode: func(b []byte) (any, error) { return math.Float32frombits(binary.BigEndian.Uint32(b)), nil }}
	// Boolean is BooleanConverter (bool, 1 byte: 0 or 1).
	Boolean = &Kind{class: pkg + "BooleanConverter", alias: "BooleanConverter", typeName: "boolean", schema: connect.OptionalBooleanSchema, size: 1,
		encode: func(dst []byte, v any) ([]byte, bool) {
			x, ok := v.(bool)
			if x {
				return append(dst, 1), ok
			}
			return append(dst, 0), ok
		},
		decode: func(b []byte) (any, error) {
			switch b[0] {
			case 0:
				return false, nil
			case 1:
				return true, nil
			}
			return nil, fmt.Errorf("Unexpected byte received by BooleanDeserializer: %d", int8(b[0]))
		}}
)

var kinds = []*Kind{Long, Integer, Short, Double, Float, Boolean}

// deserializerName is the Kafka class named in size errors.
func (k *Kind) deserializerName() string {
	switch k {
	case Long:
		return "LongDeserializer"
	case Integer:
		return "IntegerDeserializer"
	case Short:
		return "ShortDeserializer"
	case Double:
		return "DoubleDeserializer"
	case Float:
		return "FloatDeserializer"
	}
	return "BooleanDeserializer"
}

func init() {
	for _, k := range kinds {
		// Kafka's aliases: the simple class name and it without
		// "Converter".
		aliases := []string{k.alias, strings.TrimSuffix(k.alias, "Converter")}
		plugins.Register(plugins.Plugin{Class: k.class, Aliases: aliases, Kind: plugins.Converter,
			New: func() any { return New(k) }})
		plugins.Register(plugins.Plugin{Class: k.class, Aliases: aliases, Kind: plugins.HeaderConverter,
			New: func() any { return NewHeaderConverter(k) }})
	}
}

const converterTypeConfig = "converter.type"

var configDef = connect.NewConfigDef().
	Define(connect.ConfigKey{Name: converterTypeConfig, Type: connect.TypeString, Default: connect.NoDefault,
		Validator: connect.OneOf("key", "value", "header"), Importance: connect.Low, Doc: "How this converter will be used."})

// Converter is one of Kafka's number converters (or BooleanConverter).
type Converter struct{ k *Kind }

var _ connect.ConcurrentConverter = (*Converter)(nil)

// ConcurrentSafe: the converter keeps no state beyond its configuration.
func (c *Converter) ConcurrentSafe() {}

// New returns the converter of kind k (Long, Integer, Short, Double,
// Float or Boolean).
func New(k *Kind) *Converter { return &Converter{k: k} }

// Config describes the settings (only converter.type).
func (c *Converter) Config() *connect.ConfigDef { return configDef }

// Version reports Kafka's version.
func (c *Converter) Version() string { return plugins.DefaultVersion }

// Configure checks the settings.
func (c *Converter) Configure(props map[string]string, isKey bool) error {
	p := map[string]string{converterTypeConfig: "value"}
	if isKey {
		p[converterTypeConfig] = "key"
	}
	_, err := configDef.Parse(p)
	return err
}

// FromConnectData writes v's bytes; the schema is not consulted, except
// by BooleanConverter, which refuses non-BOOLEAN schemas as Kafka's does.
func (c *Converter) FromConnectData(topic string, headers *connect.Headers, s *connect.Schema, v any) ([]byte, error) {
	if c.k == Boolean && s != nil && s.Type != connect.Boolean {
		return nil, &connect.DataError{Msg: "Invalid schema type for BooleanConverter: " + s.Type.String()}
	}
	if v == nil {
		return nil, nil
	}
	out, ok := c.k.encode(make([]byte, 0, c.k.size), v)
	if !ok {
		if c.k == Boolean {
			return nil, &connect.DataError{Msg: fmt.Sprintf("BooleanConverter is not compatible with objects of type %T", v)}
		}
		return nil, &connect.DataError{Msg: fmt.Sprintf("Failed to serialize to %s (was %T): ", c.k.typeName, v)}
	}
	return out, nil
}

// ToConnectData reads the bytes, which must be exactly the type's size.
func (c *Converter) ToConnectData(topic string, headers *connect.Headers, b []byte) (*connect.Schema, any, error) {
	if b == nil {
		return c.k.schema, nil, nil
	}
	if len(b) != c.k.size {
		return nil, nil, &connect.DataError{Msg: fmt.Sprintf("Failed to deserialize %s: Size of data received by %s is not %d",
			c.k.typeName, c.k.deserializerName(), c.k.size)}
	}
	v, err := c.k.decode(b)
	if err != nil {
		return nil, nil, &connect.DataError{Msg: fmt.Sprintf("Failed to deserialize %s: %v", c.k.typeName, err)}
	}
	return c.k.schema, v, nil
}

// HeaderConverter is a number converter as a header converter.
type HeaderConverter struct{ Converter }

var _ connect.HeaderConverter = (*HeaderConverter)(nil)

// NewHeaderConverter returns the header converter of kind k.
func NewHeaderConverter(k *Kind) *HeaderConverter { return &HeaderConverter{Converter{k: k}} }

// Configure checks the settings.
func (h *HeaderConverter) Configure(props map[string]string) error { return nil }

// FromConnectHeader writes the header value's bytes.
func (h *HeaderConverter) FromConnectHeader(topic, key string, s *connect.Schema, v any) ([]byte, error) {
	return h.FromConnectData(topic, nil, s, v)
}

// ToConnectHeader reads header bytes.
func (h *HeaderConverter) ToConnectHeader(topic, key string, b []byte) (*connect.Schema, any, error) {
	return h.ToConnectData(topic, nil, b)
}
