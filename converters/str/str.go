// Package str is Kafka's StringConverter
// (org.apache.kafka.connect.storage.StringConverter): values are written
// as their string form (Java's toString of the Connect value, so an
// INT32 5 is "5" and a struct "Struct{a=1}") in converter.encoding, and
// read back as OPTIONAL_STRING whatever they were. It is also a header
// converter.
//
// Encodings are the ones Kafka Connect users set in practice: UTF-8 (the
// default), UTF-16 (with Java's byte order mark handling), UTF-16BE,
// UTF-16LE, ISO-8859-1 and US-ASCII, under Java's names and aliases.
// Unmappable characters become '?' and malformed input U+FFFD, as
// Java's String encoding does.
package str

import (
	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/plugins"
	"github.com/fjordhq/fjord/converters/internal/jvm"
)

// Class is the Java class name users configure.
const Class = "org.apache.kafka.connect.storage.StringConverter"

// Config keys, as Kafka's StringConverterConfig.
const (
	EncodingConfig      = "converter.encoding"
	ConverterTypeConfig = "converter.type"
)

func init() {
	aliases := []string{"StringConverter", "String"}
	plugins.Register(plugins.Plugin{Class: Class, Aliases: aliases, Kind: plugins.Converter,
		New: func() any { return New() }})
	plugins.Register(plugins.Plugin{Class: Class, Aliases: aliases, Kind: plugins.HeaderConverter,
		New: func() any { return NewHeaderConverter() }})
}

var configDef = connect.NewConfigDef().
	Define(connect.ConfigKey{Name: ConverterTypeConfig, Type: connect.TypeString, Default: connect.NoDefault,
		Validator: connect.OneOf("key", "value", "header"), Importance: connect.Low, Doc: "How this converter will be used."}).
	Define(connect.ConfigKey{Name: EncodingConfig, Type: connect.TypeString, Default: "UTF-8", Importance: connect.High,
		Doc: "The name of the Java character set to use for encoding strings as byte arrays.", OrderInGroup: -1,
		Width: connect.WidthMedium, DisplayName: "Encoding"})

// Converter is StringConverter. The zero value writes UTF-8.
type Converter struct {
	cs *charset
}

var _ connect.ConcurrentConverter = (*Converter)(nil)

// ConcurrentSafe: the converter keeps no state beyond its configuration.
func (c *Converter) ConcurrentSafe() {}

// New returns a UTF-8 converter.
func New() *Converter { return &Converter{} }

// Config describes the settings.
func (c *Converter) Config() *connect.ConfigDef { return configDef }

// Version reports Kafka's version.
func (c *Converter) Version() string { return plugins.DefaultVersion }

// Configure applies converter.encoding.
func (c *Converter) Configure(props map[string]string, isKey bool) error {
	typ := "value"
	if isKey {
		typ = "key"
	}
	return c.configure(props, typ)
}

func (c *Converter) configure(props map[string]string, typ string) error {
	p := make(map[string]string, len(props)+1)
	for k, v := range props {
		p[k] = v
	}
	if _, ok := p[ConverterTypeConfig]; !ok || typ != "header" {
		p[ConverterTypeConfig] = typ
	}
	cfg, err := configDef.Parse(p)
	if err != nil {
		return err
	}
	cs, err := lookupCharset(cfg.String(EncodingConfig))
	if err != nil {
		return err
	}
	c.cs = cs
	return nil
}

// FromConnectData writes v's string form; nil stays nil.
func (c *Converter) FromConnectData(topic string, headers *connect.Headers, s *connect.Schema, v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	if str, ok := v.(string); ok && c.utf8() {
		return []byte(str), nil
	}
	return c.charset().encode(string(jvm.AppendString(nil, v))), nil
}

// ToConnectData reads bytes as an OPTIONAL_STRING.
func (c *Converter) ToConnectData(topic string, headers *connect.Headers, b []byte) (*connect.Schema, any, error) {
	if b == nil {
		return connect.OptionalStringSchema, nil, nil
	}
	return connect.OptionalStringSchema, c.charset().decode(b), nil
}

func (c *Converter) charset() *charset {
	if c.cs == nil {
		return utf8Charset
	}
	return c.cs
}

func (c *Converter) utf8() bool { return c.cs == nil || c.cs == utf8Charset }

// HeaderConverter is StringConverter as a header converter.
type HeaderConverter struct{ Converter }

var _ connect.HeaderConverter = (*HeaderConverter)(nil)

// NewHeaderConverter returns a UTF-8 header converter.
func NewHeaderConverter() *HeaderConverter { return &HeaderConverter{} }

// Configure applies converter.encoding.
func (h *HeaderConverter) Configure(props map[string]string) error {
	return h.configure(props, "header")
}

// FromConnectHeader writes the header value's string form.
func (h *HeaderConverter) FromConnectHeader(topic, key string, s *connect.Schema, v any) ([]byte, error) {
	return h.FromConnectData(topic, nil, s, v)
}

// ToConnectHeader reads header bytes as an OPTIONAL_STRING.
func (h *HeaderConverter) ToConnectHeader(topic, key string, b []byte) (*connect.Schema, any, error) {
	return h.ToConnectData(topic, nil, b)
}
