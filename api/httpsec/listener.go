package httpsec

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

// Security is how a worker's REST listener is served and how it calls
// other workers' listeners.
type Security struct {
	// TLS is the server configuration (nil: plain HTTP).
	TLS *tls.Config
	// ClientTLS verifies other workers' https:// listeners (nil: the
	// listener is plain HTTP and so, presumably, are the others').
	ClientTLS *tls.Config
	// Auth authenticates callers (nil: everyone is let in).
	Auth *Auth
}

// ForListener reads the security settings of the listener with scheme
// ("http" or "https") from worker properties; KAFKA_OPTS is read from
// the environment (for Kafka's JAAS file option).
func ForListener(props map[string]string, scheme string, log *slog.Logger) (*Security, error) {
	s := &Security{}
	if scheme == "https" {
		var err error
		if s.TLS, err = ServerTLS(props); err != nil {
			return nil, fmt.Errorf("https listener: %w", err)
		}
		if s.ClientTLS, err = ClientTLS(props); err != nil {
			return nil, fmt.Errorf("https client for forwarding to other workers: %w", err)
		}
	}
	a, err := LoadAuth(props, os.Getenv, log)
	if err != nil {
		return nil, err
	}
	s.Auth = a
	if log == nil {
		log = slog.Default()
	}
	if a != nil {
		// Counts only: names and secrets stay out of the log.
		log.Info("REST authentication enabled", "users", len(a.users), "tokens", len(a.tokens), "https", s.TLS != nil)
		if s.TLS == nil {
			log.Warn("REST authentication over plain HTTP sends passwords and tokens in clear text; serve listeners=https://... with listeners.https.ssl.keystore.location")
		}
	}
	return s, nil
}

// Listen wraps a bound TCP listener in TLS when the listener is HTTPS. A
// plain HTTP request to it is answered by net/http with 400 "Client sent
// an HTTP request to an HTTPS server".
func (s *Security) Listen(ln net.Listener) net.Listener {
	if s == nil || s.TLS == nil {
		return ln
	}
	cfg := s.TLS.Clone()
	if len(cfg.NextProtos) == 0 {
		cfg.NextProtos = []string{"h2", "http/1.1"}
	}
	return tls.NewListener(ln, cfg)
}

// Handler wraps h with authentication and roles.
func (s *Security) Handler(h http.Handler) http.Handler {
	if s == nil {
		return h
	}
	return s.Auth.Wrap(h)
}

// Client is an HTTP client for worker-to-worker calls (forwarding to
// the leader, task configs) trusting what ClientTLS trusts.
func (s *Security) Client(timeout time.Duration) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if s != nil && s.ClientTLS != nil {
		tr.TLSClientConfig = s.ClientTLS.Clone()
	}
	return &http.Client{Timeout: timeout, Transport: tr}
}

// PeerClient is the client a worker advertising advertisedURL calls the
// other workers with: with ClientTLS when the URL is https (the ssl
// settings are read only then, as Kafka's RestClient does, so a plain
// HTTP worker with Kafka-client ssl.* keys it cannot read still starts).
func PeerClient(props map[string]string, advertisedURL string, timeout time.Duration) (*http.Client, error) {
	s := &Security{}
	if strings.HasPrefix(advertisedURL, "https://") {
		c, err := ClientTLS(props)
		if err != nil {
			return nil, fmt.Errorf("https client for forwarding to other workers: %w", err)
		}
		s.ClientTLS = c
	}
	return s.Client(timeout), nil
}
