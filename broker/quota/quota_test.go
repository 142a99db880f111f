package quota

import (
	"math"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/fjordhq/fjord/broker/metadata"
)

func named(u, c string) metadata.QuotaEntity {
	var e metadata.QuotaEntity
	switch u {
	case "":
	case "<default>":
		e.User = metadata.QuotaDefault
	default:
		e.User, e.UserName = metadata.QuotaNamed, u
	}
	switch c {
	case "":
	case "<default>":
		e.Client = metadata.QuotaDefault
	default:
		e.Client, e.ClientName = metadata.QuotaNamed, c
	}
	return e
}

func quotas(key string, m map[metadata.QuotaEntity]float64) *metadata.ClientQuotas {
	q := &metadata.ClientQuotas{Entities: map[metadata.QuotaEntity]map[string]float64{}}
	for e, v := range m {
		q.Entities[e] = map[string]float64{key: v, "request_percentage": 7}
	}
	return q
}

// TestPrecedence walks Kafka's eight levels: each level removed in turn
// hands the client to the next one (ClientQuotaManagerTest's
// testQuotaConfigPrecedence).
func TestPrecedence(t *testing.T) {
	levels := []struct {
		entity metadata.QuotaEntity
		tags   Tags
	}{
		{named("alice", "app"), Tags{"alice", "app"}},
		{named("alice", "<default>"), Tags{"alice", "app"}},
		{named("alice", ""), Tags{"alice", ""}},
		{named("<default>", "app"), Tags{"alice", "app"}},
		{named("<default>", "<default>"), Tags{"alice", "app"}},
		{named("<default>", ""), Tags{"alice", ""}},
		{named("", "app"), Tags{"", "app"}},
		{named("", "<default>"), Tags{"", "app"}},
	}
	for i := range levels {
		set := map[metadata.QuotaEntity]float64{}
		for j := i; j < len(levels); j++ {
			set[levels[j].entity] = float64(1000 * (j + 1))
		}
		m := NewManager("producer_byte_rate", "produce", Config{}, nil)
		m.Update(quotas("producer_byte_rate", set))
		tags, bound, ok := m.Quota("alice", "app")
		if !ok || bound != float64(1000*(i+1)) || tags != levels[i].tags {
			t.Errorf("level %d (%v): got tags %+v bound %v ok %v, want %+v %v", i+1, levels[i].entity, tags, bound, ok, levels[i].tags, 1000*(i+1))
		}
	}
	// Other users and client ids fall to the defaults, not to alice's.
	m := NewManager("producer_byte_rate", "produce", Config{}, nil)
	m.Update(quotas("producer_byte_rate", map[metadata.QuotaEntity]float64{
		named("alice", ""): 10, named("", "<default>"): 20,
	}))
	if _, b, ok := m.Quota("bob", "x"); !ok || b != 20 {
		t.Errorf("bob: bound %v ok %v, want the client default 20", b, ok)
	}
	if _, b, ok := m.Quota("alice", "x"); !ok || b != 10 {
		t.Errorf("alice: bound %v ok %v, want 10", b, ok)
	}
	// A quota on another key does not apply.
	f := NewManager("consumer_byte_rate", "fetch", Config{}, nil)
	f.Update(quotas("producer_byte_rate", map[metadata.QuotaEntity]float64{named("alice", ""): 10}))
	if f.Active() {
		t.Error("consumer manager active with only a producer quota")
	}
	if _, _, ok := m.Quota("", ""); ok {
		t.Error("a client with neither user nor client id matched a quota")
	}
}

// TestThrottleTime checks QuotaUtils.throttleTime over Rate's window:
// the first sample counts as samples-1 full windows.
func TestThrottleTime(t *testing.T) {
	m := NewManager("producer_byte_rate", "produce", Config{Samples: 11, Window: time.Second}, nil)
	m.Update(quotas("producer_byte_rate", map[metadata.QuotaEntity]float64{named("", "app"): 100}))
	t0 := time.UnixMilli(1_000_000)
	// 1000 bytes over a 10 s window is 100 B/s: at the quota, not over.
	if d := m.Record("u", "app", 1000, t0, false); d != 0 {
		t.Fatalf("at quota: throttle %v, want 0", d)
	}
	// 1000 more: 200 B/s; (200-100)/100 * 10 s = 10 s.
	if d := m.Record("u", "app", 1000, t0, false); d != 10*time.Second {
		t.Fatalf("throttle %v, want 10s", d)
	}
	// 5 s later the window is 10 s still (5 s elapsed < 10 full windows):
	// 2000+500 bytes / 10 s = 250 B/s → 15 s.
	if d := m.Record("u", "app", 500, t0.Add(5*time.Second), false); d != 15*time.Second {
		t.Fatalf("throttle %v, want 15s", d)
	}
	// After samples*window idle, every sample is purged.
	if d := m.Record("u", "app", 10, t0.Add(30*time.Second), false); d != 0 {
		t.Fatalf("after idle: throttle %v, want 0", d)
	}
	// Another client id has no quota.
	if d := m.Record("u", "other", 1e9, t0, false); d != 0 {
		t.Fatalf("unquoted client throttled %v", d)
	}
}

// TestUndo: a throttled fetch's bytes are taken back (unrecordQuotaSensor),
// so the client is not charged for the empty answer it got.
func TestUndo(t *testing.T) {
	m := NewManager("consumer_byte_rate", "fetch", Config{Samples: 2, Window: time.Second}, nil)
	m.Update(quotas("consumer_byte_rate", map[metadata.QuotaEntity]float64{named("<default>", ""): 1000}))
	t0 := time.UnixMilli(5_000_000)
	if d := m.Record("u", "c", 5000, t0, true); d == 0 {
		t.Fatal("5000 bytes against 1000 B/s over 1 s not throttled")
	}
	// The 5000 were undone: 900 more is within the quota.
	if d := m.Record("u", "c", 900, t0, true); d != 0 {
		t.Fatalf("after undo: throttle %v, want 0", d)
	}
	if got := m.MaxValueInWindow("u", "c"); got != 1000 {
		t.Fatalf("MaxValueInWindow %v, want 1000 (quota * (samples-1) * window)", got)
	}
	if got := m.MaxValueInWindow("", ""); !math.IsInf(got, 1) {
		t.Fatalf("MaxValueInWindow without quota %v, want +Inf", got)
	}
}

// TestSteadyRate: a client sending at twice its quota, obeying every
// throttle, ends up at the quota.
func TestSteadyRate(t *testing.T) {
	m := NewManager("producer_byte_rate", "produce", Config{}, nil)
	m.Update(quotas("producer_byte_rate", map[metadata.QuotaEntity]float64{named("u", ""): 1000}))
	now := time.UnixMilli(10_000_000)
	start := now
	var sent float64
	for now.Sub(start) < 120*time.Second {
		sent += 500
		d := m.Record("u", "any", 500, now, false)
		now = now.Add(250*time.Millisecond + d)
	}
	rate := sent / now.Sub(start).Seconds()
	if rate > 1100 || rate < 900 {
		t.Fatalf("steady rate %.0f B/s, want about the 1000 B/s quota", rate)
	}
}

func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

func seriesCount(t *testing.T, reg *prometheus.Registry, name string) int {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return len(mf.GetMetric())
		}
	}
	return 0
}

func TestSensorsExpireAndMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	mt := NewMetrics(reg)
	m := NewManager("producer_byte_rate", "produce", Config{Samples: 2, Window: time.Second, SensorExpiry: time.Minute}, mt)
	m.Update(quotas("producer_byte_rate", map[metadata.QuotaEntity]float64{named("", "<default>"): 100}))
	t0 := time.UnixMilli(20_000_000)
	m.Record("u", "a", 50, t0, false)
	m.Record("u", "b", 500, t0, false)
	if n := m.Sensors(); n != 2 {
		t.Fatalf("%d sensors, want 2", n)
	}
	if got := counterValue(t, mt.bytes.WithLabelValues("produce", "", "b")); got != 500 {
		t.Fatalf("bytes for b %v, want 500", got)
	}
	if got := counterValue(t, mt.throttleMs.WithLabelValues("produce", "", "b")); got != 4000 {
		t.Fatalf("throttle ms for b %v, want (500-100)/100*1000 = 4000", got)
	}
	// a is used again, b is idle past the expiry.
	m.Record("u", "a", 1, t0.Add(59*time.Second), false)
	m.Record("u", "a", 1, t0.Add(91*time.Second), false) // sweeps run at most every 30 s
	if n := m.Sensors(); n != 1 {
		t.Fatalf("%d sensors after expiry, want 1", n)
	}
	if n := seriesCount(t, reg, "fjord_quota_bytes_total"); n != 1 {
		t.Fatalf("%d byte series after expiry, want 1", n)
	}
	// Quotas removed: nothing is kept.
	m.Update(nil)
	if m.Active() || m.Sensors() != 0 {
		t.Fatal("manager still active after the quotas were removed")
	}
	if d := m.Record("u", "a", 1e12, t0, false); d != 0 {
		t.Fatalf("throttled %v without quotas", d)
	}
}

// TestNoQuotaNoAlloc: the produce path must not allocate when no quota
// is configured.
func TestNoQuotaNoAlloc(t *testing.T) {
	m := NewManager("producer_byte_rate", "produce", Config{}, NewMetrics(nil))
	var q *metadata.ClientQuotas
	now := time.Now()
	allocs := testing.AllocsPerRun(1000, func() {
		m.Update(q)
		if m.Active() {
			t.Fatal("active")
		}
		m.Record("user", "client", 1000, now, false)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per request without quotas, want 0", allocs)
	}
	// With quotas but none for this client, and with a quota hit, the
	// steady state does not allocate either (the sensor exists).
	q = quotas("producer_byte_rate", map[metadata.QuotaEntity]float64{named("", "app"): 1e12})
	m.Update(q)
	m.Record("user", "app", 1, now, false)
	allocs = testing.AllocsPerRun(1000, func() {
		m.Update(q)
		m.Record("user", "app", 1000, now, false)
		m.Record("user", "other", 1000, now, false)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per request with a quota, want 0", allocs)
	}
}

func BenchmarkRecordNoQuota(b *testing.B) {
	m := NewManager("producer_byte_rate", "produce", Config{}, nil)
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		m.Update(nil)
		m.Record("user", "client", 1000, now, false)
	}
}

func BenchmarkRecordQuota(b *testing.B) {
	m := NewManager("producer_byte_rate", "produce", Config{}, NewMetrics(prometheus.NewRegistry()))
	q := quotas("producer_byte_rate", map[metadata.QuotaEntity]float64{named("user", ""): 1e15})
	m.Update(q)
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		m.Update(q)
		m.Record("user", "client", 1000, now, false)
	}
}
