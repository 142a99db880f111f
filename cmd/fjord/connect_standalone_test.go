package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fjordhq/fjord/internal/testkit"
)

// TestConnectStandaloneProcess runs Kafka's quickstart as a process: a
// FileStreamSource copies a file into a topic, a FileStreamSink copies the
// topic into another file. Killed with SIGKILL and restarted, the worker
// resumes from its offsets file: every line arrives, none is lost.
func TestConnectStandaloneProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("process test; run without -short")
	}
	b := testkit.StartBroker(t, nil)
	dir := t.TempDir()
	in, out := filepath.Join(dir, "test.txt"), filepath.Join(dir, "test.sink.txt")
	appendLines(t, in, 0, 1000)
	rest := testkit.FreeAddr(t)
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	worker := write("connect-standalone.properties", fmt.Sprintf(`# Kafka's sample, with a test broker and port
bootstrap.servers=%s
key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=org.apache.kafka.connect.storage.StringConverter
key.converter.schemas.enable=true
value.converter.schemas.enable=true
offset.storage.file.filename=%s
offset.flush.interval.ms=200
listeners=http://%s
plugin.path=libs/connect-file-4.4.0.jar
`, b.Addr, filepath.Join(dir, "connect.offsets"), rest))
	source := write("connect-file-source.properties", fmt.Sprintf(`name=local-file-source
connector.class=FileStreamSource
tasks.max=1
file=%s
topic=connect-test
`, in))
	sink := write("connect-file-sink.json", fmt.Sprintf(`{"name": "local-file-sink", "config": {
  "connector.class": "FileStreamSink", "tasks.max": "1", "file": %q, "topics": "connect-test"}}`, out))

	p := testkit.StartProcess(t, "connect-standalone", worker, source, sink)
	testkit.WaitForPort(t, rest, 60*time.Second)
	// The REST server listens before the connectors of the command line
	// are created (as Kafka's ConnectStandalone): they appear shortly.
	testkit.CheckFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		var names []string
		getJSON(t, "http://"+rest+"/connectors", &names)
		if strings.Join(names, ",") != "local-file-sink,local-file-source" {
			return fmt.Errorf("GET /connectors = %v", names)
		}
		return nil
	})
	awaitLines(t, out, 1000)
	// A standalone worker is ready (for a load balancer or a probe) once
	// its herder answers; the console is served beside the REST API.
	for _, path := range []string{"/readyz", "/ui/", "/api/v1/topics"} {
		resp, err := http.Get("http://" + rest + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s = %d, want 200", path, resp.StatusCode)
		}
	}
	var status struct {
		Connector struct{ State string } `json:"connector"`
		Tasks     []struct{ State string }
	}
	getJSON(t, "http://"+rest+"/connectors/local-file-source/status", &status)
	if status.Connector.State != "RUNNING" || len(status.Tasks) != 1 || status.Tasks[0].State != "RUNNING" {
		t.Errorf("status %+v", status)
	}
	testkit.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		data, _ := os.ReadFile(filepath.Join(dir, "connect.offsets"))
		if !bytes.Contains(data, []byte(`"local-file-source"`)) || !bytes.Contains(data, []byte(`"position"`)) {
			return fmt.Errorf("offsets file:\n%s", data)
		}
		return nil
	})

	// Crash, add lines, start again: the source resumes from its offset.
	p.Kill()
	appendLines(t, in, 1000, 1500)
	p.Restart()
	testkit.WaitForPort(t, rest, 60*time.Second)
	awaitLines(t, out, 1500)
	data, _ := os.ReadFile(out)
	seen := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		seen[l]++
	}
	dups := 0
	for i := range 1500 {
		n := seen[fmt.Sprint("line-", i)]
		if n == 0 {
			t.Fatalf("line-%d never reached the sink file", i)
		}
		dups += n - 1
	}
	t.Logf("1500 lines delivered, %d duplicates after the SIGKILL", dups)
	if err := p.Stop(30 * time.Second); err != nil {
		t.Errorf("clean stop: %v", err)
	}
}

func appendLines(t *testing.T, path string, from, to int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i := from; i < to; i++ {
		fmt.Fprintf(f, "line-%d\n", i)
	}
}

func awaitLines(t *testing.T, path string, n int) {
	t.Helper()
	testkit.CheckFor(t, 60*time.Second, 50*time.Millisecond, func() error {
		data, _ := os.ReadFile(path)
		distinct := map[string]bool{}
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if l != "" {
				distinct[l] = true
			}
		}
		if len(distinct) < n {
			return fmt.Errorf("%s has %d distinct lines, want %d", path, len(distinct), n)
		}
		return nil
	})
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	var body []byte
	testkit.CheckFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		resp, err := http.Get(url)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ = io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %d %s", url, resp.StatusCode, body)
		}
		return nil
	})
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: %v: %s", url, err, body)
	}
}
