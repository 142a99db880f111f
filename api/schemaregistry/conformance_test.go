package schemaregistry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

// client is a tiny REST client for the tests: every call checks the
// status and content type and decodes the JSON answer.
type client struct {
	t    *testing.T
	base string
}

func (c client) do(method, path string, body any) (int, any) {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			c.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); ct != contentType {
		c.t.Errorf("%s %s: Content-Type %q, want %q", method, path, ct, contentType)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return resp.StatusCode, string(raw)
	}
	return resp.StatusCode, v
}

// ok expects 200 and returns the answer.
func (c client) ok(method, path string, body any) any {
	c.t.Helper()
	code, v := c.do(method, path, body)
	if code != http.StatusOK {
		c.t.Fatalf("%s %s: %d %v, want 200", method, path, code, v)
	}
	return v
}

// fail expects an error answer with status and Confluent error code,
// and a message containing msg.
func (c client) fail(method, path string, body any, status, code int, msg string) {
	c.t.Helper()
	got, v := c.do(method, path, body)
	m, _ := v.(map[string]any)
	if got != status || m == nil || m["error_code"] != float64(code) || !strings.Contains(fmt.Sprint(m["message"]), msg) {
		c.t.Errorf("%s %s: %d %v, want %d {error_code:%d, message ~ %q}", method, path, got, v, status, code, msg)
	}
}

func eq(t *testing.T, what string, got, want any) {
	t.Helper()
	// Round-trip want through JSON so numbers and slices compare alike.
	b, _ := json.Marshal(want)
	var w any
	json.Unmarshal(b, &w)
	if !reflect.DeepEqual(got, w) {
		t.Errorf("%s = %v, want %v", what, got, w)
	}
}

func reg(schema string) map[string]any { return map[string]any{"schema": schema} }

const (
	userV1 = `{"type":"record","name":"User","namespace":"com.acme","fields":[{"name":"id","type":"long"}]}`
	// userV1 with other spacing and key order: the same canonical text.
	userV1Spaced = `{ "namespace": "com.acme", "name": "User", "type": "record",
		"fields": [ { "type": "long", "name": "id" } ] }`
	userV2  = `{"type":"record","name":"User","namespace":"com.acme","fields":[{"name":"id","type":"long"},{"name":"email","type":["null","string"],"default":null}]}`
	userBad = `{"type":"record","name":"User","namespace":"com.acme","fields":[{"name":"id","type":"string"},{"name":"age","type":"int"}]}`
)

// conformance runs Confluent's REST API through every endpoint and error
// path against a fresh registry at base (no subjects, default config).
func conformance(t *testing.T, base string) {
	c := client{t, base}

	// Empty registry.
	eq(t, "subjects", c.ok("GET", "/subjects", nil), []string{})
	eq(t, "types", c.ok("GET", "/schemas/types", nil), []string{"AVRO"})
	c.fail("GET", "/subjects/users/versions", nil, 404, 40401, "Subject 'users' not found.")
	c.fail("GET", "/subjects/users/versions/1", nil, 404, 40401, "Subject 'users' not found.")
	c.fail("GET", "/subjects/users/versions/latest", nil, 404, 40401, "not found")
	c.fail("GET", "/schemas/ids/1", nil, 404, 40403, "Schema 1 not found")
	c.fail("GET", "/schemas/ids/1/versions", nil, 404, 40403, "Schema 1 not found")
	c.fail("DELETE", "/subjects/users", nil, 404, 40401, "Subject 'users' not found.")

	// Invalid registrations.
	c.fail("POST", "/subjects/users/versions", reg(`{"type":"record","name":"X"}`), 422, 42201, "Invalid schema")
	c.fail("POST", "/subjects/users/versions", reg(`{"type":"nope"}`), 422, 42201, "Invalid schema")
	c.fail("POST", "/subjects/users/versions", map[string]any{"schema": `syntax = "proto3";`, "schemaType": "PROTOBUF"}, 422, 42201, "Invalid schema type PROTOBUF")
	c.fail("POST", "/subjects/users/versions", map[string]any{"schema": `{"type":"object"}`, "schemaType": "JSON"}, 422, 42201, "Invalid schema type JSON")
	c.fail("POST", "/subjects/users/versions", map[string]any{"schema": userV1, "references": []any{map[string]any{"name": "x", "subject": "y", "version": 1}}}, 422, 42201, "references are not supported")
	c.fail("POST", "/subjects/users/versions", map[string]any{"schema": ""}, 422, 42201, "Empty schema")
	if code, _ := c.do("POST", "/subjects/users/versions", "not an object"); code != 400 {
		t.Errorf("malformed register body: %d, want 400", code)
	}
	c.fail("POST", "/subjects/users/versions", map[string]any{"schema": userV1, "id": 7}, 422, 42205, "not in import mode")

	// Register; idempotent; same schema elsewhere keeps its id.
	eq(t, "register v1", c.ok("POST", "/subjects/users/versions", reg(userV1)), map[string]int{"id": 1})
	eq(t, "register v1 again", c.ok("POST", "/subjects/users/versions", reg(userV1)), map[string]int{"id": 1})
	eq(t, "register v1 respaced", c.ok("POST", "/subjects/users/versions", reg(userV1Spaced)), map[string]int{"id": 1})
	eq(t, "register v1 under other", c.ok("POST", "/subjects/other/versions", reg(userV1Spaced)), map[string]int{"id": 1})
	eq(t, "register string", c.ok("POST", "/subjects/plain/versions", reg(`{"type":"string"}`)), map[string]int{"id": 2})
	eq(t, "subjects", c.ok("GET", "/subjects", nil), []string{"other", "plain", "users"})
	eq(t, "subjects by prefix", c.ok("GET", "/subjects?subjectPrefix=us", nil), []string{"users"})
	eq(t, "versions", c.ok("GET", "/subjects/users/versions", nil), []int{1})
	v1 := map[string]any{"subject": "users", "version": 1, "id": 1, "schema": userV1}
	eq(t, "version 1", c.ok("GET", "/subjects/users/versions/1", nil), v1)
	eq(t, "latest", c.ok("GET", "/subjects/users/versions/latest", nil), v1)
	eq(t, "version -1", c.ok("GET", "/subjects/users/versions/-1", nil), v1)
	eq(t, "raw schema", c.ok("GET", "/subjects/users/versions/1/schema", nil), map[string]any{"type": "record", "name": "User", "namespace": "com.acme", "fields": []any{map[string]any{"name": "id", "type": "long"}}})
	eq(t, "plain schema", c.ok("GET", "/subjects/plain/versions/1", nil), map[string]any{"subject": "plain", "version": 1, "id": 2, "schema": `"string"`})
	c.fail("GET", "/subjects/users/versions/2", nil, 404, 40402, "Version 2 not found.")
	eq(t, "referenced by", c.ok("GET", "/subjects/users/versions/1/referencedby", nil), []int{})
	c.fail("GET", "/subjects/users/versions/5/referencedby", nil, 404, 40402, "Version 5 not found.")
	eq(t, "contexts", c.ok("GET", "/contexts", nil), []string{"."})
	eq(t, "schemas", c.ok("GET", "/schemas?subjectPrefix=p", nil), []any{map[string]any{"subject": "plain", "version": 1, "id": 2, "schema": `"string"`}})
	if n := len(c.ok("GET", "/schemas?latestOnly=true", nil).([]any)); n != 3 {
		t.Errorf("schemas latestOnly: %d, want 3", n)
	}
	c.fail("GET", "/subjects/users/versions/abc", nil, 422, 42202, "The specified version 'abc' is not a valid version id.")
	c.fail("GET", "/subjects/users/versions/0", nil, 422, 42202, "not a valid version id")
	c.fail("GET", "/subjects/users/versions/99999999999", nil, 422, 42202, "not a valid version id")

	// Ids.
	eq(t, "schema by id", c.ok("GET", "/schemas/ids/1", nil), map[string]any{"schema": userV1})
	eq(t, "subjects of id", c.ok("GET", "/schemas/ids/1/subjects", nil), []string{"other", "users"})
	eq(t, "versions of id", c.ok("GET", "/schemas/ids/1/versions", nil), []map[string]any{{"subject": "other", "version": 1}, {"subject": "users", "version": 1}})
	c.fail("GET", "/schemas/ids/42", nil, 404, 40403, "Schema 42 not found")
	c.fail("GET", "/schemas/ids/nan", nil, 404, 404, "")

	// Lookup.
	eq(t, "lookup", c.ok("POST", "/subjects/users", reg(userV1Spaced)), v1)
	c.fail("POST", "/subjects/users", reg(userV2), 404, 40403, "Schema not found")
	c.fail("POST", "/subjects/nobody", reg(userV1), 404, 40401, "Subject 'nobody' not found.")
	c.fail("POST", "/subjects/users", reg(`{"type":"bogus"}`), 422, 42201, "Invalid schema")

	// Compatibility (default BACKWARD).
	eq(t, "compatible", c.ok("POST", "/compatibility/subjects/users/versions/latest", reg(userV2)), map[string]any{"is_compatible": true})
	eq(t, "compatible verbose", c.ok("POST", "/compatibility/subjects/users/versions/1?verbose=true", reg(userV2)), map[string]any{"is_compatible": true, "messages": []any{}})
	eq(t, "incompatible", c.ok("POST", "/compatibility/subjects/users/versions/latest", reg(userBad)), map[string]any{"is_compatible": false})
	verbose := c.ok("POST", "/compatibility/subjects/users/versions/latest?verbose=true", reg(userBad)).(map[string]any)
	if msgs := fmt.Sprint(verbose["messages"]); verbose["is_compatible"] != false ||
		!strings.Contains(msgs, "errorType:'TYPE_MISMATCH'") || !strings.Contains(msgs, "errorType:'READER_FIELD_MISSING_DEFAULT_VALUE'") ||
		!strings.Contains(msgs, "{oldSchemaVersion: 1}") || !strings.Contains(msgs, "compatibility: 'BACKWARD'") {
		t.Errorf("verbose incompatibility = %v", verbose)
	}
	eq(t, "all versions", c.ok("POST", "/compatibility/subjects/users/versions", reg(userV2)), map[string]any{"is_compatible": true})
	eq(t, "no versions yet", c.ok("POST", "/compatibility/subjects/fresh/versions/latest", reg(userBad)), map[string]any{"is_compatible": true})
	c.fail("POST", "/compatibility/subjects/users/versions/7", reg(userV2), 404, 40402, "Version 7 not found.")
	c.fail("POST", "/compatibility/subjects/users/versions/x", reg(userV2), 422, 42202, "not a valid version id")
	eq(t, "invalid schema verbose", c.ok("POST", "/compatibility/subjects/users/versions/latest?verbose=true", reg(`{"type":"bogus"}`)).(map[string]any)["is_compatible"], false)

	c.fail("POST", "/subjects/users/versions", reg(userBad), 409, 409, `Schema being registered is incompatible with an earlier schema for subject "users"`)
	eq(t, "register v2", c.ok("POST", "/subjects/users/versions", reg(userV2)), map[string]int{"id": 3})
	eq(t, "versions", c.ok("GET", "/subjects/users/versions", nil), []int{1, 2})

	// Config.
	eq(t, "global config", c.ok("GET", "/config", nil), map[string]any{"compatibilityLevel": "BACKWARD"})
	eq(t, "set global", c.ok("PUT", "/config", map[string]any{"compatibility": "full"}), map[string]any{"compatibility": "FULL"})
	eq(t, "global config", c.ok("GET", "/config", nil), map[string]any{"compatibilityLevel": "FULL"})
	c.fail("PUT", "/config", map[string]any{"compatibility": "SIDEWAYS"}, 422, 42203, "Invalid compatibility level")
	c.fail("GET", "/config/users", nil, 404, 40408, "Subject 'users' does not have subject-level compatibility configured")
	eq(t, "subject config default", c.ok("GET", "/config/users?defaultToGlobal=true", nil), map[string]any{"compatibilityLevel": "FULL"})
	eq(t, "set subject", c.ok("PUT", "/config/users", map[string]any{"compatibility": "NONE"}), map[string]any{"compatibility": "NONE"})
	eq(t, "subject config", c.ok("GET", "/config/users", nil), map[string]any{"compatibilityLevel": "NONE"})
	eq(t, "NONE allows anything", c.ok("POST", "/subjects/users/versions", reg(userBad)), map[string]int{"id": 4})
	eq(t, "delete subject config", c.ok("DELETE", "/config/users", nil), map[string]any{"compatibilityLevel": "NONE"})
	c.fail("DELETE", "/config/users", nil, 404, 40401, "Subject 'users' not found.")
	eq(t, "delete global", c.ok("DELETE", "/config", nil), map[string]any{"compatibilityLevel": "FULL"})
	eq(t, "global back to default", c.ok("GET", "/config", nil), map[string]any{"compatibilityLevel": "BACKWARD"})

	// Mode.
	eq(t, "mode", c.ok("GET", "/mode", nil), map[string]any{"mode": "READWRITE"})
	c.fail("PUT", "/mode", map[string]any{"mode": "SIDEWAYS"}, 422, 42204, "Invalid mode")
	c.fail("GET", "/mode/plain", nil, 404, 40409, "Subject 'plain' does not have subject-level mode configured")
	eq(t, "set mode", c.ok("PUT", "/mode/plain", map[string]any{"mode": "READONLY"}), map[string]any{"mode": "READONLY"})
	eq(t, "mode plain", c.ok("GET", "/mode/plain", nil), map[string]any{"mode": "READONLY"})
	c.fail("POST", "/subjects/plain/versions", reg(`"int"`), 422, 42205, "read-only mode")
	c.fail("DELETE", "/subjects/plain", nil, 422, 42205, "read-only mode")
	eq(t, "delete mode", c.ok("DELETE", "/mode/plain", nil), map[string]any{"mode": "READONLY"})
	c.fail("PUT", "/mode", map[string]any{"mode": "IMPORT"}, 422, 42205, "Cannot import since found existing subjects")

	// Delete a version: soft, then permanent.
	c.fail("DELETE", "/subjects/users/versions/3?permanent=true", nil, 404, 40407, "Subject 'users' Version 3 was not deleted first before being permanently deleted")
	eq(t, "soft delete v3", c.ok("DELETE", "/subjects/users/versions/3", nil), 3)
	c.fail("DELETE", "/subjects/users/versions/3", nil, 404, 40406, "Subject 'users' Version 3 was soft deleted.Set permanent=true to delete permanently")
	c.fail("DELETE", "/subjects/users/versions/9", nil, 404, 40402, "Version 9 not found.")
	c.fail("DELETE", "/subjects/users/versions/x", nil, 422, 42202, "not a valid version id")
	eq(t, "versions", c.ok("GET", "/subjects/users/versions", nil), []int{1, 2})
	eq(t, "versions with deleted", c.ok("GET", "/subjects/users/versions?deleted=true", nil), []int{1, 2, 3})
	eq(t, "deleted only", c.ok("GET", "/subjects/users/versions?deletedOnly=true", nil), []int{3})
	c.fail("GET", "/subjects/users/versions/3", nil, 404, 40402, "Version 3 not found.")
	eq(t, "deleted version", c.ok("GET", "/subjects/users/versions/3?deleted=true", nil).(map[string]any)["deleted"], true)
	eq(t, "soft-deleted id still served", c.ok("GET", "/schemas/ids/4", nil), map[string]any{"schema": userBad})
	eq(t, "hard delete v3", c.ok("DELETE", "/subjects/users/versions/3?permanent=true", nil), 3)
	c.fail("GET", "/schemas/ids/4", nil, 404, 40403, "Schema 4 not found")
	eq(t, "delete latest", c.ok("DELETE", "/subjects/users/versions/latest", nil), 2)

	// Delete a subject: soft, then permanent.
	c.fail("DELETE", "/subjects/other?permanent=true", nil, 404, 40405, "Subject 'other' was not deleted first before being permanently deleted")
	eq(t, "soft delete subject", c.ok("DELETE", "/subjects/other", nil), []int{1})
	c.fail("DELETE", "/subjects/other", nil, 404, 40404, "Subject 'other' was soft deleted.Set permanent=true to delete permanently")
	eq(t, "subjects", c.ok("GET", "/subjects", nil), []string{"plain", "users"})
	eq(t, "subjects with deleted", c.ok("GET", "/subjects?deleted=true", nil), []string{"other", "plain", "users"})
	c.fail("GET", "/subjects/other/versions", nil, 404, 40401, "Subject 'other' not found.")
	eq(t, "subjects of id", c.ok("GET", "/schemas/ids/1/subjects", nil), []string{"users"})
	eq(t, "subjects of id with deleted", c.ok("GET", "/schemas/ids/1/subjects?deleted=true", nil), []string{"other", "users"})
	eq(t, "hard delete subject", c.ok("DELETE", "/subjects/other?permanent=true", nil), []int{1})
	eq(t, "subjects with deleted", c.ok("GET", "/subjects?deleted=true", nil), []string{"plain", "users"})

	// Re-register after a soft delete: a new version; a new schema gets
	// the next id (ids are never reused).
	eq(t, "re-register v2", c.ok("POST", "/subjects/users/versions", reg(userV2)), map[string]int{"id": 3})
	// Version 3 was hard-deleted, so the next is 3; the soft-deleted
	// version 2 of the same schema is tombstoned, as Confluent does.
	eq(t, "versions", c.ok("GET", "/subjects/users/versions?deleted=true", nil), []int{1, 3})
	eq(t, "new schema", c.ok("POST", "/subjects/fresh/versions", reg(`"bytes"`)), map[string]int{"id": 5})

	// application/json is accepted too; unknown paths answer Confluent-style.
	req, _ := http.NewRequest("POST", base+"/subjects/json/versions", strings.NewReader(`{"schema":"\"long\""}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("register with application/json: %d", resp.StatusCode)
	}
	// Subjects are path-escaped by clients: "/", spaces and "%" survive.
	for _, subject := range []string{"a/b", "with space", "50%41off"} {
		esc := url.PathEscape(subject)
		c.ok("POST", "/subjects/"+esc+"/versions", reg(`"float"`))
		eq(t, "escaped subject "+subject, c.ok("GET", "/subjects/"+esc+"/versions/latest", nil).(map[string]any)["subject"], subject)
	}
	c.fail("GET", "/nothing/here", nil, 404, 404, "HTTP 404 Not Found")
	c.fail("PATCH", "/subjects", nil, 405, 405, "HTTP 405 Method Not Allowed")
}
