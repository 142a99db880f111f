package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/fjordhq/fjord/api"
	"github.com/fjordhq/fjord/broker"
)

// runBroker starts a broker (and, with httpAddr, the HTTP server) and
// serves until SIGINT/SIGTERM, then shuts down cleanly. banner is printed
// once everything listens.
func runBroker(cfg broker.Config, httpAddr string, banner func(b *broker.Server, h *api.Server)) error {
	var h *api.Server
	if httpAddr != "" {
		h = api.New(slog.Default())
		cfg.Registerer = h.Registry
		if err := h.Listen(httpAddr); err != nil {
			return fmt.Errorf("HTTP listener %s: %w (is another Fjord running? pick another --http-addr)", httpAddr, err)
		}
	}
	start := time.Now()
	b, err := broker.New(cfg)
	if err != nil {
		if h != nil {
			h.Shutdown(context.Background())
		}
		return err
	}
	errc := make(chan error, 2)
	go func() { errc <- b.Serve() }()
	if h != nil {
		h.AddCheck("broker", func() error {
			if !b.Ready() {
				return errors.New("broker is shutting down")
			}
			return nil
		})
		go func() { errc <- h.Serve() }()
	}
	slog.Info("broker started", "took", time.Since(start).Round(time.Millisecond), "cluster.id", b.ClusterID())
	banner(b, h)

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sig)
	var serveErr error
	select {
	case s := <-sig:
		slog.Info("shutting down", "signal", s.String())
	case serveErr = <-errc:
		slog.Error("server stopped unexpectedly", "err", serveErr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if h != nil {
		h.Shutdown(ctx)
	}
	if err := b.Close(); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	slog.Info("stopped cleanly")
	return serveErr
}
