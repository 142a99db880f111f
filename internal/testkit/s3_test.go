package testkit

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// The harness gives a MinIO server that keeps its data across Stop and
// Start, and refuses requests while stopped.
func TestS3Harness(t *testing.T) {
	srv := StartS3(t)
	if !strings.HasPrefix(srv.Endpoint, "http://127.0.0.1:") || srv.Region != "us-east-1" {
		t.Fatalf("endpoint %q region %q", srv.Endpoint, srv.Region)
	}
	srv.CreateBucket(t, "harness")
	srv.CreateBucket(t, "harness") // idempotent
	c := srv.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	body := []byte("hello from the harness")
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("harness"), Key: aws.String("a/b.txt"),
		Body: bytes.NewReader(body)}); err != nil {
		t.Fatal(err)
	}
	read := func(opts ...func(*s3.Options)) ([]byte, error) {
		out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("harness"), Key: aws.String("a/b.txt")}, opts...)
		if err != nil {
			return nil, err
		}
		defer out.Body.Close()
		return io.ReadAll(out.Body)
	}
	if got, err := read(); err != nil || !bytes.Equal(got, body) {
		t.Fatalf("get: %q, %v", got, err)
	}

	// Wrong credentials are refused: the server checks signatures.
	bad := s3.New(s3.Options{Region: srv.Region, BaseEndpoint: aws.String(srv.Endpoint), UsePathStyle: true,
		Credentials: aws.AnonymousCredentials{}})
	if _, err := bad.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("harness"), Key: aws.String("x"),
		Body: bytes.NewReader(body)}); err == nil || !strings.Contains(err.Error(), "AccessDenied") {
		t.Fatalf("anonymous put: err = %v, want AccessDenied", err)
	}

	srv.Stop()
	noRetry := func(o *s3.Options) { o.RetryMaxAttempts = 1 }
	if _, err := read(noRetry); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("get while stopped: err = %v, want connection refused", err)
	}
	srv.Start()
	if got, err := read(); err != nil || !bytes.Equal(got, body) {
		t.Fatalf("get after restart: %q, %v; want the object put before the outage", got, err)
	}

	props := srv.Props("harness")
	for k, want := range map[string]string{"s3.bucket.name": "harness", "store.url": srv.Endpoint,
		"aws.access.key.id": srv.AccessKey, "aws.secret.access.key": srv.SecretKey, "s3.region": "us-east-1",
		"s3.path.style.access.enabled": "true"} {
		if props[k] != want {
			t.Errorf("Props()[%s] = %q, want %q", k, props[k], want)
		}
	}
}
