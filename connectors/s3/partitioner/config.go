package partitioner

import (
	"strings"
	"sync"

	"github.com/fjordhq/fjord/connect"
)

// The keys, named as Confluent's PartitionerConfig, StorageCommonConfig
// and StorageSinkConnectorConfig name them.
const (
	ClassConfig          = "partitioner.class"
	FieldNameConfig      = "partition.field.name"
	DurationConfig       = "partition.duration.ms"
	PathFormatConfig     = "path.format"
	LocaleConfig         = "locale"
	TimezoneConfig       = "timezone"
	ExtractorConfig      = "timestamp.extractor"
	TimestampFieldConfig = "timestamp.field"
	TopicsDirConfig      = "topics.dir"
	DirDelimConfig       = "directory.delim"
	FileDelimConfig      = "file.delim"
	PadWidthConfig       = "filename.offset.zero.pad.width"
)

// The partitioner classes.
const (
	classPackage   = "io.confluent.connect.storage.partitioner."
	DefaultClass   = classPackage + "DefaultPartitioner"
	FieldClass     = classPackage + "FieldPartitioner"
	TimeBasedClass = classPackage + "TimeBasedPartitioner"
	HourlyClass    = classPackage + "HourlyPartitioner"
	DailyClass     = classPackage + "DailyPartitioner"
)

// Defaults, as Confluent's.
const (
	DefaultTopicsDir = "topics"
	DefaultDirDelim  = "/"
	DefaultFileDelim = "+"
	DefaultPadWidth  = 10
)

type kind int8

const (
	kindDefault kind = iota + 1
	kindField
	kindTimeBased
	kindHourly
	kindDaily
)

func (k kind) timeBased() bool { return k >= kindTimeBased }

// classKind resolves partitioner.class. Confluent loads the class by its
// full name; Fjord also takes the simple name, since it cannot load
// custom classes anyway.
func classKind(name string) (kind, bool) {
	switch strings.TrimPrefix(name, classPackage) {
	case "DefaultPartitioner":
		return kindDefault, true
	case "FieldPartitioner":
		return kindField, true
	case "TimeBasedPartitioner":
		return kindTimeBased, true
	case "HourlyPartitioner":
		return kindHourly, true
	case "DailyPartitioner":
		return kindDaily, true
	}
	return 0, false
}

func validClass(name string, v any) error {
	s, _ := v.(string)
	if _, ok := classKind(s); !ok {
		// Kafka's message for a CLASS value it cannot load.
		return &connect.VerbatimError{Msg: "Invalid value " + s + " for configuration " + name +
			": Class " + s + " could not be found."}
	}
	return nil
}

// validFieldNames is Confluent's PartitionFieldNameValidator: every name
// is non-blank and none of its dotted parts is blank. The message names
// the one bad entry, not the whole list.
func validFieldNames(name string, v any) error {
	names, _ := v.([]string)
	for _, n := range names {
		if javaBlank(n) {
			return &connect.VerbatimError{Msg: "Invalid value " + n + " for configuration " + name +
				": Field name cannot be null or empty"}
		}
		for _, seg := range newFieldPath(n).segs {
			if javaBlank(seg) {
				return &connect.VerbatimError{Msg: "Invalid value " + n + " for configuration " + name +
					": Field name cannot contain an empty or whitespace-only path segment"}
			}
		}
	}
	return nil
}

// validTimezone is Confluent's TimezoneValidator: empty passes (only the
// time-based partitioners need a zone), anything else must be a zone
// Joda knows.
func validTimezone(name string, v any) error {
	s, _ := v.(string)
	if s = javaTrim(s); s == "" {
		return nil
	}
	_, err := loadZone(s)
	return err
}

// javaTrim is Java's String.trim: it strips characters up to U+0020.
func javaTrim(s string) string {
	i, j := 0, len(s)
	for i < j && s[i] <= ' ' {
		i++
	}
	for j > i && s[j-1] <= ' ' {
		j--
	}
	return s[i:j]
}

func javaBlank(s string) bool { return javaTrim(s) == "" }

// dependentVisible is Confluent's PartitionerClassDependentsRecommender:
// which partitioner keys apply to the chosen class.
func dependentVisible(key string) func(parsed map[string]any) bool {
	return func(parsed map[string]any) bool {
		s, _ := parsed[ClassConfig].(string)
		k, ok := classKind(s)
		if !ok {
			return true
		}
		switch k {
		case kindDefault:
			return false
		case kindField:
			return key == FieldNameConfig
		case kindHourly, kindDaily:
			return key == LocaleConfig || key == TimezoneConfig
		}
		return key == DurationConfig || key == PathFormatConfig || key == LocaleConfig || key == TimezoneConfig
	}
}

// keys are the definitions Define adds.
func keys() []connect.ConfigKey {
	const group = "Partitioner"
	dependents := []string{FieldNameConfig, DurationConfig, PathFormatConfig, LocaleConfig, TimezoneConfig}
	return []connect.ConfigKey{
		{Name: ClassConfig, Type: connect.TypeClass, Default: DefaultClass, Validator: validClass,
			Importance: connect.High, Group: group, OrderInGroup: 1, Width: connect.WidthLong,
			DisplayName: "Partitioner Class", Dependents: dependents,
			Recommended: func(map[string]any) []any {
				return []any{DefaultClass, HourlyClass, DailyClass, TimeBasedClass, FieldClass}
			},
			Doc: "How records are laid out in directories: DefaultPartitioner keeps Kafka's partitions " +
				"(partition=N), FieldPartitioner uses the values of partition.field.name, TimeBasedPartitioner " +
				"buckets by time with path.format, HourlyPartitioner and DailyPartitioner are time-based " +
				"with a fixed duration and format. Full class names (io.confluent.connect.storage.partitioner.*) " +
				"or simple names."},
		{Name: FieldNameConfig, Type: connect.TypeList, Default: []string{}, Validator: validFieldNames,
			Importance: connect.Medium, Group: group, OrderInGroup: 2, Width: connect.WidthNone,
			DisplayName: "Partition Field Name", Visible: dependentVisible(FieldNameConfig),
			Doc: "The value fields FieldPartitioner names directories after, in order; a dotted name " +
				"(a.b.c) reaches into nested structs."},
		{Name: DurationConfig, Type: connect.TypeLong, Default: int64(-1),
			Importance: connect.Medium, Group: group, OrderInGroup: 3, Width: connect.WidthLong,
			DisplayName: "Partition Duration (ms)", Visible: dependentVisible(DurationConfig),
			Doc: "How long a time bucket of TimeBasedPartitioner lasts, in ms. -1, the default, means no " +
				"time-based partitioning."},
		{Name: PathFormatConfig, Type: connect.TypeString, Default: "",
			Importance: connect.Medium, Group: group, OrderInGroup: 4, Width: connect.WidthLong,
			DisplayName: "Path Format", Visible: dependentVisible(PathFormatConfig),
			Doc: "The Joda-Time pattern TimeBasedPartitioner names a bucket's directories with, e.g. " +
				"'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH for /year=2015/month=12/day=07/hour=15/."},
		{Name: LocaleConfig, Type: connect.TypeString, Default: "",
			Importance: connect.Medium, Group: group, OrderInGroup: 5, Width: connect.WidthLong,
			DisplayName: "Locale", Visible: dependentVisible(LocaleConfig),
			Doc: "The locale the time-based partitioners format dates in, e.g. en-US. Fjord prints month " +
				"and day names (MMM, EEE) in English only."},
		{Name: TimezoneConfig, Type: connect.TypeString, Default: "", Validator: validTimezone,
			Importance: connect.Medium, Group: group, OrderInGroup: 6, Width: connect.WidthLong,
			DisplayName: "Timezone", Visible: dependentVisible(TimezoneConfig),
			Doc: "The timezone the time-based partitioners bucket and format times in: a tz database " +
				"name such as America/Los_Angeles or Europe/Paris, UTC, or a fixed offset [+-]hh:mm."},
		{Name: ExtractorConfig, Type: connect.TypeString, Default: "Wallclock",
			Importance: connect.Medium, Group: group, OrderInGroup: 7, Width: connect.WidthLong,
			DisplayName: "Timestamp Extractor",
			Doc: "Where the time-based partitioners take a record's time from: Wallclock (when the sink " +
				"writes it), Record (the Kafka record timestamp) or RecordField (timestamp.field in the value)."},
		{Name: TimestampFieldConfig, Type: connect.TypeString, Default: "timestamp",
			Importance: connect.Medium, Group: group, OrderInGroup: 8, Width: connect.WidthLong,
			DisplayName: "Record Field for Timestamp Extractor",
			Doc: "The value field the RecordField extractor reads: ms as a number, a Timestamp, or a string " +
				"of ms digits or ISO-8601. Dotted names reach into nested values."},
		{Name: TopicsDirConfig, Type: connect.TypeString, Default: DefaultTopicsDir,
			Importance: connect.High, Group: "Storage", OrderInGroup: 2, Width: connect.WidthNone,
			DisplayName: "Topics directory",
			Doc:         "The top-level directory the data of every topic goes under."},
		{Name: DirDelimConfig, Type: connect.TypeString, Default: DefaultDirDelim,
			Importance: connect.Medium, Group: "Storage", OrderInGroup: 4, Width: connect.WidthLong,
			DisplayName: "Directory Delimiter",
			Doc:         "The separator between the directories of an object name."},
		{Name: FileDelimConfig, Type: connect.TypeString, Default: DefaultFileDelim,
			Importance: connect.Medium, Group: "Storage", OrderInGroup: 5, Width: connect.WidthLong,
			DisplayName: "File Delimiter",
			Doc:         "The separator between topic, partition and start offset in a file name."},
		{Name: PadWidthConfig, Type: connect.TypeInt, Default: int32(DefaultPadWidth), Validator: connect.AtLeast(0),
			Importance: connect.Low, Group: "Connector", OrderInGroup: 20, Width: connect.WidthLong,
			DisplayName: "Filename Offset Zero Pad Width",
			Doc:         "The width start offsets are zero-padded to in file names, so that names sort by offset."},
	}
}

// def holds the keys alone, for Validate and New.
var def = sync.OnceValue(func() *connect.ConfigDef {
	d := connect.NewConfigDef()
	Define(d)
	return d
})

// Define adds the partitioner and object naming keys to d.
func Define(d *connect.ConfigDef) {
	for _, k := range keys() {
		d.Define(k)
	}
}
