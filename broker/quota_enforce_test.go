package broker_test

// Client quota enforcement with real clients: a franz-go producer and
// consumer over producer_byte_rate / consumer_byte_rate are slowed to
// about their quota and see throttle_time_ms (OnBrokerThrottle); a client
// without a quota is not throttled; kafka-python sees the throttle too;
// on a three-node cluster an alter sent to any node is forwarded and
// every broker enforces it.

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/internal/testkit"
)

// throttleHook records the throttles brokers imposed on a client.
type throttleHook struct {
	mu      sync.Mutex
	total   time.Duration
	count   int
	brokers map[int32]bool
}

func (h *throttleHook) OnBrokerThrottle(meta kgo.BrokerMetadata, d time.Duration, after bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.brokers == nil {
		h.brokers = map[int32]bool{}
	}
	if d > 0 {
		h.total += d
		h.count++
		h.brokers[meta.NodeID] = true
	}
}

func (h *throttleHook) get() (time.Duration, int, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.total, h.count, len(h.brokers)
}

// Quota windows small enough that a test exceeds the burst quickly:
// 2 samples of 1 s, so a client may send one second's quota at once.
var quotaWindowProps = map[string]string{"quota.window.num": "2", "quota.window.size.seconds": "1"}

const (
	quotaRate   = 512 << 10 // bytes/s
	quotaTotal  = 2 << 20   // bytes produced
	quotaRecord = 16 << 10
)

func randomValue(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// produceAll produces quotaTotal bytes in quotaRecord records, waiting
// for every ack, and returns how long it took.
func produceAll(t *testing.T, ctx context.Context, cl *kgo.Client, topic string) time.Duration {
	t.Helper()
	start := time.Now()
	var failed atomic.Value
	var wg sync.WaitGroup
	for range quotaTotal / quotaRecord {
		wg.Add(1)
		cl.Produce(ctx, &kgo.Record{Topic: topic, Value: randomValue(quotaRecord)}, func(_ *kgo.Record, err error) {
			if err != nil {
				failed.Store(err)
			}
			wg.Done()
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		t.Fatalf("produce: %v", err)
	}
	return time.Since(start)
}

func quotaProducer(t *testing.T, addr, clientID string, hook *throttleHook) *kgo.Client {
	return testkit.Client(t, addr, kgo.ClientID(clientID), kgo.WithHooks(hook),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(64<<10),
		kgo.ProducerLinger(0), kgo.DefaultProduceTopic("q"))
}

// minElapsed is the least time quotaTotal bytes can take at quotaRate
// when a client may first send up to two windows' worth unthrottled (the
// burst the window allows, and the last request whose throttle comes
// after its answer).
func minElapsed() time.Duration {
	return time.Duration(float64(quotaTotal-2*quotaRate) / quotaRate * float64(time.Second))
}

func TestQuotaProduceAndFetchThrottled(t *testing.T) {
	testkit.SkipShort(t, "rate-limited transfers take seconds")
	b := testkit.StartBroker(t, quotaWindowProps)
	adm := testkit.Admin(t, b.Addr)
	ctx := testkit.Context(t, 90*time.Second)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "q"); err != nil {
		t.Fatal(err)
	}
	mustAlterQuotas(t, adm,
		kadm.AlterClientQuotaEntry{Entity: kadm.ClientQuotaEntity{qClient("slow-producer")}, Ops: []kadm.AlterClientQuotaOp{setQuota("producer_byte_rate", quotaRate)}},
		kadm.AlterClientQuotaEntry{Entity: kadm.ClientQuotaEntity{qClient("slow-consumer")}, Ops: []kadm.AlterClientQuotaOp{setQuota("consumer_byte_rate", quotaRate)}},
	)

	// A producer without a quota is never throttled.
	free := &throttleHook{}
	produceAll(t, ctx, quotaProducer(t, b.Addr, "free", free), "q")
	if d, n, _ := free.get(); n != 0 {
		t.Fatalf("unquoted producer throttled %d times (%v)", n, d)
	}

	slow := &throttleHook{}
	elapsed := produceAll(t, ctx, quotaProducer(t, b.Addr, "slow-producer", slow), "q")
	d, n, _ := slow.get()
	t.Logf("2 MiB at 512 KiB/s: %v, %d throttles totalling %v", elapsed, n, d)
	if n == 0 {
		t.Fatal("producer over producer_byte_rate never saw throttle_time_ms")
	}
	if elapsed < minElapsed() {
		t.Fatalf("2 MiB produced in %v at a 512 KiB/s quota; at least %v expected", elapsed, minElapsed())
	}

	// Consumers: the topic now holds 4 MiB; read 2 MiB of it.
	consume := func(clientID string, hook *throttleHook) time.Duration {
		cl := testkit.Client(t, b.Addr, kgo.ClientID(clientID), kgo.WithHooks(hook), kgo.ConsumeTopics("q"),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		start := time.Now()
		got := 0
		for got < quotaTotal {
			fs := cl.PollFetches(ctx)
			if err := fs.Err0(); err != nil {
				t.Fatalf("%s poll: %v", clientID, err)
			}
			fs.EachRecord(func(r *kgo.Record) { got += len(r.Value) })
		}
		return time.Since(start)
	}
	freeC := &throttleHook{}
	consume("free-consumer", freeC)
	if d, n, _ := freeC.get(); n != 0 {
		t.Fatalf("unquoted consumer throttled %d times (%v)", n, d)
	}
	slowC := &throttleHook{}
	elapsed = consume("slow-consumer", slowC)
	d, n, _ = slowC.get()
	t.Logf("2 MiB consumed at 512 KiB/s: %v, %d throttles totalling %v", elapsed, n, d)
	if n == 0 {
		t.Fatal("consumer over consumer_byte_rate never saw throttle_time_ms")
	}
	if elapsed < minElapsed() {
		t.Fatalf("2 MiB consumed in %v at a 512 KiB/s quota; at least %v expected", elapsed, minElapsed())
	}

	// The metrics name the throttled clients only.
	g := b.Server.Gatherer()
	for _, m := range []struct {
		name string
		kind string
		id   string
	}{
		{"fjord_quota_throttle_time_ms_total", "produce", "slow-producer"},
		{"fjord_quota_bytes_total", "produce", "slow-producer"},
		{"fjord_quota_throttle_time_ms_total", "fetch", "slow-consumer"},
		{"fjord_quota_bytes_total", "fetch", "slow-consumer"},
	} {
		if v, ok := metricValue(t, g, m.name, map[string]string{"quota_type": m.kind, "user": "", "client_id": m.id}); !ok || v <= 0 {
			t.Errorf("%s{%s,%s} = %v (present %v), want > 0", m.name, m.kind, m.id, v, ok)
		}
	}
	for _, id := range []string{"free", "free-consumer"} {
		if _, ok := metricValue(t, g, "fjord_quota_bytes_total", map[string]string{"client_id": id}); ok {
			t.Errorf("a quota series exists for %s, which has no quota", id)
		}
	}
}

// TestQuotaUserDefaultPython: a default user quota applies to the
// PLAINTEXT principal (User:ANONYMOUS); kafka-python's producer is
// slowed and its throttle-time metric records it.
func TestQuotaUserDefaultPython(t *testing.T) {
	testkit.SkipShort(t, "rate-limited transfers take seconds")
	b := testkit.StartBroker(t, quotaWindowProps)
	adm := testkit.Admin(t, b.Addr)
	ctx := testkit.Context(t, 90*time.Second)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "q"); err != nil {
		t.Fatal(err)
	}
	mustAlterQuotas(t, adm, kadm.AlterClientQuotaEntry{Entity: kadm.ClientQuotaEntity{qUserDefault},
		Ops: []kadm.AlterClientQuotaOp{setQuota("producer_byte_rate", quotaRate)}})
	out := testkit.Python(t, 90*time.Second, `
import os, sys, time
from kafka import KafkaProducer
p = KafkaProducer(bootstrap_servers=sys.argv[1], client_id="py", batch_size=65536, linger_ms=0)
start = time.time()
for i in range(128):
    p.send("q", os.urandom(16384))
p.flush()
elapsed = time.time() - start
m = p.metrics()
tt = max(v.get("produce-throttle-time-max", 0) or 0 for v in m.values())
print("elapsed=%.2f throttle_max=%.0f" % (elapsed, tt))
`, b.Addr)
	var elapsed, throttle float64
	if _, err := fmt.Sscanf(strings.TrimSpace(out), "elapsed=%f throttle_max=%f", &elapsed, &throttle); err != nil {
		t.Fatalf("python output %q: %v", out, err)
	}
	t.Logf("kafka-python: %s", strings.TrimSpace(out))
	if throttle <= 0 {
		t.Errorf("kafka-python's produce-throttle-time-max is %v, want > 0", throttle)
	}
	if time.Duration(elapsed*float64(time.Second)) < minElapsed() {
		t.Errorf("kafka-python produced 2 MiB in %.2fs under a 512 KiB/s default user quota; at least %v expected", elapsed, minElapsed())
	}
}

// TestQuotaClusterForwardedAndEnforced: an AlterClientQuotas sent to
// each node (non-controllers forward it) reaches every node's image, and
// every broker throttles the client.
func TestQuotaClusterForwardedAndEnforced(t *testing.T) {
	testkit.SkipShort(t, "3-node cluster test")
	c := testkit.StartInProcCluster(t, 3, quotaWindowProps)
	ctx := testkit.Context(t, 120*time.Second)
	for _, n := range c.Nodes {
		req := kmsg.NewPtrAlterClientQuotasRequest()
		name := fmt.Sprintf("via-node-%d", n.ID)
		rate := float64(quotaRate)
		if n.ID == 1 {
			name = "slow-producer"
		}
		req.Entries = []kmsg.AlterClientQuotasRequestEntry{{
			Entity: []kmsg.AlterClientQuotasRequestEntryEntity{{Type: "client-id", Name: &name}},
			Ops:    []kmsg.AlterClientQuotasRequestEntryOp{{Key: "producer_byte_rate", Value: rate}},
		}}
		testkit.CheckFor(t, 30*time.Second, 100*time.Millisecond, func() error {
			resp, err := testkit.RawRequest(n.Addr, req, 5*time.Second)
			if err != nil {
				return fmt.Errorf("alter via node %d: %w", n.ID, err)
			}
			if code := resp.(*kmsg.AlterClientQuotasResponse).Entries[0].ErrorCode; code != 0 {
				return fmt.Errorf("alter via node %d: %w", n.ID, kerr.ErrorForCode(code))
			}
			return nil
		})
	}
	testkit.CheckFor(t, 20*time.Second, 100*time.Millisecond, func() error {
		for _, n := range c.Nodes {
			if q := n.Server.Image().ClientQuotas; q == nil || len(q.Entities) != 3 {
				return fmt.Errorf("node %d has %v", n.ID, q)
			}
		}
		return nil
	})

	adm := kadm.NewClient(testkit.Client(t, c.Bootstrap()))
	if _, err := adm.CreateTopic(ctx, 3, 1, nil, "q"); err != nil {
		t.Fatal(err)
	}
	// Three partitions, one per broker (replication factor 1, spread by
	// the controller): every broker sees a third of the traffic, so the
	// client sends 3x the single-broker total to exceed each one's quota.
	hook := &throttleHook{}
	cl := quotaProducer(t, c.Bootstrap(), "slow-producer", hook)
	for range 3 {
		produceAll(t, ctx, cl, "q")
	}
	d, n, brokers := hook.get()
	t.Logf("6 MiB over 3 brokers: %d throttles totalling %v from %d brokers", n, d, brokers)
	if brokers != 3 {
		t.Fatalf("throttled by %d brokers, want all 3", brokers)
	}
}
