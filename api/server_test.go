package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
)

func serve(t *testing.T, s *Server, path string) (int, map[string]any) {
	t.Helper()
	rec := httptest.NewRecorder()
	s.Router.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	var body map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("%s: %v: %s", path, err, rec.Body)
	}
	return rec.Code, body
}

// TestHealthAndReadiness: /healthz and /readyz run their own checks;
// a failing check gives 503 with its error and its name in "failing".
func TestHealthAndReadiness(t *testing.T) {
	s := New(nil)
	if code, body := serve(t, s, "/readyz"); code != http.StatusOK || body["status"] != "ready" {
		t.Fatalf("/readyz with no checks: %d %v", code, body)
	}
	s.AddCheck("alive", func() error { return nil })
	ready := errors.New("still catching up")
	s.AddReadyCheck("broker", func() error { return ready })
	s.AddReadyCheck("other", func() error { return nil })

	if code, body := serve(t, s, "/healthz"); code != http.StatusOK || body["status"] != "ok" || body["checks"].(map[string]any)["alive"] != "ok" {
		t.Errorf("/healthz: %d %v", code, body)
	}
	code, body := serve(t, s, "/readyz")
	checks, _ := body["checks"].(map[string]any)
	failing, _ := body["failing"].([]any)
	if code != http.StatusServiceUnavailable || body["status"] != "not ready" || checks["broker"] != "still catching up" ||
		checks["other"] != "ok" || !slices.Equal(failing, []any{"broker"}) {
		t.Errorf("/readyz with a failing check: %d %v", code, body)
	}
	ready = nil
	if code, body := serve(t, s, "/readyz"); code != http.StatusOK || body["status"] != "ready" {
		t.Errorf("/readyz once the check passes: %d %v", code, body)
	}
}
