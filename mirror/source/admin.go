package source

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/connect"
)

// admin is the connector's view of one cluster: the few admin requests
// MirrorSourceConnector makes, issued directly so that each topic gets
// its own configs and partition count in one request, and so that
// DescribeConfigs' read-only flag (which kadm drops) is kept.
type admin struct {
	alias string
	cl    *kgo.Client
}

// topicPartitions lists the cluster's topics that are not internal to
// Kafka, with their partitions, from fresh metadata. Topics whose
// metadata has an error (one being deleted, say) are left out until the
// next listing; one whose leaders are still being elected (just created)
// is listed with the partitions it has.
func (a *admin) topicPartitions(ctx context.Context) ([]connect.TopicPartition, error) {
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = nil // all topics
	resp, err := req.RequestWith(ctx, a.cl)
	if err != nil {
		return nil, fmt.Errorf("list topics on %s cluster: %w", a.alias, err)
	}
	var out []connect.TopicPartition
	for _, t := range resp.Topics {
		if t.Topic == nil || t.IsInternal || (t.ErrorCode != 0 && t.ErrorCode != kerr.LeaderNotAvailable.Code) {
			continue
		}
		for _, p := range t.Partitions {
			out = append(out, connect.TopicPartition{Topic: *t.Topic, Partition: p.Partition})
		}
	}
	sortTopicPartitions(out)
	return out, nil
}

// configEntry is one topic config as DescribeConfigs reports it
// (Kafka's ConfigEntry).
type configEntry struct {
	name      string
	value     *string
	readOnly  bool
	sensitive bool
	source    kmsg.ConfigSource
}

// isDefault is ConfigEntry.isDefault: the value is the broker's built-in
// default.
func (e configEntry) isDefault() bool { return e.source == kmsg.ConfigSourceDefaultConfig }

// topicConfigs describes the topics' configs; a topic that cannot be
// described (deleted meanwhile) is missing from the result.
func (a *admin) topicConfigs(ctx context.Context, topics []string) (map[string][]configEntry, error) {
	out := map[string][]configEntry{}
	if len(topics) == 0 {
		return out, nil
	}
	req := kmsg.NewPtrDescribeConfigsRequest()
	for _, t := range topics {
		r := kmsg.NewDescribeConfigsRequestResource()
		r.ResourceType = kmsg.ConfigResourceTypeTopic
		r.ResourceName = t
		req.Resources = append(req.Resources, r)
	}
	resp, err := req.RequestWith(ctx, a.cl)
	if err != nil {
		return nil, fmt.Errorf("describe configs for topics %v on %s cluster: %w", topics, a.alias, err)
	}
	for _, r := range resp.Resources {
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			if !errors.Is(err, kerr.UnknownTopicOrPartition) {
				return nil, fmt.Errorf("describe configs for topic %s on %s cluster: %w", r.ResourceName, a.alias, err)
			}
			continue
		}
		entries := make([]configEntry, 0, len(r.Configs))
		for _, c := range r.Configs {
			src := c.Source
			if src < 0 && c.IsDefault { // DescribeConfigs v0
				src = kmsg.ConfigSourceDefaultConfig
			}
			entries = append(entries, configEntry{name: c.Name, value: c.Value, readOnly: c.ReadOnly, sensitive: c.IsSensitive, source: src})
		}
		out[r.ResourceName] = entries
	}
	return out, nil
}

// newTopic is a topic to create.
type newTopic struct {
	name       string
	partitions int32
	rf         int16
	configs    map[string]string
}

// createTopics creates the topics and returns each one's error (nil when
// created or already there).
func (a *admin) createTopics(ctx context.Context, topics []newTopic) (map[string]error, error) {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = timeoutMillis(ctx)
	for _, t := range topics {
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = t.name, t.partitions, t.rf
		for _, k := range sortedKeys(t.configs) {
			c := kmsg.NewCreateTopicsRequestTopicConfig()
			c.Name, c.Value = k, kmsg.StringPtr(t.configs[k])
			rt.Configs = append(rt.Configs, c)
		}
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, a.cl)
	if err != nil {
		return nil, fmt.Errorf("create topics on %s cluster: %w", a.alias, err)
	}
	out := map[string]error{}
	for _, t := range resp.Topics {
		out[t.Topic] = withMessage(kerr.ErrorForCode(t.ErrorCode), derefString(t.ErrorMessage))
		if errors.Is(out[t.Topic], kerr.TopicAlreadyExists) {
			out[t.Topic] = nil
		}
	}
	return out, nil
}

// awaitTopics waits until the cluster's metadata shows each topic with
// at least its partition count, every partition with a leader, checking
// every 5 ms and backing off to 100 ms, for at most wait: a topic just
// created may be missing from a broker's metadata for a moment, and a
// producer that asks then backs off for 250 ms before asking again. It
// returns the topics that did not show in time (not an error: the
// producer copes with them, only later).
func (a *admin) awaitTopics(ctx context.Context, counts map[string]int32, wait time.Duration) []string {
	deadline := time.Now().Add(wait)
	backoff := 5 * time.Millisecond
	missing := sortedKeys(counts)
	for len(missing) > 0 {
		req := kmsg.NewPtrMetadataRequest()
		for _, t := range missing {
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(t)
			req.Topics = append(req.Topics, rt)
		}
		if resp, err := req.RequestWith(ctx, a.cl); err == nil {
			ready := map[string]bool{}
			for _, t := range resp.Topics {
				if t.Topic == nil || t.ErrorCode != 0 || int32(len(t.Partitions)) < counts[*t.Topic] {
					continue
				}
				led := true
				for _, p := range t.Partitions {
					led = led && p.ErrorCode == 0 && p.Leader >= 0
				}
				ready[*t.Topic] = led
			}
			missing = slices.DeleteFunc(missing, func(t string) bool { return ready[t] })
		}
		if len(missing) == 0 || time.Until(deadline) <= 0 {
			break
		}
		select {
		case <-ctx.Done():
			return missing
		case <-time.After(min(backoff, time.Until(deadline))):
		}
		backoff = min(2*backoff, 100*time.Millisecond)
	}
	return missing
}

// increasePartitions raises each topic's partition count to the number
// given and returns each one's error.
func (a *admin) increasePartitions(ctx context.Context, counts map[string]int32) (map[string]error, error) {
	req := kmsg.NewPtrCreatePartitionsRequest()
	req.TimeoutMillis = timeoutMillis(ctx)
	for _, t := range sortedKeys(counts) {
		rt := kmsg.NewCreatePartitionsRequestTopic()
		rt.Topic, rt.Count = t, counts[t]
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, a.cl)
	if err != nil {
		return nil, fmt.Errorf("create partitions on %s cluster: %w", a.alias, err)
	}
	out := map[string]error{}
	for _, t := range resp.Topics {
		out[t.Topic] = withMessage(kerr.ErrorForCode(t.ErrorCode), derefString(t.ErrorMessage))
	}
	return out, nil
}

// alterOp is one incremental config change.
type alterOp struct {
	name   string
	value  string
	delete bool
}

// incrementalAlterConfigs applies each topic's changes and returns each
// one's error.
func (a *admin) incrementalAlterConfigs(ctx context.Context, changes map[string][]alterOp) (map[string]error, error) {
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	for _, t := range sortedKeys(changes) {
		r := kmsg.NewIncrementalAlterConfigsRequestResource()
		r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeTopic, t
		for _, op := range changes[t] {
			c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
			c.Name = op.name
			if op.delete {
				c.Op = kmsg.IncrementalAlterConfigOpDelete
			} else {
				c.Op, c.Value = kmsg.IncrementalAlterConfigOpSet, kmsg.StringPtr(op.value)
			}
			r.Configs = append(r.Configs, c)
		}
		req.Resources = append(req.Resources, r)
	}
	resp, err := req.RequestWith(ctx, a.cl)
	if err != nil {
		return nil, fmt.Errorf("incremental alter topic configs on %s cluster: %w", a.alias, err)
	}
	out := map[string]error{}
	for _, r := range resp.Resources {
		out[r.ResourceName] = withMessage(kerr.ErrorForCode(r.ErrorCode), derefString(r.ErrorMessage))
	}
	return out, nil
}

// createCompactedTopic is MirrorUtils.createSinglePartitionCompactedTopic:
// an existing topic is fine.
func (a *admin) createCompactedTopic(ctx context.Context, name string, rf int16) error {
	errs, err := a.createTopics(ctx, []newTopic{{name: name, partitions: 1, rf: rf, configs: map[string]string{"cleanup.policy": "compact"}}})
	if err != nil {
		return fmt.Errorf("Error while attempting to create/find topic '%s': %w", name, err)
	}
	if err := errs[name]; err != nil {
		return fmt.Errorf("Unable to create topic '%s': %w", name, err)
	}
	return nil
}

// timeoutMillis is the broker-side timeout of a request: what is left of
// ctx, as Kafka's admin client sends its own timeout.
func timeoutMillis(ctx context.Context) int32 {
	if dl, ok := ctx.Deadline(); ok {
		if ms := time.Until(dl).Milliseconds(); ms > 0 {
			return int32(min(ms, 1<<31-1))
		}
	}
	return 60000
}

func withMessage(err error, msg string) error {
	if err == nil || msg == "" {
		return err
	}
	return fmt.Errorf("%w: %s", err, msg)
}

func derefString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
