package partitioner

import (
	"errors"
	"maps"
	"testing"

	"github.com/fjordhq/fjord/connect"
)

func TestValidateMessages(t *testing.T) {
	tb := func(extra ...string) map[string]string {
		return withProps(map[string]string{ClassConfig: TimeBasedClass, DurationConfig: "3600000",
			PathFormatConfig: hourlyFmt, LocaleConfig: "en", TimezoneConfig: "UTC"}, extra...)
	}
	cases := []struct {
		name  string
		java  string
		props map[string]string
		want  map[string]string
	}{
		{name: "defaults", java: "PartitionerConfig defaults are valid", props: map[string]string{}, want: map[string]string{}},
		{name: "unknown class", java: "ConfigDef.parseType CLASS: ClassNotFoundException",
			props: map[string]string{ClassConfig: "com.example.Custom"},
			want:  map[string]string{ClassConfig: "Invalid value com.example.Custom for configuration partitioner.class: Class com.example.Custom could not be found."}},
		{name: "bad timezone under any partitioner", java: "PartitionerConfigTest.testTimezoneValidatedExceptionMessage",
			props: map[string]string{TimezoneConfig: "LLL"},
			want:  map[string]string{TimezoneConfig: "Invalid value LLL for configuration timezone: The datetime zone id 'LLL' is not recognised"}},
		{name: "empty field segment", java: "PartitionerConfigTest.testPartitionFieldNameEmptySegmentExceptionMessage",
			props: map[string]string{FieldNameConfig: "a..b"},
			want:  map[string]string{FieldNameConfig: "Invalid value a..b for configuration partition.field.name: Field name cannot contain an empty or whitespace-only path segment"}},
		{name: "leading dot", java: "PartitionFieldNameValidator: \".field\" splits to an empty first segment",
			props: map[string]string{ClassConfig: FieldClass, FieldNameConfig: ".field"},
			want:  map[string]string{FieldNameConfig: "Invalid value .field for configuration partition.field.name: Field name cannot contain an empty or whitespace-only path segment"}},
		{name: "whitespace segment", java: "PartitionFieldNameValidator: \"a.   .b\"",
			props: map[string]string{FieldNameConfig: "a.   .b"},
			want:  map[string]string{FieldNameConfig: "Invalid value a.   .b for configuration partition.field.name: Field name cannot contain an empty or whitespace-only path segment"}},
		{name: "trailing dot passes", java: "Java's split drops trailing empty strings, so \"a.\" is field a",
			props: map[string]string{ClassConfig: FieldClass, FieldNameConfig: "a."}, want: map[string]string{}},
		{name: "empty list entry", java: "PartitionFieldNameValidator: blank name",
			props: map[string]string{FieldNameConfig: "a,,b"},
			want:  map[string]string{FieldNameConfig: "Invalid value  for configuration partition.field.name: Field name cannot be null or empty"}},
		{name: "FieldPartitioner without fields", java: "FieldPartitionerValidator",
			props: map[string]string{ClassConfig: FieldClass},
			want:  map[string]string{FieldNameConfig: "Partition field name cannot be null or empty when using FieldPartitioner."}},
		{name: "FieldPartitioner by simple name without fields", java: "FieldPartitionerValidator (Fjord resolves simple names too)",
			props: map[string]string{ClassConfig: "FieldPartitioner", FieldNameConfig: "  "},
			want:  map[string]string{FieldNameConfig: "Partition field name cannot be null or empty when using FieldPartitioner."}},
		{name: "time-based with nothing set", java: "TimeBasedPartitioner.configure checks duration, path.format, locale, timezone",
			props: map[string]string{ClassConfig: TimeBasedClass},
			want: map[string]string{
				DurationConfig:   "Invalid value -1 for configuration partition.duration.ms: Partition duration needs to be a positive.",
				PathFormatConfig: "Invalid value  for configuration path.format: Path format cannot be empty.",
				LocaleConfig:     "Invalid value  for configuration locale: Locale cannot be empty.",
				TimezoneConfig:   "Invalid value  for configuration timezone: Timezone cannot be empty.",
			}},
		{name: "zero duration", java: "Confluent accepts 0 and then divides by it; Fjord refuses it with the same message",
			props: tb(DurationConfig, "0"),
			want:  map[string]string{DurationConfig: "Invalid value 0 for configuration partition.duration.ms: Partition duration needs to be a positive."}},
		{name: "path.format is the delimiter", java: "TimeBasedPartitionerTest.testRootPathFormat",
			props: tb(PathFormatConfig, "/"),
			want:  map[string]string{PathFormatConfig: "Invalid value / for configuration path.format: Path format cannot be empty."}},
		{name: "illegal pattern letter", java: "TimeBasedPartitionerTest.testInvalidPathFormat: Joda's IllegalArgumentException as ConfigException",
			props: tb(PathFormatConfig, "year='YYYY'/month='MM'"),
			want:  map[string]string{PathFormatConfig: "Invalid value year='YYYY'/month='MM' for configuration path.format: Illegal pattern component: r"}},
		{name: "unknown extractor", java: "TimeBasedPartitionerTest.testInvalidTimestampExtractor",
			props: tb(ExtractorConfig, extractorClassPrefix+"FutureTimestampExtractor"),
			want:  map[string]string{ExtractorConfig: "Invalid timestamp extractor: io.confluent.connect.storage.partitioner.TimeBasedPartitioner$FutureTimestampExtractor"}},
		{name: "extractor names are case-sensitive", java: "newTimestampExtractor switches on the exact names",
			props: tb(ExtractorConfig, "record"),
			want:  map[string]string{ExtractorConfig: "Invalid timestamp extractor: record"}},
		{name: "extractor ignored by non-time partitioners", java: "only TimeBasedPartitioner builds an extractor",
			props: map[string]string{ExtractorConfig: "nonsense"}, want: map[string]string{}},
		{name: "RecordField without a field", java: "DataUtils.validate fails every record; Fjord says so at config time",
			props: tb(ExtractorConfig, "RecordField", TimestampFieldConfig, ""),
			want:  map[string]string{TimestampFieldConfig: "Invalid value  for configuration timestamp.field: The field to extract cannot be null or empty."}},
		{name: "hourly needs locale and timezone only", java: "HourlyPartitioner sets duration and path.format, then TimeBasedPartitioner.configure",
			props: map[string]string{ClassConfig: HourlyClass},
			want: map[string]string{
				LocaleConfig:   "Invalid value  for configuration locale: Locale cannot be empty.",
				TimezoneConfig: "Invalid value  for configuration timezone: Timezone cannot be empty.",
			}},
		{name: "daily with a fixed offset", java: "Joda's DateTimeZone.forID takes [+-]hh:mm",
			props: map[string]string{ClassConfig: DailyClass, LocaleConfig: "en", TimezoneConfig: "-03:00"}, want: map[string]string{}},
		{name: "month names in French", java: "Joda prints names in the locale; Fjord has English only",
			props: tb(PathFormatConfig, "YYYY/MMM", LocaleConfig, "fr"),
			want: map[string]string{LocaleConfig: "Invalid value fr for configuration locale: Fjord prints the month, day, AM/PM and era names " +
				"path.format asks for in English only; use an English locale (en, en-US) or numbers (MM, e)."}},
		{name: "numbers in any locale", java: "Joda prints digits the same in every locale",
			props: tb(LocaleConfig, "fr_FR"), want: map[string]string{}},
		{name: "bad pad width", java: "StorageSinkConnectorConfig: ConfigDef.Range.atLeast(0)",
			props: map[string]string{PadWidthConfig: "-1"},
			want:  map[string]string{PadWidthConfig: "Invalid value -1 for configuration filename.offset.zero.pad.width: Value must be at least 0"}},
		{name: "duration not a number", java: "ConfigDef.parseType LONG",
			props: map[string]string{DurationConfig: "abc"},
			want:  map[string]string{DurationConfig: "Invalid value abc for configuration partition.duration.ms: Not a number of type LONG"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Validate(c.props)
			if !maps.Equal(got, c.want) {
				t.Errorf("Validate = %q\nwant       %q\n(pins %s)", got, c.want, c.java)
			}
			p, err := New(c.props)
			if len(c.want) == 0 {
				if err != nil || p == nil {
					t.Errorf("New: %v", err)
				}
				return
			}
			var ce *connect.ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("New error %v is not a *connect.ConfigError", err)
			}
			for _, pr := range ce.Problems {
				if _, ok := c.want[pr.Key]; !ok {
					t.Errorf("New reports %s: %s, which Validate does not", pr.Key, pr.Message)
				}
			}
		})
	}
}

// TestDefineKeys checks the defaults and types callers see through a
// ConfigDef.
func TestDefineKeys(t *testing.T) {
	d := connect.NewConfigDef()
	Define(d)
	cfg, err := d.Parse(map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		key  string
		want any
	}{
		{ClassConfig, DefaultClass}, {FieldNameConfig, []string{}}, {DurationConfig, int64(-1)},
		{PathFormatConfig, ""}, {LocaleConfig, ""}, {TimezoneConfig, ""}, {ExtractorConfig, "Wallclock"},
		{TimestampFieldConfig, "timestamp"}, {TopicsDirConfig, "topics"}, {DirDelimConfig, "/"},
		{FileDelimConfig, "+"}, {PadWidthConfig, int32(10)},
	}
	for _, c := range checks {
		if got := cfg.Get(c.key); !connect.ValuesEqual(got, c.want) {
			t.Errorf("%s default = %#v, want %#v", c.key, got, c.want)
		}
	}
	// Visibility follows PartitionerClassDependentsRecommender.
	vis := map[string]bool{}
	for _, cv := range d.Validate(map[string]string{ClassConfig: HourlyClass}) {
		vis[cv.Name] = cv.Visible
	}
	if vis[PathFormatConfig] || vis[DurationConfig] || vis[FieldNameConfig] || !vis[LocaleConfig] || !vis[TimezoneConfig] {
		t.Errorf("visibility under HourlyPartitioner: %v", vis)
	}
}
