package deploy

// Shared helpers of the artefact tests: where the files are, how to read
// them, and the checkers that say what is wrong with a config. Checkers
// return problems instead of failing the test, so the negative tests can
// feed them mistakes and require that each is caught.

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/fjordhq/fjord/broker"
	"github.com/fjordhq/fjord/broker/config"
	"github.com/fjordhq/fjord/connect/plugins"
	"github.com/fjordhq/fjord/connect/runtime"

	// Every plugin the fjord binary ships, as a worker has them.
	_ "github.com/fjordhq/fjord/connect/plugins/all"
)

// repoPath is a file of the repository, from this package's directory.
func repoPath(rel string) string { return filepath.Join("..", filepath.FromSlash(rel)) }

func readFile(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(repoPath(rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// parseProps reads Java properties text as Fjord does.
func parseProps(t *testing.T, where, text string) map[string]string {
	t.Helper()
	props, err := config.ParseProperties(strings.NewReader(text))
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	return props
}

func readProps(t *testing.T, rel string) map[string]string {
	t.Helper()
	return parseProps(t, rel, string(readFile(t, rel)))
}

// yamlDocs parses every document of a YAML file ("---" separated) into
// generic maps, as Kubernetes and compose read them.
func yamlDocs(t *testing.T, rel string) []map[string]any {
	t.Helper()
	var docs []map[string]any
	for i, part := range splitYAML(string(readFile(t, rel))) {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(part), &m); err != nil {
			t.Fatalf("%s: document %d: %v", rel, i+1, err)
		}
		if m != nil {
			docs = append(docs, m)
		}
	}
	if len(docs) == 0 {
		t.Fatalf("%s: no YAML documents", rel)
	}
	return docs
}

func splitYAML(s string) []string {
	var parts []string
	var cur strings.Builder
	for line := range strings.Lines(s) {
		if strings.TrimRight(line, "\r\n") == "---" {
			parts = append(parts, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteString(line)
	}
	return append(parts, cur.String())
}

// Accessors for the generic YAML trees: m(v, "a", "b") is v.a.b.
func get(v any, keys ...string) any {
	for _, k := range keys {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

func str(v any, keys ...string) string {
	s, _ := get(v, keys...).(string)
	return s
}

func list(v any, keys ...string) []any {
	l, _ := get(v, keys...).([]any)
	return l
}

func strs(v any, keys ...string) []string {
	var out []string
	for _, e := range list(v, keys...) {
		s, ok := e.(string)
		if !ok {
			s = fmt.Sprint(e)
		}
		out = append(out, s)
	}
	return out
}

// fjordOnlyBrokerKeys are broker keys Fjord adds to Kafka's (not in
// config.BrokerSpecs, which lists Kafka's).
var fjordOnlyBrokerKeys = map[string]bool{"cluster.id": true}

// brokerProblems checks server.properties (with any overrides applied) as
// `fjord broker` would start with them: every key must be one Fjord acts
// on (config.BrokerSpec with Used set; a key Kafka defines but Fjord
// ignores would mislead whoever reads the file), and
// broker.ConfigFromProperties must accept the values without a warning.
func brokerProblems(props map[string]string) (broker.Config, []string) {
	var problems []string
	for _, k := range slices.Sorted(maps.Keys(props)) {
		spec, ok := config.BrokerSpec(k)
		switch {
		case fjordOnlyBrokerKeys[k]:
		case !ok:
			problems = append(problems, fmt.Sprintf("%s: not a broker config Fjord or Kafka knows (a typo?)", k))
		case !spec.Used:
			problems = append(problems, fmt.Sprintf("%s: a Kafka broker config Fjord accepts but does not act on; leave it out", k))
		}
	}
	rec := &logRecorder{}
	cfg, err := broker.ConfigFromProperties(props, slog.New(rec))
	if err != nil {
		problems = append(problems, err.Error())
	}
	for _, r := range rec.records() {
		if r.level >= slog.LevelWarn {
			problems = append(problems, "fjord broker warns: "+r.text)
		}
	}
	return cfg, problems
}

// workerProblems checks distributed worker properties as `fjord connect`
// reads them (runtime.ParseWorkerConfig), and that every key is one the
// worker defines or one its converters define (key.converter.<key>):
// ParseWorkerConfig, like Kafka, ignores keys it does not know.
func workerProblems(props map[string]string) (*runtime.WorkerConfig, []string) {
	var problems []string
	for _, k := range slices.Sorted(maps.Keys(props)) {
		if p := workerKeyProblem(props, k); p != "" {
			problems = append(problems, p)
		}
	}
	wc, err := runtime.ParseWorkerConfig(props, runtime.Distributed)
	if err != nil {
		problems = append(problems, err.Error())
	}
	return wc, problems
}

// workerKeyProblem is why k is not a distributed worker key ("" if it is).
func workerKeyProblem(props map[string]string, k string) string {
	if runtime.WorkerConfigDef(runtime.Distributed).Key(k) != nil {
		return ""
	}
	return converterKeyProblem(props, k)
}

// converterKeyProblem checks a key under key.converter., value.converter.
// or header.converter. against that converter's ConfigDef ("" if known).
func converterKeyProblem(props map[string]string, k string) string {
	for _, c := range []string{"key.converter", "value.converter", "header.converter"} {
		rest, ok := strings.CutPrefix(k, c+".")
		if !ok {
			continue
		}
		class := props[c]
		if class == "" {
			return fmt.Sprintf("%s: %s is not set, so nothing reads it", k, c)
		}
		p, ok := plugins.Lookup(class)
		if !ok {
			return fmt.Sprintf("%s: no converter plugin %s", c, class)
		}
		if p.ConfigDef().Key(rest) == nil && rest != "converter.type" {
			return fmt.Sprintf("%s: %s does not define %q (a typo?)", k, class, rest)
		}
		return ""
	}
	return fmt.Sprintf("%s: not a distributed worker config (a typo?)", k)
}

// connectorProblems validates a connector config as a worker answers
// PUT /connector-plugins/{class}/config/validate (the runtime's keys,
// the connector's own Validate, transformations, converters) and
// requires every key to have a definition there: Kafka Connect ignores
// keys nobody defines, so a misspelt key would silently do nothing.
// The connectors' Validate connects to their systems: the caller points
// the connection keys at real ones.
func connectorProblems(w *runtime.WorkerConfig, cfg map[string]string) []string {
	problems, defined := validateConnector(w, cfg)
	for _, k := range slices.Sorted(maps.Keys(cfg)) {
		if p := undefinedKeyProblem(cfg, k, defined); p != "" {
			problems = append(problems, p)
		}
	}
	return problems
}

// validateConnector returns the validation's errors and the keys it
// has a definition for.
func validateConnector(w *runtime.WorkerConfig, cfg map[string]string) ([]string, map[string]bool) {
	v, err := runtime.ValidateConnectorConfig(w, cfg)
	if err != nil {
		return []string{err.Error()}, nil
	}
	var problems []string
	defined := map[string]bool{}
	for _, c := range v.Configs {
		for _, e := range c.Value.Errors {
			problems = append(problems, fmt.Sprintf("%s: %s", c.Value.Name, e))
		}
		if c.Key != nil {
			defined[c.Key.Name] = true
		}
	}
	return problems, defined
}

// undefinedKeyProblem is why k has no meaning in cfg ("" if defined).
func undefinedKeyProblem(cfg map[string]string, k string, defined map[string]bool) string {
	switch {
	case defined[k]:
		return ""
	case strings.HasPrefix(k, "topic.creation."):
		return topicCreationKeyProblem(cfg, k)
	}
	return fmt.Sprintf("%s: no definition for this key in %s, the runtime, its converters or transformations (a typo?)", k, cfg["connector.class"])
}

// topicCreationKeyProblem checks a source connector's KIP-158 key
// (topic.creation.<group>.<setting>), which the validation does not list:
// the group must be default or one of topic.creation.groups, the setting
// one of the rules or a topic config, and runtime.ParseConnectorConfig
// (which reads them for the worker) must accept them.
func topicCreationKeyProblem(cfg map[string]string, k string) string {
	if _, typ, err := runtime.LookupConnector(cfg["connector.class"]); err != nil || typ != runtime.SourceType {
		return fmt.Sprintf("%s: topic creation applies to source connectors only", k)
	}
	if _, err := runtime.ParseConnectorConfig(cfg); err != nil {
		return fmt.Sprintf("%s: %v", k, err)
	}
	rest := strings.TrimPrefix(k, "topic.creation.")
	if rest == "groups" {
		return ""
	}
	group, setting, _ := strings.Cut(rest, ".")
	groups := strings.Split(cfg["topic.creation.groups"], ",")
	for i := range groups {
		groups[i] = strings.TrimSpace(groups[i])
	}
	if group != "default" && !slices.Contains(groups, group) {
		return fmt.Sprintf("%s: group %q is not in topic.creation.groups (a typo?)", k, group)
	}
	switch setting {
	case "replication.factor", "partitions", "include", "exclude":
		return ""
	}
	if _, ok := config.TopicSpec(setting); !ok {
		return fmt.Sprintf("%s: %q is neither a topic creation rule nor a topic config (a typo?)", k, setting)
	}
	return ""
}

// connectorFile is a connector JSON in POST /connectors's shape.
type connectorFile struct {
	Name   string            `json:"name"`
	Config map[string]string `json:"config"`
}

func readConnector(t *testing.T, rel string) connectorFile {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(readFile(t, rel))))
	dec.DisallowUnknownFields()
	var c connectorFile
	if err := dec.Decode(&c); err != nil {
		t.Fatalf("%s: not {\"name\": ..., \"config\": {string: string}}: %v", rel, err)
	}
	if c.Name == "" || len(c.Config) == 0 {
		t.Fatalf("%s: name and config are required by POST /connectors", rel)
	}
	return c
}

// logRecorder is a slog.Handler keeping every record's level and text
// (message and attributes).
type logRecorder struct {
	mu   *sync.Mutex
	recs *[]logRecord
	with []slog.Attr
}

type logRecord struct {
	level slog.Level
	text  string
}

func (h *logRecorder) init() {
	if h.mu == nil {
		h.mu, h.recs = &sync.Mutex{}, &[]logRecord{}
	}
}

func (h *logRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (h *logRecorder) Handle(_ context.Context, r slog.Record) error {
	h.init()
	var b strings.Builder
	b.WriteString(r.Message)
	for _, a := range h.with {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
	}
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	h.mu.Lock()
	*h.recs = append(*h.recs, logRecord{r.Level, b.String()})
	h.mu.Unlock()
	return nil
}

func (h *logRecorder) WithAttrs(as []slog.Attr) slog.Handler {
	h.init()
	return &logRecorder{mu: h.mu, recs: h.recs, with: append(slices.Clone(h.with), as...)}
}

func (h *logRecorder) WithGroup(string) slog.Handler { h.init(); return h }

func (h *logRecorder) records() []logRecord {
	h.init()
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(*h.recs)
}

// overrides applies `fjord broker --override key=value` arguments to a
// copy of props, as the command does.
func withOverrides(t *testing.T, props map[string]string, overrides []string) map[string]string {
	t.Helper()
	out := maps.Clone(props)
	if err := config.ApplyOverrides(out, overrides); err != nil {
		t.Fatal(err)
	}
	return out
}

// brokerArgs are the parts of a `fjord broker` command line the
// artefacts use: --config, every --override, --http-addr. Anything else
// fails the test (it would have to be checked here first).
type brokerArgs struct {
	config, httpAddr string
	overrides        []string
}

func parseBrokerArgs(t *testing.T, where string, args []string) brokerArgs {
	t.Helper()
	if len(args) == 0 || args[0] != "broker" {
		t.Fatalf("%s: command %q does not run `fjord broker`", where, args)
	}
	var b brokerArgs
	for i := 1; i < len(args); i++ {
		flag := args[i]
		if i+1 >= len(args) {
			t.Fatalf("%s: %s has no value", where, flag)
		}
		val := args[i+1]
		i++
		switch flag {
		case "--config":
			b.config = val
		case "--override":
			b.overrides = append(b.overrides, val)
		case "--http-addr":
			b.httpAddr = val
		default:
			t.Fatalf("%s: broker flag %s is not checked by these tests", where, flag)
		}
	}
	if b.config == "" {
		t.Fatalf("%s: `fjord broker` without --config", where)
	}
	return b
}
