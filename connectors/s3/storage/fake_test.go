package storage

import (
	"bytes"
	"context"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// fake is an in-process S3 (gofakes3, memory backend) on 127.0.0.1.
// Tests put a middleware in front of it to fail or inspect requests.
type fake struct {
	URL string
	mu  sync.Mutex
	// mw, when set, sees each request first; returning true means it
	// answered and gofakes3 must not.
	mw func(w http.ResponseWriter, r *http.Request) bool
}

func newFake(t *testing.T) *fake {
	t.Helper()
	f := &fake{}
	s3 := gofakes3.New(s3mem.New()).Server()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		mw := f.mw
		f.mu.Unlock()
		if mw != nil && mw(w, r) {
			return
		}
		s3.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

func (f *fake) use(mw func(w http.ResponseWriter, r *http.Request) bool) {
	f.mu.Lock()
	f.mw = mw
	f.mu.Unlock()
}

// testConfig is a store on f with the smallest part size and retries
// that wait milliseconds, not seconds.
func testConfig(f *fake, bucket string) Config {
	return Config{
		Bucket: bucket, Region: "us-east-1", Endpoint: f.URL, PathStyle: true,
		AccessKeyID: "test", SecretAccessKey: "test-secret",
		PartSize: MinPartSize, Concurrency: 2, Retries: 3,
		RetryBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond, ExpectContinue: true,
	}
}

func newStore(t *testing.T, cfg Config) *Store {
	t.Helper()
	s, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// bucketStore is a store on a fresh fake with its bucket created.
func bucketStore(t *testing.T) (*Store, *fake) {
	t.Helper()
	f := newFake(t)
	s := newStore(t, testConfig(f, "bkt"))
	if err := s.CreateBucket(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, f
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	var seed [32]byte
	seed[0], seed[1], seed[2] = byte(n), byte(n>>8), byte(n>>16)
	rand.NewChaCha8(seed).Read(b)
	return b
}

// slowDown answers like S3 throttling a request.
func slowDown(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(http.StatusServiceUnavailable)
	w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code>` +
		`<Message>Please reduce your request rate.</Message><RequestId>1</RequestId></Error>`))
}

func mustPut(t *testing.T, s *Store, key string, data []byte, meta map[string]string) {
	t.Helper()
	if err := s.Put(context.Background(), key, bytes.NewReader(data), int64(len(data)), meta); err != nil {
		t.Fatal(err)
	}
}
