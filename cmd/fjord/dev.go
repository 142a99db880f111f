package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/api"
	"github.com/fjordhq/fjord/api/admin"
	"github.com/fjordhq/fjord/api/schemaregistry"
	"github.com/fjordhq/fjord/broker"
	"github.com/fjordhq/fjord/connect/runtime"
	"github.com/fjordhq/fjord/internal/inproc"
)

// registryPrefix is where `fjord dev` serves the schema registry on its
// HTTP address (Confluent clients accept a base URL with a path).
const registryPrefix = "/schema-registry"

func init() {
	var dataDir, kafkaAddr, httpAddr string
	var noConnect bool
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run a one-node Fjord (broker, Connect worker, schema registry, HTTP) with data under ./data",
		Long: `Run everything in one process for development: a Kafka-compatible broker
(node id 0, its own controller), a distributed Kafka Connect worker (group
fjord-dev) with Kafka Connect's REST API, a schema registry (Confluent's API
under /schema-registry), /healthz and /metrics — all on the HTTP address.
Data lives under --data-dir and survives restarts. Stop with Ctrl-C.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			tuneGCForServer()
			props := devProperties(dataDir, kafkaAddr)
			cfg, err := broker.ConfigFromProperties(props, slog.Default())
			if err != nil {
				return err
			}
			var comps []component
			if !noConnect {
				comps = append(comps, devInProcess(kafkaAddr), devRegistry(), devConnectWorker())
			} else {
				comps = append(comps, brokerConsole(nil))
			}
			return runBroker(cfg, httpAddr, nil, comps, func(b *broker.Server, h *api.Server) {
				fmt.Printf("Fjord dev is running\n  Kafka:    %s\n", b.Addr())
				if h != nil {
					fmt.Printf("  Console:  http://%s/ui/\n", h.Addr())
					fmt.Printf("  HTTP:     http://%s (/healthz, /readyz, /metrics, /api/v1, /openapi.json)\n", h.Addr())
					if !noConnect {
						fmt.Printf("  Connect:  http://%s (Kafka Connect REST API, worker group fjord-dev)\n", h.Addr())
						fmt.Printf("  Registry: http://%s%s\n", h.Addr(), registryPrefix)
					}
				}
				abs, _ := filepath.Abs(dataDir)
				fmt.Printf("  Data:     %s\nPress Ctrl-C to stop.\n", abs)
			})
		},
	}
	cmd.Flags().StringVar(&dataDir, "data-dir", "./data", "directory for all data")
	cmd.Flags().StringVar(&kafkaAddr, "kafka-addr", "127.0.0.1:9092", "Kafka protocol listener address")
	cmd.Flags().StringVar(&httpAddr, "http-addr", "127.0.0.1:8083", "HTTP listener address (Connect REST API, schema registry, health, metrics)")
	cmd.Flags().BoolVar(&noConnect, "no-connect", false, "run only the broker (no Connect worker, no schema registry)")
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

// devInProcess serves the broker to the worker's clients in process
// (internal/inproc): the worker's producers and admin clients reach the
// broker through memory, not loopback TCP, which was most of what a
// source task spent on system calls (consumers stay on TCP for
// sendfile; see runtime.KafkaClientOpts). Started first, so it is
// stopped last.
func devInProcess(kafkaAddr string) component {
	return component{name: "in-process listener", start: func(ctx context.Context, b *broker.Server, h *api.Server) (func(), error) {
		l := inproc.Listen(b.Addr())
		go b.ServeInProcess(l)
		unregister := inproc.Register(l, b.Addr().String(), kafkaAddr)
		return func() { unregister(); l.Close() }, nil
	}}
}

// devRegistry runs the schema registry against the dev broker, its
// state in the _schemas topic.
func devRegistry() component {
	return component{name: "schema registry", start: func(ctx context.Context, b *broker.Server, h *api.Server) (func(), error) {
		reg, err := schemaregistry.New(schemaregistry.Config{
			Bootstrap:         []string{b.Addr().String()},
			ReplicationFactor: 1,
			AdvertisedURL:     "http://" + h.Addr().String() + registryPrefix,
			Logger:            slog.Default().With("component", "registry"),
		})
		if err != nil {
			return nil, err
		}
		if err := reg.Start(ctx); err != nil {
			reg.Close()
			return nil, err
		}
		reg.Mount(h.Router, registryPrefix)
		h.AddCheck("schema registry", reg.Check)
		return func() { reg.Close() }, nil
	}}
}

// devWorkerProperties are the worker properties of `fjord dev`'s Connect
// worker: Kafka's connect-distributed.properties sample, pointed at the
// dev broker, with replication factor 1 for the internal topics.
func devWorkerProperties(kafkaAddr, httpAddr string) map[string]string {
	return map[string]string{
		"bootstrap.servers":                 kafkaAddr,
		"group.id":                          "fjord-dev",
		"key.converter":                     "org.apache.kafka.connect.json.JsonConverter",
		"value.converter":                   "org.apache.kafka.connect.json.JsonConverter",
		"key.converter.schemas.enable":      "true",
		"value.converter.schemas.enable":    "true",
		"offset.storage.topic":              "connect-offsets",
		"offset.storage.replication.factor": "1",
		"config.storage.topic":              "connect-configs",
		"config.storage.replication.factor": "1",
		"status.storage.topic":              "connect-status",
		"status.storage.replication.factor": "1",
		"offset.flush.interval.ms":          "10000",
		"listeners":                         "http://" + httpAddr,
		"scheduled.rebalance.max.delay.ms":  "0",
	}
}

// devConnectWorker runs a distributed worker (group fjord-dev) against
// the dev broker, its REST API on the dev HTTP address.
func devConnectWorker() component {
	return component{name: "connect worker", start: func(ctx context.Context, b *broker.Server, h *api.Server) (func(), error) {
		props := devWorkerProperties(b.Addr().String(), h.Addr().String())
		wc, err := runtime.ParseWorkerConfig(props, runtime.Distributed)
		if err != nil {
			return nil, fmt.Errorf("worker config: %w", err)
		}
		cw, err := newConnectWorker(ctx, wc, "http://"+h.Addr().String(), h.Router, h.Registry, slog.Default().With("component", "connect"))
		if err != nil {
			return nil, err
		}
		stopConsole, err := mountConsole(h.Router, admin.Options{
			ClientOpts:  []kgo.Opt{kgo.SeedBrokers(b.Addr().String())},
			Herder:      cw.herder,
			RegistryURL: "http://" + h.Addr().String() + registryPrefix,
			Gatherer:    h.Registry,
			Logger:      slog.Default().With("component", "admin"),
		}, false)
		if err != nil {
			cw.close()
			return nil, err
		}
		h.AddReadyCheck("connect", herderReady(cw.herder))
		return func() { stopConsole(); cw.close() }, nil
	}}
}

// brokerConsole serves the admin API, the console and the OpenAPI
// document on a node without a Connect worker (fjord broker, fjord dev
// --no-connect): the Connect pages then say there is no worker here.
//
// httpProps are --http-config's settings: the admin API's own Kafka
// client takes the admin.-prefixed ones, as a worker's admin client does
// (admin.bootstrap.servers, admin.security.protocol,
// admin.sasl.mechanism, admin.sasl.jaas.config, admin.ssl.*), so it can
// reach a broker whose listeners need TLS or SASL; by default it dials
// the broker's first listener without either.
func brokerConsole(httpProps map[string]string) component {
	return component{name: "console", start: func(ctx context.Context, b *broker.Server, h *api.Server) (func(), error) {
		if b.Addr() == nil {
			return func() {}, nil // a controller-only node serves no Kafka clients
		}
		opts, err := consoleClientOpts(b.Addr().String(), httpProps)
		if err != nil {
			return nil, err
		}
		return mountConsole(h.Router, admin.Options{
			ClientOpts: opts,
			Gatherer:   h.Registry,
			Logger:     slog.Default().With("component", "admin"),
		}, true)
	}}
}
