package partitioner

import (
	"math"
	"math/big"
	"strconv"
	"time"

	"github.com/fjordhq/fjord/connect"
)

// extractorKind is a timestamp.extractor: where a time-based partitioner
// takes a record's time from.
type extractorKind int8

const (
	wallclock   extractorKind = iota + 1 // the sink's clock when it writes
	recordTime                           // the Kafka record timestamp
	recordField                          // timestamp.field in the value
)

const extractorClassPrefix = "io.confluent.connect.storage.partitioner.TimeBasedPartitioner$"

// parseExtractor accepts Confluent's short names and the classes they
// stand for; Confluent's matching is case-sensitive.
func parseExtractor(name string) (extractorKind, bool) {
	switch name {
	case "Wallclock", extractorClassPrefix + "WallclockTimestampExtractor":
		return wallclock, true
	case "Record", extractorClassPrefix + "RecordTimestampExtractor":
		return recordTime, true
	case "RecordField", extractorClassPrefix + "RecordFieldTimestampExtractor":
		return recordField, true
	}
	return 0, false
}

func (k extractorKind) className() string {
	switch k {
	case wallclock:
		return extractorClassPrefix + "WallclockTimestampExtractor"
	case recordTime:
		return extractorClassPrefix + "RecordTimestampExtractor"
	}
	return extractorClassPrefix + "RecordFieldTimestampExtractor"
}

type extractor struct {
	kind  extractorKind
	field fieldPath // recordField only
}

// noTimestamp is Kafka's RecordBatch.NO_TIMESTAMP, which Connect hands
// to sink tasks as a null timestamp.
const noTimestamp = -1

// timestamp returns the record's time in ms as Confluent's extractor of
// the same name does.
func (e *extractor) timestamp(r *connect.SinkRecord, now time.Time) (int64, error) {
	switch e.kind {
	case wallclock:
		return now.UnixMilli(), nil
	case recordTime:
		if r.Timestamp == noTimestamp {
			return 0, &PartitionError{Msg: "Unable to determine timestamp using timestamp.extractor " +
				e.kind.className() + " for record: " + describe(r)}
		}
		return r.Timestamp, nil
	}
	return e.fromField(r)
}

// describe names a record as Kafka's SinkRecord.toString begins, without
// the key and value (which can be large or sensitive).
func describe(r *connect.SinkRecord) string {
	return "SinkRecord{kafkaOffset=" + strconv.FormatInt(r.Offset, 10) + ", timestampType=" + r.TimestampType.String() +
		"} ConnectRecord{topic='" + r.Topic + "', kafkaPartition=" + strconv.Itoa(int(r.Partition)) + ", timestamp=null}"
}

func (e *extractor) fieldError(detail string) error {
	return &PartitionError{Msg: "Error extracting timestamp from record field: " + e.field.name, Detail: detail}
}

func (e *extractor) missing() error {
	return &connect.DataError{Msg: "The field '" + e.field.name + "' does not exist."}
}

// fromField is RecordFieldTimestampExtractor: in a Struct value the
// field's schema decides (Timestamp, INT32, INT64 as ms, STRING as ms
// digits or ISO-8601); in a schemaless map the Go type does.
func (e *extractor) fromField(r *connect.SinkRecord) (int64, error) {
	switch v := r.Value.(type) {
	case *connect.Struct:
		val, ok := nestedValue(v, e.field)
		if !ok {
			return 0, e.missing()
		}
		schema := r.ValueSchema
		if schema == nil {
			schema = v.Schema()
		}
		f, err := nestedField(schema, e.field)
		if err != nil {
			return 0, err
		}
		if f == nil {
			return 0, e.missing()
		}
		if f.Schema.Name == connect.TimestampName {
			if t, ok := val.(time.Time); ok {
				return t.UnixMilli(), nil
			}
		}
		switch f.Schema.Type {
		case connect.Int32, connect.Int64:
			// A Date or Time logical value is a java.util.Date, which
			// Confluent's cast to Number refuses.
			if n, ok := longValue(val); ok {
				return n, nil
			}
			return 0, e.fieldError("a " + f.Schema.String() + " value is not a number of milliseconds")
		case connect.String:
			if s, ok := val.(string); ok {
				return parseTimestampString(s)
			}
		}
		return 0, e.fieldError("Unsupported type '" + f.Schema.Type.String() + "' for user-defined timestamp field.")
	case map[string]any, map[any]any:
		val, ok := nestedValue(v, e.field)
		if !ok {
			return 0, e.missing()
		}
		switch x := val.(type) {
		case string:
			return parseTimestampString(x)
		case time.Time:
			return x.UnixMilli(), nil
		}
		if n, ok := longValue(val); ok {
			return n, nil
		}
		return 0, e.fieldError("Unsupported type for user-defined timestamp field.")
	}
	return 0, errEncoding("Value is not of Struct or Map type.")
}

// longValue is Java's Number.longValue for the Go types Connect values
// use: floats truncate toward zero and saturate, decimals keep the low
// 64 bits of their integer part.
func longValue(v any) (int64, bool) {
	if n, ok := integer(v); ok {
		return n, true
	}
	switch x := v.(type) {
	case uint64:
		return int64(x), true
	case float32:
		return doubleToLong(float64(x)), true
	case float64:
		return doubleToLong(x), true
	case connect.Decimal:
		if x.Unscaled == nil {
			return 0, true
		}
		n := new(big.Int).Set(x.Unscaled)
		if x.Scale > 0 {
			n.Quo(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(x.Scale)), nil))
		} else if x.Scale < 0 {
			n.Mul(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-x.Scale)), nil))
		}
		lo := new(big.Int).And(n, new(big.Int).SetUint64(math.MaxUint64))
		return int64(lo.Uint64()), true
	}
	return 0, false
}

// doubleToLong is Java's (long) d.
func doubleToLong(f float64) int64 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}
