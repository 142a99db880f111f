package storage

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// S3 throttling a few times, then accepting: Put succeeds on a retry.
func TestPutRetriesSlowDown(t *testing.T) {
	s, f := bucketStore(t)
	var puts atomic.Int32
	f.use(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodPut && puts.Add(1) <= 2 {
			slowDown(w)
			return true
		}
		return false
	})
	data := randomBytes(4096)
	mustPut(t, s, "throttled", data, nil)
	if n := puts.Load(); n != 3 {
		t.Fatalf("%d PUT attempts, want 3 (two throttled, one accepted)", n)
	}
	if got, err := s.ReadAll(context.Background(), "throttled"); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back: %d bytes, %v", len(got), err)
	}
}

// A store that throttles every time: Put gives up after
// s3.part.retries+1 attempts and says so.
func TestPutRetriesExhausted(t *testing.T) {
	s, f := bucketStore(t)
	var puts atomic.Int32
	f.use(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodPut {
			puts.Add(1)
			slowDown(w)
			return true
		}
		return false
	})
	err := s.Put(context.Background(), "never", bytes.NewReader([]byte("x")), 1, nil)
	if err == nil {
		t.Fatal("Put succeeded against a store that always throttles")
	}
	for _, want := range []string{"s3://bkt/never", "gave up after 4 attempts", KeyPartRetries + "=3", "SlowDown", "throttling"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q does not say %q", err, want)
		}
	}
	if n := puts.Load(); n != 4 {
		t.Fatalf("%d PUT attempts, want 4 (s3.part.retries=3)", n)
	}
}

// The retry waits come from s3.retry.backoff.ms, not the SDK's 1 s
// throttling base: with a 20 ms base, 3 throttled attempts wait about
// 10-20 + 20-40 + 40-80 ms.
func TestRetryBackoffFromConfig(t *testing.T) {
	f := newFake(t)
	cfg := testConfig(f, "bkt")
	cfg.RetryBackoff, cfg.MaxBackoff = 20*time.Millisecond, time.Second
	s := newStore(t, cfg)
	if err := s.CreateBucket(context.Background()); err != nil {
		t.Fatal(err)
	}
	var puts atomic.Int32
	f.use(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodPut && puts.Add(1) <= 3 {
			slowDown(w)
			return true
		}
		return false
	})
	start := time.Now()
	mustPut(t, s, "k", []byte("x"), nil)
	if d := time.Since(start); d < 70*time.Millisecond || d > 900*time.Millisecond {
		t.Fatalf("3 retries took %v, want 70-140 ms of backoff (plus request time)", d)
	}
}

func TestBackoffDelays(t *testing.T) {
	lo := backoff{base: 200 * time.Millisecond, max: time.Second, rand: func() float64 { return 0 }}
	hi := lo
	hi.rand = func() float64 { return 0.999999 }
	for _, c := range []struct {
		attempt int
		min     time.Duration
		max     time.Duration
	}{
		{1, 100 * time.Millisecond, 200 * time.Millisecond},
		{2, 200 * time.Millisecond, 400 * time.Millisecond},
		{3, 400 * time.Millisecond, 800 * time.Millisecond},
		{4, 500 * time.Millisecond, time.Second}, // capped
		{40, 500 * time.Millisecond, time.Second},
	} {
		if got := lo.delay(c.attempt); got != c.min {
			t.Errorf("attempt %d: lowest delay %v, want %v", c.attempt, got, c.min)
		}
		if got := hi.delay(c.attempt); got < c.max-time.Millisecond || got > c.max {
			t.Errorf("attempt %d: highest delay %v, want about %v", c.attempt, got, c.max)
		}
	}
	if d := (backoff{}).delay(3); d != 0 {
		t.Errorf("zero base: delay %v, want 0", d)
	}
}

// A part that keeps failing fails the upload, which is aborted: no
// parts are left behind.
func TestMultipartFailureAborts(t *testing.T) {
	s, f := bucketStore(t)
	var aborts atomic.Int32
	f.use(func(w http.ResponseWriter, r *http.Request) bool {
		q := r.URL.Query()
		if r.Method == http.MethodDelete && q.Has("uploadId") {
			aborts.Add(1)
		}
		if r.Method == http.MethodPut && q.Get("partNumber") == "2" {
			slowDown(w)
			return true
		}
		return false
	})
	data := randomBytes(2*MinPartSize + 1)
	err := s.Put(context.Background(), "big", bytes.NewReader(data), int64(len(data)), nil)
	if err == nil || !strings.Contains(err.Error(), "gave up after 4 attempts") {
		t.Fatalf("Put: %v, want a failure after 4 attempts", err)
	}
	assertNoUploads(t, s)
	if aborts.Load() != 1 {
		t.Fatalf("%d aborts, want 1", aborts.Load())
	}
	if _, _, err := s.Head(context.Background(), "big"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("head after failed upload: %v, want ErrNotFound", err)
	}
}

// Canceling the context mid-upload still aborts the upload (the SDK's
// own abort uses the canceled context and fails).
func TestMultipartCancelAborts(t *testing.T) {
	s, f := bucketStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	arrived := make(chan struct{}, 8)
	f.use(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodPut && r.URL.Query().Has("partNumber") {
			// Read the body (answering Expect: 100-continue) so the
			// server notices the client hanging up, then hold the part
			// until it does.
			io.Copy(io.Discard, r.Body)
			arrived <- struct{}{}
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
			return true
		}
		return false
	})
	go func() { <-arrived; cancel() }()
	data := randomBytes(2*MinPartSize + 1)
	err := s.Put(ctx, "big", bytes.NewReader(data), int64(len(data)), nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Put: %v, want context.Canceled", err)
	}
	assertNoUploads(t, s)
}

func assertNoUploads(t *testing.T, s *Store) {
	t.Helper()
	out, err := s.Client().ListMultipartUploads(context.Background(),
		&s3.ListMultipartUploadsInput{Bucket: aws.String(s.Bucket())})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Uploads) != 0 {
		t.Fatalf("%d multipart uploads left, want none (aborted)", len(out.Uploads))
	}
}
