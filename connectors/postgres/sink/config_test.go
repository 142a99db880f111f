package sink

import (
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect/plugins"
	"github.com/fjordhq/fjord/connect/runtime"
	_ "github.com/fjordhq/fjord/converters/header"
	_ "github.com/fjordhq/fjord/converters/json"
	"github.com/fjordhq/fjord/internal/testkit"
)

func TestRegistered(t *testing.T) {
	for _, name := range []string{Alias, ConfluentConnectorClass, ConnectorClass, "JdbcSinkConnector"} {
		p, ok := plugins.Lookup(name)
		if !ok || p.Kind != plugins.Sink || p.Class != ConnectorClass {
			t.Errorf("%s: %+v %v", name, p, ok)
		}
	}
}

// errorsByKey validates props through the runtime (the REST validate
// endpoint's answer) and returns each key's errors.
func errorsByKey(t *testing.T, props map[string]string) (map[string][]string, int) {
	t.Helper()
	v, err := runtime.ValidateConnectorConfig(nil, props)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, c := range v.Configs {
		if len(c.Value.Errors) > 0 {
			out[c.Value.Name] = c.Value.Errors
		}
	}
	return out, v.ErrorCount
}

// TestValidate: every bad key gets its own clear message, the keys are
// checked together (Confluent's delete.enabled check and the ones
// Confluent leaves to the first record), and a database that does not
// answer is reported on connection.url.
func TestValidate(t *testing.T) {
	pg := testkit.StartPostgres(t)
	base := map[string]string{"name": "v", "connector.class": ConfluentConnectorClass, "topics": "orders",
		"connection.url": pg.JDBCURL("postgres"), "connection.user": "postgres", "connection.password": testkit.PostgresPassword,
		"key.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter": "org.apache.kafka.connect.json.JsonConverter"}
	with := func(kv ...string) map[string]string { return merged(base, kv...) }

	if errs, n := errorsByKey(t, base); n != 0 {
		t.Fatalf("valid config: %d errors %v", n, errs)
	}
	if errs, n := errorsByKey(t, with("insert.mode", "upsert", "pk.mode", "record_key", "delete.enabled", "true",
		"auto.create", "true", "db.timezone", "Europe/Paris", "table.types", "table,VIEW", "INSERT.MODE", "x")); n != 0 {
		t.Fatalf("valid config: %d errors %v", n, errs)
	}

	closed := func() string {
		l, _ := net.Listen("tcp", "127.0.0.1:0")
		defer l.Close()
		return l.Addr().String()
	}()
	for _, c := range []struct {
		name string
		kv   []string
		want map[string]string // key -> part of its message
	}{
		{"every key bad", []string{
			"connection.url", "jdbc:mysql://localhost/db",
			"insert.mode", "merge",
			"pk.mode", "everything",
			"batch.size", "-1",
			"db.timezone", "Mars/Olympus",
			"date.timezone", "LOCAL",
			"quote.sql.identifiers", "sometimes",
			"table.types", "TABLE,SYNONYM",
			"max.retries", "-1",
			"retry.backoff.ms", "soon",
			"connection.attempts", "0",
			"auto.create", "yes",
			"table.name.format", "",
			"dialect.name", "MySqlDatabaseDialect",
			"timestamp.precision.mode", "seconds",
		}, map[string]string{
			"connection.url":           "is not a PostgreSQL URL",
			"insert.mode":              "Invalid value merge for configuration insert.mode: Invalid enumerator",
			"pk.mode":                  "Invalid value everything for configuration pk.mode",
			"batch.size":               "Value must be at least 0",
			"db.timezone":              `unknown time zone "Mars/Olympus"`,
			"date.timezone":            "Invalid value LOCAL",
			"quote.sql.identifiers":    "Invalid value sometimes",
			"table.types":              `"SYNONYM" is not a table type`,
			"max.retries":              "Value must be at least 0",
			"retry.backoff.ms":         "Not a number of type INT",
			"connection.attempts":      "Value must be at least 1",
			"auto.create":              "Expected value to be either true or false",
			"table.name.format":        "String must be non-empty",
			"dialect.name":             "this sink writes to PostgreSQL only",
			"timestamp.precision.mode": "Invalid value seconds",
		}},
		{"deletes need record_key", []string{"delete.enabled", "true", "pk.mode", "record_value"}, map[string]string{
			"delete.enabled": "Deletes are only supported for pk.mode record_key",
			"pk.mode":        "Deletes are only supported for pk.mode record_key",
		}},
		{"upsert needs keys", []string{"insert.mode", "upsert"}, map[string]string{
			"insert.mode": "insert.mode upsert needs the rows' primary key",
		}},
		{"update needs keys", []string{"insert.mode", "update", "pk.mode", "none"}, map[string]string{
			"insert.mode": "insert.mode update needs the rows' primary key",
		}},
		{"kafka takes three names", []string{"pk.mode", "kafka", "pk.fields", "a,b"}, map[string]string{
			"pk.fields": "exactly 3 names",
		}},
		{"cross checks beside a bad key", []string{"insert.mode", "upsert", "batch.size", "x"}, map[string]string{
			"insert.mode": "needs the rows' primary key",
			"batch.size":  "Not a number of type INT",
		}},
		{"no cross check on a bad key", []string{"delete.enabled", "true", "pk.mode", "keys"}, map[string]string{
			"pk.mode": "Invalid value keys for configuration pk.mode",
		}},
		{"duplicate field", []string{"fields.whitelist", "a,b,a"}, map[string]string{
			"fields.whitelist": `names "a" twice`,
		}},
		{"missing url", []string{"connection.url", ""}, map[string]string{
			"connection.url": "String must be non-empty",
		}},
		{"nothing listening", []string{"connection.url", "jdbc:postgresql://" + closed + "/postgres"}, map[string]string{
			"connection.url": "Could not connect to database.",
		}},
		{"wrong password", []string{"connection.password", "wrong"}, map[string]string{
			"connection.url": "password authentication failed",
		}},
		{"no such database", []string{"connection.url", pg.JDBCURL("nodb")}, map[string]string{
			"connection.url": `database "nodb" does not exist`,
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			errs, n := errorsByKey(t, with(c.kv...))
			for key, want := range c.want {
				if len(errs[key]) == 0 || !strings.Contains(strings.Join(errs[key], "\n"), want) {
					t.Errorf("%s: errors %q, want one with %q", key, errs[key], want)
				}
			}
			if extra := slices.DeleteFunc(slices.Collect(maps.Keys(errs)), func(k string) bool { _, ok := c.want[k]; return ok }); len(extra) > 0 {
				t.Errorf("unexpected errors on %v: %v", extra, errs)
			}
			if n == 0 {
				t.Error("error count 0")
			}
		})
	}
	delete(base, "connection.url")
	if errs, _ := errorsByKey(t, base); !strings.Contains(strings.Join(errs["connection.url"], ""), `Missing required configuration "connection.url"`) {
		t.Errorf("no connection.url: %v", errs)
	}
}

// TestParseURL: JDBC URLs in pgjdbc's syntax and libpq URLs reach the
// right server, database, user and settings.
func TestParseURL(t *testing.T) {
	for _, c := range []struct {
		url, user, password string
		want                string // host:port/db user sslmode extras
	}{
		{"jdbc:postgresql://db.example.com:6543/shop", "", "", "db.example.com:6543/shop"},
		{"jdbc:postgresql://db.example.com/shop?user=ann&password=s%26cret&sslmode=disable&currentSchema=sales&ApplicationName=x&prepareThreshold=0", "", "",
			"db.example.com:5432/shop user=ann password=s&cret tls=false search_path=sales application_name=x"},
		{"jdbc:postgresql://h1:1,h2:2/d?user=u", "", "", "h1:1/d user=u fallback=h2:2"},
		{"jdbc:postgresql://[::1]:7/d", "", "", "::1:7/d"},
		{"jdbc:postgresql:shop", "", "", "localhost:5432/shop"},
		{"jdbc:postgresql://h/d?user=url&password=urlpw", "cfg", "cfgpw", "h:5432/d user=cfg password=cfgpw"},
		{"jdbc:postgresql://h/d?connectTimeout=3&sslmode=disable", "", "", "h:5432/d tls=false timeout=3s"},
		{"postgres://u:p@h:9/d?sslmode=disable&search_path=x", "", "", "h:9/d user=u password=p tls=false search_path=x"},
	} {
		u, err := parseURL(c.url, nil)
		if err != nil {
			t.Errorf("%s: %v", c.url, err)
			continue
		}
		var pw *string
		if c.password != "" {
			pw = &c.password
		}
		cfg, err := u.connConfig(c.user, pw)
		if err != nil {
			t.Errorf("%s: %v", c.url, err)
			continue
		}
		for _, part := range strings.Fields(c.want) {
			var ok bool
			switch k, v, _ := strings.Cut(part, "="); k {
			case "user":
				ok = cfg.User == v
			case "password":
				ok = cfg.Password == v
			case "tls":
				ok = (cfg.TLSConfig != nil) == (v == "true")
			case "search_path", "application_name":
				ok = cfg.RuntimeParams[k] == v
			case "fallback":
				ok = len(cfg.Fallbacks) > 0 && fmt.Sprintf("%s:%d", cfg.Fallbacks[len(cfg.Fallbacks)-1].Host, cfg.Fallbacks[len(cfg.Fallbacks)-1].Port) == v
			case "timeout":
				ok = cfg.ConnectTimeout.String() == v
			default:
				ok = fmt.Sprintf("%s:%d/%s", cfg.Host, cfg.Port, cfg.Database) == part
			}
			if !ok {
				t.Errorf("%s: want %s; got host %s port %d db %s user %s tls %v params %v timeout %v", c.url, part,
					cfg.Host, cfg.Port, cfg.Database, cfg.User, cfg.TLSConfig != nil, cfg.RuntimeParams, cfg.ConnectTimeout)
			}
		}
		if c.url == "jdbc:postgresql://db.example.com:6543/shop" && cfg.ConnectTimeout != 10*time.Second {
			t.Errorf("default connect timeout %v, want pgjdbc's 10s", cfg.ConnectTimeout)
		}
	}
	for _, bad := range []string{"jdbc:mysql://h/d", "mysql://h/d", "jdbc:postgresql://h:notaport/d", "jdbc:postgresql://h/d?connectTimeout=x",
		"jdbc:postgresql://h/d?targetServerType=nearest"} {
		if _, err := parseURL(bad, nil); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	// connection.<property> keys are driver properties; the URL's win.
	s, err := parseSettings(map[string]string{"connection.url": "jdbc:postgresql://h/d?ApplicationName=url",
		"connection.ApplicationName": "prop", "connection.sslmode": "disable", "connection.socketTimeout": "7",
		"connection.loginTimeout": "3", "connection.user": "u"})
	if err != nil {
		t.Fatal(err)
	}
	if s.conn.TLSConfig != nil || s.conn.RuntimeParams["application_name"] != "url" || s.socketTimeout != 7*time.Second ||
		s.conn.ConnectTimeout != 3*time.Second || s.conn.User != "u" {
		t.Errorf("driver properties: tls %v params %v socket timeout %v connect timeout %v user %s",
			s.conn.TLSConfig != nil, s.conn.RuntimeParams, s.socketTimeout, s.conn.ConnectTimeout, s.conn.User)
	}
	s, err = parseSettings(map[string]string{"connection.url": "postgres://h/d", "connection.sslmode": "disable", "connection.socketTimeout": "2"})
	if err != nil || s.conn.TLSConfig != nil || s.socketTimeout != 2*time.Second {
		t.Errorf("driver properties with a libpq URL: %v", err)
	}
	if got := maskURL("jdbc:postgresql://h/d?user=a&password=secret&x=1"); strings.Contains(got, "secret") {
		t.Errorf("masked URL shows the password: %s", got)
	}
	if got := maskURL("postgres://u:secret@h/d"); strings.Contains(got, "secret") {
		t.Errorf("masked URL shows the password: %s", got)
	}
}
