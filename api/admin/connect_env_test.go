package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect/herder"
	_ "github.com/fjordhq/fjord/connectors/file"
	_ "github.com/fjordhq/fjord/connectors/postgres/cdc"
	_ "github.com/fjordhq/fjord/converters/bytearray"
	_ "github.com/fjordhq/fjord/converters/header"
	_ "github.com/fjordhq/fjord/converters/json"
	_ "github.com/fjordhq/fjord/converters/str"
	"github.com/fjordhq/fjord/internal/testkit"
	"github.com/fjordhq/fjord/internal/testkit/connectkit"
	_ "github.com/fjordhq/fjord/mirror/checkpoint"
	_ "github.com/fjordhq/fjord/mirror/heartbeat"
	mirrorsource "github.com/fjordhq/fjord/mirror/source"
)

// The Connect part's tests run the admin API against real parts: an
// in-process broker, a standalone Connect worker (the runtime Worker
// driven by the standalone herder, wired as fjord connect-standalone
// wires them, with topic tracking on) and the API on an httptest server.

// cxWorker is a standalone Connect worker in the test process, with
// topic tracking on (connectkit's worker; h is its herder).
type cxWorker struct {
	*connectkit.Worker
	h *herder.Standalone
}

// cxStartWorker starts a worker on the broker at addr with converter as
// its key and value converter; it stops when t ends.
func cxStartWorker(t *testing.T, addr, converter string, reg prometheus.Registerer) *cxWorker {
	t.Helper()
	w := connectkit.Start(t, addr, connectkit.Options{
		Props:         map[string]string{"key.converter": converter, "value.converter": converter},
		TopicTracking: true, Registerer: reg,
	})
	return &cxWorker{Worker: w, h: w.H}
}

func (c *cxWorker) create(t *testing.T, config map[string]string) { c.Create(t, config) }

func (c *cxWorker) failed() error { return c.Failed() }

// cxAwaitState waits until the connector and all its tasks (at least
// one) are in state.
func (c *cxWorker) awaitState(t *testing.T, name string, state herder.State) {
	t.Helper()
	testkit.CheckFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		st, err := c.h.ConnectorStatus(context.Background(), name)
		if err != nil {
			return err
		}
		if st.Connector.State != state || len(st.Tasks) == 0 {
			return fmt.Errorf("connector %s is %s with %d tasks, want %s", name, st.Connector.State, len(st.Tasks), state)
		}
		for _, ts := range st.Tasks {
			if ts.State != state {
				return fmt.Errorf("task %s-%d is %s, want %s", name, ts.ID, ts.State, state)
			}
		}
		return nil
	})
}

// cxAPI is the admin API on an httptest server.
type cxAPI struct {
	srv *Server
	url string
}

func cxStartAPI(t *testing.T, opts Options) *cxAPI {
	t.Helper()
	if opts.SampleInterval == 0 {
		opts.SampleInterval = time.Hour // the history sampler is not under test here
	}
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	r := chi.NewRouter()
	srv.Mount(r)
	hs := httptest.NewServer(r)
	t.Cleanup(func() { hs.Close(); srv.Close() })
	return &cxAPI{srv: srv, url: hs.URL + Prefix}
}

// get GETs path (under /api/v1) and decodes the JSON answer into out,
// returning the status; a non-JSON answer fails t.
func (a *cxAPI) get(t *testing.T, path string, out any) int {
	t.Helper()
	resp, err := http.Get(a.url + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("GET %s: Content-Type %q, body %s", path, ct, body)
	}
	if err := json.Unmarshal(body, out); err != nil {
		t.Fatalf("GET %s: %v in %s", path, err, body)
	}
	return resp.StatusCode
}

// cxProduce writes values to topic synchronously.
func cxProduce(t *testing.T, addr, topic string, values ...string) {
	t.Helper()
	cl := testkit.Client(t, addr)
	var rs []*kgo.Record
	for _, v := range values {
		rs = append(rs, &kgo.Record{Topic: topic, Value: []byte(v)})
	}
	if err := cl.ProduceSync(testkit.Context(t, 10*time.Second), rs...).FirstErr(); err != nil {
		t.Fatalf("produce to %s: %v", topic, err)
	}
}

// cxMetrics is a registry with the mirror source metrics, as the
// distributed workers' /metrics registry has them.
func cxMetrics(t *testing.T) *prometheus.Registry {
	t.Helper()
	reg := prometheus.NewRegistry()
	if err := mirrorsource.RegisterMetrics(reg); err != nil {
		t.Fatal(err)
	}
	return reg
}

func cxSeeds(addr string) []kgo.Opt { return []kgo.Opt{kgo.SeedBrokers(addr)} }
