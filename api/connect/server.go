package connectapi

import (
	"context"
	_ "embed"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/fjordhq/fjord/connect/herder"
)

// KafkaVersion is the Kafka Connect version whose REST API this package
// speaks; GET / reports it unless Options.Version says otherwise, so tools
// that check the worker's version treat Fjord as that release.
const KafkaVersion = "4.4.0"

// Options configure the REST API. The zero value serves the API with
// Kafka Connect's defaults.
type Options struct {
	// Version and Commit are GET /'s "version" and "commit"; defaults
	// KafkaVersion and the binary's VCS revision.
	Version string
	Commit  string
	// Plugins lists plugins and their configs; default RegistryPlugins{}
	// (the connect/plugins registry). A herder implementing
	// PluginConfigProvider answers GET /connector-plugins/{p}/config.
	Plugins PluginSource
	// Loggers backs /admin/loggers; default a fresh Loggers whose root is
	// INFO. Share one with the process's log handlers so PUTs take effect.
	Loggers *Loggers
	// RequestTimeout bounds each herder call (Kafka's 90 s); an expired
	// call answers 500 "Request timed out".
	RequestTimeout time.Duration
	// HealthTimeout bounds GET /health (Kafka's 10 s).
	HealthTimeout time.Duration
	// TopicTrackingDisabled and TopicTrackingResetDisabled mirror the
	// worker's topic.tracking.enable=false and
	// topic.tracking.allow.reset=false (403 on the topics endpoints).
	TopicTrackingDisabled      bool
	TopicTrackingResetDisabled bool
	// Forward configures forwarding to the leader.
	Forward ForwardOptions
	// Logger receives one line per failed request and per forward.
	Logger *slog.Logger
	// OpenAPIDocument replaces the document served at /openapi.json (a
	// process that serves more than this API serves the merged one).
	OpenAPIDocument []byte
}

// Server is the Kafka Connect REST API over a Herder. It is an
// http.Handler; Mount adds its routes to another router instead.
type Server struct {
	h    herder.Herder
	opts Options
	log  *slog.Logger
	r    chi.Router
}

// New returns the REST API for h as a handler with its own router.
func New(h herder.Herder, opts Options) *Server {
	s := newServer(h, opts)
	s.r = chi.NewRouter()
	s.Mount(s.r)
	return s
}

func newServer(h herder.Herder, opts Options) *Server {
	if opts.Version == "" {
		opts.Version = KafkaVersion
	}
	if opts.Commit == "" {
		opts.Commit = buildCommit()
	}
	if opts.Plugins == nil {
		opts.Plugins = RegistryPlugins{}
	}
	if opts.Loggers == nil {
		opts.Loggers = NewLoggers(slog.LevelInfo)
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = 90 * time.Second
	}
	if opts.HealthTimeout <= 0 {
		opts.HealthTimeout = 10 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	opts.Forward = opts.Forward.withDefaults()
	return &Server{h: h, opts: opts, log: opts.Logger.With("component", "connect-rest")}
}

// Mount registers the API on r, for a process that serves other routes on
// the same listener (fjord dev). It sets r's NotFound and
// MethodNotAllowed answers to Kafka Connect's JSON errors.
func Mount(r chi.Router, h herder.Herder, opts Options) *Server {
	s := newServer(h, opts)
	s.r = r
	s.Mount(r)
	return s
}

// ServeHTTP serves the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.r.ServeHTTP(w, r) }

// Routes lists every method and path pattern the API serves, in
// registration order (the OpenAPI test checks the document against it).
func (s *Server) Routes() [][2]string {
	var out [][2]string
	for _, rt := range routes(s) {
		out = append(out, [2]string{rt.method, rt.pattern})
	}
	return out
}

type route struct {
	method, pattern string
	h               http.HandlerFunc
}

func routes(s *Server) []route {
	return []route{
		{"GET", "/", s.serverInfo},
		{"GET", "/health", s.health},
		{"GET", "/openapi.json", s.openAPI},

		{"GET", "/connectors", s.listConnectors},
		{"POST", "/connectors", s.createConnector},
		{"GET", "/connectors/{connector}", s.getConnector},
		{"DELETE", "/connectors/{connector}", s.deleteConnector},
		{"GET", "/connectors/{connector}/config", s.getConnectorConfig},
		{"PUT", "/connectors/{connector}/config", s.putConnectorConfig},
		{"PATCH", "/connectors/{connector}/config", s.patchConnectorConfig},
		{"GET", "/connectors/{connector}/status", s.getConnectorStatus},
		{"POST", "/connectors/{connector}/restart", s.restartConnector},
		{"PUT", "/connectors/{connector}/pause", s.pauseConnector},
		{"PUT", "/connectors/{connector}/resume", s.resumeConnector},
		{"PUT", "/connectors/{connector}/stop", s.stopConnector},
		{"GET", "/connectors/{connector}/tasks", s.getTasks},
		{"GET", "/connectors/{connector}/tasks/{task}/status", s.getTaskStatus},
		{"POST", "/connectors/{connector}/tasks/{task}/restart", s.restartTask},
		{"GET", "/connectors/{connector}/topics", s.getTopics},
		{"PUT", "/connectors/{connector}/topics/reset", s.resetTopics},
		{"GET", "/connectors/{connector}/offsets", s.getOffsets},
		{"PATCH", "/connectors/{connector}/offsets", s.alterOffsets},
		{"DELETE", "/connectors/{connector}/offsets", s.resetOffsets},

		{"GET", "/connector-plugins", s.listPlugins},
		{"GET", "/connector-plugins/{plugin}/config", s.pluginConfig},
		{"PUT", "/connector-plugins/{plugin}/config/validate", s.validateConfig},

		{"GET", "/admin/loggers", s.listLoggers},
		{"GET", "/admin/loggers/{logger}", s.getLogger},
		{"PUT", "/admin/loggers/{logger}", s.setLogger},
	}
}

// Mount registers the routes on r (see the package function Mount).
func (s *Server) Mount(r chi.Router) {
	for _, rt := range routes(s) {
		r.MethodFunc(rt.method, rt.pattern, rt.h)
		// Kafka (Jersey) matches "/connectors/x/" as "/connectors/x".
		if rt.pattern != "/" {
			r.MethodFunc(rt.method, rt.pattern+"/", rt.h)
		}
	}
	// Kafka's internal inter-worker endpoint (not in routes: the OpenAPI
	// document leaves it out, as Kafka's does).
	r.MethodFunc("POST", "/connectors/{connector}/tasks", s.putTaskConfigs)
	r.MethodFunc("POST", "/connectors/{connector}/tasks/", s.putTaskConfigs)
	r.NotFound(func(w http.ResponseWriter, _ *http.Request) {
		writeBare(w, http.StatusNotFound, "HTTP 404 Not Found")
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, _ *http.Request) {
		writeBare(w, http.StatusMethodNotAllowed, "HTTP 405 Method Not Allowed")
	})
}

// writeBare writes an error body without a Content-Type, as Jersey does
// for paths and methods it does not serve.
func writeBare(w http.ResponseWriter, code int, msg string) {
	b, _ := encode(herder.Error{Code: code, Message: msg})
	w.Header()["Content-Type"] = nil // no sniffed text/plain either
	w.WriteHeader(code)
	w.Write(b)
}

// ctx bounds a herder call by the request timeout.
func (s *Server) ctx(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), s.opts.RequestTimeout)
}

// param returns a decoded path parameter. chi matches on the escaped path
// when the URL has escapes that decoding would lose ("a%2Fb"), so those
// are unescaped here.
func param(r *http.Request, name string) string {
	v := chi.URLParam(r, name)
	if r.URL.RawPath != "" {
		if u, err := url.PathUnescape(v); err == nil {
			return u
		}
	}
	return v
}

// fail answers a failed herder call: a NotLeaderError is forwarded to the
// leader (body is the request body to send on), anything else becomes
// Kafka's error body.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, body []byte, err error) {
	var nl *herder.NotLeaderError
	if errors.As(err, &nl) {
		s.forward(w, r, body, nl.LeaderURL)
		return
	}
	e := errorOf(err)
	if e.Code >= 500 {
		s.log.Warn("request failed", "method", r.Method, "path", r.URL.Path, "status", e.Code, "err", err)
	}
	writeError(w, e)
}

// serverInfo answers GET /.
func (s *Server) serverInfo(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, ServerInfo{Version: s.opts.Version, Commit: s.opts.Commit, KafkaClusterID: s.h.KafkaClusterID()})
}

// ServerInfo is GET /'s answer.
type ServerInfo struct {
	Version        string `json:"version"`
	Commit         string `json:"commit"`
	KafkaClusterID string `json:"kafka_cluster_id"`
}

// HealthChecker is implemented by herders that can tell whether the
// worker has started and its main loop answers (Kafka's
// Herder.healthCheck). Without it a worker whose REST API answers is
// healthy.
type HealthChecker interface {
	// Healthy returns nil when healthy, an error wrapping ErrStarting
	// while the worker starts, any other error when it is stuck; the
	// error's text is added to the answer's message.
	Healthy(ctx context.Context) error
}

// ErrStarting marks a worker that has not finished starting (GET /health
// answers 503).
var ErrStarting = errors.New("worker is starting")

// WorkerStatus is GET /health's answer.
type WorkerStatus struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	hc, ok := s.h.(HealthChecker)
	if !ok {
		writeJSON(w, http.StatusOK, WorkerStatus{"healthy", "Worker has completed startup and is ready to handle requests."})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.HealthTimeout)
	defer cancel()
	err := hc.Healthy(ctx)
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, WorkerStatus{"healthy", "Worker has completed startup and is ready to handle requests."})
	case errors.Is(err, ErrStarting):
		writeJSON(w, http.StatusServiceUnavailable, WorkerStatus{"starting", "Worker is still starting up." + details(err, ErrStarting)})
	default:
		writeJSON(w, http.StatusInternalServerError, WorkerStatus{"unhealthy", "Worker was unable to handle this request and may be unable to handle other requests." + details(err, nil)})
	}
}

// details is the text after Kafka's fixed health message: the error's own
// words, if it has more than the sentinel.
func details(err, sentinel error) string {
	if err == nil || err == sentinel {
		return ""
	}
	return " " + err.Error()
}

//go:embed openapi.json
var openAPIDoc []byte

// OpenAPI returns the OpenAPI 3 document of the API.
func OpenAPI() []byte { return openAPIDoc }

func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if s.opts.OpenAPIDocument != nil {
		w.Write(s.opts.OpenAPIDocument)
		return
	}
	w.Write(openAPIDoc)
}

func buildCommit() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, st := range bi.Settings {
			if st.Key == "vcs.revision" && len(st.Value) >= 16 {
				return st.Value[:16]
			}
		}
	}
	return "unknown"
}
