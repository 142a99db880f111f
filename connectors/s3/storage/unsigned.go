package storage

import (
	"context"

	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/smithy-go/middleware"
)

// Over plain HTTP the SDK signs every upload's payload: it reads the body
// once for a SHA-256 (beside the CRC32 checksum header), and the server
// hashes it again to check the signature. Over TLS the SDK already sends
// bodies as unsigned payload with a trailing CRC32, so that is only the
// HTTP case. For an endpoint on this machine (MinIO in tests and
// benchmarks, a local gateway) nobody can tamper with the bytes in
// flight, so the payload is sent as UNSIGNED-PAYLOAD: the request itself
// stays signed, and the CRC32 checksum header (still computed, still
// signed, verified by the server) catches corruption. For any other HTTP
// endpoint the signed payload is kept — there it is the only thing
// stopping someone on the path from swapping the body.

const checksumMiddlewareID = "AWSChecksum:ComputeInputPayloadChecksum"

// unsignedPayload marks the payload unsigned before the checksum
// middleware runs: that middleware skips its SHA-256 when a payload hash
// is already set, and the signer then signs "UNSIGNED-PAYLOAD".
func unsignedPayload(stack *middleware.Stack) error {
	m := middleware.FinalizeMiddlewareFunc("fjord:UnsignedPayload",
		func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (
			middleware.FinalizeOutput, middleware.Metadata, error) {
			return next.HandleFinalize(v4.SetPayloadHash(ctx, "UNSIGNED-PAYLOAD"), in)
		})
	for _, id := range []string{checksumMiddlewareID, "ComputePayloadHash"} {
		if _, ok := stack.Finalize.Get(id); ok {
			return stack.Finalize.Insert(m, id, middleware.Before)
		}
	}
	return nil
}
