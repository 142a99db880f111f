package admin

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/internal/testkit"
)

func findConfig(cs []configEntry, name string) *configEntry {
	for i := range cs {
		if cs[i].Name == name {
			return &cs[i]
		}
	}
	return nil
}

func TestTopicLifecycle(t *testing.T) {
	e := kxStart(t, Options{})

	// Create, with a config; the answer is the topic's detail.
	var d topicDetail
	e.do(t, "POST", "/topics", map[string]any{"name": "orders", "partitions": 3, "replication_factor": 1,
		"configs": map[string]string{"retention.ms": "3600000", "cleanup.policy": "compact"}}, http.StatusCreated, &d)
	if d.Name != "orders" || d.Partitions != 3 || d.ReplicationFactor != 1 || len(d.PartitionDetails) != 3 || d.TopicID == "" || d.Internal {
		t.Fatalf("created topic: %+v", d)
	}
	if d.RetentionMs != "3600000" || d.CleanupPolicy != "compact" || d.Messages != 0 {
		t.Fatalf("created topic's summary: %+v", d.topicSummary)
	}
	for i, p := range d.PartitionDetails {
		if p.Partition != int32(i) || p.Leader != 0 || len(p.Replicas) != 1 || len(p.ISR) != 1 || p.StartOffset != 0 || p.EndOffset != 0 || p.SizeBytes < 0 {
			t.Fatalf("partition %d: %+v", i, p)
		}
	}
	if c := findConfig(d.Configs, "retention.ms"); c == nil || c.Value == nil || *c.Value != "3600000" || c.Source != "DYNAMIC_TOPIC_CONFIG" || c.IsDefault {
		t.Fatalf("retention.ms config: %+v", c)
	}
	if c := findConfig(d.Configs, "segment.bytes"); c == nil || !c.IsDefault || c.Source != "DEFAULT_CONFIG" {
		t.Fatalf("segment.bytes config: %+v", c)
	}
	// The cluster agrees.
	md, err := e.adm.ListTopics(testkit.Context(t, 10*time.Second), "orders")
	if err != nil || len(md["orders"].Partitions) != 3 {
		t.Fatalf("kadm sees %+v, %v", md, err)
	}

	// A second create is a conflict, named as Kafka names it.
	e.wantError(t, "POST", "/topics", map[string]any{"name": "orders"}, http.StatusConflict, "TOPIC_ALREADY_EXISTS: ")
	// A bad config and a bad partition count are the client's errors.
	ae := e.wantError(t, "POST", "/topics", map[string]any{"name": "bad", "configs": map[string]string{"retention.ms": "soon"}}, http.StatusBadRequest, "INVALID_CONFIG: ")
	if !strings.Contains(ae.Message, "retention.ms") {
		t.Errorf("INVALID_CONFIG message does not name the config: %s", ae.Message)
	}
	e.wantError(t, "POST", "/topics", map[string]any{"name": "bad", "partitions": 0}, http.StatusBadRequest, "INVALID_PARTITIONS: ")
	e.wantError(t, "POST", "/topics", map[string]any{"partitions": 1}, http.StatusBadRequest, "name is required")
	e.wantError(t, "POST", "/topics", map[string]any{"name": "x", "partitons": 1}, http.StatusBadRequest, "request body is not valid JSON")

	// validate_only checks without creating.
	var v validatedTopic
	e.do(t, "POST", "/topics", map[string]any{"name": "dry", "partitions": 4, "validate_only": true}, http.StatusOK, &v)
	if v.Name != "dry" || v.Partitions != 4 || !v.ValidateOnly {
		t.Fatalf("validate_only: %+v", v)
	}
	e.wantError(t, "GET", "/topics/dry", nil, http.StatusNotFound, "UNKNOWN_TOPIC_OR_PARTITION: ")

	// Broker defaults: -1 partitions is num.partitions (1).
	e.do(t, "POST", "/topics", map[string]any{"name": "defaults"}, http.StatusCreated, &d)
	if d.Partitions != 1 || d.ReplicationFactor != 1 {
		t.Fatalf("topic with broker defaults: %+v", d.topicSummary)
	}

	// The list is sorted, without internal topics unless asked.
	e.produce(t, &kgo.Record{Topic: "orders", Partition: 1, Key: []byte("a"), Value: []byte("one")}, &kgo.Record{Topic: "orders", Partition: 2, Key: []byte("b"), Value: []byte("two")}) // keyed: the topic is compacted
	var list []topicSummary
	e.do(t, "GET", "/topics", nil, http.StatusOK, &list)
	if len(list) != 2 || list[0].Name != "defaults" || list[1].Name != "orders" {
		t.Fatalf("topics: %+v", list)
	}
	if o := list[1]; o.Messages != 2 || o.SizeBytes <= 0 || o.Partitions != 3 || o.UnderReplicated != 0 {
		t.Fatalf("orders after 2 records: %+v", o)
	}
	// A consumer group commit creates __consumer_offsets.
	if _, err := e.adm.CommitOffsets(testkit.Context(t, 10*time.Second), "g", offsetsOf("orders", 0, 0)); err != nil {
		t.Fatal(err)
	}
	e.do(t, "GET", "/topics?internal=true", nil, http.StatusOK, &list)
	if len(list) != 3 || list[0].Name != "__consumer_offsets" || !list[0].Internal {
		t.Fatalf("topics with internal ones: %+v", list)
	}
	e.wantError(t, "GET", "/topics?internal=maybe", nil, http.StatusBadRequest, "internal must be true or false")

	// The detail shows per-partition offsets and sizes.
	e.do(t, "GET", "/topics/orders", nil, http.StatusOK, &d)
	if p := d.PartitionDetails; p[0].EndOffset != 0 || p[1].EndOffset != 1 || p[2].EndOffset != 1 || p[1].SizeBytes <= 0 || p[0].SizeBytes != 0 {
		t.Fatalf("orders partitions after producing: %+v", p)
	}
	if d.SizeBytes != d.PartitionDetails[1].SizeBytes+d.PartitionDetails[2].SizeBytes {
		t.Fatalf("topic size %d is not its partitions' sum: %+v", d.SizeBytes, d.PartitionDetails)
	}
	e.wantError(t, "GET", "/topics/nope", nil, http.StatusNotFound, "UNKNOWN_TOPIC_OR_PARTITION: Topic 'nope' does not exist.")

	// Delete, then it is gone.
	e.do(t, "DELETE", "/topics/defaults", nil, http.StatusNoContent, nil)
	e.wantError(t, "GET", "/topics/defaults", nil, http.StatusNotFound, "UNKNOWN_TOPIC_OR_PARTITION: ")
	e.wantError(t, "DELETE", "/topics/defaults", nil, http.StatusNotFound, "UNKNOWN_TOPIC_OR_PARTITION: ")
	e.do(t, "GET", "/topics", nil, http.StatusOK, &list)
	if len(list) != 1 || list[0].Name != "orders" {
		t.Fatalf("topics after delete: %+v", list)
	}
}

func TestTopicConfigs(t *testing.T) {
	e := kxStart(t, Options{})
	e.createTopic(t, "events", 1)

	var cs []configEntry
	e.do(t, "GET", "/topics/events/configs", nil, http.StatusOK, &cs)
	c := findConfig(cs, "retention.ms")
	if c == nil || !c.IsDefault || c.Value == nil || *c.Value != "604800000" || c.Sensitive {
		t.Fatalf("default retention.ms: %+v", c)
	}
	if c.Documentation == nil || *c.Documentation == "" {
		t.Errorf("retention.ms has no documentation: %+v", c)
	}
	for i := 1; i < len(cs); i++ {
		if cs[i-1].Name >= cs[i].Name {
			t.Fatalf("configs not sorted by name: %s before %s", cs[i-1].Name, cs[i].Name)
		}
	}

	// Set two, then see them in DescribeConfigs (kadm) and in the answer.
	e.do(t, "PATCH", "/topics/events/configs", map[string]any{"set": map[string]string{"retention.ms": "60000", "max.message.bytes": "2048"}}, http.StatusOK, &cs)
	if c := findConfig(cs, "retention.ms"); c == nil || *c.Value != "60000" || c.Source != "DYNAMIC_TOPIC_CONFIG" || c.IsDefault {
		t.Fatalf("retention.ms after set: %+v", c)
	}
	rcs, err := e.adm.DescribeTopicConfigs(testkit.Context(t, 10*time.Second), "events")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range rcs[0].Configs {
		got[c.Key] = c.MaybeValue()
	}
	if got["retention.ms"] != "60000" || got["max.message.bytes"] != "2048" {
		t.Fatalf("DescribeConfigs after PATCH: retention.ms=%s max.message.bytes=%s", got["retention.ms"], got["max.message.bytes"])
	}

	// Incremental: deleting one returns it to its default and leaves the other.
	e.do(t, "PATCH", "/topics/events/configs", map[string]any{"delete": []string{"retention.ms"}}, http.StatusOK, &cs)
	if c := findConfig(cs, "retention.ms"); c == nil || *c.Value != "604800000" || !c.IsDefault {
		t.Fatalf("retention.ms after delete: %+v", c)
	}
	if c := findConfig(cs, "max.message.bytes"); c == nil || *c.Value != "2048" {
		t.Fatalf("max.message.bytes after deleting another config: %+v", c)
	}

	// validate_only changes nothing; bad values are 400 with Kafka's name.
	e.do(t, "PATCH", "/topics/events/configs", map[string]any{"set": map[string]string{"max.message.bytes": "4096"}, "validate_only": true}, http.StatusOK, &cs)
	if c := findConfig(cs, "max.message.bytes"); c == nil || *c.Value != "2048" {
		t.Fatalf("validate_only changed max.message.bytes: %+v", c)
	}
	e.wantError(t, "PATCH", "/topics/events/configs", map[string]any{"set": map[string]string{"retention.ms": "soon"}}, http.StatusBadRequest, "INVALID_CONFIG: ")
	e.wantError(t, "PATCH", "/topics/events/configs", map[string]any{}, http.StatusBadRequest, "nothing to change")
	e.wantError(t, "PATCH", "/topics/events/configs", map[string]any{"set": map[string]string{"retention.ms": "1"}, "delete": []string{"retention.ms"}}, http.StatusBadRequest, "config retention.ms is both")
	e.wantError(t, "PATCH", "/topics/nope/configs", map[string]any{"set": map[string]string{"retention.ms": "1"}}, http.StatusNotFound, "UNKNOWN_TOPIC_OR_PARTITION: ")
	e.wantError(t, "GET", "/topics/nope/configs", nil, http.StatusNotFound, "UNKNOWN_TOPIC_OR_PARTITION: ")
}

func TestAddPartitions(t *testing.T) {
	e := kxStart(t, Options{})
	e.createTopic(t, "grow", 2)

	var d topicDetail
	e.do(t, "POST", "/topics/grow/partitions", map[string]any{"count": 5}, http.StatusOK, &d)
	if d.Partitions != 5 || len(d.PartitionDetails) != 5 {
		t.Fatalf("after growing to 5: %+v", d.topicSummary)
	}
	for _, p := range d.PartitionDetails {
		if p.Leader < 0 {
			t.Fatalf("new partition without a leader: %+v", p)
		}
	}
	// A new partition takes records.
	e.produce(t, &kgo.Record{Topic: "grow", Partition: 4, Value: []byte("x")})

	e.wantError(t, "POST", "/topics/grow/partitions", map[string]any{"count": 3}, http.StatusBadRequest, "INVALID_PARTITIONS: ")
	e.wantError(t, "POST", "/topics/grow/partitions", map[string]any{}, http.StatusBadRequest, "count is required")
	e.wantError(t, "POST", "/topics/nope/partitions", map[string]any{"count": 3}, http.StatusNotFound, "UNKNOWN_TOPIC_OR_PARTITION: ")
}
