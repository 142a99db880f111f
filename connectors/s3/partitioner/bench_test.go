package partitioner

import (
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect"
)

// The per-record paths of the sink: Encode for every record, Key for
// every file.

func benchEncode(b *testing.B, props map[string]string, recs []*connect.SinkRecord) {
	p, err := New(props)
	if err != nil {
		b.Fatal(err)
	}
	now := time.UnixMilli(1710066600000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := p.Encode(recs[i%len(recs)], now); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeDefault(b *testing.B) {
	recs := make([]*connect.SinkRecord, 8)
	for i := range recs {
		recs[i] = &connect.SinkRecord{Partition: int32(i)}
	}
	benchEncode(b, map[string]string{}, recs)
}

func BenchmarkEncodeFieldStruct(b *testing.B) {
	recs := []*connect.SinkRecord{structRecord(order(nil), 0), structRecord(order(map[string]any{"region": "us"}), 0)}
	benchEncode(b, map[string]string{ClassConfig: FieldClass, FieldNameConfig: "region,shard"}, recs)
}

func BenchmarkEncodeFieldMap(b *testing.B) {
	recs := []*connect.SinkRecord{mapRecord(map[string]any{"region": "eu", "shard": int64(7)}, 0)}
	benchEncode(b, map[string]string{ClassConfig: FieldClass, FieldNameConfig: "region,shard"}, recs)
}

// BenchmarkEncodeHourly: records a second apart, as a busy topic brings
// them: nearly all in the cached bucket.
func BenchmarkEncodeHourly(b *testing.B) {
	recs := make([]*connect.SinkRecord, 3600)
	for i := range recs {
		recs[i] = structRecord(order(nil), 1710064800000+int64(i)*1000)
	}
	benchEncode(b, map[string]string{ClassConfig: HourlyClass, LocaleConfig: "en", TimezoneConfig: "America/Los_Angeles",
		ExtractorConfig: "Record"}, recs)
}

// BenchmarkEncodeHourlyNewBucket: every record in another hour, the
// slow path.
func BenchmarkEncodeHourlyNewBucket(b *testing.B) {
	recs := make([]*connect.SinkRecord, 64)
	for i := range recs {
		recs[i] = structRecord(order(nil), 1710064800000+int64(i)*3_600_000)
	}
	benchEncode(b, map[string]string{ClassConfig: HourlyClass, LocaleConfig: "en", TimezoneConfig: "America/Los_Angeles",
		ExtractorConfig: "Record"}, recs)
}

func BenchmarkEncodeRecordFieldISO(b *testing.B) {
	recs := []*connect.SinkRecord{structRecord(order(map[string]any{"iso": "2024-03-10T10:30:00.123Z"}), 0)}
	benchEncode(b, withProps(utcHourly, ExtractorConfig, "RecordField", TimestampFieldConfig, "iso"), recs)
}

func BenchmarkKey(b *testing.B) {
	l := defaultLayout
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = l.Key("orders", "year=2024/month=03/day=10/hour=03", 3, int64(i), ".snappy.parquet")
	}
}

func BenchmarkParseKey(b *testing.B) {
	l := defaultLayout
	key := l.Key("orders", "year=2024/month=03/day=10/hour=03", 3, 1200, ".snappy.parquet")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, _, _, ok := l.ParseKey(key, ".snappy.parquet"); !ok {
			b.Fatal("not parsed")
		}
	}
}
