package admin

import (
	"context"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// topicSummary is the TopicSummary entity.
type topicSummary struct {
	Name              string `json:"name"`
	TopicID           string `json:"topic_id"`
	Internal          bool   `json:"internal"`
	Partitions        int    `json:"partitions"`
	ReplicationFactor int    `json:"replication_factor"`
	UnderReplicated   int    `json:"under_replicated_partitions"`
	SizeBytes         int64  `json:"size_bytes"`
	Messages          int64  `json:"messages"`
	RetentionMs       string `json:"retention_ms"`
	CleanupPolicy     string `json:"cleanup_policy"`
}

// topicDetail is the TopicDetail entity.
type topicDetail struct {
	topicSummary
	PartitionDetails []partitionDetail `json:"partition_details"`
	Configs          []configEntry     `json:"configs"`
}

type partitionDetail struct {
	Partition       int32   `json:"partition"`
	Leader          int32   `json:"leader"`
	LeaderEpoch     int32   `json:"leader_epoch"`
	Replicas        []int32 `json:"replicas"`
	ISR             []int32 `json:"isr"`
	OfflineReplicas []int32 `json:"offline_replicas"`
	StartOffset     int64   `json:"start_offset"`
	EndOffset       int64   `json:"end_offset"`
	SizeBytes       int64   `json:"size_bytes"`
}

// configEntry is the ConfigEntry entity.
type configEntry struct {
	Name          string  `json:"name"`
	Value         *string `json:"value"`
	Source        string  `json:"source"`
	IsDefault     bool    `json:"is_default"`
	ReadOnly      bool    `json:"read_only"`
	Sensitive     bool    `json:"sensitive"`
	Documentation *string `json:"documentation,omitempty"`
}

func (s *Server) listTopics(w http.ResponseWriter, r *http.Request) {
	internal := false
	if v := r.URL.Query().Get("internal"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			writeError(w, http.StatusBadRequest, "internal must be true or false, not "+strconv.Quote(v))
			return
		}
		internal = b
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	mctx, mcancel := metadataCtx(ctx)
	defer mcancel()
	var tds kadm.TopicDetails
	var err error
	if internal {
		tds, err = s.adm.ListTopicsWithInternal(mctx)
	} else {
		tds, err = s.adm.ListTopics(mctx)
	}
	if err != nil {
		fail(w, kafkaError(err, ""))
		return
	}
	details := s.describeTopics(ctx, tds)
	out := make([]topicSummary, 0, len(details))
	for _, d := range details {
		out = append(out, d.topicSummary)
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) getTopic(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	d, err := s.topicDetail(ctx, chi.URLParam(r, "topic"))
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

// topicDetail describes one topic with its partitions and configs (404
// when it does not exist).
func (s *Server) topicDetail(ctx context.Context, name string) (*topicDetail, error) {
	td, err := s.topicMetadata(ctx, name)
	if err != nil {
		return nil, err
	}
	d := s.describeTopics(ctx, kadm.TopicDetails{name: td})[0]
	d.Configs, err = s.topicConfigs(ctx, name)
	if err != nil {
		return nil, err
	}
	return &d, nil
}

// topicMetadata is one topic's metadata, 404 when it does not exist.
func (s *Server) topicMetadata(ctx context.Context, name string) (kadm.TopicDetail, error) {
	mctx, mcancel := metadataCtx(ctx)
	defer mcancel()
	md, err := s.adm.Metadata(mctx, name)
	if err != nil {
		return kadm.TopicDetail{}, kafkaError(err, "")
	}
	td, ok := md.Topics[name]
	if !ok {
		return kadm.TopicDetail{}, kafkaError(kerr.UnknownTopicOrPartition, "Topic '"+name+"' does not exist.")
	}
	if td.Err != nil {
		if td.Err == kerr.UnknownTopicOrPartition {
			return kadm.TopicDetail{}, kafkaError(td.Err, "Topic '"+name+"' does not exist.")
		}
		return kadm.TopicDetail{}, kafkaError(td.Err, "")
	}
	return td, nil
}

// describeTopics adds offsets, sizes and the retention and cleanup
// configs to topics' metadata, sorted by name. What the cluster cannot
// tell is left unknown (-1, "") rather than failing the listing: a
// topic list should still show when one broker does not answer.
func (s *Server) describeTopics(ctx context.Context, tds kadm.TopicDetails) []topicDetail {
	names := make([]string, 0, len(tds))
	for n, td := range tds {
		if td.Err == nil {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	out := make([]topicDetail, 0, len(names))
	if len(names) == 0 {
		return out // kadm lists every topic when given none
	}
	starts, err := s.adm.ListStartOffsets(ctx, names...)
	if err != nil {
		s.log.Debug("list start offsets", "error", err)
	}
	ends, err := s.adm.ListEndOffsets(ctx, names...)
	if err != nil {
		s.log.Debug("list end offsets", "error", err)
	}
	set := make(kadm.TopicsSet)
	for _, n := range names {
		set.Add(n, tds[n].Partitions.Numbers()...)
	}
	dirs, dirsErr := s.adm.DescribeAllLogDirs(ctx, set)
	if dirsErr != nil {
		s.log.Debug("describe log dirs", "error", dirsErr)
	}
	configs, err := s.adm.DescribeTopicConfigs(ctx, names...)
	if err != nil {
		s.log.Debug("describe topic configs", "error", err)
	}

	for _, n := range names {
		td := tds[n]
		d := topicDetail{topicSummary: topicSummary{
			Name: n, TopicID: topicID(td.ID), Internal: td.IsInternal,
			Partitions: len(td.Partitions), ReplicationFactor: td.Partitions.NumReplicas(),
		}, PartitionDetails: []partitionDetail{}, Configs: []configEntry{}}
		for _, p := range td.Partitions.Sorted() {
			pd := partitionDetail{
				Partition: p.Partition, Leader: p.Leader, LeaderEpoch: p.LeaderEpoch,
				Replicas: nonNil(p.Replicas), ISR: nonNil(p.ISR), OfflineReplicas: nonNil(p.OfflineReplicas),
				StartOffset: -1, EndOffset: -1, SizeBytes: -1,
			}
			if len(p.ISR) < len(p.Replicas) {
				d.UnderReplicated++
			}
			if o, ok := starts.Lookup(n, p.Partition); ok && o.Err == nil {
				pd.StartOffset = o.Offset
			}
			if o, ok := ends.Lookup(n, p.Partition); ok && o.Err == nil {
				pd.EndOffset = o.Offset
			}
			// A partition's size is its leader's replica's: the
			// followers hold copies of the same records.
			if bd, ok := dirs[p.Leader]; ok {
				if lp, ok := bd.LookupPartition(n, p.Partition); ok {
					pd.SizeBytes = lp.Size
				}
			}
			d.PartitionDetails = append(d.PartitionDetails, pd)
		}
		d.Messages, d.SizeBytes = 0, 0
		for _, pd := range d.PartitionDetails {
			if pd.StartOffset < 0 || pd.EndOffset < 0 {
				d.Messages = -1
			} else if d.Messages >= 0 {
				d.Messages += pd.EndOffset - pd.StartOffset
			}
			if pd.SizeBytes < 0 {
				d.SizeBytes = -1
			} else if d.SizeBytes >= 0 {
				d.SizeBytes += pd.SizeBytes
			}
		}
		if rc, err := configs.On(n, nil); err == nil && rc.Err == nil {
			for _, c := range rc.Configs {
				switch c.Key {
				case "retention.ms":
					d.RetentionMs = c.MaybeValue()
				case "cleanup.policy":
					d.CleanupPolicy = c.MaybeValue()
				}
			}
		}
		out = append(out, d)
	}
	return out
}

func nonNil(s []int32) []int32 {
	if s == nil {
		return []int32{}
	}
	return s
}

func (s *Server) getTopicConfigs(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	if err := s.reachable(ctx); err != nil {
		fail(w, err)
		return
	}
	cs, err := s.topicConfigs(ctx, chi.URLParam(r, "topic"))
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, cs)
}

// topicConfigs describes a topic's configs, sorted by name. It sends
// DescribeConfigs itself rather than through kadm.DescribeTopicConfigs:
// kadm neither asks for the documentation nor keeps the read-only flag.
func (s *Server) topicConfigs(ctx context.Context, topic string) ([]configEntry, error) {
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.IncludeDocumentation = true
	rr := kmsg.NewDescribeConfigsRequestResource()
	rr.ResourceType = kmsg.ConfigResourceTypeTopic
	rr.ResourceName = topic
	req.Resources = append(req.Resources, rr)
	resp, err := req.RequestWith(ctx, s.client)
	if err != nil {
		return nil, kafkaError(err, "")
	}
	if len(resp.Resources) != 1 {
		return nil, errorf(http.StatusBadGateway, "DescribeConfigs for topic '%s' answered %d resources instead of 1", topic, len(resp.Resources))
	}
	res := resp.Resources[0]
	if err := kerr.ErrorForCode(res.ErrorCode); err != nil {
		msg := deref(res.ErrorMessage)
		if err == kerr.UnknownTopicOrPartition && msg == "" {
			msg = "Topic '" + topic + "' does not exist."
		}
		return nil, kafkaError(err, msg)
	}
	out := make([]configEntry, 0, len(res.Configs))
	for _, c := range res.Configs {
		e := configEntry{
			Name: c.Name, Value: c.Value, Source: c.Source.String(),
			IsDefault: c.Source == kmsg.ConfigSourceDefaultConfig, ReadOnly: c.ReadOnly, Sensitive: c.IsSensitive,
			Documentation: c.Documentation,
		}
		if c.IsSensitive {
			e.Value = nil
		}
		if e.Documentation != nil && *e.Documentation == "" {
			e.Documentation = nil
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// createTopicRequest is POST /topics's body.
type createTopicRequest struct {
	Name              string            `json:"name"`
	Partitions        *int32            `json:"partitions"`
	ReplicationFactor *int16            `json:"replication_factor"`
	Configs           map[string]string `json:"configs"`
	ValidateOnly      bool              `json:"validate_only"`
}

// validatedTopic answers a validate_only creation.
type validatedTopic struct {
	Name              string `json:"name"`
	Partitions        int32  `json:"partitions"`
	ReplicationFactor int16  `json:"replication_factor"`
	ValidateOnly      bool   `json:"validate_only"`
}

func (s *Server) createTopic(w http.ResponseWriter, r *http.Request) {
	var req createTopicRequest
	if err := decodeBody(r, &req); err != nil {
		fail(w, err)
		return
	}
	if req.Name == "" {
		writeError(w, http.StatusBadRequest, "name is required: the topic's name")
		return
	}
	partitions, rf := int32(-1), int16(-1) // the broker's num.partitions and default.replication.factor
	if req.Partitions != nil {
		partitions = *req.Partitions
	}
	if req.ReplicationFactor != nil {
		rf = *req.ReplicationFactor
	}
	configs := make(map[string]*string, len(req.Configs))
	for k, v := range req.Configs {
		configs[k] = kadm.StringPtr(v)
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	if err := s.reachable(ctx); err != nil {
		fail(w, err)
		return
	}
	create := s.adm.CreateTopics
	if req.ValidateOnly {
		create = s.adm.ValidateCreateTopics
	}
	resps, err := create(ctx, partitions, rf, configs, req.Name)
	if err != nil {
		fail(w, kafkaError(err, ""))
		return
	}
	res, ok := resps[req.Name]
	if !ok {
		writeError(w, http.StatusBadGateway, "CreateTopics did not answer for topic '"+req.Name+"'")
		return
	}
	if res.Err != nil {
		fail(w, kafkaError(res.Err, res.ErrMessage))
		return
	}
	if req.ValidateOnly {
		writeJSON(w, http.StatusOK, validatedTopic{Name: req.Name, Partitions: res.NumPartitions, ReplicationFactor: res.ReplicationFactor, ValidateOnly: true})
		return
	}
	d, err := s.awaitTopic(ctx, req.Name, func(d *topicDetail) bool {
		return res.NumPartitions <= 0 || int32(d.Partitions) >= res.NumPartitions
	})
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, d)
}

// awaitTopic describes a topic once its metadata shows a change just
// made (created, partitions added) with a leader for every partition:
// the controller has taken it, but the brokers' metadata follows a
// moment later. After a few seconds it answers what it sees.
func (s *Server) awaitTopic(ctx context.Context, name string, done func(*topicDetail) bool) (*topicDetail, error) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		d, err := s.topicDetail(ctx, name)
		ready := err == nil && done(d)
		if ready {
			for _, p := range d.PartitionDetails {
				ready = ready && p.Leader >= 0
			}
		}
		if ready || time.Now().After(deadline) {
			return d, err
		}
		select {
		case <-ctx.Done():
			return d, err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (s *Server) deleteTopic(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "topic")
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	if err := s.reachable(ctx); err != nil {
		fail(w, err)
		return
	}
	resps, err := s.adm.DeleteTopics(ctx, name)
	if err != nil {
		fail(w, kafkaError(err, ""))
		return
	}
	res, err := resps.On(name, nil)
	if err == nil {
		err = res.Err
	}
	if err != nil {
		msg := res.ErrMessage
		if err == kerr.UnknownTopicOrPartition && msg == "" {
			msg = "Topic '" + name + "' does not exist."
		}
		fail(w, kafkaError(err, msg))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// alterConfigsRequest is PATCH /topics/{topic}/configs's body.
type alterConfigsRequest struct {
	Set          map[string]string `json:"set"`
	Delete       []string          `json:"delete"`
	ValidateOnly bool              `json:"validate_only"`
}

func (s *Server) alterTopicConfigs(w http.ResponseWriter, r *http.Request) {
	topic := chi.URLParam(r, "topic")
	var req alterConfigsRequest
	if err := decodeBody(r, &req); err != nil {
		fail(w, err)
		return
	}
	if len(req.Set) == 0 && len(req.Delete) == 0 {
		writeError(w, http.StatusBadRequest, `nothing to change: give "set" {name: value} and/or "delete" [names] (deleting a config returns it to its default)`)
		return
	}
	var alters []kadm.AlterConfig
	for _, k := range sortedKeys(req.Set) {
		alters = append(alters, kadm.AlterConfig{Op: kadm.SetConfig, Name: k, Value: kadm.StringPtr(req.Set[k])})
	}
	for _, k := range req.Delete {
		if _, both := req.Set[k]; both {
			writeError(w, http.StatusBadRequest, "config "+k+" is both in set and in delete: choose one")
			return
		}
		alters = append(alters, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: k})
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	if err := s.reachable(ctx); err != nil {
		fail(w, err)
		return
	}
	// IncrementalAlterConfigs: only the named configs change (the older
	// AlterConfigs would reset every config not given).
	alter := s.adm.AlterTopicConfigs
	if req.ValidateOnly {
		alter = s.adm.ValidateAlterTopicConfigs
	}
	resps, err := alter(ctx, alters, topic)
	if err != nil {
		fail(w, kafkaError(err, ""))
		return
	}
	res, err := resps.On(topic, nil)
	if err == nil {
		err = res.Err
	}
	if err != nil {
		msg := res.ErrMessage
		if err == kerr.UnknownTopicOrPartition && msg == "" {
			msg = "Topic '" + topic + "' does not exist."
		}
		fail(w, kafkaError(err, msg))
		return
	}
	cs, err := s.topicConfigs(ctx, topic)
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, cs)
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// addPartitionsRequest is POST /topics/{topic}/partitions's body: count
// is the topic's new total, as kafka-topics --alter --partitions takes.
type addPartitionsRequest struct {
	Count *int `json:"count"`
}

func (s *Server) addPartitions(w http.ResponseWriter, r *http.Request) {
	topic := chi.URLParam(r, "topic")
	var req addPartitionsRequest
	if err := decodeBody(r, &req); err != nil {
		fail(w, err)
		return
	}
	if req.Count == nil {
		writeError(w, http.StatusBadRequest, "count is required: the topic's new number of partitions (more than it has)")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	if err := s.reachable(ctx); err != nil {
		fail(w, err)
		return
	}
	resps, err := s.adm.UpdatePartitions(ctx, *req.Count, topic)
	if err != nil {
		fail(w, kafkaError(err, ""))
		return
	}
	res, ok := resps[topic]
	if !ok {
		writeError(w, http.StatusBadGateway, "CreatePartitions did not answer for topic '"+topic+"'")
		return
	}
	if res.Err != nil {
		msg := res.ErrMessage
		if res.Err == kerr.UnknownTopicOrPartition && msg == "" {
			msg = "Topic '" + topic + "' does not exist."
		}
		fail(w, kafkaError(res.Err, msg))
		return
	}
	d, err := s.awaitTopic(ctx, topic, func(d *topicDetail) bool { return d.Partitions >= *req.Count })
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}
