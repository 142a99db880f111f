package connectapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/fjordhq/fjord/connect/herder"
)

// ForwardOptions configure how a follower forwards requests to the leader.
type ForwardOptions struct {
	// Client sends forwarded requests; default a client with Timeout.
	Client *http.Client
	// Timeout bounds one forwarded request when Client is nil (default
	// 90 s, Kafka's REST request timeout).
	Timeout time.Duration
	// Sign, if set, is called on every forwarded request before it is
	// sent, with the body it carries: the seam for inter-worker request
	// signing (Kafka's inter.worker.key and X-Connect-Authorization).
	// An error fails the request with 500.
	Sign func(req *http.Request, body []byte) error
}

func (o ForwardOptions) withDefaults() ForwardOptions {
	if o.Timeout <= 0 {
		o.Timeout = 90 * time.Second
	}
	if o.Client == nil {
		o.Client = &http.Client{Timeout: o.Timeout}
	}
	return o
}

// forward sends the request to the leader and relays its answer, as
// Kafka's HerderRequestHandler.completeOrForwardRequest: a request from a
// user (no "forward" parameter) is sent on with forward=true, one that
// was already forwarded once (forward=true) is sent on with forward=false,
// and one with forward=false is not forwarded again (409): two hops find
// the leader unless a rebalance moved it meanwhile.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, body []byte, leaderURL string) {
	s.forwardKeeping(w, r, body, leaderURL)
}

// forwardKeeping is forward that also passes the named request headers
// on (the internal endpoint's signature headers: the body travels
// byte for byte, so the leader can check the original signature).
func (s *Server) forwardKeeping(w http.ResponseWriter, r *http.Request, body []byte, leaderURL string, keep ...string) {
	q := r.URL.Query()
	var fwd *bool
	if v, ok := q["forward"]; ok {
		b := javaBool(v[0])
		fwd = &b
	}
	if fwd != nil && !*fwd {
		s.log.Error("request could not find the leader within two hops", "method", r.Method, "path", r.URL.Path)
		writeError(w, herder.Errorf(http.StatusConflict, "Cannot complete request because of a conflicting operation (e.g. worker rebalance)"))
		return
	}
	if leaderURL == "" {
		writeError(w, herder.Errorf(http.StatusConflict, "Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway."))
		return
	}
	q.Set("forward", boolString(fwd == nil))
	target := strings.TrimRight(leaderURL, "/") + r.URL.EscapedPath() + "?" + q.Encode()

	req, err := http.NewRequestWithContext(r.Context(), r.Method, target, bytes.NewReader(body))
	if err != nil {
		writeError(w, herder.Errorf(http.StatusInternalServerError, "Error trying to forward REST request: %v", err))
		return
	}
	if len(body) > 0 {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	// Kafka's RestClient passes the caller's credentials on.
	if a := r.Header.Get("Authorization"); a != "" {
		req.Header.Set("Authorization", a)
	}
	for _, k := range keep {
		if v := r.Header.Get(k); v != "" {
			req.Header.Set(k, v)
		}
	}
	if s.opts.Forward.Sign != nil {
		if err := s.opts.Forward.Sign(req, body); err != nil {
			writeError(w, herder.Errorf(http.StatusInternalServerError, "Failed to sign forwarded REST request: %v", err))
			return
		}
	}
	s.log.Debug("forwarding request to the leader", "method", r.Method, "url", target)
	resp, err := s.opts.Forward.Client.Do(req)
	if err != nil {
		writeError(w, herder.Errorf(http.StatusInternalServerError, "IO Error trying to forward REST request: %v", err))
		return
	}
	defer resp.Body.Close()
	rb, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		writeError(w, herder.Errorf(http.StatusInternalServerError, "IO Error trying to forward REST request: %v", err))
		return
	}
	// Errors come back as Kafka's RestClient rethrows them: the leader's
	// code and message, or a 500 when its answer is not an error body.
	if resp.StatusCode >= 400 {
		var e herder.Error
		if json.Unmarshal(rb, &e) != nil || e.Message == "" && e.Code == 0 {
			writeError(w, herder.Errorf(http.StatusInternalServerError, "Unexpected status code when handling forwarded request: %d", resp.StatusCode))
			return
		}
	}
	// The answer as the leader gave it; a Location names this worker, as
	// Kafka builds it from the local request.
	if loc := resp.Header.Get("Location"); loc != "" {
		if u, err := url.Parse(loc); err == nil {
			scheme := "http"
			if r.TLS != nil {
				scheme = "https"
			}
			u.Scheme, u.Host = scheme, r.Host
			w.Header().Set("Location", u.String())
		}
	}
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		w.Header().Set("Content-Type", ct)
	}
	w.WriteHeader(resp.StatusCode)
	w.Write(rb)
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
