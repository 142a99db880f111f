// Package storage is the S3 side of the S3 connectors: a client built from
// Confluent's s3.* keys (any S3-compatible endpoint), uploads that go
// multipart above s3.part.size and are aborted on failure, listing,
// reading and deleting objects, with the SDK's retries and backoff set
// from s3.part.retries and s3.retry.backoff.ms.
package storage
