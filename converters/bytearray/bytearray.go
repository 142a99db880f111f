// Package bytearray is Kafka's ByteArrayConverter
// (org.apache.kafka.connect.converters.ByteArrayConverter): record bytes
// pass through unchanged, read as OPTIONAL_BYTES. Values must be []byte
// with a BYTES schema or none. ToConnectData hands the record's bytes on
// without copying, as Kafka does. It is also a header converter.
package bytearray

import (
	"fmt"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/plugins"
)

// Class is the Java class name users configure.
const Class = "org.apache.kafka.connect.converters.ByteArrayConverter"

func init() {
	aliases := []string{"ByteArrayConverter", "ByteArray"}
	plugins.Register(plugins.Plugin{Class: Class, Aliases: aliases, Kind: plugins.Converter,
		New: func() any { return New() }})
	plugins.Register(plugins.Plugin{Class: Class, Aliases: aliases, Kind: plugins.HeaderConverter,
		New: func() any { return NewHeaderConverter() }})
}

var configDef = connect.NewConfigDef().
	Define(connect.ConfigKey{Name: "converter.type", Type: connect.TypeString, Default: connect.NoDefault,
		Validator: connect.OneOf("key", "value", "header"), Importance: connect.Low, Doc: "How this converter will be used."})

// Converter is ByteArrayConverter.
type Converter struct{}

var _ connect.ConcurrentConverter = (*Converter)(nil)

// ConcurrentSafe: the converter keeps no state beyond its configuration.
func (c *Converter) ConcurrentSafe() {}

// New returns a converter.
func New() *Converter { return &Converter{} }

// Config describes the settings (only converter.type).
func (c *Converter) Config() *connect.ConfigDef { return configDef }

// Version reports Kafka's version.
func (c *Converter) Version() string { return plugins.DefaultVersion }

// Configure does nothing: the converter has no settings.
func (c *Converter) Configure(props map[string]string, isKey bool) error { return nil }

// FromConnectData returns the bytes of v.
func (c *Converter) FromConnectData(topic string, headers *connect.Headers, s *connect.Schema, v any) ([]byte, error) {
	if s != nil && s.Type != connect.Bytes {
		return nil, &connect.DataError{Msg: "Invalid schema type for ByteArrayConverter: " + s.Type.String()}
	}
	if v == nil {
		return nil, nil
	}
	b, ok := v.([]byte)
	if !ok {
		return nil, &connect.DataError{Msg: fmt.Sprintf("ByteArrayConverter is not compatible with objects of type %T", v)}
	}
	return b, nil
}

// ToConnectData returns the bytes as an OPTIONAL_BYTES value.
func (c *Converter) ToConnectData(topic string, headers *connect.Headers, b []byte) (*connect.Schema, any, error) {
	if b == nil {
		return connect.OptionalBytesSchema, nil, nil
	}
	return connect.OptionalBytesSchema, b, nil
}

// HeaderConverter is ByteArrayConverter as a header converter.
type HeaderConverter struct{ Converter }

var _ connect.HeaderConverter = (*HeaderConverter)(nil)

// NewHeaderConverter returns a header converter.
func NewHeaderConverter() *HeaderConverter { return &HeaderConverter{} }

// Configure does nothing.
func (h *HeaderConverter) Configure(props map[string]string) error { return nil }

// FromConnectHeader returns the header value's bytes.
func (h *HeaderConverter) FromConnectHeader(topic, key string, s *connect.Schema, v any) ([]byte, error) {
	return h.FromConnectData(topic, nil, s, v)
}

// ToConnectHeader returns the header bytes.
func (h *HeaderConverter) ToConnectHeader(topic, key string, b []byte) (*connect.Schema, any, error) {
	return h.ToConnectData(topic, nil, b)
}
