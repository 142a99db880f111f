package partitioner

import (
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect"
)

// The records the golden cases partition.
var (
	addressSchema = connect.NewStruct().Name("address").Field("city", connect.OptionalStringSchema).Build()
	userSchema    = connect.NewStruct().Name("user").Field("address", addressSchema).Build()
	orderSchema   = connect.NewStruct().Name("order").
			Field("region", connect.StringSchema).
			Field("shard", connect.Int32Schema).
			Field("big", connect.Int64Schema).
			Field("tiny", connect.Int8Schema).
			Field("flag", connect.BooleanSchema).
			Field("note", connect.OptionalStringSchema).
			Field("ts", connect.OptionalInt64Schema).
			Field("ts32", connect.OptionalInt32Schema).
			Field("at", connect.TimestampSchema().Optional().Build()).
			Field("iso", connect.OptionalStringSchema).
			Field("price", connect.Float64Schema).
			Field("user", userSchema).
			Build()
)

// order returns an order struct with the fields the cases do not set
// filled in; set overrides them.
func order(set map[string]any) *connect.Struct {
	st := connect.NewStructValue(orderSchema)
	addr := connect.NewStructValue(addressSchema).MustPut("city", "NYC")
	defaults := map[string]any{"region": "eu", "shard": int32(7), "big": int64(-42), "tiny": int8(3),
		"flag": true, "price": 9.5, "user": connect.NewStructValue(userSchema).MustPut("address", addr)}
	for k, v := range defaults {
		if _, ok := set[k]; !ok {
			st.MustPut(k, v)
		}
	}
	for k, v := range set {
		st.MustPut(k, v)
	}
	return st
}

func structRecord(v *connect.Struct, ts int64) *connect.SinkRecord {
	return &connect.SinkRecord{Topic: "orders", Partition: 3, Offset: 1200, ValueSchema: orderSchema, Value: v,
		Timestamp: ts, TimestampType: connect.CreateTime}
}

func mapRecord(v map[string]any, ts int64) *connect.SinkRecord {
	return &connect.SinkRecord{Topic: "orders", Partition: 3, Offset: 1200, Value: v, Timestamp: ts,
		TimestampType: connect.CreateTime}
}

// withProps returns base with extra set.
func withProps(base map[string]string, extra ...string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i+1 < len(extra); i += 2 {
		out[extra[i]] = extra[i+1]
	}
	return out
}

var (
	hourlyFmt = "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH"
	// confluentTestFmt is the pattern of Confluent's TimeBasedPartitionerTest.
	confluentTestFmt = "'year'=YYYY/'month'=M/'day'=d/'hour'=H/"

	utcHourly = map[string]string{ClassConfig: TimeBasedClass, DurationConfig: "3600000", PathFormatConfig: hourlyFmt,
		LocaleConfig: "en", TimezoneConfig: "UTC", ExtractorConfig: "Record"}
	laHourly = withProps(utcHourly, TimezoneConfig, "America/Los_Angeles")
	// laTest is Confluent's TimeBasedPartitionerTest configuration.
	laTest = map[string]string{ClassConfig: TimeBasedClass, DurationConfig: "3600000", PathFormatConfig: confluentTestFmt,
		LocaleConfig: "en_US", TimezoneConfig: "America/Los_Angeles", ExtractorConfig: "RecordField", TimestampFieldConfig: "ts"}
)

type goldenCase struct {
	name string
	// java is the Confluent behaviour the case pins.
	java  string
	props map[string]string
	rec   *connect.SinkRecord
	now   time.Time
	want  string // the encoded partition
	key   string // the object key for the record's topic, partition and offset with ext ".json"
}

var goldenCases = []goldenCase{
	{name: "default", java: "DefaultPartitioner.encodePartition: \"partition=\" + kafkaPartition; TopicPartitionWriter.fileKeyToCommit",
		props: map[string]string{}, rec: structRecord(order(nil), 0),
		want: "partition=3", key: "topics/orders/partition=3/orders+3+0000001200.json"},
	{name: "default by simple name, no topics.dir, pad 4, '_' delimiters",
		java:  "fileKey leaves a blank topics.dir out; %0<width>d; generatePartitionedPath = topic + delim + encoded",
		props: map[string]string{ClassConfig: "DefaultPartitioner", TopicsDirConfig: "", PadWidthConfig: "4", DirDelimConfig: "_", FileDelimConfig: "-"},
		rec:   structRecord(order(nil), 0),
		want:  "partition=3", key: "orders_partition=3_orders-3-1200.json"},

	{name: "field, one struct field", java: "FieldPartitioner: fieldName + \"=\" + (String) value",
		props: map[string]string{ClassConfig: FieldClass, FieldNameConfig: "region"}, rec: structRecord(order(nil), 0),
		want: "region=eu", key: "topics/orders/region=eu/orders+3+0000001200.json"},
	{name: "field, two struct fields", java: "FieldPartitioner joins the fields with directory.delim; INT32 by Number.toString",
		props: map[string]string{ClassConfig: FieldClass, FieldNameConfig: "region, shard"}, rec: structRecord(order(nil), 0),
		want: "region=eu/shard=7", key: "topics/orders/region=eu/shard=7/orders+3+0000001200.json"},
	{name: "field, INT64, INT8, BOOLEAN", java: "FieldPartitioner.encodePartitionValue: INT8..INT64 via Number.toString, BOOLEAN via Boolean.toString",
		props: map[string]string{ClassConfig: FieldClass, FieldNameConfig: "big,tiny,flag"}, rec: structRecord(order(nil), 0),
		want: "big=-42/tiny=3/flag=true", key: "topics/orders/big=-42/tiny=3/flag=true/orders+3+0000001200.json"},
	{name: "field, null optional field", java: "FieldPartitioner: a null partition key appends fieldName + \"=null\"",
		props: map[string]string{ClassConfig: FieldClass, FieldNameConfig: "region,note"}, rec: structRecord(order(nil), 0),
		want: "region=eu/note=null", key: "topics/orders/region=eu/note=null/orders+3+0000001200.json"},
	{name: "field, nested struct field", java: "FieldPartitioner with DataUtils.getNestedField/getNestedFieldValue: the dotted name is kept",
		props: map[string]string{ClassConfig: FieldClass, FieldNameConfig: "user.address.city"}, rec: structRecord(order(nil), 0),
		want: "user.address.city=NYC", key: "topics/orders/user.address.city=NYC/orders+3+0000001200.json"},
	{name: "field, custom directory.delim", java: "FieldPartitioner uses directory.delim between fields (testCustomDelimiterPartition)",
		props: map[string]string{ClassConfig: FieldClass, FieldNameConfig: "region,shard", DirDelimConfig: "|"}, rec: structRecord(order(nil), 0),
		want: "region=eu|shard=7", key: "topics|orders|region=eu|shard=7|orders+3+0000001200.json"},
	{name: "field, special characters kept", java: "FieldPartitioner appends string values unescaped (testStringPartition)",
		props: map[string]string{ClassConfig: FieldClass, FieldNameConfig: "region"},
		rec:   structRecord(order(map[string]any{"region": "a/b=c+d"}), 0),
		want:  "region=a/b=c+d", key: "topics/orders/region=a/b=c+d/orders+3+0000001200.json"},
	{name: "field, one map field (Fjord extension)", java: "Confluent throws for non-Struct values; Fjord prints maps like structs",
		props: map[string]string{ClassConfig: FieldClass, FieldNameConfig: "region"},
		rec:   mapRecord(map[string]any{"region": "us", "shard": int64(2)}, 0),
		want:  "region=us", key: "topics/orders/region=us/orders+3+0000001200.json"},
	{name: "field, two map fields, one missing (Fjord extension)", java: "as a null Struct field: name=null",
		props: map[string]string{ClassConfig: FieldClass, FieldNameConfig: "region,shard,absent"},
		rec:   mapRecord(map[string]any{"region": "us", "shard": int64(2)}, 0),
		want:  "region=us/shard=2/absent=null", key: "topics/orders/region=us/shard=2/absent=null/orders+3+0000001200.json"},
	{name: "field, nested map field (Fjord extension)", java: "DataUtils.getNestedFieldValue walks maps",
		props: map[string]string{ClassConfig: FieldClass, FieldNameConfig: "a.b"},
		rec:   mapRecord(map[string]any{"a": map[string]any{"b": true}}, 0),
		want:  "a.b=true", key: "topics/orders/a.b=true/orders+3+0000001200.json"},

	{name: "time-based, Record extractor, UTC", java: "RecordTimestampExtractor; getPartition floors to partition.duration.ms",
		props: utcHourly, rec: structRecord(order(nil), 1710066600000), // 2024-03-10T10:30Z
		want: "year=2024/month=03/day=10/hour=10", key: "topics/orders/year=2024/month=03/day=10/hour=10/orders+3+0000001200.json"},
	{name: "time-based, Record extractor, LA, before spring forward", java: "getPartition: convertUTCToLocal then floor; 01:59:59.999 PST",
		props: laHourly, rec: structRecord(order(nil), 1710064799999), // 2024-03-10T09:59:59.999Z
		want: "year=2024/month=03/day=10/hour=01", key: "topics/orders/year=2024/month=03/day=10/hour=01/orders+3+0000001200.json"},
	{name: "time-based, Record extractor, LA, spring forward", java: "convertLocalToUTC(03:00, false): offsets differ but no gap, -07:00 wins; 02 is skipped",
		props: laHourly, rec: structRecord(order(nil), 1710064800000), // 2024-03-10T10:00Z
		want: "year=2024/month=03/day=10/hour=03", key: "topics/orders/year=2024/month=03/day=10/hour=03/orders+3+0000001200.json"},
	{name: "time-based, Record extractor, LA, first 01:30 of fall back", java: "01:30 PDT floors to 01:00 local, which convertLocalToUTC reads as PDT",
		props: laHourly, rec: structRecord(order(nil), 1730622600000), // 2024-11-03T08:30Z
		want: "year=2024/month=11/day=03/hour=01", key: "topics/orders/year=2024/month=11/day=03/hour=01/orders+3+0000001200.json"},
	{name: "time-based, Record extractor, LA, second 01:30 of fall back", java: "01:30 PST shares the 01 bucket (one directory for both hours)",
		props: laHourly, rec: structRecord(order(nil), 1730626200000), // 2024-11-03T09:30Z
		want: "year=2024/month=11/day=03/hour=01", key: "topics/orders/year=2024/month=11/day=03/hour=01/orders+3+0000001200.json"},
	{name: "time-based, Record extractor, LA, after fall back", java: "02:00 PST",
		props: laHourly, rec: structRecord(order(nil), 1730628000000), // 2024-11-03T10:00Z
		want: "year=2024/month=11/day=03/hour=02", key: "topics/orders/year=2024/month=11/day=03/hour=02/orders+3+0000001200.json"},
	{name: "time-based, day buckets in a DST gap at midnight (Santiago)",
		java:  "convertLocalToUTC: 2024-09-08T00:00 does not exist in America/Santiago; west of Greenwich the pre-gap offset -04 is used, giving 04:00Z = 01:00 -03",
		props: withProps(laHourly, TimezoneConfig, "America/Santiago", DurationConfig, "86400000"),
		rec:   structRecord(order(nil), 1725796800000), // 2024-09-08T12:00Z
		want:  "year=2024/month=09/day=08/hour=01", key: "topics/orders/year=2024/month=09/day=08/hour=01/orders+3+0000001200.json"},
	{name: "time-based, trailing delimiter dropped, Confluent's test pattern", java: "TimeBasedPartitionerTest.testRecordFieldTimeDateExtractor (INT64 field)",
		props: laTest, rec: structRecord(order(map[string]any{"ts": int64(1427961600000)}), -1), // 2015-04-02T01:00 PDT
		want: "year=2015/month=4/day=2/hour=1", key: "topics/orders/year=2015/month=4/day=2/hour=1/orders+3+0000001200.json"},
	{name: "time-based, RecordField INT32", java: "testRecordFieldTimeDateExtractor: INT32 1970-01-01T00:00 LA -> year=1970/month=1/day=1/hour=0",
		props: withProps(laTest, TimestampFieldConfig, "ts32"), rec: structRecord(order(map[string]any{"ts32": int32(28800000)}), -1),
		want: "year=1970/month=1/day=1/hour=0", key: "topics/orders/year=1970/month=1/day=1/hour=0/orders+3+0000001200.json"},
	{name: "time-based, RecordField Timestamp logical", java: "RecordFieldTimestampExtractor: Timestamp.LOGICAL_NAME -> Date.getTime()",
		props: withProps(laTest, TimestampFieldConfig, "at"), rec: structRecord(order(map[string]any{"at": time.UnixMilli(1427961600000).UTC()}), -1),
		want: "year=2015/month=4/day=2/hour=1", key: "topics/orders/year=2015/month=4/day=2/hour=1/orders+3+0000001200.json"},
	{name: "time-based, RecordField ISO string with millis", java: "extractTimestampFromString: ISODateTimeFormat.dateTimeParser()",
		props: withProps(laTest, TimestampFieldConfig, "iso"), rec: structRecord(order(map[string]any{"iso": "2015-04-02T01:00:00.000-07:00"}), -1),
		want: "year=2015/month=4/day=2/hour=1", key: "topics/orders/year=2015/month=4/day=2/hour=1/orders+3+0000001200.json"},
	{name: "time-based, RecordField ISO string without millis", java: "ISODateTimeFormat.dateTimeNoMillis() output parses too",
		props: withProps(laTest, TimestampFieldConfig, "iso"), rec: structRecord(order(map[string]any{"iso": "2015-04-02T01:00:00-07:00"}), -1),
		want: "year=2015/month=4/day=2/hour=1", key: "topics/orders/year=2015/month=4/day=2/hour=1/orders+3+0000001200.json"},
	{name: "time-based, RecordField string of ms digits", java: "NUMERIC_TIMESTAMP_PATTERN ^-?[0-9]{1,19}$ -> Long.valueOf",
		props: withProps(laTest, TimestampFieldConfig, "iso"), rec: structRecord(order(map[string]any{"iso": "1427961600000"}), -1),
		want: "year=2015/month=4/day=2/hour=1", key: "topics/orders/year=2015/month=4/day=2/hour=1/orders+3+0000001200.json"},
	{name: "time-based, RecordField nested struct field", java: "testNestedRecordFieldTimeExtractor: DataUtils.getNestedFieldValue",
		props: withProps(laTest, TimestampFieldConfig, "meta.ts"),
		rec: func() *connect.SinkRecord {
			meta := connect.NewStruct().Field("ts", connect.Int64Schema).Build()
			outer := connect.NewStruct().Field("meta", meta).Build()
			v := connect.NewStructValue(outer).MustPut("meta", connect.NewStructValue(meta).MustPut("ts", int64(1427961600000)))
			return &connect.SinkRecord{Topic: "orders", Partition: 3, Offset: 1200, ValueSchema: outer, Value: v, Timestamp: -1}
		}(),
		want: "year=2015/month=4/day=2/hour=1", key: "topics/orders/year=2015/month=4/day=2/hour=1/orders+3+0000001200.json"},
	{name: "time-based, RecordField map number", java: "RecordFieldTimestampExtractor on a Map: Number.longValue()",
		props: laTest, rec: mapRecord(map[string]any{"ts": int64(1427961600000)}, -1),
		want: "year=2015/month=4/day=2/hour=1", key: "topics/orders/year=2015/month=4/day=2/hour=1/orders+3+0000001200.json"},
	{name: "time-based, RecordField map to struct string", java: "testRecordFieldTimeStringExtractor: map{string->struct}, field header.iso",
		props: withProps(laTest, TimestampFieldConfig, "header.iso"),
		rec:   mapRecord(map[string]any{"header": order(map[string]any{"iso": "2015-04-02T08:00:00.000Z"})}, -1),
		want:  "year=2015/month=4/day=2/hour=1", key: "topics/orders/year=2015/month=4/day=2/hour=1/orders+3+0000001200.json"},
	{name: "time-based, Wallclock", java: "testWallclockTimeExtractor: now=15778800000 is 1970-07-02T08:00 PDT",
		props: withProps(laTest, ExtractorConfig, "Wallclock"), rec: structRecord(order(nil), -1), now: time.UnixMilli(15778800000),
		want: "year=1970/month=7/day=2/hour=8", key: "topics/orders/year=1970/month=7/day=2/hour=8/orders+3+0000001200.json"},
	{name: "time-based, full extractor class name", java: "newTimestampExtractor loads the class by name",
		props: withProps(utcHourly, ExtractorConfig, extractorClassPrefix+"RecordTimestampExtractor"), rec: structRecord(order(nil), 1710066600000),
		want: "year=2024/month=03/day=10/hour=10", key: "topics/orders/year=2024/month=03/day=10/hour=10/orders+3+0000001200.json"},
	{name: "time-based, 6h buckets", java: "getPartition floors the local time to partition.duration.ms, whatever path.format prints",
		props: withProps(utcHourly, DurationConfig, "21600000"), rec: structRecord(order(nil), 1710066600000), // 10:30Z
		want: "year=2024/month=03/day=10/hour=06", key: "topics/orders/year=2024/month=03/day=10/hour=06/orders+3+0000001200.json"},
	{name: "time-based, before 1970", java: "getPartition's (t / g) * g truncates toward zero: 1969-12-31T23:30Z lands in 1970's first hour",
		props: utcHourly, rec: structRecord(order(nil), -1800000),
		want: "year=1970/month=01/day=01/hour=00", key: "topics/orders/year=1970/month=01/day=01/hour=00/orders+3+0000001200.json"},
	{name: "time-based, fixed offset zone and minute buckets", java: "partition.duration.ms 900000 floors to quarter hours in +05:30",
		props: withProps(utcHourly, TimezoneConfig, "+05:30", DurationConfig, "900000", PathFormatConfig, "YYYYMMdd/HHmm"),
		rec:   structRecord(order(nil), 1427950800123), // 2015-04-02T10:30:00.123+05:30
		want:  "20150402/1030", key: "topics/orders/20150402/1030/orders+3+0000001200.json"},

	{name: "hourly", java: "HourlyPartitionerTest: 'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH, 1h",
		props: map[string]string{ClassConfig: HourlyClass, LocaleConfig: "en_US", TimezoneConfig: "America/Los_Angeles", ExtractorConfig: "Record"},
		rec:   structRecord(order(nil), 1391252400000), // 2014-02-01T03:00 PST
		want:  "year=2014/month=02/day=01/hour=03", key: "topics/orders/year=2014/month=02/day=01/hour=03/orders+3+0000001200.json"},
	{name: "hourly, Santiago, standard time", java: "testHourlyPartionerWithDaylightSavings: 1715224653000",
		props: map[string]string{ClassConfig: "HourlyPartitioner", LocaleConfig: "es_CL", TimezoneConfig: "America/Santiago", ExtractorConfig: "Record"},
		rec:   structRecord(order(nil), 1715224653000),
		want:  "year=2024/month=05/day=08/hour=23", key: "topics/orders/year=2024/month=05/day=08/hour=23/orders+3+0000001200.json"},
	{name: "hourly, Santiago, summer time", java: "testHourlyPartionerWithDaylightSavings: 1706411853000",
		props: map[string]string{ClassConfig: "HourlyPartitioner", LocaleConfig: "es_CL", TimezoneConfig: "America/Santiago", ExtractorConfig: "Record"},
		rec:   structRecord(order(nil), 1706411853000),
		want:  "year=2024/month=01/day=28/hour=00", key: "topics/orders/year=2024/month=01/day=28/hour=00/orders+3+0000001200.json"},
	{name: "hourly ignores path.format and partition.duration.ms", java: "HourlyPartitioner.configure overwrites both",
		props: map[string]string{ClassConfig: HourlyClass, LocaleConfig: "en", TimezoneConfig: "UTC", ExtractorConfig: "Record",
			PathFormatConfig: "'x'=YYYY", DurationConfig: "60000"},
		rec:  structRecord(order(nil), 1710066600000),
		want: "year=2024/month=03/day=10/hour=10", key: "topics/orders/year=2024/month=03/day=10/hour=10/orders+3+0000001200.json"},
	{name: "daily", java: "DailyPartitionerTest: 'year'=YYYY/'month'=MM/'day'=dd, 24h",
		props: map[string]string{ClassConfig: DailyClass, LocaleConfig: "en_US", TimezoneConfig: "America/Los_Angeles", ExtractorConfig: "Record"},
		rec:   structRecord(order(nil), 1391252400000),
		want:  "year=2014/month=02/day=01", key: "topics/orders/year=2014/month=02/day=01/orders+3+0000001200.json"},
	{name: "daily, LA, day of spring forward", java: "local midnight 2024-03-10 is PST, 08:00Z",
		props: map[string]string{ClassConfig: DailyClass, LocaleConfig: "en", TimezoneConfig: "America/Los_Angeles", ExtractorConfig: "Record"},
		rec:   structRecord(order(nil), 1710097200000), // 2024-03-10T12:00 PDT
		want:  "year=2024/month=03/day=10", key: "topics/orders/year=2024/month=03/day=10/orders+3+0000001200.json"},
	{name: "daily with directory.delim '_'", java: "DailyPartitioner builds its pattern with directory.delim",
		props: map[string]string{ClassConfig: DailyClass, LocaleConfig: "en", TimezoneConfig: "UTC", ExtractorConfig: "Record", DirDelimConfig: "_"},
		rec:   structRecord(order(nil), 1710066600000),
		want:  "year=2024_month=03_day=10", key: "topics_orders_year=2024_month=03_day=10_orders+3+0000001200.json"},
}

func TestGoldenKeys(t *testing.T) {
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			p, err := New(c.props)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			got, err := p.Encode(c.rec, c.now)
			if err != nil {
				t.Fatalf("Encode: %v (pins %s)", err, c.java)
			}
			if got != c.want {
				t.Errorf("encoded %q, want %q (pins %s)", got, c.want, c.java)
			}
			key := LayoutFrom(c.props).Key(c.rec.Topic, got, c.rec.Partition, c.rec.Offset, ".json")
			if key != c.key {
				t.Errorf("key %q, want %q", key, c.key)
			}
			// Encoding again hits the caches; it must not change.
			if again, err := p.Encode(c.rec, c.now); err != nil || again != got {
				t.Errorf("second Encode = %q, %v", again, err)
			}
			_, timeBased := p.(TimeBased)
			if k, _ := classKind(c.props[ClassConfig]); timeBased != k.timeBased() {
				t.Errorf("TimeBased implemented = %v for %q", timeBased, c.props[ClassConfig])
			}
		})
	}
}

// TestTimestampMatchesExtractor checks that TimeBased.Timestamp is the
// extractor's time (what rotate.interval.ms measures).
func TestTimestampMatchesExtractor(t *testing.T) {
	cases := []struct {
		props map[string]string
		rec   *connect.SinkRecord
		now   time.Time
		want  int64
	}{
		{utcHourly, structRecord(order(nil), 1710066600000), time.Time{}, 1710066600000},
		{laTest, structRecord(order(map[string]any{"ts": int64(77)}), 5), time.Time{}, 77},
		{withProps(laTest, ExtractorConfig, "Wallclock"), structRecord(order(nil), 5), time.UnixMilli(123456), 123456},
	}
	for _, c := range cases {
		p, err := New(c.props)
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.(TimeBased).Timestamp(c.rec, c.now)
		if err != nil || got != c.want {
			t.Errorf("%s: Timestamp = %d, %v; want %d", c.props[ExtractorConfig], got, err, c.want)
		}
	}
}

// TestBucketCacheAcrossBuckets feeds one partitioner times in and out of
// order across an hour and a DST change: the cached bucket must never
// leak into another.
func TestBucketCacheAcrossBuckets(t *testing.T) {
	p, err := New(laHourly)
	if err != nil {
		t.Fatal(err)
	}
	seq := []struct {
		ts   int64
		want string
	}{
		{1730622600000, "year=2024/month=11/day=03/hour=01"}, // 01:30 PDT
		{1730624399999, "year=2024/month=11/day=03/hour=01"}, // 01:59:59.999 PDT
		{1730624400000, "year=2024/month=11/day=03/hour=01"}, // 01:00 PST, a new zone period
		{1730628000000, "year=2024/month=11/day=03/hour=02"},
		{1730622600000, "year=2024/month=11/day=03/hour=01"}, // back in time
		{1710064799999, "year=2024/month=03/day=10/hour=01"},
		{1710064800000, "year=2024/month=03/day=10/hour=03"},
	}
	for _, s := range seq {
		got, err := p.Encode(structRecord(order(nil), s.ts), time.Time{})
		if err != nil || got != s.want {
			t.Errorf("ts %d: %q, %v; want %q", s.ts, got, err, s.want)
		}
	}
}
