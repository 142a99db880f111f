package source

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/fjordhq/fjord/connectors/s3/storage"
)

// bucket is what the connector and its tasks need of S3: listing and
// reading objects. storeBucket is the real one; the tests use fakes.
type bucket interface {
	// List calls fn for every object under prefix, in key order.
	List(ctx context.Context, prefix string, fn func(storage.Object) error) error
	// Open streams an object from its start.
	Open(ctx context.Context, key string) (io.ReadCloser, error)
}

// maxSkip is how far ahead of the stream a read may start and still be
// served by reading on (discarding the gap) rather than loading the
// object whole.
const maxSkip = 1 << 20

// objectReader is an io.ReaderAt over one object. Readers that read in
// order (JSON lines, Avro containers, byte arrays, gzip) are served from
// one streamed GET, so an object is never in memory whole; the first read
// out of order (Parquet starts at its footer) loads the object into
// memory and serves every later read from there.
//
// It remembers the first S3 error, so that a format reader's failure can
// be told apart: S3 unreachable (retried) or the object's bytes bad (the
// task fails, naming the object).
type objectReader struct {
	ctx  context.Context
	b    bucket
	key  string
	size int64

	mu     sync.Mutex // format readers may read concurrently
	body   io.ReadCloser
	pos    int64  // the stream's position
	whole  []byte // the object, once loaded
	ioErr  error
	closed bool
}

func newObjectReader(ctx context.Context, b bucket, key string, size int64) *objectReader {
	return &objectReader{ctx: ctx, b: b, key: key, size: size}
}

func (r *objectReader) ReadAt(p []byte, off int64) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if off < 0 {
		return 0, fmt.Errorf("read %s at negative offset %d", r.key, off)
	}
	if r.closed {
		// Stop closed it under a running Poll: an S3-side failure, so
		// the records are read again rather than the object blamed.
		return 0, r.fail(fmt.Errorf("read %s: the task is stopping", r.key))
	}
	if r.whole == nil && (off < r.pos || off-r.pos > maxSkip) {
		if err := r.loadWhole(); err != nil {
			return 0, err
		}
	}
	if r.whole != nil {
		if off >= int64(len(r.whole)) {
			return 0, io.EOF
		}
		n := copy(p, r.whole[off:])
		if n < len(p) {
			return n, io.EOF
		}
		return n, nil
	}
	if r.body == nil {
		body, err := r.b.Open(r.ctx, r.key)
		if err != nil {
			return 0, r.fail(err)
		}
		r.body, r.pos = body, 0
	}
	if gap := off - r.pos; gap > 0 {
		n, err := io.CopyN(io.Discard, r.body, gap)
		r.pos += n
		if err != nil {
			return 0, r.streamErr(err)
		}
	}
	n, err := io.ReadFull(r.body, p)
	r.pos += int64(n)
	if err != nil {
		return n, r.streamErr(err)
	}
	return n, nil
}

// streamErr turns the end of the stream into io.EOF (a reader asking past
// the end); a stream that breaks before the listed size is an S3 failure.
func (r *objectReader) streamErr(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		if r.pos >= r.size {
			return io.EOF
		}
		return r.fail(fmt.Errorf("the stream ended at byte %d of %d: %w", r.pos, r.size, err))
	}
	return r.fail(err)
}

// loadWhole reads the whole object into memory (closing the stream).
func (r *objectReader) loadWhole() error {
	r.closeBody()
	body, err := r.b.Open(r.ctx, r.key)
	if err != nil {
		return r.fail(err)
	}
	defer body.Close()
	buf := make([]byte, 0, r.size)
	buf, err = readAllInto(buf, body)
	if err != nil {
		return r.fail(err)
	}
	r.whole = buf
	return nil
}

func readAllInto(buf []byte, rd io.Reader) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := rd.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

func (r *objectReader) fail(err error) error {
	if r.ioErr == nil {
		r.ioErr = err
	}
	return err
}

func (r *objectReader) closeBody() {
	if r.body != nil {
		r.body.Close()
		r.body = nil
	}
}

// Close ends the stream.
func (r *objectReader) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closeBody()
	r.whole = nil
	r.closed = true
}

// failed returns the first S3 error a read hit, nil if none.
func (r *objectReader) failed() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ioErr
}
