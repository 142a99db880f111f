package admin

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/internal/testkit"
)

// The Kafka part's tests run the admin API on an httptest server against
// a real in-process broker, and check what it answers against what
// franz-go clients see and do.

// kxEnv is a broker and the admin API in front of it.
type kxEnv struct {
	addr string
	srv  *Server
	url  string // the API's base URL, with Prefix
	cl   *kgo.Client
	adm  *kadm.Client
}

// kxStart starts a broker and the API on it; opts may adjust the API's
// options (its ClientOpts are set to reach the broker).
func kxStart(t *testing.T, opts Options) *kxEnv {
	t.Helper()
	b := testkit.StartBroker(t, nil)
	return kxStartOn(t, b.Addr, opts)
}

// kxStartOn starts the API on the broker at addr.
func kxStartOn(t *testing.T, addr string, opts Options) *kxEnv {
	t.Helper()
	opts.ClientOpts = append(opts.ClientOpts, kgo.SeedBrokers(addr))
	if opts.SampleInterval == 0 {
		opts.SampleInterval = time.Hour // only the history test samples
	}
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	r := chi.NewRouter()
	srv.Mount(r)
	hs := httptest.NewServer(r)
	t.Cleanup(func() { hs.Close(); srv.Close() })
	// Records name their partition: the tests place them.
	cl := testkit.Client(t, addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	return &kxEnv{addr: addr, srv: srv, url: hs.URL + Prefix, cl: cl, adm: kadm.NewClient(cl)}
}

// call sends method path (under /api/v1) with body as JSON (nil: none)
// and returns the status and the body. Every answer but 204 must be JSON.
func (e *kxEnv) call(t *testing.T, method, path string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, e.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusNoContent {
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" || !json.Valid(out) {
			t.Fatalf("%s %s: %d with Content-Type %q and body %s", method, path, resp.StatusCode, ct, out)
		}
	}
	return resp.StatusCode, out
}

// do is call expecting status want, decoding the answer into out (if
// not nil).
func (e *kxEnv) do(t *testing.T, method, path string, body any, want int, out any) {
	t.Helper()
	code, b := e.call(t, method, path, body)
	if code != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, code, b, want)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
}

// wantError is call expecting an error answer with status want whose
// message starts with prefix.
func (e *kxEnv) wantError(t *testing.T, method, path string, body any, want int, prefix string) apiError {
	t.Helper()
	code, b := e.call(t, method, path, body)
	var ae apiError
	if err := json.Unmarshal(b, &ae); err != nil {
		t.Fatalf("%s %s: %v in %s", method, path, err, b)
	}
	if code != want || ae.ErrorCode != want || !strings.HasPrefix(ae.Message, prefix) {
		t.Fatalf("%s %s: %d %s, want %d with a message starting %q", method, path, code, b, want, prefix)
	}
	return ae
}

// createTopic creates a topic with franz-go (not through the API).
func (e *kxEnv) createTopic(t *testing.T, name string, partitions int32) {
	t.Helper()
	if _, err := e.adm.CreateTopic(testkit.Context(t, 10*time.Second), partitions, 1, nil, name); err != nil {
		t.Fatalf("create topic %s: %v", name, err)
	}
}

// produce writes records with franz-go (each to its Partition) and
// returns them with their offsets.
func (e *kxEnv) produce(t *testing.T, rs ...*kgo.Record) []*kgo.Record {
	t.Helper()
	if err := e.cl.ProduceSync(testkit.Context(t, 10*time.Second), rs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	return rs
}

// offsetsOf is one partition's offset to commit.
func offsetsOf(topic string, partition int32, at int64) kadm.Offsets {
	var os kadm.Offsets
	os.Add(kadm.Offset{Topic: topic, Partition: partition, At: at, LeaderEpoch: -1})
	return os
}
