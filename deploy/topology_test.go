package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/jackc/pgx/v5"

	"github.com/fjordhq/fjord/internal/testkit"
)

// TestComposeTopologyRuns runs what compose.yaml runs, without a
// container engine: the three broker services and the two Connect
// workers as fjord processes with compose's commands and the files of
// deploy/config, each service on a loopback address of its own instead
// of a container with its own name, PostgreSQL 15 prepared by compose's
// init script and MinIO with the sink's bucket. It then posts the three
// connector configs and follows the rows: the snapshot and later changes
// reach the analytics database through the Postgres sink and land as
// Parquet objects in the bucket.
//
// What differs from compose, and only that: host names become the
// loopback addresses (compose resolves service names), listeners bind
// those addresses instead of every interface (three brokers share one
// network namespace here), each node's log.dirs is a temporary directory
// (compose mounts a volume there), the workers set
// rest.advertised.host.name (compose gives each container a host name),
// and the connectors' connection keys point at the test's servers.
func TestComposeTopologyRuns(t *testing.T) {
	testkit.SkipShort(t, "the compose topology as processes (3 brokers, 2 workers, Postgres, MinIO)")
	c := loadCompose(t)
	bin := testkit.FjordBinary(t)
	dir := t.TempDir()
	addrs := map[string]string{}
	for i, b := range brokerServices {
		addrs[b] = fmt.Sprintf("127.0.77.%d", i+1)
	}
	for i, w := range connectServices {
		addrs[w] = fmt.Sprintf("127.0.77.%d", 11+i)
	}
	rename := func(s string) string {
		for _, name := range slices.Sorted(maps.Keys(addrs)) {
			s = strings.ReplaceAll(s, name+":", addrs[name]+":")
		}
		return s
	}
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}

	pg := testkit.StartPostgres(t)
	pg.CreateDatabase(t, str(c.service("postgres"), "environment", "POSTGRES_DB"))
	runInitScript(t, pg, str(c.service("postgres"), "environment", "POSTGRES_DB"), "deploy/compose/initdb/01-inventory.sql")
	store := testkit.StartS3(t)
	bucket := readConnector(t, connectorFiles[1]).Config["s3.bucket.name"]
	store.CreateBucket(t, bucket)

	// The brokers: compose's command, addresses localised.
	for _, name := range brokerServices {
		ip := addrs[name]
		args := parseBrokerArgs(t, name, strs(c.service(name), "command"))
		conf := write(name+".properties", rename(string(readFile(t, c.hostFile(name, args.config)))))
		cmd := []string{"broker", "--config", conf}
		for _, o := range args.overrides {
			cmd = append(cmd, "--override", rename(o))
		}
		cmd = append(cmd,
			"--override", fmt.Sprintf("listeners=PLAINTEXT://%s:9092,CONTROLLER://%s:9093", ip, ip),
			"--override", "log.dirs="+filepath.Join(dir, name, "data"),
			"--http-addr", ip+":"+port(args.httpAddr))
		testkit.StartProcess(t, cmd...)
	}
	// Healthy as compose decides it: its healthcheck command, run here.
	for _, name := range brokerServices {
		u := c.healthcheckURL(name)
		u.Host = addrs[name] + ":" + u.Port()
		waitHealthy(t, bin, name, u.String(), 3*time.Minute)
	}

	// The workers, once the brokers are healthy (depends_on).
	for _, name := range connectServices {
		cmd := strs(c.service(name), "command")
		text := rename(string(readFile(t, c.hostFile(name, cmd[1])))) +
			fmt.Sprintf("\nlisteners=http://%s:8083\nrest.advertised.host.name=%s\n", addrs[name], addrs[name])
		testkit.StartProcess(t, "connect", write(name+".properties", text))
	}
	for _, name := range connectServices {
		u := c.healthcheckURL(name)
		u.Host = addrs[name] + ":" + u.Port()
		waitHealthy(t, bin, name, u.String(), 3*time.Minute)
	}

	// The connectors, posted to one worker as docs/operations.md does.
	rest := "http://" + addrs[connectServices[0]] + ":8083"
	var names []string
	for _, f := range connectorFiles {
		cf := readConnector(t, f)
		cfg := connectorConfig(cf)
		pointAt(t, cfg, pg, store)
		delete(cfg, "name")
		body, _ := json.Marshal(map[string]any{"name": cf.Name, "config": cfg})
		resp, err := http.Post(rest+"/connectors", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("POST %s: %s: %s", f, resp.Status, b)
		}
		names = append(names, cf.Name)
	}
	for _, n := range names {
		testkit.CheckFor(t, 2*time.Minute, 500*time.Millisecond, func() error { return connectorRunning(t, rest, n) })
	}

	// The snapshot reaches the analytics database...
	analytics := strings.TrimPrefix(mustURLPath(t, readConnector(t, connectorFiles[2]).Config["connection.url"]), "/")
	waitRows(t, pg, analytics, "SELECT count(*)::text || ':' || coalesce(sum(total), 0)::text FROM orders", "3:277.15")
	// ...and so do changes: an insert, an update, a delete.
	pg.Exec(t, "inventory",
		"INSERT INTO orders (id, customer, total) VALUES (4, 'barbara', 99.99)",
		"UPDATE orders SET total = 20.00 WHERE id = 1",
		"DELETE FROM orders WHERE id = 3")
	waitRows(t, pg, analytics, "SELECT string_agg(id::text || '=' || total::text, ',' ORDER BY id) FROM orders", "1=20.00,2=250.00,4=99.99")

	// The S3 sink commits its first Parquet file within
	// rotate.schedule.interval.ms.
	testkit.CheckFor(t, 3*time.Minute, 2*time.Second, func() error {
		out, err := store.Client(t).ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String("topics/inv.public.orders/")})
		if err != nil {
			return err
		}
		for _, o := range out.Contents {
			if strings.HasSuffix(aws.ToString(o.Key), ".snappy.parquet") {
				return nil
			}
		}
		return fmt.Errorf("no .snappy.parquet object under s3://%s/topics/inv.public.orders/ yet (%d objects)", bucket, len(out.Contents))
	})

	// Every metric docs/operations.md names is served by a node or a
	// worker of this topology (counters with labels appear once counted:
	// the jobs above have counted them).
	exposed := map[string]bool{}
	for _, u := range []string{"http://" + addrs[brokerServices[0]] + ":8080/metrics", "http://" + addrs[brokerServices[1]] + ":8080/metrics",
		"http://" + addrs[brokerServices[2]] + ":8080/metrics", rest + "/metrics", "http://" + addrs[connectServices[1]] + ":8083/metrics"} {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for line := range strings.Lines(string(b)) {
			if name, _, ok := strings.Cut(line, " "); ok && !strings.HasPrefix(name, "#") {
				name, _, _ = strings.Cut(name, "{")
				exposed[name] = true
			}
		}
	}
	for _, m := range docMetricNames(t) {
		if !exposed[m] && !exposed[m+"_bucket"] {
			t.Errorf("%s names metric %s, which no node or worker serves", opsDoc, m)
		}
	}

	// The cluster is whole: three brokers, nothing under-replicated (the
	// CDC topic and Connect's topics are replicated 3 times).
	out, err := exec.Command(bin, "cluster", "describe", "-o", "json", "-b", addrs[brokerServices[0]]+":9092").CombinedOutput()
	if err != nil {
		t.Fatalf("fjord cluster describe: %v\n%s", err, out)
	}
	var d struct {
		Brokers         []json.RawMessage `json:"brokers"`
		UnderReplicated []json.RawMessage `json:"under_replicated"`
		Offline         []json.RawMessage `json:"offline"`
	}
	if err := json.Unmarshal(out, &d); err != nil {
		t.Fatalf("cluster describe: %v\n%s", err, out)
	}
	if len(d.Brokers) != 3 || len(d.UnderReplicated) != 0 || len(d.Offline) != 0 {
		t.Errorf("cluster describe: %d brokers, %d under-replicated, %d offline; want 3, 0, 0\n%s", len(d.Brokers), len(d.UnderReplicated), len(d.Offline), out)
	}
}

// waitHealthy runs `fjord healthcheck URL` (compose's healthcheck) until
// it passes.
func waitHealthy(t *testing.T, bin, who, url string, wait time.Duration) {
	t.Helper()
	testkit.CheckFor(t, wait, time.Second, func() error {
		out, err := exec.Command(bin, "healthcheck", "--timeout", "2s", url).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s: %v: %s", who, err, out)
		}
		return nil
	})
}

func connectorRunning(t *testing.T, rest, name string) error {
	resp, err := http.Get(rest + "/connectors/" + name + "/status")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var st struct {
		Connector struct{ State, Trace string }
		Tasks     []struct{ State, Trace string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return err
	}
	if st.Connector.State == "FAILED" {
		t.Fatalf("connector %s failed: %s", name, st.Connector.Trace)
	}
	if st.Connector.State != "RUNNING" || len(st.Tasks) == 0 {
		return fmt.Errorf("connector %s: %s with %d tasks", name, st.Connector.State, len(st.Tasks))
	}
	for _, task := range st.Tasks {
		if task.State == "FAILED" {
			t.Fatalf("connector %s: task failed: %s", name, task.Trace)
		}
		if task.State != "RUNNING" {
			return fmt.Errorf("connector %s: task %s", name, task.State)
		}
	}
	return nil
}

// waitRows waits until query (one text value) answers want in db.
func waitRows(t *testing.T, pg *testkit.Postgres, db, query, want string) {
	t.Helper()
	testkit.CheckFor(t, 2*time.Minute, 500*time.Millisecond, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, pg.DSN(db))
		if err != nil {
			return err
		}
		defer c.Close(context.Background())
		var got *string
		if err := c.QueryRow(ctx, query).Scan(&got); err != nil {
			return err
		}
		if got == nil || *got != want {
			return fmt.Errorf("%s: %v, want %s", query, got, want)
		}
		return nil
	})
}

func mustURLPath(t *testing.T, jdbc string) string {
	t.Helper()
	i := strings.Index(jdbc, "//")
	if i < 0 {
		t.Fatalf("connection.url %q", jdbc)
	}
	rest := jdbc[i+2:]
	j := strings.Index(rest, "/")
	if j < 0 {
		t.Fatalf("connection.url %q has no database", jdbc)
	}
	return rest[j:]
}
