package schemaregistry

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/internal/testkit"
)

type delegate struct {
	mu sync.RWMutex
	h  http.Handler
}

func (d *delegate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d.mu.RLock()
	h := d.h
	d.mu.RUnlock()
	h.ServeHTTP(w, r)
}

// kafkaServer starts a Kafka-backed registry on broker addr, serving
// HTTP on its advertised URL; it waits until a leader is elected.
func kafkaServer(t *testing.T, addr string) (*Server, string) {
	t.Helper()
	d := &delegate{h: http.NotFoundHandler()}
	hs := httptest.NewUnstartedServer(d)
	url := "http://" + hs.Listener.Addr().String()
	srv, err := New(Config{Bootstrap: []string{addr}, AdvertisedURL: url, Logger: quiet, WriteTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testkit.Context(t, 30*time.Second)
	if err := srv.Start(ctx); err != nil {
		t.Fatal(err)
	}
	d.mu.Lock()
	d.h = srv.Handler()
	d.mu.Unlock()
	hs.Start()
	t.Cleanup(func() { hs.Close(); srv.Close() })
	if _, err := srv.WaitLeader(ctx); err != nil {
		t.Fatal(err)
	}
	return srv, url
}

func TestConformanceKafka(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	_, base := kafkaServer(t, b.Addr)
	conformance(t, base)

	// The topic holds Confluent's records, compacted, one partition.
	adm := testkit.Admin(t, b.Addr)
	ctx := testkit.Context(t, 10*time.Second)
	cfgs, err := adm.DescribeTopicConfigs(ctx, "_schemas")
	if err != nil {
		t.Fatal(err)
	}
	rc, err := cfgs.On("_schemas", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rc.Configs {
		if c.Key == "cleanup.policy" && c.MaybeValue() != "compact" {
			t.Errorf("_schemas cleanup.policy = %s, want compact", c.MaybeValue())
		}
	}
	cl := testkit.Client(t, b.Addr, kgo.ConsumeTopics("_schemas"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	fs := cl.PollFetches(ctx)
	var first *kgo.Record
	fs.EachRecord(func(r *kgo.Record) {
		if first == nil && string(r.Key) != `{"keytype":"NOOP","magic":0}` {
			first = r
		}
	})
	if first == nil || string(first.Key) != `{"keytype":"SCHEMA","subject":"users","version":1,"magic":1}` {
		t.Fatalf("first schema record = %v", first)
	}
}

// A registry restarted on the same topic (and after a broker restart)
// serves the same ids and continues numbering after the highest.
func TestKafkaRestartKeepsIDs(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	srv, base := kafkaServer(t, b.Addr)
	c := client{t, base}
	for i := range 5 {
		eq(t, "register", c.ok("POST", fmt.Sprintf("/subjects/s%d/versions", i), reg(fmt.Sprintf(`{"type":"fixed","name":"F%d","size":%d}`, i, i+1))), map[string]int{"id": i + 1})
	}
	c.ok("DELETE", "/subjects/s4", nil)
	srv.Close()

	_, base2 := kafkaServer(t, b.Addr)
	c2 := client{t, base2}
	eq(t, "id 3", c2.ok("GET", "/schemas/ids/3", nil), map[string]any{"schema": `{"type":"fixed","name":"F2","size":3}`})
	eq(t, "subjects", c2.ok("GET", "/subjects", nil), []string{"s0", "s1", "s2", "s3"})
	eq(t, "next id", c2.ok("POST", "/subjects/new/versions", reg(`"string"`)), map[string]int{"id": 6})

	b.Restart()
	_, base3 := kafkaServer(t, b.Addr)
	c3 := client{t, base3}
	eq(t, "after broker restart", c3.ok("GET", "/subjects/new/versions/latest", nil), map[string]any{"subject": "new", "version": 1, "id": 6, "schema": `"string"`})
	eq(t, "next id", c3.ok("POST", "/subjects/new2/versions", reg(`"bytes"`)), map[string]int{"id": 7})
}

// Two instances on one broker elect one writer: registrations through
// either (the follower forwards) get one id per schema, never reused,
// and both serve the same answers; when the leader goes, the other
// takes over and numbering continues.
func TestKafkaTwoInstancesAgree(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	s1, base1 := kafkaServer(t, b.Addr)
	s2, base2 := kafkaServer(t, b.Addr)
	ctx := testkit.Context(t, 30*time.Second)
	// Wait until both know the same leader.
	testkit.CheckFor(t, 20*time.Second, 50*time.Millisecond, func() error {
		l1, l2 := s1.elector.Leader(), s2.elector.Leader()
		if !l1.Known || !l2.Known || l1.Self == l2.Self {
			return fmt.Errorf("leaders: %+v %+v", l1, l2)
		}
		return nil
	})

	const n = 30
	var wg sync.WaitGroup
	var mu sync.Mutex
	ids := map[int]map[string]bool{} // id → schemas
	bySchema := map[string]int{}
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			schema := fmt.Sprintf(`{"type":"enum","name":"E%d","symbols":["A"]}`, i%(n/2)) // each schema twice
			for _, base := range []string{base1, base2} {
				code, v := client{t, base}.do("POST", fmt.Sprintf("/subjects/sub-%d/versions", i), reg(schema))
				if code != 200 {
					t.Errorf("register on %s: %d %v", base, code, v)
					return
				}
				id := int(v.(map[string]any)["id"].(float64))
				mu.Lock()
				if ids[id] == nil {
					ids[id] = map[string]bool{}
				}
				ids[id][schema] = true
				if old, ok := bySchema[schema]; ok && old != id {
					t.Errorf("schema %s got ids %d and %d", schema, old, id)
				}
				bySchema[schema] = id
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for id, schemas := range ids {
		if len(schemas) != 1 {
			t.Errorf("id %d given to %d schemas", id, len(schemas))
		}
	}
	if len(bySchema) != n/2 {
		t.Errorf("%d distinct schemas registered, want %d", len(bySchema), n/2)
	}
	// Both serve the same subjects and ids.
	testkit.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		a := fmt.Sprint(client{t, base1}.ok("GET", "/subjects", nil))
		b := fmt.Sprint(client{t, base2}.ok("GET", "/subjects", nil))
		if a != b {
			return fmt.Errorf("subjects differ: %s vs %s", a, b)
		}
		return nil
	})
	for schema, id := range bySchema {
		want := map[string]any{"schema": schema}
		eq(t, "id on 1", client{t, base1}.ok("GET", fmt.Sprintf("/schemas/ids/%d", id), nil), want)
		eq(t, "id on 2", client{t, base2}.ok("GET", fmt.Sprintf("/schemas/ids/%d", id), nil), want)
	}

	// The leader leaves; the other takes over and continues the ids.
	leader, other, otherBase := s1, s2, base2
	if !s1.elector.Leader().Self {
		leader, other, otherBase = s2, s1, base1
	}
	leader.Close()
	testkit.CheckFor(t, 30*time.Second, 100*time.Millisecond, func() error {
		if l := other.elector.Leader(); !l.Self {
			return fmt.Errorf("leader %+v", l)
		}
		return nil
	})
	eq(t, "next id after failover", client{t, otherBase}.ok("POST", "/subjects/after/versions", reg(`"double"`)), map[string]int{"id": n/2 + 1})
	_ = ctx
}

// A store topic that deletes old records is refused, as Confluent does.
func TestKafkaRefusesNonCompactedTopic(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	ctx := testkit.Context(t, 30*time.Second)
	if _, err := testkit.Admin(t, b.Addr).CreateTopic(ctx, 1, 1, nil, "_schemas"); err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Bootstrap: []string{b.Addr}, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	err = srv.Start(ctx)
	if err == nil {
		srv.Close()
		t.Fatal("started on a cleanup.policy=delete topic")
	}
	if !strings.Contains(err.Error(), "cleanup.policy to be 'compact'") {
		t.Errorf("error %v", err)
	}
}
