package main

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fjordhq/fjord/api"
	"github.com/fjordhq/fjord/broker"
	"github.com/fjordhq/fjord/broker/config"
)

func init() {
	var configPath, httpAddr, httpConfig string
	var overrides []string
	cmd := &cobra.Command{
		Use:   "broker --config server.properties [--override key=value ...]",
		Short: "Run a broker from a Kafka server.properties file",
		Long: `Run a broker configured with Kafka's property names and defaults. Paste your
server.properties: unknown keys are reported, invalid values refuse to start.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			tuneGCForServer()
			if configPath == "" {
				return fmt.Errorf("--config is required: the path of a server.properties file")
			}
			f, err := os.Open(configPath)
			if err != nil {
				return fmt.Errorf("open config: %w", err)
			}
			props, err := config.ParseProperties(f)
			f.Close()
			if err != nil {
				return fmt.Errorf("%s: %w", configPath, err)
			}
			for _, o := range overrides {
				k, v, ok := strings.Cut(o, "=")
				if !ok || strings.TrimSpace(k) == "" {
					return fmt.Errorf("--override %q: want key=value", o)
				}
				props[strings.TrimSpace(k)] = v
			}
			cfg, err := broker.ConfigFromProperties(props, slog.Default())
			if err != nil {
				return fmt.Errorf("%s: %w", configPath, err)
			}
			httpProps, err := readHTTPConfig(httpConfig)
			if err != nil {
				return err
			}
			var comps []component
			if httpAddr != "" {
				comps = append(comps, brokerConsole(httpProps))
			}
			return runBroker(cfg, httpAddr, httpProps, comps, func(b *broker.Server, h *api.Server) {
				if a := b.Addr(); a != nil {
					fmt.Printf("Fjord broker %d listening on %s\n", cfg.NodeID, a)
				}
				if a := b.ControllerAddr(); a != nil {
					fmt.Printf("Fjord controller %d listening on %s (voters %v)\n", cfg.NodeID, a, cfg.Cluster.Voters)
				}
				if h != nil {
					scheme, _, _ := httpListener(httpAddr)
					fmt.Printf("HTTP on %s://%s (console /ui/, admin API /api/v1, /metrics)\n", scheme, h.Addr())
				}
			})
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "server.properties file (Kafka property names)")
	cmd.Flags().StringArrayVar(&overrides, "override", nil, "override a property: key=value (repeatable)")
	cmd.Flags().StringVar(&httpAddr, "http-addr", "", "also serve HTTP on this address (HOST:PORT, or https://HOST:PORT): /healthz, /readyz, /metrics, the admin API (/api/v1) and the console (/ui/)")
	cmd.Flags().StringVar(&httpConfig, "http-config", "", "properties file for the HTTP listener, with a Connect worker's REST keys: listeners.https.ssl.* for HTTPS, fjord.rest.auth.credentials.file / fjord.rest.auth.tokens.file / fjord.rest.auth.read.only.users for authentication")
	addCommand(cmd)
}
