package json

import (
	"strings"
	"sync"
	"sync/atomic"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/plugins"
)

// Class is the Java class name users configure.
const Class = "org.apache.kafka.connect.json.JsonConverter"

func init() {
	aliases := []string{"JsonConverter", "Json"}
	plugins.Register(plugins.Plugin{Class: Class, Aliases: aliases, Kind: plugins.Converter,
		New: func() any { return New() }})
	plugins.Register(plugins.Plugin{Class: Class, Aliases: aliases, Kind: plugins.HeaderConverter,
		New: func() any { return NewHeaderConverter() }})
}

// Config keys, as Kafka's JsonConverterConfig and ConverterConfig.
const (
	SchemasEnableConfig          = "schemas.enable"
	SchemasCacheSizeConfig       = "schemas.cache.size"
	SchemaContentConfig          = "schema.content"
	DecimalFormatConfig          = "decimal.format"
	ReplaceNullWithDefaultConfig = "replace.null.with.default"
	ConverterTypeConfig          = "converter.type"
)

var configDef = connect.NewConfigDef().
	Define(connect.ConfigKey{Name: ConverterTypeConfig, Type: connect.TypeString, Default: connect.NoDefault,
		Validator: connect.OneOf("key", "value", "header"), Importance: connect.Low, Doc: "How this converter will be used."}).
	Define(connect.ConfigKey{Name: SchemasEnableConfig, Type: connect.TypeBoolean, Default: true, Importance: connect.High,
		Doc: "Include schemas within each of the serialized values and keys.", Group: "Schemas", OrderInGroup: 0,
		Width: connect.WidthMedium, DisplayName: "Enable Schemas"}).
	Define(connect.ConfigKey{Name: SchemasCacheSizeConfig, Type: connect.TypeInt, Default: int32(1000), Importance: connect.High,
		Doc: "The maximum number of schemas that can be cached in this converter instance.", Group: "Schemas", OrderInGroup: 1,
		Width: connect.WidthMedium, DisplayName: "Schema Cache Size"}).
	Define(connect.ConfigKey{Name: SchemaContentConfig, Type: connect.TypeString, Default: nil, Importance: connect.High,
		Doc:   "When set, this is used as the schema for all messages, and the schemas within each of the message will be ignored.Otherwise, the schema will be included in the content of each message. This configuration applies only 'schemas.enable' is true, and it exclusively affects the sink connector.",
		Group: "Schemas", OrderInGroup: 2, Width: connect.WidthMedium, DisplayName: "Schema Content"}).
	Define(connect.ConfigKey{Name: DecimalFormatConfig, Type: connect.TypeString, Default: "BASE64",
		Validator: connect.OneOfFold("BASE64", "NUMERIC"), Importance: connect.Low,
		Doc:   "Controls which format this converter will serialize decimals in. This value is case insensitive and can be either 'BASE64' (default) or 'NUMERIC'",
		Group: "Serialization", OrderInGroup: 0, Width: connect.WidthMedium, DisplayName: "Decimal Format"}).
	Define(connect.ConfigKey{Name: ReplaceNullWithDefaultConfig, Type: connect.TypeBoolean, Default: true, Importance: connect.Low,
		Doc:   "Whether to replace fields that have a default value and that are null to the default value. When set to true, the default value is used, otherwise null is used.",
		Group: "Serialization", OrderInGroup: 1, Width: connect.WidthMedium, DisplayName: "Replace null with default"})

// errContentSerialization starts the error for a schema.content that is
// not JSON (Kafka's message ends there; ours adds the parser's reason).
const errContentSerialization = "Failed to parse schema in converter config due to serialization error: "

// Converter is Kafka's JsonConverter: a Converter and a HeaderConverter.
// It is safe for concurrent use. The zero value behaves as Kafka's
// defaults (schemas.enable=true, BASE64 decimals, nulls replaced by
// defaults, 1000 schemas cached); Configure changes them.
type Converter struct {
	schemasDisabled bool
	decimalNumeric  bool
	keepNull        bool // replace.null.with.default=false
	cacheSize       int  // 0: the default (1000); <0: no caching
	// content is schema.content (KIP-1054): with schemas.enable, every
	// message is a bare payload of this schema, without the envelope.
	content *connect.Schema

	cache      atomic.Pointer[caches]
	lastSchema atomic.Pointer[schemaBytes]
	lastDec    atomic.Pointer[decodedSchema]
	boxes      boxPool // blocks decoded values live in
}

type caches struct {
	enc *lru[*connect.Schema, []byte]
	dec *lru[string, *connect.Schema]
}

var _ connect.ConcurrentConverter = (*Converter)(nil)

// ConcurrentSafe: see the type's documentation.
func (c *Converter) ConcurrentSafe() {}

// New returns a converter with Kafka's default settings.
func New() *Converter { return &Converter{} }

// Config describes the settings (the REST API's plugin config).
func (c *Converter) Config() *connect.ConfigDef { return configDef }

// Version reports Kafka's version, as Kafka's converters do.
func (c *Converter) Version() string { return plugins.DefaultVersion }

// Configure applies the converter's settings (the key.converter. or
// value.converter. prefixed worker or connector keys).
func (c *Converter) Configure(props map[string]string, isKey bool) error {
	p := make(map[string]string, len(props)+1)
	for k, v := range props {
		p[k] = v
	}
	if isKey {
		p[ConverterTypeConfig] = "key"
	} else {
		p[ConverterTypeConfig] = "value"
	}
	return c.configure(p)
}

func (c *Converter) configure(props map[string]string) error {
	cfg, err := configDef.Parse(props)
	if err != nil {
		return err
	}
	c.schemasDisabled = !cfg.Bool(SchemasEnableConfig)
	c.decimalNumeric = strings.EqualFold(cfg.String(DecimalFormatConfig), "NUMERIC")
	c.keepNull = !cfg.Bool(ReplaceNullWithDefaultConfig)
	c.cacheSize = int(cfg.Int(SchemasCacheSizeConfig))
	if c.cacheSize == 0 {
		c.cacheSize = -1
	}
	// Kafka's JsonConverter.configure: an empty schema.content is none;
	// one that is not JSON is a DataException naming the config; one
	// whose JSON is no Connect schema fails as an envelope's would.
	// "null" is no schema, as in an envelope.
	c.content = nil
	if sc := cfg.String(SchemaContentConfig); sc != "" {
		sn := scanner{data: []byte(sc)}
		sn.skipBOM()
		n, err := parseNode(&sn)
		if err == nil {
			err = sn.rootEnd(false)
		}
		if err != nil {
			return &connect.DataError{Msg: errContentSerialization + err.Error()}
		}
		if c.content, err = c.asConnectSchema(n); err != nil {
			return err
		}
	}
	c.cache.Store(nil)
	c.lastSchema.Store(nil)
	c.lastDec.Store(nil)
	return nil
}

func (c *Converter) caches() *caches {
	if p := c.cache.Load(); p != nil {
		return p
	}
	n := c.cacheSize
	if n == 0 {
		n = 1000
	}
	p := &caches{enc: newLRU[*connect.Schema, []byte](n), dec: newLRU[string, *connect.Schema](n)}
	if c.cache.CompareAndSwap(nil, p) {
		return p
	}
	return c.cache.Load()
}

func (c *Converter) encCache() *lru[*connect.Schema, []byte] { return c.caches().enc }

func (c *Converter) decCache() *lru[string, *connect.Schema] { return c.caches().dec }

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

// FromConnectData converts a Connect value to JSON: with
// schemas.enable, the {"schema":...,"payload":...} envelope. A nil
// schema with a nil value is a tombstone: nil bytes.
func (c *Converter) FromConnectData(topic string, headers *connect.Headers, s *connect.Schema, v any) ([]byte, error) {
	if s == nil && v == nil {
		return nil, nil
	}
	bp := bufPool.Get().(*[]byte)
	b, err := c.AppendConnectData((*bp)[:0], s, v)
	var out []byte
	if err == nil {
		out = make([]byte, len(b))
		copy(out, b)
	}
	if cap(b) <= 1<<20 {
		*bp = b[:0]
		bufPool.Put(bp)
	}
	return out, err
}

// AppendConnectData appends the JSON of v to dst, for callers that reuse
// buffers. Unlike FromConnectData it writes "null" for a nil schema and
// value.
func (c *Converter) AppendConnectData(dst []byte, s *connect.Schema, v any) ([]byte, error) {
	e := encoder{decimalNumeric: c.decimalNumeric, replaceNull: !c.keepNull}
	if s != nil {
		// The schema's JSON is cached with its field names. Without
		// the envelope only the names are wanted, and a schema whose
		// JSON Kafka could not write (a bad default) is no error.
		if top, err := c.topSchema(&e, s); err == nil {
			e.top = top
		} else if !c.schemasDisabled {
			return dst, err
		}
	}
	if c.schemasDisabled {
		return e.value(dst, s, v)
	}
	dst = append(dst, `{"schema":`...)
	var err error
	if s == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, e.top.b...)
	}
	dst = append(dst, `,"payload":`...)
	if dst, err = e.value(dst, s, v); err != nil {
		return dst, err
	}
	return append(dst, '}'), nil
}

// ToConnectData converts JSON to a Connect schema and value; nil bytes
// (a tombstone) give a nil schema and value.
func (c *Converter) ToConnectData(topic string, headers *connect.Headers, b []byte) (*connect.Schema, any, error) {
	if b == nil {
		return nil, nil, nil
	}
	return c.decode(b)
}

// HeaderConverter is JsonConverter used as a header converter (Kafka's
// class is both; in Go the two Configure methods need two types). It
// converts each header value as the Converter converts record values.
type HeaderConverter struct{ Converter }

var _ connect.HeaderConverter = (*HeaderConverter)(nil)

// NewHeaderConverter returns a header converter with Kafka's defaults.
func NewHeaderConverter() *HeaderConverter { return &HeaderConverter{} }

// Configure applies the settings (header.converter. prefixed keys);
// converter.type defaults to header.
func (h *HeaderConverter) Configure(props map[string]string) error {
	p := make(map[string]string, len(props)+1)
	p[ConverterTypeConfig] = "header"
	for k, v := range props {
		p[k] = v
	}
	return h.configure(p)
}

// FromConnectHeader converts a header value as FromConnectData does.
func (h *HeaderConverter) FromConnectHeader(topic, key string, s *connect.Schema, v any) ([]byte, error) {
	return h.FromConnectData(topic, nil, s, v)
}

// ToConnectHeader converts header bytes as ToConnectData does.
func (h *HeaderConverter) ToConnectHeader(topic, key string, b []byte) (*connect.Schema, any, error) {
	return h.ToConnectData(topic, nil, b)
}
