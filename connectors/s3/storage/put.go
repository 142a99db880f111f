package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/s3/manager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// abortTimeout bounds the clean-up of a failed multipart upload whose
// context had already ended.
const abortTimeout = 30 * time.Second

// Put writes size bytes of r as object key with user metadata meta
// (x-amz-meta-*; keys are stored lower-case). An object smaller than
// s3.part.size is one PutObject; a bigger one (or size < 0: unknown) is a
// multipart upload of s3.part.size parts, several in flight, aborted if
// any part fails so no parts are left behind.
//
// Pass an io.ReaderAt that is also an io.ReadSeeker (*bytes.Reader,
// *os.File, io.SectionReader) to upload without copying: parts are then
// sections of r, and retries re-read them. Any other reader is copied,
// part by part.
func (s *Store) Put(ctx context.Context, key string, r io.Reader, size int64, meta map[string]string) error {
	r = exactly(r, size)
	if size >= 0 && size < s.cfg.PartSize {
		return s.putSingle(ctx, key, r, size, meta)
	}
	in := &s3.PutObjectInput{Bucket: aws.String(s.cfg.Bucket), Key: aws.String(key), Body: r,
		Metadata: lowerKeys(meta)}
	s.encryptPut(in)
	_, err := s.uploader.Upload(ctx, in)
	if err == nil {
		return nil
	}
	var mf manager.MultiUploadFailure
	if errors.As(err, &mf) && ctx.Err() != nil {
		// The uploader aborts with the caller's context, which has
		// ended: abort here so the parts do not linger (and cost).
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortTimeout)
		_, _ = s.client.AbortMultipartUpload(actx, &s3.AbortMultipartUploadInput{
			Bucket: aws.String(s.cfg.Bucket), Key: aws.String(key), UploadId: aws.String(mf.UploadID())})
		cancel()
	}
	return s.fail("multipart upload of", key, err)
}

func (s *Store) putSingle(ctx context.Context, key string, r io.Reader, size int64, meta map[string]string) error {
	// The SDK needs a seekable body to checksum it and to resend it on a
	// retry; a plain reader is read into memory (it is below the part
	// size).
	if _, ok := r.(io.ReadSeeker); !ok {
		buf := make([]byte, size)
		if _, err := io.ReadFull(r, buf); err != nil {
			return fmt.Errorf("s3: put s3://%s/%s: read the %d bytes to upload: %w", s.cfg.Bucket, key, size, err)
		}
		r = bytes.NewReader(buf)
	}
	in := &s3.PutObjectInput{Bucket: aws.String(s.cfg.Bucket), Key: aws.String(key), Body: r,
		ContentLength: aws.Int64(size), Metadata: lowerKeys(meta)}
	s.encryptPut(in)
	if _, err := s.client.PutObject(ctx, in); err != nil {
		return s.fail("put", key, err)
	}
	return nil
}

// readerAtSeeker is what the upload manager reads parts from in place.
type readerAtSeeker interface {
	io.ReaderAt
	io.ReadSeeker
}

// exactly limits r to its next size bytes (the SDK would otherwise
// checksum and send r up to its end).
func exactly(r io.Reader, size int64) io.Reader {
	if size < 0 {
		return r
	}
	if ra, ok := r.(readerAtSeeker); ok {
		if pos, err := ra.Seek(0, io.SeekCurrent); err == nil {
			if end, err := ra.Seek(0, io.SeekEnd); err == nil {
				if _, err := ra.Seek(pos, io.SeekStart); err == nil && end-pos == size {
					return r
				}
			}
			return io.NewSectionReader(ra, pos, size)
		}
	}
	if _, ok := r.(io.ReadSeeker); ok {
		return r
	}
	return io.LimitReader(r, size)
}

// encryptPut sets the configured encryption and ACL, as Confluent's sink
// does: AES256 alone is SSE-S3, AES256 with a customer key is SSE-C,
// aws:kms(:dsse) needs a key ID (without one nothing is requested).
func (s *Store) encryptPut(in *s3.PutObjectInput) {
	if s.cfg.CannedACL != "" {
		in.ACL = types.ObjectCannedACL(s.cfg.CannedACL)
	}
	alg := strings.ToLower(s.cfg.SSEAlgorithm)
	switch {
	case alg == "aes256" && s.sseCKMD5 != "":
		in.SSECustomerAlgorithm, in.SSECustomerKey, in.SSECustomerKeyMD5 = s.sseC()
	case alg == "aes256":
		in.ServerSideEncryption = types.ServerSideEncryptionAes256
	case strings.HasPrefix(alg, "aws:kms") && s.cfg.SSEKMSKeyID != "":
		in.ServerSideEncryption = types.ServerSideEncryption(alg)
		in.SSEKMSKeyId = aws.String(s.cfg.SSEKMSKeyID)
	}
}

// sseC returns the SSE-C headers' values (all nil without SSE-C): reads
// of an SSE-C object need the key too.
func (s *Store) sseC() (alg, key, md5 *string) {
	if s.sseCKMD5 == "" || !strings.EqualFold(s.cfg.SSEAlgorithm, "AES256") {
		return nil, nil, nil
	}
	return aws.String("AES256"), aws.String(strings.TrimSpace(s.cfg.SSECustomerKey)), aws.String(s.sseCKMD5)
}

func lowerKeys(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[strings.ToLower(k)] = v
	}
	return out
}
