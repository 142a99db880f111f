package sink

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"sync"
)

// spool holds one object's bytes until it is uploaded: in memory up to
// limit (s3.part.size, Confluent's per-file buffer), then in a temporary
// file, so an open file costs bounded memory however large it grows.
type spool struct {
	mem   []byte
	file  *os.File
	buf   *bufio.Writer
	size  int64
	limit int64
}

var spoolBufs = sync.Pool{New: func() any { return make([]byte, 0, 256<<10) }}

func newSpool(limit int64) *spool {
	return &spool{mem: spoolBufs.Get().([]byte)[:0], limit: limit}
}

func (s *spool) Write(p []byte) (int, error) {
	s.size += int64(len(p))
	if s.file == nil {
		if int64(len(s.mem)+len(p)) <= s.limit {
			s.mem = append(s.mem, p...)
			return len(p), nil
		}
		if err := s.spill(); err != nil {
			return 0, err
		}
	}
	return s.buf.Write(p)
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
	if _, err := s.buf.Write(s.mem); err != nil {
		return err
	}
	s.putMem()
	return nil
}

// reader returns the bytes written so far, readable from the start as
// often as an upload retry needs.
func (s *spool) reader() (io.ReadSeeker, error) {
	if s.file == nil {
		return bytes.NewReader(s.mem), nil
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
	s.putMem()
}

func (s *spool) putMem() {
	if s.mem != nil && cap(s.mem) <= 64<<20 {
		spoolBufs.Put(s.mem[:0]) //nolint:staticcheck // a slice header is fine here
	}
	s.mem = nil
}
