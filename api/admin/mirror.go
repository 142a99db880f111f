package admin

import (
	"context"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"
)

// GET /api/v1/mirror: the MirrorMaker 2 connectors of this Connect
// worker (Apache Kafka's class names or Fjord's aliases) as flows from a
// source cluster alias to a target one, with their tasks, the topics
// they write and, for MirrorSourceConnector flows, the replication
// latency and record count of the mirror source metrics this process
// registers (fjord_mirror_source_*, labelled by source and target alias,
// remote topic and partition).

type mirrorResponse struct {
	Available bool         `json:"available"`
	Flows     []mirrorFlow `json:"flows"`
	Detail    string       `json:"detail,omitempty"`
}

type mirrorFlow struct {
	Connector     string       `json:"connector"`
	Class         string       `json:"class"`
	SourceCluster string       `json:"source_cluster"`
	TargetCluster string       `json:"target_cluster"`
	State         *string      `json:"state"`
	Tasks         []mirrorTask `json:"tasks"`
	Topics        []string     `json:"topics"`
	// ReplicationLatencyMs is the slowest partition's average latency in
	// MM2's metric window (its last value once the window is idle).
	ReplicationLatencyMs *float64 `json:"replication_latency_ms"`
	// Records counts the records replicated since this process started.
	Records *int64 `json:"records"`
}

type mirrorTask struct {
	ID       int    `json:"id"`
	State    string `json:"state"`
	WorkerID string `json:"worker_id"`
}

func (s *Server) getMirror(w http.ResponseWriter, r *http.Request) {
	if s.opts.Herder == nil {
		writeJSON(w, http.StatusOK, mirrorResponse{Flows: []mirrorFlow{},
			Detail: "No Connect worker runs in this process: mirror flows are shown by the admin API of the worker running them (fjord mirror, fjord connect, fjord dev)."})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 15*time.Second)
	defer cancel()
	conns, err := s.loadConnectors(ctx)
	if err != nil {
		fail(w, err)
		return
	}
	var mirrors []*connectorView
	for _, c := range conns {
		if isMirrorClass(c.class) {
			mirrors = append(mirrors, c)
		}
	}
	samples := s.mirrorSamples()
	flows := make([]mirrorFlow, len(mirrors))
	runBounded(len(mirrors), herderConcurrency, func(i int) {
		flows[i] = s.mirrorFlow(ctx, mirrors[i], samples)
	})
	writeJSON(w, http.StatusOK, mirrorResponse{Available: true, Flows: flows})
}

func (s *Server) mirrorFlow(ctx context.Context, c *connectorView, samples []mirrorSample) mirrorFlow {
	f := mirrorFlow{
		Connector: c.name, Class: c.class,
		SourceCluster: strings.TrimSpace(c.config["source.cluster.alias"]),
		TargetCluster: strings.TrimSpace(c.config["target.cluster.alias"]),
		State:         c.state(), Tasks: []mirrorTask{}, Topics: []string{},
	}
	if f.TargetCluster == "" {
		f.TargetCluster = "target" // MirrorConnectorConfig's default
	}
	if c.status != nil {
		for _, t := range c.status.Tasks {
			f.Tasks = append(f.Tasks, mirrorTask{ID: t.ID, State: string(t.State), WorkerID: t.WorkerID})
		}
	}
	if ts, err := s.opts.Herder.ConnectorActiveTopics(ctx, c.name); err == nil {
		f.Topics = slices.Sorted(slices.Values(ts))
	}
	if c.class == mirrorSourceClass {
		f.ReplicationLatencyMs, f.Records = flowMetrics(samples, f.SourceCluster, f.TargetCluster, f.Topics)
	}
	return f
}

// mirrorSample is one remote partition's mirror source metrics.
type mirrorSample struct {
	source, target, topic string
	records               float64
	latencyAvg, latency   float64 // NaN when not recorded
}

// Metric names of mirror/source's collector.
const (
	metricMirrorRecords    = "fjord_mirror_source_record_count"
	metricMirrorLatency    = "fjord_mirror_source_replication_latency_ms"
	metricMirrorLatencyAvg = "fjord_mirror_source_replication_latency_ms_avg"
)

// mirrorSamples gathers the mirror source metrics from the Gatherer (none
// when there is no Gatherer or the process runs no mirror source).
func (s *Server) mirrorSamples() []mirrorSample {
	if s.opts.Gatherer == nil {
		return nil
	}
	families, err := s.opts.Gatherer.Gather()
	if err != nil && len(families) == 0 {
		s.log.Debug("mirror: gathering metrics", "err", err)
		return nil
	}
	type key struct{ source, target, topic, partition string }
	byKey := map[key]*mirrorSample{}
	for _, mf := range families {
		name := mf.GetName()
		if name != metricMirrorRecords && name != metricMirrorLatency && name != metricMirrorLatencyAvg {
			continue
		}
		for _, m := range mf.GetMetric() {
			var k key
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "source":
					k.source = l.GetValue()
				case "target":
					k.target = l.GetValue()
				case "topic":
					k.topic = l.GetValue()
				case "partition":
					k.partition = l.GetValue()
				}
			}
			sm := byKey[k]
			if sm == nil {
				sm = &mirrorSample{source: k.source, target: k.target, topic: k.topic, latencyAvg: math.NaN(), latency: math.NaN()}
				byKey[k] = sm
			}
			switch name {
			case metricMirrorRecords:
				sm.records = m.GetCounter().GetValue()
			case metricMirrorLatency:
				sm.latency = m.GetGauge().GetValue()
			case metricMirrorLatencyAvg:
				sm.latencyAvg = m.GetGauge().GetValue()
			}
		}
	}
	out := make([]mirrorSample, 0, len(byKey))
	for _, sm := range byKey {
		out = append(out, *sm)
	}
	return out
}

// flowMetrics sums a flow's records and takes its slowest partition's
// latency: the samples of its source → target aliases, narrowed to the
// topics the connector wrote when they are known (two connectors of one
// alias pair then keep apart). Nulls when no sample matches.
func flowMetrics(samples []mirrorSample, source, target string, topics []string) (*float64, *int64) {
	var records float64
	avg, last := math.NaN(), math.NaN()
	found := false
	for _, sm := range samples {
		if sm.source != source || sm.target != target || (len(topics) > 0 && !slices.Contains(topics, sm.topic)) {
			continue
		}
		found = true
		records += sm.records
		if !math.IsNaN(sm.latencyAvg) && (math.IsNaN(avg) || sm.latencyAvg > avg) {
			avg = sm.latencyAvg
		}
		if !math.IsNaN(sm.latency) && (math.IsNaN(last) || sm.latency > last) {
			last = sm.latency
		}
	}
	if !found {
		return nil, nil
	}
	n := int64(records)
	lat := avg
	if math.IsNaN(lat) {
		lat = last
	}
	if math.IsNaN(lat) || math.IsInf(lat, 0) {
		return nil, &n
	}
	return &lat, &n
}
