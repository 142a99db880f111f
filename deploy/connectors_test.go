package deploy

import (
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fjordhq/fjord/internal/testkit"
)

// The connector configs of the three everyday jobs.
var connectorFiles = []string{
	"deploy/config/connectors/postgres-cdc.json",  // Postgres -> Kafka
	"deploy/config/connectors/s3-sink.json",       // Kafka -> S3
	"deploy/config/connectors/postgres-sink.json", // Kafka -> Postgres
}

// TestConnectorConfigs validates each connector JSON as a worker running
// deploy/config/connect-distributed.properties would, against a real
// PostgreSQL 15 prepared by compose's init script and a real MinIO with
// the sink's bucket: the connectors' Validate connects, checks the
// server (logical decoding, privileges, the bucket), and every key must
// be defined. Only the connection keys are pointed at the test's servers;
// TestComposeConnectorsMatchServices checks their written values against
// compose.yaml.
func TestConnectorConfigs(t *testing.T) {
	wc, problems := workerProblems(readProps(t, "deploy/config/connect-distributed.properties"))
	if len(problems) > 0 {
		t.Fatalf("worker config: %q", problems)
	}
	pg := testkit.StartPostgres(t)
	pg.CreateDatabase(t, "inventory")
	runInitScript(t, pg, "inventory", "deploy/compose/initdb/01-inventory.sql")
	s3 := testkit.StartS3(t)

	for _, f := range connectorFiles {
		c := readConnector(t, f)
		cfg := connectorConfig(c)
		if b := cfg["s3.bucket.name"]; b != "" {
			s3.CreateBucket(t, b) // compose's minio-init does this
		}
		pointAt(t, cfg, pg, s3)
		for _, p := range connectorProblems(wc, cfg) {
			t.Errorf("%s: %s", f, p)
		}
	}
}

// TestConnectorsChain: the CDC source's topic is the one both sinks read.
func TestConnectorsChain(t *testing.T) {
	cdc := readConnector(t, connectorFiles[0]).Config
	tables := strings.Split(cdc["table.include.list"], ",")
	if len(tables) != 1 {
		t.Fatalf("table.include.list %q: the sinks read one table's topic", cdc["table.include.list"])
	}
	topic := cdc["topic.prefix"] + "." + strings.TrimSpace(tables[0])
	for _, f := range connectorFiles[1:] {
		if got := readConnector(t, f).Config["topics"]; got != topic {
			t.Errorf("%s: topics %q, want the CDC source's topic %q", f, got, topic)
		}
	}
}

// TestMisspelledConnectorKeysAreCaught: a misspelt or unknown key, or a
// bad value, in a connector config is reported by name, with nothing to
// connect to (the checks before the connection find them).
func TestMisspelledConnectorKeysAreCaught(t *testing.T) {
	wc, _ := workerProblems(readProps(t, "deploy/config/connect-distributed.properties"))
	for _, c := range []struct{ file, key, value, want string }{
		{connectorFiles[0], "table.include.lists", "public.orders", "table.include.lists"},
		{connectorFiles[0], "database.hostnme", "postgres", "database.hostnme"}, // Debezium passes database.* through
		{connectorFiles[0], "topic.creation.default.partition", "3", "topic.creation.default.partition"},
		{connectorFiles[0], "topic.creation.dflt.partitions", "3", "dflt"},
		{connectorFiles[0], "topic.creation.default.replication.factor", "0", "replication.factor"},
		{connectorFiles[1], "s3.bucket", "lake", "s3.bucket"},
		{connectorFiles[1], "flush.size", "ten", "flush.size"},
		{connectorFiles[2], "transforms.unwrap.drop.tombstone", "false", "drop.tombstone"},
		{connectorFiles[2], "insert.mode", "merge", "insert.mode"},
	} {
		cfg := connectorConfig(readConnector(t, c.file))
		cfg[c.key] = c.value
		if problems := connectorProblems(wc, cfg); !mentions(problems, c.want) {
			t.Errorf("%s with %s=%s: problems %q do not mention %q", c.file, c.key, c.value, problems, c.want)
		}
	}
}

// connectorConfig is the config a worker stores for a POST /connectors
// body: the config with the name in it.
func connectorConfig(c connectorFile) map[string]string {
	cfg := maps.Clone(c.Config)
	cfg["name"] = c.Name
	return cfg
}

// pointAt replaces the connection keys (hosts, ports, credentials) with
// the test's servers, failing on a connector whose keys it does not
// know, so no connection key is left pointing at compose's hosts.
func pointAt(t *testing.T, cfg map[string]string, pg *testkit.Postgres, s3 *testkit.S3Server) {
	t.Helper()
	set := func(k, v string) {
		if _, ok := cfg[k]; !ok {
			t.Fatalf("%s: no %s", cfg["name"], k)
		}
		cfg[k] = v
	}
	switch cfg["connector.class"] {
	case "io.debezium.connector.postgresql.PostgresConnector":
		set("database.hostname", pg.Host)
		set("database.port", strconv.Itoa(pg.Port))
		set("database.user", pg.User)
		set("database.password", testkit.PostgresPassword)
	case "io.confluent.connect.jdbc.JdbcSinkConnector":
		u, err := url.Parse(strings.TrimPrefix(cfg["connection.url"], "jdbc:"))
		if err != nil || u.Scheme != "postgresql" {
			t.Fatalf("connection.url %q: want jdbc:postgresql://host:port/db", cfg["connection.url"])
		}
		set("connection.url", pg.JDBCURL(strings.TrimPrefix(u.Path, "/")))
		set("connection.user", pg.User)
		set("connection.password", testkit.PostgresPassword)
	case "io.confluent.connect.s3.S3SinkConnector":
		set("store.url", s3.Endpoint)
		set("aws.access.key.id", s3.AccessKey)
		set("aws.secret.access.key", s3.SecretKey)
	default:
		t.Fatalf("%s: connector %s has no connection keys known to this test", cfg["name"], cfg["connector.class"])
	}
}

// runInitScript runs a /docker-entrypoint-initdb.d script as the postgres
// image does: psql with ON_ERROR_STOP against POSTGRES_DB.
func runInitScript(t *testing.T, pg *testkit.Postgres, db, rel string) {
	t.Helper()
	abs, err := filepath.Abs(repoPath(rel))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(pg.Program("psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1",
		"-h", pg.Host, "-p", strconv.Itoa(pg.Port), "-U", pg.User, "-d", db, "-f", abs)
	cmd.Env = append(os.Environ(), "PGPASSWORD="+testkit.PostgresPassword)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", rel, err, out)
	}
	// What the script leaves: the table the CDC source reads, its rows, and
	// the database the Postgres sink writes to.
	var rows int
	c := pg.Connect(t, db)
	if err := c.QueryRow(t.Context(), "SELECT count(*) FROM orders").Scan(&rows); err != nil || rows == 0 {
		t.Fatalf("%s: orders has %d rows (%v)", rel, rows, err)
	}
	if err := pg.ExecErr("analytics", "SELECT 1"); err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
}
