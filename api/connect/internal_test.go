package connectapi

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/fjordhq/fjord/connect/herder"
)

var sessionKey = []byte("0123456789abcdef")

func sign(body []byte) string {
	mac := hmac.New(sha256.New, sessionKey)
	mac.Write(body)
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// taskHerder is the fake herder plus the internal endpoint, verifying
// signatures as herder.Distributed does (HmacSHA256 with a session key).
type taskHerder struct {
	*fakeHerder
	leaderURL string // "" on the leader
	mu        sync.Mutex
	written   map[string][]map[string]string
}

func (h *taskHerder) VerifyInternalRequest(_ context.Context, body []byte, hd http.Header) error {
	sig := hd.Get("X-Connect-Authorization")
	if sig == "" || hd.Get("X-Connect-Request-Signature-Algorithm") == "" {
		return herder.Errorf(http.StatusBadRequest, "Internal request missing required signature")
	}
	if sig != sign(body) {
		return herder.Errorf(http.StatusForbidden, "Internal request contained invalid signature.")
	}
	return nil
}

func (h *taskHerder) PutTaskConfigs(_ context.Context, name string, configs []map[string]string) error {
	if h.leaderURL != "" {
		return &herder.NotLeaderError{LeaderURL: h.leaderURL}
	}
	if name != "src" {
		return herder.Errorf(http.StatusNotFound, "Connector %s not found", name)
	}
	h.mu.Lock()
	h.written[name] = configs
	h.mu.Unlock()
	return nil
}

// POST /connectors/{c}/tasks, Kafka's internal endpoint, is served by
// api/connect: the receiving worker checks the signature, a follower
// forwards the same bytes and signature to the leader (Kafka's
// completeOrForwardRequest hops), the leader writes the configs; a herder
// without the endpoint answers as Kafka's standalone herder.
func TestInternalTaskConfigs(t *testing.T) {
	leaderH := &taskHerder{fakeHerder: newFakeHerder(), written: map[string][]map[string]string{}}
	var mu sync.Mutex
	var seen []*http.Request
	leaderAPI := New(leaderH, Options{})
	leader := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Clone(r.Context()))
		mu.Unlock()
		leaderAPI.ServeHTTP(w, r)
	}))
	defer leader.Close()
	followerH := &taskHerder{fakeHerder: newFakeHerder(), leaderURL: leader.URL + "/", written: map[string][]map[string]string{}}
	follower := httptest.NewServer(New(followerH, Options{}))
	defer follower.Close()

	body := `[{"task.index":"0","file":"/a"},{"task.index":"1","file":"/b"}]`
	signed := map[string]string{"X-Connect-Authorization": sign([]byte(body)), "X-Connect-Request-Signature-Algorithm": "HmacSHA256"}
	resp, out := send(t, "POST", follower.URL+"/connectors/src/tasks", body, signed)
	if resp.StatusCode != http.StatusNoContent || out != "" {
		t.Fatalf("via the follower: %d %s", resp.StatusCode, out)
	}
	if got := leaderH.written["src"]; len(got) != 2 || got[1]["file"] != "/b" {
		t.Fatalf("leader wrote %v", got)
	}
	if len(followerH.written) != 0 {
		t.Fatalf("follower wrote %v", followerH.written)
	}
	if len(seen) != 1 || seen[0].URL.Query().Get("forward") != "true" || seen[0].Header.Get("X-Connect-Authorization") != signed["X-Connect-Authorization"] ||
		seen[0].Header.Get("X-Connect-Request-Signature-Algorithm") != "HmacSHA256" {
		t.Fatalf("forwarded %v", seen)
	}

	// Straight to the leader, as a worker that knows it sends it.
	resp, out = send(t, "POST", leader.URL+"/connectors/src/tasks?forward=true", `[]`, map[string]string{"X-Connect-Authorization": sign([]byte(`[]`)), "X-Connect-Request-Signature-Algorithm": "HmacSHA256"})
	if resp.StatusCode != http.StatusNoContent || len(leaderH.written["src"]) != 0 {
		t.Fatalf("to the leader: %d %s %v", resp.StatusCode, out, leaderH.written)
	}

	for _, tc := range []struct {
		name, url, body string
		hdr             map[string]string
		code            int
		msg             string
	}{
		{"unsigned", follower.URL + "/connectors/src/tasks", body, nil, 400, "Internal request missing required signature"},
		{"bad signature", follower.URL + "/connectors/src/tasks", body, map[string]string{"X-Connect-Authorization": sign([]byte("other")), "X-Connect-Request-Signature-Algorithm": "HmacSHA256"}, 403, "Internal request contained invalid signature."},
		{"unknown connector", follower.URL + "/connectors/nope/tasks", body, signed, 404, "Connector nope not found"},
		{"not a list", leader.URL + "/connectors/src/tasks", `{"a":"b"}`, nil, 400, "Invalid task configs: "},
		{"no third hop", follower.URL + "/connectors/src/tasks?forward=false", body, signed, 409, "Cannot complete request because of a conflicting operation (e.g. worker rebalance)"},
	} {
		resp, out := send(t, "POST", tc.url, tc.body, tc.hdr)
		var e herder.Error
		json.Unmarshal([]byte(out), &e)
		if resp.StatusCode != tc.code || e.Code != tc.code || !strings.HasPrefix(e.Message, tc.msg) {
			t.Errorf("%s: %d %s, want %d %q", tc.name, resp.StatusCode, out, tc.code, tc.msg)
		}
	}

	// A herder without the endpoint (standalone) answers as Kafka's.
	standalone := httptest.NewServer(New(newFakeHerder(), Options{}))
	defer standalone.Close()
	resp, out = send(t, "POST", standalone.URL+"/connectors/src/tasks", body, nil)
	if resp.StatusCode != 500 || out != `{"error_code":500,"message":"Kafka Connect in standalone mode does not support externally setting task configurations."}` {
		t.Errorf("standalone: %d %s", resp.StatusCode, out)
	}
	// GET on the same path is still the public task list.
	req, _ := http.NewRequest("GET", standalone.URL+"/connectors/nope/tasks", nil)
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != 404 {
		t.Errorf("GET tasks: %d %s", r.StatusCode, b)
	}
}
