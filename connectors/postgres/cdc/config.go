package cdc

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/fjordhq/fjord/connect"
)

// Config keys: Debezium's PostgreSQL connector names.
const (
	HostnameConfig            = "database.hostname"
	PortConfig                = "database.port"
	UserConfig                = "database.user"
	PasswordConfig            = "database.password"
	DBNameConfig              = "database.dbname"
	SSLModeConfig             = "database.sslmode"
	InitialStatementsConfig   = "database.initial.statements"
	TopicPrefixConfig         = "topic.prefix"
	PluginNameConfig          = "plugin.name"
	SlotNameConfig            = "slot.name"
	SlotDropOnStopConfig      = "slot.drop.on.stop"
	PublicationNameConfig     = "publication.name"
	PublicationAutocreate     = "publication.autocreate.mode"
	SchemaIncludeConfig       = "schema.include.list"
	SchemaExcludeConfig       = "schema.exclude.list"
	TableIncludeConfig        = "table.include.list"
	TableExcludeConfig        = "table.exclude.list"
	ColumnIncludeConfig       = "column.include.list"
	ColumnExcludeConfig       = "column.exclude.list"
	SnapshotModeConfig        = "snapshot.mode"
	SnapshotFetchSizeConfig   = "snapshot.fetch.size"
	HeartbeatIntervalConfig   = "heartbeat.interval.ms"
	HeartbeatActionConfig     = "heartbeat.action.query"
	HeartbeatTopicPrefix      = "topic.heartbeat.prefix"
	TombstonesOnDeleteConfig  = "tombstones.on.delete"
	DecimalModeConfig         = "decimal.handling.mode"
	TimePrecisionModeConfig   = "time.precision.mode"
	BinaryModeConfig          = "binary.handling.mode"
	IntervalModeConfig        = "interval.handling.mode"
	HStoreModeConfig          = "hstore.handling.mode"
	MoneyFractionDigitsConfig = "money.fraction.digits"
	UnavailableValueConfig    = "unavailable.value.placeholder"
	IncludeUnknownConfig      = "include.unknown.datatypes"
	ConvertFailureModeConfig  = "event.converting.failure.handling.mode"
	MaxBatchSizeConfig        = "max.batch.size"
	MaxQueueSizeConfig        = "max.queue.size"
	PollIntervalConfig        = "poll.interval.ms"
	SkippedOperationsConfig   = "skipped.operations"
	ProvideTxMetadataConfig   = "provide.transaction.metadata"
	TransactionTopicConfig    = "topic.transaction"
	SignalCollectionConfig    = "signal.data.collection"
	IncrementalChunkConfig    = "incremental.snapshot.chunk.size"
	StatusUpdateConfig        = "status.update.interval.ms"
	SlotMaxRetriesConfig      = "slot.max.retries"
	SlotRetryDelayConfig      = "slot.retry.delay.ms"

	groupConnection = "Connection"
	groupFilters    = "Filters"
	groupSnapshot   = "Snapshot"
	groupEvents     = "Events"
	groupAdvanced   = "Advanced"

	// DefaultHeartbeatInterval: Debezium's default is off; Fjord beats
	// every 10 s so an idle or filtered database never pins WAL.
	DefaultHeartbeatInterval = 10000
)

// Snapshot modes (Debezium's names).
const (
	SnapshotInitial     = "initial"
	SnapshotInitialOnly = "initial_only"
	SnapshotNoData      = "no_data"
	SnapshotAlways      = "always"
	SnapshotWhenNeeded  = "when_needed"
	snapshotNever       = "never" // Debezium's deprecated name for no_data
)

var connectorKeys = configDef()

func configDef() *connect.ConfigDef {
	d := connect.NewConfigDef()
	order := map[string]int{}
	def := func(k connect.ConfigKey) {
		order[k.Group]++
		k.OrderInGroup = order[k.Group]
		d.Define(k)
	}
	str := func(name, group string, def_ any, imp connect.Importance, doc string, v connect.Validator) {
		def(connect.ConfigKey{Name: name, Type: connect.TypeString, Default: def_, Validator: v, Importance: imp, Group: group, Doc: doc})
	}
	str(HostnameConfig, groupConnection, connect.NoDefault, connect.High, "Resolvable hostname or IP address of the database server.", connect.NonEmptyString)
	def(connect.ConfigKey{Name: PortConfig, Type: connect.TypeInt, Default: int32(5432), Validator: connect.Between(1, 65535), Importance: connect.High, Group: groupConnection, Doc: "Port of the database server."})
	str(UserConfig, groupConnection, connect.NoDefault, connect.High, "Name of the database user to be used when connecting to the database (needs the REPLICATION attribute and SELECT on the captured tables).", connect.NonEmptyString)
	def(connect.ConfigKey{Name: PasswordConfig, Type: connect.TypePassword, Default: nil, Importance: connect.High, Group: groupConnection, Doc: "Password of the database user to be used when connecting to the database."})
	str(DBNameConfig, groupConnection, connect.NoDefault, connect.High, "The name of the database from which the connector should capture changes.", connect.NonEmptyString)
	str(SSLModeConfig, groupConnection, "prefer", connect.Medium, "Whether to use an encrypted connection to the server: disable, allow, prefer, require, verify-ca or verify-full.",
		connect.OneOf("disable", "allow", "prefer", "require", "verify-ca", "verify-full"))
	str(InitialStatementsConfig, groupConnection, "", connect.Low, "Semicolon-separated SQL statements run on every new (non-replication) connection to the database.", nil)
	str(TopicPrefixConfig, groupConnection, connect.NoDefault, connect.High, "Topic prefix that identifies and provides a namespace for the database server; it prefixes every topic name ('<prefix>.<schema>.<table>').", validateTopicPrefix)
	str(PluginNameConfig, groupConnection, "pgoutput", connect.Medium, "The logical decoding plugin on the server. Fjord speaks pgoutput, the plugin built into PostgreSQL 10+ (Debezium's decoderbufs is not supported).",
		func(name string, v any) error {
			if s, _ := v.(string); s != "pgoutput" {
				return fmt.Errorf("only 'pgoutput' is supported (it is built into PostgreSQL 10+, no server extension needed)")
			}
			return nil
		})
	str(SlotNameConfig, groupConnection, "debezium", connect.Medium, "The name of the PostgreSQL logical decoding slot created for streaming changes from this plug-in and database.", validateSlotName)
	def(connect.ConfigKey{Name: SlotDropOnStopConfig, Type: connect.TypeBoolean, Default: false, Importance: connect.Medium, Group: groupConnection, Doc: "Whether to drop the logical replication slot when the connector stops gracefully (testing only: the changes in between are lost)."})
	str(PublicationNameConfig, groupConnection, "dbz_publication", connect.Medium, "The name of the PostgreSQL publication the pgoutput plugin streams.", connect.NonEmptyString)
	str(PublicationAutocreate, groupConnection, "all_tables", connect.Medium, "all_tables: create the publication FOR ALL TABLES if it does not exist; filtered: create (or update) it for the tables of the include/exclude lists; no_tables: create it without tables (you add them); disabled: the publication must exist.",
		connect.OneOf("all_tables", "filtered", "disabled", "no_tables"))
	def(connect.ConfigKey{Name: StatusUpdateConfig, Type: connect.TypeInt, Default: int32(10000), Validator: connect.AtLeast(1), Importance: connect.Low, Group: groupConnection, Doc: "Frequency (ms) of the replication connection's status updates to the server."})
	def(connect.ConfigKey{Name: SlotMaxRetriesConfig, Type: connect.TypeInt, Default: int32(6), Validator: connect.AtLeast(0), Importance: connect.Low, Group: groupConnection, Doc: "How many times to retry connecting to a replication slot in use by another process."})
	def(connect.ConfigKey{Name: SlotRetryDelayConfig, Type: connect.TypeLong, Default: int64(10000), Validator: connect.AtLeast(0), Importance: connect.Low, Group: groupConnection, Doc: "Milliseconds between slot connection retries."})

	list := func(name, doc string) {
		def(connect.ConfigKey{Name: name, Type: connect.TypeList, Default: nil, Validator: validateRegexList, Importance: connect.Medium, Group: groupFilters, Doc: doc})
	}
	list(SchemaIncludeConfig, "Regular expressions matching the schemas to capture (whole name); the others are excluded. Mutually exclusive with schema.exclude.list.")
	list(SchemaExcludeConfig, "Regular expressions matching schemas not to capture.")
	list(TableIncludeConfig, "Regular expressions matching '<schema>.<table>' of the tables to capture; the others are excluded. Mutually exclusive with table.exclude.list.")
	list(TableExcludeConfig, "Regular expressions matching '<schema>.<table>' of tables not to capture.")
	list(ColumnIncludeConfig, "Regular expressions matching '<schema>.<table>.<column>' of the columns to include in change events. Mutually exclusive with column.exclude.list.")
	list(ColumnExcludeConfig, "Regular expressions matching '<schema>.<table>.<column>' of columns to leave out of change events.")

	str(SnapshotModeConfig, groupSnapshot, SnapshotInitial, connect.Low, "When to snapshot: initial (when no offsets exist), initial_only (snapshot, then stop), no_data (never; stream from the slot), always (at every start), when_needed (when no offsets exist or the slot no longer has them).",
		connect.OneOf(SnapshotInitial, SnapshotInitialOnly, SnapshotNoData, snapshotNever, SnapshotAlways, SnapshotWhenNeeded))
	def(connect.ConfigKey{Name: SnapshotFetchSizeConfig, Type: connect.TypeInt, Default: int32(10240), Validator: connect.AtLeast(1), Importance: connect.Medium, Group: groupSnapshot, Doc: "Debezium's JDBC fetch size, accepted for compatibility: Fjord streams each table with COPY ... TO STDOUT, its memory bounded by max.queue.size whatever the table's size."})
	def(connect.ConfigKey{Name: IncrementalChunkConfig, Type: connect.TypeInt, Default: int32(1024), Validator: connect.AtLeast(1), Importance: connect.Medium, Group: groupSnapshot, Doc: "Rows per chunk of an incremental (ad-hoc) snapshot."})
	str(SignalCollectionConfig, groupSnapshot, "", connect.Medium, "The signal table '<schema>.<table>' (columns id, type, data) the connector watches for signals such as execute-snapshot.", nil)

	def(connect.ConfigKey{Name: HeartbeatIntervalConfig, Type: connect.TypeInt, Default: int32(DefaultHeartbeatInterval), Validator: connect.AtLeast(0), Importance: connect.Medium, Group: groupEvents, Doc: "Milliseconds between heartbeat records on '<topic.heartbeat.prefix>.<topic.prefix>' (0 disables them). Heartbeats let the slot advance while the captured tables are idle, so WAL does not pile up. Fjord's default is 10000 (Debezium's is 0)."})
	str(HeartbeatActionConfig, groupEvents, "", connect.Medium, "A statement executed with every heartbeat, e.g. an UPDATE of a heartbeat table, so the slot advances when the database itself is idle.", nil)
	str(HeartbeatTopicPrefix, groupEvents, "__debezium-heartbeat", connect.Low, "Prefix of the heartbeat topic's name.", connect.NonEmptyString)
	def(connect.ConfigKey{Name: TombstonesOnDeleteConfig, Type: connect.TypeBoolean, Default: true, Importance: connect.Medium, Group: groupEvents, Doc: "Whether a delete event is followed by a tombstone (the key with a null value) so log compaction can remove the row."})
	str(SkippedOperationsConfig, groupEvents, "t", connect.Low, "Comma-separated operations not to emit: c (insert), u (update), d (delete), t (truncate), or none.", validateSkippedOps)
	def(connect.ConfigKey{Name: ProvideTxMetadataConfig, Type: connect.TypeBoolean, Default: false, Importance: connect.Low, Group: groupEvents, Doc: "Whether to emit transaction BEGIN/END events on '<topic.prefix>.<topic.transaction>' and a transaction block in every change event."})
	str(TransactionTopicConfig, groupEvents, "transaction", connect.Low, "Suffix of the transaction metadata topic.", connect.NonEmptyString)
	str(DecimalModeConfig, groupEvents, "precise", connect.Medium, "How numeric/decimal columns are represented: precise (Connect Decimal), double, or string.", connect.OneOf("precise", "double", "string"))
	str(TimePrecisionModeConfig, groupEvents, "adaptive", connect.Medium, "How time and timestamp columns are represented: adaptive (precision of the column), adaptive_time_microseconds, connect (Kafka Connect's logical types, millisecond precision), microseconds, nanoseconds or isostring.",
		connect.OneOf("adaptive", "adaptive_time_microseconds", "connect", "microseconds", "nanoseconds", "isostring"))
	str(BinaryModeConfig, groupEvents, "bytes", connect.Low, "How bytea columns are represented: bytes, base64, base64-url-safe or hex.", connect.OneOf("bytes", "base64", "base64-url-safe", "hex"))
	str(IntervalModeConfig, groupEvents, "numeric", connect.Low, "How interval columns are represented: numeric (microseconds) or string (ISO 8601 duration).", connect.OneOf("numeric", "string"))
	str(HStoreModeConfig, groupEvents, "json", connect.Low, "How hstore columns are represented: json or map.", connect.OneOf("json", "map"))
	def(connect.ConfigKey{Name: MoneyFractionDigitsConfig, Type: connect.TypeShort, Default: int16(2), Validator: connect.Between(0, 38), Importance: connect.Low, Group: groupEvents, Doc: "Fraction digits of money values represented as decimals."})
	def(connect.ConfigKey{Name: IncludeUnknownConfig, Type: connect.TypeBoolean, Default: false, Importance: connect.Low, Group: groupEvents, Doc: "Whether columns of types the connector does not know are emitted (as their text) instead of left out."})
	str(ConvertFailureModeConfig, groupEvents, "warn", connect.Low, "What to do with a value that cannot be represented (NaN in a precise decimal, ...): warn (log it and emit null), skip (the same, quietly) or fail.", connect.OneOf("warn", "skip", "fail"))
	str(UnavailableValueConfig, groupEvents, "__debezium_unavailable_value", connect.Low, "The value given to unchanged TOASTed columns the server did not send.", nil)

	def(connect.ConfigKey{Name: MaxBatchSizeConfig, Type: connect.TypeInt, Default: int32(2048), Validator: connect.AtLeast(1), Importance: connect.Medium, Group: groupAdvanced, Doc: "Maximum number of records returned by one poll."})
	def(connect.ConfigKey{Name: MaxQueueSizeConfig, Type: connect.TypeInt, Default: int32(8192), Validator: connect.AtLeast(1), Importance: connect.Medium, Group: groupAdvanced, Doc: "Maximum number of records queued between the database reader and the runtime (back-pressure beyond it)."})
	def(connect.ConfigKey{Name: PollIntervalConfig, Type: connect.TypeLong, Default: int64(500), Validator: connect.AtLeast(1), Importance: connect.Medium, Group: groupAdvanced, Doc: "Milliseconds a poll waits for new records before returning an empty batch."})
	return d
}

func validateTopicPrefix(name string, v any) error {
	s, _ := v.(string)
	if strings.TrimSpace(s) == "" {
		return fmt.Errorf("must not be empty")
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return fmt.Errorf("the topic prefix may only contain ASCII letters, digits, '.', '_' and '-' (it becomes part of topic names)")
		}
	}
	return nil
}

var slotNamePattern = regexp.MustCompile(`^[a-z0-9_]{1,63}$`)

func validateSlotName(name string, v any) error {
	if s, _ := v.(string); !slotNamePattern.MatchString(s) {
		return fmt.Errorf("slot names may contain only lower-case letters, digits and underscores, at most 63 characters")
	}
	return nil
}

func validateRegexList(name string, v any) error {
	l, _ := v.([]string)
	for _, p := range l {
		if _, err := regexp.Compile("^(?:" + p + ")$"); err != nil {
			return fmt.Errorf("'%s' is not a valid regular expression: %v", p, err)
		}
	}
	return nil
}

func validateSkippedOps(name string, v any) error {
	s, _ := v.(string)
	for _, op := range strings.Split(s, ",") {
		switch strings.TrimSpace(op) {
		case "c", "u", "d", "t", "none", "":
		default:
			return fmt.Errorf("'%s' is not an operation: use c, u, d, t or none", strings.TrimSpace(op))
		}
	}
	return nil
}

// settings is a parsed connector configuration.
type settings struct {
	host, user, password, db, sslMode string
	port                              int
	initialStatements                 []string
	prefix                            string
	slot, publication, pubMode        string
	dropSlotOnStop                    bool
	filters                           *filters
	snapshotMode                      string
	fetchSize, chunkSize              int
	signalTable                       string
	heartbeat                         time.Duration
	heartbeatAction, heartbeatTopic   string
	tombstones                        bool
	skipped                           map[string]bool
	txMetadata                        bool
	txTopic                           string
	types                             TypeOptions
	maxBatch, maxQueue                int
	pollInterval, statusInterval      time.Duration
	slotRetries                       int
	slotRetryDelay                    time.Duration
}

func parseSettings(props map[string]string) (*settings, error) {
	c, err := connectorKeys.Parse(props)
	if err != nil {
		return nil, err
	}
	if err := crossCheck(props); len(err) > 0 {
		var msgs []string
		for k, m := range err {
			msgs = append(msgs, k+": "+m)
		}
		return nil, fmt.Errorf("invalid configuration: %s", strings.Join(msgs, "; "))
	}
	s := &settings{
		host: c.String(HostnameConfig), port: int(c.Int(PortConfig)), user: c.String(UserConfig),
		password: c.Password(PasswordConfig), db: c.String(DBNameConfig), sslMode: c.String(SSLModeConfig),
		prefix: c.String(TopicPrefixConfig), slot: c.String(SlotNameConfig), publication: c.String(PublicationNameConfig),
		pubMode: c.String(PublicationAutocreate), dropSlotOnStop: c.Bool(SlotDropOnStopConfig),
		snapshotMode: c.String(SnapshotModeConfig), fetchSize: int(c.Int(SnapshotFetchSizeConfig)),
		chunkSize: int(c.Int(IncrementalChunkConfig)), signalTable: strings.TrimSpace(c.String(SignalCollectionConfig)),
		heartbeat:       time.Duration(c.Int(HeartbeatIntervalConfig)) * time.Millisecond,
		heartbeatAction: strings.TrimSpace(c.String(HeartbeatActionConfig)),
		tombstones:      c.Bool(TombstonesOnDeleteConfig), txMetadata: c.Bool(ProvideTxMetadataConfig),
		maxBatch: int(c.Int(MaxBatchSizeConfig)), maxQueue: int(c.Int(MaxQueueSizeConfig)),
		pollInterval:   time.Duration(c.Long(PollIntervalConfig)) * time.Millisecond,
		statusInterval: time.Duration(c.Int(StatusUpdateConfig)) * time.Millisecond,
		slotRetries:    int(c.Int(SlotMaxRetriesConfig)),
		slotRetryDelay: time.Duration(c.Long(SlotRetryDelayConfig)) * time.Millisecond,
		types: TypeOptions{
			DecimalMode: c.String(DecimalModeConfig), TimePrecisionMode: c.String(TimePrecisionModeConfig),
			BinaryMode: c.String(BinaryModeConfig), IntervalMode: c.String(IntervalModeConfig),
			HStoreMode: c.String(HStoreModeConfig), MoneyFractionDigits: int(c.Short(MoneyFractionDigitsConfig)),
			UnavailablePlaceholder:  c.String(UnavailableValueConfig),
			MoneyFractionDigitsSet:  props[MoneyFractionDigitsConfig] != "",
			IncludeUnknownDatatypes: c.Bool(IncludeUnknownConfig),
			FailureMode:             c.String(ConvertFailureModeConfig),
		},
	}
	s.txTopic = s.prefix + "." + c.String(TransactionTopicConfig)
	s.heartbeatTopic = c.String(HeartbeatTopicPrefix) + "." + s.prefix
	if s.snapshotMode == snapshotNever {
		s.snapshotMode = SnapshotNoData
	}
	for _, st := range strings.Split(c.String(InitialStatementsConfig), ";") {
		if st = strings.TrimSpace(st); st != "" {
			s.initialStatements = append(s.initialStatements, st)
		}
	}
	s.skipped = map[string]bool{}
	for _, op := range strings.Split(c.String(SkippedOperationsConfig), ",") {
		if op = strings.TrimSpace(op); op != "" && op != "none" {
			s.skipped[op] = true
		}
	}
	s.filters, err = newFilters(c.List(SchemaIncludeConfig), c.List(SchemaExcludeConfig), c.List(TableIncludeConfig),
		c.List(TableExcludeConfig), c.List(ColumnIncludeConfig), c.List(ColumnExcludeConfig))
	if err != nil {
		return nil, err
	}
	if s.signalTable != "" && strings.Count(s.signalTable, ".") != 1 {
		return nil, fmt.Errorf("%s must name a table as '<schema>.<table>', got %q", SignalCollectionConfig, s.signalTable)
	}
	return s, nil
}

// crossCheck finds errors that involve several keys (Debezium rejects
// both lists of a pair being set), keyed by the config they belong to.
func crossCheck(props map[string]string) map[string]string {
	errs := map[string]string{}
	pair := func(inc, exc string) {
		if strings.TrimSpace(props[inc]) != "" && strings.TrimSpace(props[exc]) != "" {
			errs[exc] = fmt.Sprintf("\"%s\" is already specified; %s and %s are mutually exclusive", inc, inc, exc)
		}
	}
	pair(SchemaIncludeConfig, SchemaExcludeConfig)
	pair(TableIncludeConfig, TableExcludeConfig)
	pair(ColumnIncludeConfig, ColumnExcludeConfig)
	return errs
}
