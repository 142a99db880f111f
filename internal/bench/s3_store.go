package bench

import (
	"context"
	"fmt"
	"maps"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fjordhq/fjord/connectors/s3/storage"
)

// s3Region is the region the benchmark names: MinIO's default, and the
// one a CreateBucket must not name as a location.
const s3Region = "us-east-1"

// s3Endpoint is where the benchmark's buckets live and how to reach them.
type s3Endpoint struct {
	url      string // http://127.0.0.1:port
	partSize int64  // s3.part.size; 0 = the sink's default
}

// props are the S3 transport keys (Confluent's names) for bucket: the
// sink gets exactly these, and the raw PUT builds its Store from them, so
// both go through the same SDK client settings.
func (e s3Endpoint) props(bucket string) map[string]string {
	p := map[string]string{
		storage.KeyBucket:          bucket,
		storage.KeyRegion:          s3Region,
		storage.KeyStoreURL:        e.url,
		storage.KeyPathStyle:       "true",
		storage.KeyAccessKeyID:     minioUser,
		storage.KeySecretAccessKey: minioPassword,
	}
	if e.partSize > 0 {
		p[storage.KeyPartSize] = strconv.FormatInt(e.partSize, 10)
	}
	return p
}

// store is a Store on bucket, configured as the sink configures its own.
func (e s3Endpoint) store(ctx context.Context, bucket string) (*storage.Store, error) {
	cfg, err := storage.ConfigFrom(e.props(bucket))
	if err != nil {
		return nil, err
	}
	return storage.New(ctx, cfg)
}

// bucketContents is what a listing found: object sizes by key.
type bucketContents struct {
	sizes map[string]int64
	bytes int64
}

func (c bucketContents) objects() int { return len(c.sizes) }

// listBucket lists every object of the store's bucket.
func listBucket(ctx context.Context, st *storage.Store) (bucketContents, error) {
	c := bucketContents{sizes: map[string]int64{}}
	err := st.List(ctx, "", "", func(o storage.Object) error {
		c.sizes[o.Key] = o.Size
		c.bytes += o.Size
		return nil
	})
	return c, err
}

// dropBucket deletes every object of the bucket and the bucket, so that
// the next phase starts from a store holding nothing of this one.
func dropBucket(ctx context.Context, st *storage.Store) error {
	c, err := listBucket(ctx, st)
	if err != nil {
		return err
	}
	keys := make([]string, 0, c.objects())
	for k := range maps.Keys(c.sizes) {
		keys = append(keys, k)
	}
	if len(keys) > 0 {
		if err := st.Delete(ctx, keys...); err != nil {
			return err
		}
	}
	if _, err := st.Client().DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(st.Bucket())}); err != nil {
		return fmt.Errorf("delete bucket %s: %w", st.Bucket(), err)
	}
	return nil
}
