package sink

import (
	"bufio"
	"errors"
	"io"
	"os"
	"sync"
)

// spoolChunk is the unit a spool's memory grows by: fixed-size chunks
// from a pool, so a file growing to tens of MiB is never copied into a
// bigger slice (growing one slice cost a fifth of the sink's CPU).
const spoolChunk = 1 << 20

var chunkPool = sync.Pool{New: func() any { b := make([]byte, spoolChunk); return &b }}

// spool holds one object's bytes until it is uploaded: in memory up to
// limit (s3.part.size, Confluent's per-file buffer), then in a temporary
// file, so an open file costs bounded memory however large it grows.
type spool struct {
	chunks []*[]byte
	last   int // bytes used in the last chunk
	file   *os.File
	buf    *bufio.Writer
	size   int64
	limit  int64
}

func newSpool(limit int64) *spool { return &spool{limit: limit} }

func (s *spool) Write(p []byte) (int, error) {
	n := len(p)
	if s.file == nil && s.size+int64(n) > s.limit {
		if err := s.spill(); err != nil {
			return 0, err
		}
	}
	s.size += int64(n)
	if s.file != nil {
		return s.buf.Write(p)
	}
	for len(p) > 0 {
		if len(s.chunks) == 0 || s.last == spoolChunk {
			s.chunks = append(s.chunks, chunkPool.Get().(*[]byte))
			s.last = 0
		}
		c := copy((*s.chunks[len(s.chunks)-1])[s.last:], p)
		s.last += c
		p = p[c:]
	}
	return n, nil
}

// spill moves the bytes so far to a temporary file.
func (s *spool) spill() error {
	f, err := os.CreateTemp("", "fjord-s3-spool-*")
	if err != nil {
		return err
	}
	// The file is only ours: unlinked at once, it disappears with the
	// process even after a crash.
	_ = os.Remove(f.Name())
	s.file = f
	s.buf = bufio.NewWriterSize(f, 1<<20)
	for i, c := range s.chunks {
		b := *c
		if i == len(s.chunks)-1 {
			b = b[:s.last]
		}
		if _, err := s.buf.Write(b); err != nil {
			return err
		}
	}
	s.putChunks()
	return nil
}

// reader returns the bytes written so far, readable (and seekable, for
// upload retries) from the start.
func (s *spool) reader() (io.ReadSeeker, error) {
	if s.file == nil {
		return &chunkReader{s: s}, nil
	}
	if err := s.buf.Flush(); err != nil {
		return nil, err
	}
	return io.NewSectionReader(s.file, 0, s.size), nil
}

func (s *spool) release() {
	if s.file != nil {
		s.file.Close()
		s.file = nil
	}
	s.putChunks()
}

func (s *spool) putChunks() {
	for _, c := range s.chunks {
		chunkPool.Put(c)
	}
	s.chunks, s.last = nil, 0
}

// chunkReader reads a spool's memory chunks as one stream; it is an
// io.ReaderAt too, so the upload sends the bytes in place.
type chunkReader struct {
	s   *spool
	off int64
}

func (r *chunkReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("spool: negative offset")
	}
	n := 0
	for len(p) > 0 && off < r.s.size {
		i, at := int(off/spoolChunk), int(off%spoolChunk)
		end := spoolChunk
		if i == len(r.s.chunks)-1 {
			end = r.s.last
		}
		c := copy(p, (*r.s.chunks[i])[at:end])
		n += c
		off += int64(c)
		p = p[c:]
	}
	if len(p) > 0 {
		return n, io.EOF
	}
	return n, nil
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if r.off >= r.s.size {
		return 0, io.EOF
	}
	n, err := r.ReadAt(p, r.off)
	r.off += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

func (r *chunkReader) Seek(offset int64, whence int) (int64, error) {
	var abs int64
	switch whence {
	case io.SeekStart:
		abs = offset
	case io.SeekCurrent:
		abs = r.off + offset
	case io.SeekEnd:
		abs = r.s.size + offset
	default:
		return 0, errors.New("spool: bad whence")
	}
	if abs < 0 {
		return 0, errors.New("spool: negative position")
	}
	r.off = abs
	return abs, nil
}
