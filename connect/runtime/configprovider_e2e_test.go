package runtime_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	apiconnect "github.com/fjordhq/fjord/api/connect"
	_ "github.com/fjordhq/fjord/connectors/file"
	_ "github.com/fjordhq/fjord/converters/str"
	"github.com/fjordhq/fjord/internal/testkit"
	"github.com/fjordhq/fjord/internal/testkit/connectkit"
)

// syncBuffer is a log sink several goroutines write to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A standalone worker with the file, env and dir providers runs
// FileStreamSinks whose output file comes from each of them; the REST
// API shows the placeholders, never what they resolved to, and neither
// do the logs, the task configs or a failed task's trace.
func TestConfigProvidersInAWorker(t *testing.T) {
	logs := &syncBuffer{}
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(prev) })

	b := testkit.StartBroker(t, nil)
	dir := t.TempDir()
	secrets := filepath.Join(dir, "secrets")
	if err := os.Mkdir(secrets, 0o700); err != nil {
		t.Fatal(err)
	}
	out := func(name string) string { return filepath.Join(dir, "out-"+name+"-resolved.txt") }
	// The values the variables stand for; none may appear outside the
	// files and environment they live in.
	const jaasSecret = "provided-jaas-secret-4711"
	const literalSecret = "literal-password-0815"
	props := filepath.Join(secrets, "sink.properties")
	write := func(path, body string) {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(props, "out.file="+filepath.ToSlash(out("file"))+"\n"+
		`jaas=org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="`+jaasSecret+`";`+"\n")
	write(filepath.Join(secrets, "outfile"), out("dir"))
	badPath := filepath.Join(dir, "no-such-dir-secret-9q8w", "out.txt")
	write(filepath.Join(secrets, "bad"), badPath)
	t.Setenv("FJORD_TEST_SINK_FILE", out("env"))

	w := connectkit.Start(t, b.Addr, connectkit.Options{Props: map[string]string{
		"key.converter":                                "org.apache.kafka.connect.storage.StringConverter",
		"value.converter":                              "org.apache.kafka.connect.storage.StringConverter",
		"config.providers":                             "file,env,dir",
		"config.providers.file.class":                  "org.apache.kafka.common.config.provider.FileConfigProvider",
		"config.providers.file.param.allowed.paths":    secrets,
		"config.providers.env.class":                   "org.apache.kafka.common.config.provider.EnvVarConfigProvider",
		"config.providers.env.param.allowlist.pattern": "FJORD_TEST_.*",
		"config.providers.dir.class":                   "org.apache.kafka.common.config.provider.DirectoryConfigProvider",
	}})
	srv := httptest.NewServer(apiconnect.New(w.H, apiconnect.Options{}))
	t.Cleanup(srv.Close)

	vars := map[string]string{
		"file": "${file:" + props + ":out.file}",
		"env":  "${env:FJORD_TEST_SINK_FILE}",
		"dir":  "${dir:" + secrets + ":outfile}",
	}
	for name, v := range vars {
		cfg := map[string]string{"name": "sink-" + name, "connector.class": "FileStreamSink", "tasks.max": "1",
			"topics": "lines", "file": v}
		if name == "file" {
			// A PASSWORD-type key from a provider and one written literally.
			cfg["consumer.override.sasl.jaas.config"] = "${file:" + props + ":jaas}"
			cfg["producer.override.sasl.jaas.config"] = `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="` + literalSecret + `";`
		}
		w.Create(t, cfg)
	}
	w.Create(t, map[string]string{"name": "sink-bad", "connector.class": "FileStreamSink", "tasks.max": "1",
		"topics": "lines", "file": "${dir:" + secrets + ":bad}"})

	if _, err := testkit.Admin(t, b.Addr).CreateTopic(testkit.Context(t, 10*time.Second), 1, 1, nil, "lines"); err != nil {
		t.Fatal(err)
	}
	cl := testkit.Client(t, b.Addr)
	if err := cl.ProduceSync(testkit.Context(t, 10*time.Second), &kgo.Record{Topic: "lines", Value: []byte("hello providers")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	for name := range vars {
		testkit.CheckFor(t, 30*time.Second, 100*time.Millisecond, func() error {
			b, err := os.ReadFile(out(name))
			if err != nil || !strings.Contains(string(b), "hello providers") {
				return fmt.Errorf("%s: the sink has not written %s yet (%v)", name, out(name), err)
			}
			return nil
		})
	}
	trace := w.WaitFailed(t, "sink-bad", 30*time.Second)
	if !strings.Contains(trace, "[hidden]") {
		t.Errorf("the failed task's trace does not show [hidden] for the resolved path: %s", trace)
	}

	get := func(path string) string {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
		}
		return string(body)
	}
	var responses strings.Builder
	for _, p := range []string{"/connectors?expand=info&expand=status", "/connectors/sink-file", "/connectors/sink-file/config",
		"/connectors/sink-file/tasks", "/connectors/sink-env/tasks", "/connectors/sink-dir/tasks", "/connectors/sink-bad/status",
		"/connectors/sink-bad/tasks/0/status"} {
		responses.WriteString(get(p))
	}
	rest := responses.String()
	// The stored configs keep the placeholders (Kafka's behaviour: that is
	// the point of providers), in the connector and in its task configs.
	for _, v := range vars {
		if n := strings.Count(rest, jsonEscape(v)); n < 2 {
			t.Errorf("REST responses show the placeholder %s %d times, want it in the connector and task configs", v, n)
		}
	}
	// FileStreamSink itself logs its file setting ("starting file sink
	// connector"), as Kafka's does; a plugin's own logging is its
	// business. Everything the runtime and herder log must be clean.
	var runtimeLogs string
	for _, l := range strings.Split(logs.String(), "\n") {
		if !strings.Contains(l, `msg="starting file sink connector"`) {
			runtimeLogs += l + "\n"
		}
	}
	if !strings.Contains(runtimeLogs, "sink-bad") {
		t.Fatalf("the logs do not mention the failed connector; is the log capture working?\n%s", runtimeLogs)
	}
	leaks := map[string]string{"the file provider's path": out("file"), "the env provider's path": out("env"),
		"the dir provider's path": out("dir"), "the failing path": badPath, "the provided JAAS password": jaasSecret}
	for what, secret := range leaks {
		if strings.Contains(rest, secret) {
			t.Errorf("REST responses show %s (%s)", what, secret)
		}
		if strings.Contains(runtimeLogs, secret) {
			t.Errorf("the logs show %s (%s)", what, secret)
		}
	}
	// A literal PASSWORD value is stored and returned as submitted, as
	// Kafka's GET /connectors/{c}/config does, but never logged.
	if strings.Contains(logs.String(), literalSecret) {
		t.Errorf("the logs show a literal PASSWORD value")
	}
	dumped := false
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "ConnectorConfig values") && strings.Contains(l, "connector=sink-file") {
			dumped = true
			if !strings.Contains(l, "producer.override.sasl.jaas.config:[hidden]") || !strings.Contains(l, "file:${file:") {
				t.Errorf("the connector config dump does not show the literal PASSWORD as [hidden] and the placeholders: %s", l)
			}
		}
	}
	if !dumped {
		t.Errorf("no ConnectorConfig values dump for sink-file")
	}
	// The validation endpoint hides PASSWORD values (Kafka's [hidden]).
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPut, srv.URL+"/connector-plugins/FileStreamSink/config/validate",
		strings.NewReader(`{"connector.class":"FileStreamSink","topics":"t","consumer.override.sasl.jaas.config":"x password=\"`+literalSecret+`\";"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.Contains(string(body), literalSecret) {
		t.Errorf("validate shows a PASSWORD value: %s", body)
	}
}

func jsonEscape(s string) string {
	// Paths and ${...} are JSON as they are, but for backslashes.
	return strings.ReplaceAll(s, `\`, `\\`)
}

// Variables that cannot be resolved refuse the connector at creation
// (its validation reports them on their keys, naming the variable and
// what to do), and fail it when they stop resolving later (a secret file
// changed under a running connector, then a restart).
func TestConfigProviderErrors(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	dir := t.TempDir()
	props := filepath.Join(dir, "a.properties")
	if err := os.WriteFile(props, []byte("present="+filepath.Join(dir, "out.txt")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w := connectkit.Start(t, b.Addr, connectkit.Options{Props: map[string]string{
		"config.providers": "file", "config.providers.file.class": "file",
	}})
	ctx := testkit.Context(t, 30*time.Second)
	cases := map[string]struct{ value, want string }{
		"unknown-provider": {"${vault:secret/db:path}", "config provider vault is not configured (the worker's config.providers is file); add it there"},
		"missing-key":      {"${file:" + props + ":absent}", "provider file found no key absent at " + props},
		"missing-file":     {"${file:" + filepath.Join(dir, "nope.properties") + ":k}", "could not read properties from file"},
	}
	for name, c := range cases {
		_, _, err := w.H.PutConnectorConfig(ctx, name, map[string]string{"name": name, "connector.class": "FileStreamSink", "topics": "t", "file": c.value}, "", false)
		if err == nil || !strings.Contains(err.Error(), "config file: cannot resolve "+c.value) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: creation answered %v; want a refusal naming the key, the variable and %q", name, err, c.want)
		}
	}

	w.Create(t, map[string]string{"name": "later", "connector.class": "FileStreamSink", "topics": "t", "file": "${file:" + props + ":present}"})
	testkit.CheckFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		st, err := w.H.ConnectorStatus(ctx, "later")
		if err != nil || st.Connector.State != "RUNNING" {
			return fmt.Errorf("status %+v %v", st, err)
		}
		return nil
	})
	if err := os.WriteFile(props, []byte("renamed=x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := w.H.RestartConnector(ctx, "later", false, false); err != nil {
		t.Logf("restart: %v", err)
	}
	trace := w.WaitFailed(t, "later", 30*time.Second)
	if !strings.Contains(trace, "config file: cannot resolve ${file:"+props+":present}") || !strings.Contains(trace, "found no key present") {
		t.Errorf("trace %q; want the key and the variable that no longer resolves", trace)
	}
}

// Worker properties may use variables too (Kafka resolves its
// WorkerConfig): here the worker's advertised host name comes from a file.
func TestWorkerPropertiesUseProviders(t *testing.T) {
	dir := t.TempDir()
	props := filepath.Join(dir, "w.properties")
	if err := os.WriteFile(props, []byte("id=from-a-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b := testkit.StartBroker(t, nil)
	w := connectkit.Start(t, b.Addr, connectkit.Options{Props: map[string]string{
		"config.providers": "f", "config.providers.f.class": "FileConfigProvider",
		"rest.advertised.host.name": "${f:" + props + ":id}",
	}})
	if got := w.W.Config().RestAdvertisedHostName; got != "from-a-file" {
		t.Fatalf("rest.advertised.host.name = %q, want from-a-file", got)
	}
}
