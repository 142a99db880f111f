package format

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fjordhq/fjord/connect"
)

// The extension of every format and setting, as Confluent names objects.
func TestExtensionsGolden(t *testing.T) {
	cases := []struct {
		class string
		props map[string]string
		ext   string
	}{
		{"io.confluent.connect.s3.format.json.JsonFormat", nil, ".json"},
		{"JsonFormat", map[string]string{CompressionTypeConfig: "gzip"}, ".json.gz"},
		{"JsonFormat", map[string]string{CompressionTypeConfig: " gzip "}, ".json.gz"},
		{"io.confluent.connect.s3.format.avro.AvroFormat", nil, ".avro"},
		{"AvroFormat", map[string]string{AvroCodecConfig: "snappy", CompressionTypeConfig: "gzip"}, ".avro"},
		{"io.confluent.connect.s3.format.parquet.ParquetFormat", nil, ".snappy.parquet"},
		{"ParquetFormat", map[string]string{ParquetCodecConfig: "none"}, ".parquet"},
		{"ParquetFormat", map[string]string{ParquetCodecConfig: "gzip"}, ".gz.parquet"},
		{"ParquetFormat", map[string]string{ParquetCodecConfig: "zstd"}, ".zstd.parquet"},
		{"ParquetFormat", map[string]string{ParquetCodecConfig: "brotli"}, ".br.parquet"},
		{"ParquetFormat", map[string]string{ParquetCodecConfig: "lz4_raw"}, ".lz4raw.parquet"},
		{"io.confluent.connect.s3.format.bytearray.ByteArrayFormat", nil, ".bin"},
		{"ByteArrayFormat", map[string]string{CompressionTypeConfig: "gzip"}, ".bin.gz"},
		{"ByteArrayFormat", map[string]string{ByteArrayExtensionConfig: ".csv"}, ".csv"},
	}
	for _, c := range cases {
		f := mustNew(t, c.class, c.props)
		if got := f.Extension(); got != c.ext {
			t.Errorf("%s %v: %q, want %q", c.class, c.props, got, c.ext)
		}
	}
	avro := mustNew(t, "AvroFormat", nil)
	if KeysExtension(avro) != ".keys.avro" || HeadersExtension(avro) != ".headers.avro" {
		t.Errorf("side extensions %q %q", KeysExtension(avro), HeadersExtension(avro))
	}
	pq := KeysFormat(mustNew(t, "ParquetFormat", nil))
	if KeysExtension(pq) != ".keys.snappy.parquet" {
		t.Errorf("parquet keys extension %q", KeysExtension(pq))
	}
}

func TestNewRefusesUnknownClasses(t *testing.T) {
	for _, class := range []string{"", "CsvFormat", "io.confluent.connect.s3.format.json.JsonFormat2", "jsonformat"} {
		_, err := New(class, nil)
		if err == nil {
			t.Errorf("%q accepted", class)
			continue
		}
		for _, c := range Classes {
			if !strings.Contains(err.Error(), c) {
				t.Errorf("error %q does not list %s", err, c)
			}
		}
	}
}

func TestDefineMatchesConfluent(t *testing.T) {
	d := connect.NewConfigDef()
	Define(d)
	want := map[string]struct {
		typ connect.ConfigType
		def any
	}{
		CompressionTypeConfig:    {connect.TypeString, "none"},
		CompressionLevelConfig:   {connect.TypeInt, int32(-1)},
		AvroCodecConfig:          {connect.TypeString, "null"},
		ParquetCodecConfig:       {connect.TypeString, "snappy"},
		ByteArrayExtensionConfig: {connect.TypeString, ".bin"},
		ByteArraySeparatorConfig: {connect.TypeString, nil},
		JSONDecimalFormatConfig:  {connect.TypeString, "BASE64"},
		EnhancedAvroConfig:       {connect.TypeBoolean, true},
		ConnectMetaDataConfig:    {connect.TypeBoolean, true},
		SchemaCacheSizeConfig:    {connect.TypeInt, int32(1000)},
		AllowOptionalMapKeys:     {connect.TypeBoolean, false},
	}
	for name, w := range want {
		k := d.Key(name)
		if k == nil {
			t.Errorf("%s not defined", name)
			continue
		}
		if k.Type != w.typ || fmt.Sprint(k.Default) != fmt.Sprint(w.def) || k.Doc == "" {
			t.Errorf("%s: %s default %v doc %q", name, k.Type, k.Default, k.Doc)
		}
	}
	if len(d.Keys()) != len(want) {
		t.Errorf("%d keys defined", len(d.Keys()))
	}
}

func TestValidateListsEveryBadKey(t *testing.T) {
	got := Validate(map[string]string{
		"format.class":           "ParquetFormat",
		CompressionTypeConfig:    "zip",
		CompressionLevelConfig:   "10",
		JSONDecimalFormatConfig:  "text",
		AvroCodecConfig:          "xz",
		ParquetCodecConfig:       "lzo",
		"store.kafka.headers":    "true",
		"headers.format.class":   "ByteArrayFormat",
		"store.kafka.keys":       "true",
		"keys.format.class":      "CsvFormat",
		EnhancedAvroConfig:       "maybe",
		ByteArrayExtensionConfig: ".x",
	})
	want := map[string]string{
		CompressionTypeConfig:   "String must be one of: none, gzip",
		CompressionLevelConfig:  "Value must be no more than 9",
		JSONDecimalFormatConfig: "String must be one of (case insensitive): BASE64, NUMERIC",
		AvroCodecConfig:         "String must be one of: null, deflate, snappy, bzip2",
		ParquetCodecConfig:      "Fjord writes the Parquet codecs none, snappy, gzip, brotli, zstd, lz4_raw only",
		"headers.format.class":  "headers cannot be written with ByteArrayFormat",
		"keys.format.class":     "Invalid value CsvFormat for format class",
		EnhancedAvroConfig:      "Expected value to be either true or false",
	}
	for k, sub := range want {
		if !strings.Contains(got[k], sub) {
			t.Errorf("%s: %q does not contain %q", k, got[k], sub)
		}
	}
	if len(got) != len(want) {
		t.Errorf("problems %v", got)
	}
	// What Fjord cannot write matters only where the format is used.
	ok := Validate(map[string]string{"format.class": "JsonFormat", AvroCodecConfig: "bzip2", ParquetCodecConfig: "lz4"})
	if len(ok) != 0 {
		t.Errorf("JSON config: %v", ok)
	}
	bad := Validate(map[string]string{"format.class": "JsonFormat", AvroCodecConfig: "bzip2", "store.kafka.keys": "true"})
	if !strings.Contains(bad[AvroCodecConfig], "Fjord writes the Avro codecs null, deflate, snappy only") {
		t.Errorf("bzip2 for the default Avro keys format: %v", bad)
	}
	if got := Validate(map[string]string{"format.class": "AvroFormat", AllowOptionalMapKeys: "true"}); got[AllowOptionalMapKeys] == "" {
		t.Errorf("allow.optional.map.keys=true accepted: %v", got)
	}
	if got := Validate(nil); len(got) != 0 {
		t.Errorf("defaults: %v", got)
	}
}

func TestNewAppliesSettings(t *testing.T) {
	if _, err := New("JsonFormat", map[string]string{CompressionLevelConfig: "-2"}); err == nil {
		t.Error("level -2 accepted")
	}
	if _, err := New("ParquetFormat", map[string]string{ParquetCodecConfig: "SNAPPY"}); err == nil {
		t.Error("SNAPPY accepted (Confluent's validator is case sensitive)")
	}
	// The separator keeps its white space (Confluent reads it untrimmed).
	f := mustNew(t, "ByteArrayFormat", map[string]string{ByteArraySeparatorConfig: " \r\n"})
	if b := writeAll(t, f, nil, []byte("a")); string(b) != "a \r\n" {
		t.Errorf("object %q", b)
	}
}
