package main

import (
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/fjordhq/fjord/api"
	"github.com/fjordhq/fjord/broker"
)

func init() {
	var dataDir, kafkaAddr, httpAddr string
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run a one-node Fjord (broker + HTTP) with data under ./data",
		Long: `Run everything in one process for development: a Kafka-compatible broker
(node id 0, its own controller) and the HTTP server (/healthz, /metrics).
Data lives under --data-dir and survives restarts. Stop with Ctrl-C.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			props := devProperties(dataDir, kafkaAddr)
			cfg, err := broker.ConfigFromProperties(props, slog.Default())
			if err != nil {
				return err
			}
			return runBroker(cfg, httpAddr, func(b *broker.Server, h *api.Server) {
				fmt.Printf("Fjord dev is running\n  Kafka:  %s\n", b.Addr())
				if h != nil {
					fmt.Printf("  HTTP:   http://%s (/healthz, /metrics)\n", h.Addr())
				}
				abs, _ := filepath.Abs(dataDir)
				fmt.Printf("  Data:   %s\nPress Ctrl-C to stop.\n", abs)
			})
		},
	}
	cmd.Flags().StringVar(&dataDir, "data-dir", "./data", "directory for all data")
	cmd.Flags().StringVar(&kafkaAddr, "kafka-addr", "127.0.0.1:9092", "Kafka protocol listener address")
	cmd.Flags().StringVar(&httpAddr, "http-addr", "127.0.0.1:8083", "HTTP listener address (health, metrics)")
	addCommand(cmd)
}

// devProperties are the broker properties `fjord dev` runs with: Kafka's
// defaults, plus what Kafka's own sample single-node config sets.
func devProperties(dataDir, kafkaAddr string) map[string]string {
	return map[string]string{
		"node.id":                          "0",
		"process.roles":                    "broker,controller",
		"listeners":                        "PLAINTEXT://" + kafkaAddr,
		"log.dirs":                         filepath.Join(dataDir, "broker"),
		"offsets.topic.replication.factor": "1",
		"group.initial.rebalance.delay.ms": "0",
	}
}
