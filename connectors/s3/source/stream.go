package source

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connectors/s3/format"
)

// storeError is an S3 failure (unreachable, throttled, ...): the task
// logs it and retries with backoff.
type storeError struct{ err error }

func (e *storeError) Error() string { return e.err.Error() }
func (e *storeError) Unwrap() error { return e.err }

// corruptError is an object whose bytes do not decode: the task fails,
// naming it.
type corruptError struct {
	key string
	err error
}

func (e *corruptError) Error() string {
	return fmt.Sprintf("S3 object %s cannot be read: %v", e.key, e.err)
}
func (e *corruptError) Unwrap() error { return e.err }

// restored is one record read back: the value from the object, the key
// and headers from the side files when present.
type restored struct {
	index       int64
	valueSchema *connect.Schema
	value       any
	keySchema   *connect.Schema
	key         any
	headers     connect.Headers
}

// objectStream reads one value object and its side files in step,
// record by record.
type objectStream struct {
	ref     objectRef
	value   sideReader
	keys    *sideReader // nil without a .keys file
	headers *sideReader // nil without a .headers file
	index   int64       // index of the next record
	ended   bool        // next returned io.EOF: the readers are not asked again
}

// sideReader is one object's format reader and the reader under it.
type sideReader struct {
	key string
	obj *objectReader
	rr  format.RecordReader
}

func openSide(ctx context.Context, b bucket, f format.Format, key string, size int64) (sideReader, error) {
	obj := newObjectReader(ctx, b, key, size)
	rr, err := f.NewReader(obj, size)
	if err != nil {
		err = classify(key, obj, err)
		obj.Close()
		return sideReader{}, err
	}
	return sideReader{key: key, obj: obj, rr: rr}, nil
}

// next reads one record; errors are classified (storeError, corruptError).
func (s *sideReader) next() (*connect.Schema, any, error) {
	sch, v, err := s.rr.Next()
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, nil, classify(s.key, s.obj, err)
	}
	return sch, v, err
}

// classify tells an S3 failure under a format reader from bad bytes:
// the objectReader saw the S3 error, whatever the reader made of it.
func classify(key string, obj *objectReader, err error) error {
	if ioErr := obj.failed(); ioErr != nil {
		return &storeError{fmt.Errorf("read %s: %w", key, ioErr)}
	}
	return &corruptError{key: key, err: err}
}

// close ends the streams of the object and its side files.
func (o *objectStream) close() {
	for _, s := range []*sideReader{&o.value, o.keys, o.headers} {
		if s != nil && s.obj != nil {
			s.obj.Close()
		}
	}
}

// openObject opens ref and its side files and skips its first skip
// records (emitted before a restart or a retry).
func openObject(ctx context.Context, b bucket, s *settings, ref objectRef, skip int64) (*objectStream, error) {
	v, err := openSide(ctx, b, s.value, ref.Key, ref.Size)
	if err != nil {
		return nil, err
	}
	o := &objectStream{ref: ref, value: v}
	fail := func(err error) (*objectStream, error) {
		o.close()
		return nil, err
	}
	if ref.KeysKey != "" {
		k, err := openSide(ctx, b, s.keys, ref.KeysKey, ref.KeysSize)
		if err != nil {
			return fail(err)
		}
		o.keys = &k
	}
	if ref.HeadersKey != "" {
		h, err := openSide(ctx, b, s.headers, ref.HeadersKey, ref.HeadersSize)
		if err != nil {
			return fail(err)
		}
		o.headers = &h
	}
	for o.index < skip {
		if _, err := o.next(); err != nil {
			if errors.Is(err, io.EOF) {
				return o, nil // everything was emitted; next says EOF again
			}
			return fail(err)
		}
	}
	return o, nil
}

// next returns the next record, io.EOF after the last.
func (o *objectStream) next() (restored, error) {
	if o.ended {
		return restored{}, io.EOF
	}
	vs, v, err := o.value.next()
	if errors.Is(err, io.EOF) {
		err = o.checkSidesEnd()
		o.ended = errors.Is(err, io.EOF)
		return restored{}, err
	}
	if err != nil {
		return restored{}, err
	}
	r := restored{index: o.index, valueSchema: vs, value: v}
	if o.keys != nil {
		ks, k, err := o.keys.next()
		if err != nil {
			return restored{}, o.short(o.keys, err)
		}
		r.keySchema, r.key = ks, k
	}
	if o.headers != nil {
		_, hv, err := o.headers.next()
		if err != nil {
			return restored{}, o.short(o.headers, err)
		}
		if r.headers, err = format.HeadersFromView(hv); err != nil {
			return restored{}, &corruptError{key: o.headers.key, err: fmt.Errorf("record %d: %w", o.index, err)}
		}
	}
	o.index++
	return r, nil
}

// short reports a side file that ended before its value object.
func (o *objectStream) short(s *sideReader, err error) error {
	if errors.Is(err, io.EOF) {
		return &corruptError{key: s.key, err: fmt.Errorf("it has %d records, its object %s has more", o.index, o.ref.Key)}
	}
	return err
}

// checkSidesEnd makes sure the side files end with the value object:
// more keys or headers than values means they do not line up.
func (o *objectStream) checkSidesEnd() error {
	for _, s := range []*sideReader{o.keys, o.headers} {
		if s == nil {
			continue
		}
		_, _, err := s.next()
		switch {
		case err == nil:
			return &corruptError{key: s.key, err: fmt.Errorf("it has more records than the %d of its object %s", o.index, o.ref.Key)}
		case !errors.Is(err, io.EOF):
			return err
		}
	}
	return io.EOF
}
