package connectapi

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/fjordhq/fjord/connect/herder"
)

// cluster is a leader and a follower, each a real HTTP server; the
// follower's herder answers every change with NotLeaderError.
type cluster struct {
	leader, follower *httptest.Server
	leaderHerder     *fakeHerder
	followerHerder   *fakeHerder
	mu               sync.Mutex
	seen             []*http.Request // requests the leader received
	bodies           []string
}

func newCluster(t *testing.T, sign func(*http.Request, []byte) error) *cluster {
	c := &cluster{leaderHerder: newFakeHerder(), followerHerder: newFakeHerder()}
	leaderAPI := New(c.leaderHerder, Options{})
	c.leader = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		c.seen = append(c.seen, r.Clone(r.Context()))
		c.bodies = append(c.bodies, string(b))
		c.mu.Unlock()
		r.Body = io.NopCloser(strings.NewReader(string(b)))
		leaderAPI.ServeHTTP(w, r)
	}))
	t.Cleanup(c.leader.Close)
	c.followerHerder.notLeader = &herder.NotLeaderError{LeaderURL: c.leader.URL + "/"}
	c.follower = httptest.NewServer(New(c.followerHerder, Options{Forward: ForwardOptions{Sign: sign}}))
	t.Cleanup(c.follower.Close)
	return c
}

func send(t *testing.T, method, url, body string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestForwardToLeader: a change sent to a follower is made by the leader,
// the answer comes back unchanged, and the Location names the follower.
func TestForwardToLeader(t *testing.T) {
	var signed []string
	c := newCluster(t, func(req *http.Request, body []byte) error {
		req.Header.Set("X-Connect-Authorization", "sig")
		signed = append(signed, req.Method+" "+req.URL.Path+" "+string(body))
		return nil
	})
	resp, body := send(t, "POST", c.follower.URL+"/connectors", `{"name":"a","config":`+srcConfig+`}`, map[string]string{"Authorization": "Basic dTpw"})
	if resp.StatusCode != 201 || body != `{"name":"a","config":{"connector.class":"FileStreamSource","file":"/dev/null","name":"a","topic":"t"},"tasks":[],"type":"source"}` {
		t.Fatalf("forwarded create: %d %s", resp.StatusCode, body)
	}
	if got, want := resp.Header.Get("Location"), c.follower.URL+"/connectors/a"; got != want {
		t.Errorf("Location %q, want %q", got, want)
	}
	if _, ok := c.leaderHerder.connectors["a"]; !ok {
		t.Fatal("the leader did not create the connector")
	}
	if _, ok := c.followerHerder.connectors["a"]; ok {
		t.Fatal("the follower created the connector itself")
	}
	first := c.seen[0]
	if first.URL.Query().Get("forward") != "true" || first.Header.Get("Authorization") != "Basic dTpw" ||
		first.Header.Get("X-Connect-Authorization") != "sig" || first.Header.Get("Content-Type") != "application/json" {
		t.Errorf("forwarded request: %s %v", first.URL, first.Header)
	}
	if len(signed) != 1 || signed[0] != `POST /connectors {"name":"a","config":`+srcConfig+`}` {
		t.Errorf("signed %q", signed)
	}

	// Query parameters and answers of every kind travel unchanged.
	resp, body = send(t, "POST", c.follower.URL+"/connectors/a/restart?includeTasks=true&onlyFailed=false", "", nil)
	if resp.StatusCode != 202 || !strings.Contains(body, `"state":"RESTARTING"`) {
		t.Errorf("forwarded restart: %d %s", resp.StatusCode, body)
	}
	if q := c.seen[len(c.seen)-1].URL.Query(); q.Get("includeTasks") != "true" || q.Get("onlyFailed") != "false" || q.Get("forward") != "true" {
		t.Errorf("forwarded query %v", q)
	}
	resp, body = send(t, "PUT", c.follower.URL+"/connectors/a/stop", "", nil)
	if resp.StatusCode != 204 || body != "" {
		t.Errorf("forwarded stop: %d %q", resp.StatusCode, body)
	}
	resp, body = send(t, "DELETE", c.follower.URL+"/connectors/nope", "", nil)
	if resp.StatusCode != 404 || body != `{"error_code":404,"message":"Connector nope not found"}` {
		t.Errorf("forwarded error: %d %s", resp.StatusCode, body)
	}
	resp, body = send(t, "PUT", c.follower.URL+"/connectors/b%2Fc/config", srcConfig, nil)
	if resp.StatusCode != 201 || resp.Header.Get("Location") != c.follower.URL+"/connectors/b%2Fc" {
		t.Errorf("forwarded PUT with an escaped name: %d %s %s", resp.StatusCode, resp.Header.Get("Location"), body)
	}
	if got := c.seen[len(c.seen)-1].URL.EscapedPath(); got != "/connectors/b%2Fc/config" {
		t.Errorf("forwarded path %q", got)
	}
}

// TestForwardHops: a request forwarded once goes on with forward=false;
// one with forward=false is not forwarded again.
func TestForwardHops(t *testing.T) {
	c := newCluster(t, nil)
	// The "leader" is not the leader either: it forwards once more.
	c.leaderHerder.notLeader = &herder.NotLeaderError{LeaderURL: c.follower.URL}
	resp, body := send(t, "DELETE", c.follower.URL+"/connectors/a", "", nil)
	if resp.StatusCode != 409 || body != `{"error_code":409,"message":"Cannot complete request because of a conflicting operation (e.g. worker rebalance)"}` {
		t.Errorf("three hops: %d %s", resp.StatusCode, body)
	}
	if len(c.seen) != 1 || c.seen[0].URL.Query().Get("forward") != "true" {
		t.Fatalf("leader saw %d requests", len(c.seen))
	}
	resp, _ = send(t, "DELETE", c.follower.URL+"/connectors/a?forward=false", "", nil)
	if resp.StatusCode != 409 || len(c.seen) != 1 {
		t.Errorf("forward=false was forwarded: %d, %d requests", resp.StatusCode, len(c.seen))
	}
}

func TestForwardFailures(t *testing.T) {
	f := newFakeHerder()
	f.notLeader = &herder.NotLeaderError{}
	s := New(f, Options{})
	expect(t, s, "DELETE", "/connectors/a", "", 409, `{"error_code":409,"message":"Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway."}`)

	// A leader that does not answer.
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	f.notLeader = &herder.NotLeaderError{LeaderURL: dead.URL}
	code, _, body := do(t, s, "DELETE", "/connectors/a", "")
	if code != 500 || !strings.HasPrefix(body, `{"error_code":500,"message":"IO Error trying to forward REST request: `) {
		t.Errorf("dead leader: %d %s", code, body)
	}

	// A leader whose error is not Kafka's error body.
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "<html>oops</html>", http.StatusBadGateway)
	}))
	defer html.Close()
	f.notLeader = &herder.NotLeaderError{LeaderURL: html.URL}
	expect(t, s, "DELETE", "/connectors/a", "", 500, `{"error_code":500,"message":"Unexpected status code when handling forwarded request: 502"}`)

	// A signing hook that fails stops the request.
	s = New(f, Options{Forward: ForwardOptions{Sign: func(*http.Request, []byte) error { return errors.New("no session key yet") }}})
	expect(t, s, "DELETE", "/connectors/a", "", 500, `{"error_code":500,"message":"Failed to sign forwarded REST request: no session key yet"}`)
}
