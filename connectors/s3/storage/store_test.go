package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

func TestPutSmallHeadGet(t *testing.T) {
	s, f := bucketStore(t)
	ctx := context.Background()
	var puts, sha atomic.Value
	f.use(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodPut {
			puts.Store(r.URL.RawQuery)
			sha.Store(r.Header.Get("X-Amz-Content-Sha256") + " crc32=" + r.Header.Get("X-Amz-Checksum-Crc32"))
		}
		return false
	})
	data := randomBytes(1000)
	mustPut(t, s, "topics/orders/partition=0/orders+0+0000000000.json", data,
		map[string]string{"Fjord-Records": "3"})
	if q := puts.Load().(string); strings.Contains(q, "uploadId") || strings.Contains(q, "partNumber") {
		t.Fatalf("small object: PUT query %q, want a plain PutObject", q)
	}
	// The fake is on 127.0.0.1: payload unsigned, CRC32 still sent.
	if h := sha.Load().(string); !strings.HasPrefix(h, "UNSIGNED-PAYLOAD crc32=") || strings.HasSuffix(h, "crc32=") {
		t.Fatalf("loopback PUT headers: %q, want UNSIGNED-PAYLOAD with a CRC32 checksum", h)
	}
	meta, size, err := s.Head(ctx, "topics/orders/partition=0/orders+0+0000000000.json")
	if err != nil {
		t.Fatal(err)
	}
	if size != 1000 || meta["fjord-records"] != "3" {
		t.Fatalf("head: size %d meta %v, want 1000 and fjord-records=3", size, meta)
	}
	body, n, err := s.Get(ctx, "topics/orders/partition=0/orders+0+0000000000.json")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(body)
	body.Close()
	if n != 1000 || !bytes.Equal(got, data) {
		t.Fatalf("get: %d bytes (size %d), want the 1000 bytes put", len(got), n)
	}
}

// A plain io.Reader below the part size is buffered (the SDK needs to
// seek); only size bytes of a longer ReaderAt are sent.
func TestPutReaders(t *testing.T) {
	s, _ := bucketStore(t)
	ctx := context.Background()
	data := randomBytes(5000)
	if err := s.Put(ctx, "plain", io.MultiReader(bytes.NewReader(data)), 5000, nil); err != nil {
		t.Fatal(err)
	}
	r := bytes.NewReader(data)
	r.Seek(1000, io.SeekStart)
	if err := s.Put(ctx, "section", r, 2000, nil); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string][]byte{"plain": data, "section": data[1000:3000]} {
		got, err := s.ReadAll(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: read %d bytes, want the %d put", key, len(got), len(want))
		}
	}
	err := s.Put(ctx, "short", io.MultiReader(bytes.NewReader(data[:10])), 20, nil)
	if err == nil || !strings.Contains(err.Error(), "read the 20 bytes") {
		t.Fatalf("short reader: err = %v, want a read error", err)
	}
}

func TestPutMultipart(t *testing.T) {
	s, f := bucketStore(t)
	ctx := context.Background()
	var parts atomic.Int32
	f.use(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodPut && r.URL.Query().Has("partNumber") {
			parts.Add(1)
		}
		return false
	})
	data := randomBytes(2*MinPartSize + 12345)
	mustPut(t, s, "big", data, map[string]string{"k": "v"})
	if got := parts.Load(); got != 3 {
		t.Fatalf("%d parts uploaded, want 3 of at most 5 MiB", got)
	}
	got, err := s.ReadAll(ctx, "big")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatal("multipart object differs from what was put")
	}
	meta, _, err := s.Head(ctx, "big")
	if err != nil || meta["k"] != "v" {
		t.Fatalf("multipart object's meta %v (%v), want k=v", meta, err)
	}

	// Unknown size from a plain reader: multipart too.
	parts.Store(0)
	if err := s.Put(ctx, "stream", io.MultiReader(bytes.NewReader(data)), -1, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ReadAll(ctx, "stream"); err != nil || !bytes.Equal(got, data) || parts.Load() != 3 {
		t.Fatalf("streamed upload: %d bytes, %d parts, err %v; want the data in 3 parts", len(got), parts.Load(), err)
	}
}

func TestListPrefixStartAfterPaging(t *testing.T) {
	s, _ := bucketStore(t)
	s.pageSize = 2 // several pages
	ctx := context.Background()
	for _, k := range []string{"a/1", "a/2", "a/3", "a/4", "a/5", "b/1", "a0"} {
		mustPut(t, s, k, []byte(k), nil)
	}
	list := func(prefix, after string) []string {
		var keys []string
		err := s.List(ctx, prefix, after, func(o Object) error {
			if o.Size != int64(len(o.Key)) || o.LastModified.IsZero() {
				return fmt.Errorf("%s: size %d, modified %v", o.Key, o.Size, o.LastModified)
			}
			keys = append(keys, o.Key)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return keys
	}
	if got, want := list("a/", ""), []string{"a/1", "a/2", "a/3", "a/4", "a/5"}; !slices.Equal(got, want) {
		t.Fatalf("list a/: %v, want %v", got, want)
	}
	if got, want := list("a/", "a/2"), []string{"a/3", "a/4", "a/5"}; !slices.Equal(got, want) {
		t.Fatalf("list a/ after a/2: %v, want %v", got, want)
	}
	if got := list("c/", ""); len(got) != 0 {
		t.Fatalf("list c/: %v, want nothing", got)
	}
	stop := errors.New("stop")
	n := 0
	err := s.List(ctx, "", "", func(Object) error { n++; return stop })
	if err != stop || n != 1 {
		t.Fatalf("fn error: List returned %v after %d calls, want fn's error after 1", err, n)
	}
}

func TestDeleteAndNotFound(t *testing.T) {
	s, _ := bucketStore(t)
	ctx := context.Background()
	for _, k := range []string{"x/1", "x/2", "x/3"} {
		mustPut(t, s, k, []byte("data"), nil)
	}
	if err := s.Delete(ctx, "x/1", "x/3", "x/missing"); err != nil {
		t.Fatal(err)
	}
	var left []string
	s.List(ctx, "x/", "", func(o Object) error { left = append(left, o.Key); return nil })
	if !slices.Equal(left, []string{"x/2"}) {
		t.Fatalf("after delete: %v, want [x/2]", left)
	}
	if _, _, err := s.Head(ctx, "x/1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("head deleted: err = %v, want ErrNotFound", err)
	}
	if _, _, err := s.Get(ctx, "x/1"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "x/1") {
		t.Fatalf("get deleted: err = %v, want ErrNotFound naming the key", err)
	}
	if _, err := s.ReadAll(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("read missing: err = %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx); err != nil {
		t.Fatalf("delete nothing: %v", err)
	}
}

// More than one DeleteObjects batch.
func TestDeleteBatches(t *testing.T) {
	s, f := bucketStore(t)
	ctx := context.Background()
	keys := make([]string, deleteBatch+5)
	for i := range keys {
		keys[i] = fmt.Sprintf("k/%05d", i)
	}
	for _, k := range keys[:3] {
		mustPut(t, s, k, []byte("v"), nil)
	}
	mustPut(t, s, keys[len(keys)-1], []byte("v"), nil)
	var posts atomic.Int32
	f.use(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodPost && r.URL.Query().Has("delete") {
			posts.Add(1)
		}
		return false
	})
	if err := s.Delete(ctx, keys...); err != nil {
		t.Fatal(err)
	}
	n := 0
	s.List(ctx, "k/", "", func(Object) error { n++; return nil })
	if posts.Load() != 2 || n != 0 {
		t.Fatalf("%d DeleteObjects requests, %d keys left; want 2 requests and none left", posts.Load(), n)
	}
}

func TestAbortUploads(t *testing.T) {
	s, _ := bucketStore(t)
	s.pageSize = 1
	ctx := context.Background()
	c := s.Client()
	for _, k := range []string{"p/a", "p/b", "p/c", "q/a"} {
		if _, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{
			Bucket: aws.String("bkt"), Key: aws.String(k)}); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.AbortUploads(ctx, "p/")
	if err != nil || n != 3 {
		t.Fatalf("AbortUploads(p/) = %d, %v; want 3", n, err)
	}
	out, err := c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String("bkt")})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Uploads) != 1 || aws.ToString(out.Uploads[0].Key) != "q/a" {
		t.Fatalf("uploads left: %d, want only q/a", len(out.Uploads))
	}
	if n, err := s.AbortUploads(ctx, "p/"); err != nil || n != 0 {
		t.Fatalf("second AbortUploads = %d, %v; want 0", n, err)
	}
}

func TestMissingBucket(t *testing.T) {
	f := newFake(t)
	s := newStore(t, testConfig(f, "nope"))
	ctx := context.Background()
	err := s.CheckBucket(ctx)
	if err == nil || !strings.Contains(err.Error(), `"nope" does not exist`) || !strings.Contains(err.Error(), KeyBucket) {
		t.Fatalf("CheckBucket: %v, want the bucket named as missing and %s", err, KeyBucket)
	}
	err = s.Put(ctx, "k", bytes.NewReader([]byte("x")), 1, nil)
	if err == nil || !strings.Contains(err.Error(), "s3://nope/k") || !strings.Contains(err.Error(), "create it or fix "+KeyBucket) {
		t.Fatalf("Put: %v, want the object and a hint to create the bucket", err)
	}
	if err := s.CreateBucket(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateBucket(ctx); err != nil {
		t.Fatalf("CreateBucket twice: %v, want idempotent", err)
	}
	if err := s.CheckBucket(ctx); err != nil {
		t.Fatal(err)
	}
}

// Nothing listens: the error says the store is unreachable and names
// store.url.
func TestUnreachableStore(t *testing.T) {
	f := newFake(t)
	cfg := testConfig(f, "b")
	cfg.Endpoint = "http://127.0.0.1:1"
	cfg.Retries = 1
	s := newStore(t, cfg)
	err := s.CheckBucket(context.Background())
	if err == nil || !strings.Contains(err.Error(), "cannot reach http://127.0.0.1:1") ||
		!strings.Contains(err.Error(), KeyStoreURL) || !strings.Contains(err.Error(), "gave up after 2 attempts") {
		t.Fatalf("CheckBucket: %v, want an unreachable-store error after 2 attempts naming %s", err, KeyStoreURL)
	}
}

func TestWrongCredentials(t *testing.T) {
	s, f := bucketStore(t)
	f.use(func(w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusForbidden)
		if r.Method != http.MethodHead {
			w.Write([]byte(`<Error><Code>InvalidAccessKeyId</Code><Message>no such key</Message></Error>`))
		}
		return true
	})
	ctx := context.Background()
	if err := s.CheckBucket(ctx); err == nil || !strings.Contains(err.Error(), KeyAccessKeyID) {
		t.Fatalf("CheckBucket: %v, want a hint naming %s", err, KeyAccessKeyID)
	}
	err := s.Put(ctx, "k", bytes.NewReader([]byte("x")), 1, nil)
	if err == nil || !strings.Contains(err.Error(), "refused the credentials") {
		t.Fatalf("Put: %v, want a credentials hint", err)
	}
}
