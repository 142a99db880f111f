package admin

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// connectPartPaths are the admin API paths the Connect part serves.
var connectPartPaths = []string{"/api/v1/schemas", "/api/v1/pipelines", "/api/v1/mirror"}

func isConnectPartPath(p string) bool {
	return slices.ContainsFunc(connectPartPaths, func(prefix string) bool { return p == prefix || strings.HasPrefix(p, prefix+"/") })
}

// TestOpenAPIConnectPart: openapi/connect.json describes exactly the
// Connect part's routes, every reference resolves in the merged
// document, and every entity lists exactly the fields the handlers write.
func TestOpenAPIConnectPart(t *testing.T) {
	frag, err := fragments.ReadFile("openapi/connect.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(frag, &doc); err != nil {
		t.Fatal(err)
	}
	var merged struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas map[string]struct {
				Properties map[string]json.RawMessage `json:"properties"`
				Required   []string                   `json:"required"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(OpenAPI(), &merged); err != nil {
		t.Fatal(err)
	}

	served := map[string]bool{}
	for _, r := range (&Server{}).Routes() {
		if !isConnectPartPath(r[1]) {
			continue
		}
		key := strings.ToLower(r[0]) + " " + r[1]
		served[key] = true
		if _, ok := doc.Paths[r[1]][strings.ToLower(r[0])]; !ok {
			t.Errorf("%s is served but not in openapi/connect.json", key)
		}
	}
	if len(served) != 4 {
		t.Errorf("%d Connect-part routes served, want 4", len(served))
	}
	for p, ops := range doc.Paths {
		for m := range ops {
			if m != "parameters" && !served[m+" "+p] {
				t.Errorf("openapi/connect.json describes %s %s, which is not served", m, p)
			}
		}
	}

	// Every $ref resolves.
	var refs []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if s, ok := e.(string); ok && k == "$ref" {
					refs = append(refs, s)
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	var raw any
	json.Unmarshal(frag, &raw)
	walk(raw)
	for _, r := range refs {
		name, ok := strings.CutPrefix(r, "#/components/schemas/")
		if _, found := merged.Components.Schemas[name]; !ok || !found {
			t.Errorf("$ref %s does not resolve in the merged document", r)
		}
	}

	// The entities' properties are the Go types' JSON fields, and every
	// field a handler always writes is required.
	for name, typ := range map[string]reflect.Type{
		"SchemaList": reflect.TypeFor[schemaList](), "SubjectSummary": reflect.TypeFor[subjectSummary](),
		"SubjectDetail": reflect.TypeFor[subjectDetail](), "SchemaVersion": reflect.TypeFor[schemaVersion](),
		"Pipelines": reflect.TypeFor[pipelinesResponse](), "Pipeline": reflect.TypeFor[pipeline](),
		"PipelineHop": reflect.TypeFor[hop](), "MirrorFlows": reflect.TypeFor[mirrorResponse](),
		"MirrorFlow": reflect.TypeFor[mirrorFlow](), "MirrorTask": reflect.TypeFor[mirrorTask](),
	} {
		s, ok := merged.Components.Schemas[name]
		if !ok {
			t.Errorf("components.schemas.%s is missing", name)
			continue
		}
		var fields, always []string
		for f := range typ.Fields() {
			tag, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			fields = append(fields, tag)
			if opts != "omitempty" {
				always = append(always, tag)
			}
		}
		var props []string
		for p := range s.Properties {
			props = append(props, p)
		}
		slices.Sort(fields)
		slices.Sort(props)
		slices.Sort(always)
		req := slices.Sorted(slices.Values(s.Required))
		if !slices.Equal(fields, props) {
			t.Errorf("%s: properties %v, the handler writes %v", name, props, fields)
		}
		if !slices.Equal(always, req) {
			t.Errorf("%s: required %v, the handler always writes %v", name, req, always)
		}
	}
}
