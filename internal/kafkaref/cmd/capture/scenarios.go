package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Topic names the golden files refer to.
const (
	topicDefault    = "golden-default"
	topicOverrides  = "golden-overrides"
	topicCollide    = "golden.collide"
	topicPrecedence = "golden-precedence"
	topicPlain      = "golden-plain"
)

// overrides is the config set of golden-overrides: one key of every type
// and every validator kind the broker/config spec table has.
var overrides = map[string]string{
	"cleanup.policy":            "compact,delete",
	"compression.type":          "zstd",
	"compression.zstd.level":    "5",
	"delete.retention.ms":       "3600000",
	"max.message.bytes":         "2000000",
	"message.timestamp.type":    "LogAppendTime",
	"min.cleanable.dirty.ratio": "0.25",
	"min.compaction.lag.ms":     "1000",
	"preallocate":               "true",
	"retention.bytes":           "1073741824",
	"retention.ms":              "3600000",
	"segment.bytes":             "1048576",
	"segment.ms":                "600000",
}

var scenarios = []scenario{
	{name: "defaults", steps: defaultsSteps},
	{
		// A broker with static settings, dynamic cluster defaults and
		// dynamic per-broker settings, to show every config source and the
		// order of synonyms (log.retention.minutes beats log.retention.hours).
		name: "precedence",
		props: []string{
			"log.retention.hours=72",
			"log.retention.minutes=600",
			"log.roll.hours=48",
			"log.segment.bytes=536870912",
			"message.max.bytes=2000000",
			"log.cleaner.threads=2",
			"num.partitions=3",
			"compression.type=lz4",
			"auto.create.topics.enable=false",
		},
		steps: precedenceSteps,
	},
}

func str(s string) *string { return &s }

func createTopic(name string, partitions int32, rf int16, configs map[string]string) kmsg.CreateTopicsRequestTopic {
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic = name
	t.NumPartitions = partitions
	t.ReplicationFactor = rf
	for _, k := range sortedKeys(configs) {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name = k
		c.Value = str(configs[k])
		t.Configs = append(t.Configs, c)
	}
	return t
}

func createReq(validateOnly bool, topics ...kmsg.CreateTopicsRequestTopic) *kmsg.CreateTopicsRequest {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 30000
	req.ValidateOnly = validateOnly
	req.Topics = topics
	return req
}

func describeReq(typ kmsg.ConfigResourceType, name string, names []string, synonyms, docs bool) *kmsg.DescribeConfigsRequest {
	req := kmsg.NewPtrDescribeConfigsRequest()
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType = typ
	r.ResourceName = name
	r.ConfigNames = names
	req.Resources = append(req.Resources, r)
	req.IncludeSynonyms = synonyms
	req.IncludeDocumentation = docs
	return req
}

func incAlterResource(typ kmsg.ConfigResourceType, name string, set map[string]string) kmsg.IncrementalAlterConfigsRequestResource {
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType = typ
	r.ResourceName = name
	for _, k := range sortedKeys(set) {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name = k
		c.Op = kmsg.IncrementalAlterConfigOpSet
		c.Value = str(set[k])
		r.Configs = append(r.Configs, c)
	}
	return r
}

func incAlterOp(typ kmsg.ConfigResourceType, name, key string, op kmsg.IncrementalAlterConfigOp, value *string) kmsg.IncrementalAlterConfigsRequestResource {
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType = typ
	r.ResourceName = name
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name = key
	c.Op = op
	c.Value = value
	r.Configs = append(r.Configs, c)
	return r
}

func alterResource(typ kmsg.ConfigResourceType, name string, set map[string]string) kmsg.AlterConfigsRequestResource {
	r := kmsg.NewAlterConfigsRequestResource()
	r.ResourceType = typ
	r.ResourceName = name
	for _, k := range sortedKeys(set) {
		c := kmsg.NewAlterConfigsRequestResourceConfig()
		c.Name = k
		c.Value = str(set[k])
		r.Configs = append(r.Configs, c)
	}
	return r
}

func metadataReq(autoCreate bool, topics ...string) *kmsg.MetadataRequest {
	req := kmsg.NewPtrMetadataRequest()
	req.AllowAutoTopicCreation = autoCreate
	for _, name := range topics {
		t := kmsg.NewMetadataRequestTopic()
		t.Topic = str(name)
		req.Topics = append(req.Topics, t)
	}
	return req
}

// step is one capture; steps run in order and stop at the first error.
type step struct {
	name, note string
	req        kmsg.Request
	version    int16
}

func (s *session) steps(steps ...step) error {
	for _, st := range steps {
		if _, err := s.capture(st.name, st.note, st.req, st.version); err != nil {
			return err
		}
	}
	return nil
}

func defaultsSteps(s *session) error {
	av := func() *kmsg.ApiVersionsRequest {
		r := kmsg.NewPtrApiVersionsRequest()
		r.ClientSoftwareName = "fjord-kafkaref"
		r.ClientSoftwareVersion = "1"
		return r
	}
	if err := s.steps(
		step{"api_versions", "ApiVersions at the highest version both sides know: every API key with min/max version", av(), -1},
		step{"api_versions_v0", "ApiVersions v0 (no client software fields, no tagged fields)", kmsg.NewPtrApiVersionsRequest(), 0},
		step{"api_versions_v3", "ApiVersions v3 (flexible; what librdkafka and the Java client send first)", av(), 3},
		step{"create_topics_ok", "CreateTopics: a default topic, one with overrides (the response lists all configs), one with broker-default partitions/replication (-1), one with a period for the collision test",
			createReq(false,
				createTopic(topicDefault, 1, 1, nil),
				createTopic(topicOverrides, 3, 1, overrides),
				createTopic("golden-broker-defaults", -1, -1, nil),
				createTopic(topicCollide, 1, 1, nil),
			), -1},
	); err != nil {
		return err
	}
	for _, t := range []string{topicDefault, topicOverrides, "golden-broker-defaults", topicCollide} {
		if err := s.waitTopic(t); err != nil {
			return err
		}
	}
	long := strings.Repeat("a", 250)
	if err := s.steps(
		step{"create_topics_errors", "CreateTopics: invalid config names and values (each topic its own error), bad replication factor and partition counts, an existing topic, invalid and colliding names",
			createReq(false,
				createTopic("bad-config-name", 1, 1, map[string]string{"no.such.config": "1"}),
				createTopic("bad-config-value", 1, 1, map[string]string{"retention.ms": "abc"}),
				createTopic("bad-cleanup-policy", 1, 1, map[string]string{"cleanup.policy": "bogus"}),
				createTopic("bad-compression", 1, 1, map[string]string{"compression.type": "brotli"}),
				createTopic("bad-timestamp-type", 1, 1, map[string]string{"message.timestamp.type": "Now"}),
				createTopic("bad-segment-bytes", 1, 1, map[string]string{"segment.bytes": "10"}),
				createTopic("bad-min-isr", 1, 1, map[string]string{"min.insync.replicas": "0"}),
				createTopic("bad-boolean", 1, 1, map[string]string{"preallocate": "yes"}),
				createTopic("bad-ratio", 1, 1, map[string]string{"min.cleanable.dirty.ratio": "1.5"}),
				createTopic("several-bad", 1, 1, map[string]string{"retention.ms": "abc", "segment.bytes": "10", "nope": "x"}),
				createTopic("bad-rf-three", 1, 3, nil),
				createTopic("bad-rf-zero", 1, 0, nil),
				createTopic("bad-partitions-zero", 0, 1, nil),
				createTopic("bad-partitions-negative", -5, 1, nil),
				createTopic(topicDefault, 1, 1, nil),
				createTopic("", 1, 1, nil),
				createTopic(".", 1, 1, nil),
				createTopic("..", 1, 1, nil),
				createTopic("bad name", 1, 1, nil),
				createTopic("bad/name", 1, 1, nil),
				createTopic("ünïcode", 1, 1, nil),
				createTopic(long, 1, 1, nil),
				createTopic("golden_collide", 1, 1, nil),
			), -1},
		step{"create_topics_duplicate", "CreateTopics naming the same topic twice in one request",
			createReq(false, createTopic("dup-topic", 1, 1, nil), createTopic("dup-topic", 1, 1, nil)), -1},
		step{"create_topics_validate_only", "CreateTopics validate_only: a valid topic (not created) and an invalid config",
			createReq(true,
				createTopic("validate-only-ok", 2, 1, map[string]string{"retention.ms": "1000"}),
				createTopic("validate-only-bad", 1, 1, map[string]string{"retention.ms": "-5"}),
			), -1},
		step{"create_topics_v4", "CreateTopics v4 (pre-flexible: no configs in the response)",
			createReq(false, createTopic("golden-v4", 1, 1, map[string]string{"retention.ms": "1000"}), createTopic("bad-v4", 1, 1, map[string]string{"nope": "1"})), 4},

		step{"describe_configs_topic_default", "DescribeConfigs for a topic without overrides, with synonyms and documentation",
			describeReq(kmsg.ConfigResourceTypeTopic, topicDefault, nil, true, true), -1},
		step{"describe_configs_topic_overrides", "DescribeConfigs for a topic with overrides, with synonyms and documentation",
			describeReq(kmsg.ConfigResourceTypeTopic, topicOverrides, nil, true, true), -1},
		step{"describe_configs_topic_overrides_nosyn", "DescribeConfigs v4 for a topic with overrides, without synonyms or documentation",
			describeReq(kmsg.ConfigResourceTypeTopic, topicOverrides, nil, false, false), -1},
		step{"describe_configs_topic_overrides_v1", "DescribeConfigs v1, the oldest version Kafka 4 serves, with synonyms (no config_type, no documentation)",
			describeReq(kmsg.ConfigResourceTypeTopic, topicOverrides, nil, true, false), 1},
		step{"describe_configs_topic_overrides_v3", "DescribeConfigs v3 with synonyms and documentation (last non-flexible version)",
			describeReq(kmsg.ConfigResourceTypeTopic, topicOverrides, nil, true, true), 3},
		step{"describe_configs_topic_names", "DescribeConfigs asking for named keys, one of which does not exist",
			describeReq(kmsg.ConfigResourceTypeTopic, topicOverrides, []string{"retention.ms", "segment.bytes", "no.such.config"}, true, false), -1},
		step{"describe_configs_topic_unknown", "DescribeConfigs for a topic that does not exist",
			describeReq(kmsg.ConfigResourceTypeTopic, "no-such-topic", nil, false, false), -1},
		step{"describe_configs_broker", "DescribeConfigs for the broker by id, with synonyms and documentation",
			describeReq(kmsg.ConfigResourceTypeBroker, "1", nil, true, true), -1},
		step{"describe_configs_broker_v1", "DescribeConfigs v1 for the broker, no synonyms",
			describeReq(kmsg.ConfigResourceTypeBroker, "1", nil, false, false), 1},
		step{"describe_configs_broker_cluster_default", "DescribeConfigs for the cluster-default broker resource (empty name): dynamic defaults only",
			describeReq(kmsg.ConfigResourceTypeBroker, "", nil, true, false), -1},
		step{"describe_configs_broker_other", "DescribeConfigs for a broker id that is not the receiving broker",
			describeReq(kmsg.ConfigResourceTypeBroker, "7", nil, false, false), -1},
		step{"describe_configs_broker_bad_name", "DescribeConfigs for a broker resource whose name is not a number",
			describeReq(kmsg.ConfigResourceTypeBroker, "abc", nil, false, false), -1},

		step{"metadata_missing_no_autocreate", "Metadata for a missing topic with allow_auto_topic_creation=false",
			metadataReq(false, "missing-a"), -1},
		step{"metadata_missing_autocreate", "Metadata for a missing topic with allow_auto_topic_creation=true (auto.create.topics.enable defaults to true)",
			metadataReq(true, "missing-b"), -1},
		step{"metadata_invalid_name_autocreate", "Metadata with auto-create for a topic name that is not legal",
			metadataReq(true, "bad name"), -1},
	); err != nil {
		return err
	}
	if err := s.waitTopic("missing-b"); err != nil {
		return err
	}
	lo := kmsg.NewPtrListOffsetsRequest()
	lo.ReplicaID = -1
	addLO := func(topic string, pts ...[2]int64) {
		t := kmsg.NewListOffsetsRequestTopic()
		t.Topic = topic
		for _, pt := range pts {
			p := kmsg.NewListOffsetsRequestTopicPartition()
			p.Partition = int32(pt[0])
			p.Timestamp = pt[1]
			p.CurrentLeaderEpoch = -1
			t.Partitions = append(t.Partitions, p)
		}
		lo.Topics = append(lo.Topics, t)
	}
	addLO(topicOverrides, [2]int64{0, -2}, [2]int64{1, -1}, [2]int64{2, -3})
	addLO(topicDefault, [2]int64{0, 0}, [2]int64{9, -1})
	addLO("no-such-topic", [2]int64{0, -1})

	del := kmsg.NewPtrDeleteTopicsRequest()
	del.TimeoutMillis = 30000
	dt := kmsg.NewDeleteTopicsRequestTopic()
	dt.Topic = str("no-such-topic")
	del.Topics = append(del.Topics, dt)
	del.TopicNames = []string{"no-such-topic"}

	return s.steps(
		step{"metadata_after_autocreate", "Metadata for the auto-created topic once it has a leader (broker defaults)",
			metadataReq(false, "missing-b"), -1},
		step{"list_offsets_empty", "ListOffsets on empty partitions: earliest (-2), latest (-1), max timestamp (-3), by timestamp (0); an unknown partition and an unknown topic",
			lo, -1},
		step{"incremental_alter_configs_errors", "IncrementalAlterConfigs validate_only: unknown topic config, bad values (which one Kafka reports), an unknown topic, a non-dynamic broker config",
			&kmsg.IncrementalAlterConfigsRequest{ValidateOnly: true, Resources: []kmsg.IncrementalAlterConfigsRequestResource{
				incAlterResource(kmsg.ConfigResourceTypeTopic, topicDefault, map[string]string{"no.such.config": "1"}),
				incAlterResource(kmsg.ConfigResourceTypeTopic, topicOverrides, map[string]string{"retention.ms": "abc", "segment.bytes": "10"}),
				incAlterResource(kmsg.ConfigResourceTypeTopic, "no-such-topic", map[string]string{"retention.ms": "1000"}),
				incAlterResource(kmsg.ConfigResourceTypeBroker, "1", map[string]string{"log.dirs": "/tmp/x"}),
			}}, -1},
		step{"incremental_alter_configs_duplicate_resource", "IncrementalAlterConfigs naming the same resource twice",
			&kmsg.IncrementalAlterConfigsRequest{ValidateOnly: true, Resources: []kmsg.IncrementalAlterConfigsRequestResource{
				incAlterResource(kmsg.ConfigResourceTypeBroker, "", map[string]string{"log.retention.ms": "1000"}),
				incAlterResource(kmsg.ConfigResourceTypeBroker, "", map[string]string{"log.segment.bytes": "1048576"}),
			}}, -1},
		step{"incremental_alter_configs_broker_unknown", "IncrementalAlterConfigs validate_only: a broker config Kafka does not know, at the cluster default",
			&kmsg.IncrementalAlterConfigsRequest{ValidateOnly: true, Resources: []kmsg.IncrementalAlterConfigsRequestResource{
				incAlterResource(kmsg.ConfigResourceTypeBroker, "", map[string]string{"no.such.broker.config": "1"}),
			}}, -1},
		step{"incremental_alter_configs_broker_per_broker_only", "IncrementalAlterConfigs validate_only: a per-broker config set at the cluster default",
			&kmsg.IncrementalAlterConfigsRequest{ValidateOnly: true, Resources: []kmsg.IncrementalAlterConfigsRequestResource{
				incAlterResource(kmsg.ConfigResourceTypeBroker, "", map[string]string{"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"}),
			}}, -1},
		step{"incremental_alter_configs_valid", "IncrementalAlterConfigs validate_only: valid topic, cluster-default and per-broker changes",
			&kmsg.IncrementalAlterConfigsRequest{ValidateOnly: true, Resources: []kmsg.IncrementalAlterConfigsRequestResource{
				incAlterResource(kmsg.ConfigResourceTypeTopic, topicDefault, map[string]string{"retention.ms": "1000", "cleanup.policy": "compact"}),
				incAlterResource(kmsg.ConfigResourceTypeBroker, "", map[string]string{"log.retention.ms": "1000"}),
				incAlterResource(kmsg.ConfigResourceTypeBroker, "1", map[string]string{"log.cleaner.threads": "2", "num.io.threads": "4"}),
			}}, -1},
		step{"incremental_alter_configs_ops", "IncrementalAlterConfigs validate_only: APPEND to a non-list config, SUBTRACT and DELETE",
			&kmsg.IncrementalAlterConfigsRequest{ValidateOnly: true, Resources: []kmsg.IncrementalAlterConfigsRequestResource{
				incAlterOp(kmsg.ConfigResourceTypeTopic, topicDefault, "retention.ms", kmsg.IncrementalAlterConfigOpAppend, str("1")),
				incAlterOp(kmsg.ConfigResourceTypeTopic, topicOverrides, "cleanup.policy", kmsg.IncrementalAlterConfigOpSubtract, str("delete")),
				incAlterOp(kmsg.ConfigResourceTypeTopic, topicCollide, "no.such.config", kmsg.IncrementalAlterConfigOpDelete, nil),
			}}, -1},
		step{"incremental_alter_configs_broker_bad_value", "IncrementalAlterConfigs validate_only: a dynamic broker config with a bad value",
			&kmsg.IncrementalAlterConfigsRequest{ValidateOnly: true, Resources: []kmsg.IncrementalAlterConfigsRequestResource{
				incAlterResource(kmsg.ConfigResourceTypeBroker, "1", map[string]string{"log.retention.ms": "abc"}),
			}}, -1},
		step{"alter_configs_errors", "AlterConfigs (legacy, replaces the whole set) validate_only: unknown topic config, bad value, non-dynamic broker config",
			&kmsg.AlterConfigsRequest{ValidateOnly: true, Resources: []kmsg.AlterConfigsRequestResource{
				alterResource(kmsg.ConfigResourceTypeTopic, topicDefault, map[string]string{"no.such.config": "1"}),
				alterResource(kmsg.ConfigResourceTypeTopic, topicOverrides, map[string]string{"cleanup.policy": "bogus"}),
				alterResource(kmsg.ConfigResourceTypeBroker, "1", map[string]string{"num.partitions": "4", "log.dirs": "/tmp/x"}),
			}}, -1},
		step{"delete_topics_unknown", "DeleteTopics for a topic that does not exist",
			del, -1},
		step{"describe_cluster", "DescribeCluster", kmsg.NewPtrDescribeClusterRequest(), -1},
	)
}

func precedenceSteps(s *session) error {
	if err := s.steps(
		step{"incremental_alter_configs_dynamic", "IncrementalAlterConfigs setting dynamic cluster defaults and per-broker values",
			&kmsg.IncrementalAlterConfigsRequest{Resources: []kmsg.IncrementalAlterConfigsRequestResource{
				incAlterResource(kmsg.ConfigResourceTypeBroker, "", map[string]string{"log.retention.ms": "3600000", "log.segment.bytes": "268435456", "log.cleaner.min.cleanable.ratio": "0.4"}),
				incAlterResource(kmsg.ConfigResourceTypeBroker, "1", map[string]string{"log.retention.ms": "7200000", "message.max.bytes": "3000000"}),
			}}, -1},
	); err != nil {
		return err
	}
	// Dynamic configs reach the broker through the metadata log: wait
	// until it reports them before describing anything.
	if err := s.poll("dynamic broker configs", func() error {
		resp, err := s.request(describeReq(kmsg.ConfigResourceTypeBroker, "1", []string{"log.retention.ms", "message.max.bytes", "log.segment.bytes"}, false, false), -1)
		if err != nil {
			return err
		}
		got := map[string]string{}
		for _, r := range resp.(*kmsg.DescribeConfigsResponse).Resources {
			for _, c := range r.Configs {
				if c.Value != nil {
					got[c.Name] = *c.Value
				}
			}
		}
		if got["log.retention.ms"] != "7200000" || got["message.max.bytes"] != "3000000" || got["log.segment.bytes"] != "268435456" {
			return fmt.Errorf("not applied yet: %v", got)
		}
		return nil
	}); err != nil {
		return err
	}
	if err := s.steps(
		step{"create_topics_precedence", "CreateTopics under static and dynamic broker configs: the response's configs show the sources",
			createReq(false,
				createTopic(topicPrecedence, 1, 1, map[string]string{"retention.ms": "60000", "max.message.bytes": "4000000"}),
				createTopic(topicPlain, -1, -1, nil),
			), -1},
	); err != nil {
		return err
	}
	for _, t := range []string{topicPrecedence, topicPlain} {
		if err := s.waitTopic(t); err != nil {
			return err
		}
	}
	return s.steps(
		step{"describe_configs_topic_precedence", "DescribeConfigs for a topic with overrides on a broker with static, dynamic default and dynamic per-broker configs",
			describeReq(kmsg.ConfigResourceTypeTopic, topicPrecedence, nil, true, false), -1},
		step{"describe_configs_topic_plain", "DescribeConfigs for a topic without overrides on the same broker",
			describeReq(kmsg.ConfigResourceTypeTopic, topicPlain, nil, true, false), -1},
		step{"describe_configs_broker_precedence", "DescribeConfigs for the broker with static, dynamic default and dynamic per-broker configs",
			describeReq(kmsg.ConfigResourceTypeBroker, "1", nil, true, false), -1},
		step{"describe_configs_broker_cluster_default_set", "DescribeConfigs for the cluster-default resource after dynamic defaults were set",
			describeReq(kmsg.ConfigResourceTypeBroker, "", nil, true, false), -1},
		step{"metadata_missing_autocreate_disabled", "Metadata with allow_auto_topic_creation=true on a broker with auto.create.topics.enable=false",
			metadataReq(true, "missing-c"), -1},
	)
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
