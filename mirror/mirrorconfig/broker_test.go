package mirrorconfig

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect/runtime"
	"github.com/fjordhq/fjord/internal/testkit"
)

// Two clusters; each has an "orders" topic with its own records, so where
// a client connected shows in what it reads.
func TestClientsAgainstBrokers(t *testing.T) {
	src := testkit.StartBroker(t, nil)
	dst := testkit.StartBroker(t, nil)
	props := map[string]string{
		"name": "mm", SourceClusterAlias: "a", TargetClusterAlias: "b",
		"source.cluster.bootstrap.servers": src.Addr,
		"target.cluster.bootstrap.servers": dst.Addr,
	}
	ctx := testkit.Context(t, 20*time.Second)

	for _, side := range []string{Source, Target} {
		adm, closeAdm, err := Admin(props, side)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := adm.CreateTopic(ctx, 1, 1, nil, "orders"); err != nil {
			t.Fatalf("%s: create topic: %v", side, err)
		}
		closeAdm()
	}
	produce(t, ctx, props, Source, "s0", "s1", "s2")
	produce(t, ctx, props, Target, "t0", "t1")

	if got := consume(t, ctx, props, 3); !slices.Equal(got, []string{"s0", "s1", "s2"}) {
		t.Errorf("source consumer read %q", got)
	}

	// source.consumer.* overrides source.cluster.*: pointed at the target,
	// the source consumer reads the target's records.
	redirected := withProp(props, "source.consumer.bootstrap.servers", dst.Addr)
	if got := consume(t, ctx, redirected, 2); !slices.Equal(got, []string{"t0", "t1"}) {
		t.Errorf("source consumer with source.consumer.bootstrap.servers read %q", got)
	}

	// source.consumer.auto.offset.reset=latest replaces MM2's default
	// earliest: the records already there are not read, a new one is.
	latest := withProp(props, "source.consumer.auto.offset.reset", "latest")
	cl, err := Client(latest, Source, runtime.ConsumerClient, kgo.ConsumeTopics("orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if got := poll(ctx, cl, time.Second); len(got) != 0 {
		t.Fatalf("latest consumer read existing records %q", got)
	}
	produce(t, ctx, props, Source, "s3")
	if got := pollN(t, ctx, cl, 1); !slices.Equal(got, []string{"s3"}) {
		t.Errorf("latest consumer read %q, want the new record only", got)
	}
}

func withProp(props map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for pk, pv := range props {
		if pk != k {
			out[pk] = pv
		}
	}
	return out
}

func produce(t *testing.T, ctx context.Context, props map[string]string, side string, values ...string) {
	t.Helper()
	cl, err := Client(props, side, runtime.ProducerClient)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for _, v := range values {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatalf("%s: produce: %v", side, err)
		}
	}
}

func consume(t *testing.T, ctx context.Context, props map[string]string, n int) []string {
	t.Helper()
	cl, err := Client(props, Source, runtime.ConsumerClient, kgo.ConsumeTopics("orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	return pollN(t, ctx, cl, n)
}

func pollN(t *testing.T, ctx context.Context, cl *kgo.Client, n int) []string {
	t.Helper()
	var got []string
	for len(got) < n {
		if ctx.Err() != nil {
			t.Fatalf("read %q, want %d records", got, n)
		}
		got = append(got, poll(ctx, cl, time.Second)...)
	}
	return got
}

// poll returns what one fetch round brings within d.
func poll(ctx context.Context, cl *kgo.Client, d time.Duration) []string {
	pctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var out []string
	fs := cl.PollFetches(pctx)
	fs.EachRecord(func(r *kgo.Record) { out = append(out, string(r.Value)) })
	for _, e := range fs.Errors() {
		if e.Err != context.DeadlineExceeded {
			out = append(out, fmt.Sprintf("error: %v", e.Err))
		}
	}
	return out
}
