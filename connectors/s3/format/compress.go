package format

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
)

// gzipExt is CompressionType.GZIP's extension.
const gzipExt = ".gz"

// flushSize is how much encoded data the line formats collect before
// handing it to the object (and its compressor) in one write.
const flushSize = 256 << 10

// lineWriter collects encoded records and writes them to the object,
// through gzip when s3.compression.type is gzip (Confluent's
// CompressionType.wrapForOutput with s3.compression.level).
type lineWriter struct {
	out io.Writer
	gz  *gzip.Writer
	buf []byte
}

func newLineWriter(w io.Writer, s *settings) (*lineWriter, error) {
	lw := &lineWriter{out: w, buf: (*lineBufs.Get().(*[]byte))[:0]}
	if s.gzip {
		gz, err := gzip.NewWriterLevel(w, s.level)
		if err != nil {
			return nil, fmt.Errorf("gzip level %d: %w", s.level, err)
		}
		lw.gz, lw.out = gz, gz
	}
	return lw, nil
}

// maybeFlush writes the collected records once there are enough.
func (lw *lineWriter) maybeFlush() error {
	if len(lw.buf) < flushSize {
		return nil
	}
	return lw.flush()
}

func (lw *lineWriter) flush() error {
	if len(lw.buf) == 0 {
		return nil
	}
	_, err := lw.out.Write(lw.buf)
	lw.buf = lw.buf[:0]
	return err
}

// lineBufs are the line formats' buffers, big enough to collect
// flushSize bytes and the record that crosses it without growing: every
// file would otherwise grow a fresh one, copying and faulting in memory
// that a file of 14 MB pays again and again.
var lineBufs = sync.Pool{New: func() any { b := make([]byte, 0, flushSize+flushSize/4); return &b }}

// Close writes what is left and gzip's trailer; the object stays open.
func (lw *lineWriter) Close() error {
	if err := lw.flush(); err != nil {
		return err
	}
	if b := lw.buf; cap(b) <= 4*flushSize {
		// Only ordinary buffers go back: one grown by a huge record
		// would stay in memory.
		lw.buf = nil
		lineBufs.Put(&b)
	}
	if lw.gz != nil {
		return lw.gz.Close()
	}
	return nil
}

// gzipMagic starts every gzip member.
var gzipMagic = []byte{0x1f, 0x8b}

// openStream reads an object, decompressing gzip when gz says so or,
// if sniff, when the data starts with gzip's magic (no JSON text does).
func openStream(r io.ReaderAt, size int64, gz, sniff bool) (io.Reader, error) {
	if size <= 0 {
		// An empty object holds no records, compressed or not.
		return bytes.NewReader(nil), nil
	}
	br := bufio.NewReaderSize(io.NewSectionReader(r, 0, size), 64<<10)
	if !gz && sniff {
		head, _ := br.Peek(2)
		gz = bytes.Equal(head, gzipMagic)
	}
	if !gz {
		return br, nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, fmt.Errorf("reading gzip: %w", err)
	}
	return zr, nil
}
