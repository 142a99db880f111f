package main

import (
	"context"
	"log/slog"
	"maps"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect/runtime"
	"github.com/fjordhq/fjord/internal/testkit"
)

// A worker serves every entry of listeners, as Kafka's does: an http and
// an https listener side by side, each with the worker's authentication,
// and it advertises the one rest.advertised.listener names.
func TestRESTListenersHTTPAndHTTPS(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	dir := t.TempDir()
	plain, secure := testkit.FreeAddr(t), testkit.FreeAddr(t)
	props, pki := secureREST(t, dir)
	maps.Copy(props, map[string]string{
		"bootstrap.servers": b.Addr, "listeners": "http://" + plain + ",https://" + secure,
		"rest.advertised.listener": "https",
		"key.converter":            "org.apache.kafka.connect.json.JsonConverter", "value.converter": "org.apache.kafka.connect.json.JsonConverter",
		"offset.storage.file.filename": filepath.Join(dir, "offsets"),
	})
	wc, err := runtime.ParseWorkerConfig(props, runtime.Standalone)
	if err != nil {
		t.Fatal(err)
	}
	sw, err := startStandaloneWorker(context.Background(), wc, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sw.close)
	_, securePort, _ := strings.Cut(secure, ":")
	if !strings.HasPrefix(sw.url, "https://") || !strings.HasSuffix(sw.url, ":"+securePort+"/") {
		t.Errorf("advertised URL %s, want the https listener's port %s", sw.url, securePort)
	}
	for _, tc := range []struct {
		base string
		c    *http.Client
	}{
		{"http://" + plain, &http.Client{Timeout: 30 * time.Second}},
		{"https://" + secure, httpsClient(pki)},
	} {
		testkit.CheckFor(t, 30*time.Second, 50*time.Millisecond, func() error {
			if code, body := call(t, tc.c, "GET", tc.base+"/readyz", anonymous, ""); code != 200 {
				return &unexpected{tc.base + "/readyz", code, body}
			}
			return nil
		})
		if code, body := call(t, tc.c, "GET", tc.base+"/connectors", adminUser, ""); code != 200 || strings.TrimSpace(body) != "[]" {
			t.Errorf("GET %s/connectors as admin: %d %s", tc.base, code, body)
		}
		if code, _ := call(t, tc.c, "GET", tc.base+"/connectors", anonymous, ""); code != http.StatusUnauthorized {
			t.Errorf("GET %s/connectors anonymously: %d, want 401 on every listener", tc.base, code)
		}
	}
}

type unexpected struct {
	url  string
	code int
	body string
}

func (u *unexpected) Error() string { return u.url + ": " + http.StatusText(u.code) + " " + u.body }
