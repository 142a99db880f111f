package testkit

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestProcessClusterKafka runs the harness against Apache Kafka 4.4: three
// combined nodes with every link through a fault proxy. Isolating a
// partition's leader must move the leadership to another node (the
// isolated node loses its controller session), and after Heal the node
// comes back unfenced. This checks the harness's addressing scheme on the
// reference implementation. Needs FJORD_KAFKA_TESTS=1 and the jars from
// `scripts/kafka.sh fetch`.
func TestProcessClusterKafka(t *testing.T) {
	if os.Getenv("FJORD_KAFKA_TESTS") == "" {
		t.Skip("needs Apache Kafka 4.4 JVMs: set FJORD_KAFKA_TESTS=1 (after scripts/kafka.sh fetch)")
	}
	c := StartProcessCluster(t, ProcessClusterOptions{Kafka: true, Faults: true})
	c.WaitReady(t, 2*time.Minute)
	ctl := c.ActiveController(t)
	if ctl < 1 || ctl > 3 {
		t.Fatalf("active controller %d", ctl)
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Seeds()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := adm.CreateTopic(ctx, 1, 3, map[string]*string{"min.insync.replicas": kadm.StringPtr("2")}, "harness"); err != nil {
		t.Fatal(err)
	}
	var leader int32 = -1
	CheckFor(t, 30*time.Second, 100*time.Millisecond, func() error {
		if leader = c.LeaderOf(t, "harness", 0); leader < 0 {
			return fmt.Errorf("no leader yet")
		}
		return nil
	})

	c.Node(leader).Isolate()
	other := leader%3 + 1
	CheckFor(t, 30*time.Second, 200*time.Millisecond, func() error {
		l, err := leaderOf(c.Node(other).ClientAddr, "harness", 0)
		if err != nil {
			return err
		}
		if l == leader || l < 0 {
			return fmt.Errorf("node %d still sees leader %d", other, l)
		}
		return nil
	})
	c.Node(leader).Heal()
	c.WaitReady(t, time.Minute)

	// Kill and restart a node: the cluster is ready again afterwards.
	c.Node(other).Kill()
	if c.Node(other).Running() {
		t.Fatal("node still running after Kill")
	}
	c.Node(other).Restart()
	c.WaitReady(t, time.Minute)
}
