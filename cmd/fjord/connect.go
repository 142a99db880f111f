package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/api"
	"github.com/fjordhq/fjord/api/admin"
	connectapi "github.com/fjordhq/fjord/api/connect"
	"github.com/fjordhq/fjord/api/httpsec"
	"github.com/fjordhq/fjord/broker/config"
	"github.com/fjordhq/fjord/connect/herder"
	"github.com/fjordhq/fjord/connect/runtime"
	"github.com/fjordhq/fjord/connect/storage"

	// The plugins a worker can run register themselves.
	_ "github.com/fjordhq/fjord/connectors/datagen"
	_ "github.com/fjordhq/fjord/connectors/file"
	_ "github.com/fjordhq/fjord/connectors/postgres/cdc"
	_ "github.com/fjordhq/fjord/connectors/postgres/sink"
	_ "github.com/fjordhq/fjord/connectors/s3/sink"
	_ "github.com/fjordhq/fjord/connectors/s3/source"
	_ "github.com/fjordhq/fjord/converters/avro"
	_ "github.com/fjordhq/fjord/converters/bytearray"
	_ "github.com/fjordhq/fjord/converters/header"
	_ "github.com/fjordhq/fjord/converters/json"
	_ "github.com/fjordhq/fjord/converters/number"
	_ "github.com/fjordhq/fjord/converters/str"
	_ "github.com/fjordhq/fjord/mirror/checkpoint"
	_ "github.com/fjordhq/fjord/mirror/heartbeat"
	_ "github.com/fjordhq/fjord/mirror/source"
	_ "github.com/fjordhq/fjord/transforms"
)

// fjord connect worker.properties runs one distributed Kafka Connect
// worker, as Kafka's connect-distributed.sh does: it joins the worker
// group named by group.id through the brokers at bootstrap.servers,
// keeps configs, offsets and statuses in the three internal topics, and
// serves the Kafka Connect REST API on listeners.
func init() {
	cmd := &cobra.Command{
		Use:   "connect worker.properties",
		Short: "Run a distributed Kafka Connect worker",
		Long: `Run a distributed Kafka Connect worker with Kafka's worker.properties
(bootstrap.servers, group.id, config.storage.topic, offset.storage.topic,
status.storage.topic, key.converter, value.converter, listeners, ...).
Workers with the same group.id share connectors and tasks; the REST API
(Kafka Connect's) is served on listeners (default http://:8083).
Stop with Ctrl-C: the worker stops its tasks and leaves the group.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			tuneGCForServer()
			return runConnectDistributed(args[0])
		},
	}
	addCommand(cmd)
}

func readWorkerProperties(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("worker properties: %w", err)
	}
	defer f.Close()
	props, err := config.ParseProperties(f)
	if err != nil {
		return nil, fmt.Errorf("worker properties %s: %w", path, err)
	}
	return props, nil
}

func runConnectDistributed(path string) error {
	props, err := readWorkerProperties(path)
	if err != nil {
		return err
	}
	wc, err := runtime.ParseWorkerConfig(props, runtime.Distributed)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	log := slog.Default()
	cw, err := startConnectWorker(context.Background(), wc, log)
	if err != nil {
		return err
	}
	fmt.Printf("Fjord Connect worker %s is running\n  REST:   %s\n  Group:  %s\n  Kafka:  %s\nPress Ctrl-C to stop.\n",
		cw.workerID, cw.url, wc.GroupID, strings.Join(wc.BootstrapServers, ","))

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sig)
	var serveErr error
	select {
	case s := <-sig:
		log.Info("shutting down", "signal", s.String())
	case serveErr = <-cw.serveErr:
		log.Error("REST server stopped unexpectedly", "err", serveErr)
	}
	cw.close()
	return serveErr
}

// connectWorker is a running distributed worker: stores, runtime, herder
// and REST server.
type connectWorker struct {
	log      *slog.Logger
	workerID string
	url      string
	herder   *herder.Distributed
	rest     *restListeners // nil when mounted on another process's router
	serveErr chan error
	closers  []func()
}

// startConnectWorker runs a distributed worker from its config with the
// REST API on every listener. The listeners are bound first so one on
// port 0 advertises its real port to the group.
func startConnectWorker(ctx context.Context, wc *runtime.WorkerConfig, log *slog.Logger) (*connectWorker, error) {
	rest, advertisedAddr, err := bindRESTListeners(wc, log)
	if err != nil {
		return nil, err
	}
	r := chi.NewRouter()
	// /metrics beside the REST API, as fjord dev and connect-standalone
	// serve it.
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	r.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	cw, err := newConnectWorker(ctx, wc, wc.AdvertisedURL(advertisedAddr), r, reg, log)
	if err != nil {
		rest.closeListeners()
		return nil, err
	}
	cw.rest = rest
	ready := api.NewChecks("ready", "not ready")
	ready.Add("connect", herderReady(cw.herder))
	r.Get("/readyz", ready.ServeHTTP)
	clientOpts, err := wc.ClientOpts(log)
	if err != nil {
		cw.close()
		return nil, err
	}
	stopConsole, err := mountConsole(r, admin.Options{ClientOpts: clientOpts, Herder: cw.herder, RegistryURL: workerRegistryURL(wc), Gatherer: reg, Logger: log.With("component", "admin")}, false)
	if err != nil {
		cw.close()
		return nil, err
	}
	cw.closers = append(cw.closers, stopConsole)
	rest.serve(r, cw.serveErr)
	return cw, nil
}

// newConnectWorker starts a distributed worker advertising url and
// mounts its REST API on r, for a process that serves it on a listener
// of its own (fjord dev can mount it on its HTTP router).
// reg receives the worker's and the plugins' metrics (nil: none).
func newConnectWorker(ctx context.Context, wc *runtime.WorkerConfig, advertisedURL string, r chi.Router, reg prometheus.Registerer, log *slog.Logger) (_ *connectWorker, err error) {
	cw := &connectWorker{log: log, serveErr: make(chan error, 1), url: advertisedURL}
	defer func() {
		if err != nil {
			cw.close()
		}
	}()
	if u, err := url.Parse(cw.url); err == nil {
		cw.workerID = u.Host // Kafka: the advertised host:port
	}
	// Forwarding to the leader and handing it task configs: over HTTPS
	// when this worker's listener is (Kafka's RestClient uses the
	// listener's ssl settings too).
	peers, err := httpsec.PeerClient(wc.Config.Originals(), cw.url, 90*time.Second)
	if err != nil {
		return nil, err
	}

	clientOpts, err := wc.ClientOpts(log)
	if err != nil {
		return nil, fmt.Errorf("worker Kafka client: %w", err)
	}
	// The group member's id starts with the client id: Kafka 4.4's
	// workers use "connect-<host:port>" ("connect-10.0.0.7:8083-<uuid>").
	clientID := wc.ClientID
	if clientID == "" {
		clientID = "connect-" + cw.workerID
	}
	client, err := kgo.NewClient(append(slices.Clone(clientOpts), kgo.ClientID(clientID))...)
	if err != nil {
		return nil, fmt.Errorf("worker Kafka client: %w", err)
	}
	cw.closers = append(cw.closers, client.Close)
	clusterID, err := lookupClusterID(ctx, client)
	if err != nil {
		return nil, err
	}

	sopts := storage.KafkaOptions{ClientOpts: clientOpts, Logger: log}
	topic := func(name, property, prefix string, partitions int32, rf int16) storage.KafkaTopic {
		return storage.KafkaTopic{Name: name, Property: property, Partitions: partitions, ReplicationFactor: rf,
			Create: wc.InternalTopicsAutoCreate, Configs: wc.TopicSettings(prefix)}
	}
	offsets, err := storage.StartKafkaOffsetStore(ctx, sopts, topic(wc.OffsetStorageTopic, "offset.storage.topic", "offset.storage.", wc.OffsetStoragePartitions, wc.OffsetStorageReplicationFactor))
	if err != nil {
		return nil, err
	}
	cw.closers = append(cw.closers, func() { offsets.Close() })
	configs, err := storage.StartKafkaConfigStore(ctx, sopts, topic(wc.ConfigStorageTopic, "config.storage.topic", "config.storage.", 1, wc.ConfigStorageReplicationFactor))
	if err != nil {
		return nil, err
	}
	cw.closers = append(cw.closers, func() { configs.Close() })
	statuses, err := storage.StartKafkaStatusStore(ctx, sopts, topic(wc.StatusStorageTopic, "status.storage.topic", "status.storage.", wc.StatusStoragePartitions, wc.StatusStorageReplicationFactor))
	if err != nil {
		return nil, err
	}
	cw.closers = append(cw.closers, func() { statuses.Close() })

	var topics storage.TopicStatusStore
	if wc.TopicTrackingEnable {
		topics = statuses
	}
	if reg != nil {
		registerPluginMetrics(reg, log)
	}
	worker, err := runtime.NewWorker(wc, runtime.WorkerOptions{WorkerID: cw.workerID, Offsets: offsets, Topics: topics, Logger: log, Registerer: reg})
	if err != nil {
		return nil, err
	}
	cw.closers = append(cw.closers, func() {
		ctx, cancel := context.WithTimeout(context.Background(), wc.TaskShutdownGracefulTimeout+5*time.Second)
		defer cancel()
		worker.Close(ctx)
	})

	h, err := herder.NewDistributed(herder.DistributedConfig{
		GroupID: wc.GroupID, WorkerID: cw.workerID, URL: cw.url, Protocol: wc.ConnectProtocol,
		SessionTimeout: wc.SessionTimeout, RebalanceTimeout: wc.RebalanceTimeout, HeartbeatInterval: wc.HeartbeatInterval,
		ScheduledRebalanceMaxDelay: wc.ScheduledRebalanceMaxDelay, SetScheduledRebalanceMaxDelay: true,
		WorkerSyncTimeout: wc.WorkerSyncTimeout, WorkerUnsyncBackoff: wc.WorkerUnsyncBackoff,
		KeyRotationInterval: wc.InterWorkerKeyTTL, KeyGenerationAlgorithm: wc.InterWorkerKeyGenerationAlgorithm,
		KeySize: wc.InterWorkerKeySize, SignatureAlgorithm: wc.InterWorkerSignatureAlgorithm,
		VerificationAlgorithms: wc.InterWorkerVerificationAlgorithms, KafkaClusterID: clusterID, Logger: log,
	}, herder.DistributedDeps{
		Client: client, Configs: configs, Statuses: statuses, Topics: statuses,
		Worker: worker, Offsets: worker, Validate: worker.ValidateConnectorConfig, ConnectorType: worker.ConnectorType,
		HTTP: peers,
	})
	if err != nil {
		return nil, err
	}
	cw.herder = h
	h.Start()

	connectapi.Mount(r, h, connectapi.Options{
		Forward:                    connectapi.ForwardOptions{Client: peers},
		Logger:                     log,
		TopicTrackingDisabled:      !wc.TopicTrackingEnable,
		TopicTrackingResetDisabled: !wc.TopicTrackingAllowReset,
		OpenAPIDocument:            admin.OpenAPI(),
	})
	// Mount also serves Kafka's internal POST /connectors/{c}/tasks, by
	// which a worker running a connector hands the leader its task configs.
	log.Info("Kafka Connect worker started", "worker", cw.workerID, "url", cw.url, "group", wc.GroupID, "kafka_cluster_id", clusterID)
	return cw, nil
}

// close stops the herder (its work stops, it leaves the group), then the
// REST server and the stores.
func (cw *connectWorker) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if cw.herder != nil {
		if err := cw.herder.Stop(ctx); err != nil {
			cw.log.Warn("stop herder", "err", err)
		}
	}
	cw.rest.shutdown(ctx)
	for i := len(cw.closers) - 1; i >= 0; i-- {
		cw.closers[i]()
	}
	cw.closers = nil
}

// lookupClusterID asks the cluster for its id (Kafka's
// ConnectUtils.lookupKafkaClusterId), retrying until ctx or a minute ends.
func lookupClusterID(ctx context.Context, cl *kgo.Client) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	adm := kadm.NewClient(cl)
	for {
		m, err := adm.BrokerMetadata(ctx)
		if err == nil {
			return m.Cluster, nil
		}
		if ctx.Err() != nil {
			return "", fmt.Errorf("look up the Kafka cluster id (is bootstrap.servers right?): %w", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
	}
}
