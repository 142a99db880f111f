package sink

import (
	"fmt"

	"github.com/fjordhq/fjord/connect"
)

// Debezium's semantic type names: the values arrive as plain Connect types
// (after ExtractNewRecordState) and the schema name says what they mean.
const (
	dbzDate                 = "io.debezium.time.Date"
	dbzTime                 = "io.debezium.time.Time"
	dbzMicroTime            = "io.debezium.time.MicroTime"
	dbzNanoTime             = "io.debezium.time.NanoTime"
	dbzTimestamp            = "io.debezium.time.Timestamp"
	dbzMicroTimestamp       = "io.debezium.time.MicroTimestamp"
	dbzNanoTimestamp        = "io.debezium.time.NanoTimestamp"
	dbzZonedTimestamp       = "io.debezium.time.ZonedTimestamp"
	dbzZonedTime            = "io.debezium.time.ZonedTime"
	dbzMicroDuration        = "io.debezium.time.MicroDuration"
	dbzInterval             = "io.debezium.time.Interval"
	dbzYear                 = "io.debezium.time.Year"
	dbzJSON                 = "io.debezium.data.Json"
	dbzUUID                 = "io.debezium.data.Uuid"
	dbzXML                  = "io.debezium.data.Xml"
	dbzEnum                 = "io.debezium.data.Enum"
	dbzEnumSet              = "io.debezium.data.EnumSet"
	dbzVariableScaleDecimal = "io.debezium.data.VariableScaleDecimal"
)

// PostgreSQL type categories (pg_type.typcategory) the renderers care about.
const (
	catArray    = 'A'
	catBoolean  = 'B'
	catDateTime = 'D'
	catNumeric  = 'N'
	catString   = 'S'
	catTimespan = 'T'
	catUser     = 'U'
)

// sqlType is a column type the sink creates, with its category.
type sqlType struct {
	name string
	cat  byte
}

// columnType is the type auto.create and auto.evolve give a field:
// Confluent's PostgreSqlDatabaseDialect mapping for Connect types, and the
// natural PostgreSQL type for Debezium's semantic types (Confluent would
// create INT or BIGINT columns for those, losing their meaning).
func (s *settings) columnType(field string, sc *connect.Schema) (sqlType, error) {
	switch sc.Name {
	case connect.DecimalName:
		if sc.Type == connect.Bytes {
			return sqlType{"DECIMAL", catNumeric}, nil
		}
	case connect.DateName, dbzDate:
		if sc.Type == connect.Int32 {
			return sqlType{"DATE", catDateTime}, nil
		}
	case connect.TimeName:
		if sc.Type == connect.Int32 {
			return sqlType{"TIME", catDateTime}, nil
		}
	case connect.TimestampName:
		if sc.Type == connect.Int64 {
			return sqlType{"TIMESTAMP", catDateTime}, nil
		}
	case dbzTime:
		if sc.Type == connect.Int32 {
			return sqlType{"TIME(3)", catDateTime}, nil
		}
	case dbzMicroTime, dbzNanoTime:
		if sc.Type == connect.Int64 {
			return sqlType{"TIME(6)", catDateTime}, nil
		}
	case dbzTimestamp:
		if sc.Type == connect.Int64 {
			return sqlType{"TIMESTAMP(3)", catDateTime}, nil
		}
	case dbzMicroTimestamp, dbzNanoTimestamp:
		if sc.Type == connect.Int64 {
			return sqlType{"TIMESTAMP(6)", catDateTime}, nil
		}
	case dbzZonedTimestamp:
		if sc.Type == connect.String {
			return sqlType{"TIMESTAMPTZ", catDateTime}, nil
		}
	case dbzZonedTime:
		if sc.Type == connect.String {
			return sqlType{"TIMETZ", catDateTime}, nil
		}
	case dbzMicroDuration:
		if sc.Type == connect.Int64 {
			return sqlType{"INTERVAL", catTimespan}, nil
		}
	case dbzInterval:
		if sc.Type == connect.String {
			return sqlType{"INTERVAL", catTimespan}, nil
		}
	case dbzJSON:
		if sc.Type == connect.String {
			return sqlType{"JSONB", catUser}, nil
		}
	case dbzUUID:
		if sc.Type == connect.String {
			return sqlType{"UUID", catUser}, nil
		}
	case dbzXML:
		if sc.Type == connect.String {
			return sqlType{"XML", catUser}, nil
		}
	case dbzVariableScaleDecimal:
		if isVariableScaleDecimal(sc) {
			return sqlType{"NUMERIC", catNumeric}, nil
		}
	}
	switch sc.Type {
	case connect.Int8, connect.Int16:
		return sqlType{"SMALLINT", catNumeric}, nil
	case connect.Int32:
		return sqlType{"INT", catNumeric}, nil
	case connect.Int64:
		if s.timestampFields[field] {
			return sqlType{"TIMESTAMP", catDateTime}, nil
		}
		return sqlType{"BIGINT", catNumeric}, nil
	case connect.Float32:
		return sqlType{"REAL", catNumeric}, nil
	case connect.Float64:
		return sqlType{"DOUBLE PRECISION", catNumeric}, nil
	case connect.Boolean:
		return sqlType{"BOOLEAN", catBoolean}, nil
	case connect.String:
		if s.timestampFields[field] {
			return sqlType{"TIMESTAMP", catDateTime}, nil
		}
		return sqlType{"TEXT", catString}, nil
	case connect.Bytes:
		return sqlType{"BYTEA", 'U'}, nil
	case connect.Array:
		elem, err := s.columnType(field, sc.ValueSchema)
		if err != nil {
			return sqlType{}, err
		}
		if elem.cat == catArray {
			return elem, nil // PostgreSQL arrays are multidimensional: int[] holds int[][]
		}
		return sqlType{elem.name + "[]", catArray}, nil
	}
	return sqlType{}, noMapping(sc)
}

func noMapping(sc *connect.Schema) error {
	name := "null"
	if sc.Name != "" {
		name = sc.Name
	}
	return fmt.Errorf("%s (%s) type doesn't have a mapping to the SQL database column type", name, sc.Type)
}

// isVariableScaleDecimal recognises Debezium's VariableScaleDecimal: a
// struct of the scale and the unscaled value's two's-complement bytes.
func isVariableScaleDecimal(sc *connect.Schema) bool {
	if sc.Type != connect.StructType || sc.Name != dbzVariableScaleDecimal {
		return false
	}
	s, v := sc.Field("scale"), sc.Field("value")
	return s != nil && v != nil && s.Schema.Type == connect.Int32 && v.Schema.Type == connect.Bytes
}
