package source

import (
	"context"
	"io"

	"github.com/fjordhq/fjord/connectors/s3/storage"
)

// bucketFactory opens the bucket a connector or task reads.
type bucketFactory func(ctx context.Context, s *settings) (bucket, error)

// storeBucket is a bucket on the storage package's S3 client, with its
// retries, backoff and error hints.
type storeBucket struct{ st *storage.Store }

func openStore(ctx context.Context, s *settings) (bucket, error) {
	st, err := storage.New(ctx, s.store)
	if err != nil {
		return nil, err
	}
	return storeBucket{st}, nil
}

func (b storeBucket) List(ctx context.Context, prefix string, fn func(storage.Object) error) error {
	return b.st.List(ctx, prefix, "", fn)
}

func (b storeBucket) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	body, _, err := b.st.Get(ctx, key)
	return body, err
}
