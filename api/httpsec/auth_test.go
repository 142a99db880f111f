package httpsec

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	adminPW    = "s3cret-Admin-pw!"
	readerPW   = "r3ader-Pw"
	adminToken = "0123456789abcdef0123456789abcdef"
	readToken  = "fedcba9876543210fedcba9876543210"
)

func writeFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// authFiles writes a credentials file (Kafka's format), a tokens file
// and a JAAS file naming the credentials file.
func authFiles(t testing.TB) (creds, tokens, jaas string) {
	dir := t.TempDir()
	creds = writeFile(t, dir, "credentials.properties", "# Kafka's PropertyFileLoginModule format\nadmin: "+adminPW+"\nreader="+readerPW+"\n")
	tokens = writeFile(t, dir, "tokens", "# token role name\n"+adminToken+" admin ci-bot\n"+readToken+" read-only grafana\n")
	jaas = writeFile(t, dir, "connect_jaas.conf", `/* Kafka's example */
KafkaConnect {
  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required
  file="`+creds+`";
};
KafkaClient { org.apache.kafka.common.security.plain.PlainLoginModule required username="x" password="y"; };
`)
	return
}

func basic(user, pw string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pw))
}

type answer struct {
	Code    int    `json:"error_code"`
	Message string `json:"message"`
}

func do(h http.Handler, method, path, auth string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, nil)
	if auth != "" {
		r.Header.Set("Authorization", auth)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

var ok = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	p := PrincipalFrom(r.Context())
	if p != nil {
		w.Header().Set("X-User", p.Name+"/"+string(p.Role))
	}
	w.WriteHeader(299)
})

func TestAuthBasicTokensAndRoles(t *testing.T) {
	creds, tokens, _ := authFiles(t)
	var logs bytes.Buffer
	a, err := LoadAuth(map[string]string{CredentialsFileKey: creds, TokensFileKey: tokens, ReadOnlyUsersKey: "reader"}, nil,
		slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	h := a.Wrap(ok)
	for _, tc := range []struct {
		name, method, path, auth string
		code                     int
		user                     string
	}{
		{"anonymous", "GET", "/connectors", "", 401, ""},
		{"wrong password", "GET", "/connectors", basic("admin", "nope"), 401, ""},
		{"unknown user", "GET", "/connectors", basic("mallory", adminPW), 401, ""},
		{"other user's password", "GET", "/connectors", basic("reader", adminPW), 401, ""},
		{"malformed basic", "GET", "/connectors", "Basic !!!", 401, ""},
		{"no colon", "GET", "/connectors", "Basic " + base64.StdEncoding.EncodeToString([]byte("admin")), 401, ""},
		{"unknown token", "GET", "/connectors", "Bearer " + strings.Repeat("z", 32), 401, ""},
		{"token as password", "GET", "/connectors", basic("ci-bot", adminToken), 401, ""},
		{"other scheme", "GET", "/connectors", "Digest x", 401, ""},
		{"admin reads", "GET", "/connectors", basic("admin", adminPW), 299, "admin/admin"},
		{"admin writes", "POST", "/connectors", basic("admin", adminPW), 299, "admin/admin"},
		{"reader reads", "GET", "/api/v1/topics", basic("reader", readerPW), 299, "reader/read-only"},
		{"reader HEAD", "HEAD", "/ui/", basic("reader", readerPW), 299, "reader/read-only"},
		{"reader writes", "PUT", "/connectors/c/config", basic("reader", readerPW), 403, ""},
		{"reader deletes", "DELETE", "/api/v1/topics/t", basic("reader", readerPW), 403, ""},
		{"admin token", "DELETE", "/connectors/c", "Bearer " + adminToken, 299, "ci-bot/admin"},
		{"read token reads", "GET", "/metrics", "bearer " + readToken, 299, "grafana/read-only"},
		{"read token writes", "POST", "/api/v1/topics", "Bearer " + readToken, 403, ""},
		{"probe healthz", "GET", "/healthz", "", 299, ""},
		{"probe readyz", "GET", "/readyz", "", 299, ""},
		{"connect health is protected", "GET", "/health", "", 401, ""},
		{"ui is protected", "GET", "/ui/", "", 401, ""},
		{"openapi is protected", "GET", "/openapi.json", "", 401, ""},
		{"internal task configs (signed instead)", "POST", "/connectors/c/tasks", "", 299, ""},
		{"internal with slash", "POST", "/connectors/c/tasks/", "", 299, ""},
		{"internal fence", "PUT", "/connectors/c/fence", "", 299, ""},
		{"GET tasks is not internal", "GET", "/connectors/c/tasks", "", 401, ""},
		{"task restart is not internal", "POST", "/connectors/c/tasks/0/restart", "", 401, ""},
		{"escaped slash is not internal", "POST", "/connectors/a%2F..%2Fx/tasks/0/restart", "", 401, ""},
	} {
		w := do(h, tc.method, tc.path, tc.auth)
		if w.Code != tc.code {
			t.Errorf("%s: %s %s = %d, want %d (%s)", tc.name, tc.method, tc.path, w.Code, tc.code, w.Body)
			continue
		}
		if got := w.Header().Get("X-User"); got != tc.user {
			t.Errorf("%s: principal %q, want %q", tc.name, got, tc.user)
		}
		if tc.code >= 400 {
			var e answer
			if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Code != tc.code || e.Message == "" {
				t.Errorf("%s: body %s is not Connect's error body", tc.name, w.Body)
			}
			if w.Header().Get("Content-Type") != "application/json" {
				t.Errorf("%s: Content-Type %q", tc.name, w.Header().Get("Content-Type"))
			}
		}
		if tc.code == 401 {
			if e := w.Header().Values("WWW-Authenticate"); len(e) == 0 || e[0] != `Basic realm="Fjord", charset="UTF-8"` {
				t.Errorf("%s: WWW-Authenticate %q", tc.name, e)
			}
			if !strings.Contains(w.Body.String(), "User cannot access the resource.") {
				t.Errorf("%s: body %s", tc.name, w.Body)
			}
		}
		if tc.code == 403 && !strings.Contains(w.Body.String(), "read-only role") {
			t.Errorf("%s: body %s", tc.name, w.Body)
		}
		for _, s := range []string{adminPW, readerPW, adminToken, readToken} {
			if strings.Contains(w.Body.String(), s) || strings.Contains(strings.Join(w.Header().Values("WWW-Authenticate"), " "), s) {
				t.Errorf("%s: the answer shows a secret", tc.name)
			}
		}
	}
	// Failed attempts are logged (at debug) with the user name, never
	// with a password or token.
	if !strings.Contains(logs.String(), `msg="REST change requested" component=rest-auth user=ci-bot auth=bearer method=DELETE path=/connectors/c`) {
		t.Errorf("a change is not audited: %s", logs.String())
	}
	if !strings.Contains(logs.String(), "user=mallory") {
		t.Errorf("failed authentication not logged: %s", logs.String())
	}
	for _, s := range []string{adminPW, readerPW, adminToken, readToken, "nope"} {
		if strings.Contains(logs.String(), s) {
			t.Errorf("the log shows a secret %q: %s", s, logs.String())
		}
	}
}

func TestAuthKafkaBasicAuthExtension(t *testing.T) {
	_, _, jaas := authFiles(t)
	ext := map[string]string{"rest.extension.classes": BasicAuthExtension}
	// The JAAS file as a worker property.
	a, err := LoadAuth(map[string]string{"rest.extension.classes": BasicAuthExtension, JAASConfigKey: jaas}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if w := do(a.Wrap(ok), "POST", "/connectors", basic("admin", adminPW)); w.Code != 299 {
		t.Errorf("admin via JAAS: %d %s", w.Code, w.Body)
	}
	if w := do(a.Wrap(ok), "POST", "/connectors", ""); w.Code != 401 {
		t.Errorf("anonymous via JAAS: %d", w.Code)
	}
	// Kafka's way: -Djava.security.auth.login.config in KAFKA_OPTS.
	env := func(k string) string {
		if k == "KAFKA_OPTS" {
			return "-Xmx1g -Djava.security.auth.login.config=" + jaas + " -Dfoo=bar"
		}
		return ""
	}
	a, err = LoadAuth(ext, env, nil)
	if err != nil {
		t.Fatal(err)
	}
	if w := do(a.Wrap(ok), "GET", "/", basic("reader", readerPW)); w.Code != 299 || w.Header().Get("X-User") != "reader/admin" {
		t.Errorf("reader via KAFKA_OPTS (every Kafka user is an admin): %d %q", w.Code, w.Header().Get("X-User"))
	}
	// Without a JAAS file the worker does not start.
	if _, err := LoadAuth(ext, nil, nil); err == nil || !strings.Contains(err.Error(), "no JAAS file") {
		t.Errorf("extension without JAAS: %v", err)
	}
}

func TestAuthOpenWithoutSettings(t *testing.T) {
	a, err := LoadAuth(map[string]string{"listeners": "http://:8083"}, nil, nil)
	if err != nil || a != nil {
		t.Fatalf("no auth keys: %v %v, want nil, nil", a, err)
	}
	if w := do(a.Wrap(ok), "DELETE", "/connectors/x", ""); w.Code != 299 {
		t.Errorf("open listener: %d", w.Code)
	}
}

func TestAuthConfigErrorsHideSecrets(t *testing.T) {
	dir := t.TempDir()
	creds, _, _ := authFiles(t)
	for name, tc := range map[string]struct {
		props map[string]string
		want  string
	}{
		"empty creds":     {map[string]string{CredentialsFileKey: writeFile(t, dir, "empty", "# nobody\n")}, "has no users"},
		"empty password":  {map[string]string{CredentialsFileKey: writeFile(t, dir, "nopw", "admin=\n")}, "empty password"},
		"missing creds":   {map[string]string{CredentialsFileKey: filepath.Join(dir, "none")}, "no such file"},
		"unknown reader":  {map[string]string{CredentialsFileKey: creds, ReadOnlyUsersKey: "bob"}, "not in the credentials file"},
		"short token":     {map[string]string{TokensFileKey: writeFile(t, dir, "t1", "abc admin bot\n")}, "shorter than 16"},
		"bad role":        {map[string]string{TokensFileKey: writeFile(t, dir, "t2", adminToken+" root bot\n")}, "not admin or read-only"},
		"token fields":    {map[string]string{TokensFileKey: writeFile(t, dir, "t3", adminToken+" admin\n")}, "<token> <role> <name>"},
		"no tokens":       {map[string]string{TokensFileKey: writeFile(t, dir, "t4", "\n")}, "has no tokens"},
		"java extension":  {map[string]string{"rest.extension.classes": "com.example.MyExtension"}, "runs no Java REST extensions"},
		"jaas no section": {map[string]string{"rest.extension.classes": BasicAuthExtension, JAASConfigKey: writeFile(t, dir, "j1", `Other { a required; };`)}, "no KafkaConnect section"},
		"jaas no file":    {map[string]string{"rest.extension.classes": BasicAuthExtension, JAASConfigKey: writeFile(t, dir, "j2", `KafkaConnect { org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required; };`)}, `needs file=`},
		"jaas syntax":     {map[string]string{"rest.extension.classes": BasicAuthExtension, JAASConfigKey: writeFile(t, dir, "j3", `KafkaConnect { x required file="a" `)}, `expected key="value"`},
	} {
		_, err := LoadAuth(tc.props, nil, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", name, err, tc.want)
			continue
		}
		if strings.Contains(err.Error(), adminToken) || strings.Contains(err.Error(), adminPW) {
			t.Errorf("%s: the error shows a secret: %v", name, err)
		}
	}
}
