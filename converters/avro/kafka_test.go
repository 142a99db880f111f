package avro

import (
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/api/schemaregistry"
	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/internal/testkit"
)

// Records converted by one converter, produced to a real broker with the
// registry keeping its schemas in that broker's _schemas topic, consumed
// and decoded by another converter instance (empty caches).
func TestThroughKafka(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	srv, err := schemaregistry.New(schemaregistry.Config{Bootstrap: []string{b.Addr}, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testkit.Context(t, 60*time.Second)
	if err := srv.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	if _, err := srv.WaitLeader(ctx); err != nil {
		t.Fatal(err)
	}
	props := map[string]string{KeyRegistryURL: hs.URL}
	keyConv, valConv := converter(t, true, props), converter(t, false, props)

	const n = 100
	cl := testkit.Client(t, b.Addr, kgo.DefaultProduceTopic("users"), kgo.AllowAutoTopicCreation())
	var want []*connect.Struct
	for i := range n {
		v := connect.NewStructValue(userSchema).MustPut("id", int64(i)).MustPut("name", fmt.Sprintf("user-%d", i)).MustPut("active", i%2 == 0)
		if i%3 == 0 {
			v.MustPut("email", fmt.Sprintf("u%d@example.com", i))
		}
		want = append(want, v)
		k, err := keyConv.FromConnectData("users", nil, connect.Int64Schema, int64(i))
		if err != nil {
			t.Fatal(err)
		}
		val, err := valConv.FromConnectData("users", nil, userSchema, v)
		if err != nil {
			t.Fatal(err)
		}
		if err := cl.ProduceSync(ctx, &kgo.Record{Key: k, Value: val}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	reader := converter(t, false, props)
	keyReader := converter(t, true, props)
	cons := testkit.Client(t, b.Addr, kgo.ConsumeTopics("users"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	got := 0
	for got < n {
		fs := cons.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d: %v", got, n, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			ks, kv, err := keyReader.ToConnectData("users", nil, r.Key)
			if err != nil {
				t.Fatal(err)
			}
			if ks.Type != connect.Int64 || kv != int64(got) {
				t.Fatalf("key %v %v, want %d", ks, kv, got)
			}
			s, v, err := reader.ToConnectData("users", nil, r.Value)
			if err != nil {
				t.Fatal(err)
			}
			if s.Name != "com.acme.User" || s.Version == nil || *s.Version != 1 {
				t.Fatalf("schema %+v", s)
			}
			if !sameValue(want[got], v) {
				t.Fatalf("record %d = %v, want %v", got, v, want[got])
			}
			got++
		})
	}
	// Both subjects live in the broker's _schemas topic.
	for _, subject := range []string{"users-key", "users-value"} {
		if _, err := srv.Registry().Version(subject, "1", false); err != nil {
			t.Errorf("%s: %v", subject, err)
		}
	}
}
