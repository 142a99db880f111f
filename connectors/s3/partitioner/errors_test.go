package partitioner

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect"
)

// TestEncodeErrors pins the records Confluent's partitioners refuse and
// the messages they refuse them with.
func TestEncodeErrors(t *testing.T) {
	field := func(names string) map[string]string {
		return map[string]string{ClassConfig: FieldClass, FieldNameConfig: names}
	}
	cases := []struct {
		name  string
		java  string
		props map[string]string
		rec   *connect.SinkRecord
		// want is the message Confluent's exception carries; partition
		// says it must be a *PartitionError with that Msg.
		want      string
		prefix    bool
		partition bool
	}{
		{name: "field, FLOAT64", java: "FieldPartitioner.encodePartitionValue default branch (testUnsupportedTypePartition)",
			props: field("price"), rec: structRecord(order(nil), 0), want: "Error encoding partition.", partition: true},
		{name: "field, STRUCT", java: "encodePartitionValue: STRUCT is not a supported type",
			props: field("user"), rec: structRecord(order(nil), 0), want: "Error encoding partition.", partition: true},
		{name: "field, Timestamp logical on INT64", java: "(Number) cast of a java.util.Date fails",
			props: field("at"), rec: structRecord(order(map[string]any{"at": time.UnixMilli(0).UTC()}), 0),
			want: "Error encoding partition.", partition: true},
		{name: "field, not in schema", java: "testMissingFieldInSchemaThrows: DataException",
			props: field("missing"), rec: structRecord(order(nil), 0), want: "Field 'missing' is not present in the schema."},
		{name: "field, nested part not in schema", java: "getNestedField finds no field",
			props: field("user.nothing"), rec: structRecord(order(nil), 0), want: "Field 'user.nothing' is not present in the schema."},
		{name: "field, nested through a non-struct", java: "ConnectSchema.field on a non-struct type, wrapped by getNestedField",
			props: field("region.x"), rec: structRecord(order(nil), 0),
			want: "Unable to get field 'region.x' from schema Schema{order:STRUCT}."},
		{name: "field, string value", java: "testNotStructPartition: \"Value is not Struct type.\"",
			props: field("region"), rec: &connect.SinkRecord{Topic: "orders", ValueSchema: connect.StringSchema, Value: "foo"},
			want: "Error encoding partition.", partition: true},
		{name: "field, tombstone", java: "a null value is not a Struct",
			props: field("region"), rec: &connect.SinkRecord{Topic: "orders"}, want: "Error encoding partition.", partition: true},
		{name: "field, schemaless float (Fjord extension)", java: "as FLOAT64 in a Struct",
			props: field("x"), rec: mapRecord(map[string]any{"x": 1.5}, 0), want: "Error encoding partition.", partition: true},

		{name: "time, Record extractor without timestamp", java: "testRecordTimeExtractorNullSinkRecordTime",
			props: utcHourly, rec: &connect.SinkRecord{Topic: "orders", Partition: 3, Offset: 9, Timestamp: -1, TimestampType: connect.NoTimestampType},
			want: "Unable to determine timestamp using timestamp.extractor " +
				"io.confluent.connect.storage.partitioner.TimeBasedPartitioner$RecordTimestampExtractor for record: " +
				"SinkRecord{kafkaOffset=9, timestampType=NoTimestampType} ConnectRecord{topic='orders', kafkaPartition=3, timestamp=null}",
			partition: true},
		{name: "time, RecordField FLOAT64", java: "testDoubleTimeExtract",
			props: withProps(laTest, TimestampFieldConfig, "price"), rec: structRecord(order(nil), 0),
			want: "Error extracting timestamp from record field: price", partition: true},
		{name: "time, RecordField map array", java: "testMapRecordFieldArrayExtraction",
			props: withProps(laTest, TimestampFieldConfig, "array"), rec: mapRecord(map[string]any{"array": []any{int64(1)}}, 0),
			want: "Error extracting timestamp from record field: array", partition: true},
		{name: "time, RecordField value not struct or map", java: "testRecordFieldNotStructOrMap",
			props: laTest, rec: &connect.SinkRecord{Topic: "orders", ValueSchema: connect.StringSchema, Value: "foo", Timestamp: 0},
			want: "Error encoding partition.", partition: true},
		{name: "time, RecordField null field", java: "getNestedFieldValue: DataException for a null value",
			props: laTest, rec: structRecord(order(nil), 0), want: "The field 'ts' does not exist."},
		{name: "time, RecordField missing map entry", java: "DataUtils.getField on a Map: DataException",
			props: laTest, rec: mapRecord(map[string]any{}, 0), want: "The field 'ts' does not exist."},
		{name: "time, RecordField bad string", java: "testInvalidStringTimeStructExtract: Joda's IllegalArgumentException",
			props: withProps(laTest, TimestampFieldConfig, "iso"), rec: structRecord(order(map[string]any{"iso": "def"}), 0),
			want: "Invalid format", prefix: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := New(c.props)
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.Encode(c.rec, time.Time{})
			if err == nil {
				t.Fatalf("no error (pins %s)", c.java)
			}
			var pe *PartitionError
			if c.partition {
				if !errors.As(err, &pe) {
					t.Fatalf("error %T %v is not a PartitionError", err, err)
				}
				if pe.Msg != c.want {
					t.Errorf("message %q, want %q (pins %s)", pe.Msg, c.want, c.java)
				}
				return
			}
			if c.prefix && !strings.HasPrefix(err.Error(), c.want) || !c.prefix && err.Error() != c.want {
				t.Errorf("error %q, want %q (pins %s)", err, c.want, c.java)
			}
		})
	}
}

// TestPartitionErrorDetail: the detail Confluent logs stays in the text.
func TestPartitionErrorDetail(t *testing.T) {
	p, err := New(map[string]string{ClassConfig: FieldClass, FieldNameConfig: "price"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Encode(structRecord(order(nil), 0), time.Time{})
	if want := "Error encoding partition. (Type float64 is not supported as a partition key.)"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}
