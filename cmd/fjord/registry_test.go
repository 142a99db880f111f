package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fjordhq/fjord/internal/testkit"
)

// registryCall does one REST call and decodes the answer.
func registryCall(base, method, path, body string) (int, any, error) {
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return resp.StatusCode, string(raw), nil
	}
	return resp.StatusCode, v, nil
}

func startRegistry(t *testing.T, broker, listen string) *testkit.Process {
	t.Helper()
	p := testkit.StartProcess(t, "registry", "--listen", listen, "--bootstrap-server", broker)
	testkit.CheckFor(t, 30*time.Second, 100*time.Millisecond, func() error {
		code, v, err := registryCall("http://"+listen, "GET", "/subjects", "")
		if err != nil || code != 200 {
			return fmt.Errorf("GET /subjects: %d %v %v", code, v, err)
		}
		return nil
	})
	return p
}

// register registers schema under subject through base and returns the
// id, retrying while a leader is being elected.
func register(t *testing.T, base, subject, schema string) int {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"schema": schema})
	var id int
	testkit.CheckFor(t, 40*time.Second, 200*time.Millisecond, func() error {
		code, v, err := registryCall(base, "POST", "/subjects/"+subject+"/versions", string(body))
		if err != nil || code != 200 {
			return fmt.Errorf("register %s: %d %v %v", subject, code, v, err)
		}
		id = int(v.(map[string]any)["id"].(float64))
		return nil
	})
	return id
}

// `fjord registry` processes on one broker: they share ids, survive a
// SIGKILL of the writer (the other takes over) and a restart.
func TestRegistryCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level registry test (waits out a group session timeout)")
	}
	b := testkit.StartBroker(t, nil)
	addrA, addrB := testkit.FreeAddr(t), testkit.FreeAddr(t)
	a := startRegistry(t, b.Addr, addrA)
	startRegistry(t, b.Addr, addrB)
	baseA, baseB := "http://"+addrA, "http://"+addrB

	if id := register(t, baseA, "a-value", `"string"`); id != 1 {
		t.Fatalf("first id %d, want 1", id)
	}
	if id := register(t, baseB, "b-value", `"long"`); id != 2 {
		t.Fatalf("second id %d, want 2", id)
	}
	if id := register(t, baseB, "c-value", `"string"`); id != 1 {
		t.Fatalf("same schema got id %d, want 1", id)
	}
	testkit.CheckFor(t, 10*time.Second, 100*time.Millisecond, func() error {
		_, v, err := registryCall(baseA, "GET", "/schemas/ids/2", "")
		if err != nil || fmt.Sprint(v) != `map[schema:"long"]` {
			return fmt.Errorf("id 2 on A: %v %v", v, err)
		}
		return nil
	})

	// Kill A (maybe the writer): B registers on its own.
	a.Kill()
	if id := register(t, baseB, "d-value", `"bytes"`); id != 3 {
		t.Fatalf("id after kill %d, want 3", id)
	}
	// A restarted reads the topic back: same ids, continues numbering.
	a.Restart()
	testkit.CheckFor(t, 30*time.Second, 100*time.Millisecond, func() error {
		code, v, err := registryCall(baseA, "GET", "/subjects/d-value/versions/1", "")
		if err != nil || code != 200 || v.(map[string]any)["id"] != float64(3) {
			return fmt.Errorf("d-value on restarted A: %d %v %v", code, v, err)
		}
		return nil
	})
	if id := register(t, baseA, "e-value", `"int"`); id != 4 {
		t.Fatalf("id after restart %d, want 4", id)
	}
}
