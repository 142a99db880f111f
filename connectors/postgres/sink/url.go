package sink

import (
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// dbURL is a connection.url: a JDBC URL (pgjdbc's syntax) translated to
// libpq keywords, or a postgres:// URL kept as it is.
type dbURL struct {
	dsn   string // for pgx.ParseConfig
	shown string // secrets masked, for messages
	// connectTimeoutSet says the URL chose a connect timeout.
	connectTimeoutSet bool
	// socketTimeout (pgjdbc's, in seconds) bounds each write; 0: none.
	socketTimeout time.Duration
}

// pgjdbcDefaultConnectTimeout is pgjdbc's connectTimeout default.
const pgjdbcDefaultConnectTimeout = 10 * time.Second

var passwordParam = regexp.MustCompile(`(?i)([?&][^=&]*password[^=&]*=)[^&]*`)

// maskURL hides passwords in a URL's parameters and user info, as
// Confluent's sanitizedUrl does for parameters.
func maskURL(s string) string {
	s = passwordParam.ReplaceAllString(s, "${1}****")
	if i := strings.Index(s, "://"); i >= 0 {
		rest := s[i+3:]
		if at := strings.IndexByte(rest, '@'); at >= 0 && !strings.ContainsAny(rest[:at], "/?") {
			if c := strings.IndexByte(rest[:at], ':'); c >= 0 {
				s = s[:i+3] + rest[:c] + ":****" + rest[at:]
			}
		}
	}
	return s
}

// parseURL accepts jdbc:postgresql://host[:port][,host[:port]...][/db][?k=v&...],
// jdbc:postgresql:db, and libpq's postgres:// and postgresql:// URLs.
// driverProps are pgjdbc properties given as connection.<name> keys (as
// Confluent passes them to the driver); the URL's win over them.
func parseURL(raw string, driverProps map[string]string) (*dbURL, error) {
	raw = strings.TrimSpace(raw)
	shown := maskURL(raw)
	lower := strings.ToLower(raw)
	u := &dbURL{shown: shown}
	switch {
	case strings.HasPrefix(lower, "postgres://"), strings.HasPrefix(lower, "postgresql://"):
		return u.libpqURL(raw, driverProps)
	case strings.HasPrefix(lower, "jdbc:postgresql:"):
	case strings.HasPrefix(lower, "jdbc:"):
		return nil, fmt.Errorf("%s is not a PostgreSQL URL: this sink writes to PostgreSQL (jdbc:postgresql://host:port/database)", shown)
	default:
		return nil, fmt.Errorf("%s is not a JDBC URL: use jdbc:postgresql://host:port/database", shown)
	}
	rest := raw[len("jdbc:postgresql:"):]
	var hostPart, db, query string
	if q := strings.IndexByte(rest, '?'); q >= 0 {
		rest, query = rest[:q], rest[q+1:]
	}
	if after, ok := strings.CutPrefix(rest, "//"); ok {
		hostPart, db, _ = strings.Cut(after, "/")
	} else {
		db = strings.TrimPrefix(rest, "/")
	}
	kw := map[string]string{}
	var hosts, ports []string
	if hostPart != "" {
		for _, hp := range strings.Split(hostPart, ",") {
			h, p := hp, "5432"
			if strings.HasPrefix(hp, "[") { // [IPv6]:port
				end := strings.IndexByte(hp, ']')
				if end < 0 {
					return nil, fmt.Errorf("%s: unterminated IPv6 address", shown)
				}
				h = hp[1:end]
				if r := hp[end+1:]; r != "" {
					p = strings.TrimPrefix(r, ":")
				}
			} else if i := strings.LastIndexByte(hp, ':'); i >= 0 {
				h, p = hp[:i], hp[i+1:]
			}
			if h == "" {
				return nil, fmt.Errorf("%s: empty host name", shown)
			}
			if n, err := strconv.Atoi(p); err != nil || n <= 0 || n > 65535 {
				return nil, fmt.Errorf("%s: invalid port %q", shown, p)
			}
			hosts, ports = append(hosts, h), append(ports, p)
		}
	} else {
		hosts, ports = []string{"localhost"}, []string{"5432"}
	}
	kw["host"], kw["port"] = strings.Join(hosts, ","), strings.Join(ports, ",")
	if db != "" {
		d, err := url.PathUnescape(db)
		if err != nil {
			return nil, fmt.Errorf("%s: invalid database name: %v", shown, err)
		}
		kw["dbname"] = d
	}
	values, err := url.ParseQuery(query)
	if err != nil {
		return nil, fmt.Errorf("%s: invalid parameters: %v", shown, err)
	}
	params := maps.Clone(driverProps)
	if params == nil {
		params = map[string]string{}
	}
	for k, vs := range values {
		params[k] = vs[len(vs)-1]
	}
	if err := u.pgjdbcParams(params, kw); err != nil {
		return nil, err
	}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(kw)) {
		fmt.Fprintf(&b, "%s='%s' ", k, strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(kw[k]))
	}
	u.dsn = strings.TrimSpace(b.String())
	if _, err := pgx.ParseConfig(u.dsn); err != nil {
		return nil, fmt.Errorf("%s: %s", shown, firstLineOf(err.Error()))
	}
	return u, nil
}

// libpqURL keeps a postgres:// URL, adding the driver properties it does
// not set itself.
func (u *dbURL) libpqURL(raw string, driverProps map[string]string) (*dbURL, error) {
	kw := map[string]string{}
	if err := u.pgjdbcParams(driverProps, kw); err != nil {
		return nil, err
	}
	parsed, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("not a valid PostgreSQL URL: %v", err)
	}
	q := parsed.Query()
	for k, v := range kw {
		if !q.Has(k) {
			q.Set(k, v)
		}
	}
	if q.Has("connect_timeout") {
		u.connectTimeoutSet = true
	}
	parsed.RawQuery = q.Encode()
	u.dsn = parsed.String()
	if _, err := pgx.ParseConfig(u.dsn); err != nil {
		return nil, fmt.Errorf("not a valid PostgreSQL URL: %s", firstLineOf(err.Error()))
	}
	return u, nil
}

// pgjdbcParams translates pgjdbc's connection properties to libpq
// keywords (and the sink's own timeouts).
func (u *dbURL) pgjdbcParams(params map[string]string, kw map[string]string) error {
	seconds := func(k, v string) (int, error) {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("%s: %s must be a number of seconds, not %q", u.shown, k, v)
		}
		return n, nil
	}
	for _, k := range slices.Sorted(maps.Keys(params)) {
		v := params[k]
		switch k {
		case "user", "password", "sslmode", "sslrootcert", "sslcert", "sslkey", "sslpassword", "options":
			kw[k] = v
		case "ssl":
			if strings.EqualFold(v, "false") {
				kw["sslmode"] = "disable"
			} else if _, set := params["sslmode"]; !set {
				kw["sslmode"] = "verify-full" // pgjdbc: ssl=true alone verifies the server
			}
		case "currentSchema":
			kw["search_path"] = v
		case "ApplicationName":
			kw["application_name"] = v
		case "connectTimeout", "loginTimeout":
			n, err := seconds(k, v)
			if err != nil {
				return err
			}
			if n > 0 {
				kw["connect_timeout"] = v
				u.connectTimeoutSet = true
			}
		case "socketTimeout":
			n, err := seconds(k, v)
			if err != nil {
				return err
			}
			u.socketTimeout = time.Duration(n) * time.Second
		case "targetServerType":
			switch strings.ToLower(v) {
			case "any":
				kw["target_session_attrs"] = "any"
			case "primary", "master":
				kw["target_session_attrs"] = "read-write"
			case "secondary", "slave":
				kw["target_session_attrs"] = "standby"
			case "prefersecondary", "preferslave":
				kw["target_session_attrs"] = "prefer-standby"
			case "preferprimary":
				kw["target_session_attrs"] = "primary"
			default:
				return fmt.Errorf("%s: unknown targetServerType %q", u.shown, v)
			}
		}
		// Other pgjdbc properties (prepareThreshold, reWriteBatchedInserts,
		// tcpKeepAlive, ...) tune the Java driver and mean nothing here.
	}
	return nil
}

// connConfig returns pgx's config; connection.user and connection.password
// win over the URL's.
func (u *dbURL) connConfig(user string, password *string) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(u.dsn)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", u.shown, firstLineOf(err.Error()))
	}
	if user != "" {
		cfg.User = user
	}
	if password != nil {
		cfg.Password = *password
	}
	if !u.connectTimeoutSet {
		cfg.ConnectTimeout = pgjdbcDefaultConnectTimeout
	}
	if cfg.RuntimeParams["application_name"] == "" {
		cfg.RuntimeParams["application_name"] = "fjord-postgres-sink"
	}
	return cfg, nil
}

func firstLineOf(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
