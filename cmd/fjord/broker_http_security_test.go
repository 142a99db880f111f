package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fjordhq/fjord/internal/testkit"
)

// TestBrokerHTTPSecured: `fjord broker --http-addr https://... --http-config`
// serves the admin API and console over HTTPS with the same
// authentication and roles as a Connect worker's REST API: anonymous
// callers get 401, read-only ones 403 on changes, admins through; probes
// stay open; plain HTTP is refused.
func TestBrokerHTTPSecured(t *testing.T) {
	testkit.SkipShort(t, "builds and runs the fjord binary")
	dir := t.TempDir()
	props, pki := secureREST(t, dir)
	var lines []string
	for k, v := range props {
		lines = append(lines, k+"="+v)
	}
	httpConfig := filepath.Join(dir, "http.properties")
	if err := os.WriteFile(httpConfig, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path, kafkaAddr := writeProperties(t, "")
	httpAddr := testkit.FreeAddr(t)
	p := testkit.StartProcess(t, "broker", "--config", path, "--http-addr", "https://"+httpAddr, "--http-config", httpConfig)
	testkit.WaitForPort(t, kafkaAddr, 30*time.Second)
	testkit.WaitForPort(t, httpAddr, 30*time.Second)
	base := "https://" + httpAddr
	c := httpsClient(pki)

	testkit.CheckFor(t, 20*time.Second, 50*time.Millisecond, func() error {
		if code, body := call(t, c, "GET", base+"/readyz", anonymous, ""); code != http.StatusOK {
			return fmt.Errorf("GET /readyz without credentials = %d %s, want 200 (probes stay open)", code, body)
		}
		return nil
	})
	for _, tc := range []struct {
		method, path string
		who          restCaller
		body         string
		want         int
	}{
		{"GET", "/api/v1/topics", anonymous, "", http.StatusUnauthorized},
		{"GET", "/api/v1/topics", wrongPW, "", http.StatusUnauthorized},
		{"GET", "/ui/", anonymous, "", http.StatusUnauthorized},
		{"GET", "/metrics", anonymous, "", http.StatusUnauthorized},
		{"GET", "/api/v1/topics", readerUser, "", http.StatusOK},
		{"POST", "/api/v1/topics", readerUser, `{"name":"denied"}`, http.StatusForbidden},
		{"POST", "/api/v1/topics", readBearer, `{"name":"denied"}`, http.StatusForbidden},
		{"POST", "/api/v1/topics", adminUser, `{"name":"allowed","partitions":1}`, http.StatusCreated},
		{"DELETE", "/api/v1/topics/allowed", readerUser, "", http.StatusForbidden},
		{"DELETE", "/api/v1/topics/allowed", adminBearer, "", http.StatusNoContent},
		{"GET", "/ui/", adminUser, "", http.StatusOK},
	} {
		if code, body := call(t, c, tc.method, base+tc.path, tc.who, tc.body); code != tc.want {
			t.Errorf("%s %s as %s = %d %s, want %d", tc.method, tc.path, tc.who.name, code, body, tc.want)
		}
	}
	// Plain HTTP to the HTTPS port is refused.
	if resp, err := http.Get("http://" + httpAddr + "/api/v1/topics"); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("plain HTTP to the HTTPS listener = %d, want 400", resp.StatusCode)
		}
	}
	if err := p.Stop(10 * time.Second); err != nil {
		t.Fatalf("SIGTERM: %v\n%s", err, p.Output())
	}
	for _, s := range restSecrets {
		if strings.Contains(p.Output(), s) {
			t.Errorf("the broker's output shows a secret")
		}
	}
}

// TestBrokerConsoleOnSASLBroker: on a broker whose only client listener
// needs SASL, the admin API's own Kafka client authenticates with the
// admin.-prefixed client settings of --http-config.
func TestBrokerConsoleOnSASLBroker(t *testing.T) {
	testkit.SkipShort(t, "builds and runs the fjord binary")
	dir := t.TempDir()
	path, kafkaAddr := writeProperties(t, "")
	host, port, _ := strings.Cut(kafkaAddr, ":")
	const jaas = `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret";`
	httpConfig := filepath.Join(dir, "http.properties")
	if err := os.WriteFile(httpConfig, []byte("admin.security.protocol=SASL_PLAINTEXT\nadmin.sasl.mechanism=PLAIN\n"+
		`admin.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret";`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctrl := ""
	if b, err := os.ReadFile(path); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "controller.quorum.bootstrap.servers="); ok {
				ctrl = v
			}
		}
	}
	httpAddr := testkit.FreeAddr(t)
	p := testkit.StartProcess(t, "broker", "--config", path,
		"--override", "listeners=SASL_PLAINTEXT://"+host+":"+port+",CONTROLLER://"+ctrl,
		"--override", "advertised.listeners=SASL_PLAINTEXT://"+host+":"+port+",CONTROLLER://"+ctrl,
		"--override", "inter.broker.listener.name=SASL_PLAINTEXT",
		"--override", "sasl.enabled.mechanisms=PLAIN",
		"--override", "sasl.mechanism.inter.broker.protocol=PLAIN",
		"--override", "listener.name.sasl_plaintext.plain.sasl.jaas.config="+jaas,
		"--http-addr", httpAddr, "--http-config", httpConfig)
	testkit.WaitForPort(t, httpAddr, 30*time.Second)
	testkit.CheckFor(t, 30*time.Second, 100*time.Millisecond, func() error {
		resp, err := http.Get("http://" + httpAddr + "/api/v1/brokers")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET /api/v1/brokers = %d", resp.StatusCode)
		}
		return nil
	})
	if err := p.Stop(10 * time.Second); err != nil {
		t.Fatalf("SIGTERM: %v\n%s", err, p.Output())
	}
}
