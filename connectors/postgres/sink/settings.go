package sink

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fjordhq/fjord/connect"
)

// settings is a parsed and cross-checked sink config.
type settings struct {
	name               string
	conn               *pgx.ConnConfig
	attempts           int
	connBackoff        time.Duration
	insertMode         string
	batchSize          int
	deleteEnabled      bool
	tableKinds         []byte // pg_class.relkind values the sink may write to
	replaceNull        bool
	tableFormat        string
	pkMode             string
	pkFields           []string
	whitelist          map[string]bool
	zone               *time.Location
	dateZone           *time.Location
	timestampFields    map[string]bool
	timestampNanos     bool
	stringValueColumn  string
	autoCreate         bool
	autoEvolve         bool
	quote              bool
	maxRetries         int
	retryBackoff       time.Duration
	trimSensitiveLogs  bool
	connectionURLShown string // for messages: the URL without secrets
	socketTimeout      time.Duration
}

// parseSettings parses props; the error lists every bad key.
func parseSettings(props map[string]string) (*settings, error) {
	cfg, err := ConfigDef().Parse(props)
	if err != nil {
		return nil, err
	}
	if cross := crossProblems(cfg); len(cross) > 0 {
		problems := make([]connect.ConfigProblem, len(cross))
		for i, p := range cross {
			problems[i] = p.ConfigProblem
		}
		return nil, &connect.ConfigError{Problems: problems}
	}
	s := &settings{
		name:              props["name"],
		attempts:          int(cfg.Int(ConnectionAttemptsConfig)),
		connBackoff:       time.Duration(cfg.Long(ConnectionBackoffConfig)) * time.Millisecond,
		insertMode:        strings.ToLower(cfg.String(InsertModeConfig)),
		batchSize:         int(cfg.Int(BatchSizeConfig)),
		deleteEnabled:     cfg.Bool(DeleteEnabledConfig),
		replaceNull:       cfg.Bool(ReplaceNullWithDefaultConfig),
		tableFormat:       strings.TrimSpace(cfg.String(TableNameFormatConfig)),
		pkMode:            strings.ToLower(cfg.String(PKModeConfig)),
		pkFields:          cfg.List(PKFieldsConfig),
		whitelist:         setOf(cfg.List(FieldsWhitelistConfig)),
		timestampFields:   setOf(cfg.List(TimestampFieldsListConfig)),
		timestampNanos:    strings.EqualFold(cfg.String(TimestampPrecisionConfig), "nanoseconds"),
		stringValueColumn: cfg.String(StringValueColumnConfig),
		autoCreate:        cfg.Bool(AutoCreateConfig),
		autoEvolve:        cfg.Bool(AutoEvolveConfig),
		quote:             strings.EqualFold(cfg.String(QuoteIdentifiersConfig), "always"),
		maxRetries:        int(cfg.Int(MaxRetriesConfig)),
		retryBackoff:      time.Duration(cfg.Int(RetryBackoffConfig)) * time.Millisecond,
		trimSensitiveLogs: cfg.Bool(TrimSensitiveLogConfig),
	}
	for _, t := range cfg.List(TableTypesConfig) {
		switch strings.ToUpper(t) {
		case "TABLE":
			s.tableKinds = append(s.tableKinds, 'r')
		case "PARTITIONED TABLE":
			s.tableKinds = append(s.tableKinds, 'p')
		case "VIEW":
			s.tableKinds = append(s.tableKinds, 'v')
		}
	}
	s.zone, _ = loadZone(cfg.String(DBTimezoneConfig))
	s.dateZone = s.zone
	if strings.EqualFold(cfg.String(DateTimezoneConfig), "UTC") {
		s.dateZone = time.UTC
	}
	// Other connection.* keys are driver properties, as Confluent passes
	// them to pgjdbc (connection.sslmode, connection.socketTimeout, ...).
	def := ConfigDef()
	driver := map[string]string{}
	for k, v := range props {
		if rest, ok := strings.CutPrefix(k, "connection."); ok && def.Key(k) == nil {
			driver[rest] = v
		}
	}
	u, err := parseURL(cfg.String(ConnectionURLConfig), driver)
	if err != nil {
		return nil, &connect.ConfigError{Problems: []connect.ConfigProblem{{Key: ConnectionURLConfig, Message: err.Error()}}}
	}
	s.connectionURLShown = u.shown
	s.socketTimeout = u.socketTimeout
	user := cfg.String(ConnectionUserConfig)
	var password *string
	if !cfg.IsNull(ConnectionPasswordConfig) {
		p := cfg.Password(ConnectionPasswordConfig)
		password = &p
	}
	if s.conn, err = u.connConfig(user, password); err != nil {
		return nil, fmt.Errorf("%s: %w", ConnectionURLConfig, err)
	}
	return s, nil
}

// crossProblem is a problem of several keys together, reported on key.
type crossProblem struct {
	connect.ConfigProblem
	involves []string // every key the check reads
}

// crossProblems are the checks across keys: Confluent's (delete.enabled
// needs pk.mode=record_key) and those Confluent only finds when the first
// record arrives (an upsert or update needs keys; pk.mode=kafka takes three
// names).
func crossProblems(cfg *connect.Config) []crossProblem {
	var out []crossProblem
	add := func(key, msg string, involves ...string) {
		out = append(out, crossProblem{connect.ConfigProblem{Key: key, Message: msg}, involves})
	}
	pkMode := strings.ToLower(cfg.String(PKModeConfig))
	insertMode := strings.ToLower(cfg.String(InsertModeConfig))
	if cfg.Bool(DeleteEnabledConfig) && pkMode != PKModeRecordKey {
		msg := "Deletes are only supported for pk.mode record_key"
		add(PKModeConfig, msg, PKModeConfig, DeleteEnabledConfig)
		add(DeleteEnabledConfig, msg, PKModeConfig, DeleteEnabledConfig)
	}
	if pkMode == PKModeNone && insertMode != InsertModeInsert {
		add(InsertModeConfig, fmt.Sprintf("insert.mode %s needs the rows' primary key: set pk.mode to record_key, record_value or kafka", insertMode),
			InsertModeConfig, PKModeConfig)
	}
	if n := len(cfg.List(PKFieldsConfig)); pkMode == PKModeKafka && n != 0 && n != 3 {
		add(PKFieldsConfig, fmt.Sprintf("pk.mode kafka needs either no pk.fields (for %s) or exactly 3 names (topic, partition, offset columns), not %d",
			strings.Join(defaultKafkaPKNames, ","), n), PKFieldsConfig, PKModeConfig)
	}
	for _, key := range []string{PKFieldsConfig, FieldsWhitelistConfig, TimestampFieldsListConfig} {
		items := cfg.List(key)
		for i, it := range items {
			if it == "" {
				add(key, key+" has an empty field name", key)
				break
			}
			if slices.Contains(items[:i], it) {
				add(key, fmt.Sprintf("%s names %q twice", key, it), key)
				break
			}
		}
	}
	return out
}

func setOf(items []string) map[string]bool {
	if len(items) == 0 {
		return nil
	}
	m := make(map[string]bool, len(items))
	for _, it := range items {
		m[it] = true
	}
	return m
}

// loadZone resolves a Java ZoneId name: an IANA zone, UTC/GMT/Z, or a
// fixed offset such as +02:00 or UTC+2.
func loadZone(name string) (*time.Location, error) {
	name = strings.TrimSpace(name)
	switch name {
	case "":
		return nil, fmt.Errorf("empty time zone")
	case "Z", "UTC", "GMT", "UT":
		return time.UTC, nil
	}
	rest := name
	for _, p := range []string{"UTC", "GMT", "UT"} {
		if r, ok := strings.CutPrefix(name, p); ok && (strings.HasPrefix(r, "+") || strings.HasPrefix(r, "-")) {
			rest = r
		}
	}
	if strings.HasPrefix(rest, "+") || strings.HasPrefix(rest, "-") {
		if off, ok := parseOffset(rest); ok {
			return time.FixedZone(name, off), nil
		}
		return nil, fmt.Errorf("%q is not a valid offset", name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q", name)
	}
	return loc, nil
}

// parseOffset parses +H, +HH, +HH:MM, +HHMM, +HH:MM:SS into seconds.
func parseOffset(s string) (int, bool) {
	sign := 1
	if s[0] == '-' {
		sign = -1
	}
	s = strings.ReplaceAll(s[1:], ":", "")
	if s == "" || len(s) > 6 {
		return 0, false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	var h, m, sec int
	switch len(s) {
	case 1, 2:
		fmt.Sscanf(s, "%d", &h)
	case 4:
		fmt.Sscanf(s, "%02d%02d", &h, &m)
	case 6:
		fmt.Sscanf(s, "%02d%02d%02d", &h, &m, &sec)
	default:
		return 0, false
	}
	if h > 18 || m > 59 || sec > 59 {
		return 0, false
	}
	return sign * (h*3600 + m*60 + sec), true
}
