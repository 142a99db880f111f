package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fjordhq/fjord/connect/herder"
)

// GET /api/v1/pipelines: the data flows of this Connect worker (or
// cluster) as chains of hops — Postgres (for CDC sources) → source
// connector → topic → sink connector — with how far each hop trails the
// one before it. Everything comes from places an operator could query by
// hand: the herder's statuses, active topics and offsets, the sink
// groups' committed offsets and the topics' end offsets, the timestamp of
// a sink's first unconsumed record, and the replication slot in Postgres.

// pipelinesResponse is the answer.
type pipelinesResponse struct {
	// Available: a Connect worker runs in this process.
	Available bool       `json:"available"`
	Pipelines []pipeline `json:"pipelines"`
	Detail    string     `json:"detail,omitempty"`
}

// pipeline is a chain of hops named after its first connector.
type pipeline struct {
	Name string `json:"name"`
	Hops []hop  `json:"hops"`
}

// Hop kinds.
const (
	hopPostgres = "postgres"
	hopSource   = "source"
	hopTopic    = "topic"
	hopSink     = "sink"
)

// hop is one stage. Lags are how far it trails the stage before it, null
// where that is unknown or meaningless for the kind: lag_bytes for
// Postgres (WAL the slot has not confirmed), lag_records for sinks
// (records of the topic not yet committed by the sink's group),
// lag_seconds for both (the age of the oldest change not yet through).
type hop struct {
	Kind       string   `json:"kind"`
	Name       string   `json:"name"`
	State      *string  `json:"state"`
	LagRecords *int64   `json:"lag_records"`
	LagBytes   *int64   `json:"lag_bytes"`
	LagSeconds *float64 `json:"lag_seconds"`
	Detail     string   `json:"detail"`
}

// connectorView is what the pipeline and mirror views read of a
// connector.
type connectorView struct {
	name   string
	class  string // canonical class name
	typ    herder.ConnectorType
	config map[string]string
	status *herder.ConnectorStateInfo // nil when it could not be read
}

// herderConcurrency bounds concurrent herder calls of one request.
const herderConcurrency = 8

// loadConnectors reads every connector's config and status. A connector
// deleted while they are read is left out.
func (s *Server) loadConnectors(ctx context.Context) ([]*connectorView, error) {
	names, err := s.opts.Herder.Connectors(ctx)
	if err != nil {
		return nil, herderFailure(err)
	}
	views := make([]*connectorView, len(names))
	errs := make([]error, len(names))
	runBounded(len(names), herderConcurrency, func(i int) {
		info, err := s.opts.Herder.ConnectorInfo(ctx, names[i])
		if err != nil {
			errs[i] = err
			return
		}
		v := &connectorView{name: names[i], class: canonicalClass(info.Config["connector.class"]), typ: info.Type, config: info.Config}
		if st, err := s.opts.Herder.ConnectorStatus(ctx, names[i]); err == nil {
			v.status = st
		}
		views[i] = v
	})
	var out []*connectorView
	for i, v := range views {
		switch {
		case v != nil:
			out = append(out, v)
		case herder.StatusOf(errs[i]) == http.StatusNotFound:
		default:
			return nil, herderFailure(errs[i])
		}
	}
	return out, nil
}

func herderFailure(err error) error {
	return errorf(herder.StatusOf(err), "the Connect worker could not list its connectors: %v", err)
}

func (v *connectorView) state() *string {
	if v.status == nil || v.status.Connector.State == "" {
		return nil
	}
	st := string(v.status.Connector.State)
	return &st
}

// statusDetail summarises the tasks ("2 tasks RUNNING", "2 tasks: 1
// RUNNING, 1 FAILED")
// and the first line of the first failure's trace.
func (v *connectorView) statusDetail() string {
	st := v.status
	if st == nil {
		return "status unknown"
	}
	var parts []string
	var failure string
	if st.Connector.State == herder.StateFailed {
		failure = "connector failed: " + firstTraceLine(st.Connector.Trace)
	}
	counts := map[herder.State]int{}
	for _, t := range st.Tasks {
		counts[t.State]++
		if t.State == herder.StateFailed && failure == "" {
			failure = fmt.Sprintf("task %d failed: %s", t.ID, firstTraceLine(t.Trace))
		}
	}
	states := make([]string, 0, len(counts))
	for s := range counts {
		states = append(states, string(s))
	}
	sort.Strings(states)
	for _, s := range states {
		parts = append(parts, fmt.Sprintf("%d %s", counts[herder.State(s)], s))
	}
	out := fmt.Sprintf("%d tasks", len(st.Tasks))
	if len(st.Tasks) == 1 {
		out = "1 task"
	}
	switch len(states) {
	case 0:
	case 1:
		out += " " + states[0]
	default:
		out += ": " + strings.Join(parts, ", ")
	}
	if failure != "" {
		out += "; " + failure
	}
	return out
}

func firstTraceLine(trace string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(trace), "\n")
	return line
}

func (s *Server) listPipelines(w http.ResponseWriter, r *http.Request) {
	if s.opts.Herder == nil {
		writeJSON(w, http.StatusOK, pipelinesResponse{Pipelines: []pipeline{},
			Detail: "No Connect worker runs in this process: the pipelines are shown by the admin API of a Connect worker or of fjord dev."})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 15*time.Second)
	defer cancel()
	conns, err := s.loadConnectors(ctx)
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, pipelinesResponse{Available: true, Pipelines: s.buildPipelines(ctx, conns)})
}

// sourcePlan is a source connector and the topics it writes.
type sourcePlan struct {
	conn        *connectorView
	topics      []string
	topicDetail string // how the topics were found, when not tracked
}

// sinkPlan is a sink connector, the topics it reads and the consumer
// group it commits them in.
type sinkPlan struct {
	conn     *connectorView
	group    string
	match    topicMatcher
	topics   map[string]bool // topics it is shown on
	ownTopic []string        // topics no source writes (its own pipeline)
}

// buildPipelines lays the connectors out as chains. Whatever the cluster
// or a database does not answer shows as null lags with a detail.
func (s *Server) buildPipelines(ctx context.Context, conns []*connectorView) []pipeline {
	var sources []*sourcePlan
	var sinks []*sinkPlan
	for _, c := range conns {
		switch c.typ {
		case herder.TypeSource:
			sources = append(sources, &sourcePlan{conn: c})
		case herder.TypeSink:
			sinks = append(sinks, &sinkPlan{conn: c, group: sinkGroupOf(c.name, c.config), match: sinkMatcher(c.config), topics: map[string]bool{}})
		}
	}
	runBounded(len(sources), herderConcurrency, func(i int) {
		sources[i].topics, sources[i].topicDetail = s.sourceTopics(ctx, sources[i].conn)
	})

	// Which sink reads which source topic; what each sink reads that no
	// source writes gets a pipeline of its own.
	written := map[string]bool{}
	for _, sp := range sources {
		for _, t := range sp.topics {
			written[t] = true
			for _, k := range sinks {
				if k.match.matches(t) {
					k.topics[t] = true
				}
			}
		}
	}
	clusterTopics := s.clusterTopicsIfNeeded(ctx, sinks)
	for _, k := range sinks {
		for _, t := range k.match.candidates(clusterTopics) {
			if !written[t] {
				k.topics[t] = true
				k.ownTopic = append(k.ownTopic, t)
			}
		}
		sort.Strings(k.ownTopic)
	}

	// Offsets of every topic shown, then each sink's lag on its topics,
	// while the Postgres slots are read.
	var topics []string
	for t := range written {
		topics = append(topics, t)
	}
	for _, k := range sinks {
		topics = append(topics, k.ownTopic...)
	}
	slices.Sort(topics)
	topics = slices.Compact(topics)
	offs := s.listTopicOffsets(ctx, topics)

	lags := make([]map[string]*sinkLag, len(sinks))
	pgHops := make([]*hop, len(sources))
	runBounded(len(sinks)+len(sources), herderConcurrency, func(i int) {
		if i < len(sinks) {
			k := sinks[i]
			lags[i] = s.sinkLags(ctx, k.group, slices.Sorted(maps.Keys(k.topics)), offs)
			return
		}
		sp := sources[i-len(sinks)]
		if sp.conn.class == postgresCDCClass {
			h := s.postgresHop(ctx, sp.conn)
			pgHops[i-len(sinks)] = &h
		}
	})

	sinkHop := func(i int, topic string) hop {
		k := sinks[i]
		h := hop{Kind: hopSink, Name: k.conn.name, State: k.conn.state()}
		details := []string{k.conn.statusDetail(), "group " + k.group}
		if l := lags[i][topic]; l != nil {
			h.LagRecords, h.LagSeconds = l.records, l.seconds
			if l.detail != "" {
				details = append(details, l.detail)
			}
		}
		if k.match.err != nil {
			details = append(details, k.match.err.Error())
		}
		h.Detail = strings.Join(details, "; ")
		return h
	}

	var out []pipeline
	for si, sp := range sources {
		p := pipeline{Name: sp.conn.name}
		if h := pgHops[si]; h != nil {
			p.Hops = append(p.Hops, *h)
		}
		detail := sp.conn.statusDetail()
		if sp.topicDetail != "" {
			detail += "; " + sp.topicDetail
		}
		p.Hops = append(p.Hops, hop{Kind: hopSource, Name: sp.conn.name, State: sp.conn.state(), Detail: detail})
		for _, t := range sp.topics {
			p.Hops = append(p.Hops, offs.topicHop(t))
			for i, k := range sinks {
				if k.match.matches(t) {
					p.Hops = append(p.Hops, sinkHop(i, t))
				}
			}
		}
		out = append(out, p)
	}
	for i, k := range sinks {
		if len(k.ownTopic) == 0 && len(k.topics) > 0 {
			continue // shown in its sources' pipelines
		}
		p := pipeline{Name: k.conn.name}
		for _, t := range k.ownTopic {
			p.Hops = append(p.Hops, offs.topicHop(t), sinkHop(i, t))
		}
		if len(k.ownTopic) == 0 {
			// It reads nothing that exists: show the sink alone.
			h := sinkHop(i, "")
			h.Detail += "; it reads no existing topic"
			p.Hops = append(p.Hops, h)
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	if out == nil {
		out = []pipeline{}
	}
	return out
}

// sourceTopics lists the topics a source connector writes: the topics
// the worker tracked (KIP-558 active topics), else the topic its config
// names (FileStreamSource's topic, datagen's kafka.topic).
func (s *Server) sourceTopics(ctx context.Context, c *connectorView) ([]string, string) {
	active, err := s.opts.Herder.ConnectorActiveTopics(ctx, c.name)
	if err == nil && len(active) > 0 {
		return slices.Sorted(slices.Values(active)), ""
	}
	var configured []string
	for _, k := range []string{"topic", "kafka.topic"} {
		if t := strings.TrimSpace(c.config[k]); t != "" && !strings.Contains(t, ",") {
			configured = append(configured, t)
		}
	}
	why := "it has written no records yet"
	if err != nil {
		why = "the worker does not track the topics connectors use (" + err.Error() + ")"
	}
	if len(configured) > 0 {
		return configured, "topic from the connector's config: " + why
	}
	return nil, "the topics it writes are not known: " + why
}

// sinkGroupOf is the sink's consumer group: consumer.override.group.id,
// else connect-<name> (Kafka's SinkUtils.consumerGroupId).
func sinkGroupOf(name string, config map[string]string) string {
	if g := strings.TrimSpace(config["consumer.override.group.id"]); g != "" {
		return g
	}
	return "connect-" + name
}

// topicMatcher is a sink's topics or topics.regex.
type topicMatcher struct {
	list []string
	re   *regexp.Regexp
	err  error
}

func sinkMatcher(config map[string]string) topicMatcher {
	var m topicMatcher
	for _, t := range strings.Split(config["topics"], ",") {
		if t = strings.TrimSpace(t); t != "" {
			m.list = append(m.list, t)
		}
	}
	if re := strings.TrimSpace(config["topics.regex"]); re != "" {
		// A consumer's pattern subscription matches whole topic names.
		m.re, m.err = regexp.Compile("^(?:" + re + ")$")
		if m.err != nil {
			m.err = fmt.Errorf("topics.regex %q is not a pattern the admin API can match (%v)", re, m.err)
		}
	}
	return m
}

func (m topicMatcher) matches(topic string) bool {
	return slices.Contains(m.list, topic) || (m.re != nil && m.re.MatchString(topic))
}

// candidates are the topics the sink reads: its list, and the cluster's
// topics its pattern matches.
func (m topicMatcher) candidates(cluster []string) []string {
	out := slices.Clone(m.list)
	if m.re != nil {
		for _, t := range cluster {
			if m.re.MatchString(t) && !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

// clusterTopicsIfNeeded lists the cluster's topics when a sink reads by
// pattern (nil otherwise, or when the cluster does not answer: such a
// sink then shows only where a source feeds it).
func (s *Server) clusterTopicsIfNeeded(ctx context.Context, sinks []*sinkPlan) []string {
	if !slices.ContainsFunc(sinks, func(k *sinkPlan) bool { return k.match.re != nil }) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, clusterWait)
	defer cancel()
	td, err := s.adm.ListTopics(ctx)
	if err != nil {
		s.log.Debug("pipelines: listing topics for topics.regex sinks", "err", err)
		return nil
	}
	return td.Names()
}

// postgresHop is the replication slot of a postgres-cdc source. An
// unreachable database gives null lags and says why; it never fails the
// view.
func (s *Server) postgresHop(ctx context.Context, c *connectorView) hop {
	h := hop{Kind: hopPostgres, Name: strings.TrimSpace(c.config["database.hostname"])}
	ps, err := pgSettingsOf(c.config)
	if err != nil {
		h.Detail = err.Error()
		return h
	}
	h.Name = ps.name()
	lag, err := querySlotLag(ctx, ps)
	if err != nil {
		h.Detail = err.Error()
		return h
	}
	h.LagBytes = lag.bytes
	reader := "not streamed now (no task reads it)"
	if lag.active {
		reader = "streamed by the connector"
	}
	h.Detail = fmt.Sprintf("replication slot %s, %s", lag.slot, reader)
	switch {
	case lag.bytes == nil:
		h.Detail += "; it has confirmed no position yet"
	case *lag.bytes == 0:
		zero := 0.0
		h.LagSeconds = &zero
	default:
		// The oldest change not yet in Kafka is at most as old as the
		// last one the connector committed: its source offset's ts_usec.
		if ts, ok := s.sourceOffsetTime(ctx, c.name); ok {
			sec := max(0, time.Since(ts).Seconds())
			h.LagSeconds = &sec
		} else {
			h.Detail += "; the connector has committed no change yet, so its lag in time is unknown"
		}
	}
	return h
}

// sourceOffsetTime is the latest ts_usec of a source connector's
// committed offsets (Debezium's commit time of the last change it sent).
func (s *Server) sourceOffsetTime(ctx context.Context, name string) (time.Time, bool) {
	offs, err := s.opts.Herder.ConnectorOffsets(ctx, name)
	if err != nil || offs == nil {
		return time.Time{}, false
	}
	var latest int64
	for _, o := range offs.Offsets {
		if v, ok := int64Of(o.Offset["ts_usec"]); ok && v > latest {
			latest = v
		}
	}
	if latest <= 0 {
		return time.Time{}, false
	}
	return time.UnixMicro(latest), true
}

// int64Of reads a JSON-ish number: offsets are int64 in memory, float64
// or json.Number once they went through JSON.
func int64Of(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case float64:
		if math.IsNaN(n) || math.IsInf(n, 0) {
			return 0, false
		}
		return int64(n), true
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	case string:
		i, err := strconv.ParseInt(n, 10, 64)
		return i, err == nil
	}
	return 0, false
}
