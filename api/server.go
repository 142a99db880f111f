// Package api serves Fjord's HTTP endpoints: health, Prometheus metrics,
// and (in later work) the Kafka Connect REST API, the admin API and the
// console, all on one listener.
package api

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Check reports whether one part of the process is healthy; a non-nil
// error makes /healthz answer 503 naming the part.
type Check func() error

// Server is the HTTP server.
type Server struct {
	Router   chi.Router
	Registry *prometheus.Registry
	checks   map[string]Check
	srv      *http.Server
	ln       net.Listener
	log      *slog.Logger
}

// New returns a server with /healthz and /metrics. Register more routes
// on Router before Serve.
func New(logger *slog.Logger) *Server {
	if logger == nil {
		logger = slog.Default()
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	s := &Server{Router: chi.NewRouter(), Registry: reg, checks: map[string]Check{}, log: logger}
	s.Router.Get("/healthz", s.healthz)
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

// AddCheck registers a named health check.
func (s *Server) AddCheck(name string, c Check) { s.checks[name] = c }

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	status := map[string]string{}
	code := http.StatusOK
	for name, c := range s.checks {
		if err := c(); err != nil {
			status[name] = err.Error()
			code = http.StatusServiceUnavailable
		} else {
			status[name] = "ok"
		}
	}
	body := map[string]any{"status": "ok", "checks": status}
	if code != http.StatusOK {
		body["status"] = "unavailable"
	}
	WriteJSON(w, code, body)
}

// WriteJSON writes v as a JSON response.
func WriteJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// Listen binds addr.
func (s *Server) Listen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	s.ln = ln
	return nil
}

// Addr is the bound address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Serve serves HTTP until Shutdown.
func (s *Server) Serve() error {
	s.srv = &http.Server{Handler: s.Router, ReadHeaderTimeout: 10 * time.Second}
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
