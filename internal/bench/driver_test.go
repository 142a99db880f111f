package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// newCluster is an in-process kfake with one 8-partition topic: the
// drivers' own logic is under test here, the broker is incidental.
func newCluster(t *testing.T, topic string) string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(Partitions, topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()[0]
}

func TestDriversRoundTrip(t *testing.T) {
	addr := newCluster(t, "t")
	ctx := context.Background()
	for _, acks := range []string{"1", "all"} {
		cfg := DriverConfig{Brokers: addr, Topic: "t", Records: 3000, Warmup: 300, Size: 100, Acks: acks, Timeout: time.Minute}
		res, err := RunProduce(ctx, cfg)
		if err != nil {
			t.Fatalf("acks=%s: %v", acks, err)
		}
		if res.Records != 3000 || res.Bytes != 300_000 || res.RecordsPerSec <= 0 || res.MBPerSec <= 0 {
			t.Fatalf("acks=%s: produce result %+v", acks, res)
		}
	}

	// Consume expects everything both produce runs wrote; without a
	// warm-up every record is timed.
	res, err := RunConsume(ctx, DriverConfig{Brokers: addr, Topic: "t", Records: 6600, Size: 100, Acks: "1", Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if res.Records != 6600 || res.Bytes != 660_000 || res.RecordsPerSec <= 0 {
		t.Fatalf("consume result %+v", res)
	}

	lat, err := RunLatency(ctx, DriverConfig{Brokers: addr, Topic: "t", Records: 200, Warmup: 20, Size: 100, Acks: "all", Rate: 1000, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if lat.Records != 200 || lat.P50Ms <= 0 || lat.P99Ms < lat.P50Ms || lat.MaxMs < lat.P99Ms {
		t.Fatalf("latency result %+v", lat)
	}
	// 220 records at 1000/s take at least 219 ms to send.
	if lat.Seconds < 0.2 || lat.RateHz > 1100 {
		t.Fatalf("latency driver did not pace at 1000/s: %+v", lat)
	}
}

func TestConsumeTimedAfterWarmup(t *testing.T) {
	// 8 partitions × ~2 MB: more than one 1 MiB fetch per partition, so
	// some records arrive after the warm-up and are timed.
	addr := newCluster(t, "big")
	ctx := context.Background()
	if _, err := RunProduce(ctx, DriverConfig{Brokers: addr, Topic: "big", Records: 16_000, Size: 1024, Acks: "1", Timeout: time.Minute}); err != nil {
		t.Fatal(err)
	}
	res, err := RunConsume(ctx, DriverConfig{Brokers: addr, Topic: "big", Records: 15_000, Warmup: 1_000, Size: 1024, Acks: "1", Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if res.Records <= 0 || res.Records > 15_000 || res.Bytes != res.Records*1024 || res.MBPerSec <= 0 {
		t.Fatalf("consume result %+v", res)
	}
}

func TestConsumeShortTopicFails(t *testing.T) {
	addr := newCluster(t, "short")
	ctx := context.Background()
	if _, err := RunProduce(ctx, DriverConfig{Brokers: addr, Topic: "short", Records: 100, Size: 10, Acks: "1", Timeout: time.Minute}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := RunConsume(ctx, DriverConfig{Brokers: addr, Topic: "short", Records: 200, Size: 10, Acks: "1", Timeout: 2 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "100 of 200 records") {
		t.Fatalf("consume of a short topic: %v", err)
	}
	if time.Since(start) > 20*time.Second {
		t.Fatal("consume ignored its timeout")
	}
}

func TestDriverConfigValidate(t *testing.T) {
	ok := DriverConfig{Brokers: "b", Topic: "t", Records: 1, Size: 1, Acks: "all", Timeout: time.Second}
	if err := ok.validate(); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(*DriverConfig){
		"brokers": func(c *DriverConfig) { c.Brokers = "" },
		"topic":   func(c *DriverConfig) { c.Topic = "" },
		"records": func(c *DriverConfig) { c.Records = 0 },
		"warmup":  func(c *DriverConfig) { c.Warmup = -1 },
		"size":    func(c *DriverConfig) { c.Size = 0 },
		"acks":    func(c *DriverConfig) { c.Acks = "0" },
		"timeout": func(c *DriverConfig) { c.Timeout = 0 },
	} {
		c := ok
		mut(&c)
		if err := c.validate(); err == nil {
			t.Errorf("%s: invalid config accepted", name)
		}
	}
}

func TestPayloadDistinct(t *testing.T) {
	p := newPayload(100)
	seen := map[string]bool{}
	for i := range 10_000 {
		v := p.value(i)
		if len(v) != 100 || cap(v) != 100 {
			t.Fatalf("value %d has len %d cap %d", i, len(v), cap(v))
		}
		seen[string(v)] = true
	}
	if len(seen) != 10_000 {
		t.Fatalf("%d distinct values of 10000", len(seen))
	}
}
