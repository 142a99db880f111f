package broker_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/internal/kafkaref"
	"github.com/fjordhq/fjord/internal/testkit"
)

// These tests replay requests captured from Apache Kafka 4.4
// (internal/kafkaref) against Fjord and compare what a client acts on:
// error codes, error messages, offsets, version ranges.

func loadCapture[Req, Resp any](t *testing.T, name string) (*Req, *Resp) {
	t.Helper()
	c, err := kafkaref.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	req, resp := new(Req), new(Resp)
	if err := c.DecodeRequest(req); err != nil {
		t.Fatalf("%s request: %v", name, err)
	}
	if err := c.DecodeResponse(resp); err != nil {
		t.Fatalf("%s response: %v", name, err)
	}
	return req, resp
}

func TestApiVersionsMatchKafka(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	cl := testkit.Client(t, b.Addr)
	_, want := loadCapture[kmsg.ApiVersionsRequest, kmsg.ApiVersionsResponse](t, "api_versions")
	kafka := map[int16]kmsg.ApiVersionsResponseApiKey{}
	for _, k := range want.ApiKeys {
		kafka[k.ApiKey] = k
	}
	got, err := kmsg.NewPtrApiVersionsRequest().RequestWith(testkit.Context(t, 5*time.Second), cl)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range got.ApiKeys {
		kk, ok := kafka[k.ApiKey]
		if !ok {
			t.Errorf("%s: Kafka 4.4 does not serve it", kmsg.NameForKey(k.ApiKey))
			continue
		}
		if k.MinVersion != kk.MinVersion || k.MaxVersion != kk.MaxVersion {
			t.Errorf("%s: we advertise %d-%d, Kafka 4.4 %d-%d", kmsg.NameForKey(k.ApiKey), k.MinVersion, k.MaxVersion, kk.MinVersion, kk.MaxVersion)
		}
	}
}

// sameError compares a code and message with Kafka's. Fjord reports
// every bad config of a topic, joined by "; ", where Kafka reports the
// first: Kafka's message must then be the prefix.
func sameError(t *testing.T, what string, code int16, msg *string, wantCode int16, wantMsg *string) {
	t.Helper()
	g, w := sortBracketed(deref(msg)), sortBracketed(deref(wantMsg))
	if code != wantCode || !(g == w || strings.HasPrefix(g, w+"; ")) {
		t.Errorf("%s: got %d %q, Kafka 4.4 answered %d %q", what, code, g, wantCode, w)
	}
}

// sortBracketed sorts the items of a "[a, b]" list in a message: Kafka
// prints sets of keys in hash order, Fjord sorted.
func sortBracketed(s string) string {
	i, j := strings.Index(s, "["), strings.LastIndex(s, "]")
	if i < 0 || j < i {
		return s
	}
	items := strings.Split(s[i+1:j], ", ")
	slices.Sort(items)
	return s[:i+1] + strings.Join(items, ", ") + s[j:]
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func request[Resp kmsg.Response](t *testing.T, cl *kgo.Client, req kmsg.Request) Resp {
	t.Helper()
	// Straight to the broker: kgo would otherwise split some requests by
	// partition leader and fail unknown partitions itself.
	resp, err := cl.Broker(1).Request(testkit.Context(t, 10*time.Second), req)
	if err != nil {
		t.Fatalf("%s: %v", kmsg.NameForKey(req.Key()), err)
	}
	return resp.(Resp)
}

func TestCreateTopicsAnswersMatchKafka(t *testing.T) {
	b := testkit.StartBroker(t, map[string]string{"node.id": "1"})
	cl := testkit.Client(t, b.Addr)

	okReq, okWant := loadCapture[kmsg.CreateTopicsRequest, kmsg.CreateTopicsResponse](t, "create_topics_ok")
	okGot := request[*kmsg.CreateTopicsResponse](t, cl, okReq)
	for i, w := range okWant.Topics {
		g := okGot.Topics[i]
		sameError(t, "create "+w.Topic, g.ErrorCode, g.ErrorMessage, w.ErrorCode, w.ErrorMessage)
		if g.NumPartitions != w.NumPartitions || g.ReplicationFactor != w.ReplicationFactor || len(g.Configs) != len(w.Configs) {
			t.Errorf("create %s: %d partitions rf %d %d configs; Kafka %d, %d, %d", w.Topic,
				g.NumPartitions, g.ReplicationFactor, len(g.Configs), w.NumPartitions, w.ReplicationFactor, len(w.Configs))
		}
	}

	for _, name := range []string{"create_topics_errors", "create_topics_duplicate", "create_topics_validate_only", "create_topics_v4"} {
		req, want := loadCapture[kmsg.CreateTopicsRequest, kmsg.CreateTopicsResponse](t, name)
		got := request[*kmsg.CreateTopicsResponse](t, cl, req)
		if len(got.Topics) != len(want.Topics) {
			t.Fatalf("%s: %d topics answered, Kafka %d", name, len(got.Topics), len(want.Topics))
		}
		for i, w := range want.Topics {
			sameError(t, fmt.Sprintf("%s %q", name, w.Topic), got.Topics[i].ErrorCode, got.Topics[i].ErrorMessage, w.ErrorCode, w.ErrorMessage)
		}
	}
}

func TestOtherAnswersMatchKafka(t *testing.T) {
	b := testkit.StartBroker(t, map[string]string{"node.id": "1"})
	cl := testkit.Client(t, b.Addr)
	okReq, _ := loadCapture[kmsg.CreateTopicsRequest, kmsg.CreateTopicsResponse](t, "create_topics_ok")
	request[*kmsg.CreateTopicsResponse](t, cl, okReq)

	t.Run("delete unknown topic", func(t *testing.T) {
		req, want := loadCapture[kmsg.DeleteTopicsRequest, kmsg.DeleteTopicsResponse](t, "delete_topics_unknown")
		got := request[*kmsg.DeleteTopicsResponse](t, cl, req)
		sameError(t, "delete", got.Topics[0].ErrorCode, got.Topics[0].ErrorMessage, want.Topics[0].ErrorCode, want.Topics[0].ErrorMessage)
	})
	t.Run("metadata", func(t *testing.T) {
		for _, name := range []string{"metadata_missing_no_autocreate", "metadata_invalid_name_autocreate"} {
			req, want := loadCapture[kmsg.MetadataRequest, kmsg.MetadataResponse](t, name)
			got := request[*kmsg.MetadataResponse](t, cl, req)
			if got.Topics[0].ErrorCode != want.Topics[0].ErrorCode {
				t.Errorf("%s: error %d, Kafka %d", name, got.Topics[0].ErrorCode, want.Topics[0].ErrorCode)
			}
		}
	})
	t.Run("list offsets on empty partitions", func(t *testing.T) {
		req, want := loadCapture[kmsg.ListOffsetsRequest, kmsg.ListOffsetsResponse](t, "list_offsets_empty")
		got := request[*kmsg.ListOffsetsResponse](t, cl, req)
		type tp struct {
			t string
			p int32
		}
		gotBy := map[tp]kmsg.ListOffsetsResponseTopicPartition{}
		for _, gt := range got.Topics {
			for _, gp := range gt.Partitions {
				gotBy[tp{gt.Topic, gp.Partition}] = gp
			}
		}
		for _, wt := range want.Topics {
			for _, wp := range wt.Partitions {
				gp, ok := gotBy[tp{wt.Topic, wp.Partition}]
				if !ok {
					t.Errorf("%s[%d] not answered", wt.Topic, wp.Partition)
					continue
				}
				if gp.ErrorCode != wp.ErrorCode || gp.Offset != wp.Offset || gp.Timestamp != wp.Timestamp || gp.LeaderEpoch != wp.LeaderEpoch {
					t.Errorf("%s[%d]: got err %d offset %d ts %d epoch %d; Kafka %d %d %d %d", wt.Topic, wp.Partition,
						gp.ErrorCode, gp.Offset, gp.Timestamp, gp.LeaderEpoch, wp.ErrorCode, wp.Offset, wp.Timestamp, wp.LeaderEpoch)
				}
			}
		}
	})
	t.Run("alter configs errors", func(t *testing.T) {
		for _, name := range []string{"incremental_alter_configs_errors", "incremental_alter_configs_duplicate_resource",
			"incremental_alter_configs_broker_unknown", "incremental_alter_configs_broker_bad_value", "incremental_alter_configs_broker_per_broker_only"} {
			req, want := loadCapture[kmsg.IncrementalAlterConfigsRequest, kmsg.IncrementalAlterConfigsResponse](t, name)
			got := request[*kmsg.IncrementalAlterConfigsResponse](t, cl, req)
			// Kafka answers resources in its own order: match by resource.
			for i, w := range want.Resources {
				g := got.Resources[i]
				for _, c := range got.Resources {
					if c.ResourceType == w.ResourceType && c.ResourceName == w.ResourceName {
						g = c
						break
					}
				}
				sameError(t, fmt.Sprintf("%s %s %q", name, w.ResourceType, w.ResourceName), g.ErrorCode, g.ErrorMessage, w.ErrorCode, w.ErrorMessage)
			}
		}
		req, want := loadCapture[kmsg.AlterConfigsRequest, kmsg.AlterConfigsResponse](t, "alter_configs_errors")
		got := request[*kmsg.AlterConfigsResponse](t, cl, req)
		for _, w := range want.Resources {
			var g kmsg.AlterConfigsResponseResource
			for _, c := range got.Resources {
				if c.ResourceType == w.ResourceType && c.ResourceName == w.ResourceName {
					g = c
				}
			}
			sameError(t, fmt.Sprintf("alter_configs_errors %s %q", w.ResourceType, w.ResourceName), g.ErrorCode, g.ErrorMessage, w.ErrorCode, w.ErrorMessage)
		}
	})
}
