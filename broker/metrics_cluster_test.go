package broker_test

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/api"
	"github.com/fjordhq/fjord/internal/testkit"
)

// TestClusterReplicationMetricsAndReadiness: three nodes, a topic with
// RF 3. Stopping a follower shrinks the ISR (counted by the leader) and
// makes the partition under-replicated on its leader; the active
// controller alone reports the brokers. The follower restarted behind a
// leader-side replication throttle is unfenced but out of the ISR:
// /readyz answers 503 naming the partition. Once the throttle is lifted it
// catches up, rejoins the ISR (an expansion) and is ready.
func TestClusterReplicationMetricsAndReadiness(t *testing.T) {
	testkit.SkipShort(t, "in-process 3-node cluster")
	c := testkit.StartInProcCluster(t, 3, nil)
	adm := testkit.Admin(t, c.Bootstrap())
	ctx := testkit.Context(t, 2*time.Minute)
	const topic = "ur"
	if res, err := adm.CreateTopic(ctx, 1, 3, nil, topic); err != nil || res.Err != nil {
		t.Fatalf("create topic: %v %v", err, res.Err)
	}
	var leader int32 = -1
	testkit.CheckFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		md, err := adm.Metadata(ctx, topic)
		if err != nil {
			return err
		}
		p := md.Topics[topic].Partitions[0]
		if p.Leader < 0 || len(p.ISR) != 3 {
			return fmt.Errorf("partition %+v not fully in sync yet", p)
		}
		leader = p.Leader
		return nil
	})
	follower := leader%3 + 1
	lg := c.Node(leader).Server.Gatherer()
	clusterSum := func(name string) float64 {
		total := 0.0
		for _, n := range c.Nodes {
			if n.Server != nil {
				v, _ := metricValue(t, n.Server.Gatherer(), name, nil)
				total += v
			}
		}
		return total
	}
	testkit.CheckFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		if got := mustMetric(t, lg, "fjord_broker_under_replicated_partitions", nil); got != 0 {
			return fmt.Errorf("leader reports %v under-replicated partitions before any failure", got)
		}
		if got := clusterSum("fjord_controller_active"); got != 1 {
			return fmt.Errorf("%v active controllers", got)
		}
		if got := clusterSum("fjord_controller_active_brokers"); got != 3 {
			return fmt.Errorf("the cluster reports %v active brokers, want 3 (counted once, by the active controller)", got)
		}
		// Another broker's Metadata can name the leader before the leader
		// has applied its leadership: wait for the leader's own count.
		if got := mustMetric(t, lg, "fjord_broker_leader_partitions", nil); got < 1 {
			return fmt.Errorf("leader %d reports %v leader partitions", leader, got)
		}
		return nil
	})
	shrinks := mustMetric(t, lg, "fjord_broker_isr_shrinks_total", nil)
	expands := mustMetric(t, lg, "fjord_broker_isr_expands_total", nil)

	t.Logf("stopping follower %d of %s-0 (leader %d)", follower, topic, leader)
	c.Node(follower).Stop()
	testkit.CheckFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		if got := mustMetric(t, lg, "fjord_broker_under_replicated_partitions", nil); got < 1 {
			return fmt.Errorf("leader reports %v under-replicated partitions with a follower down", got)
		}
		if got := mustMetric(t, lg, "fjord_broker_isr_shrinks_total", nil); got <= shrinks {
			return fmt.Errorf("ISR shrinks %v, was %v", got, shrinks)
		}
		if got := clusterSum("fjord_controller_active_brokers"); got != 2 {
			return fmt.Errorf("%v active brokers with one stopped", got)
		}
		return nil
	})
	if got := clusterSum("fjord_broker_offline_partitions"); got != 0 {
		t.Errorf("%v offline partitions: every partition still has a leader", got)
	}

	// Records the follower misses, more than a fetch carries, and a
	// leader-side throttle that lets it copy about a fetch's worth.
	cl := testkit.Client(t, c.Bootstrap(), kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(kgo.NoCompression()))
	for i := range 3000 {
		cl.Produce(ctx, &kgo.Record{Value: bytes.Repeat([]byte{byte(i)}, 1000)}, nil)
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	alter := func(rs kadm.AlterConfigsResponses, err error) {
		t.Helper()
		for _, r := range rs {
			if err == nil {
				err = r.Err
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	alter(adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "leader.replication.throttled.replicas", Value: kadm.StringPtr("*")}}, topic))
	alter(adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "leader.replication.throttled.rate", Value: kadm.StringPtr("1")}}, leader))

	c.Node(follower).Start()
	h := api.New(nil)
	h.AddReadyCheck("broker", c.Node(follower).Server.ReadyError)
	// Its metadata may show it fenced for a moment after it started;
	// then it is unfenced and still out of the ISR, and stays so.
	var body string
	testkit.CheckFor(t, 30*time.Second, 10*time.Millisecond, func() error {
		var code int
		code, body = get(t, h, "/readyz")
		if code == http.StatusOK {
			t.Fatalf("/readyz 200 for a follower held out of the ISR: %s", body)
		}
		if !strings.Contains(body, "catching up") {
			return fmt.Errorf("/readyz %d %s", code, body)
		}
		return nil
	})
	if !strings.Contains(body, topic+"-0") || !strings.Contains(body, `"failing":["broker"]`) {
		t.Fatalf("/readyz of a follower held out of the ISR does not name the partition: %s", body)
	}
	t.Logf("/readyz while catching up: %s", strings.TrimSpace(body))
	time.Sleep(500 * time.Millisecond)
	if code, body := get(t, h, "/readyz"); code != http.StatusServiceUnavailable {
		t.Fatalf("/readyz %d %s while the throttle still holds the follower back", code, body)
	}

	alter(adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.DeleteConfig, Name: "leader.replication.throttled.rate"}}, leader))
	testkit.CheckFor(t, 60*time.Second, 50*time.Millisecond, func() error {
		if code, body := get(t, h, "/readyz"); code != http.StatusOK {
			return fmt.Errorf("/readyz %d %s", code, body)
		}
		return nil
	})
	testkit.CheckFor(t, 30*time.Second, 20*time.Millisecond, func() error {
		if got := mustMetric(t, lg, "fjord_broker_isr_expands_total", nil); got <= expands {
			return fmt.Errorf("ISR expands %v, was %v", got, expands)
		}
		if got := mustMetric(t, lg, "fjord_broker_under_replicated_partitions", nil); got != 0 {
			return fmt.Errorf("%v under-replicated partitions after the follower caught up", got)
		}
		return nil
	})
}
