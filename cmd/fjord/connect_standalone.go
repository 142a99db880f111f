package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/api"
	"github.com/fjordhq/fjord/api/admin"
	connectapi "github.com/fjordhq/fjord/api/connect"
	"github.com/fjordhq/fjord/connect/herder"
	"github.com/fjordhq/fjord/connect/runtime"
	"github.com/fjordhq/fjord/connect/storage"
)

// fjord connect-standalone worker.properties connector.properties...
// runs one standalone Kafka Connect worker, as Kafka's
// connect-standalone.sh does: the connectors in the given files (Java
// .properties, or Kafka's JSON create-connector request) run in this
// process, source offsets are kept in offset.storage.file.filename, and
// the Kafka Connect REST API is served on listeners.
func init() {
	cmd := &cobra.Command{
		Use:   "connect-standalone worker.properties [connector.properties|connector.json ...]",
		Short: "Run a standalone Kafka Connect worker",
		Long: `Run a standalone Kafka Connect worker with Kafka's worker.properties
(bootstrap.servers, key.converter, value.converter,
offset.storage.file.filename, listeners, ...) and create the connectors
described by the other files: Java .properties files with name,
connector.class and the connector's keys, or JSON files holding
{"name": ..., "config": {...}, "initial_state": ...} as POST /connectors
takes. The REST API (Kafka Connect's) is served on listeners (default
http://:8083). Offsets survive restarts in offset.storage.file.filename;
connectors created over REST do not (as in Kafka).
Stop with Ctrl-C: tasks stop and commit their offsets.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			tuneGCForServer()
			return runConnectStandalone(args[0], args[1:])
		},
	}
	addCommand(cmd)
}

// connectorFile is a connector to create at start-up.
type connectorFile struct {
	path    string
	name    string
	config  map[string]string
	initial herder.TargetState
}

// readConnectorFile reads a connector file: JSON (Kafka's
// CreateConnectorRequest, or a bare config object) or Java properties.
func readConnectorFile(path string) (*connectorFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("connector file: %w", err)
	}
	cf := &connectorFile{path: path}
	if strings.EqualFold(filepath.Ext(path), ".json") {
		var req struct {
			Name         string            `json:"name"`
			Config       map[string]string `json:"config"`
			InitialState string            `json:"initial_state"`
		}
		if err := json.Unmarshal(data, &req); err != nil {
			return nil, fmt.Errorf("connector file %s: %w", path, err)
		}
		if req.Config == nil {
			// A bare config object, as connector .properties in JSON.
			if err := json.Unmarshal(data, &req.Config); err != nil {
				return nil, fmt.Errorf("connector file %s: %w", path, err)
			}
		}
		cf.config, cf.initial = req.Config, herder.TargetState(strings.ToUpper(req.InitialState))
		cf.name = req.Name
	} else {
		props, err := readWorkerProperties(path)
		if err != nil {
			return nil, fmt.Errorf("connector file %s: %w", path, err)
		}
		cf.config = props
	}
	if cf.name == "" {
		cf.name = cf.config["name"]
	}
	if cf.name == "" {
		return nil, fmt.Errorf("connector file %s: no connector name (set name=...)", path)
	}
	if n, ok := cf.config["name"]; ok && n != cf.name {
		return nil, fmt.Errorf("connector file %s: the config's name %q differs from %q", path, n, cf.name)
	}
	return cf, nil
}

func runConnectStandalone(workerPath string, connectorPaths []string) error {
	props, err := readWorkerProperties(workerPath)
	if err != nil {
		return err
	}
	wc, err := runtime.ParseWorkerConfig(props, runtime.Standalone)
	if err != nil {
		return fmt.Errorf("%s: %w", workerPath, err)
	}
	var files []*connectorFile
	for _, p := range connectorPaths {
		cf, err := readConnectorFile(p)
		if err != nil {
			return err
		}
		files = append(files, cf)
	}
	log := slog.Default()
	sw, err := startStandaloneWorker(context.Background(), wc, log)
	if err != nil {
		return err
	}
	defer sw.close()
	for _, cf := range files {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		_, _, err := sw.herder.PutConnectorConfig(ctx, cf.name, cf.config, cf.initial, false)
		cancel()
		if err != nil {
			return fmt.Errorf("create connector %s from %s: %w", cf.name, cf.path, err)
		}
		log.Info("created connector", "connector", cf.name, "file", cf.path)
	}
	fmt.Printf("Fjord Connect standalone worker %s is running\n  REST:     %s\n  Kafka:    %s\n  Offsets:  %s\n  Connectors: %d\nPress Ctrl-C to stop.\n",
		sw.workerID, sw.url, strings.Join(wc.BootstrapServers, ","), wc.OffsetStorageFileName, len(files))

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sig)
	select {
	case s := <-sig:
		log.Info("shutting down", "signal", s.String())
		return nil
	case err := <-sw.serveErr:
		log.Error("REST server stopped unexpectedly", "err", err)
		return err
	}
}

// standaloneWorker is a running standalone worker: offsets file,
// runtime, herder and REST server.
type standaloneWorker struct {
	log      *slog.Logger
	workerID string
	url      string
	herder   *herder.Standalone
	rest     *restListeners
	serveErr chan error
	closers  []func()
}

// startStandaloneWorker wires a standalone worker. The REST listener is
// bound first so a listener on port 0 names the worker by its real port.
func startStandaloneWorker(ctx context.Context, wc *runtime.WorkerConfig, log *slog.Logger) (_ *standaloneWorker, err error) {
	sw := &standaloneWorker{log: log, serveErr: make(chan error, 1)}
	defer func() {
		if err != nil {
			sw.close()
		}
	}()
	rest, advertisedAddr, err := bindRESTListeners(wc, log)
	if err != nil {
		return nil, err
	}
	sw.rest = rest
	sw.url = wc.AdvertisedURL(advertisedAddr)
	if u, err := url.Parse(sw.url); err == nil {
		sw.workerID = u.Host // Kafka: the advertised host:port
	}

	clientOpts, err := wc.ClientOpts(log)
	if err != nil {
		return nil, fmt.Errorf("worker Kafka client: %w", err)
	}
	client, err := kgo.NewClient(clientOpts...)
	if err != nil {
		return nil, fmt.Errorf("worker Kafka client: %w", err)
	}
	clusterID, err := lookupClusterID(ctx, client)
	client.Close()
	if err != nil {
		return nil, err
	}

	offsets, err := storage.OpenFileOffsetStore(wc.OffsetStorageFileName)
	if err != nil {
		return nil, err
	}
	statuses := storage.NewMemoryStatusStore()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	registerPluginMetrics(reg, log)
	var topics storage.TopicStatusStore
	if wc.TopicTrackingEnable {
		topics = statuses
	}
	worker, err := runtime.NewWorker(wc, runtime.WorkerOptions{WorkerID: sw.workerID, Offsets: offsets, Topics: topics, Logger: log, Registerer: reg})
	if err != nil {
		return nil, err
	}
	sw.closers = append(sw.closers, func() {
		ctx, cancel := context.WithTimeout(context.Background(), wc.TaskShutdownGracefulTimeout+5*time.Second)
		defer cancel()
		worker.Close(ctx)
	})
	sw.herder = herder.NewStandalone(herder.StandaloneConfig{
		WorkerID: sw.workerID, KafkaClusterID: clusterID, Logger: log,
		TopicTracking: wc.TopicTrackingEnable, TopicTrackingAllowReset: wc.TopicTrackingAllowReset,
	}, herder.StandaloneDeps{
		Worker: worker, Offsets: worker, Validate: worker.ValidateConnectorConfig, ConnectorType: worker.ConnectorType,
		Statuses: statuses, Topics: topics,
	})
	sw.closers = append(sw.closers, func() {
		ctx, cancel := context.WithTimeout(context.Background(), wc.TaskShutdownGracefulTimeout+5*time.Second)
		defer cancel()
		sw.herder.Close(ctx)
	})

	r := chi.NewRouter()
	// Fjord's worker metrics beside the Kafka Connect REST API.
	r.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	connectapi.Mount(r, sw.herder, connectapi.Options{
		Logger:                     log,
		TopicTrackingDisabled:      !wc.TopicTrackingEnable,
		TopicTrackingResetDisabled: !wc.TopicTrackingAllowReset,
		OpenAPIDocument:            admin.OpenAPI(),
	})
	// /readyz as fjord connect serves it: ready once the herder answers.
	ready := api.NewChecks("ready", "not ready")
	ready.Add("connect", herderReady(sw.herder))
	r.Get("/readyz", ready.ServeHTTP)
	stopConsole, err := mountConsole(r, admin.Options{ClientOpts: clientOpts, Herder: sw.herder, RegistryURL: workerRegistryURL(wc), Gatherer: reg, Logger: log.With("component", "admin")}, false)
	if err != nil {
		return nil, err
	}
	sw.closers = append(sw.closers, stopConsole)
	rest.serve(r, sw.serveErr)
	log.Info("Kafka Connect standalone worker started", "worker", sw.workerID, "url", sw.url, "kafka_cluster_id", clusterID,
		"offsets", wc.OffsetStorageFileName)
	return sw, nil
}

// close stops the REST server first (no new requests), then the
// connectors and tasks (their final offsets are committed), then the rest.
func (sw *standaloneWorker) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	sw.rest.shutdown(ctx)
	cancel()
	for i := len(sw.closers) - 1; i >= 0; i-- {
		sw.closers[i]()
	}
	sw.closers = nil
}
