package connectapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/fjordhq/fjord/api"
	"github.com/fjordhq/fjord/connect/herder"
)

// do sends one request to h and returns status, headers and body.
func do(t *testing.T, h http.Handler, method, path, body string) (int, http.Header, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, rd)
	req.Host = "worker.test:8083"
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Header(), rec.Body.String()
}

func expect(t *testing.T, h http.Handler, method, path, body string, wantCode int, wantBody string) http.Header {
	t.Helper()
	code, hdr, got := do(t, h, method, path, body)
	if code != wantCode || got != wantBody {
		t.Errorf("%s %s:\n got  %d %s\n want %d %s", method, path, code, got, wantCode, wantBody)
	}
	return hdr
}

const srcConfig = `{"connector.class":"FileStreamSource","file":"/dev/null","topic":"t"}`

func newTestServer(t *testing.T) (*fakeHerder, *Server) {
	f := newFakeHerder()
	return f, New(f, Options{Commit: "abc", Plugins: RegistryPlugins{}})
}

func TestRootAndHealth(t *testing.T) {
	f, s := newTestServer(t)
	expect(t, s, "GET", "/", "", 200, `{"version":"4.4.0","commit":"abc","kafka_cluster_id":"fake-cluster-id"}`)
	expect(t, s, "GET", "/health", "", 200, `{"status":"healthy","message":"Worker has completed startup and is ready to handle requests."}`)
	f.healthy = fmt.Errorf("joining the group: %w", ErrStarting)
	expect(t, s, "GET", "/health", "", 503, `{"status":"starting","message":"Worker is still starting up. joining the group: worker is starting"}`)
	f.healthy = ErrStarting
	expect(t, s, "GET", "/health", "", 503, `{"status":"starting","message":"Worker is still starting up."}`)
	f.healthy = errors.New("the herder thread is stuck in rebalance")
	expect(t, s, "GET", "/health", "", 500, `{"status":"unhealthy","message":"Worker was unable to handle this request and may be unable to handle other requests. the herder thread is stuck in rebalance"}`)
}

func TestConnectorLifecycle(t *testing.T) {
	_, s := newTestServer(t)
	hdr := expect(t, s, "POST", "/connectors", `{"name":" a ","config":`+srcConfig+`}`, 201,
		`{"name":"a","config":{"connector.class":"FileStreamSource","file":"/dev/null","name":"a","topic":"t"},"tasks":[],"type":"source"}`)
	if got := hdr.Get("Location"); got != "http://worker.test:8083/connectors/a" {
		t.Errorf("Location %q", got)
	}
	expect(t, s, "POST", "/connectors", `{"name":"a","config":`+srcConfig+`}`, 409, `{"error_code":409,"message":"Connector a already exists"}`)
	expect(t, s, "GET", "/connectors", "", 200, `["a"]`)
	expect(t, s, "GET", "/connectors/a/status", "", 200,
		`{"name":"a","connector":{"state":"RUNNING","worker_id":"127.0.0.1:8083","version":"4.4.0"},"tasks":[{"id":0,"state":"RUNNING","worker_id":"127.0.0.1:8083","version":"4.4.0"}],"type":"source"}`)
	expect(t, s, "GET", "/connectors?expand=info&expand=status", "", 200,
		`{"a":{"status":{"name":"a","connector":{"state":"RUNNING","worker_id":"127.0.0.1:8083","version":"4.4.0"},"tasks":[{"id":0,"state":"RUNNING","worker_id":"127.0.0.1:8083","version":"4.4.0"}],"type":"source"},`+
			`"info":{"name":"a","config":{"connector.class":"FileStreamSource","file":"/dev/null","name":"a","topic":"t"},"tasks":[{"connector":"a","task":0}],"type":"source"}}}`)
	expect(t, s, "GET", "/connectors?expand=nothing", "", 200, `{"a":{}}`)
	expect(t, s, "GET", "/connectors/a/tasks/0/status", "", 200, `{"id":0,"state":"RUNNING","worker_id":"127.0.0.1:8083","version":"4.4.0"}`)
	expect(t, s, "GET", "/connectors/a/tasks/-1/status", "", 404, `{"error_code":404,"message":"No status found for task a--1"}`)
	expect(t, s, "GET", "/connectors/a/tasks/x/status", "", 404, `{"error_code":404,"message":"HTTP 404 Not Found"}`)
	expect(t, s, "POST", "/connectors/a/tasks/99999999999/restart", "", 404, `{"error_code":404,"message":"HTTP 404 Not Found"}`)
	expect(t, s, "PUT", "/connectors/a/config", `{"connector.class":"FileStreamSource","topic":"u","batch.size":10}`, 200,
		`{"name":"a","config":{"batch.size":"10","connector.class":"FileStreamSource","name":"a","topic":"u"},"tasks":[{"connector":"a","task":0}],"type":"source"}`)
	expect(t, s, "PATCH", "/connectors/a/config", `{"batch.size":null,"topic":"v"}`, 200,
		`{"name":"a","config":{"connector.class":"FileStreamSource","name":"a","topic":"v"},"tasks":[{"connector":"a","task":0}],"type":"source"}`)
	expect(t, s, "GET", "/connectors/a/config", "", 200, `{"connector.class":"FileStreamSource","name":"a","topic":"v"}`)
	expect(t, s, "GET", "/connectors/a/topics", "", 200, `{"a":{"topics":["v"]}}`)
	expect(t, s, "PUT", "/connectors/a/topics/reset", "", 202, ``)
	expect(t, s, "GET", "/connectors/a/topics", "", 200, `{"a":{"topics":[]}}`)
	expect(t, s, "PUT", "/connectors/a/pause", "", 202, ``)
	expect(t, s, "PUT", "/connectors/a/resume", "", 202, ``)
	expect(t, s, "POST", "/connectors/a/restart", "", 204, ``)
	expect(t, s, "POST", "/connectors/a/restart?includeTasks=TRUE", "", 202,
		`{"name":"a","connector":{"state":"RESTARTING","worker_id":"127.0.0.1:8083","version":"4.4.0"},"tasks":[{"id":0,"state":"RESTARTING","worker_id":"127.0.0.1:8083","version":"4.4.0"}],"type":"source"}`)
	expect(t, s, "POST", "/connectors/a/tasks/0/restart", "", 204, ``)
	expect(t, s, "PUT", "/connectors/a/stop", "", 204, ``)
	expect(t, s, "GET", "/connectors/a/tasks", "", 200, `[]`)
	expect(t, s, "GET", "/connectors/a/offsets", "", 200, `{"offsets":[{"partition":{"filename":"/dev/null"},"offset":{"position":0}}]}`)
	expect(t, s, "PATCH", "/connectors/a/offsets", `{"offsets":[{"partition":{"filename":"/dev/null"},"offset":{"position":9007199254740993}}]}`, 200,
		`{"message":"The offsets for this connector have been altered successfully"}`)
	// Integers keep every digit (float64 would round this one).
	expect(t, s, "GET", "/connectors/a/offsets", "", 200, `{"offsets":[{"partition":{"filename":"/dev/null"},"offset":{"position":9007199254740993}}]}`)
	expect(t, s, "DELETE", "/connectors/a/offsets", "", 200, `{"message":"The offsets for this connector have been reset successfully"}`)
	expect(t, s, "DELETE", "/connectors/a", "", 204, ``)
	expect(t, s, "DELETE", "/connectors/a", "", 404, `{"error_code":404,"message":"Connector a not found"}`)
	expect(t, s, "GET", "/connectors", "", 200, `[]`)
}

func TestCreateWithInitialStateAndPutCreates(t *testing.T) {
	f, s := newTestServer(t)
	expect(t, s, "POST", "/connectors", `{"name":"p","config":`+srcConfig+`,"initial_state":"paused"}`, 201,
		`{"name":"p","config":{"connector.class":"FileStreamSource","file":"/dev/null","name":"p","topic":"t"},"tasks":[],"type":"source"}`)
	if st := f.connectors["p"].target; st != herder.TargetPaused {
		t.Errorf("initial state %q, want PAUSED", st)
	}
	hdr := expect(t, s, "PUT", "/connectors/with%2Fslash/config", srcConfig, 201,
		`{"name":"with/slash","config":{"connector.class":"FileStreamSource","file":"/dev/null","name":"with/slash","topic":"t"},"tasks":[],"type":"source"}`)
	if got := hdr.Get("Location"); got != "http://worker.test:8083/connectors/with%2Fslash" {
		t.Errorf("Location %q", got)
	}
	expect(t, s, "GET", "/connectors/with%2Fslash/config", "", 200, `{"connector.class":"FileStreamSource","file":"/dev/null","name":"with/slash","topic":"t"}`)
	expect(t, s, "GET", "/connectors/100%25/config", "", 404, `{"error_code":404,"message":"Connector 100% not found"}`)
}

func TestBadInput(t *testing.T) {
	_, s := newTestServer(t)
	for _, c := range []struct{ method, path, body, msg string }{
		{"POST", "/connectors", `{"name":`, `Invalid request body: unexpected end of JSON input; expected {\"name\": ..., \"config\": {...}}`},
		{"POST", "/connectors", `[1]`, `Invalid request body: not a JSON object; expected {\"name\": ..., \"config\": {...}}`},
		{"POST", "/connectors", `{"name":"x"}`, `Invalid request body: missing \"config\"; expected {\"name\": ..., \"config\": {...}}`},
		{"POST", "/connectors", `{"name":"x","config":{"a":{"b":1}}}`, `Invalid connector config: value of \"a\": expected a string, got an object; expected a JSON object of strings`},
		{"POST", "/connectors", `{"name":"x","config":` + srcConfig + `,"initial_state":"SLEEPING"}`, `Invalid initial_state \"SLEEPING\": must be one of RUNNING, PAUSED, STOPPED`},
		{"POST", "/connectors", `{"name":"a","config":{"name":"b"}}`, `Connector name configuration (b) doesn't match connector name in the URL (a)`},
		{"PUT", "/connectors/a/config", `[]`, `Invalid connector config: cannot use a JSON array here, expected an object (at byte 1); expected a JSON object of strings`},
		{"PUT", "/connectors/a/config", `null`, `Invalid connector config: expected a JSON object of strings`},
		{"PUT", "/connectors/a/config", `{} {}`, `Invalid connector config: unexpected data after the JSON value; expected a JSON object of strings`},
		{"PATCH", "/connectors/a/config", `{"a":[1]}`, `Invalid connector config: value of \"a\": expected a string, got an array; expected a JSON object of strings`},
		{"PATCH", "/connectors/a/offsets", `{"offsets":[]}`, `Partitions / offsets need to be provided for an alter offsets request`},
		{"PATCH", "/connectors/a/offsets", `{}`, `Partitions / offsets need to be provided for an alter offsets request`},
		{"PATCH", "/connectors/a/offsets", `{"offsets":{}}`, `Invalid offsets: cannot use a JSON object for \"offsets\" (at byte 12); expected {\"offsets\": [{\"partition\": {...}, \"offset\": {...}}]}`},
		{"PUT", "/connector-plugins/FileStreamSource/config/validate", `{"connector.class":"FileStreamSink"}`, `Included connector type FileStreamSink does not match request type FileStreamSource`},
		{"PUT", "/admin/loggers/x", `{"level":null}`, `Desired 'level' parameter was not specified in request.`},
		{"PUT", "/admin/loggers/x", `{"level":{}}`, `Invalid level: expected a string, got an object`},
	} {
		expect(t, s, c.method, c.path, c.body, 400, `{"error_code":400,"message":"`+c.msg+`"}`)
	}
	// 415 when the body is not JSON.
	req := httptest.NewRequest("POST", "/connectors", strings.NewReader(`{}`))
	req.Header.Set("Content-Type", "text/plain")
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != 415 || rec.Body.String() != `{"error_code":415,"message":"HTTP 415 Unsupported Media Type"}` {
		t.Errorf("text/plain body: %d %s", rec.Code, rec.Body)
	}
	req = httptest.NewRequest("PUT", "/connectors/a/config", strings.NewReader(`{}`))
	req.Header.Set("Content-Type", "application/json; charset=UTF-8")
	rec = httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code == 415 {
		t.Errorf("application/json with a charset refused")
	}
}

// TestNullConfigValues: nulls in a config are Kafka's per-key validation
// errors, counted with the others.
func TestNullConfigValues(t *testing.T) {
	_, s := newTestServer(t)
	expect(t, s, "POST", "/connectors", `{"name":"n","config":{"connector.class":"FileStreamSource","topic":null,"name":null}}`, 400,
		`{"error_code":400,"message":"Connector configuration is invalid and contains the following 2 error(s):\nMissing required configuration \"topic\" which has no default value.\nNull value can not be supplied as the configuration value.\nYou can also find the above list of errors at the endpoint `+"`/connector-plugins/{connectorType}/config/validate`"+`"}`)
	_, _, body := do(t, s, "PUT", "/connector-plugins/FileStreamSource/config/validate", `{"connector.class":"FileStreamSource","topic":"t","file":null}`)
	if !strings.Contains(body, `"error_count":1`) || !strings.Contains(body, `"value":{"name":"file","value":null,"recommended_values":[],"errors":["Null value can not be supplied as the configuration value."],"visible":true}`) {
		t.Errorf("validate with a null key: %s", body)
	}
	// A null key the validation does not know is still counted.
	expect(t, s, "PUT", "/connectors/n/config", `{"connector.class":"FileStreamSource","topic":"t","other":null}`, 400,
		`{"error_code":400,"message":"Connector configuration is invalid and contains the following 1 error(s):\nNull value can not be supplied as the configuration value.\nYou can also find the above list of errors at the endpoint `+"`/connector-plugins/{connectorType}/config/validate`"+`"}`)
}

func TestUnknownPathsAndMethods(t *testing.T) {
	_, s := newTestServer(t)
	for _, c := range []struct {
		method, path string
		code         int
	}{
		{"GET", "/nope", 404}, {"GET", "/connectors/a/b/c/d/e", 404}, {"DELETE", "/connectors", 405},
		{"POST", "/connectors/a/pause", 405}, {"POST", "/", 405}, {"GET", "/admin/loggers/a/b", 404},
	} {
		code, hdr, body := do(t, s, c.method, c.path, "")
		want := fmt.Sprintf(`{"error_code":%d,"message":"HTTP %d %s"}`, c.code, c.code, http.StatusText(c.code))
		if code != c.code || body != want || hdr.Get("Content-Type") != "" {
			t.Errorf("%s %s: %d %q %s, want %d %s without a Content-Type", c.method, c.path, code, hdr.Get("Content-Type"), body, c.code, want)
		}
	}
	expect(t, s, "GET", "/connectors/", "", 200, `[]`)
}

// TestHerderErrors: *herder.Error keeps its code; other errors are 500
// with their text; a timeout is Kafka's "Request timed out".
func TestHerderErrors(t *testing.T) {
	f, s := newTestServer(t)
	f.fail = herder.ErrRebalancing
	expect(t, s, "GET", "/connectors", "", 409, `{"error_code":409,"message":"Cannot complete request momentarily due to stale configuration (typically caused by a concurrent config change)"}`)
	f.fail = fmt.Errorf("read config topic: %w", errors.New("broker unreachable"))
	expect(t, s, "GET", "/connectors/a", "", 500, `{"error_code":500,"message":"read config topic: broker unreachable"}`)
	f.fail = fmt.Errorf("wait for the herder: %w", context.DeadlineExceeded)
	expect(t, s, "DELETE", "/connectors/a", "", 500, `{"error_code":500,"message":"Request timed out"}`)
	f.fail = nil

	s = New(slowHerder{f}, Options{RequestTimeout: 20 * time.Millisecond})
	expect(t, s, "GET", "/connectors", "", 500, `{"error_code":500,"message":"Request timed out"}`)
}

// slowHerder blocks Connectors until the request's deadline.
type slowHerder struct{ *fakeHerder }

func (s slowHerder) Connectors(ctx context.Context) ([]string, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestTopicTrackingDisabled(t *testing.T) {
	f := newFakeHerder()
	s := New(f, Options{TopicTrackingDisabled: true})
	expect(t, s, "GET", "/connectors/a/topics", "", 403, `{"error_code":403,"message":"Topic tracking is disabled."}`)
	expect(t, s, "PUT", "/connectors/a/topics/reset", "", 403, `{"error_code":403,"message":"Topic tracking is disabled."}`)
	s = New(f, Options{TopicTrackingResetDisabled: true})
	expect(t, s, "GET", "/connectors/a/topics", "", 200, `{"a":{"topics":[]}}`)
	expect(t, s, "PUT", "/connectors/a/topics/reset", "", 403, `{"error_code":403,"message":"Topic tracking reset is disabled."}`)
}

// TestNoHTMLEscaping: "<", ">" and "&" are written as they are, as
// Jackson does.
func TestNoHTMLEscaping(t *testing.T) {
	_, s := newTestServer(t)
	expect(t, s, "PUT", "/connectors/a%26b/config", `{"connector.class":"FileStreamSource","topic":"<t>"}`, 201,
		`{"name":"a&b","config":{"connector.class":"FileStreamSource","name":"a&b","topic":"<t>"},"tasks":[],"type":"source"}`)
}

// TestMount: the API on a router shared with other routes.
func TestMount(t *testing.T) {
	r := chi.NewRouter()
	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })
	Mount(r, newFakeHerder(), Options{})
	expect(t, r, "GET", "/healthz", "", 200, "ok")
	expect(t, r, "GET", "/connectors", "", 200, `[]`)
	expect(t, r, "GET", "/connectors/", "", 200, `[]`)
	expect(t, r, "GET", "/connectors/x/status/", "", 404, `{"error_code":404,"message":"No status found for connector x"}`)
	expect(t, r, "GET", "/nope", "", 404, `{"error_code":404,"message":"HTTP 404 Not Found"}`)
}

// TestRestartWithoutPlannedState: a herder that returns no planned state
// gets the current one reported.
func TestRestartWithoutPlannedState(t *testing.T) {
	f := newFakeHerder()
	s := New(noPlanHerder{f}, Options{})
	do(t, s, "POST", "/connectors", `{"name":"a","config":`+srcConfig+`}`)
	expect(t, s, "POST", "/connectors/a/restart?onlyFailed=true", "", 202,
		`{"name":"a","connector":{"state":"RUNNING","worker_id":"127.0.0.1:8083","version":"4.4.0"},"tasks":[{"id":0,"state":"RUNNING","worker_id":"127.0.0.1:8083","version":"4.4.0"}],"type":"source"}`)
}

type noPlanHerder struct{ *fakeHerder }

func (n noPlanHerder) RestartConnector(ctx context.Context, name string, includeTasks, onlyFailed bool) (*herder.ConnectorStateInfo, error) {
	return nil, nil
}

// TestMountOnAPIServer: the wiring fjord dev uses, the API on api.Server's
// router beside /healthz and /metrics.
func TestMountOnAPIServer(t *testing.T) {
	srv := api.New(nil)
	Mount(srv.Router, newFakeHerder(), Options{})
	code, _, body := do(t, srv.Router, "GET", "/healthz", "")
	if code != 200 || !strings.Contains(body, `"status":"ok"`) {
		t.Errorf("/healthz: %d %s", code, body)
	}
	expect(t, srv.Router, "GET", "/connectors", "", 200, `[]`)
	expect(t, srv.Router, "GET", "/health", "", 200, `{"status":"healthy","message":"Worker has completed startup and is ready to handle requests."}`)
}
