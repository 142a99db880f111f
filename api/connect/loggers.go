package connectapi

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fjordhq/fjord/connect/herder"
)

// Loggers holds the log levels /admin/loggers reads and changes, shaped
// like Kafka Connect's (log4j) loggers: dot-separated names, a "root"
// logger, Java level names (TRACE, DEBUG, INFO, WARN, ERROR, FATAL, OFF,
// ALL), levels inherited from the nearest ancestor that has one. Each
// component logs through Handler(name, base), whose level follows the
// logger's, so PUT /admin/loggers/{name} takes effect at once:
//
//	lg := connectapi.NewLoggers(slog.LevelInfo)
//	worker := slog.New(lg.Handler("org.apache.kafka.connect.runtime.Worker", base))
//
// The zero value is not usable; use NewLoggers.
type Loggers struct {
	mu   sync.Mutex
	root *logger
	// known are the loggers components created or PUTs named.
	known map[string]*logger
	now   func() time.Time
}

type logger struct {
	level    slog.LevelVar
	name     string // Java level name, e.g. "DEBUG"
	explicit bool   // set on this logger, not inherited
	modified *int64 // ms since the epoch of the last REST change
}

// javaLevels maps log4j's level names to slog levels. slog has no TRACE,
// FATAL, OFF or ALL; they sit below DEBUG, above ERROR, above
// everything and below everything.
var javaLevels = map[string]slog.Level{
	"ALL":   slog.Level(-1000),
	"TRACE": slog.LevelDebug - 4,
	"DEBUG": slog.LevelDebug,
	"INFO":  slog.LevelInfo,
	"WARN":  slog.LevelWarn,
	"ERROR": slog.LevelError,
	"FATAL": slog.LevelError + 4,
	"OFF":   slog.Level(1000),
}

// JavaLevel returns the Java name of an slog level (the nearest at or
// below it).
func JavaLevel(l slog.Level) string {
	best, bestLevel := "ALL", slog.Level(-1001)
	for n, v := range javaLevels {
		if v <= l && v > bestLevel {
			best, bestLevel = n, v
		}
	}
	return best
}

// NewLoggers returns loggers whose root has the given level.
func NewLoggers(root slog.Level) *Loggers {
	lg := &Loggers{root: &logger{name: JavaLevel(root), explicit: true}, known: map[string]*logger{}, now: time.Now}
	lg.root.level.Set(javaLevels[lg.root.name])
	return lg
}

// Handler returns a handler that passes records of logger name at or
// above its current level to base (whatever base's own level: the
// logger's level decides).
func (lg *Loggers) Handler(name string, base slog.Handler) slog.Handler {
	lg.mu.Lock()
	l := lg.loggerLocked(name)
	lg.mu.Unlock()
	return &levelHandler{next: base, level: &l.level}
}

// Level returns the level of logger name (created if unknown), for
// components that filter by hand.
func (lg *Loggers) Level(name string) slog.Leveler {
	lg.mu.Lock()
	defer lg.mu.Unlock()
	return &lg.loggerLocked(name).level
}

// loggerLocked finds or creates a logger, inheriting its level.
func (lg *Loggers) loggerLocked(name string) *logger {
	if name == "root" || name == "" {
		return lg.root
	}
	if l, ok := lg.known[name]; ok {
		return l
	}
	parent := lg.ancestorLocked(name)
	l := &logger{name: parent.name}
	l.level.Set(javaLevels[l.name])
	lg.known[name] = l
	return l
}

// ancestorLocked is the nearest ancestor with a level of its own.
func (lg *Loggers) ancestorLocked(name string) *logger {
	for {
		i := strings.LastIndexByte(name, '.')
		if i < 0 {
			return lg.root
		}
		name = name[:i]
		if l, ok := lg.known[name]; ok && l.explicit {
			return l
		}
	}
}

// LoggerLevel is a logger's level as /admin/loggers prints it; a level
// never changed over REST has "last_modified": null.
type LoggerLevel struct {
	Level        string `json:"level"`
	LastModified *int64 `json:"last_modified"`
}

// All returns every logger's level, root included.
func (lg *Loggers) All() map[string]LoggerLevel {
	lg.mu.Lock()
	defer lg.mu.Unlock()
	out := map[string]LoggerLevel{"root": {lg.root.name, lg.root.modified}}
	for n, l := range lg.known {
		out[n] = LoggerLevel{l.name, l.modified}
	}
	return out
}

// Get returns one logger's level; ok is false for a logger nobody created.
func (lg *Loggers) Get(name string) (LoggerLevel, bool) {
	lg.mu.Lock()
	defer lg.mu.Unlock()
	if name == "root" {
		return LoggerLevel{lg.root.name, lg.root.modified}, true
	}
	l, ok := lg.known[name]
	if !ok {
		return LoggerLevel{}, false
	}
	return LoggerLevel{l.name, l.modified}, true
}

// Set sets the level of logger name and of every known logger below it
// (log4j's namespace semantics) and returns the names it changed,
// sorted. level is a Java level name in any case; ok is false if it is
// not one.
func (lg *Loggers) Set(name, level string) (affected []string, ok bool) {
	level = strings.ToUpper(level)
	v, ok := javaLevels[level]
	if !ok {
		return nil, false
	}
	lg.mu.Lock()
	defer lg.mu.Unlock()
	ms := lg.now().UnixMilli()
	set := func(n string, l *logger) {
		l.name, l.explicit = level, true
		l.level.Set(v)
		l.modified = &ms
		affected = append(affected, n)
	}
	if name == "root" {
		set("root", lg.root)
		for n, l := range lg.known {
			set(n, l)
		}
	} else {
		set(name, lg.loggerLocked(name))
		for n, l := range lg.known {
			if strings.HasPrefix(n, name+".") {
				set(n, l)
			}
		}
	}
	slices.Sort(affected)
	return affected, true
}

// Configure sets a logger's level as a logging configuration does at
// start-up: no last_modified, and loggers below it that have no level of
// their own inherit it. ok is false for an unknown level name.
func (lg *Loggers) Configure(name, level string) bool {
	level = strings.ToUpper(level)
	v, ok := javaLevels[level]
	if !ok {
		return false
	}
	lg.mu.Lock()
	defer lg.mu.Unlock()
	l := lg.loggerLocked(name)
	l.name, l.explicit = level, true
	l.level.Set(v)
	for n, d := range lg.known {
		if !d.explicit && (name == "root" || strings.HasPrefix(n, name+".")) {
			d.name = lg.ancestorLocked(n).name
			d.level.Set(javaLevels[d.name])
		}
	}
	return true
}

type levelHandler struct {
	next  slog.Handler
	level *slog.LevelVar
}

func (h *levelHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level.Level() }
func (h *levelHandler) Handle(ctx context.Context, r slog.Record) error {
	return h.next.Handle(ctx, r)
}
func (h *levelHandler) WithAttrs(a []slog.Attr) slog.Handler {
	return &levelHandler{next: h.next.WithAttrs(a), level: h.level}
}
func (h *levelHandler) WithGroup(g string) slog.Handler {
	return &levelHandler{next: h.next.WithGroup(g), level: h.level}
}

// ClusterLoggerSetter is implemented by herders that apply a level on
// every worker (PUT /admin/loggers/{name}?scope=cluster; Kafka writes it
// to the config topic). Without it the level is set on this worker.
type ClusterLoggerSetter interface {
	SetClusterLoggerLevel(ctx context.Context, namespace, level string) error
}

func (s *Server) listLoggers(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.opts.Loggers.All())
}

func (s *Server) getLogger(w http.ResponseWriter, r *http.Request) {
	name := param(r, "logger")
	l, ok := s.opts.Loggers.Get(name)
	if !ok {
		writeError(w, herder.Errorf(http.StatusNotFound, "Logger %s not found.", name))
		return
	}
	writeJSON(w, http.StatusOK, l)
}

// setLogger answers PUT /admin/loggers/{name}[?scope=worker|cluster]:
// 200 with the changed loggers, or 204 for the cluster scope. An unknown
// scope is the worker scope, as in Kafka.
func (s *Server) setLogger(w http.ResponseWriter, r *http.Request) {
	if e := requireJSON(r); e != nil {
		writeError(w, e)
		return
	}
	body, e := readBody(r)
	if e != nil {
		writeError(w, e)
		return
	}
	var req map[string]json.RawMessage
	if err := decodeObject(body, &req); err != nil {
		writeError(w, badRequest("Invalid request body: %s; expected {\"level\": \"...\"}", jsonSyntax(err)))
		return
	}
	raw, ok := req["level"]
	level, isNull, err := configValue(raw)
	if !ok || isNull {
		writeError(w, badRequest("Desired 'level' parameter was not specified in request."))
		return
	}
	if err != nil {
		writeError(w, badRequest("Invalid level: %v", err))
		return
	}
	// Kafka answers an unknown level with 404.
	if _, ok := javaLevels[strings.ToUpper(level)]; !ok {
		writeError(w, herder.Errorf(http.StatusNotFound, "invalid log level '%s'.", level))
		return
	}
	name := param(r, "logger")
	scope := strings.ToLower(r.URL.Query().Get("scope"))
	if scope == "cluster" {
		if cs, ok := s.h.(ClusterLoggerSetter); ok {
			ctx, cancel := s.ctx(r)
			defer cancel()
			if err := cs.SetClusterLoggerLevel(ctx, name, level); err != nil {
				s.fail(w, r, body, err)
				return
			}
		} else {
			s.opts.Loggers.Set(name, level)
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if scope != "" && scope != "worker" {
		s.log.Warn("invalid logging scope; using worker", "scope", scope)
	}
	affected, _ := s.opts.Loggers.Set(name, level)
	writeJSON(w, http.StatusOK, affected)
}
