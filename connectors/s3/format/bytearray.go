package format

import (
	"bufio"
	"bytes"
	"fmt"
	"io"

	"github.com/fjordhq/fjord/connect"
)

// ByteArrayFormat writes each value's bytes followed by
// format.bytearray.separator, as Confluent's ByteArrayRecordWriterProvider
// with Kafka's ByteArrayConverter: the value must be bytes (a BYTES
// schema or none). Fjord also takes a string value, as its UTF-8 bytes.
// A null value is refused (Confluent's writer fails on it too).
//
// Reading splits the object at the separator, so a value that contains
// the separator comes back as several records, as Confluent's docs warn;
// with an empty separator the whole object is one record.
type byteArrayFormat struct{ s *settings }

func (f *byteArrayFormat) Extension() string {
	if f.s.gzip {
		return f.s.byteExt + gzipExt
	}
	return f.s.byteExt
}

func (f *byteArrayFormat) NewWriter(w io.Writer) (RecordWriter, error) {
	lw, err := newLineWriter(w, f.s)
	if err != nil {
		return nil, err
	}
	return &byteArrayWriter{lw: lw, sep: f.s.byteSep}, nil
}

type byteArrayWriter struct {
	lw  *lineWriter
	sep []byte
}

func (w *byteArrayWriter) Write(s *connect.Schema, v any) error {
	if s != nil && s.Type != connect.Bytes && s.Type != connect.String {
		return &connect.DataError{Msg: "Invalid schema type for ByteArrayConverter: " + s.Type.String()}
	}
	switch x := v.(type) {
	case []byte:
		w.lw.buf = append(w.lw.buf, x...)
	case string:
		w.lw.buf = append(w.lw.buf, x...)
	case nil:
		return &connect.DataError{Msg: "ByteArrayFormat cannot write a null value"}
	default:
		return &connect.DataError{Msg: fmt.Sprintf("ByteArrayConverter is not compatible with objects of type %T", v)}
	}
	w.lw.buf = append(w.lw.buf, w.sep...)
	return w.lw.maybeFlush()
}

func (w *byteArrayWriter) Close() error { return w.lw.Close() }

func (f *byteArrayFormat) NewReader(r io.ReaderAt, size int64) (RecordReader, error) {
	in, err := openStream(r, size, f.s.gzip, false)
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	sep := f.s.byteSep
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		if len(sep) > 0 {
			if i := bytes.Index(data, sep); i >= 0 {
				return i + len(sep), data[:i], nil
			}
		}
		if atEOF {
			if len(data) == 0 {
				return 0, nil, nil
			}
			// The last record has no separator after it (not written
			// by a sink, or an empty separator).
			return len(data), data, bufio.ErrFinalToken
		}
		return 0, nil, nil
	})
	return &byteArrayReader{sc: sc}, nil
}

type byteArrayReader struct{ sc *bufio.Scanner }

// Next returns each record's bytes as OPTIONAL_BYTES, as the
// ByteArrayConverter reads them.
func (r *byteArrayReader) Next() (*connect.Schema, any, error) {
	if r.sc.Scan() {
		return connect.OptionalBytesSchema, bytes.Clone(r.sc.Bytes()), nil
	}
	if err := r.sc.Err(); err != nil {
		return nil, nil, err
	}
	return nil, nil, io.EOF
}
