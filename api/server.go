// Package api serves Fjord's HTTP endpoints: health, Prometheus metrics,
// and (in later work) the Kafka Connect REST API, the admin API and the
// console, all on one listener.
package api

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/pprof"
	"slices"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Check reports whether one part of the process is healthy (or, as a
// ready check, ready); a non-nil error makes /healthz (/readyz) answer 503
// naming the part and the error.
type Check func() error

// Server is the HTTP server.
type Server struct {
	Router   chi.Router
	Registry *prometheus.Registry
	checks   *Checks
	ready    *Checks
	srv      *http.Server
	ln       net.Listener
	log      *slog.Logger

	secureListen func(net.Listener) net.Listener
	wrap         func(http.Handler) http.Handler
}

// New returns a server with /healthz, /readyz and /metrics. Register more
// routes on Router before Serve.
//
// /healthz says whether the process is alive and working (a failing
// check means restart it); /readyz whether it should get traffic now (a
// broker catching up after a restart is alive but not ready). With no
// ready checks added, /readyz answers 200.
func New(logger *slog.Logger) *Server {
	if logger == nil {
		logger = slog.Default()
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	s := &Server{Router: chi.NewRouter(), Registry: reg, checks: NewChecks("ok", "unavailable"), ready: NewChecks("ready", "not ready"), log: logger}
	s.Router.Get("/healthz", s.checks.ServeHTTP)
	s.Router.Get("/readyz", s.ready.ServeHTTP)
	s.Router.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	// Go's profiler, for operators chasing CPU or memory: loopback by
	// default, as the whole HTTP listener is.
	s.Router.HandleFunc("/debug/pprof/*", pprof.Index)
	s.Router.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	s.Router.HandleFunc("/debug/pprof/profile", pprof.Profile)
	s.Router.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	s.Router.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return s
}

// AddCheck registers a named health check (/healthz).
func (s *Server) AddCheck(name string, c Check) { s.checks.Add(name, c) }

// AddReadyCheck registers a named readiness check (/readyz).
func (s *Server) AddReadyCheck(name string, c Check) { s.ready.Add(name, c) }

// Checks is a set of named checks served as JSON: 200 with
// {"status": <ok>, "checks": {name: "ok", ...}} when every check passes,
// 503 with {"status": <failed>, "checks": {...}, "failing": [names]}
// otherwise, each failing check's entry holding its error. Checks may be
// added while it serves.
type Checks struct {
	ok, failed string
	mu         sync.Mutex
	checks     map[string]Check
}

// NewChecks returns an empty set answering with status ok or failed.
func NewChecks(ok, failed string) *Checks {
	return &Checks{ok: ok, failed: failed, checks: map[string]Check{}}
}

// Add registers (or replaces) a named check.
func (c *Checks) Add(name string, check Check) {
	c.mu.Lock()
	c.checks[name] = check
	c.mu.Unlock()
}

func (c *Checks) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	checks := maps.Clone(c.checks)
	c.mu.Unlock()
	status := map[string]string{}
	var failing []string
	for name, check := range checks {
		if err := check(); err != nil {
			status[name] = err.Error()
			failing = append(failing, name)
		} else {
			status[name] = "ok"
		}
	}
	if len(failing) == 0 {
		WriteJSON(w, http.StatusOK, map[string]any{"status": c.ok, "checks": status})
		return
	}
	slices.Sort(failing)
	WriteJSON(w, http.StatusServiceUnavailable, map[string]any{"status": c.failed, "checks": status, "failing": failing})
}

// WriteJSON writes v as a JSON response.
func WriteJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// Secure serves the listener through listen (e.g. TLS) and every
// request through wrap (e.g. authentication); call it before Listen and
// Serve. Either may be nil.
func (s *Server) Secure(listen func(net.Listener) net.Listener, wrap func(http.Handler) http.Handler) {
	s.secureListen, s.wrap = listen, wrap
}

// Listen binds addr.
func (s *Server) Listen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	if s.secureListen != nil {
		ln = s.secureListen(ln)
	}
	s.ln = ln
	return nil
}

// Addr is the bound address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Serve serves HTTP until Shutdown.
func (s *Server) Serve() error {
	var h http.Handler = s.Router
	if s.wrap != nil {
		h = s.wrap(h)
	}
	s.srv = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	err := s.srv.Serve(s.ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops the server, letting in-flight requests finish for up to
// the context's deadline.
func (s *Server) Shutdown(ctx context.Context) error {
	if s.srv == nil {
		if s.ln != nil {
			return s.ln.Close()
		}
		return nil
	}
	return s.srv.Shutdown(ctx)
}
