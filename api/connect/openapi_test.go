package connectapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fjordhq/fjord/connect/herder"
)

type docShape struct {
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Schemas map[string]struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"schemas"`
	} `json:"components"`
}

// TestOpenAPIMatchesRoutes: every route the router serves is in the
// document and every operation of the document is served.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	var doc docShape
	if err := json.Unmarshal(OpenAPI(), &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	var inDoc []string
	for path, ops := range doc.Paths {
		for method := range ops {
			inDoc = append(inDoc, strings.ToUpper(method)+" "+path)
		}
	}
	var served []string
	for _, r := range New(newFakeHerder(), Options{}).Routes() {
		served = append(served, r[0]+" "+r[1])
	}
	slices.Sort(inDoc)
	slices.Sort(served)
	for _, s := range served {
		if !slices.Contains(inDoc, s) {
			t.Errorf("route %s is not in openapi.json", s)
		}
	}
	for _, d := range inDoc {
		if !slices.Contains(served, d) {
			t.Errorf("openapi.json describes %s, which is not served", d)
		}
	}
	if len(served) < 29 {
		t.Errorf("only %d routes", len(served))
	}
}

// TestOpenAPISchemasMatchEntities: the document's schemas list the JSON
// fields of the entities the handlers write.
func TestOpenAPISchemasMatchEntities(t *testing.T) {
	var doc docShape
	if err := json.Unmarshal(OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	entities := map[string]any{
		"ErrorMessage": herder.Error{}, "ServerInfo": ServerInfo{}, "WorkerStatus": WorkerStatus{},
		"ConnectorTaskId": herder.TaskID{}, "ConnectorInfo": herder.ConnectorInfo{}, "ConnectorState": herder.ConnectorState{},
		"TaskState": herder.TaskState{}, "ConnectorStateInfo": herder.ConnectorStateInfo{}, "TaskInfo": herder.TaskInfo{},
		"ActiveTopicsInfo": ActiveTopics{}, "ConnectorOffset": herder.ConnectorOffset{}, "ConnectorOffsets": herder.ConnectorOffsets{},
		"Message": Message{}, "PluginInfo": PluginInfo{}, "ConfigKeyInfo": herder.ConfigKeyInfo{},
		"ConfigValueInfo": herder.ConfigValueInfo{}, "ConfigInfo": herder.ConfigInfo{}, "ConfigInfos": herder.ConfigInfos{},
		"LoggerLevel": LoggerLevel{}, "CreateConnectorRequest": createRequest{},
	}
	for name, v := range entities {
		s, ok := doc.Components.Schemas[name]
		if !ok {
			t.Errorf("schema %s missing", name)
			continue
		}
		var fields []string
		rt := reflect.TypeOf(v)
		for i := range rt.NumField() {
			tag, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
			if tag != "" && tag != "-" {
				fields = append(fields, tag)
			}
		}
		var props []string
		for p := range s.Properties {
			props = append(props, p)
		}
		slices.Sort(fields)
		slices.Sort(props)
		if !slices.Equal(fields, props) {
			t.Errorf("schema %s has %v, the entity writes %v", name, props, fields)
		}
	}
	// Every $ref resolves.
	var refs []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if r, ok := x["$ref"].(string); ok {
				refs = append(refs, r)
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	var all any
	json.Unmarshal(OpenAPI(), &all)
	walk(all)
	for _, r := range refs {
		name, ok := strings.CutPrefix(r, "#/components/schemas/")
		if _, found := doc.Components.Schemas[name]; !ok || !found {
			t.Errorf("unresolved $ref %s", r)
		}
	}
}

func TestOpenAPIServed(t *testing.T) {
	rec := httptest.NewRecorder()
	New(newFakeHerder(), Options{}).ServeHTTP(rec, httptest.NewRequest("GET", "/openapi.json", nil))
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" || !json.Valid(rec.Body.Bytes()) {
		t.Fatalf("GET /openapi.json: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
}
