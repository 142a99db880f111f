package source

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/internal/testkit"
	"github.com/fjordhq/fjord/mirror/policy"
)

// Active-active with identity names: A and B both write "orders", each
// mirrors into the other under the same name (a worker per target), and
// every record ends up exactly once on both sides, in the partition it
// was written to, with nothing sent back to where it came from.
func TestIdentityActiveActive(t *testing.T) {
	a, b := startCluster(t, "a"), startCluster(t, "b")
	a.createTopic(t, "orders", 2, nil)
	b.createTopic(t, "orders", 2, nil)
	write := func(c *cluster, from, n int) {
		var rs []*kgo.Record
		for i := from; i < from+n; i++ {
			rs = append(rs, &kgo.Record{Topic: "orders", Partition: int32(i % 2), Key: []byte(fmt.Sprint(i)),
				Value: []byte(fmt.Sprintf("%s-%d", c.alias, i)), Headers: []kgo.RecordHeader{{Key: "app", Value: []byte("x")}}})
		}
		c.produce(t, rs...)
	}
	write(a, 0, 20)
	write(b, 0, 20)

	identity := []string{"replication.policy.class", "IdentityReplicationPolicy", "topics", "orders"}
	wa, wb := startWorker(t, a, ""), startWorker(t, b, "")
	wb.Create(t, mirrorConfig("a-to-b", a, b, identity...))
	wa.Create(t, mirrorConfig("b-to-a", b, a, identity...))

	// check waits until each cluster holds exactly the records written to
	// either cluster, each once, with the provenance of its origin.
	check := func(n int) {
		t.Helper()
		for _, c := range []*cluster{a, b} {
			testkit.CheckFor(t, 20*time.Second, 200*time.Millisecond, func() error {
				parts, err := c.readAll(t, "orders")
				if err != nil {
					return err
				}
				seen := map[string]int{}
				for p, rs := range parts {
					for _, r := range rs {
						v := string(r.Value)
						seen[v]++
						origin, i, _ := strings.Cut(v, "-")
						if want := fmt.Sprint(i); string(r.Key) != want {
							return fmt.Errorf("%s: %s has key %s", c.alias, v, r.Key)
						}
						var n int
						fmt.Sscan(i, &n)
						if int32(n%2) != p {
							return fmt.Errorf("%s: %s landed in partition %d", c.alias, v, p)
						}
						prov, _ := lastHeader(r, policy.ProvenanceHeader)
						switch {
						case origin == c.alias && prov != nil:
							return fmt.Errorf("%s: local record %s has provenance %q", c.alias, v, prov)
						case origin != c.alias && string(prov) != origin:
							return fmt.Errorf("%s: record %s from %s has provenance %q", c.alias, v, origin, prov)
						}
						if h, _ := lastHeader(r, "app"); string(h) != "x" {
							return fmt.Errorf("%s: %s lost its header", c.alias, v)
						}
					}
				}
				for _, origin := range []string{"a", "b"} {
					for i := range n {
						v := fmt.Sprintf("%s-%d", origin, i)
						if seen[v] != 1 {
							return fmt.Errorf("%s holds %s %d times", c.alias, v, seen[v])
						}
					}
				}
				if len(seen) != 2*n {
					return fmt.Errorf("%s holds %d distinct records, want %d", c.alias, len(seen), 2*n)
				}
				return nil
			})
		}
	}
	check(20)
	write(a, 20, 10)
	write(b, 20, 10)
	check(30)
	// Let any loop show: a record sent back would now be a duplicate.
	time.Sleep(time.Second)
	check(30)
	for _, w := range []interface{ Failed() error }{wa, wb} {
		if err := w.Failed(); err != nil {
			t.Fatal(err)
		}
	}
	// A config changed on one side reaches the other and is not undone by
	// the sync running the other way.
	alter := []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: kadm.StringPtr("111111111")}}
	if _, err := a.adm.AlterTopicConfigs(context.Background(), alter, "orders"); err != nil {
		t.Fatal(err)
	}
	testkit.CheckFor(t, 10*time.Second, 100*time.Millisecond, func() error {
		if v, _ := b.topicConfig(t, "orders", "retention.ms"); v != "111111111" {
			return fmt.Errorf("b's orders has retention.ms %s", v)
		}
		return nil
	})
	time.Sleep(2500 * time.Millisecond) // a few syncs both ways
	for _, c := range []*cluster{a, b} {
		if v, _ := c.topicConfig(t, "orders", "retention.ms"); v != "111111111" {
			t.Errorf("%s's orders went back to retention.ms %s", c.alias, v)
		}
	}

	// The records that came back to their origin were counted as skipped.
	skipped := 0.0
	metrics.mu.Lock()
	for k, m := range metrics.parts {
		if k.topic == "orders" {
			skipped += float64(m.skipped.Load())
		}
	}
	metrics.mu.Unlock()
	if skipped < 60 {
		t.Errorf("%v records skipped by provenance, want at least the 60 mirrored ones seen again", skipped)
	}
}

func lastHeader(r *kgo.Record, key string) ([]byte, bool) {
	for i := len(r.Headers) - 1; i >= 0; i-- {
		if r.Headers[i].Key == key {
			return r.Headers[i].Value, true
		}
	}
	return nil, false
}
