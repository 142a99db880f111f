package connecttest

import (
	"net/http"
	"strings"
	"testing"
)

func TestCompare(t *testing.T) {
	status := Exchange{Name: "s", Request: Request{Method: "GET", Path: "/connectors/a/status"}, Response: Response{Status: 200,
		Headers: map[string]string{"Content-Type": "application/json"},
		Body:    `{"name":"a","connector":{"state":"RUNNING","worker_id":"10.0.0.1:8083"},"tasks":[{"id":0,"state":"FAILED","worker_id":"w","trace":"java..."}],"type":"source"}`}}
	config := Exchange{Name: "c", Request: Request{Method: "GET", Path: "/connectors/a/config"}, Response: Response{Status: 200,
		Headers: map[string]string{"Content-Type": "application/json"}, Body: `{"file":"{{dir}}/in.txt","name":"a"}`}}
	list := Exchange{Name: "l", Request: Request{Method: "GET", Path: "/connectors"}, Response: Response{Status: 200,
		Headers: map[string]string{"Content-Type": "application/json"}, Body: `["b","a"]`}}
	created := Exchange{Name: "p", Request: Request{Method: "POST", Path: "/connectors"}, Response: Response{Status: 201,
		Headers: map[string]string{"Content-Type": "application/json", "Location": "http://{{host}}/connectors/a"}, Body: `{"name":"a"}`}}
	json := http.Header{"Content-Type": {"application/json"}}
	for _, c := range []struct {
		ex     Exchange
		status int
		header http.Header
		body   string
		fail   string // "" when the answer must match
	}{
		{status, 200, json, `{"name":"a","connector":{"state":"RUNNING","worker_id":"127.0.0.1:1"},"tasks":[{"id":0,"state":"FAILED","worker_id":"x","trace":"go..."}],"type":"source"}`, ""},
		{status, 200, json, `{"name":"a","connector":{"worker_id":"w","state":"RUNNING"},"tasks":[{"id":0,"state":"FAILED","worker_id":"x","trace":"t"}],"type":"source"}`, "in Kafka's order"},
		{status, 200, json, `{"name":"a","connector":{"state":"PAUSED","worker_id":"w"},"tasks":[{"id":0,"state":"FAILED","worker_id":"x","trace":"t"}],"type":"source"}`, "got PAUSED"},
		{status, 200, json, `{"name":"a","connector":{"state":"RUNNING","worker_id":"w"},"tasks":[{"id":0,"state":"FAILED","worker_id":"x"}],"type":"source"}`, "keys"},
		{status, 200, json, `{"name":"a","connector":{"state":"RUNNING","worker_id":"w"},"tasks":[],"type":"source"}`, "0 elements"},
		{status, 200, json, `{"name":"a","connector":{"state":"RUNNING","worker_id":"w"},"tasks":[{"id":"0","state":"FAILED","worker_id":"x","trace":"t"}],"type":"source"}`, "got 0"},
		{status, 500, json, `{}`, "status 500"},
		{status, 200, http.Header{}, `{}`, "Content-Type"},
		{config, 200, json, `{"name":"a","file":"/tmp/d/in.txt"}`, ""},
		{config, 200, json, `{"name":"a","file":"/elsewhere/in.txt"}`, "got /elsewhere"},
		{list, 200, json, `["a","b"]`, ""},
		{list, 200, json, `["a","c"]`, "in any order"},
		{created, 201, http.Header{"Content-Type": {"application/json"}, "Location": {"http://" + Host + "/connectors/a"}}, `{"name":"a"}`, ""},
		{created, 201, json, `{"name":"a"}`, "Location"},
		{created, 201, http.Header{"Content-Type": {"application/json"}, "Location": {"http://" + Host + "/connectors/a"}}, `{"name":"a"} x`, "not JSON"},
	} {
		err := Compare(c.ex, c.status, c.header, []byte(c.body), "/tmp/d", Allowance{})
		switch {
		case c.fail == "" && err != nil:
			t.Errorf("%s: %s: %v", c.ex.Name, c.body, err)
		case c.fail != "" && (err == nil || !strings.Contains(err.Error(), c.fail)):
			t.Errorf("%s: %s: got %v, want an error containing %q", c.ex.Name, c.body, err, c.fail)
		}
	}
	// Allowances.
	malformed := Exchange{Name: "m", Request: Request{Method: "POST", Path: "/connectors"}, Response: Response{Status: 500, Body: `{"error_code":500,"message":"Jackson"}`}}
	if err := Compare(malformed, 400, json, []byte(`{"error_code":400,"message":"bad JSON"}`), "", Allowance{Status: 400}); err != nil {
		t.Error(err)
	}
	if err := Compare(malformed, 500, json, []byte(`{"error_code":500,"message":"Jackson"}`), "", Allowance{Status: 400}); err == nil {
		t.Error("an allowance for 400 accepted Kafka's 500")
	}
	if err := Compare(malformed, 500, json, []byte(`{"error_code":500,"message":"Jackson says more"}`), "", Allowance{MessagePrefix: "Jackson"}); err != nil {
		t.Error(err)
	}
}

func TestGoldensLoad(t *testing.T) {
	ex, err := Load(GoldenPath(".."))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, e := range ex {
		if names[e.Name] {
			t.Errorf("exchange name %q twice", e.Name)
		}
		names[e.Name] = true
	}
	for n := range KafkaSpecific {
		if !names[n] {
			t.Errorf("KafkaSpecific lists %q, which is not an exchange", n)
		}
	}
	for n := range Divergences {
		if !names[n] {
			t.Errorf("divergence for %q, which is not an exchange", n)
		}
	}
	if len(ex) < 100 {
		t.Errorf("only %d exchanges", len(ex))
	}
}
