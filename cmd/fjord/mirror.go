package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/fjordhq/fjord/api"
	"github.com/fjordhq/fjord/connect/herder"
	"github.com/fjordhq/fjord/connect/runtime"
	"github.com/fjordhq/fjord/mirror/mm2"

	// The connectors every flow runs.
	_ "github.com/fjordhq/fjord/converters/bytearray"
	_ "github.com/fjordhq/fjord/mirror/checkpoint"
	_ "github.com/fjordhq/fjord/mirror/heartbeat"
	_ "github.com/fjordhq/fjord/mirror/source"
)

// fjord mirror mm2.properties is MirrorMaker 2's dedicated mode
// (connect-mirror-maker.sh): every source->target flow of the file gets a
// Connect worker group on its target cluster running MirrorSourceConnector,
// MirrorCheckpointConnector and MirrorHeartbeatConnector.
func init() { addCommand(newMirrorCmd()) }

func newMirrorCmd() *cobra.Command {
	var clusters []string
	var httpAddr string
	cmd := &cobra.Command{
		Use:   "mirror mm2.properties",
		Short: "Mirror topics between Kafka clusters (MirrorMaker 2's dedicated mode)",
		Long: `Run MirrorMaker 2's dedicated mode from an mm2.properties file:

  clusters = a, b, hub
  a.bootstrap.servers = a1:9092
  b.bootstrap.servers = b1:9092
  hub.bootstrap.servers = hub1:9092
  a->hub.enabled = true
  b->hub.enabled = true
  replication.factor = 3

Each source->target pair gets a Connect worker group on the target
cluster (group <source>-mm2, internal topics mm2-*.<source>.internal)
running the pair's MirrorSourceConnector, MirrorCheckpointConnector and
MirrorHeartbeatConnector. Pairs that are not enabled still emit
heartbeats unless emit.heartbeats.enabled = false. --clusters limits a
process to the flows into the given target clusters; with
dedicated.mode.enable.internal.rest = true (and listeners) several
processes can share one flow's work. Stop with Ctrl-C.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			tuneGCForServer()
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return runMirror(ctx, cmd.OutOrStdout(), args[0], clusters, httpAddr)
		},
	}
	cmd.Flags().StringSliceVar(&clusters, "clusters", nil, "target clusters this process runs the flows into (default: all)")
	cmd.Flags().StringVar(&httpAddr, "http-addr", "", "serve /healthz and Prometheus /metrics (the flows' record-count, byte-rate, record-age-ms, replication-latency-ms, checkpoint-latency-ms and the workers' counters) on this address, e.g. 127.0.0.1:9644")
	cmd.AddCommand(newMirrorStatusCmd())
	return cmd
}

func newMirrorStatusCmd() *cobra.Command {
	var clusters []string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "status mm2.properties",
		Short: "Print how far each flow's topics are behind (records and seconds)",
		Long: `Print, once, for every replicating flow of mm2.properties and every
topic it replicates: the records of the source topic not yet on the
target (through the flow's offset syncs when there are some, else by end
offsets) and the age of the oldest of them; and per flow the age of the
newest heartbeat that came across.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := mm2.ReadFile(args[0])
			if err != nil {
				return err
			}
			flows, err := c.FlowsTo(clusters)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			st := mm2.Status(ctx, c, flows, nil)
			if len(st) == 0 {
				return errors.New("no enabled flows (set source->target.enabled = true)")
			}
			if err := mm2.PrintStatus(cmd.OutOrStdout(), st); err != nil {
				return err
			}
			// A flow that could not be measured fails the command, so a
			// script sees it.
			failed := 0
			for _, s := range st {
				if s.Err != nil {
					failed++
				}
			}
			if failed > 0 {
				return fmt.Errorf("%d of %d flows could not be measured", failed, len(st))
			}
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&clusters, "clusters", nil, "only flows into these target clusters")
	cmd.Flags().DurationVar(&timeout, "timeout", 30*time.Second, "give up on clusters that do not answer within this time")
	return cmd
}

// runMirror runs the flows into targets until ctx ends.
func runMirror(ctx context.Context, out io.Writer, path string, targets []string, httpAddr string) error {
	c, err := mm2.ReadFile(path)
	if err != nil {
		return err
	}
	flows, err := c.FlowsTo(targets)
	if err != nil {
		return err
	}
	// Worker configs are checked up front: the driver retries workers
	// that cannot start, which is right for a cluster that is down and
	// wrong for a typo.
	for _, f := range flows {
		if _, err := runtime.ParseWorkerConfig(c.WorkerConfig(f), runtime.Distributed); err != nil {
			return fmt.Errorf("%s: flow %s: %w", path, f, err)
		}
	}
	log := slog.Default()
	rest, err := newMirrorREST(c, flows, log)
	if err != nil {
		return err
	}
	defer rest.close()

	var reg prometheus.Registerer
	var metricsURL string
	if httpAddr != "" {
		h := api.New(log)
		if err := h.Listen(httpAddr); err != nil {
			return fmt.Errorf("HTTP listener %s: %w (pick another --http-addr)", httpAddr, err)
		}
		go h.Serve()
		defer h.Shutdown(context.Background())
		reg = h.Registry
		metricsURL = "http://" + h.Addr().String() + "/metrics"
	}

	var names []string
	for _, f := range flows {
		what := "heartbeats only"
		if c.Enabled(f) {
			what = "replicating"
		}
		names = append(names, fmt.Sprintf("%s (%s)", f, what))
	}
	fmt.Fprintf(out, "Fjord mirror is running\n  Flows:  %s\n", strings.Join(names, ", "))
	if rest.server != nil {
		fmt.Fprintf(out, "  REST:   %s (internal, one path per flow)\n", rest.base)
	}
	if metricsURL != "" {
		fmt.Fprintf(out, "  Metrics: %s\n", metricsURL)
	}
	fmt.Fprintln(out, "Press Ctrl-C to stop.")

	d := &mm2.Driver{Config: c, Flows: flows, Log: log, Progress: out,
		Start: func(ctx context.Context, f mm2.Flow, props map[string]string) (herder.Herder, func(), error) {
			wc, err := runtime.ParseWorkerConfig(props, runtime.Distributed)
			if err != nil {
				return nil, nil, err
			}
			cw, err := newConnectWorker(ctx, wc, rest.url(f), rest.router(f), reg, log.With("flow", f.String()))
			if err != nil {
				return nil, nil, err
			}
			return cw.herder, cw.close, nil
		}}
	err = d.Run(ctx)
	fmt.Fprintln(out, "Fjord mirror stopped")
	return err
}

// mirrorREST is MM2's internal REST server (dedicated.mode.enable.internal.rest):
// every flow's worker API under /<source>/<target>, so that the followers
// of a flow's group running in other processes can hand the leader their
// task configs. Without it a flow works from one process only, as in MM2.
type mirrorREST struct {
	server  *http.Server
	base    string
	routers map[mm2.Flow]chi.Router
}

func newMirrorREST(c *mm2.Config, flows []mm2.Flow, log *slog.Logger) (*mirrorREST, error) {
	m := &mirrorREST{routers: map[mm2.Flow]chi.Router{}}
	if !c.EnableInternalRest() {
		host, _ := os.Hostname()
		if host == "" {
			host = "localhost"
		}
		m.base = "http://" + host
		for _, f := range flows {
			m.routers[f] = chi.NewRouter() // served by nobody
		}
		return m, nil
	}
	wc := &runtime.WorkerConfig{Listeners: []string{"http://:8083"}}
	if v, ok := c.Raw("listeners"); ok {
		wc.Listeners = strings.Split(v, ",")
	}
	wc.RestAdvertisedHostName, _ = c.Raw("rest.advertised.host.name")
	wc.RestAdvertisedListener, _ = c.Raw("rest.advertised.listener")
	if v, ok := c.Raw("rest.advertised.port"); ok {
		p, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("Invalid value %s for configuration rest.advertised.port: Not a number of type INT", v)
		}
		wc.RestAdvertisedPort = p
	}
	_, addr, err := runtime.ParseListener(wc.Listeners[0])
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("internal REST listener %s: %w (set listeners)", addr, err)
	}
	root := chi.NewRouter()
	for _, f := range flows {
		r := chi.NewRouter()
		root.Mount("/"+url.PathEscape(f.Source)+"/"+url.PathEscape(f.Target), r)
		m.routers[f] = r
	}
	m.base = strings.TrimSuffix(wc.AdvertisedURL(ln.Addr().String()), "/")
	m.server = &http.Server{Handler: root, ReadHeaderTimeout: 30 * time.Second}
	go func() {
		if err := m.server.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("internal REST server stopped", "err", err)
		}
	}()
	return m, nil
}

// url is the flow's worker URL: what the group's members advertise and
// the worker id (its host) in statuses.
func (m *mirrorREST) url(f mm2.Flow) string {
	return m.base + "/" + url.PathEscape(f.Source) + "/" + url.PathEscape(f.Target)
}

func (m *mirrorREST) router(f mm2.Flow) chi.Router { return m.routers[f] }

func (m *mirrorREST) close() {
	if m.server != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		m.server.Shutdown(ctx)
	}
}
