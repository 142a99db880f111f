package admin

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fjordhq/fjord/api/schemaregistry"
	"github.com/fjordhq/fjord/internal/testkit"
)

// cxStartRegistry runs Fjord's schema registry as fjord dev does — its
// state in the _schemas topic of the broker at addr — on an httptest
// server, and returns its base URL once a leader can take writes.
func cxStartRegistry(t *testing.T, addr string) string {
	t.Helper()
	var h atomic.Value // the handler exists only after New, which needs the URL
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.Load().(http.Handler).ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	reg, err := schemaregistry.New(schemaregistry.Config{Bootstrap: []string{addr}, ReplicationFactor: 1, AdvertisedURL: hs.URL})
	if err != nil {
		t.Fatal(err)
	}
	h.Store(reg.Handler())
	ctx := testkit.Context(t, 30*time.Second)
	if err := reg.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close() })
	if _, err := reg.WaitLeader(ctx); err != nil {
		t.Fatal(err)
	}
	return hs.URL
}

// cxRegistryCall sends a Confluent API request and decodes the answer.
func cxRegistryCall(t *testing.T, method, u string, body, out any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, u, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e map[string]any
		json.NewDecoder(resp.Body).Decode(&e)
		t.Fatalf("%s %s: %d %v", method, u, resp.StatusCode, e)
	}
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatal(err)
		}
	}
}

func cxRegister(t *testing.T, registry, subject, schema string) int {
	t.Helper()
	var out struct{ ID int }
	cxRegistryCall(t, http.MethodPost, registry+"/subjects/"+url.PathEscape(subject)+"/versions", map[string]string{"schema": schema}, &out)
	return out.ID
}

const (
	ordersV1  = `{"type":"record","name":"Order","fields":[{"name":"id","type":"long"}]}`
	ordersV2  = `{"type":"record","name":"Order","fields":[{"name":"id","type":"long"},{"name":"note","type":"string","default":""}]}`
	keySchema = `"string"`
)

// TestSchemas registers subjects in a real registry over its HTTP API and
// reads them back through /api/v1/schemas.
func TestSchemas(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	registry := cxStartRegistry(t, b.Addr)
	id1 := cxRegister(t, registry, "orders-value", ordersV1)
	id2 := cxRegister(t, registry, "orders-value", ordersV2)
	keyID := cxRegister(t, registry, "orders-key", keySchema)
	slashID := cxRegister(t, registry, "team/a", ordersV1) // a subject a URL path must escape
	cxRegistryCall(t, http.MethodPut, registry+"/config/orders-key", map[string]string{"compatibility": "NONE"}, nil)
	cxRegistryCall(t, http.MethodPut, registry+"/config", map[string]string{"compatibility": "FULL"}, nil)
	if id1 == id2 || slashID != id1 {
		t.Fatalf("registry ids: v1 %d v2 %d team/a %d (same schema, same id)", id1, id2, slashID)
	}

	api := cxStartAPI(t, Options{ClientOpts: cxSeeds(b.Addr), RegistryURL: registry + "/"}) // a trailing slash is fine
	var list schemaList
	if code := api.get(t, "/schemas", &list); code != http.StatusOK {
		t.Fatalf("GET /schemas: %d", code)
	}
	if !list.Available || list.Compatibility == nil || *list.Compatibility != "FULL" || list.Detail != "" {
		t.Fatalf("available %v compatibility %v detail %q, want true FULL", list.Available, list.Compatibility, list.Detail)
	}
	none := "NONE"
	want := []subjectSummary{
		{Subject: "orders-key", Versions: []int{1}, LatestVersion: 1, LatestID: keyID, SchemaType: "AVRO", Compatibility: &none},
		{Subject: "orders-value", Versions: []int{1, 2}, LatestVersion: 2, LatestID: id2, SchemaType: "AVRO"},
		{Subject: "team/a", Versions: []int{1}, LatestVersion: 1, LatestID: id1, SchemaType: "AVRO"},
	}
	if got, w := cxJSON(list.Subjects), cxJSON(want); got != w {
		t.Fatalf("subjects\n got %s\nwant %s", got, w)
	}

	var d subjectDetail
	if code := api.get(t, "/schemas/orders-value", &d); code != http.StatusOK {
		t.Fatalf("GET /schemas/orders-value: %d", code)
	}
	wantD := subjectDetail{Subject: "orders-value", Compatibility: "FULL", Versions: []schemaVersion{
		{Version: 1, ID: id1, SchemaType: "AVRO", Schema: ordersV1},
		{Version: 2, ID: id2, SchemaType: "AVRO", Schema: ordersV2},
	}}
	if got, w := cxJSON(d), cxJSON(wantD); got != w {
		t.Fatalf("orders-value\n got %s\nwant %s", got, w)
	}
	// The effective level is the subject's own where it has one.
	if api.get(t, "/schemas/orders-key", &d); d.Compatibility != "NONE" || len(d.Versions) != 1 || d.Versions[0].Schema != keySchema {
		t.Fatalf("orders-key: %+v, want NONE and its one version", d)
	}
	if code := api.get(t, "/schemas/team%2Fa", &d); code != http.StatusOK || d.Subject != "team/a" || d.Versions[0].ID != id1 {
		t.Fatalf("team/a: %d %+v", code, d)
	}

	var e apiError
	if code := api.get(t, "/schemas/nope", &e); code != http.StatusNotFound || e.ErrorCode != 404 || e.Message != "Subject 'nope' not found." {
		t.Fatalf("unknown subject: %d %+v", code, e)
	}
}

// TestSchemasWithoutRegistry: no registry configured, or one that does
// not answer — the list says so (available false, a reason), a subject
// answers 503.
func TestSchemasWithoutRegistry(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + l.Addr().String()
	l.Close() // nothing listens there now

	for _, c := range []struct{ name, url, detail string }{
		{"none configured", "", "No schema registry is configured"},
		{"unreachable", down, "did not answer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			api := cxStartAPI(t, Options{ClientOpts: cxSeeds(b.Addr), RegistryURL: c.url})
			var list schemaList
			if code := api.get(t, "/schemas", &list); code != http.StatusOK || list.Available || list.Compatibility != nil ||
				list.Subjects == nil || len(list.Subjects) != 0 || !strings.Contains(list.Detail, c.detail) {
				t.Fatalf("GET /schemas: %d %+v, want available false, [] and %q", code, list, c.detail)
			}
			var e apiError
			if code := api.get(t, "/schemas/orders-value", &e); code != http.StatusServiceUnavailable || e.ErrorCode != 503 || e.Message == "" {
				t.Fatalf("GET /schemas/orders-value: %d %+v, want 503", code, e)
			}
		})
	}
}

func cxJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
