package storage

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/s3/manager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/fjordhq/fjord/internal/testkit"
)

// BenchmarkPut compares Store.Put with the SDK used directly (default
// client: signed payloads over HTTP; the upload manager for multipart)
// writing the same bytes to MinIO on loopback:
//
//	go test -run '^$' -bench Put ./connectors/s3/storage/
func BenchmarkPut(b *testing.B) {
	srv := testkit.StartS3(b)
	srv.CreateBucket(b, "bench")
	cfg, err := ConfigFrom(srv.Props("bench"))
	if err != nil {
		b.Fatal(err)
	}
	cfg.PartSize = 8 << 20
	s, err := New(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	raw := srv.Client(b)
	up := manager.NewUploader(raw, func(u *manager.Uploader) {
		u.PartSize, u.Concurrency = cfg.PartSize, cfg.Concurrency
	})
	ctx := context.Background()
	for _, size := range []int{4 << 20, 40 << 20} {
		data := randomBytes(size)
		b.Run(fmt.Sprintf("store/%dMiB", size>>20), func(b *testing.B) {
			b.SetBytes(int64(size))
			for i := 0; b.Loop(); i++ {
				if err := s.Put(ctx, fmt.Sprintf("store/%d", i%4), bytes.NewReader(data), int64(size), nil); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("sdk/%dMiB", size>>20), func(b *testing.B) {
			b.SetBytes(int64(size))
			for i := 0; b.Loop(); i++ {
				in := &s3.PutObjectInput{Bucket: aws.String("bench"), Key: aws.String(fmt.Sprintf("sdk/%d", i%4)),
					Body: bytes.NewReader(data)}
				var err error
				if int64(size) < cfg.PartSize {
					_, err = raw.PutObject(ctx, in)
				} else {
					_, err = up.Upload(ctx, in)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
