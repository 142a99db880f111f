package storage

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Object is one listed object.
type Object struct {
	Key          string
	Size         int64
	LastModified time.Time
}

// List calls fn for every object whose key starts with prefix and sorts
// after startAfter ("" = from the first), in key order, page by page
// (ListObjectsV2). An error from fn stops the listing and is returned
// as is.
func (s *Store) List(ctx context.Context, prefix, startAfter string, fn func(Object) error) error {
	in := &s3.ListObjectsV2Input{Bucket: aws.String(s.cfg.Bucket), Prefix: aws.String(prefix)}
	if startAfter != "" {
		in.StartAfter = aws.String(startAfter)
	}
	if s.pageSize > 0 {
		in.MaxKeys = aws.Int32(s.pageSize)
	}
	p := s3.NewListObjectsV2Paginator(s.client, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return s.fail("list", prefix+"*", err)
		}
		for _, o := range page.Contents {
			obj := Object{Key: aws.ToString(o.Key), Size: aws.ToInt64(o.Size)}
			if o.LastModified != nil {
				obj.LastModified = *o.LastModified
			}
			if err := fn(obj); err != nil {
				return err
			}
		}
	}
	return nil
}

// Head returns an object's user metadata (lower-case keys) and size; a
// missing object's error matches ErrNotFound (so does a missing bucket's:
// a HEAD answer has no body to tell them apart — CheckBucket does).
func (s *Store) Head(ctx context.Context, key string) (map[string]string, int64, error) {
	in := &s3.HeadObjectInput{Bucket: aws.String(s.cfg.Bucket), Key: aws.String(key)}
	in.SSECustomerAlgorithm, in.SSECustomerKey, in.SSECustomerKeyMD5 = s.sseC()
	out, err := s.client.HeadObject(ctx, in)
	if err != nil {
		if isNotFound(err) {
			return nil, 0, s.notFound("head", key, err)
		}
		return nil, 0, s.fail("head", key, err)
	}
	meta := make(map[string]string, len(out.Metadata))
	for k, v := range out.Metadata {
		meta[strings.ToLower(k)] = v
	}
	return meta, aws.ToInt64(out.ContentLength), nil
}

// Get opens an object for reading and returns its size; the caller
// closes the reader. A missing object's error matches ErrNotFound.
func (s *Store) Get(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	in := &s3.GetObjectInput{Bucket: aws.String(s.cfg.Bucket), Key: aws.String(key)}
	in.SSECustomerAlgorithm, in.SSECustomerKey, in.SSECustomerKeyMD5 = s.sseC()
	out, err := s.client.GetObject(ctx, in)
	if err != nil {
		if isNotFound(err) {
			return nil, 0, s.notFound("get", key, err)
		}
		return nil, 0, s.fail("get", key, err)
	}
	return out.Body, aws.ToInt64(out.ContentLength), nil
}

// ReadAll returns an object's bytes.
func (s *Store) ReadAll(ctx context.Context, key string) ([]byte, error) {
	body, size, err := s.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	// One allocation of the advertised size; a short body is an error
	// (the connection broke), not a short object.
	buf := make([]byte, size)
	if _, err := io.ReadFull(body, buf); err != nil {
		return nil, s.fail("read", key, fmt.Errorf("read %d bytes: %w", size, err))
	}
	return buf, nil
}

// deleteBatch is DeleteObjects' limit of keys per request.
const deleteBatch = 1000

// Delete removes keys (missing keys are not an error), up to 1000 per
// request.
func (s *Store) Delete(ctx context.Context, keys ...string) error {
	for len(keys) > 0 {
		n := min(len(keys), deleteBatch)
		batch := keys[:n]
		keys = keys[n:]
		ids := make([]types.ObjectIdentifier, len(batch))
		for i, k := range batch {
			ids[i] = types.ObjectIdentifier{Key: aws.String(k)}
		}
		out, err := s.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{
			Bucket: aws.String(s.cfg.Bucket),
			Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)},
		})
		if err != nil {
			return s.fail("delete", batch[0], err)
		}
		if len(out.Errors) > 0 {
			e := out.Errors[0]
			return fmt.Errorf("s3: delete s3://%s/%s: %s: %s (and %d more failed keys)", s.cfg.Bucket,
				aws.ToString(e.Key), aws.ToString(e.Code), aws.ToString(e.Message), len(out.Errors)-1)
		}
	}
	return nil
}

// Tag replaces an object's tags (the sink's s3.object.tagging).
func (s *Store) Tag(ctx context.Context, key string, tags map[string]string) error {
	set := make([]types.Tag, 0, len(tags))
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		set = append(set, types.Tag{Key: aws.String(k), Value: aws.String(tags[k])})
	}
	_, err := s.client.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{
		Bucket: aws.String(s.cfg.Bucket), Key: aws.String(key), Tagging: &types.Tagging{TagSet: set}})
	if err != nil {
		return s.fail("tag", key, err)
	}
	return nil
}
