package admin

import (
	"encoding/json"
	"maps"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The OpenAPI document is what API users and the console's authors read:
// these tests hold it to what the server serves.

type oaDoc struct {
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Schemas map[string]oaSchema `json:"schemas"`
	} `json:"components"`
	Tags []struct {
		Name string `json:"name"`
	} `json:"tags"`
}

type oaParam struct {
	Name string `json:"name"`
	In   string `json:"in"`
}

type oaOperation struct {
	OperationID string                     `json:"operationId"`
	Tags        []string                   `json:"tags"`
	Parameters  []oaParam                  `json:"parameters"`
	Responses   map[string]json.RawMessage `json:"responses"`
}

type oaSchema struct {
	Properties map[string]json.RawMessage `json:"properties"`
	Required   []string                   `json:"required"`
}

func parseOpenAPI(t *testing.T, b []byte) oaDoc {
	t.Helper()
	var d oaDoc
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("OpenAPI document: %v", err)
	}
	return d
}

// handlerName is a route handler's method name (getCluster).
func handlerName(h any) string {
	n := runtime.FuncForPC(reflect.ValueOf(h).Pointer()).Name() // ...admin.(*Server).getCluster-fm
	n = strings.TrimSuffix(n, "-fm")
	return n[strings.LastIndex(n, ".")+1:]
}

var pathParam = regexp.MustCompile(`\{([^}]+)\}`)

// TestOpenAPIDescribesEveryRoute: every route the server serves has an
// operation named after its handler, with its path parameters, a
// success and error responses (Connect's ErrorMessage); and the document
// has no operation the server does not serve.
func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	srv, err := New(Options{ClientOpts: []kgo.Opt{kgo.SeedBrokers("127.0.0.1:1")}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	raw := OpenAPI()
	doc := parseOpenAPI(t, raw)
	tags := map[string]bool{}
	for _, tg := range doc.Tags {
		tags[tg.Name] = true
	}

	served := map[string]bool{}
	for _, rt := range srv.routes() {
		path, method := Prefix+rt.path, strings.ToLower(rt.method)
		served[method+" "+path] = true
		item, ok := doc.Paths[path]
		if !ok {
			t.Errorf("%s %s is served but not in the OpenAPI document", rt.method, path)
			continue
		}
		opRaw, ok := item[method]
		if !ok {
			t.Errorf("%s %s is served but the document has no %s operation for it", rt.method, path, method)
			continue
		}
		var op oaOperation
		if err := json.Unmarshal(opRaw, &op); err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		if want := handlerName(rt.h); op.OperationID != want {
			t.Errorf("%s %s: operationId %q, want the handler's name %q", method, path, op.OperationID, want)
		}
		if len(op.Tags) == 0 {
			t.Errorf("%s %s has no tag", method, path)
		}
		for _, tg := range op.Tags {
			if !tags[tg] {
				t.Errorf("%s %s: tag %q is not declared", method, path, tg)
			}
		}
		// Path parameters, on the operation or the path item.
		declared := map[string]bool{}
		params := op.Parameters
		if pr, ok := item["parameters"]; ok {
			var more []oaParam
			if err := json.Unmarshal(pr, &more); err != nil {
				t.Fatalf("%s parameters: %v", path, err)
			}
			params = append(params, more...)
		}
		for _, p := range params {
			if p.In == "path" {
				declared[p.Name] = true
			}
		}
		for _, m := range pathParam.FindAllStringSubmatch(path, -1) {
			if !declared[m[1]] {
				t.Errorf("%s %s: path parameter %s is not declared", method, path, m[1])
			}
		}
		var success, failure bool
		for code, resp := range op.Responses {
			switch {
			case strings.HasPrefix(code, "2"):
				success = true
			case strings.HasPrefix(code, "4") || strings.HasPrefix(code, "5"):
				if !strings.Contains(string(resp), "#/components/schemas/ErrorMessage") {
					t.Errorf("%s %s: response %s is not an ErrorMessage", method, path, code)
				}
				failure = true
			}
		}
		if !success || !failure {
			t.Errorf("%s %s: responses %v lack a success or an error", method, path, slices.Sorted(maps.Keys(op.Responses)))
		}
	}
	for path, item := range doc.Paths {
		if !strings.HasPrefix(path, Prefix+"/") {
			continue // Kafka Connect's REST API
		}
		for method := range item {
			if method != "parameters" && !served[method+" "+path] {
				t.Errorf("the document describes %s %s, which the server does not serve", method, path)
			}
		}
	}

	// Every $ref names a schema of the merged document.
	for _, m := range regexp.MustCompile(`"#/components/schemas/([^"]+)"`).FindAllSubmatch(raw, -1) {
		if _, ok := doc.Components.Schemas[string(m[1])]; !ok {
			t.Errorf("$ref to undefined schema %s", m[1])
		}
	}
}

// kafkaSchemaTypes are the Go types behind openapi/kafka.json's schemas;
// requests are only checked for their properties (what is required of
// a request is the handler's rule, not the type's).
var kafkaSchemaTypes = map[string]struct {
	v       any
	request bool
}{
	"Broker": {v: brokerInfo{}}, "ConnectSummary": {v: connectSummary{}}, "Throughput": {v: throughput{}}, "Cluster": {v: clusterInfo{}},
	"TopicSummary": {v: topicSummary{}}, "PartitionDetail": {v: partitionDetail{}}, "ConfigEntry": {v: configEntry{}}, "TopicDetail": {v: topicDetail{}},
	"CreateTopicRequest": {v: createTopicRequest{}, request: true}, "ValidatedTopic": {v: validatedTopic{}},
	"AlterConfigsRequest": {v: alterConfigsRequest{}, request: true}, "AddPartitionsRequest": {v: addPartitionsRequest{}, request: true},
	"MessageData": {v: data{}}, "KafkaHeader": {v: header{}}, "KafkaMessage": {v: message{}}, "PartitionOffsets": {v: partitionRange{}},
	"MessagesPage": {v: messagesPage{}}, "ProduceHeader": {v: produceHeader{}, request: true}, "ProduceRequest": {v: produceRequest{}, request: true},
	"ProducedRecord": {v: produced{}},
	"GroupSummary":   {v: groupSummary{}}, "GroupAssignment": {v: assignment{}}, "GroupMember": {v: groupMember{}}, "GroupOffset": {v: groupOffset{}},
	"GroupDetail": {v: groupDetail{}}, "ResetOffsetsRequest": {v: resetRequest{}, request: true}, "ResetOffset": {v: resetOffset{}},
	"ResetOffsetsResult": {v: resetResult{}},
	"HistoryPoint":       {v: historyPoint{}}, "History": {v: historyPage{}},
}

// jsonFields lists a struct's JSON field names (embedded structs' too)
// and which are always written (no omitempty).
func jsonFields(typ reflect.Type, names, always map[string]bool) {
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		tag, hasTag := f.Tag.Lookup("json")
		if f.Anonymous && !hasTag {
			jsonFields(f.Type, names, always)
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		names[name] = true
		if !strings.Contains(opts, "omitempty") {
			always[name] = true
		}
	}
}

// TestKafkaSchemasMatchTypes: each schema of openapi/kafka.json has
// exactly its Go type's JSON fields, and a response's required list is
// the fields always written.
func TestKafkaSchemasMatchTypes(t *testing.T) {
	b, err := fragments.ReadFile("openapi/kafka.json")
	if err != nil {
		t.Fatal(err)
	}
	doc := parseOpenAPI(t, b)
	for name, s := range doc.Components.Schemas {
		gt, ok := kafkaSchemaTypes[name]
		if !ok {
			t.Errorf("schema %s has no Go type in kafkaSchemaTypes", name)
			continue
		}
		names, always := map[string]bool{}, map[string]bool{}
		jsonFields(reflect.TypeOf(gt.v), names, always)
		props := map[string]bool{}
		for p := range s.Properties {
			props[p] = true
		}
		if got, want := sortedSet(props), sortedSet(names); !slices.Equal(got, want) {
			t.Errorf("schema %s has properties %v, its type %T writes %v", name, got, gt.v, want)
		}
		if gt.request {
			continue
		}
		req := map[string]bool{}
		for _, r := range s.Required {
			req[r] = true
		}
		if got, want := sortedSet(req), sortedSet(always); !slices.Equal(got, want) {
			t.Errorf("schema %s requires %v, its type %T always writes %v", name, got, gt.v, want)
		}
	}
	for name := range kafkaSchemaTypes {
		if _, ok := doc.Components.Schemas[name]; !ok {
			t.Errorf("kafkaSchemaTypes names %s, which openapi/kafka.json does not define", name)
		}
	}
}

func sortedSet(m map[string]bool) []string { return slices.Sorted(maps.Keys(m)) }
