// Package connecttest replays the REST exchanges captured from Kafka
// Connect 4.4 (api/connect/testdata/kafka-connect-4.4/exchanges.json)
// against an http.Handler and compares the answers, so any herder behind
// connectapi can be checked against Kafka Connect itself:
//
//	ex, _ := connecttest.Load(connecttest.GoldenPath("../../api/connect"))
//	dir := t.TempDir()
//	connecttest.PrepareDir(t, dir)
//	srv := connectapi.New(myHerder, connectapi.Options{...})
//	connecttest.Replay(t, srv, ex, connecttest.Options{Dir: dir, Poll: 30 * time.Second,
//		Skip: connecttest.SkipKafkaSpecific})
//
// The exchanges are a script: they create, change and delete connectors
// named src, sink, sink-paused, sink-stopped and sink-fail running
// FileStreamSource/FileStreamSink on files in Dir, so a real herder
// replaying them from an empty cluster reaches the states Kafka reached.
// Answers are compared as JSON with Kafka's field order, ignoring what
// differs between any two runs: worker ids, traces' text, timestamps,
// commit ids, cluster ids, the order of map-like objects and of
// GET /connectors' list.
package connecttest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Exchange is one captured request and Kafka Connect's answer.
type Exchange struct {
	Name string `json:"name"`
	// Poll marks a request the capture repeated until the worker reached
	// the answered state; a replay against an asynchronous herder does
	// the same.
	Poll     bool     `json:"poll,omitempty"`
	Request  Request  `json:"request"`
	Response Response `json:"response"`
}

// Request is the captured request; Path and Body may hold {{dir}}.
type Request struct {
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body,omitempty"`
}

// Response is Kafka Connect's answer; {{dir}} and {{host}} stand for the
// capture's directory and host.
type Response struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body"`
}

// GoldenPath is the exchanges file below the api/connect directory.
func GoldenPath(apiConnectDir string) string {
	return filepath.Join(apiConnectDir, "testdata", "kafka-connect-4.4", "exchanges.json")
}

// Load reads an exchanges file.
func Load(path string) ([]Exchange, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read exchanges: %w", err)
	}
	var ex []Exchange
	if err := json.Unmarshal(b, &ex); err != nil {
		return nil, fmt.Errorf("decode exchanges %s: %w", path, err)
	}
	return ex, nil
}

// InputFile is the source file's content at capture time (12 bytes, two
// lines: the source offsets are byte positions in it).
const InputFile = "hello\nworld\n"

// PrepareDir writes the files the script's connectors read.
func PrepareDir(t testing.TB, dir string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "in.txt"), []byte(InputFile), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Host is the Host header replayed requests carry ({{host}} in goldens).
const Host = "connect.test"

// Allowance relaxes the comparison of one exchange, for a known and
// deliberate difference from Kafka.
type Allowance struct {
	// Status, if set, is the status expected instead of Kafka's; the
	// body must then be an error body with that code and a message.
	Status int
	// MessagePrefix, if set, compares only the error message up to and
	// including it (for messages that embed run-specific text, such as
	// Kafka's plugin class loader locations).
	MessagePrefix string
	// Reason says why (shown on failure).
	Reason string
}

// Divergences are the differences Fjord's REST layer makes on purpose:
// Kafka answers malformed or mistyped JSON bodies with 500 and Jackson's
// parser message (or a NullPointerException's), Fjord with 400 and its
// own message.
var Divergences = map[string]Allowance{
	"validate malformed json":          {Status: 400, Reason: "malformed JSON is a client error"},
	"create without config":            {Status: 400, Reason: "Kafka fails with a NullPointerException"},
	"create malformed json":            {Status: 400, Reason: "malformed JSON is a client error"},
	"create non-object body":           {Status: 400, Reason: "mistyped JSON is a client error"},
	"create config value not a string": {Status: 400, Reason: "mistyped JSON is a client error"},
	"create bad initial_state":         {Status: 400, Reason: "an unknown initial_state is a client error"},
	"put config malformed json":        {Status: 400, Reason: "malformed JSON is a client error"},
	"alter offsets malformed json":     {Status: 400, Reason: "malformed JSON is a client error"},
	"set logger malformed json":        {Status: 400, Reason: "malformed JSON is a client error"},
	// Kafka lists its plugin descriptors, with class loader locations.
	"create unknown class":    {MessagePrefix: "Failed to find any class that implements Connector and which name matches com.example.NoSuchConnector", Reason: "the list of available connectors differs"},
	"validate unknown plugin": {MessagePrefix: "org.apache.kafka.connect.runtime.rest.errors.BadRequestException: Failed to find any class that implements Connector and which name matches NoSuch", Reason: "the list of available connectors differs"},
}

// KafkaSpecific names the exchanges whose answers depend on what the
// capture worker had rather than on the herder: its plugin set and
// versions, its plugins' config definitions and validation answers, and
// its log4j loggers. A replay against a real herder in a Fjord binary
// passes SkipKafkaSpecific as Options.Skip unless it primes the same
// (as api/connect's own test does).
var KafkaSpecific = map[string]bool{
	"connector plugins": true, "connector plugins connectorsOnly=true": true, "connector plugins connectorsOnly=false": true,
	"connector plugins connectorsOnly=bogus": true, "plugin config by alias": true, "plugin config by class": true,
	"plugin config of a transformation": true, "plugin config of a predicate": true, "plugin config of a converter": true,
	"validate valid config": true, "validate by class name with errors": true,
	"set logger level": true, "logger child after set": true, "list loggers": true,
}

// SkipKafkaSpecific is an Options.Skip leaving out KafkaSpecific.
func SkipKafkaSpecific(name string) bool { return KafkaSpecific[name] }

// Options configure a replay.
type Options struct {
	// Dir replaces {{dir}} (see PrepareDir).
	Dir string
	// Poll bounds how long an exchange marked Poll is retried until its
	// answer matches (0: compared once, for synchronous herders).
	Poll time.Duration
	// Allow adds allowances to Divergences (by exchange name).
	Allow map[string]Allowance
	// Skip leaves exchanges out (by name), e.g. plugin listings for a
	// binary with other plugins than the capture's worker.
	Skip func(name string) bool
}

// Replay sends every exchange's request to h in order and reports each
// answer that differs from Kafka's as a test error.
func Replay(t *testing.T, h http.Handler, exchanges []Exchange, opts Options) {
	t.Helper()
	for _, ex := range exchanges {
		if opts.Skip != nil && opts.Skip(ex.Name) {
			continue
		}
		allow, ok := opts.Allow[ex.Name]
		if !ok {
			allow = Divergences[ex.Name]
		}
		deadline := time.Now().Add(opts.Poll)
		for {
			rec := Do(h, ex, opts.Dir)
			err := Compare(ex, rec.Code, rec.Header(), rec.Body.Bytes(), opts.Dir, allow)
			if err == nil {
				break
			}
			if !ex.Poll || time.Now().After(deadline) {
				t.Errorf("%s (%s %s): %v", ex.Name, ex.Request.Method, ex.Request.Path, err)
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// Do sends an exchange's request to h.
func Do(h http.Handler, ex Exchange, dir string) *httptest.ResponseRecorder {
	var body io.Reader
	if ex.Request.Body != "" {
		body = strings.NewReader(strings.ReplaceAll(ex.Request.Body, "{{dir}}", dir))
	}
	req := httptest.NewRequest(ex.Request.Method, strings.ReplaceAll(ex.Request.Path, "{{dir}}", dir), body)
	req.Host = Host
	for k, v := range ex.Request.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Accept", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// Compare checks one answer against the exchange's.
func Compare(ex Exchange, status int, header http.Header, body []byte, dir string, allow Allowance) error {
	want := ex.Response
	if allow.Status != 0 {
		if status != allow.Status {
			return fmt.Errorf("status %d, want %d (%s; Kafka answers %d); body %s", status, allow.Status, allow.Reason, want.Status, body)
		}
		var e struct {
			Code    int    `json:"error_code"`
			Message string `json:"message"`
		}
		if err := json.Unmarshal(body, &e); err != nil || e.Code != allow.Status || e.Message == "" {
			return fmt.Errorf("want an error body with error_code %d and a message, got %s", allow.Status, body)
		}
		return nil
	}
	if status != want.Status {
		return fmt.Errorf("status %d, want %d; body %s\nwant body %s", status, want.Status, body, want.Body)
	}
	if want.Status < 300 {
		if got, w := header.Get("Content-Type"), want.Headers["Content-Type"]; got != w {
			return fmt.Errorf("Content-Type %q, want %q", got, w)
		}
	}
	if w := want.Headers["Location"]; w != "" {
		w = strings.ReplaceAll(w, "{{host}}", Host)
		if got := header.Get("Location"); got != w {
			return fmt.Errorf("Location %q, want %q", got, w)
		}
	}
	gotBody := string(body)
	if dir != "" {
		gotBody = strings.ReplaceAll(gotBody, dir, "{{dir}}")
	}
	if want.Body == "" || gotBody == "" {
		if gotBody != want.Body {
			return fmt.Errorf("body %q, want %q", gotBody, want.Body)
		}
		return nil
	}
	g, err := decodeOrdered([]byte(gotBody))
	if err != nil {
		return fmt.Errorf("answer is not JSON (%v): %s", err, gotBody)
	}
	w, err := decodeOrdered([]byte(want.Body))
	if err != nil {
		return fmt.Errorf("golden is not JSON (%v): %s", err, want.Body)
	}
	if allow.MessagePrefix != "" {
		gm, _ := field(g, "message").(string)
		if !strings.HasPrefix(gm, allow.MessagePrefix) {
			return fmt.Errorf("message %q does not start with %q", gm, allow.MessagePrefix)
		}
		return nil
	}
	c := comparer{mapAt: mapPaths(ex)}
	if err := c.compare(g, w, "$"); err != nil {
		return fmt.Errorf("%v\n got  %s\n want %s", err, gotBody, want.Body)
	}
	return nil
}

// object is a JSON object with its key order.
type object struct {
	keys []string
	vals map[string]any
}

func field(v any, k string) any {
	if o, ok := v.(*object); ok {
		return o.vals[k]
	}
	return nil
}

// decodeOrdered decodes JSON keeping object key order.
func decodeOrdered(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch d := tok.(type) {
	case json.Delim:
		switch d {
		case '{':
			o := &object{vals: map[string]any{}}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k := kt.(string)
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				if _, dup := o.vals[k]; !dup {
					o.keys = append(o.keys, k)
				}
				o.vals[k] = v
			}
			_, err := dec.Token()
			return o, err
		case '[':
			var a []any
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			_, err := dec.Token()
			if a == nil {
				a = []any{}
			}
			return a, err
		}
	}
	return tok, nil
}

// ignored are fields whose values differ between any two workers or runs;
// only their presence (and null-ness) is compared.
var ignored = map[string]bool{"worker_id": true, "trace": true, "last_modified": true, "commit": true, "kafka_cluster_id": true}

// mapPaths says which objects of an answer are maps (Java HashMaps, whose
// key order is not Kafka's choice) rather than entities (whose field order
// is), and whether a top-level list is unordered.
func mapPaths(ex Exchange) func(path string) bool {
	p := ex.Request.Path
	// GET /connectors lists a Java HashSet: any order.
	top := ex.Request.Method == "GET" && (p == "/connectors" || strings.HasPrefix(p, "/connectors?") || p == "/admin/loggers" ||
		(strings.HasPrefix(p, "/connectors/") && (strings.HasSuffix(p, "/config") || strings.HasSuffix(p, "/topics"))))
	return func(path string) bool {
		if path == "$" {
			return top
		}
		last := path[strings.LastIndexByte(path, '.')+1:]
		return last == "config" || last == "partition" || last == "offset"
	}
}

type comparer struct{ mapAt func(string) bool }

func (c comparer) compare(got, want any, path string) error {
	switch w := want.(type) {
	case *object:
		g, ok := got.(*object)
		if !ok {
			return fmt.Errorf("%s: got %s, want an object", path, kind(got))
		}
		if !c.mapAt(path) && !slices.Equal(g.keys, w.keys) {
			return fmt.Errorf("%s: keys %v, want %v (in Kafka's order)", path, g.keys, w.keys)
		}
		gk, wk := slices.Sorted(slices.Values(g.keys)), slices.Sorted(slices.Values(w.keys))
		if !slices.Equal(gk, wk) {
			return fmt.Errorf("%s: keys %v, want %v", path, gk, wk)
		}
		for _, k := range w.keys {
			p := path + "." + k
			if ignored[k] {
				if (g.vals[k] == nil) != (w.vals[k] == nil) {
					return fmt.Errorf("%s: got %v, want %v (only null-ness is compared)", p, g.vals[k], w.vals[k])
				}
				continue
			}
			if err := c.compare(g.vals[k], w.vals[k], p); err != nil {
				return err
			}
		}
		return nil
	case []any:
		g, ok := got.([]any)
		if !ok {
			return fmt.Errorf("%s: got %s, want an array", path, kind(got))
		}
		if len(g) != len(w) {
			return fmt.Errorf("%s: %d elements, want %d", path, len(g), len(w))
		}
		if path == "$" && c.mapAt("$") && allStrings(w) && allStrings(g) {
			gs, ws := sortedStrings(g), sortedStrings(w)
			if !slices.Equal(gs, ws) {
				return fmt.Errorf("%s: %v, want %v (in any order)", path, gs, ws)
			}
			return nil
		}
		for i := range w {
			if err := c.compare(g[i], w[i], fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || kind(got) != kind(want) {
		return fmt.Errorf("%s: got %v, want %v", path, got, want)
	}
	return nil
}

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case *object:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	}
	return fmt.Sprintf("%T", v)
}

func allStrings(a []any) bool {
	for _, v := range a {
		if _, ok := v.(string); !ok {
			return false
		}
	}
	return true
}

func sortedStrings(a []any) []string {
	out := make([]string, len(a))
	for i, v := range a {
		out[i] = v.(string)
	}
	slices.Sort(out)
	return out
}
