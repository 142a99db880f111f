package storage

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// AbortUploads aborts every incomplete multipart upload under prefix and
// returns how many it aborted. A sink that takes over a partition after a
// crash calls it: the crashed task's half-written file is never
// completed, and its parts would stay (and be billed) until aborted.
//
// MinIO lists the uploads of one exact key only (a prefix that is not a
// whole key finds nothing there; MinIO drops stale uploads itself after
// 24 h), so pass the key the crashed writer was writing when it is known:
// an exact key works on every store.
func (s *Store) AbortUploads(ctx context.Context, prefix string) (int, error) {
	n := 0
	in := &s3.ListMultipartUploadsInput{Bucket: aws.String(s.cfg.Bucket), Prefix: aws.String(prefix)}
	if s.pageSize > 0 {
		in.MaxUploads = aws.Int32(s.pageSize)
	}
	for {
		out, err := s.client.ListMultipartUploads(ctx, in)
		if err != nil {
			return n, s.fail("list multipart uploads under", prefix+"*", err)
		}
		for _, u := range out.Uploads {
			_, err := s.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{
				Bucket: aws.String(s.cfg.Bucket), Key: u.Key, UploadId: u.UploadId})
			if err != nil {
				// Completed or aborted by someone else meanwhile: gone
				// either way.
				var nsu *types.NoSuchUpload
				if errors.As(err, &nsu) || errorCode(err) == "NoSuchUpload" {
					continue
				}
				return n, s.fail("abort multipart upload of", aws.ToString(u.Key), err)
			}
			n++
		}
		if !aws.ToBool(out.IsTruncated) {
			return n, nil
		}
		in.KeyMarker, in.UploadIdMarker = out.NextKeyMarker, out.NextUploadIdMarker
	}
}

// CheckBucket checks that the bucket exists and the credentials may use
// it; its error says which setting to look at.
func (s *Store) CheckBucket(ctx context.Context) error {
	_, err := s.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(s.cfg.Bucket)})
	if err == nil {
		return nil
	}
	endpoint := s.cfg.Endpoint
	if endpoint == "" {
		endpoint = "AWS S3 in " + s.cfg.Region
	}
	// HEAD answers have no body, so the status says what went wrong.
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		switch re.HTTPStatusCode() {
		case 404:
			return fmt.Errorf("s3: bucket %q does not exist at %s: create it, or fix %s / %s: %w",
				s.cfg.Bucket, endpoint, KeyBucket, KeyStoreURL, err)
		case 403:
			return fmt.Errorf("s3: access to bucket %q at %s denied: check %s and %s (or the AWS "+
				"credentials chain) and the bucket's policy: %w", s.cfg.Bucket, endpoint,
				KeyAccessKeyID, KeySecretAccessKey, err)
		case 301, 400:
			return fmt.Errorf("s3: bucket %q at %s answered HTTP %d, usually a region mismatch: set %s "+
				"to the bucket's region: %w", s.cfg.Bucket, endpoint, re.HTTPStatusCode(), KeyRegion, err)
		}
	}
	return s.fail("check bucket", "", err)
}

// CreateBucket creates the bucket; an existing bucket the credentials can
// use is not an error.
func (s *Store) CreateBucket(ctx context.Context) error {
	in := &s3.CreateBucketInput{Bucket: aws.String(s.cfg.Bucket)}
	// us-east-1 is S3's default location and must not be named.
	if s.cfg.Region != "us-east-1" {
		in.CreateBucketConfiguration = &types.CreateBucketConfiguration{
			LocationConstraint: types.BucketLocationConstraint(s.cfg.Region)}
	}
	_, err := s.client.CreateBucket(ctx, in)
	if err == nil {
		return nil
	}
	switch errorCode(err) {
	case "BucketAlreadyOwnedByYou":
		return nil
	case "BucketAlreadyExists":
		// Owned by someone else on AWS — or by us on stores that do not
		// tell the difference: ours if we can use it.
		if s.CheckBucket(ctx) == nil {
			return nil
		}
	}
	return s.fail("create bucket", "", err)
}
