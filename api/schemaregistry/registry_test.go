package schemaregistry

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/go-chi/chi/v5"
)

// memServer starts a registry over j (a fresh MemJournal when nil) behind
// an httptest server, mounted under prefix.
func memServer(t *testing.T, j Journal, e Elector, prefix string) (*Server, string) {
	t.Helper()
	if j == nil {
		j = NewMemJournal()
	}
	srv, err := New(Config{Journal: j, Elector: e, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := chi.NewRouter()
	srv.Mount(r, prefix)
	hs := httptest.NewServer(r)
	t.Cleanup(func() { hs.Close(); srv.Close() })
	return srv, hs.URL + prefix
}

func TestConformanceInMemory(t *testing.T) {
	_, base := memServer(t, nil, nil, "")
	conformance(t, base)
}

func TestMountedUnderPrefix(t *testing.T) {
	_, base := memServer(t, nil, nil, "/schemas")
	c := client{t, base}
	eq(t, "register", c.ok("POST", "/subjects/a/versions", reg(`"int"`)), map[string]int{"id": 1})
	eq(t, "subjects", c.ok("GET", "/subjects", nil), []string{"a"})
}

// The records written are Confluent's _schemas key/value JSON.
func TestJournalRecordsAreConfluentFormat(t *testing.T) {
	j := NewMemJournal()
	_, base := memServer(t, j, nil, "")
	c := client{t, base}
	c.ok("POST", "/subjects/s/versions", reg(`{"type": "string"}`))
	c.ok("PUT", "/config/s", map[string]any{"compatibility": "FULL"})
	c.ok("PUT", "/mode/s", map[string]any{"mode": "READWRITE"})
	c.ok("DELETE", "/subjects/s", nil)
	c.ok("DELETE", "/subjects/s?permanent=true", nil)
	want := []struct{ key, value string }{
		{`{"keytype":"NOOP","magic":0}`, ""},
		{`{"keytype":"SCHEMA","subject":"s","version":1,"magic":1}`, `{"subject":"s","version":1,"id":1,"schema":"\"string\"","deleted":false}`},
		{`{"keytype":"NOOP","magic":0}`, ""},
		{`{"keytype":"CONFIG","subject":"s","magic":0}`, `{"subject":"s","compatibilityLevel":"FULL"}`},
		{`{"keytype":"NOOP","magic":0}`, ""},
		{`{"keytype":"MODE","subject":"s","magic":0}`, `{"subject":"s","mode":"READWRITE"}`},
		{`{"keytype":"NOOP","magic":0}`, ""},
		{`{"keytype":"DELETE_SUBJECT","subject":"s","magic":0}`, `{"subject":"s","version":1}`},
		{`{"keytype":"NOOP","magic":0}`, ""},
		{`{"keytype":"SCHEMA","subject":"s","version":1,"magic":1}`, ""},
		{`{"keytype":"CONFIG","subject":"s","magic":0}`, ""},
		{`{"keytype":"MODE","subject":"s","magic":0}`, ""},
	}
	got := j.Records()
	if len(got) != len(want) {
		for _, r := range got {
			t.Logf("%s → %s", r.Key, r.Value)
		}
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i, w := range want {
		if string(got[i].Key) != w.key || string(got[i].Value) != w.value || (w.value == "") != (got[i].Value == nil) {
			t.Errorf("record %d = %s → %s, want %s → %s", i, got[i].Key, got[i].Value, w.key, w.value)
		}
	}
}

// Records a Confluent registry wrote (with fields Fjord does not use) are
// read back: Fjord can take over an existing _schemas topic.
func TestReadsConfluentRecords(t *testing.T) {
	j := NewMemJournal()
	for _, kv := range [][2]string{
		{`{"keytype":"SCHEMA","subject":"t-value","version":1,"magic":1}`, `{"subject":"t-value","version":1,"id":7,"schemaType":"AVRO","md5":"x","schema":"\"string\"","deleted":false,"ts":1}`},
		{`{"keytype":"CONFIG","subject":null,"magic":0}`, `{"compatibilityLevel":"FULL_TRANSITIVE"}`},
		{`{"keytype":"SCHEMA","subject":"t-value","version":2,"magic":1}`, `{"subject":"t-value","version":2,"id":9,"schema":"\"bytes\"","deleted":true}`},
		{`{"keytype":"CONTEXT","tenant":"default","context":".x","magic":0}`, `{}`},
		{`not json`, `{}`},
	} {
		if _, err := j.Append(context.Background(), Record{Key: []byte(kv[0]), Value: []byte(kv[1])}); err != nil {
			t.Fatal(err)
		}
	}
	srv, base := memServer(t, j, nil, "")
	c := client{t, base}
	eq(t, "schema 7", c.ok("GET", "/schemas/ids/7", nil), map[string]any{"schema": `"string"`})
	eq(t, "versions", c.ok("GET", "/subjects/t-value/versions?deleted=true", nil), []int{1, 2})
	eq(t, "config", c.ok("GET", "/config", nil), map[string]any{"compatibilityLevel": "FULL_TRANSITIVE"})
	if srv.Registry().MaxID() != 9 {
		t.Errorf("max id %d, want 9", srv.Registry().MaxID())
	}
	eq(t, "next id", c.ok("POST", "/subjects/n/versions", reg(`"int"`)), map[string]int{"id": 10})
}

// A restarted instance rebuilds the same state from the journal.
func TestRestartKeepsIDs(t *testing.T) {
	j := NewMemJournal()
	srv, base := memServer(t, j, nil, "")
	c := client{t, base}
	c.ok("POST", "/subjects/a/versions", reg(`"int"`))
	c.ok("POST", "/subjects/b/versions", reg(`"long"`))
	srv.Close()
	j.Close()
	_, base2 := memServer(t, j, nil, "")
	c2 := client{t, base2}
	eq(t, "b latest", c2.ok("GET", "/subjects/b/versions/latest", nil), map[string]any{"subject": "b", "version": 1, "id": 2, "schema": `"long"`})
	eq(t, "next id", c2.ok("POST", "/subjects/c/versions", reg(`"string"`)), map[string]int{"id": 3})
}

// Concurrent registrations on one instance never share an id.
func TestConcurrentRegistrationsGetDistinctIDs(t *testing.T) {
	srv, _ := memServer(t, nil, nil, "")
	ids := concurrentRegistrations(t, []*Registry{srv.Registry()}, 40)
	seen := map[int]string{}
	for schema, id := range ids {
		if other, dup := seen[id]; dup {
			t.Fatalf("id %d given to %s and %s", id, schema, other)
		}
		seen[id] = schema
	}
}

// concurrentRegistrations registers n distinct schemas spread over regs
// from n goroutines, each twice, and returns schema → id.
func concurrentRegistrations(t *testing.T, regs []*Registry, n int) map[string]int {
	t.Helper()
	var mu sync.Mutex
	ids := map[string]int{}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			schema := `{"type":"enum","name":"E` + string(rune('A'+i%26)) + `","symbols":["S` + itoa(i) + `"]}`
			for k := range 2 {
				r := regs[(i+k)%len(regs)]
				id, err := r.Register(context.Background(), "subject-"+itoa(i), RegisterRequest{Schema: schema})
				if err != nil {
					t.Errorf("register %d: %v", i, err)
					return
				}
				mu.Lock()
				if old, ok := ids[schema]; ok && old != id {
					t.Errorf("schema %d got ids %d and %d", i, old, id)
				}
				ids[schema] = id
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return ids
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// A follower forwards writes to the leader's URL.
type staticElector struct{ l Leader }

func (e staticElector) Leader() Leader { return e.l }

func TestFollowerForwardsWrites(t *testing.T) {
	j := NewMemJournal()
	_, leaderURL := memServer(t, j, SelfElector{}, "/sr")
	_, followerURL := memServer(t, j, staticElector{Leader{Known: true, URL: leaderURL}}, "")
	f := client{t, followerURL}
	eq(t, "register via follower", f.ok("POST", "/subjects/a/versions", reg(`"int"`)), map[string]int{"id": 1})
	eq(t, "config via follower", f.ok("PUT", "/config", map[string]any{"compatibility": "NONE"}), map[string]any{"compatibility": "NONE"})
	eq(t, "read on follower", f.ok("GET", "/config", nil), map[string]any{"compatibilityLevel": "NONE"})
	f.fail("DELETE", "/subjects/zzz", nil, 404, 40401, "Subject 'zzz' not found.")

	// A follower that knows no leader answers 50004 after waiting.
	srv, err := New(Config{Journal: j, Elector: staticElector{}, LeaderWait: 1, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	client{t, hs.URL}.fail("POST", "/subjects/b/versions", reg(`"long"`), 500, 50004, "Leader not known.")
}

// A journal that fails writes gives Confluent's store error.
func TestStoreErrors(t *testing.T) {
	j := NewMemJournal()
	_, base := memServer(t, j, nil, "")
	j.mu.Lock()
	j.FailAppend = errors.New("disk on fire")
	j.mu.Unlock()
	client{t, base}.fail("POST", "/subjects/a/versions", reg(`"int"`), 500, 50001, "disk on fire")
}

var quiet = slog.New(slog.DiscardHandler)
