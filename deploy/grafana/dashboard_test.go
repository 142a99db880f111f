// Package grafana_test keeps deploy/grafana/fjord-dashboard.json honest:
// every PromQL expression in it may only name metrics Fjord registers,
// used as their type allows (a histogram through _bucket, _sum or
// _count), so a renamed or removed metric fails here instead of leaving
// an empty panel.
package grafana_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/broker"
	"github.com/fjordhq/fjord/connect/runtime"
	"github.com/fjordhq/fjord/connect/runtime/runtimetest"
	"github.com/fjordhq/fjord/connect/storage"
	"github.com/fjordhq/fjord/connectors/postgres/cdc"
	"github.com/fjordhq/fjord/internal/testkit"
	"github.com/fjordhq/fjord/mirror/checkpoint"
	"github.com/fjordhq/fjord/mirror/source"
)

const dashboardFile = "fjord-dashboard.json"

// dashboard is the part of Grafana's JSON model the checks read.
type dashboard struct {
	Inputs []struct {
		Name     string `json:"name"`
		Type     string `json:"type"`
		PluginID string `json:"pluginId"`
	} `json:"__inputs"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name  string          `json:"name"`
			Type  string          `json:"type"`
			Query json.RawMessage `json:"query"`
		} `json:"list"`
	} `json:"templating"`
	UID           string `json:"uid"`
	SchemaVersion int    `json:"schemaVersion"`
}

type panel struct {
	ID         int         `json:"id"`
	Type       string      `json:"type"`
	Title      string      `json:"title"`
	Datasource *datasource `json:"datasource"`
	GridPos    struct {
		X, Y, W, H int
	} `json:"gridPos"`
	Targets []struct {
		Expr       string      `json:"expr"`
		Datasource *datasource `json:"datasource"`
	} `json:"targets"`
	Panels []panel `json:"panels"` // a collapsed row's
}

type datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

func loadDashboard(t *testing.T) *dashboard {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s is not valid JSON: %v", dashboardFile, err)
	}
	return &d
}

// allPanels flattens rows.
func allPanels(ps []panel) []panel {
	var out []panel
	for _, p := range ps {
		out = append(out, p)
		out = append(out, allPanels(p.Panels)...)
	}
	return out
}

// TestDashboardModel: an importable Grafana 10+ dashboard whose panels
// all query the ${DS_PROMETHEUS} input, with the rows operators look for.
func TestDashboardModel(t *testing.T) {
	d := loadDashboard(t)
	if len(d.Inputs) != 1 || d.Inputs[0].Name != "DS_PROMETHEUS" || d.Inputs[0].Type != "datasource" || d.Inputs[0].PluginID != "prometheus" {
		t.Errorf("__inputs %+v: want one Prometheus datasource input DS_PROMETHEUS", d.Inputs)
	}
	if d.UID == "" || d.SchemaVersion < 38 {
		t.Errorf("uid %q, schemaVersion %d: want a uid and Grafana 10's schema (38+)", d.UID, d.SchemaVersion)
	}
	ids := map[int]bool{}
	var rows []string
	for _, p := range allPanels(d.Panels) {
		if ids[p.ID] {
			t.Errorf("panel id %d used twice", p.ID)
		}
		ids[p.ID] = true
		if p.GridPos.W <= 0 || p.GridPos.X < 0 || p.GridPos.X+p.GridPos.W > 24 || p.GridPos.H <= 0 {
			t.Errorf("panel %q gridPos %+v is outside the 24-column grid", p.Title, p.GridPos)
		}
		if p.Type == "row" {
			rows = append(rows, p.Title)
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		if p.Datasource == nil || p.Datasource.UID != "${DS_PROMETHEUS}" {
			t.Errorf("panel %q datasource %+v, want ${DS_PROMETHEUS}", p.Title, p.Datasource)
		}
		for _, tg := range p.Targets {
			if tg.Datasource == nil || tg.Datasource.UID != "${DS_PROMETHEUS}" {
				t.Errorf("panel %q query %q datasource %+v, want ${DS_PROMETHEUS}", p.Title, tg.Expr, tg.Datasource)
			}
		}
	}
	for _, want := range []string{"Cluster", "Throughput", "Requests", "Groups", "Log size", "Connect", "CDC", "Mirror"} {
		if !slices.Contains(rows, want) {
			t.Errorf("no %q row (rows: %v)", want, rows)
		}
	}
}

// queries returns every PromQL expression of the dashboard: panel
// targets and the metric selector of template variable queries
// (label_values(<selector>, <label>)).
func queries(t *testing.T, d *dashboard) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range allPanels(d.Panels) {
		for _, tg := range p.Targets {
			out[tg.Expr] = "panel " + p.Title
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct {
			Query string `json:"query"`
		}
		var s string
		if err := json.Unmarshal(v.Query, &q); err == nil {
			s = q.Query
		} else if err := json.Unmarshal(v.Query, &s); err != nil {
			t.Fatalf("variable %s: query %s", v.Name, v.Query)
		}
		m := labelValues.FindStringSubmatch(s)
		if m == nil {
			t.Errorf("variable %s: query %q is not label_values(...)", v.Name, s)
			continue
		}
		if sel, _, ok := strings.Cut(m[1], ","); ok {
			out[sel] = "variable " + v.Name
		}
	}
	return out
}

var (
	labelValues = regexp.MustCompile(`^\s*label_values\((.*)\)\s*$`)
	strLit      = regexp.MustCompile("\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'|`[^`]*`")
	matchers    = regexp.MustCompile(`\{[^}]*\}`)
	ranges      = regexp.MustCompile(`\[[^\]]*\]`)
	grouping    = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	offsets     = regexp.MustCompile(`\boffset\s+-?\w+`)
	variables   = regexp.MustCompile(`\$\{[^}]*\}|\$\w+`)
	numbers     = regexp.MustCompile(`\b\d+(?:\.\d+)?(?:[eE][+-]?\d+)?\b`)
	identifier  = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	keywords    = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "by": true, "without": true,
		"on": true, "ignoring": true, "group_left": true, "group_right": true, "offset": true, "inf": true, "nan": true}
)

// metricNames returns the metric names a PromQL expression selects:
// identifiers that are not functions, aggregations, keywords, labels of
// a grouping clause, or inside strings, matchers and ranges.
func metricNames(expr string) []string {
	s := strLit.ReplaceAllString(expr, `""`)
	s = matchers.ReplaceAllString(s, " ")
	s = ranges.ReplaceAllString(s, " ")
	s = grouping.ReplaceAllString(s, " ")
	s = offsets.ReplaceAllString(s, " ")
	s = variables.ReplaceAllString(s, " ")
	s = numbers.ReplaceAllString(s, " ")
	var out []string
	for _, loc := range identifier.FindAllStringIndex(s, -1) {
		name := s[loc[0]:loc[1]]
		if keywords[strings.ToLower(name)] {
			continue
		}
		if rest := strings.TrimLeft(s[loc[1]:], " \t\n"); strings.HasPrefix(rest, "(") {
			continue // a function or aggregation
		}
		out = append(out, name)
	}
	return out
}

// TestMetricNamesParser: the extraction the dashboard check relies on.
func TestMetricNamesParser(t *testing.T) {
	for expr, want := range map[string][]string{
		`histogram_quantile(0.99, sum by (le, api) (rate(fjord_broker_request_duration_seconds_bucket{job=~"$job"}[$__rate_interval])))`: {"fjord_broker_request_duration_seconds_bucket"},
		`sum by (topic) (max by (topic, partition) (fjord_log_end_offset{topic=~"a|b"} - fjord_log_start_offset))`:                       {"fjord_log_end_offset", "fjord_log_start_offset"},
		`topk(10, fjord_log_size_bytes) > 1e6 and on (topic) up offset 5m`:                                                               {"fjord_log_size_bytes", "up"},
		`{__name__=~"fjord_.+"}`: nil,
	} {
		if got := metricNames(expr); !slices.Equal(got, want) {
			t.Errorf("metricNames(%q) = %v, want %v", expr, got, want)
		}
	}
}

// recorder is a registry that remembers what was registered, so the
// names of collectors without series yet (a connector not running here)
// are known from their descriptions.
type recorder struct {
	*prometheus.Registry
	mu         sync.Mutex
	collectors []prometheus.Collector
}

func (r *recorder) Register(c prometheus.Collector) error {
	err := r.Registry.Register(c)
	if err == nil {
		r.mu.Lock()
		r.collectors = append(r.collectors, c)
		r.mu.Unlock()
	}
	return err
}

func (r *recorder) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err)
		}
	}
}

var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

// described returns the names of every registered collector's metrics.
func (r *recorder) described() map[string]bool {
	r.mu.Lock()
	cs := slices.Clone(r.collectors)
	r.mu.Unlock()
	out := map[string]bool{}
	for _, c := range cs {
		ch := make(chan *prometheus.Desc)
		go func() { c.Describe(ch); close(ch) }()
		for d := range ch {
			if m := fqName.FindStringSubmatch(d.String()); m != nil {
				out[m[1]] = true
			}
		}
	}
	return out
}

type statusSink struct{}

func (statusSink) Status(string, int, storage.State, error) {}

// fjordRegistry registers what a Fjord process registers — a broker's
// metrics, a Connect worker's, the plugins' (as cmd/fjord's
// registerPluginMetrics does) — and exercises a broker, a consumer group
// and a source and a sink connector so the metrics with labels have
// series and their types are known.
func fjordRegistry(t *testing.T) *recorder {
	t.Helper()
	reg := &recorder{Registry: prometheus.NewRegistry()}
	cfg, err := broker.ConfigFromProperties(map[string]string{
		"node.id": "0", "listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": t.TempDir(),
		"offsets.topic.replication.factor": "1", "offsets.topic.num.partitions": "4", "group.initial.rebalance.delay.ms": "0",
	}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Registerer = reg
	b, err := broker.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	go b.Serve()
	t.Cleanup(func() { b.Close() })
	addr := b.Addr().String()
	for _, err := range []error{cdc.RegisterMetrics(reg), source.RegisterMetrics(reg), reg.Register(checkpoint.DefaultMetrics)} {
		if err != nil {
			t.Fatal(err)
		}
	}

	runtimetest.Register()
	wc, err := runtime.ParseWorkerConfig(map[string]string{
		"bootstrap.servers": addr, "key.converter": runtimetest.ConverterClass, "value.converter": runtimetest.ConverterClass,
		"offset.storage.file.filename": "/nonexistent", "offset.flush.interval.ms": "50",
	}, runtime.Standalone)
	if err != nil {
		t.Fatal(err)
	}
	w, err := runtime.NewWorker(wc, runtime.WorkerOptions{WorkerID: "dashboard", Offsets: storage.NewMemoryOffsetStore(), Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close(context.Background()) })
	ctx := testkit.Context(t, 60*time.Second)
	id := runtimetest.TestID(t)
	for _, c := range []map[string]string{runtimetest.SourceConfig("dash-src", id, "dash", 50), runtimetest.SinkConfig("dash-sink", id, "dash")} {
		name := c["name"]
		if err := w.StartConnector(ctx, name, c, storage.TargetStarted, statusSink{}, nil); err != nil {
			t.Fatal(err)
		}
		tcs, err := w.ConnectorTaskConfigs(ctx, name, c)
		if err != nil {
			t.Fatal(err)
		}
		for i, tc := range tcs {
			if err := w.StartTask(ctx, storage.TaskID{Connector: name, Task: i}, c, tc, storage.TargetStarted, statusSink{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A consumer group of our own, besides the sink's.
	cl := testkit.Client(t, addr, kgo.ConsumeTopics("dash"), kgo.ConsumerGroup("dash-group"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	for n := 0; n < 50; {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of 50 records the source connector wrote", n)
		}
		n += fs.NumRecords()
	}
	testkit.CheckFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		if runtimetest.Collector(id).Distinct() < 50 {
			return fmt.Errorf("the sink connector has not put every record yet")
		}
		return nil
	})
	return reg
}

// TestDashboardUsesOnlyFjordMetrics: every metric an expression or a
// variable of the dashboard names is one Fjord registers; histograms are
// only used through their _bucket, _sum and _count series.
func TestDashboardUsesOnlyFjordMetrics(t *testing.T) {
	d := loadDashboard(t)
	reg := fjordRegistry(t)
	names := reg.described()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]dto.MetricType{}
	for _, mf := range mfs {
		types[mf.GetName()] = mf.GetType()
	}
	// Every metric this work added must be known to the registry, so a
	// dashboard panel cannot silently lose its metric.
	for _, name := range []string{"fjord_broker_topic_bytes_in_total", "fjord_broker_under_replicated_partitions", "fjord_log_size_bytes",
		"fjord_connect_batch_size", "fjord_connect_sink_lag_records", "fjord_cdc_slot_lag_bytes", "fjord_mirror_source_replication_latency_ms_max"} {
		if !names[name] {
			t.Errorf("%s is not registered", name)
		}
	}
	used := map[string]bool{}
	for expr, where := range queries(t, d) {
		got := metricNames(expr)
		if len(got) == 0 && !strings.Contains(expr, "__name__") {
			t.Errorf("%s: %q selects no metric", where, expr)
		}
		for _, name := range got {
			used[name] = true
			if err := checkName(name, names, types); err != nil {
				t.Errorf("%s: %q: %v", where, expr, err)
			}
		}
	}
	t.Logf("the dashboard uses %d metrics; %d are registered", len(used), len(names))
}

// checkName tells whether a metric name used in PromQL exists.
func checkName(name string, names map[string]bool, types map[string]dto.MetricType) error {
	if !strings.HasPrefix(name, "fjord_") {
		return fmt.Errorf("%s is not a Fjord metric", name)
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		base, ok := strings.CutSuffix(name, suffix)
		if !ok || !names[base] {
			continue
		}
		switch types[base] {
		case dto.MetricType_HISTOGRAM:
			return nil
		case dto.MetricType_SUMMARY:
			if suffix != "_bucket" {
				return nil
			}
		case dto.MetricType_COUNTER, dto.MetricType_GAUGE, dto.MetricType_UNTYPED:
		default:
			return fmt.Errorf("%s: the type of %s is unknown (no series when the test gathered): exercise it in fjordRegistry", name, base)
		}
	}
	if !names[name] {
		return fmt.Errorf("%s is not registered by Fjord", name)
	}
	if tp, ok := types[name]; ok && (tp == dto.MetricType_HISTOGRAM || tp == dto.MetricType_SUMMARY) {
		return fmt.Errorf("%s is a %v: select its _bucket, _sum or _count series", name, tp)
	}
	return nil
}

// TestCheckName: what the dashboard check refuses.
func TestCheckName(t *testing.T) {
	names := map[string]bool{"fjord_h": true, "fjord_c_total": true, "fjord_unseen": true}
	types := map[string]dto.MetricType{"fjord_h": dto.MetricType_HISTOGRAM, "fjord_c_total": dto.MetricType_COUNTER}
	for name, ok := range map[string]bool{
		"fjord_h_bucket": true, "fjord_h_count": true, "fjord_h": false, "fjord_c_total": true, "fjord_c_total_sum": false,
		"fjord_unseen": true, "fjord_unseen_bucket": false, "fjord_missing": false, "up": false,
	} {
		if err := checkName(name, names, types); (err == nil) != ok {
			t.Errorf("checkName(%s) = %v, want ok %v", name, err, ok)
		}
	}
}
