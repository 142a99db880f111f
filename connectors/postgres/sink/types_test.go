package sink

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/internal/testkit"
)

func named(t connect.Type, name string) *connect.SchemaBuilder {
	return connect.NewSchema(t).Name(name)
}

// typesSchema has a field of every Connect type and logical type, and of
// Debezium's semantic types; typeCases says the column each gets and how
// PostgreSQL prints the value written.
var typeCases = []struct {
	field  string
	schema *connect.Schema
	value  any
	column string // format_type of the created column
	text   string // the column ::text
}{
	{"i8", connect.Int8Schema, int8(-8), "smallint", "-8"},
	{"i16", connect.Int16Schema, int16(-16000), "smallint", "-16000"},
	{"i32", connect.Int32Schema, int32(2147483647), "integer", "2147483647"},
	{"i64", connect.Int64Schema, int64(-9223372036854775808), "bigint", "-9223372036854775808"},
	{"f32", connect.Float32Schema, float32(1.5e-7), "real", "1.5e-07"},
	{"f64", connect.Float64Schema, math.Nextafter(0.3, 1), "double precision", "0.30000000000000004"},
	{"f64nan", connect.Float64Schema, math.NaN(), "double precision", "NaN"},
	{"f64inf", connect.Float64Schema, math.Inf(-1), "double precision", "-Infinity"},
	{"bool", connect.BooleanSchema, true, "boolean", "true"},
	{"str", connect.StringSchema, "tab\there\\back 'quote' \"dq\" \r\nnewline ünï €", "text", "tab\there\\back 'quote' \"dq\" \r\nnewline ünï €"},
	{"bytes", connect.BytesSchema, []byte{0, 1, '\\', 0xff}, "bytea", `\x00015cff`},
	{"dec", connect.DecimalSchema(3).Build(), connect.NewDecimal(-123456789, 3), "numeric", "-123456.789"},
	{"date", connect.DateSchema().Build(), time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), "date", "2024-02-29"},
	{"date_bc", connect.DateSchema().Build(), time.Date(-43, 3, 15, 0, 0, 0, 0, time.UTC), "date", "0044-03-15 BC"},
	{"time", connect.TimeSchema().Build(), time.UnixMilli(13*3600_000 + 14*60_000 + 15_123).UTC(), "time without time zone", "13:14:15.123"},
	{"ts", connect.TimestampSchema().Build(), time.Date(2024, 7, 1, 12, 30, 45, 678_000_000, time.UTC), "timestamp without time zone", "2024-07-01 12:30:45.678"},
	{"arr_int", connect.NewArray(connect.OptionalInt32Schema).Build(), []any{int32(1), nil, int32(-3)}, "integer[]", "{1,NULL,-3}"},
	{"arr_str", connect.NewArray(connect.StringSchema).Build(), []any{"a b", `q"\`, "", "NULL", "{x}"}, "text[]", `{"a b","q\"\\","","NULL","{x}"}`},
	{"arr_2d", connect.NewArray(connect.NewArray(connect.Int64Schema).Build()).Build(), []any{[]any{int64(1), int64(2)}, []any{int64(3), int64(4)}}, "bigint[]", "{{1,2},{3,4}}"},
	{"opt_null", connect.OptionalStringSchema, nil, "text", "NULL"},
	{"with_default", connect.NewSchema(connect.String).Optional().Default("dflt").Build(), nil, "text", "dflt"},

	{"dbz_date", named(connect.Int32, dbzDate).Build(), int32(19782), "date", "2024-02-29"},
	{"dbz_time", named(connect.Int32, dbzTime).Build(), int32(3723004), "time(3) without time zone", "01:02:03.004"},
	{"dbz_microtime", named(connect.Int64, dbzMicroTime).Build(), int64(86399_999999), "time(6) without time zone", "23:59:59.999999"},
	{"dbz_nanotime", named(connect.Int64, dbzNanoTime).Build(), int64(3723_000_004_000), "time(6) without time zone", "01:02:03.000004"},
	{"dbz_ts", named(connect.Int64, dbzTimestamp).Build(), int64(1719837045678), "timestamp(3) without time zone", "2024-07-01 12:30:45.678"},
	{"dbz_microts", named(connect.Int64, dbzMicroTimestamp).Build(), int64(-1), "timestamp(6) without time zone", "1969-12-31 23:59:59.999999"},
	{"dbz_nanots", named(connect.Int64, dbzNanoTimestamp).Build(), int64(1719837045_123456000), "timestamp(6) without time zone", "2024-07-01 12:30:45.123456"},
	{"dbz_zonedts", named(connect.String, dbzZonedTimestamp).Build(), "2024-07-01T12:30:45.5+02:00", "timestamp with time zone", "2024-07-01 10:30:45.5+00"},
	{"dbz_zonedtime", named(connect.String, dbzZonedTime).Build(), "10:15:30Z", "time with time zone", "10:15:30+00"},
	{"dbz_duration", named(connect.Int64, dbzMicroDuration).Build(), int64(90061_000001), "interval", "25:01:01.000001"},
	{"dbz_interval", named(connect.String, dbzInterval).Build(), "P1Y2M3DT4H5M6.78S", "interval", "1 year 2 mons 3 days 04:05:06.78"},
	{"dbz_year", named(connect.Int32, dbzYear).Build(), int32(2024), "integer", "2024"},
	{"dbz_json", named(connect.String, dbzJSON).Build(), `{"b": [1, 2], "a": "x"}`, "jsonb", `{"a": "x", "b": [1, 2]}`},
	{"dbz_uuid", named(connect.String, dbzUUID).Build(), "5b2c4e9e-3c1f-4c1e-9a2f-0e6f7d8c9b0a", "uuid", "5b2c4e9e-3c1f-4c1e-9a2f-0e6f7d8c9b0a"},
	{"dbz_xml", named(connect.String, dbzXML).Build(), "<a>1</a>", "xml", "<a>1</a>"},
	{"dbz_enum", named(connect.String, dbzEnum).Parameter("allowed", "x,y").Build(), "y", "text", "y"},
	{"dbz_vsd", connect.NewStruct().Name(dbzVariableScaleDecimal).Field("scale", connect.Int32Schema).Field("value", connect.BytesSchema).Build(),
		nil, "numeric", "-12.345"}, // value set below
}

// TestAutoCreateTypes creates a table from a schema with every type and
// checks the column types and what PostgreSQL holds.
func TestAutoCreateTypes(t *testing.T) {
	pg := testkit.StartPostgres(t)
	b := connect.NewStruct().Name("types.Value").Field("id", connect.Int32Schema)
	for _, c := range typeCases {
		b.Field(c.field, c.schema)
	}
	vs := b.Build()
	v := connect.NewStructValue(vs)
	v.MustPut("id", int32(1))
	for _, c := range typeCases {
		val := c.value
		if c.field == "dbz_vsd" {
			d, _ := connect.DecimalToBytes(connect.DecimalSchema(3).Build(), connect.NewDecimal(-12345, 3))
			val = structOf(c.schema, "scale", int32(3), "value", d)
		}
		v.MustPut(c.field, val)
	}
	task, _ := startTask(t, pgProps(pg, "postgres", "auto.create", "true", "pk.mode", "record_value", "pk.fields", "id",
		"insert.mode", "upsert"), false)
	put(t, task, rec("types", 0, nil, nil, vs, v))

	cols := rows(t, pg, "postgres", `SELECT attname, format_type(atttypid, atttypmod), attnotnull,
		coalesce(pg_get_expr(d.adbin, d.adrelid), '') FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
		WHERE attrelid = 'types'::regclass AND attnum > 0 ORDER BY attnum`)
	if len(cols) != len(typeCases)+1 {
		t.Fatalf("%d columns, want %d:\n%s", len(cols), len(typeCases)+1, strings.Join(cols, "\n"))
	}
	var exprs []string
	for i, c := range typeCases {
		parts := strings.Split(cols[i+1], "|")
		if parts[0] != c.field || parts[1] != c.column {
			t.Errorf("column %d is %s %s, want %s %s", i+1, parts[0], parts[1], c.field, c.column)
		}
		if notNull := parts[2] == "true"; notNull != (!c.schema.Optional && c.schema.Default == nil) {
			t.Errorf("column %s NOT NULL is %v", c.field, notNull)
		}
		if c.field == "with_default" && parts[3] != "'dflt'::text" {
			t.Errorf("column %s default %q", c.field, parts[3])
		}
		exprs = append(exprs, fmt.Sprintf("coalesce(%q::text, 'NULL')", c.field))
	}
	conn := pg.Connect(t, "postgres")
	ctx := testkit.Context(t, 10*time.Second)
	if _, err := conn.Exec(ctx, "SET TimeZone = 'UTC'; SET IntervalStyle = 'postgres'"); err != nil {
		t.Fatal(err)
	}
	got := make([]string, len(exprs))
	ptrs := make([]any, len(exprs))
	for i := range got {
		ptrs[i] = &got[i]
	}
	if err := conn.QueryRow(ctx, "SELECT "+strings.Join(exprs, ", ")+" FROM types").Scan(ptrs...); err != nil {
		t.Fatal(err)
	}
	for i, c := range typeCases {
		if got[i] != c.text {
			t.Errorf("%s: %q, want %q", c.field, got[i], c.text)
		}
	}
}

// TestTimeZones: db.timezone sets the wall clock of Connect timestamps
// and times in timestamp and time columns (the instant in timestamptz);
// date.timezone=UTC keeps dates as they are.
func TestTimeZones(t *testing.T) {
	pg := testkit.StartPostgres(t)
	pg.Exec(t, "postgres", `CREATE TABLE tz (id INT PRIMARY KEY, ts TIMESTAMP, tstz TIMESTAMPTZ, tm TIME, d DATE, d_utc DATE, ep TIMESTAMP)`)
	vs := connect.NewStruct().Field("id", connect.Int32Schema).
		Field("ts", connect.TimestampSchema().Build()).Field("tstz", connect.TimestampSchema().Build()).
		Field("tm", connect.TimeSchema().Build()).Field("d", connect.DateSchema().Build()).
		Field("ep", connect.Int64Schema).Build()
	instant := time.Date(2024, 1, 15, 23, 30, 0, 0, time.UTC)
	v := structOf(vs, "id", int32(1), "ts", instant, "tstz", instant, "tm", time.UnixMilli(23*3600_000+30*60_000).UTC(),
		"d", time.Date(2024, 1, 15, 0, 0, 0, 0, time.UTC), "ep", int64(1705361400_000001))
	task, _ := startTask(t, pgProps(pg, "postgres", "db.timezone", "Asia/Tokyo", "timestamp.fields.list", "ep"), false)
	put(t, task, rec("tz", 0, nil, nil, vs, v))
	wantRows(t, rows(t, pg, "postgres", `SELECT ts::text, (tstz AT TIME ZONE 'UTC')::text, tm::text, d::text, ep::text FROM tz`),
		"2024-01-16 08:30:00|2024-01-15 23:30:00|08:30:00|2024-01-15|2024-01-16 08:30:00.000001")

	// West of UTC, a Date (UTC midnight) is the day before in db.timezone,
	// as with Confluent's sink, unless date.timezone is UTC.
	vs2 := connect.NewStruct().Field("id", connect.Int32Schema).Field("d_utc", connect.DateSchema().Build()).Build()
	for i, dateZone := range []string{"DB_TIMEZONE", "UTC"} {
		task2, _ := startTask(t, pgProps(pg, "postgres", "db.timezone", "America/New_York", "date.timezone", dateZone,
			"table.name.format", "tz"), false)
		put(t, task2, rec("x", 0, nil, nil, vs2, structOf(vs2, "id", int32(2+i), "d_utc", time.Date(2024, 1, 15, 0, 0, 0, 0, time.UTC))))
	}
	wantRows(t, rows(t, pg, "postgres", `SELECT d_utc::text FROM tz WHERE id >= 2 ORDER BY id`), "2024-01-14", "2024-01-15")
}

// TestDebeziumTypesIntoNumbers: into columns that are numbers (a table
// Confluent's sink created), Debezium's dates and times stay numbers.
func TestDebeziumTypesIntoNumbers(t *testing.T) {
	pg := testkit.StartPostgres(t)
	pg.Exec(t, "postgres", `CREATE TABLE dbz_num (id INT, d INT, ts BIGINT, dur BIGINT)`)
	vs := connect.NewStruct().Field("id", connect.Int32Schema).Field("d", named(connect.Int32, dbzDate).Build()).
		Field("ts", named(connect.Int64, dbzMicroTimestamp).Build()).Field("dur", named(connect.Int64, dbzMicroDuration).Build()).Build()
	task, _ := startTask(t, pgProps(pg, "postgres"), false)
	put(t, task, rec("dbz_num", 0, nil, nil, vs, structOf(vs, "id", int32(1), "d", int32(19782), "ts", int64(5), "dur", int64(7))))
	wantRows(t, rows(t, pg, "postgres", `SELECT d, ts, dur FROM dbz_num`), "19782|5|7")
}
