package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/fjordhq/fjord/api"
	"github.com/fjordhq/fjord/api/httpsec"
	"github.com/fjordhq/fjord/broker"
	"github.com/fjordhq/fjord/broker/config"
	"github.com/fjordhq/fjord/connect/herder"
)

// component is something that runs beside the broker in one process (the
// Connect worker and schema registry of `fjord dev`): start is called once
// the broker serves and before the HTTP server does, so it can mount
// routes on h; it returns how to stop it.
type component struct {
	name  string
	start func(ctx context.Context, b *broker.Server, h *api.Server) (stop func(), err error)
}

// runBroker starts a broker, the HTTP server (with httpAddr) and the
// components, and serves until SIGINT/SIGTERM, then shuts down in reverse
// order. banner is printed once everything listens.
func runBroker(cfg broker.Config, httpAddr string, httpProps map[string]string, components []component, banner func(b *broker.Server, h *api.Server)) error {
	var h *api.Server
	if httpAddr != "" {
		h = api.New(slog.Default())
		cfg.Registerer = h.Registry
		scheme, addr, err := httpListener(httpAddr)
		if err != nil {
			return err
		}
		httpAddr = addr
		// HTTPS and authentication with a worker's REST keys
		// (listeners.https.ssl.*, fjord.rest.auth.*): the admin API can
		// delete topics, so a node reachable by others should not serve
		// it open.
		sec, err := httpsec.ForListener(httpProps, scheme, slog.Default())
		if err != nil {
			return fmt.Errorf("--http-config: %w", err)
		}
		h.Secure(sec.Listen, sec.Handler)
		if err := h.Listen(httpAddr); err != nil {
			return fmt.Errorf("HTTP listener %s: %w (is another Fjord running? pick another --http-addr)", httpAddr, err)
		}
	} else if len(components) > 0 {
		return errors.New("internal: components need the HTTP server")
	}
	// Signals are caught before the broker starts: a cluster broker waits
	// in New until the controller unfences it, and a SIGTERM meanwhile
	// must stop it cleanly, not kill it.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sig)
	startCtx, cancelStart := context.WithCancel(context.Background())
	defer cancelStart()
	starting := make(chan struct{})
	go func() {
		select {
		case s := <-sig:
			slog.Info("shutting down during start-up", "signal", s.String())
			cancelStart()
		case <-starting:
		}
	}()
	cfg.Context = startCtx
	start := time.Now()
	b, err := broker.New(cfg)
	close(starting)
	if err != nil {
		if h != nil {
			h.Shutdown(context.Background())
		}
		if startCtx.Err() != nil {
			return fmt.Errorf("stopped during start-up: %w", err)
		}
		return err
	}
	errc := make(chan error, 2)
	go func() { errc <- b.Serve() }()
	slog.Info("broker started", "took", time.Since(start).Round(time.Millisecond), "cluster.id", b.ClusterID())

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stops []func()
	stopAll := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
		stops = nil
	}
	for _, c := range components {
		t0 := time.Now()
		stop, err := c.start(ctx, b, h)
		if err != nil {
			stopAll()
			if h != nil {
				h.Shutdown(context.Background())
			}
			b.Close()
			return fmt.Errorf("start %s: %w", c.name, err)
		}
		stops = append(stops, stop)
		slog.Info("started", "component", c.name, "took", time.Since(t0).Round(time.Millisecond))
	}

	if h != nil {
		h.AddCheck("broker", func() error {
			if !b.Ready() {
				return errors.New("broker is shutting down")
			}
			return nil
		})
		// /readyz: unfenced, metadata loaded, and in the ISR of every
		// partition it follows — what a rolling restart waits for.
		h.AddReadyCheck("broker", b.ReadyError)
		go func() { errc <- h.Serve() }()
	}
	banner(b, h)

	var serveErr error
	select {
	case s := <-sig:
		slog.Info("shutting down", "signal", s.String())
	case serveErr = <-errc:
		slog.Error("server stopped unexpectedly", "err", serveErr)
	}
	// Components first (the Connect worker stops its tasks and leaves its
	// group while the broker still serves), then HTTP, then the broker.
	stopAll()
	shutdownCtx, cancelShutdown := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancelShutdown()
	if h != nil {
		h.Shutdown(shutdownCtx)
	}
	if err := b.Close(); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	slog.Info("stopped cleanly")
	return serveErr
}

// herderReady is the /readyz check of a distributed Connect worker: its
// herder answers a request, which it does only once it has joined the
// worker group and read the config topic to its end (Kafka's GET /health
// asks the herder the same way). A config change waiting for its
// rebalance (409) counts as ready: the worker serves meanwhile.
func herderReady(h interface {
	Connectors(ctx context.Context) ([]string, error)
}) api.Check {
	return func() error {
		// Probes time out after a second or two (Kubernetes: 1 s).
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err := h.Connectors(ctx)
		var he *herder.Error
		switch {
		case err == nil, errors.As(err, &he) && he.Code == http.StatusConflict:
			return nil
		case errors.Is(err, context.DeadlineExceeded):
			return errors.New("the Connect worker has not joined its group and read the config topic yet")
		}
		return fmt.Errorf("the Connect worker is not ready: %w", err)
	}
}

// httpListener splits --http-addr: HOST:PORT or http://HOST:PORT serve
// HTTP, https://HOST:PORT HTTPS.
func httpListener(flag string) (scheme, addr string, err error) {
	scheme, addr = "http", flag
	if s, rest, ok := strings.Cut(flag, "://"); ok {
		scheme, addr = strings.ToLower(s), rest
	}
	if scheme != "http" && scheme != "https" {
		return "", "", fmt.Errorf("--http-addr %q: use HOST:PORT, http://HOST:PORT or https://HOST:PORT", flag)
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return "", "", fmt.Errorf("--http-addr %q: %w", flag, err)
	}
	return scheme, addr, nil
}

// readHTTPConfig reads --http-config: a properties file with the REST
// keys a Connect worker takes (listeners.https.ssl.*, ssl.*,
// fjord.rest.auth.*, rest.extension.classes). "" is no settings.
func readHTTPConfig(path string) (map[string]string, error) {
	if path == "" {
		return map[string]string{}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--http-config: %w", err)
	}
	defer f.Close()
	props, err := config.ParseProperties(f)
	if err != nil {
		return nil, fmt.Errorf("--http-config %s: %w", path, err)
	}
	return props, nil
}
