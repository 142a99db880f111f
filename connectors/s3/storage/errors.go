package storage

import (
	"errors"
	"fmt"
	"net"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
)

// ErrNotFound is wrapped by the errors of Head, Get and ReadAll for a
// missing object: errors.Is(err, ErrNotFound).
var ErrNotFound = errors.New("not found")

// fail wraps err from operation op on key (or on the bucket when key is
// "") with where it happened and what to do next.
func (s *Store) fail(op, key string, err error) error {
	where := "s3://" + s.cfg.Bucket
	if key != "" {
		where += "/" + key
	}
	if hint := s.hint(err); hint != "" {
		return fmt.Errorf("s3: %s %s: %w (%s)", op, where, err, hint)
	}
	return fmt.Errorf("s3: %s %s: %w", op, where, err)
}

// notFound wraps a missing object's error so it matches ErrNotFound.
func (s *Store) notFound(op, key string, err error) error {
	return fmt.Errorf("s3: %s s3://%s/%s: %w: %w", op, s.cfg.Bucket, key, ErrNotFound, err)
}

// isNotFound reports whether err says the object is missing: NoSuchKey,
// or a bare 404 (HEAD responses have no body, so no code).
func isNotFound(err error) bool {
	switch errorCode(err) {
	case "NoSuchKey", "NotFound":
		return true
	case "NoSuchBucket":
		return false
	}
	var re *awshttp.ResponseError
	return errors.As(err, &re) && re.HTTPStatusCode() == 404
}

func errorCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

func (s *Store) hint(err error) string {
	endpoint := s.cfg.Endpoint
	if endpoint == "" {
		endpoint = "AWS S3 in " + s.cfg.Region
	}
	var attempts string
	var me *retry.MaxAttemptsError
	if errors.As(err, &me) {
		attempts = fmt.Sprintf("gave up after %d attempts (%s=%d); ", me.Attempt, KeyPartRetries, s.cfg.Retries)
	}
	switch errorCode(err) {
	case "NoSuchBucket":
		return attempts + fmt.Sprintf("bucket %q does not exist at %s: create it or fix %s",
			s.cfg.Bucket, endpoint, KeyBucket)
	case "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken",
		"InvalidToken", "TokenRefreshRequired", "AllAccessDisabled":
		return attempts + fmt.Sprintf("%s refused the credentials: check %s and %s (or the AWS "+
			"credentials chain) and the bucket's policy", endpoint, KeyAccessKeyID, KeySecretAccessKey)
	case "PermanentRedirect", "AuthorizationHeaderMalformed", "IllegalLocationConstraintException":
		return attempts + fmt.Sprintf("bucket %q is not in region %s: set %s to the bucket's region",
			s.cfg.Bucket, s.cfg.Region, KeyRegion)
	case "SlowDown", "Throttling", "ThrottlingException", "RequestLimitExceeded":
		return attempts + "the store is throttling requests: raise " + KeyRetryBackoffMs +
			" or lower the request rate"
	}
	var oe *net.OpError
	var de *net.DNSError
	if errors.As(err, &oe) || errors.As(err, &de) {
		return attempts + fmt.Sprintf("cannot reach %s: check %s and that the store is up", endpoint, KeyStoreURL)
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.HTTPStatusCode() >= 500 {
		return attempts + fmt.Sprintf("%s is failing (HTTP %d): check the store's health", endpoint, re.HTTPStatusCode())
	}
	if attempts != "" {
		return attempts[:len(attempts)-2]
	}
	return ""
}
