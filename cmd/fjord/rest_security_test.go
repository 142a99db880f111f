package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fjordhq/fjord/api/admin"
	connectapi "github.com/fjordhq/fjord/api/connect"
	"github.com/fjordhq/fjord/api/httpsec"
	"github.com/fjordhq/fjord/api/httpsec/httpsectest"
	"github.com/fjordhq/fjord/connect/runtime"
	"github.com/fjordhq/fjord/internal/testkit"
)

// Secrets of the REST security tests: none may appear in an answer or a
// log line.
const (
	secAdminPW    = "Adm1n-pw-never-logged"
	secReaderPW   = "Read3r-pw-never-logged"
	secAdminToken = "tok-admin-0123456789abcdef0123456789"
	secReadToken  = "tok-read-fedcba9876543210fedcba98765"
)

var restSecrets = []string{secAdminPW, secReaderPW, secAdminToken, secReadToken}

// lockedBuffer collects log lines from several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// secureREST is an HTTPS listener's settings with a credentials file
// (admin, and reader with the read-only role) and a tokens file.
func secureREST(t *testing.T, dir string) (map[string]string, *httpsectest.PKI) {
	pki := httpsectest.New(t, dir)
	creds := filepath.Join(dir, "rest-credentials.properties")
	tokens := filepath.Join(dir, "rest-tokens")
	if err := os.WriteFile(creds, []byte("admin: "+secAdminPW+"\nreader: "+secReaderPW+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tokens, []byte(secAdminToken+" admin ci\n"+secReadToken+" read-only dashboards\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"listeners.https.ssl.keystore.type":       "PEM",
		"listeners.https.ssl.keystore.location":   pki.ServerFile,
		"listeners.https.ssl.truststore.type":     "PEM",
		"listeners.https.ssl.truststore.location": pki.CAFile,
		httpsec.CredentialsFileKey:                creds,
		httpsec.ReadOnlyUsersKey:                  "reader",
		httpsec.TokensFileKey:                     tokens,
	}, pki
}

type restCaller struct {
	name, auth string
}

var (
	anonymous   = restCaller{"anonymous", ""}
	adminUser   = restCaller{"admin", "Basic " + base64.StdEncoding.EncodeToString([]byte("admin:"+secAdminPW))}
	readerUser  = restCaller{"reader", "Basic " + base64.StdEncoding.EncodeToString([]byte("reader:"+secReaderPW))}
	adminBearer = restCaller{"admin token", "Bearer " + secAdminToken}
	readBearer  = restCaller{"read-only token", "Bearer " + secReadToken}
	wrongPW     = restCaller{"wrong password", "Basic " + base64.StdEncoding.EncodeToString([]byte("admin:"+secReaderPW))}
)

func httpsClient(pki *httpsectest.PKI) *http.Client {
	return &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pki.Pool}, ForceAttemptHTTP2: true}}
}

// call makes a request and returns status and body; the body is checked
// for secrets.
func call(t *testing.T, c *http.Client, method, url string, who restCaller, body string, h ...string) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if who.auth != "" {
		req.Header.Set("Authorization", who.auth)
	}
	for i := 0; i+1 < len(h); i += 2 {
		req.Header.Set(h[i], h[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s as %s: %v", method, url, who.name, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, s := range restSecrets {
		if strings.Contains(string(b), s) || strings.Contains(fmt.Sprint(resp.Header), s) {
			t.Errorf("%s %s as %s: the answer shows a secret", method, url, who.name)
		}
	}
	return resp.StatusCode, string(b)
}

// everyEndpoint lists every route of the Connect REST API and the admin
// API (from their route tables, so a new endpoint is covered without
// touching this test), plus what else the listener serves.
func everyEndpoint() [][2]string {
	routes := connectapi.New(nil, connectapi.Options{}).Routes()
	routes = append(routes, new(admin.Server).Routes()...)
	return append(routes, [][2]string{{"GET", "/metrics"}, {"GET", "/ui/"}, {"GET", "/ui/index.html"}}...)
}

// fillPath gives the path parameters values.
func fillPath(p string) string {
	r := strings.NewReplacer("{connector}", "no-such-connector", "{task}", "0", "{plugin}", "FileStreamSource",
		"{logger}", "org.apache.kafka", "{topic}", "no-such-topic", "{group}", "no-such-group", "{subject}", "no-such-subject")
	return r.Replace(p)
}

// TestRESTSecurityEveryEndpoint runs connect-standalone's worker with an
// HTTPS listener, basic auth and tokens, and calls every endpoint of the
// route tables: anonymous callers and wrong passwords get 401 with
// WWW-Authenticate, read-only callers 403 on every change and an answer
// on every read, admins an answer everywhere; plain HTTP is refused; the
// probes stay open; no answer and no log line shows a password or token.
func TestRESTSecurityEveryEndpoint(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	dir := t.TempDir()
	rest := testkit.FreeAddr(t)
	props, pki := secureREST(t, dir)
	maps.Copy(props, map[string]string{
		"bootstrap.servers": b.Addr, "listeners": "https://" + rest,
		"key.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter": "org.apache.kafka.connect.json.JsonConverter",
		"offset.storage.file.filename": filepath.Join(dir, "offsets"),
	})
	wc, err := runtime.ParseWorkerConfig(props, runtime.Standalone)
	if err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	sw, err := startStandaloneWorker(context.Background(), wc, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sw.close)
	if !strings.HasPrefix(sw.url, "https://") {
		t.Errorf("advertised URL %s, want https", sw.url)
	}
	c := httpsClient(pki)
	base := "https://" + rest

	// Probes are open; everything else needs credentials.
	testkit.CheckFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		if code, body := call(t, c, "GET", base+"/readyz", anonymous, ""); code != 200 {
			return fmt.Errorf("/readyz = %d %s", code, body)
		}
		return nil
	})
	// Plain HTTP to the HTTPS listener is refused.
	if resp, err := http.Get("http://" + rest + "/connectors"); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "HTTPS server") {
			t.Errorf("plain HTTP: %d %s", resp.StatusCode, b)
		}
	}

	endpoints := everyEndpoint()
	if len(endpoints) < 40 {
		t.Fatalf("only %d endpoints in the route tables", len(endpoints))
	}
	for _, ep := range endpoints {
		method, url := ep[0], base+fillPath(ep[1])
		for _, who := range []restCaller{anonymous, wrongPW} {
			code, body := call(t, c, method, url, who, "")
			if code != http.StatusUnauthorized || !strings.Contains(body, `"error_code":401`) {
				t.Errorf("%s %s as %s = %d %s, want 401", method, ep[1], who.name, code, body)
			}
		}
		for _, who := range []restCaller{readerUser, readBearer} {
			code, body := call(t, c, method, url, who, "")
			write := method != "GET" && method != "HEAD"
			switch {
			case write && (code != http.StatusForbidden || !strings.Contains(body, `"error_code":403`)):
				t.Errorf("%s %s as %s = %d %s, want 403", method, ep[1], who.name, code, body)
			case !write && (code == http.StatusUnauthorized || code == http.StatusForbidden):
				t.Errorf("%s %s as %s = %d %s, want an answer", method, ep[1], who.name, code, body)
			}
		}
	}
	// Admins reach every endpoint (the handlers' own answers: 200, 404
	// for the made-up names, 400 for empty bodies; never 401 or 403).
	// Changes go last so reads see the worker as it started.
	for _, who := range []restCaller{adminUser, adminBearer} {
		for _, ep := range endpoints {
			method, url := ep[0], base+fillPath(ep[1])
			if code, body := call(t, c, method, url, who, ""); code == http.StatusUnauthorized || code == http.StatusForbidden {
				t.Errorf("%s %s as %s = %d %s", method, ep[1], who.name, code, body)
			}
		}
	}
	// An admin creates a connector and reads it back; a reader sees it.
	code, body := call(t, c, "POST", base+"/connectors", adminUser,
		`{"name":"secured","config":{"connector.class":"FileStreamSource","file":"`+filepath.Join(dir, "in.txt")+`","topic":"secured"}}`)
	if code != http.StatusCreated {
		t.Fatalf("admin POST /connectors = %d %s", code, body)
	}
	if code, body := call(t, c, "GET", base+"/connectors", readerUser, ""); code != 200 || !strings.Contains(body, `"secured"`) {
		t.Errorf("reader GET /connectors = %d %s", code, body)
	}
	if code, _ := call(t, c, "DELETE", base+"/connectors/secured", readerUser, ""); code != http.StatusForbidden {
		t.Errorf("reader DELETE = %d, want 403", code)
	}
	// A 401 invites a browser to ask for the password (the console).
	req, _ := http.NewRequest("GET", base+"/ui/", nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("WWW-Authenticate"); !strings.HasPrefix(got, `Basic realm="Fjord"`) {
		t.Errorf("WWW-Authenticate = %q", got)
	}
	sw.close()
	out := logs.String()
	if !strings.Contains(out, "failed authentication") {
		t.Errorf("failed logins are not logged")
	}
	for _, s := range restSecrets {
		if strings.Contains(out, s) {
			t.Errorf("the log shows a secret")
		}
	}
}

// TestRESTSecurityDistributedHTTPS runs two distributed workers whose
// REST listeners are HTTPS with authentication: requests a follower
// forwards to the leader carry the caller's credentials, task configs a
// follower generates reach the leader through the internal endpoint
// signed with the session key (exempt from user authentication, as in
// Kafka), and unsigned or wrongly signed internal requests are refused.
func TestRESTSecurityDistributedHTTPS(t *testing.T) {
	testkit.SkipShort(t, "two distributed workers")
	b := testkit.StartBroker(t, nil)
	dir := t.TempDir()
	secProps, pki := secureREST(t, dir)
	var logs lockedBuffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var workers []*connectWorker
	var urls []string
	for i := range 2 {
		rest := testkit.FreeAddr(t)
		props := maps.Clone(secProps)
		maps.Copy(props, map[string]string{
			"bootstrap.servers": b.Addr, "group.id": "secured", "listeners": "https://" + rest,
			"config.storage.topic": "sec-configs", "offset.storage.topic": "sec-offsets", "status.storage.topic": "sec-status",
			"config.storage.replication.factor": "1", "offset.storage.replication.factor": "1", "status.storage.replication.factor": "1",
			"key.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter": "org.apache.kafka.connect.json.JsonConverter",
			"scheduled.rebalance.max.delay.ms": "0",
			// A non-default algorithm, as Kafka allows.
			"inter.worker.signature.algorithm":     "HmacSHA512",
			"inter.worker.verification.algorithms": "HmacSHA512,HmacSHA256",
		})
		wc, err := runtime.ParseWorkerConfig(props, runtime.Distributed)
		if err != nil {
			t.Fatal(err)
		}
		cw, err := startConnectWorker(context.Background(), wc, log.With("worker", i))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cw.close)
		workers = append(workers, cw)
		urls = append(urls, "https://"+rest)
	}
	c := httpsClient(pki)
	for _, u := range urls {
		testkit.CheckFor(t, 60*time.Second, 100*time.Millisecond, func() error {
			if code, body := call(t, c, "GET", u+"/readyz", anonymous, ""); code != 200 {
				return fmt.Errorf("%s/readyz = %d %s", u, code, body)
			}
			return nil
		})
	}
	// Connectors created through both workers: one of them is a
	// follower, which forwards the request with the caller's
	// credentials (the leader checks them too).
	const n = 6
	for i := range n {
		u := urls[i%2]
		cfg := fmt.Sprintf(`{"name":"c%d","config":{"connector.class":"FileStreamSource","tasks.max":"1","file":%q,"topic":"sec-%d"}}`,
			i, filepath.Join(dir, fmt.Sprintf("in%d.txt", i)), i)
		testkit.CheckFor(t, 60*time.Second, 200*time.Millisecond, func() error {
			code, body := call(t, c, "POST", u+"/connectors", adminUser, cfg)
			if code != http.StatusCreated {
				return fmt.Errorf("POST /connectors c%d via %s = %d %s", i, u, code, body)
			}
			return nil
		})
		if code, body := call(t, c, "POST", u+"/connectors", readerUser, cfg); code != http.StatusForbidden {
			t.Errorf("reader POST /connectors via %s = %d %s", u, code, body)
		}
	}
	// Every connector gets its task: the workers running connectors on
	// a follower handed their task configs to the leader, signed.
	testkit.CheckFor(t, 90*time.Second, 200*time.Millisecond, func() error {
		for i := range n {
			code, body := call(t, c, "GET", fmt.Sprintf("%s/connectors/c%d/tasks", urls[i%2], i), readerUser, "")
			var tasks []map[string]any
			if code != 200 || json.Unmarshal([]byte(body), &tasks) != nil || len(tasks) != 1 {
				return fmt.Errorf("c%d tasks: %d %s", i, code, body)
			}
		}
		return nil
	})
	// Both workers ran connectors (so a follower handed task configs to
	// the leader).
	ran := map[string]bool{}
	for i := range n {
		_, body := call(t, c, "GET", fmt.Sprintf("%s/connectors/c%d/status", urls[0], i), adminUser, "")
		var st struct {
			Connector struct {
				WorkerID string `json:"worker_id"`
			} `json:"connector"`
		}
		json.Unmarshal([]byte(body), &st)
		ran[st.Connector.WorkerID] = true
	}
	if len(ran) != 2 {
		t.Errorf("connectors ran on %v; want both workers", ran)
	}

	// The internal endpoint, on the leader and the follower, without
	// user credentials (Kafka exempts it): unsigned 400, forged 403,
	// an algorithm the workers do not verify 400.
	body := `[{"task.class":"x"}]`
	for _, u := range urls {
		code, msg := call(t, c, "POST", u+"/connectors/c0/tasks", anonymous, body)
		if code != http.StatusBadRequest || !strings.Contains(msg, "Internal request missing required signature") {
			t.Errorf("unsigned internal request to %s = %d %s", u, code, msg)
		}
		code, msg = call(t, c, "POST", u+"/connectors/c0/tasks", anonymous, body,
			"X-Connect-Authorization", base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 64)),
			"X-Connect-Request-Signature-Algorithm", "HmacSHA512")
		if code != http.StatusForbidden || !strings.Contains(msg, "Internal request contained invalid signature") {
			t.Errorf("forged internal request to %s = %d %s", u, code, msg)
		}
		code, msg = call(t, c, "POST", u+"/connectors/c0/tasks", anonymous, body,
			"X-Connect-Authorization", base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 20)),
			"X-Connect-Request-Signature-Algorithm", "HmacSHA1")
		if code != http.StatusBadRequest || !strings.Contains(msg, "does not support the 'HmacSHA1' key signing algorithm") {
			t.Errorf("internal request with HmacSHA1 to %s = %d %s", u, code, msg)
		}
		// Anything else still needs credentials.
		if code, _ := call(t, c, "GET", u+"/connectors/c0/tasks", anonymous, ""); code != http.StatusUnauthorized {
			t.Errorf("anonymous GET tasks on %s = %d, want 401", u, code)
		}
	}
	for _, cw := range workers {
		cw.close()
	}
	out := logs.String()
	for _, s := range restSecrets {
		if strings.Contains(out, s) {
			t.Errorf("the log shows a secret")
		}
	}
}

// TestRESTSecurityKafkaWayProcess runs the fjord binary as Kafka users
// configure Connect: rest.extension.classes names
// BasicAuthSecurityRestExtension, KAFKA_OPTS points
// -Djava.security.auth.login.config at a JAAS file whose KafkaConnect
// section names the credentials file, and listeners is https. curl (a
// client that is not Go's) checks the CA, sends the password, and is
// refused without it; the process's output never shows the password.
func TestRESTSecurityKafkaWayProcess(t *testing.T) {
	testkit.SkipShort(t, "process test")
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Fatal("curl is needed as the non-Go HTTPS client: install it")
	}
	b := testkit.StartBroker(t, nil)
	dir := t.TempDir()
	pki := httpsectest.New(t, dir)
	rest := testkit.FreeAddr(t)
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	creds := write("connect.password", "admin: "+secAdminPW+"\n")
	jaas := write("connect_jaas.conf", "KafkaConnect {\n  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required\n  file=\""+creds+"\";\n};\n")
	worker := write("connect-standalone.properties", fmt.Sprintf(`bootstrap.servers=%s
key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=org.apache.kafka.connect.storage.StringConverter
offset.storage.file.filename=%s
listeners=https://%s
listeners.https.ssl.keystore.type=PEM
listeners.https.ssl.keystore.location=%s
rest.extension.classes=org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension
`, b.Addr, filepath.Join(dir, "offsets"), rest, pki.ServerFile))
	t.Setenv("KAFKA_OPTS", "-Xms256m -Djava.security.auth.login.config="+jaas)
	p := testkit.StartProcess(t, "connect-standalone", worker)
	testkit.WaitForPort(t, rest, 60*time.Second)

	run := func(args ...string) (string, error) {
		out, err := exec.Command(curl, append([]string{"-sS", "--cacert", pki.CAFile, "-w", " %{http_code}"}, args...)...).CombinedOutput()
		return string(out), err
	}
	testkit.CheckFor(t, 30*time.Second, 100*time.Millisecond, func() error {
		out, err := run("-u", "admin:"+secAdminPW, "https://"+rest+"/connectors")
		if err != nil || !strings.HasSuffix(out, "[] 200") {
			return fmt.Errorf("curl -u admin GET /connectors: %v %s", err, out)
		}
		return nil
	})
	if out, _ := run("https://" + rest + "/connectors"); !strings.HasSuffix(out, " 401") || !strings.Contains(out, "User cannot access the resource.") {
		t.Errorf("curl without credentials: %s", out)
	}
	if out, _ := run("-u", "admin:wrong", "-X", "POST", "https://"+rest+"/connectors"); !strings.HasSuffix(out, " 401") {
		t.Errorf("curl with a wrong password: %s", out)
	}
	// curl refuses the server without the test CA (it is not trusted).
	if out, err := exec.Command(curl, "-sS", "-u", "admin:"+secAdminPW, "https://"+rest+"/connectors").CombinedOutput(); err == nil {
		t.Errorf("curl trusted the test certificate without --cacert: %s", out)
	}
	if err := p.Stop(30 * time.Second); err != nil {
		t.Errorf("stop: %v", err)
	}
	if strings.Contains(p.Output(), secAdminPW) {
		t.Errorf("the worker's output shows the password")
	}
	if !strings.Contains(p.Output(), "REST authentication enabled") {
		t.Errorf("the worker does not say authentication is on:\n%s", p.Output())
	}
}
