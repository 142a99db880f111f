package format

import (
	"fmt"
	"strings"

	"github.com/fjordhq/fjord/connect"
)

// The format keys, with Confluent's names (S3SinkConnectorConfig and
// storage-common's StorageSinkConnectorConfig).
const (
	CompressionTypeConfig    = "s3.compression.type"
	CompressionLevelConfig   = "s3.compression.level"
	AvroCodecConfig          = "avro.codec"
	ParquetCodecConfig       = "parquet.codec"
	ByteArrayExtensionConfig = "format.bytearray.extension"
	ByteArraySeparatorConfig = "format.bytearray.separator"
	JSONDecimalFormatConfig  = "json.decimal.format"
	EnhancedAvroConfig       = "enhanced.avro.schema.support"
	ConnectMetaDataConfig    = "connect.meta.data"
	SchemaCacheSizeConfig    = "schemas.cache.config"
	AllowOptionalMapKeys     = "allow.optional.map.keys"
)

// The sink keys Validate reads to know which formats a config uses.
const (
	formatClassConfig        = "format.class"
	keysFormatClassConfig    = "keys.format.class"
	headersFormatClassConfig = "headers.format.class"
	storeKeysConfig          = "store.kafka.keys"
	storeHeadersConfig       = "store.kafka.headers"
)

// Confluent's accepted values. avro.codec bzip2 and the parquet codecs
// lzo and lz4 (Hadoop's framing) pass Confluent's validators but Fjord
// cannot write them: Validate and New refuse them when the format that
// uses them is configured.
var (
	compressionTypes   = []string{"none", "gzip"}
	avroCodecs         = []string{"null", "deflate", "snappy", "bzip2"}
	avroCodecsFjord    = []string{"null", "deflate", "snappy"}
	parquetCodecs      = []string{"none", "snappy", "gzip", "lzo", "brotli", "lz4", "zstd", "lz4_raw"}
	parquetCodecsFjord = []string{"none", "snappy", "gzip", "brotli", "zstd", "lz4_raw"}
)

const (
	groupS3        = "S3"
	groupConnector = "Connector"
)

// Define adds the format keys to d, with Confluent's types, defaults,
// validators and docs.
func Define(d *connect.ConfigDef) {
	d.Define(connect.ConfigKey{Name: CompressionTypeConfig, Type: connect.TypeString, Default: "none",
		Validator: oneOfTrimmed(compressionTypes...), Importance: connect.Low, Group: groupS3, OrderInGroup: 20,
		Width: connect.WidthLong, DisplayName: "Compression type",
		Doc: "Compression type for files written to S3. Applied when using JsonFormat or ByteArrayFormat. Available values: none, gzip."})
	d.Define(connect.ConfigKey{Name: CompressionLevelConfig, Type: connect.TypeInt, Default: int32(-1),
		Validator: connect.Between(-1, 9), Importance: connect.Low, Group: groupS3, OrderInGroup: 21,
		Width: connect.WidthLong, DisplayName: "Compression Level",
		Recommended: func(map[string]any) []any {
			// Confluent's IntStream.range(-1, 9): 9 is valid but not listed.
			out := make([]any, 0, 10)
			for i := int32(-1); i < 9; i++ {
				out = append(out, i)
			}
			return out
		},
		Doc: "Compression level for files written to S3. Applied when using JsonFormat or ByteArrayFormat. "})
	d.Define(connect.ConfigKey{Name: JSONDecimalFormatConfig, Type: connect.TypeString, Default: "BASE64",
		Validator: connect.OneOfFold("BASE64", "NUMERIC"), Importance: connect.Medium, Group: groupS3, OrderInGroup: 22,
		Width: connect.WidthMedium, DisplayName: "Decimal Format",
		Doc: "Controls which format json converter will serialize decimals in. This value is case insensitive and can be either 'BASE64' (default) or 'NUMERIC'"})
	d.Define(connect.ConfigKey{Name: ByteArrayExtensionConfig, Type: connect.TypeString, Default: ".bin",
		Importance: connect.Low, Group: groupS3, OrderInGroup: 23, Width: connect.WidthLong,
		DisplayName: "Output file extension for ByteArrayFormat",
		Doc:         "Output file extension for ByteArrayFormat. Defaults to ``.bin``."})
	// Confluent's default is null and the value is read untrimmed from
	// the originals (white space matters in a separator).
	d.Define(connect.ConfigKey{Name: ByteArraySeparatorConfig, Type: connect.TypeString, Default: nil,
		Importance: connect.Low, Group: groupS3, OrderInGroup: 24, Width: connect.WidthLong,
		DisplayName: "Line separator ByteArrayFormat",
		Doc: "String inserted between records for ByteArrayFormat. Defaults to ``System.lineSeparator()`` and may contain escape " +
			"sequences like ``\\n``. An input record that contains the line separator will look like multiple records in the output S3 object."})
	d.Define(connect.ConfigKey{Name: SchemaCacheSizeConfig, Type: connect.TypeInt, Default: int32(1000),
		Importance: connect.Low, Group: groupConnector, OrderInGroup: 30, Width: connect.WidthLong, DisplayName: "Schema Cache Size",
		Doc: "The size of the schema cache used in the Avro converter."})
	d.Define(connect.ConfigKey{Name: EnhancedAvroConfig, Type: connect.TypeBoolean, Default: true,
		Importance: connect.Low, Group: groupConnector, OrderInGroup: 31, Width: connect.WidthShort, DisplayName: "Enhanced Avro Support",
		Doc: "Enable enhanced avro schema support in AvroConverter: Enum symbol preservation and Package Name awareness"})
	d.Define(connect.ConfigKey{Name: ConnectMetaDataConfig, Type: connect.TypeBoolean, Default: true,
		Importance: connect.Low, Group: groupConnector, OrderInGroup: 32, Width: connect.WidthShort, DisplayName: "Connect Metadata",
		Doc: "Allow connect converter to add its metadata to the output schema"})
	d.Define(connect.ConfigKey{Name: AvroCodecConfig, Type: connect.TypeString, Default: "null",
		Validator: connect.OneOf(avroCodecs...), Importance: connect.Low, Group: groupConnector, OrderInGroup: 33,
		Width: connect.WidthMedium, DisplayName: "Avro Compression Codec",
		Recommended: func(map[string]any) []any { return strings2any(avroCodecsFjord) },
		Doc: "The Avro compression codec to be used for output  files. Available values: null, deflate, snappy and bzip2 " +
			"(CodecSource is org.apache.avro.file.CodecFactory). Fjord writes null, deflate and snappy."})
	d.Define(connect.ConfigKey{Name: AllowOptionalMapKeys, Type: connect.TypeBoolean, Default: false,
		Importance: connect.Low, Group: groupConnector, OrderInGroup: 34, Width: connect.WidthShort, DisplayName: "Allow Optional Map Keys",
		Doc: "Allow optional string map key when converting from Connect Schema to Avro Schema. (Fjord supports false only.)"})
	d.Define(connect.ConfigKey{Name: ParquetCodecConfig, Type: connect.TypeString, Default: "snappy",
		Validator: oneOfTrimmed(parquetCodecs...), Importance: connect.Low, Group: groupConnector, OrderInGroup: 35,
		Width: connect.WidthMedium, DisplayName: "Parquet Compression Codec",
		Recommended: func(map[string]any) []any { return strings2any(parquetCodecsFjord) },
		Doc:         "The Parquet compression codec to be used for output files. Fjord writes none, snappy, gzip, brotli, zstd and lz4_raw."})
}

func strings2any(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// oneOfTrimmed is Confluent's CompressionTypeValidator and
// ParquetCodecRecommender: the trimmed value must be listed (case
// sensitive), with Kafka's "String must be one of" message.
func oneOfTrimmed(allowed ...string) connect.Validator {
	inner := connect.OneOf(allowed...)
	return func(name string, v any) error {
		s, _ := v.(string)
		return inner(name, strings.TrimSpace(s))
	}
}

var configDef = func() *connect.ConfigDef {
	d := connect.NewConfigDef()
	Define(d)
	return d
}()

// settings are the parsed format keys.
type settings struct {
	gzip           bool
	level          int
	avroCodec      string
	parquetCodec   string
	byteExt        string
	byteSep        []byte
	decimalNumeric bool
	enhanced       bool
	connectMeta    bool
	cacheSize      int
}

// parseSettings parses the format keys of props (nil: all defaults) for
// the format named (avroName, ...), refusing what Fjord cannot write.
func parseSettings(props map[string]string, name string) (*settings, error) {
	cfg, err := configDef.Parse(props)
	if err != nil {
		return nil, err
	}
	s := &settings{
		gzip:           strings.TrimSpace(cfg.String(CompressionTypeConfig)) == "gzip",
		level:          int(cfg.Int(CompressionLevelConfig)),
		avroCodec:      cfg.String(AvroCodecConfig),
		parquetCodec:   strings.TrimSpace(cfg.String(ParquetCodecConfig)),
		byteExt:        cfg.String(ByteArrayExtensionConfig),
		byteSep:        []byte("\n"),
		decimalNumeric: strings.EqualFold(cfg.String(JSONDecimalFormatConfig), "NUMERIC"),
		enhanced:       cfg.Bool(EnhancedAvroConfig),
		connectMeta:    cfg.Bool(ConnectMetaDataConfig),
		cacheSize:      int(cfg.Int(SchemaCacheSizeConfig)),
	}
	if sep, ok := props[ByteArraySeparatorConfig]; ok {
		s.byteSep = []byte(sep)
	}
	for _, m := range unsupported(props, map[string]bool{name: true}) {
		return nil, &connect.ConfigError{Problems: []connect.ConfigProblem{{Message: m}}}
	}
	return s, nil
}

// unsupported lists, by key, the values Confluent accepts but Fjord
// cannot write, for the formats in use.
func unsupported(props map[string]string, uses map[string]bool) map[string]string {
	out := map[string]string{}
	value := func(key, def string) string {
		if v, ok := props[key]; ok {
			return strings.TrimSpace(v)
		}
		return def
	}
	if c := value(AvroCodecConfig, "null"); uses[avroName] && c == "bzip2" {
		out[AvroCodecConfig] = fmt.Sprintf("Invalid value %s for configuration %s: Fjord writes the Avro codecs %s only",
			c, AvroCodecConfig, strings.Join(avroCodecsFjord, ", "))
	}
	if c := value(ParquetCodecConfig, "snappy"); uses[parquetName] && contains(parquetCodecs, c) && !contains(parquetCodecsFjord, c) {
		out[ParquetCodecConfig] = fmt.Sprintf("Invalid value %s for configuration %s: Fjord writes the Parquet codecs %s only",
			c, ParquetCodecConfig, strings.Join(parquetCodecsFjord, ", "))
	}
	if (uses[avroName] || uses[parquetName]) && isTrue(value(AllowOptionalMapKeys, "false")) {
		out[AllowOptionalMapKeys] = fmt.Sprintf("Invalid value true for configuration %s: Fjord converts maps with optional keys "+
			"as Confluent's default does (arrays of key/value records); set it to false", AllowOptionalMapKeys)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Validate returns an error message per bad format key (and per bad
// format.class, keys.format.class or headers.format.class), for the
// sink's and the source's validate endpoints: Confluent's checks of each
// key, plus values Confluent accepts that Fjord cannot write for the
// formats the config uses.
func Validate(props map[string]string) map[string]string {
	out := map[string]string{}
	for _, cv := range configDef.Validate(props) {
		if len(cv.Errors) > 0 {
			out[cv.Name] = strings.Join(cv.Errors, "; ")
		}
	}
	uses := map[string]bool{}
	use := func(key, def string, enabled bool) {
		if !enabled {
			return
		}
		class, ok := props[key]
		if !ok {
			class = def
		}
		class = strings.TrimSpace(class)
		if class == "" {
			return
		}
		name, err := lookup(class)
		if err != nil {
			out[key] = err.Error()
			return
		}
		if key == headersFormatClassConfig && name == byteArrayName {
			// Confluent's HEADERS_FORMAT_CLASS_VALID_VALUES leave it out.
			out[key] = fmt.Sprintf("Invalid value %s for configuration %s: headers cannot be written with ByteArrayFormat; "+
				"use AvroFormat, JsonFormat or ParquetFormat", class, key)
			return
		}
		uses[name] = true
	}
	use(formatClassConfig, "", true)
	use(keysFormatClassConfig, avroClass, isTrue(props[storeKeysConfig]))
	use(headersFormatClassConfig, avroClass, isTrue(props[storeHeadersConfig]))
	for k, m := range unsupported(props, uses) {
		if out[k] == "" {
			out[k] = m
		}
	}
	return out
}

func isTrue(s string) bool { return strings.EqualFold(strings.TrimSpace(s), "true") }
