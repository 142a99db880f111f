// Package header is Kafka's SimpleHeaderConverter
// (org.apache.kafka.connect.storage.SimpleHeaderConverter), the default
// header converter of Kafka Connect: header values are written as text
// (Values.convertToString) and read back with their types inferred
// (Values.parseString): "true" is a BOOLEAN, "42" the smallest integer
// type that holds it (INT8), "1.5" a FLOAT32, "[1,2]" an ARRAY,
// {"a":1} a MAP, "2024-01-15" a Date, anything else the STRING it is.
// Text Kafka's parser cannot read keeps its raw bytes (BYTES), as Kafka
// does.
//
// ParseString and FormatString are Kafka's Values.parseString and
// Values.convertToString for other packages (transforms that read header
// text, such as InsertHeader).
//
// Differences from Kafka, all in corners: Go maps have no order, so a
// parsed map formats with sorted keys (Kafka keeps the text's order); a
// map whose keys are arrays or maps (which a Go map cannot hold) stays
// text; dates use the proleptic Julian/Gregorian calendar Java uses,
// in UTC (Kafka uses the JVM's zone, UTC on Connect workers).
package header

import (
	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/plugins"
	"github.com/fjordhq/fjord/converters/internal/jvm"
)

// Class is the Java class name users configure.
const Class = "org.apache.kafka.connect.storage.SimpleHeaderConverter"

func init() {
	plugins.Register(plugins.Plugin{Class: Class, Aliases: []string{"SimpleHeaderConverter", "SimpleHeader"},
		Kind: plugins.HeaderConverter, New: func() any { return New() }})
}

// Converter is SimpleHeaderConverter. It has no settings and is safe for
// concurrent use.
type Converter struct{}

var _ connect.HeaderConverter = (*Converter)(nil)

// New returns a converter.
func New() *Converter { return &Converter{} }

// Config describes the settings (none).
func (c *Converter) Config() *connect.ConfigDef { return connect.NewConfigDef() }

// Version reports Kafka's version.
func (c *Converter) Version() string { return plugins.DefaultVersion }

// Configure does nothing.
func (c *Converter) Configure(props map[string]string) error { return nil }

// FromConnectHeader writes the value's text in UTF-8; nil stays nil.
func (c *Converter) FromConnectHeader(topic, key string, s *connect.Schema, v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	str, err := FormatString(s, v)
	if err != nil {
		return nil, err
	}
	return []byte(str), nil
}

// AppendConnectHeader appends what FromConnectHeader returns to dst (a
// nil value appends nothing): the runtime converts a record's headers into
// its poll buffer without allocating.
func (c *Converter) AppendConnectHeader(dst []byte, topic, key string, s *connect.Schema, v any) ([]byte, error) {
	if v == nil {
		return dst, nil
	}
	return appendValue(dst, v, false)
}

// ToConnectHeader infers the schema and value of header text. Bytes it
// cannot parse are returned as they are, with a BYTES schema.
func (c *Converter) ToConnectHeader(topic, key string, b []byte) (*connect.Schema, any, error) {
	if b == nil {
		return nil, nil, nil
	}
	s, v, err := ParseString(jvm.DecodeUTF8(b))
	if err != nil {
		return connect.BytesSchema, b, nil
	}
	return s, v, nil
}
