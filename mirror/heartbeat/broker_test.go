package heartbeat

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	_ "github.com/fjordhq/fjord/converters/bytearray"
	"github.com/fjordhq/fjord/internal/testkit"
	"github.com/fjordhq/fjord/internal/testkit/connectkit"
	"github.com/fjordhq/fjord/mirror/records"
)

// TestHeartbeatsOnBroker runs the connector in a Connect worker against
// a broker, configured as mm2 configures it: the heartbeats topic is
// created compacted with one partition, and a heartbeat for the pair
// arrives about every emit.heartbeats.interval.seconds.
func TestHeartbeatsOnBroker(t *testing.T) {
	b := testkit.StartBroker(t, map[string]string{"auto.create.topics.enable": "false"})
	w := connectkit.Start(t, b.Addr, connectkit.Options{})
	w.Create(t, map[string]string{
		"name":                                "MirrorHeartbeatConnector",
		"connector.class":                     Alias,
		"source.cluster.alias":                "a",
		"target.cluster.alias":                "hub",
		"target.cluster.bootstrap.servers":    b.Addr,
		"heartbeats.topic.replication.factor": "1",
		"emit.heartbeats.interval.seconds":    "1",
		"key.converter":                       "org.apache.kafka.connect.converters.ByteArrayConverter",
		"value.converter":                     "org.apache.kafka.connect.converters.ByteArrayConverter",
		"header.converter":                    "org.apache.kafka.connect.converters.ByteArrayConverter",
	})

	adm := testkit.Admin(t, b.Addr)
	testkit.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		td, err := adm.ListTopics(testkit.Context(t, 5*time.Second), "heartbeats")
		if err != nil {
			return err
		}
		if d := td["heartbeats"]; d.Err != nil || len(d.Partitions) != 1 {
			return fmt.Errorf("heartbeats topic: %+v", d)
		}
		return nil
	})
	rc, err := adm.DescribeTopicConfigs(testkit.Context(t, 5*time.Second), "heartbeats")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := rc.On("heartbeats", nil); err != nil || configValue(v.Configs, "cleanup.policy") != "compact" {
		t.Errorf("heartbeats cleanup.policy %q (%v), want compact", configValue(v.Configs, "cleanup.policy"), err)
	}

	cl := testkit.Client(t, b.Addr, kgo.ConsumeTopics("heartbeats"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var got []records.Heartbeat
	ctx := testkit.Context(t, 15*time.Second)
	for len(got) < 3 && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			hb, err := records.DecodeHeartbeat(r.Key, r.Value)
			if err != nil {
				t.Fatalf("record %v: %v", r, err)
			}
			if hb.SourceClusterAlias != "a" || hb.TargetClusterAlias != "hub" || r.Timestamp.UnixMilli() != hb.Timestamp {
				t.Errorf("heartbeat %v in a record stamped %v", hb, r.Timestamp.UnixMilli())
			}
			got = append(got, hb)
		})
	}
	if len(got) < 3 {
		t.Fatalf("%d heartbeats in 15 s", len(got))
	}
	for i := 1; i < len(got); i++ {
		if d := got[i].Timestamp - got[i-1].Timestamp; d < 900 || d > 3000 {
			t.Errorf("heartbeats %d ms apart, want about 1000: %v", d, got)
		}
	}
	if err := w.Failed(); err != nil {
		t.Fatal(err)
	}
}

func configValue(cs []kadm.Config, name string) string {
	for _, c := range cs {
		if c.Key == name && c.Value != nil {
			return *c.Value
		}
	}
	return ""
}

// TestNoTopicWithoutHeartbeats: with heartbeats off the connector runs no
// task and leaves the target alone (MM2 would create an empty topic).
func TestNoTopicWithoutHeartbeats(t *testing.T) {
	b := testkit.StartBroker(t, map[string]string{"auto.create.topics.enable": "false"})
	c := &Connector{}
	p := props("emit.heartbeats.enabled", "false", "target.cluster.bootstrap.servers", b.Addr, "heartbeats.topic.replication.factor", "1")
	if err := c.Start(testkit.Context(t, 5*time.Second), p); err != nil {
		t.Fatal(err)
	}
	if tc, _ := c.TaskConfigs(1); len(tc) != 0 {
		t.Errorf("task configs %v", tc)
	}
	time.Sleep(300 * time.Millisecond)
	c.Stop()
	td, err := testkit.Admin(t, b.Addr).ListTopics(testkit.Context(t, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if td.Has("heartbeats") {
		t.Error("the heartbeats topic was created with heartbeats off")
	}
}
