// Package storage is the S3 side of the S3 connectors: a client built from
// Confluent's s3.* keys (any S3-compatible endpoint), uploads that go
// multipart above s3.part.size and are aborted on failure, listing,
// reading and deleting objects, with the SDK's retries and backoff set
// from s3.part.retries and s3.retry.backoff.ms.
//
// Define and Validate publish and check the keys, ConfigFrom parses them,
// New builds a Store. Credentials are aws.access.key.id and
// aws.secret.access.key when set, otherwise the AWS default chain (the
// environment and ~/.aws files, which also carry SDK settings such as
// AWS_REQUEST_CHECKSUM_CALCULATION=when_required for stores that reject
// the SDK's default CRC32 checksums).
package storage
