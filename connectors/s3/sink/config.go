package sink

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connectors/s3/format"
	"github.com/fjordhq/fjord/connectors/s3/partitioner"
	"github.com/fjordhq/fjord/connectors/s3/storage"
)

// The sink's own keys: Confluent's S3SinkConnectorConfig names, types and
// defaults. The S3 transport keys (s3.*), the formats' and the
// partitioners' keys are defined by their packages.
const (
	FlushSizeConfig              = "flush.size"
	RotateIntervalConfig         = "rotate.interval.ms"
	RotateScheduleIntervalConfig = "rotate.schedule.interval.ms"
	RotateOnPartitionChange      = "rotate.file.on.partition.change"
	FormatClassConfig            = "format.class"
	StorageClassConfig           = "storage.class"
	SchemaCompatibilityConfig    = "schema.compatibility"
	BehaviorOnNullValuesConfig   = "behavior.on.null.values"
	StoreKafkaKeysConfig         = "store.kafka.keys"
	StoreKafkaHeadersConfig      = "store.kafka.headers"
	KeysFormatClassConfig        = "keys.format.class"
	HeadersFormatClassConfig     = "headers.format.class"
	TombstonePartitionConfig     = "tombstone.encoded.partition"
	TimezoneConfig               = "timezone"
)

// S3StorageClass is the one storage.class the sink writes with.
const S3StorageClass = "io.confluent.connect.s3.storage.S3Storage"

const (
	nullFail   = "fail"
	nullIgnore = "ignore"
	nullWrite  = "write"
)

var compatibilities = []string{"NONE", "BACKWARD", "FORWARD", "FULL"}

// ConfigDef returns every key the sink reads.
func ConfigDef() *connect.ConfigDef {
	d := connect.NewConfigDef()
	storage.Define(d)
	def := func(group string, order int, k connect.ConfigKey) {
		k.Group, k.OrderInGroup = group, order
		d.Define(k)
	}
	oneOf := func(values ...string) connect.Validator {
		return func(name string, v any) error {
			s, _ := v.(string)
			for _, x := range values {
				if strings.EqualFold(x, s) {
					return nil
				}
			}
			return fmt.Errorf("String must be one of: %s", strings.Join(values, ", "))
		}
	}
	def("Connector", 1, connect.ConfigKey{Name: FormatClassConfig, Type: connect.TypeClass, Default: connect.NoDefault,
		Validator: func(_ string, v any) error {
			s, _ := v.(string)
			_, err := format.New(s, nil)
			return err
		},
		Importance: connect.High, Width: connect.WidthNone, DisplayName: "Format class",
		Doc: "The format class to use when writing data to the store: io.confluent.connect.s3.format.json.JsonFormat, " +
			"io.confluent.connect.s3.format.avro.AvroFormat, io.confluent.connect.s3.format.parquet.ParquetFormat or " +
			"io.confluent.connect.s3.format.bytearray.ByteArrayFormat."})
	def("Connector", 2, connect.ConfigKey{Name: FlushSizeConfig, Type: connect.TypeInt, Default: connect.NoDefault, Validator: connect.AtLeast(1),
		Importance: connect.High, Width: connect.WidthNone, DisplayName: "Flush Size",
		Doc: "Number of records written to store before invoking file commits."})
	def("Connector", 3, connect.ConfigKey{Name: RotateIntervalConfig, Type: connect.TypeLong, Default: int64(-1),
		Importance: connect.High, Width: connect.WidthMedium, DisplayName: "Rotate Interval (ms)",
		Doc: "The time interval in milliseconds to invoke file commits. This configuration ensures that file commits are invoked every " +
			"configured interval. The record timestamps, as the partitioner's timestamp.extractor reads them, measure the time; it needs " +
			"a time-based partitioner. A change of encoded partition also commits the files. -1 disables it."})
	def("Connector", 4, connect.ConfigKey{Name: RotateScheduleIntervalConfig, Type: connect.TypeLong, Default: int64(-1),
		Importance: connect.Medium, Width: connect.WidthMedium, DisplayName: "Rotate Schedule Interval (ms)",
		Doc: "The time interval in milliseconds to periodically invoke file commits, by the wall clock in the timezone set by " +
			"timezone (required with it). Files are committed at the scheduled time even if no record arrived. -1 disables it."})
	def("Connector", 5, connect.ConfigKey{Name: RotateOnPartitionChange, Type: connect.TypeBoolean, Default: true,
		Importance: connect.Low, Width: connect.WidthShort, DisplayName: "Rotate file on partition change",
		Doc: "With rotate.interval.ms, whether a record of another encoded partition commits the open files."})
	def("Connector", 6, connect.ConfigKey{Name: StorageClassConfig, Type: connect.TypeClass, Default: S3StorageClass,
		Validator: func(_ string, v any) error {
			if s, _ := v.(string); s != S3StorageClass && s != "S3Storage" {
				return fmt.Errorf("the S3 sink stores with %s only", S3StorageClass)
			}
			return nil
		},
		Importance: connect.High, Width: connect.WidthNone, DisplayName: "Storage Class",
		Doc: "The underlying storage layer: " + S3StorageClass + "."})
	def("Connector", 7, connect.ConfigKey{Name: SchemaCompatibilityConfig, Type: connect.TypeString, Default: "NONE",
		Validator:   oneOf(compatibilities...),
		Recommended: func(map[string]any) []any { return []any{"NONE", "BACKWARD", "FORWARD", "FULL"} },
		Importance:  connect.High, Width: connect.WidthShort, DisplayName: "Schema Compatibility",
		Doc: "The schema compatibility rule to use when the connector is observing schema changes: NONE starts a new file on any " +
			"change; BACKWARD, FORWARD and FULL need schema versions, start a new file on a newer (BACKWARD, FULL) or older (FORWARD) " +
			"incompatible schema and project the other records onto the file's schema."})
	def("Connector", 8, connect.ConfigKey{Name: BehaviorOnNullValuesConfig, Type: connect.TypeString, Default: nullFail,
		Validator:  oneOf(nullFail, nullIgnore, nullWrite),
		Importance: connect.Low, Width: connect.WidthShort, DisplayName: "Behavior for null-valued records",
		Doc: "How to handle records with a null value (i.e. Kafka tombstone records). Valid options are 'ignore', 'fail' and 'write'. " +
			"'write' writes the null (a null line in JSON, a null union branch where the schema is optional)."})
	def("Connector", 9, connect.ConfigKey{Name: StoreKafkaKeysConfig, Type: connect.TypeBoolean, Default: false,
		Importance: connect.Low, Width: connect.WidthShort, DisplayName: "Store kafka keys",
		Doc: "Enable or disable writing keys to storage, in a .keys file beside each value file (keys.format.class)."})
	def("Connector", 10, connect.ConfigKey{Name: StoreKafkaHeadersConfig, Type: connect.TypeBoolean, Default: false,
		Importance: connect.Low, Width: connect.WidthShort, DisplayName: "Store kafka headers",
		Doc: "Enable or disable writing headers to storage, in a .headers file beside each value file (headers.format.class)."})
	fmtClass := func(_ string, v any) error {
		s, _ := v.(string)
		_, err := format.New(s, nil)
		return err
	}
	def("Connector", 11, connect.ConfigKey{Name: KeysFormatClassConfig, Type: connect.TypeClass, Default: "io.confluent.connect.s3.format.avro.AvroFormat",
		Validator: fmtClass, Importance: connect.Low, Width: connect.WidthNone, DisplayName: "Keys format class",
		Doc: "The format class to use when writing keys to the store."})
	def("Connector", 12, connect.ConfigKey{Name: HeadersFormatClassConfig, Type: connect.TypeClass, Default: "io.confluent.connect.s3.format.avro.AvroFormat",
		Validator: fmtClass, Importance: connect.Low, Width: connect.WidthNone, DisplayName: "Headers format class",
		Doc: "The format class to use when writing headers to the store."})
	def("Connector", 13, connect.ConfigKey{Name: TombstonePartitionConfig, Type: connect.TypeString, Default: "tombstone",
		Importance: connect.Low, Width: connect.WidthShort, DisplayName: "Tombstone Encoded Partition",
		Doc: "With behavior.on.null.values=write, the encoded partition (directory) that records with a null value are written to."})
	format.Define(d)
	partitioner.Define(d)
	return d
}

// settings is the parsed config a task runs with.
type settings struct {
	name               string
	flushSize          int
	rotateInterval     int64
	rotateSchedule     int64
	rotateOnPartChange bool
	compat             string
	nullValues         string
	storeKeys          bool
	storeHeaders       bool
	valueFormat        format.Format
	keysFormat         format.Format
	headersFormat      format.Format
	layout             partitioner.Layout
	store              storage.Config
	partSize           int64
	timezone           string
	tombstonePartition string
	props              map[string]string
}

func parseSettings(props map[string]string) (*settings, error) {
	cfg, err := ConfigDef().Parse(props)
	if err != nil {
		return nil, err
	}
	if problems := crossProblems(props); len(problems) > 0 {
		keys := slices.Sorted(mapKeys(problems))
		msgs := make([]string, len(keys))
		for i, k := range keys {
			msgs[i] = k + ": " + problems[k]
		}
		return nil, fmt.Errorf("invalid S3 sink config: %s", strings.Join(msgs, "; "))
	}
	s := &settings{
		name:               props["name"],
		flushSize:          int(cfg.Int(FlushSizeConfig)),
		rotateInterval:     cfg.Long(RotateIntervalConfig),
		rotateSchedule:     cfg.Long(RotateScheduleIntervalConfig),
		rotateOnPartChange: cfg.Bool(RotateOnPartitionChange),
		compat:             strings.ToUpper(cfg.String(SchemaCompatibilityConfig)),
		nullValues:         strings.ToLower(cfg.String(BehaviorOnNullValuesConfig)),
		storeKeys:          cfg.Bool(StoreKafkaKeysConfig),
		storeHeaders:       cfg.Bool(StoreKafkaHeadersConfig),
		layout:             partitioner.LayoutFrom(props),
		timezone:           cfg.String(TimezoneConfig),
		tombstonePartition: cfg.String(TombstonePartitionConfig),
		props:              props,
	}
	if s.valueFormat, err = format.New(cfg.String(FormatClassConfig), props); err != nil {
		return nil, err
	}
	if s.storeKeys {
		kf, err := format.New(cfg.String(KeysFormatClassConfig), props)
		if err != nil {
			return nil, err
		}
		s.keysFormat = format.KeysFormat(kf)
	}
	if s.storeHeaders {
		if s.headersFormat, err = format.New(cfg.String(HeadersFormatClassConfig), props); err != nil {
			return nil, err
		}
	}
	if s.store, err = storage.ConfigFrom(props); err != nil {
		return nil, err
	}
	s.partSize = s.store.PartSize
	return s, nil
}

// crossProblems are the checks across keys, each reported on one key
// (Confluent's S3SinkConnectorValidator and partitioner checks). They
// read the raw values, so they run even when other keys are in error.
func crossProblems(props map[string]string) map[string]string {
	out := map[string]string{}
	for k, m := range storage.Validate(props) {
		out[k] = m
	}
	for k, m := range format.Validate(props) {
		out[k] = m
	}
	for k, m := range partitioner.Validate(props) {
		out[k] = m
	}
	long := func(key string) int64 {
		n, _ := strconv.ParseInt(strings.TrimSpace(props[key]), 10, 64)
		return n
	}
	isTrue := func(key string) bool { return strings.EqualFold(strings.TrimSpace(props[key]), "true") }
	if long(RotateScheduleIntervalConfig) > 0 && strings.TrimSpace(props[TimezoneConfig]) == "" {
		out[TimezoneConfig] = "Timezone cannot be empty when using scheduled file rotation."
	}
	if long(RotateIntervalConfig) > 0 {
		if p, err := partitioner.New(props); err == nil {
			if _, ok := p.(partitioner.TimeBased); !ok {
				out[RotateIntervalConfig] = "rotate.interval.ms needs a time-based partitioner.class (TimeBasedPartitioner, HourlyPartitioner, DailyPartitioner): the record timestamps it measures come from its timestamp.extractor"
			}
		}
	}
	if strings.EqualFold(strings.TrimSpace(props[BehaviorOnNullValuesConfig]), nullWrite) && !isTrue(StoreKafkaKeysConfig) {
		// Confluent's S3SinkConnectorValidator: a tombstone is only
		// useful with its key, which goes to the .keys file.
		msg := "Writing Kafka record keys to storage is mandatory when tombstone writing is enabled."
		out[StoreKafkaKeysConfig] = msg
		if _, bad := out[BehaviorOnNullValuesConfig]; !bad {
			out[BehaviorOnNullValuesConfig] = msg
		}
	}
	return out
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
