// Package avro is Confluent's AvroConverter for Fjord's Connect runtime:
// Connect data ↔ Confluent's wire format (magic byte 0, 4-byte
// big-endian schema id, Avro binary), with schemas registered in a
// Confluent-compatible schema registry (Fjord's own, api/schemaregistry,
// or Confluent's).
//
//	"value.converter": "io.confluent.connect.avro.AvroConverter",
//	"value.converter.schema.registry.url": "http://127.0.0.1:8081"
//
// A Connect schema becomes the Avro schema Confluent's AvroData makes
// (avrodata.go: structs are records named after the schema or
// io.confluent.connect.avro.ConnectDefault, optional schemas are unions
// with null first, connect.name/version/doc/default/parameters
// properties, Decimal/Date/Time/Timestamp as Avro logical types, maps
// with non-string keys as arrays of MapEntry records). The schema is
// registered (auto.register.schemas) or looked up under the subject the
// subject name strategy gives, the id is cached, and the value is
// encoded with goavro. Reading fetches the writer schema by id (cached)
// and converts back, as AvroData.toConnectData.
//
// Equal values give equal bytes (maps are written in key order), so
// Avro keys work on compacted topics. A decoded value never shares the
// message's bytes. Block counts are checked against the message size
// before goavro allocates (check.go).
//
// Schemaless values (a nil schema) travel in Confluent's
// io.confluent.connect.avro.Anything record and come back schemaless.
//
// Not supported: enhanced.avro.schema.support, generalized sum types, schema
// references, scrub.invalid.names, latest.compatibility.strict (the
// latest schema is used as is), and struct-typed defaults when reading.
package avro

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linkedin/goavro/v2"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/plugins"
	"github.com/fjordhq/fjord/converters/avro/avsc"
)

// Class is the Java class name Kafka Connect users configure.
const Class = "io.confluent.connect.avro.AvroConverter"

func init() {
	plugins.Register(plugins.Plugin{
		Class: Class,
		// Kafka also answers to the simple name and to it pruned of
		// "Converter" (PluginUtils.prunedName).
		Aliases: []string{"AvroConverter", "Avro"},
		Kind:    plugins.Converter,
		Version: "7.9.0-fjord",
		New:     func() any { return NewConverter() },
	})
}

// Config keys, as Confluent's AbstractKafkaSchemaSerDeConfig and
// AvroDataConfig.
const (
	KeyRegistryURL        = "schema.registry.url"
	KeyAutoRegister       = "auto.register.schemas"
	KeyUseLatest          = "use.latest.version"
	KeyKeyStrategy        = "key.subject.name.strategy"
	KeyValueStrategy      = "value.subject.name.strategy"
	KeyAuthSource         = "basic.auth.credentials.source"
	KeyAuthUserInfo       = "basic.auth.user.info"
	KeySchemaCache        = "schemas.cache.config"
	KeyConnectMeta        = "connect.meta.data"
	KeyEnhancedAvro       = "enhanced.avro.schema.support"
	KeyScrubInvalidNames  = "scrub.invalid.names"
	KeyLatestCompatStrict = "latest.compatibility.strict"

	TopicNameStrategy       = "io.confluent.kafka.serializers.subject.TopicNameStrategy"
	RecordNameStrategy      = "io.confluent.kafka.serializers.subject.RecordNameStrategy"
	TopicRecordNameStrategy = "io.confluent.kafka.serializers.subject.TopicRecordNameStrategy"
)

// ConfigDef is the converter's config definition.
func ConfigDef() *connect.ConfigDef {
	strategy := func(name string, v any) error {
		if _, err := parseStrategy(fmt.Sprint(v)); err != nil {
			return err
		}
		return nil
	}
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: KeyRegistryURL, Type: connect.TypeList, Default: connect.NoDefault, Importance: connect.High,
			Doc: "Comma-separated list of URLs for Schema Registry instances that can be used to register or look up schemas."}).
		Define(connect.ConfigKey{Name: KeyAutoRegister, Type: connect.TypeBoolean, Default: true, Importance: connect.Medium,
			Doc: "Specify if the Serializer should attempt to register the Schema with Schema Registry"}).
		Define(connect.ConfigKey{Name: KeyUseLatest, Type: connect.TypeBoolean, Default: false, Importance: connect.Low,
			Doc: "Specify if the Serializer should use the latest subject version for serialization"}).
		Define(connect.ConfigKey{Name: KeyLatestCompatStrict, Type: connect.TypeBoolean, Default: true, Importance: connect.Low,
			Doc: "If true, and using the latest version, check that the latest version is backward compatible with the schema of the object."}).
		Define(connect.ConfigKey{Name: KeyKeyStrategy, Type: connect.TypeClass, Default: TopicNameStrategy, Importance: connect.Medium, Validator: strategy,
			Doc: "Determines how to construct the subject name under which the key schema is registered with the schema registry."}).
		Define(connect.ConfigKey{Name: KeyValueStrategy, Type: connect.TypeClass, Default: TopicNameStrategy, Importance: connect.Medium, Validator: strategy,
			Doc: "Determines how to construct the subject name under which the value schema is registered with the schema registry."}).
		Define(connect.ConfigKey{Name: KeyAuthSource, Type: connect.TypeString, Default: "URL", Importance: connect.Medium,
			Doc: "Specify how to pick the credentials for Basic Auth header. The supported values are URL and USER_INFO"}).
		Define(connect.ConfigKey{Name: KeyAuthUserInfo, Type: connect.TypePassword, Default: connect.Password(""), Importance: connect.Medium,
			Doc: "Specify the user info for Basic Auth in the form of {username}:{password}"}).
		Define(connect.ConfigKey{Name: KeySchemaCache, Type: connect.TypeInt, Default: int32(1000), Importance: connect.Low,
			Doc: "Size of the converted Avro schema cache"}).
		Define(connect.ConfigKey{Name: KeyConnectMeta, Type: connect.TypeBoolean, Default: true, Importance: connect.Low,
			Doc: "Toggle for enabling/disabling connect converter to add its meta data to the output schema or not"}).
		Define(connect.ConfigKey{Name: KeyEnhancedAvro, Type: connect.TypeBoolean, Default: false, Importance: connect.Low,
			Doc: "Toggle for enabling/disabling enhanced avro schema support: Enum symbol preservation and Package Name awareness (not supported by Fjord)"}).
		Define(connect.ConfigKey{Name: KeyScrubInvalidNames, Type: connect.TypeBoolean, Default: false, Importance: connect.Low,
			Doc: "Whether to scrub invalid names (not supported by Fjord)"})
}

type strategyFunc func(topic string, isKey bool, s *avsc.Schema) string

func parseStrategy(name string) (strategyFunc, error) {
	short := name[strings.LastIndexByte(name, '.')+1:]
	switch short {
	case "TopicNameStrategy":
		return func(topic string, isKey bool, _ *avsc.Schema) string {
			if isKey {
				return topic + "-key"
			}
			return topic + "-value"
		}, nil
	case "RecordNameStrategy":
		return func(_ string, _ bool, s *avsc.Schema) string { return recordName(s) }, nil
	case "TopicRecordNameStrategy":
		return func(topic string, _ bool, s *avsc.Schema) string { return topic + "-" + recordName(s) }, nil
	}
	return nil, fmt.Errorf("unknown subject name strategy %s: use %s, %s or %s", name, TopicNameStrategy, RecordNameStrategy, TopicRecordNameStrategy)
}

// recordName is Avro's getFullName: a named type's full name, else the
// type name.
func recordName(s *avsc.Schema) string {
	if s.IsNamed() {
		return s.FullName()
	}
	return string(s.Type)
}

// Converter is the AvroConverter.
type Converter struct {
	isKey        bool
	client       *Client
	autoRegister bool
	useLatest    bool
	strategy     strategyFunc
	data         avroData
	cacheSize    int
	timeout      time.Duration

	mu      sync.Mutex
	writers map[*connect.Schema]*writer
	readers map[readerKey]*reader
	parsed  map[int32]*avsc.Schema
	codecs  map[string]*goavro.Codec // plain schema text → codec

	lastReader atomic.Pointer[lastReader] // the last reader looked up
}

type writer struct {
	schema  *avsc.Schema
	text    string
	targets map[string]target // by subject; guarded by Converter.mu
}

type target struct {
	id    int32
	codec *goavro.Codec
}

type readerKey struct {
	id      int32
	subject string
}

type reader struct {
	schema  *avsc.Schema
	connect *connect.Schema
	codec   *goavro.Codec
	blocks  bool // has arrays or maps: check block counts first
	// anything is schemaless data (Confluent's Anything record).
	anything bool
}

var _ connect.ConcurrentConverter = (*Converter)(nil)

// ConcurrentSafe: once configured, the converter's caches are locked or
// atomic and goavro's codecs are safe for concurrent use.
func (c *Converter) ConcurrentSafe() {}

// NewConverter returns an unconfigured converter.
func NewConverter() *Converter { return &Converter{} }

// Config is the converter's config definition.
func (c *Converter) Config() *connect.ConfigDef { return ConfigDef() }

// Configure reads the converter's settings.
func (c *Converter) Configure(props map[string]string, isKey bool) error {
	cfg, err := ConfigDef().Parse(props)
	if err != nil {
		return err
	}
	c.isKey = isKey
	c.autoRegister = cfg.Bool(KeyAutoRegister)
	c.useLatest = cfg.Bool(KeyUseLatest)
	c.data = avroData{connectMeta: cfg.Bool(KeyConnectMeta)}
	if cfg.Bool(KeyEnhancedAvro) || cfg.Bool(KeyScrubInvalidNames) {
		return fmt.Errorf("%s and %s are not supported by Fjord's AvroConverter; leave them false", KeyEnhancedAvro, KeyScrubInvalidNames)
	}
	c.cacheSize = max(int(cfg.Int(KeySchemaCache)), 1)
	sk := KeyValueStrategy
	if isKey {
		sk = KeyKeyStrategy
	}
	if c.strategy, err = parseStrategy(cfg.String(sk)); err != nil {
		return err
	}
	userInfo := ""
	switch src := strings.ToUpper(cfg.String(KeyAuthSource)); src {
	case "URL", "":
	case "USER_INFO":
		userInfo = cfg.Password(KeyAuthUserInfo)
	default:
		return fmt.Errorf("%s=%s is not supported: use URL or USER_INFO", KeyAuthSource, src)
	}
	if c.client, err = NewClient(cfg.List(KeyRegistryURL), userInfo, c.cacheSize); err != nil {
		return err
	}
	c.timeout = 30 * time.Second
	c.writers, c.readers, c.codecs = map[*connect.Schema]*writer{}, map[readerKey]*reader{}, map[string]*goavro.Codec{}
	c.parsed = map[int32]*avsc.Schema{}
	c.lastReader.Store(nil)
	return nil
}

func serErr(topic string, err error) error {
	return &connect.DataError{Msg: fmt.Sprintf("Failed to serialize Avro data from topic %s : %v", topic, err)}
}

func deserErr(topic string, err error) error {
	return &connect.DataError{Msg: fmt.Sprintf("Failed to deserialize data for topic %s to Avro: %v", topic, err)}
}

// FromConnectData encodes v (of schema s) in the wire format.
func (c *Converter) FromConnectData(topic string, headers *connect.Headers, s *connect.Schema, v any) ([]byte, error) {
	if c.client == nil {
		return nil, errors.New("AvroConverter is not configured")
	}
	if v == nil {
		if s != nil && !s.Optional {
			return nil, serErr(topic, dataErr("Found null value for non-optional schema"))
		}
		return nil, nil
	}
	w, err := c.writerFor(s)
	if err != nil {
		return nil, serErr(topic, err)
	}
	var native any
	if s == nil {
		native, err = anyToAvro(v)
	} else {
		native, err = toAvro(s, w.schema, v)
	}
	if err != nil {
		return nil, serErr(topic, err)
	}
	subject := c.strategy(topic, c.isKey, w.schema)
	id, codec, err := c.target(w, subject)
	if err != nil {
		return nil, serErr(topic, err)
	}
	out, err := codec.BinaryFromNative(AppendHeader(make([]byte, 0, 64), id), native)
	if err != nil {
		return nil, serErr(topic, err)
	}
	return out, nil
}

// target is the schema id and codec to write w's values under subject:
// w's own schema registered or looked up, or with use.latest.version the
// subject's latest schema (cached for the converter's life, as
// Confluent's client caches it with latest.cache.ttl.sec=-1).
func (c *Converter) target(w *writer, subject string) (int32, *goavro.Codec, error) {
	c.mu.Lock()
	t, ok := w.targets[subject]
	c.mu.Unlock()
	if ok {
		return t.id, t.codec, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	var id int32
	var err error
	encodeWith := w.schema
	switch {
	case c.useLatest:
		latest, err := c.client.Latest(ctx, subject)
		if err != nil {
			return 0, nil, fmt.Errorf("Error retrieving latest version of %s: %w", subject, err)
		}
		ls, err := avsc.Parse(latest.Schema)
		if err != nil {
			return 0, nil, fmt.Errorf("latest schema of %s does not parse: %w", subject, err)
		}
		id, encodeWith = latest.ID, ls
	case c.autoRegister:
		if id, err = c.client.Register(ctx, subject, w.text); err != nil {
			return 0, nil, fmt.Errorf("Error registering Avro schema %s: %w", w.text, err)
		}
	default:
		if id, _, err = c.client.Lookup(ctx, subject, w.text); err != nil {
			return 0, nil, fmt.Errorf("Error retrieving Avro schema %s: %w", w.text, err)
		}
	}
	codec, err := c.codec(encodeWith, true)
	if err != nil {
		return 0, nil, err
	}
	c.mu.Lock()
	if len(w.targets) < c.cacheSize {
		w.targets[subject] = target{id, codec}
	}
	c.mu.Unlock()
	return id, codec, nil
}

func (c *Converter) writerFor(s *connect.Schema) (*writer, error) {
	c.mu.Lock()
	w, ok := c.writers[s]
	c.mu.Unlock()
	if ok {
		return w, nil
	}
	as, err := c.data.fromConnectSchema(s)
	if err != nil {
		return nil, err
	}
	w = &writer{schema: as, text: as.String(), targets: map[string]target{}}
	c.mu.Lock()
	if len(c.writers) >= c.cacheSize {
		clear(c.writers)
	}
	c.writers[s] = w
	c.mu.Unlock()
	return w, nil
}

// codec returns goavro's codec for s, built from s without properties
// (logical types stay their base types, as Connect converts them
// itself) but with defaults. Codecs for writing see every map as an
// array of key/value records, which has the same binary encoding
// (a block count, then key and value per entry): goavro writes a Go
// map in random order, and equal values must give equal bytes
// (compacted topics key by them), so toAvro hands maps over as entries
// sorted by key.
func (c *Converter) codec(s *avsc.Schema, forWrite bool) (*goavro.Codec, error) {
	text := plain(s, forWrite).String()
	c.mu.Lock()
	codec, ok := c.codecs[text]
	c.mu.Unlock()
	if ok {
		return codec, nil
	}
	codec, err := goavro.NewCodec(text)
	if err != nil {
		return nil, fmt.Errorf("Avro codec for %s: %w", text, err)
	}
	c.mu.Lock()
	if len(c.codecs) >= c.cacheSize {
		clear(c.codecs)
	}
	c.codecs[text] = codec
	c.mu.Unlock()
	return codec, nil
}

// plain copies s without properties; mapsAsArrays turns maps into
// arrays of {key, value} records.
func plain(s *avsc.Schema, mapsAsArrays bool) *avsc.Schema {
	n := 0
	return plainCopy(s, map[*avsc.Schema]*avsc.Schema{}, mapsAsArrays, &n)
}

// entryNamespace names the synthetic map entry records; no user schema
// can hold a name in it (it is not a valid Avro namespace for users to
// pick by accident).
const entryNamespace = "fjord_internal_map"

func plainCopy(s *avsc.Schema, seen map[*avsc.Schema]*avsc.Schema, mapsAsArrays bool, n *int) *avsc.Schema {
	if c, ok := seen[s]; ok {
		return c
	}
	c := *s
	c.Props = nil
	seen[s] = &c
	if s.Items != nil {
		c.Items = plainCopy(s.Items, seen, mapsAsArrays, n)
	}
	if s.Values != nil {
		c.Values = plainCopy(s.Values, seen, mapsAsArrays, n)
		if mapsAsArrays {
			*n++
			entry := &avsc.Schema{Type: avsc.Record, Name: fmt.Sprintf("Entry%d", *n), Namespace: entryNamespace, Fields: []*avsc.Field{
				{Name: "key", Type: &avsc.Schema{Type: avsc.String}, Order: "ascending"},
				{Name: "value", Type: c.Values, Order: "ascending", Pos: 1},
			}}
			c.Type, c.Values, c.Items = avsc.Array, nil, entry
		}
	}
	c.Branches = nil
	for _, b := range s.Branches {
		c.Branches = append(c.Branches, plainCopy(b, seen, mapsAsArrays, n))
	}
	c.Fields = nil
	for _, f := range s.Fields {
		fc := *f
		fc.Props = nil
		fc.Type = plainCopy(f.Type, seen, mapsAsArrays, n)
		c.Fields = append(c.Fields, &fc)
	}
	return &c
}

// ToConnectData decodes a wire-format message.
func (c *Converter) ToConnectData(topic string, headers *connect.Headers, b []byte) (*connect.Schema, any, error) {
	if c.client == nil {
		return nil, nil, errors.New("AvroConverter is not configured")
	}
	if b == nil {
		return nil, nil, nil
	}
	id, payload, err := ParseHeader(b)
	if err != nil {
		return nil, nil, deserErr(topic, err)
	}
	r, err := c.readerFor(topic, id)
	if err != nil {
		return nil, nil, deserErr(topic, err)
	}
	if r.blocks {
		if err := checkBlocks(r.schema, payload); err != nil {
			return nil, nil, deserErr(topic, fmt.Errorf("schema id %d: %w", id, err))
		}
	}
	native, _, err := r.codec.NativeFromBinary(payload)
	if err != nil {
		return nil, nil, deserErr(topic, fmt.Errorf("schema id %d: %w", id, err))
	}
	var v any
	if r.anything {
		v, err = anyFromAvro(native)
	} else {
		v, err = fromAvro(r.connect, r.schema, native)
	}
	if err != nil {
		return nil, nil, deserErr(topic, err)
	}
	return r.connect, v, nil
}

func (c *Converter) readerFor(topic string, id int32) (*reader, error) {
	// Consecutive records usually share topic and schema id, which decide
	// the reader (the subject comes from the topic and the schema).
	if lr := c.lastReader.Load(); lr != nil && lr.id == id && lr.topic == topic {
		return lr.r, nil
	}
	r, err := c.lookupReader(topic, id)
	if err == nil {
		c.lastReader.Store(&lastReader{topic: topic, id: id, r: r})
	}
	return r, err
}

type lastReader struct {
	topic string
	id    int32
	r     *reader
}

func (c *Converter) lookupReader(topic string, id int32) (*reader, error) {
	c.mu.Lock()
	as := c.parsed[id]
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	var text string
	if as == nil {
		var err error
		if text, err = c.client.SchemaByID(ctx, id); err != nil {
			return nil, fmt.Errorf("Error retrieving Avro schema for id %d: %w", id, err)
		}
		if as, err = avsc.Parse(text); err != nil {
			return nil, fmt.Errorf("schema id %d does not parse: %w", id, err)
		}
		c.mu.Lock()
		if len(c.parsed) >= c.cacheSize {
			clear(c.parsed)
		}
		c.parsed[id] = as
		c.mu.Unlock()
	}
	key := readerKey{id, c.strategy(topic, c.isKey, as)}
	c.mu.Lock()
	r, ok := c.readers[key]
	c.mu.Unlock()
	if ok {
		return r, nil
	}
	if text == "" {
		text = as.String()
	}
	// The Connect schema's version is connect.version, else the version
	// the schema has under the subject (as Confluent's deserializer
	// looks it up); none when it is not registered there.
	if isAnything(as) {
		// Schemaless data: no Connect schema.
		codec, err := c.codec(as, false)
		if err != nil {
			return nil, err
		}
		r = &reader{schema: as, codec: codec, blocks: true, anything: true}
		c.mu.Lock()
		c.readers[key] = r
		c.mu.Unlock()
		return r, nil
	}
	var version *int32
	if as.Prop(propVersion) == nil {
		if _, v, err := c.client.Lookup(ctx, key.subject, text); err == nil {
			version = &v
		}
	}
	cs, err := c.data.toConnectSchema(as, version)
	if err != nil {
		return nil, err
	}
	codec, err := c.codec(as, false)
	if err != nil {
		return nil, err
	}
	r = &reader{schema: as, connect: cs, codec: codec, blocks: hasBlocks(as)}
	c.mu.Lock()
	if len(c.readers) >= c.cacheSize {
		clear(c.readers)
	}
	c.readers[key] = r
	c.mu.Unlock()
	return r, nil
}
