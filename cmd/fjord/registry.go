package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/fjordhq/fjord/api"
	"github.com/fjordhq/fjord/api/schemaregistry"
)

func init() {
	var listen, bootstrap, topic, group, advertised, compat string
	var rf int16
	var ineligible bool
	cmd := &cobra.Command{
		Use:   "registry --bootstrap-server HOST:PORT [--listen 127.0.0.1:8081]",
		Short: "Run a schema registry (Confluent REST API, _schemas topic)",
		Long: `Run a standalone schema registry speaking Confluent Schema Registry's REST API,
storing its schemas in the compacted _schemas topic of the given Kafka cluster.
Several registries on one cluster elect one writer and forward writes to it, so
they all serve the same ids. Without --bootstrap-server, schemas live in memory.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if advertised == "" {
				advertised = "http://" + listen
			}
			var brokers []string
			for _, b := range strings.Split(bootstrap, ",") {
				if b = strings.TrimSpace(b); b != "" {
					brokers = append(brokers, b)
				}
			}
			h := api.New(slog.Default())
			if err := h.Listen(listen); err != nil {
				return fmt.Errorf("listen %s: %w (is another registry running? pick another --listen)", listen, err)
			}
			srv, err := schemaregistry.New(schemaregistry.Config{
				Bootstrap: brokers, Topic: topic, GroupID: group, AdvertisedURL: advertised,
				Compatibility: compat, ReplicationFactor: rf, LeaderIneligible: ineligible,
			})
			if err != nil {
				h.Shutdown(context.Background())
				return err
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			err = srv.Start(ctx)
			cancel()
			if err != nil {
				h.Shutdown(context.Background())
				return fmt.Errorf("start schema registry: %w", err)
			}
			defer srv.Close()
			srv.Mount(h.Router, "/")
			errc := make(chan error, 1)
			go func() { errc <- h.Serve() }()
			fmt.Printf("Fjord schema registry on http://%s (topic %s)\n", h.Addr(), topic)

			sig := make(chan os.Signal, 1)
			signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
			defer signal.Stop(sig)
			var serveErr error
			select {
			case s := <-sig:
				slog.Info("shutting down", "signal", s.String())
			case serveErr = <-errc:
			}
			sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer scancel()
			if err := h.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
				slog.Warn("HTTP shutdown", "err", err)
			}
			return serveErr
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:8081", "HTTP listener address")
	cmd.Flags().StringVar(&bootstrap, "bootstrap-server", "", "Kafka bootstrap servers, comma separated (empty: in-memory)")
	cmd.Flags().StringVar(&topic, "topic", "_schemas", "store topic (kafkastore.topic)")
	cmd.Flags().StringVar(&group, "group-id", "schema-registry", "leader election group (schema.registry.group.id)")
	cmd.Flags().StringVar(&advertised, "advertised-url", "", "URL other instances forward writes to (default http://<listen>)")
	cmd.Flags().StringVar(&compat, "compatibility", "BACKWARD", "default compatibility level (schema.compatibility.level)")
	cmd.Flags().Int16Var(&rf, "replication-factor", -1, "replication factor when creating the topic (-1: broker default)")
	cmd.Flags().BoolVar(&ineligible, "leader-ineligible", false, "never become the writer (leader.eligibility=false)")
	addCommand(cmd)
}
