package sink

import (
	"fmt"
	"strings"

	"github.com/fjordhq/fjord/connect"
)

// Config keys: Confluent's JdbcSinkConfig names, types and defaults, so a
// JdbcSinkConnector config pasted from Kafka Connect means the same here.
const (
	ConnectionURLConfig          = "connection.url"
	ConnectionUserConfig         = "connection.user"
	ConnectionPasswordConfig     = "connection.password"
	CredentialsProviderConfig    = "jdbc.credentials.provider.class"
	DialectNameConfig            = "dialect.name"
	ConnectionAttemptsConfig     = "connection.attempts"
	ConnectionBackoffConfig      = "connection.backoff.ms"
	InsertModeConfig             = "insert.mode"
	BatchSizeConfig              = "batch.size"
	DeleteEnabledConfig          = "delete.enabled"
	TableTypesConfig             = "table.types"
	ReplaceNullWithDefaultConfig = "replace.null.with.default"
	TableNameFormatConfig        = "table.name.format"
	PKModeConfig                 = "pk.mode"
	PKFieldsConfig               = "pk.fields"
	FieldsWhitelistConfig        = "fields.whitelist"
	DBTimezoneConfig             = "db.timezone"
	DateTimezoneConfig           = "date.timezone"
	TimestampFieldsListConfig    = "timestamp.fields.list"
	TimestampPrecisionConfig     = "timestamp.precision.mode"
	DateCalendarSystemConfig     = "date.calendar.system"
	StringValueColumnConfig      = "string.output.value.column.name"
	AutoCreateConfig             = "auto.create"
	AutoEvolveConfig             = "auto.evolve"
	QuoteIdentifiersConfig       = "quote.sql.identifiers"
	MSSQLHoldlockConfig          = "mssql.use.merge.holdlock"
	MaxRetriesConfig             = "max.retries"
	RetryBackoffConfig           = "retry.backoff.ms"
	TrimSensitiveLogConfig       = "trim.sensitive.log"
)

// DefaultCredentialsProvider is the only jdbc.credentials.provider.class
// Fjord accepts: user and password from the config or the URL.
const DefaultCredentialsProvider = "io.confluent.connect.jdbc.util.DefaultJdbcCredentialsProvider"

// PostgresDialect is the one dialect.name the sink speaks.
const PostgresDialect = "PostgreSqlDatabaseDialect"

// Insert and primary key modes.
const (
	InsertModeInsert = "insert"
	InsertModeUpsert = "upsert"
	InsertModeUpdate = "update"

	PKModeNone        = "none"
	PKModeKafka       = "kafka"
	PKModeRecordKey   = "record_key"
	PKModeRecordValue = "record_value"
)

// defaultKafkaPKNames are the pk.mode=kafka columns when pk.fields is empty.
var defaultKafkaPKNames = []string{"__connect_topic", "__connect_partition", "__connect_offset"}

const (
	groupConnection  = "Connection"
	groupWrites      = "Writes"
	groupDataMapping = "Data Mapping"
	groupDDL         = "DDL Support"
	groupDML         = "DML Support"
	groupRetries     = "Retries"
)

// ConfigDef returns the sink's keys, in Confluent's groups and order.
func ConfigDef() *connect.ConfigDef {
	d := connect.NewConfigDef()
	def := func(group string, order int, k connect.ConfigKey) {
		k.Group, k.OrderInGroup = group, order
		d.Define(k)
	}
	enum := func(values ...string) (connect.Validator, func(map[string]any) []any) {
		return enumValidator(values...), func(map[string]any) []any {
			out := make([]any, len(values))
			for i, v := range values {
				out[i] = v
			}
			return out
		}
	}

	def(groupConnection, 1, connect.ConfigKey{Name: ConnectionURLConfig, Type: connect.TypeString, Default: connect.NoDefault,
		Validator: validateURL, Importance: connect.High, Width: connect.WidthLong, DisplayName: "JDBC URL",
		Doc: "JDBC connection URL of the PostgreSQL database: jdbc:postgresql://host[:port]/database[?user=...&password=...&sslmode=...&currentSchema=...]; " +
			"postgres:// and postgresql:// URLs (libpq's) are accepted too."})
	def(groupConnection, 2, connect.ConfigKey{Name: ConnectionUserConfig, Type: connect.TypeString, Default: nil,
		Importance: connect.High, Width: connect.WidthMedium, DisplayName: "JDBC User", Doc: "JDBC connection user."})
	def(groupConnection, 3, connect.ConfigKey{Name: ConnectionPasswordConfig, Type: connect.TypePassword, Default: nil,
		Importance: connect.High, Width: connect.WidthMedium, DisplayName: "JDBC Password", Doc: "JDBC connection password."})
	def(groupConnection, 4, connect.ConfigKey{Name: CredentialsProviderConfig, Type: connect.TypeClass, Default: DefaultCredentialsProvider,
		Validator: func(_ string, v any) error {
			if s, _ := v.(string); s != DefaultCredentialsProvider {
				return fmt.Errorf("Fjord supports only %s (user and password from the config or the URL)", DefaultCredentialsProvider)
			}
			return nil
		},
		Importance: connect.Low, Width: connect.WidthLong, DisplayName: "JDBC Credentials Provider Class",
		Doc: "Credentials provider to use for authentication to the database. Only the default, which takes connection.user and connection.password (or the URL's), is supported."})
	def(groupConnection, 5, connect.ConfigKey{Name: DialectNameConfig, Type: connect.TypeString, Default: "",
		Validator: func(_ string, v any) error {
			if s, _ := v.(string); s != "" && s != PostgresDialect {
				return fmt.Errorf("this sink writes to PostgreSQL only: leave it empty or set %s", PostgresDialect)
			}
			return nil
		},
		Recommended: func(map[string]any) []any { return []any{PostgresDialect} },
		Importance:  connect.Low, Width: connect.WidthLong, DisplayName: "Database Dialect",
		Doc: "The name of the database dialect. Empty (the default) or PostgreSqlDatabaseDialect: this sink writes to PostgreSQL."})
	def(groupConnection, 6, connect.ConfigKey{Name: ConnectionAttemptsConfig, Type: connect.TypeInt, Default: int32(3), Validator: connect.AtLeast(1),
		Importance: connect.Low, Width: connect.WidthShort, DisplayName: "JDBC connection attempts",
		Doc: "Maximum number of attempts to retrieve a valid JDBC connection. Must be a positive integer."})
	def(groupConnection, 7, connect.ConfigKey{Name: ConnectionBackoffConfig, Type: connect.TypeLong, Default: int64(10000),
		Importance: connect.Low, Width: connect.WidthShort, DisplayName: "JDBC connection backoff in milliseconds",
		Doc: "Backoff time in milliseconds between connection attempts."})

	v, _ := enum(InsertModeInsert, InsertModeUpsert, InsertModeUpdate)
	def(groupWrites, 1, connect.ConfigKey{Name: InsertModeConfig, Type: connect.TypeString, Default: InsertModeInsert, Validator: v,
		Importance: connect.High, Width: connect.WidthMedium, DisplayName: "Insert Mode",
		Doc: "The insertion mode to use. insert: plain INSERT (COPY); upsert: INSERT ... ON CONFLICT (primary key) DO UPDATE; update: UPDATE by primary key."})
	def(groupWrites, 2, connect.ConfigKey{Name: BatchSizeConfig, Type: connect.TypeInt, Default: int32(3000), Validator: connect.AtLeast(0),
		Importance: connect.Medium, Width: connect.WidthShort, DisplayName: "Batch Size",
		Doc: "Specifies how many records to attempt to batch together for insertion into the destination table, when possible. " +
			"Fjord writes each put in one transaction, as statements of at most this many rows (0: one statement per table and schema)."})
	def(groupWrites, 3, connect.ConfigKey{Name: DeleteEnabledConfig, Type: connect.TypeBoolean, Default: false,
		Importance: connect.Medium, Width: connect.WidthShort, DisplayName: "Enable deletes",
		Doc: "Whether to treat null record values as deletes. Requires pk.mode to be record_key."})
	tv, tr := enum("TABLE", "PARTITIONED TABLE", "VIEW")
	def(groupWrites, 4, connect.ConfigKey{Name: TableTypesConfig, Type: connect.TypeList, Default: []string{"TABLE"},
		Validator: func(name string, v any) error {
			items, _ := v.([]string)
			for _, it := range items {
				if err := tv(name, strings.ToUpper(it)); err != nil {
					return fmt.Errorf("%q is not a table type: use TABLE, PARTITIONED TABLE or VIEW", it)
				}
			}
			if len(items) == 0 {
				return fmt.Errorf("at least one of TABLE, PARTITIONED TABLE or VIEW")
			}
			return nil
		},
		Recommended: tr, Importance: connect.Low, Width: connect.WidthMedium, DisplayName: "Table Types",
		Doc: "The comma-separated types of database tables to which the sink connector can write: TABLE (the default), PARTITIONED TABLE and VIEW."})
	def(groupWrites, 5, connect.ConfigKey{Name: ReplaceNullWithDefaultConfig, Type: connect.TypeBoolean, Default: true,
		Importance: connect.Low, Width: connect.WidthMedium, DisplayName: "Replace null value with default value",
		Doc: "Whether to replace null value with default value"})

	def(groupDataMapping, 1, connect.ConfigKey{Name: TableNameFormatConfig, Type: connect.TypeString, Default: "${topic}", Validator: connect.NonEmptyString,
		Importance: connect.Medium, Width: connect.WidthLong, DisplayName: "Table Name Format",
		Doc: "A format string for the destination table name, which may contain '${topic}' as a placeholder for the originating topic name. " +
			"For example, kafka_${topic} for the topic 'orders' will map to the table name 'kafka_orders'. A dot separates a schema name: 'staging.${topic}'."})
	pv, pr := enum(PKModeNone, PKModeKafka, PKModeRecordKey, PKModeRecordValue)
	def(groupDataMapping, 2, connect.ConfigKey{Name: PKModeConfig, Type: connect.TypeString, Default: PKModeNone, Validator: pv, Recommended: pr,
		Importance: connect.High, Width: connect.WidthMedium, DisplayName: "Primary Key Mode",
		Doc: "The primary key mode: none (no keys), kafka (topic, partition and offset), record_key (fields of the record key, a primitive or a struct), record_value (fields of the record value, a struct)."})
	def(groupDataMapping, 3, connect.ConfigKey{Name: PKFieldsConfig, Type: connect.TypeList, Default: []string{},
		Importance: connect.Medium, Width: connect.WidthLong, DisplayName: "Primary Key Fields",
		Doc: "List of comma-separated primary key field names. kafka: exactly three names, or empty for __connect_topic,__connect_partition,__connect_offset; " +
			"record_key: empty for all fields of a struct key, one name for a primitive key; record_value: empty for all fields of the value."})
	def(groupDataMapping, 4, connect.ConfigKey{Name: FieldsWhitelistConfig, Type: connect.TypeList, Default: []string{},
		Importance: connect.Medium, Width: connect.WidthLong, DisplayName: "Fields Whitelist",
		Doc: "List of comma-separated record value field names. If empty, all fields from the record value are utilized, otherwise used to filter to the desired fields. " +
			"pk.fields is applied independently."})
	def(groupDataMapping, 5, connect.ConfigKey{Name: DBTimezoneConfig, Type: connect.TypeString, Default: "UTC", Validator: validateZone,
		Importance: connect.Medium, Width: connect.WidthMedium, DisplayName: "DB Time Zone",
		Doc: "Name of the time zone used when inserting Connect Time and Timestamp values (and Date values when date.timezone is DB_TIMEZONE). Defaults to UTC."})
	dv, dr := enum("DB_TIMEZONE", "UTC")
	def(groupDataMapping, 6, connect.ConfigKey{Name: DateTimezoneConfig, Type: connect.TypeString, Default: "DB_TIMEZONE", Validator: dv, Recommended: dr,
		Importance: connect.Low, Width: connect.WidthMedium, DisplayName: "Time Zone used for Date",
		Doc: "The time zone used when inserting Connect Date values: DB_TIMEZONE (db.timezone's) or UTC (recommended)."})
	def(groupDataMapping, 7, connect.ConfigKey{Name: TimestampFieldsListConfig, Type: connect.TypeList, Default: []string{},
		Importance: connect.Medium, Width: connect.WidthMedium, DisplayName: "Timestamp Fields Whitelist",
		Doc: "List of comma-separated record value field names (INT64 or STRING epoch values) written as timestamps, at timestamp.precision.mode's precision."})
	sv, sr := enum("microseconds", "nanoseconds")
	def(groupDataMapping, 8, connect.ConfigKey{Name: TimestampPrecisionConfig, Type: connect.TypeString, Default: "microseconds", Validator: sv, Recommended: sr,
		Importance: connect.Low, Width: connect.WidthMedium, DisplayName: "Sink Timestamp Precision mode",
		Doc: "The unit of timestamp.fields.list values: microseconds or nanoseconds since the epoch."})
	def(groupDataMapping, 9, connect.ConfigKey{Name: DateCalendarSystemConfig, Type: connect.TypeString, Default: "LEGACY",
		Validator: connect.OneOf("LEGACY", "PROLEPTIC_GREGORIAN"), Importance: connect.Low, Width: connect.WidthMedium, DisplayName: "Date Calendar System",
		Doc: "LEGACY or PROLEPTIC_GREGORIAN. Fjord always uses the proleptic Gregorian calendar (as PostgreSQL does); the setting is accepted for compatibility."})
	def(groupDataMapping, 10, connect.ConfigKey{Name: StringValueColumnConfig, Type: connect.TypeString, Default: "record_value", Validator: connect.NonEmptyString,
		Importance: connect.Low, Width: connect.WidthMedium, DisplayName: "String Value Column Name",
		Doc: "When the record value has the STRING schema, the column the value is written to."})

	def(groupDDL, 1, connect.ConfigKey{Name: AutoCreateConfig, Type: connect.TypeBoolean, Default: false,
		Importance: connect.Medium, Width: connect.WidthShort, DisplayName: "Auto-Create",
		Doc: "Whether to automatically create the destination table based on record schema if it is found to be missing by issuing CREATE."})
	def(groupDDL, 2, connect.ConfigKey{Name: AutoEvolveConfig, Type: connect.TypeBoolean, Default: false,
		Importance: connect.Medium, Width: connect.WidthShort, DisplayName: "Auto-Evolve",
		Doc: "Whether to automatically add columns in the table schema when found to be missing relative to the record schema by issuing ALTER."})
	qv, qr := enum("always", "never")
	def(groupDDL, 3, connect.ConfigKey{Name: QuoteIdentifiersConfig, Type: connect.TypeString, Default: "always",
		Validator: func(name string, v any) error { s, _ := v.(string); return qv(name, strings.ToLower(s)) }, Recommended: qr,
		Importance: connect.Medium, Width: connect.WidthMedium, DisplayName: "Quote Identifiers",
		Doc: "When to quote table names, column names and other identifiers in SQL statements: always (names keep their case) or never (PostgreSQL folds them to lower case)."})
	def(groupDML, 1, connect.ConfigKey{Name: MSSQLHoldlockConfig, Type: connect.TypeBoolean, Default: true,
		Importance: connect.Low, Width: connect.WidthMedium, DisplayName: "SQL Server - Use HOLDLOCK in MERGE",
		Doc: "SQL Server only; accepted and ignored."})
	def(groupRetries, 1, connect.ConfigKey{Name: MaxRetriesConfig, Type: connect.TypeInt, Default: int32(10), Validator: connect.AtLeast(0),
		Importance: connect.Medium, Width: connect.WidthShort, DisplayName: "Maximum Retries",
		Doc: "The maximum number of times to retry on errors before failing the task."})
	def(groupRetries, 2, connect.ConfigKey{Name: RetryBackoffConfig, Type: connect.TypeInt, Default: int32(3000), Validator: connect.AtLeast(0),
		Importance: connect.Medium, Width: connect.WidthShort, DisplayName: "Retry Backoff (millis)",
		Doc: "The time in milliseconds to wait following an error before a retry attempt is made."})
	d.Define(connect.ConfigKey{Name: TrimSensitiveLogConfig, Type: connect.TypeBoolean, Default: false, Importance: connect.Low, Internal: true})
	return d
}

// enumValidator is Confluent's EnumValidator: a value in lower or upper
// case, with its message.
func enumValidator(values ...string) connect.Validator {
	return func(name string, v any) error {
		s, _ := v.(string)
		for _, a := range values {
			if s == strings.ToLower(a) || s == strings.ToUpper(a) {
				return nil
			}
		}
		return fmt.Errorf("Invalid enumerator (one of %s)", strings.Join(values, ", "))
	}
}

func validateURL(_ string, v any) error {
	s, _ := v.(string)
	if s == "" {
		return fmt.Errorf("String must be non-empty")
	}
	_, err := parseURL(s, nil)
	return err
}

func validateZone(_ string, v any) error {
	s, _ := v.(string)
	if _, err := loadZone(s); err != nil {
		return fmt.Errorf("Invalid time zone: %v", err)
	}
	return nil
}
