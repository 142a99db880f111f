//go:build ignore

// capture.go sends a fixed script of REST requests to a running Kafka
// Connect worker and writes every request with its answer to a JSON file:
// the golden exchanges api/connect's tests replay against Fjord's handler.
// capture.sh starts Kafka and Kafka Connect 4.4 and runs it:
//
//	go run capture.go -url http://127.0.0.1:19894 -dir /tmp/x/files -out exchanges.json
//
// Requests may contain {{dir}}, a scratch directory for the file
// connectors; answers have the directory replaced back by {{dir}} so the
// goldens do not depend on where they were captured. A step with an
// "until" condition is repeated (bounded) until the condition holds, as the
// worker applies changes asynchronously; its exchange is marked "poll" so a
// replay against a real herder polls too.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Exchange is one request and Kafka Connect's answer (the file format).
type Exchange struct {
	Name     string   `json:"name"`
	Poll     bool     `json:"poll,omitempty"`
	Request  Request  `json:"request"`
	Response Response `json:"response"`
}

type Request struct {
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body,omitempty"`
}

type Response struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body"`
}

type step struct {
	name, method, path, body string
	contentType              string // default application/json when a body is sent
	noContentType            bool
	until                    func(status int, body string) bool
	record                   bool // false: setup only, not written
}

const jsonType = "application/json"

func main() {
	base := flag.String("url", "http://127.0.0.1:19894", "Kafka Connect REST URL")
	dir := flag.String("dir", "", "scratch directory for the file connectors")
	out := flag.String("out", "exchanges.json", "output file")
	flag.Parse()
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		log.Fatal(err)
	}
	// 12 bytes in two lines: offsets are byte positions.
	if err := os.WriteFile(filepath.Join(*dir, "in.txt"), []byte("hello\nworld\n"), 0o644); err != nil {
		log.Fatal(err)
	}
	waitReady(*base)

	var exchanges []Exchange
	for _, s := range script() {
		ex, err := run(*base, *dir, s)
		if err != nil {
			log.Fatalf("%s: %v", s.name, err)
		}
		log.Printf("%-60s %d", s.name, ex.Response.Status)
		if s.record {
			exchanges = append(exchanges, ex)
		}
	}
	b, err := json.MarshalIndent(exchanges, "", "  ")
	if err != nil {
		log.Fatal(err)
	}
	// Keep "<", ">" and "&" readable in the file (MarshalIndent escapes them).
	b = bytes.ReplaceAll(b, []byte(`\u003c`), []byte("<"))
	b = bytes.ReplaceAll(b, []byte(`\u003e`), []byte(">"))
	b = bytes.ReplaceAll(b, []byte(`\u0026`), []byte("&"))
	if err := os.WriteFile(*out, append(b, '\n'), 0o644); err != nil {
		log.Fatal(err)
	}
	log.Printf("wrote %d exchanges to %s", len(exchanges), *out)
}

func waitReady(base string) {
	for i := 0; i < 240; i++ {
		resp, err := http.Get(base + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	log.Fatal("Kafka Connect did not become healthy within 2 minutes")
}

func run(base, dir string, s step) (Exchange, error) {
	body := strings.ReplaceAll(s.body, "{{dir}}", dir)
	path := strings.ReplaceAll(s.path, "{{dir}}", dir)
	ex := Exchange{Name: s.name, Poll: s.until != nil, Request: Request{Method: s.method, Path: s.path, Body: s.body}}
	ct := s.contentType
	if ct == "" && s.body != "" && !s.noContentType {
		ct = jsonType
	}
	if ct != "" {
		ex.Request.Headers = map[string]string{"Content-Type": ct}
	}
	for attempt := 0; ; attempt++ {
		var rd io.Reader
		if s.body != "" {
			rd = strings.NewReader(body)
		}
		req, err := http.NewRequest(s.method, base+path, rd)
		if err != nil {
			return ex, err
		}
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		req.Header.Set("Accept", jsonType)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return ex, err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return ex, err
		}
		text := strings.ReplaceAll(string(b), dir, "{{dir}}")
		ex.Response = Response{Status: resp.StatusCode, Body: text}
		for _, h := range []string{"Content-Type", "Location"} {
			if v := resp.Header.Get(h); v != "" {
				if ex.Response.Headers == nil {
					ex.Response.Headers = map[string]string{}
				}
				ex.Response.Headers[h] = strings.Replace(v, base, "http://{{host}}", 1)
			}
		}
		if s.until == nil || s.until(resp.StatusCode, text) {
			return ex, nil
		}
		if attempt >= 120 {
			return ex, fmt.Errorf("condition not met after 60s; last answer %d %s", resp.StatusCode, text)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// Conditions for polled steps.

func has(subs ...string) func(int, string) bool {
	return func(code int, body string) bool {
		if code != 200 {
			return false
		}
		for _, s := range subs {
			if !strings.Contains(body, s) {
				return false
			}
		}
		return true
	}
}

func lacks(sub string) func(int, string) bool {
	return func(code int, body string) bool { return code == 200 && !strings.Contains(body, sub) }
}

func all(fs ...func(int, string) bool) func(int, string) bool {
	return func(code int, body string) bool {
		for _, f := range fs {
			if !f(code, body) {
				return false
			}
		}
		return true
	}
}

// running: the connector and every task RUNNING, at least one task.
func running(code int, body string) bool {
	var st struct {
		Connector struct{ State string }
		Tasks     []struct{ State string }
	}
	if code != 200 || json.Unmarshal([]byte(body), &st) != nil || st.Connector.State != "RUNNING" || len(st.Tasks) == 0 {
		return false
	}
	for _, t := range st.Tasks {
		if t.State != "RUNNING" {
			return false
		}
	}
	return true
}

func state(want string, tasks int) func(int, string) bool {
	return func(code int, body string) bool {
		var st struct {
			Connector struct{ State string }
			Tasks     []struct{ State string }
		}
		if code != 200 || json.Unmarshal([]byte(body), &st) != nil || st.Connector.State != want || len(st.Tasks) != tasks {
			return false
		}
		for _, t := range st.Tasks {
			if t.State != want {
				return false
			}
		}
		return true
	}
}

func script() []step {
	r := func(name, method, path, body string) step {
		return step{name: name, method: method, path: path, body: body, record: true}
	}
	poll := func(s step, until func(int, string) bool) step { s.until = until; return s }
	setup := func(s step) step { s.record = false; return s }

	src := `{"name":"src","config":{"connector.class":"FileStreamSource","file":"{{dir}}/in.txt","topic":"capture-t1","tasks.max":1}}`
	sinkCfg := `{"connector.class":"org.apache.kafka.connect.file.FileStreamSinkConnector","file":"{{dir}}/out.txt","topics":"capture-t1","tasks.max":"2"}`
	return []step{
		// The worker, plugins, empty cluster.
		r("root", "GET", "/", ""),
		r("health", "GET", "/health", ""),
		r("list connectors (none)", "GET", "/connectors", ""),
		r("list connectors expand=status (none)", "GET", "/connectors?expand=status", ""),
		r("connector plugins", "GET", "/connector-plugins", ""),
		r("connector plugins connectorsOnly=true", "GET", "/connector-plugins?connectorsOnly=true", ""),
		r("connector plugins connectorsOnly=false", "GET", "/connector-plugins?connectorsOnly=false", ""),
		r("connector plugins connectorsOnly=bogus", "GET", "/connector-plugins?connectorsOnly=bogus", ""),
		r("plugin config by alias", "GET", "/connector-plugins/FileStreamSource/config", ""),
		r("plugin config by class", "GET", "/connector-plugins/org.apache.kafka.connect.file.FileStreamSinkConnector/config", ""),
		r("plugin config of a transformation", "GET", "/connector-plugins/org.apache.kafka.connect.transforms.Filter/config", ""),
		r("plugin config of a predicate", "GET", "/connector-plugins/org.apache.kafka.connect.transforms.predicates.HasHeaderKey/config", ""),
		r("plugin config of a converter", "GET", "/connector-plugins/org.apache.kafka.connect.storage.StringConverter/config", ""),
		r("plugin config unknown plugin", "GET", "/connector-plugins/NoSuchPlugin/config", ""),
		r("validate valid config", "PUT", "/connector-plugins/FileStreamSource/config/validate",
			`{"connector.class":"FileStreamSource","name":"v","file":"{{dir}}/in.txt","topic":"capture-t1","tasks.max":"1"}`),
		r("validate by class name with errors", "PUT", "/connector-plugins/org.apache.kafka.connect.file.FileStreamSinkConnector/config/validate",
			`{"connector.class":"org.apache.kafka.connect.file.FileStreamSinkConnector","name":"v","tasks.max":"x"}`),
		r("validate connector.class mismatch", "PUT", "/connector-plugins/FileStreamSource/config/validate",
			`{"connector.class":"FileStreamSink","name":"v","topics":"t"}`),
		r("validate without connector.class", "PUT", "/connector-plugins/FileStreamSource/config/validate", `{"name":"v"}`),
		r("validate unknown plugin", "PUT", "/connector-plugins/NoSuch/config/validate", `{"connector.class":"NoSuch","name":"v"}`),
		r("validate malformed json", "PUT", "/connector-plugins/FileStreamSource/config/validate", `{"name":`),

		// Create.
		r("create source (numeric value coerced)", "POST", "/connectors", src),
		r("create source again (conflict)", "POST", "/connectors", src),
		r("create invalid config", "POST", "/connectors",
			`{"name":"bad","config":{"connector.class":"FileStreamSink","tasks.max":"x"}}`),
		r("create name mismatch", "POST", "/connectors",
			`{"name":"a","config":{"name":"b","connector.class":"FileStreamSink","topics":"capture-t1"}}`),
		r("create unknown class", "POST", "/connectors",
			`{"name":"nope","config":{"connector.class":"com.example.NoSuchConnector"}}`),
		r("create without config", "POST", "/connectors", `{"name":"noconfig"}`),
		r("create malformed json", "POST", "/connectors", `{"name":"x",`),
		r("create non-object body", "POST", "/connectors", `[1,2]`),
		r("create config value not a string", "POST", "/connectors",
			`{"name":"x","config":{"connector.class":"FileStreamSink","topics":{"a":1}}}`),
		r("create bad initial_state", "POST", "/connectors",
			`{"name":"x","config":{"connector.class":"FileStreamSink","topics":"capture-t1"},"initial_state":"SLEEPING"}`),
		{name: "create without content type", method: "POST", path: "/connectors", body: src, noContentType: true, record: true},
		{name: "create with text/plain", method: "POST", path: "/connectors", body: src, contentType: "text/plain", record: true},
		r("create paused sink", "POST", "/connectors",
			`{"name":"sink-paused","config":{"connector.class":"FileStreamSink","file":"{{dir}}/paused.txt","topics":"capture-t1"},"initial_state":"PAUSED"}`),
		r("create stopped sink (lower-case initial_state)", "POST", "/connectors",
			`{"name":"sink-stopped","config":{"connector.class":"FileStreamSink","file":"{{dir}}/stopped.txt","topics":"capture-t1"},"initial_state":"stopped"}`),

		// Read.
		poll(r("source status running", "GET", "/connectors/src/status", ""), running),
		poll(r("paused sink status", "GET", "/connectors/sink-paused/status", ""), state("PAUSED", 0)),
		poll(r("stopped sink status", "GET", "/connectors/sink-stopped/status", ""), state("STOPPED", 0)),
		r("list connectors", "GET", "/connectors", ""),
		r("list connectors expand=status", "GET", "/connectors?expand=status", ""),
		r("list connectors expand=info", "GET", "/connectors?expand=info", ""),
		r("list connectors expand=status&expand=info", "GET", "/connectors?expand=status&expand=info", ""),
		r("list connectors expand=bogus", "GET", "/connectors?expand=bogus", ""),
		r("connector info", "GET", "/connectors/src", ""),
		r("connector info trailing slash", "GET", "/connectors/src/", ""),
		r("connector config", "GET", "/connectors/src/config", ""),
		r("connector tasks", "GET", "/connectors/src/tasks", ""),
		r("stopped connector tasks", "GET", "/connectors/sink-stopped/tasks", ""),
		r("task status", "GET", "/connectors/src/tasks/0/status", ""),
		r("task status unknown task", "GET", "/connectors/src/tasks/7/status", ""),
		r("task status non-numeric task", "GET", "/connectors/src/tasks/zero/status", ""),
		poll(r("connector topics", "GET", "/connectors/src/topics", ""), has("capture-t1")),
		poll(r("source offsets", "GET", "/connectors/src/offsets", ""), has(`"position":12`)),
		r("unknown connector info", "GET", "/connectors/nope", ""),
		r("unknown connector config", "GET", "/connectors/nope/config", ""),
		r("unknown connector status", "GET", "/connectors/nope/status", ""),
		r("unknown connector tasks", "GET", "/connectors/nope/tasks", ""),
		r("unknown connector task status", "GET", "/connectors/nope/tasks/0/status", ""),
		r("unknown connector topics", "GET", "/connectors/nope/topics", ""),
		r("unknown connector offsets", "GET", "/connectors/nope/offsets", ""),

		// Change configs.
		r("put config update", "PUT", "/connectors/src/config",
			`{"connector.class":"FileStreamSource","file":"{{dir}}/in.txt","topic":"capture-t1","tasks.max":"1","batch.size":"500"}`),
		r("put config create", "PUT", "/connectors/sink/config", sinkCfg),
		r("put config name mismatch", "PUT", "/connectors/sink/config",
			`{"name":"other","connector.class":"FileStreamSink","topics":"capture-t1"}`),
		r("put config invalid", "PUT", "/connectors/sink/config",
			`{"connector.class":"FileStreamSink","topics":"capture-t1","tasks.max":"-3"}`),
		r("put config malformed json", "PUT", "/connectors/sink/config", `{"topics":`),
		r("patch config", "PATCH", "/connectors/src/config", `{"batch.size":"1000"}`),
		r("patch config removes a key with null", "PATCH", "/connectors/src/config", `{"batch.size":null}`),
		r("patch config unknown connector", "PATCH", "/connectors/nope/config", `{"batch.size":"1"}`),
		r("patch config invalid", "PATCH", "/connectors/src/config", `{"tasks.max":"zero"}`),
		poll(r("sink status running", "GET", "/connectors/sink/status", ""), all(running, has(`"id":1`))),
		r("sink tasks", "GET", "/connectors/sink/tasks", ""),

		// Lifecycle.
		r("pause", "PUT", "/connectors/src/pause", ""),
		poll(r("status paused", "GET", "/connectors/src/status", ""), state("PAUSED", 1)),
		r("pause unknown connector", "PUT", "/connectors/nope/pause", ""),
		r("resume", "PUT", "/connectors/src/resume", ""),
		poll(r("status resumed", "GET", "/connectors/src/status", ""), running),
		r("resume unknown connector", "PUT", "/connectors/nope/resume", ""),
		r("restart connector only", "POST", "/connectors/src/restart", ""),
		poll(setup(r("wait running after restart", "GET", "/connectors/src/status", "")), running),
		r("restart with tasks", "POST", "/connectors/src/restart?includeTasks=true", ""),
		poll(setup(r("wait running after restart with tasks", "GET", "/connectors/src/status", "")), running),
		r("restart only failed", "POST", "/connectors/src/restart?includeTasks=true&onlyFailed=true", ""),
		r("restart connector onlyFailed (nothing failed)", "POST", "/connectors/src/restart?onlyFailed=true", ""),
		r("restart unknown connector", "POST", "/connectors/nope/restart", ""),
		r("restart unknown connector with tasks", "POST", "/connectors/nope/restart?includeTasks=true", ""),
		poll(setup(r("wait running before task restart", "GET", "/connectors/src/status", "")), running),
		r("restart task", "POST", "/connectors/src/tasks/0/restart", ""),
		r("restart unknown task", "POST", "/connectors/src/tasks/9/restart", ""),
		r("restart task of unknown connector", "POST", "/connectors/nope/tasks/0/restart", ""),
		poll(setup(r("wait running after task restart", "GET", "/connectors/src/status", "")), running),
		r("reset topics", "PUT", "/connectors/src/topics/reset", ""),
		poll(r("topics after reset", "GET", "/connectors/src/topics", ""), lacks("capture-t1")),
		r("reset topics unknown connector", "PUT", "/connectors/nope/topics/reset", ""),

		// Offsets (KIP-875).
		r("alter offsets while running", "PATCH", "/connectors/src/offsets",
			`{"offsets":[{"partition":{"filename":"{{dir}}/in.txt"},"offset":{"position":6}}]}`),
		r("reset offsets while running", "DELETE", "/connectors/src/offsets", ""),
		r("stop", "PUT", "/connectors/src/stop", ""),
		poll(r("status stopped", "GET", "/connectors/src/status", ""), state("STOPPED", 0)),
		r("stop unknown connector", "PUT", "/connectors/nope/stop", ""),
		r("offsets of stopped source", "GET", "/connectors/src/offsets", ""),
		r("alter offsets without offsets", "PATCH", "/connectors/src/offsets", `{"offsets":[]}`),
		r("alter offsets null offsets", "PATCH", "/connectors/src/offsets", `{}`),
		r("alter offsets malformed json", "PATCH", "/connectors/src/offsets", `{"offsets":[`),
		r("alter source offsets", "PATCH", "/connectors/src/offsets",
			`{"offsets":[{"partition":{"filename":"{{dir}}/in.txt"},"offset":{"position":6}}]}`),
		r("offsets after alter", "GET", "/connectors/src/offsets", ""),
		r("alter offsets unknown connector", "PATCH", "/connectors/nope/offsets",
			`{"offsets":[{"partition":{"a":"b"},"offset":{"c":1}}]}`),
		r("reset source offsets", "DELETE", "/connectors/src/offsets", ""),
		r("offsets after reset", "GET", "/connectors/src/offsets", ""),
		r("reset offsets unknown connector", "DELETE", "/connectors/nope/offsets", ""),
		r("stop sink", "PUT", "/connectors/sink/stop", ""),
		poll(setup(r("wait sink stopped", "GET", "/connectors/sink/status", "")), state("STOPPED", 0)),
		r("alter sink offsets", "PATCH", "/connectors/sink/offsets",
			`{"offsets":[{"partition":{"kafka_topic":"capture-t1","kafka_partition":0},"offset":{"kafka_offset":1}}]}`),
		r("sink offsets after alter", "GET", "/connectors/sink/offsets", ""),
		r("alter sink offsets bad partition", "PATCH", "/connectors/sink/offsets",
			`{"offsets":[{"partition":{"topic":"capture-t1"},"offset":{"kafka_offset":1}}]}`),
		r("reset sink offsets", "DELETE", "/connectors/sink/offsets", ""),
		r("resume stopped connector", "PUT", "/connectors/sink/resume", ""),
		poll(setup(r("wait sink running again", "GET", "/connectors/sink/status", "")), all(running, has(`"id":1`))),

		// A failing task: FileStreamSink cannot open a file in a missing directory.
		r("create failing sink", "POST", "/connectors",
			`{"name":"sink-fail","config":{"connector.class":"FileStreamSink","file":"{{dir}}/missing/out.txt","topics":"capture-t1"}}`),
		poll(r("failing sink status", "GET", "/connectors/sink-fail/status", ""), has(`"state":"FAILED"`)),
		r("failed task status", "GET", "/connectors/sink-fail/tasks/0/status", ""),
		r("restart failed tasks", "POST", "/connectors/sink-fail/restart?includeTasks=true&onlyFailed=true", ""),
		r("delete failing sink", "DELETE", "/connectors/sink-fail", ""),

		// Delete.
		r("delete connector", "DELETE", "/connectors/src", ""),
		poll(r("deleted connector info", "GET", "/connectors/src", ""), func(code int, _ string) bool { return code == 404 }),
		r("delete unknown connector", "DELETE", "/connectors/src", ""),
		r("list after delete", "GET", "/connectors", ""),

		// Loggers.
		r("logger root", "GET", "/admin/loggers/root", ""),
		r("logger unknown", "GET", "/admin/loggers/com.example.nothing", ""),
		r("set logger level", "PUT", "/admin/loggers/org.apache.kafka.connect.runtime.distributed", `{"level":"DEBUG"}`),
		r("logger after set", "GET", "/admin/loggers/org.apache.kafka.connect.runtime.distributed", ""),
		r("logger child after set", "GET", "/admin/loggers/org.apache.kafka.connect.runtime.distributed.DistributedHerder", ""),
		r("set new logger level", "PUT", "/admin/loggers/com.example.fresh", `{"level":"trace"}`),
		r("new logger after set", "GET", "/admin/loggers/com.example.fresh", ""),
		r("set logger invalid level", "PUT", "/admin/loggers/org.apache.kafka.connect", `{"level":"LOUD"}`),
		r("set logger missing level", "PUT", "/admin/loggers/org.apache.kafka.connect", `{"lvl":"INFO"}`),
		r("set logger cluster scope", "PUT", "/admin/loggers/com.example.cluster?scope=cluster", `{"level":"WARN"}`),
		r("set logger unknown scope", "PUT", "/admin/loggers/com.example.scoped?scope=galaxy", `{"level":"ERROR"}`),
		r("set logger malformed json", "PUT", "/admin/loggers/org.apache.kafka.connect", `{"level"`),
		r("list loggers", "GET", "/admin/loggers", ""),

		// Unknown paths and methods.
		r("unknown path", "GET", "/no/such/path", ""),
		r("method not allowed on /connectors", "DELETE", "/connectors", ""),
		r("method not allowed on pause", "POST", "/connectors/sink/pause", ""),
		r("method not allowed on root", "POST", "/", `{}`),
	}
}
