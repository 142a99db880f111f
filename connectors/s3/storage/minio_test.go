package storage

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/fjordhq/fjord/internal/testkit"
)

// Against a real server: MinIO checks signatures and checksums, which the
// in-process fake does not, so this is where the unsigned loopback
// payload, SigV4 and multipart checksums are proven to be accepted.
func TestAgainstMinIO(t *testing.T) {
	srv := testkit.StartS3(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	props := srv.Props("sink")
	props[KeyPartSize] = "5242880"
	props[KeyRetryBackoffMs] = "10"
	cfg, err := ConfigFrom(props)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CheckBucket(ctx); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("CheckBucket before creation: %v, want does not exist", err)
	}
	if err := s.CreateBucket(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateBucket(ctx); err != nil {
		t.Fatalf("CreateBucket twice: %v", err)
	}
	if err := s.CheckBucket(ctx); err != nil {
		t.Fatal(err)
	}

	small := randomBytes(3000)
	big := randomBytes(2*MinPartSize + 777)
	mustPut(t, s, "t/p=0/a.json", small, map[string]string{"Offset": "42"})
	mustPut(t, s, "t/p=0/b.json", big, nil)
	for key, want := range map[string][]byte{"t/p=0/a.json": small, "t/p=0/b.json": big} {
		got, err := s.ReadAll(ctx, key)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: read %d bytes (%v), want the %d put", key, len(got), err, len(want))
		}
	}
	meta, size, err := s.Head(ctx, "t/p=0/a.json")
	if err != nil || size != 3000 || meta["offset"] != "42" {
		t.Fatalf("head: %v %d %v", meta, size, err)
	}
	var keys []string
	if err := s.List(ctx, "t/", "t/p=0/a.json", func(o Object) error { keys = append(keys, o.Key); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || keys[0] != "t/p=0/b.json" {
		t.Fatalf("list after a.json: %v", keys)
	}
	if err := s.Tag(ctx, "t/p=0/a.json", map[string]string{"startOffset": "0", "endOffset": "9"}); err != nil {
		t.Fatal(err)
	}
	tags, err := s.Client().GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: aws.String("sink"),
		Key: aws.String("t/p=0/a.json")})
	if err != nil || len(tags.TagSet) != 2 {
		t.Fatalf("tags: %v, %v", tags, err)
	}

	// A crashed writer's upload is cleaned up. MinIO lists the uploads of
	// one exact key only, so the prefix here is the key.
	if _, err := s.Client().CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("sink"),
		Key: aws.String("t/p=1/c.json")}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.AbortUploads(ctx, "t/p=1/c.json"); err != nil || n != 1 {
		t.Fatalf("AbortUploads = %d, %v; want 1", n, err)
	}
	if err := s.Delete(ctx, "t/p=0/a.json", "t/p=0/b.json"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Head(ctx, "t/p=0/b.json"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("head after delete: %v, want ErrNotFound", err)
	}

	// An outage: writes fail saying the store is unreachable, and work
	// again once it is back.
	srv.Stop()
	err = s.Put(ctx, "t/outage", bytes.NewReader(small), int64(len(small)), nil)
	if err == nil || !strings.Contains(err.Error(), "cannot reach "+srv.Endpoint) {
		t.Fatalf("put during outage: %v, want cannot reach %s", err, srv.Endpoint)
	}
	srv.Start()
	mustPut(t, s, "t/outage", small, nil)

	// Wrong credentials name the keys to check.
	props[KeySecretAccessKey] = "wrong-secret"
	badCfg, _ := ConfigFrom(props)
	bad, err := New(ctx, badCfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := bad.CheckBucket(ctx); err == nil || !strings.Contains(err.Error(), KeySecretAccessKey) {
		t.Fatalf("CheckBucket with a wrong secret: %v, want a hint naming %s", err, KeySecretAccessKey)
	}
	if err := bad.Put(ctx, "t/x", bytes.NewReader(small), int64(len(small)), nil); err == nil ||
		!strings.Contains(err.Error(), "refused the credentials") {
		t.Fatalf("put with a wrong secret: %v, want a credentials hint", err)
	}
}
