// Package admin serves Fjord's JSON admin API under /api/v1: the
// cluster, brokers, topics with their partitions, offsets and configs,
// messages by offset or timestamp, consumer groups with their lag,
// schema-registry subjects, CDC → topic → sink pipelines with the lag at
// every hop, mirror flows, and a short throughput/lag history for charts.
//
// It talks to the cluster only through the Kafka protocol (franz-go), so
// it serves the same answers on a broker, a Connect worker or `fjord dev`,
// and against Apache Kafka too. The web console (package ui) reads only
// this API, Kafka Connect's REST API and the schema registry's: it does
// nothing a script cannot do. The operations are described in the OpenAPI
// fragments under openapi/, which OpenAPI merges into one document with
// the Connect API's.
//
// Errors are Kafka Connect's shape, {"error_code": <HTTP status>,
// "message": "..."}, with the Kafka error name in the message where the
// cluster answered one.
package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect/herder"
)

// Prefix is where the API is mounted.
const Prefix = "/api/v1"

// Options configure a Server.
type Options struct {
	// ClientOpts reach the Kafka cluster (at least kgo.SeedBrokers).
	ClientOpts []kgo.Opt
	// Herder is this process's Connect worker (nil: none here; the
	// pipeline and mirror views then answer with "available": false).
	Herder herder.Herder
	// RegistryURL is a Confluent-compatible schema registry's base URL,
	// used to decode Avro messages and to list subjects ("": none).
	RegistryURL string
	// Gatherer is this node's Prometheus registry; the history sampler
	// reads broker byte counters from it when present (nil: message
	// rates from end offsets only).
	Gatherer prometheus.Gatherer
	// SampleInterval is how often the history is sampled (default 5s);
	// HistoryPoints how many samples are kept (default 720: an hour).
	SampleInterval time.Duration
	HistoryPoints  int
	Logger         *slog.Logger
}

// Server is the admin API.
type Server struct {
	opts   Options
	log    *slog.Logger
	client *kgo.Client
	adm    *kadm.Client
	http   *http.Client // for the schema registry

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	hist *history
}

// New creates the server and starts its history sampler. It does not
// wait for the cluster: requests made while it is unreachable answer 503.
func New(opts Options) (*Server, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.SampleInterval <= 0 {
		opts.SampleInterval = 5 * time.Second
	}
	if opts.HistoryPoints <= 0 {
		opts.HistoryPoints = 720
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.ClientID("fjord-admin-api")}, opts.ClientOpts...)...)
	if err != nil {
		return nil, fmt.Errorf("admin API Kafka client: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		opts: opts, log: opts.Logger, client: cl, adm: kadm.NewClient(cl),
		http: &http.Client{Timeout: 10 * time.Second},
		ctx:  ctx, cancel: cancel,
	}
	s.startHistory()
	return s, nil
}

// Close stops the sampler and the Kafka client.
func (s *Server) Close() {
	s.cancel()
	s.wg.Wait()
	s.client.Close()
}

// Routes lists the API's method and path patterns (for the OpenAPI test).
func (s *Server) Routes() [][2]string {
	var out [][2]string
	for _, r := range s.routes() {
		out = append(out, [2]string{r.method, Prefix + r.path})
	}
	return out
}

type route struct {
	method, path string
	h            http.HandlerFunc
}

func (s *Server) routes() []route {
	return []route{
		{"GET", "/cluster", s.getCluster},
		{"GET", "/brokers", s.listBrokers},
		{"GET", "/topics", s.listTopics},
		{"POST", "/topics", s.createTopic},
		{"GET", "/topics/{topic}", s.getTopic},
		{"DELETE", "/topics/{topic}", s.deleteTopic},
		{"GET", "/topics/{topic}/configs", s.getTopicConfigs},
		{"PATCH", "/topics/{topic}/configs", s.alterTopicConfigs},
		{"POST", "/topics/{topic}/partitions", s.addPartitions},
		{"GET", "/topics/{topic}/messages", s.readMessages},
		{"POST", "/topics/{topic}/messages", s.produceMessage},
		{"GET", "/groups", s.listGroups},
		{"GET", "/groups/{group}", s.getGroup},
		{"DELETE", "/groups/{group}", s.deleteGroup},
		{"POST", "/groups/{group}/offsets/reset", s.resetGroupOffsets},
		{"GET", "/history", s.getHistory},

		{"GET", "/schemas", s.listSchemas},
		{"GET", "/schemas/{subject}", s.getSchemaSubject},
		{"GET", "/pipelines", s.listPipelines},
		{"GET", "/mirror", s.getMirror},
	}
}

// Mount registers the API on r under Prefix.
func (s *Server) Mount(r chi.Router) {
	r.Route(Prefix, func(r chi.Router) {
		for _, rt := range s.routes() {
			r.MethodFunc(rt.method, rt.path, rt.h)
		}
		r.NotFound(func(w http.ResponseWriter, r *http.Request) {
			writeError(w, http.StatusNotFound, "Unknown admin API path "+r.URL.Path+" (see /openapi.json)")
		})
		r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
			writeError(w, http.StatusMethodNotAllowed, "HTTP method "+r.Method+" is not supported on "+r.URL.Path)
		})
	})
}

// writeJSON writes v with status code.
func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// apiError is Kafka Connect's error entity.
type apiError struct {
	ErrorCode int    `json:"error_code"`
	Message   string `json:"message"`
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, apiError{ErrorCode: code, Message: msg})
}

// httpError is an error with the status it answers.
type httpError struct {
	code int
	msg  string
}

func (e *httpError) Error() string { return e.msg }

func errorf(code int, format string, args ...any) error {
	return &httpError{code: code, msg: fmt.Sprintf(format, args...)}
}

// fail answers err: its own status for an *httpError, 503 when the
// cluster could not be reached, else 500.
func fail(w http.ResponseWriter, err error) {
	var he *httpError
	if errors.As(err, &he) {
		writeError(w, he.code, he.msg)
		return
	}
	if errors.Is(err, context.DeadlineExceeded) {
		writeError(w, http.StatusServiceUnavailable, "the Kafka cluster did not answer in time: "+err.Error())
		return
	}
	writeError(w, http.StatusInternalServerError, err.Error())
}

// decodeBody reads a JSON request body into v, refusing unknown fields.
func decodeBody(r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 16<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errorf(http.StatusBadRequest, "request body is not valid JSON for this operation: %v", err)
	}
	return nil
}
