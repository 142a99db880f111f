package protocol

import (
	"fmt"
	"net"
	"os"
)

// Part is a piece of a pre-encoded response body: either bytes, or a
// range of a file that the writer sends with sendfile(2) where it can
// (plain TCP on Linux), so fetched records go from the page cache to the
// socket without passing through user space.
type Part struct {
	Bytes []byte
	File  *os.File
	Pos   int64
	Size  int
}

func (p Part) size() int {
	if p.File != nil {
		return p.Size
	}
	return len(p.Bytes)
}

// appendPartsHeader appends the frame size and the response header for a
// body made of parts.
func appendPartsHeader(dst []byte, req *Request, flexible bool, parts []Part) []byte {
	size := 4
	if flexible && req.Key != apiVersionsKey {
		size++
	}
	for _, p := range parts {
		size += p.size()
	}
	dst = appendInt32(dst, int32(size))
	dst = appendInt32(dst, req.CorrelationID)
	if flexible && req.Key != apiVersionsKey {
		dst = append(dst, 0)
	}
	return dst
}

// readFilePart reads a file part into dst (the fallback when sendfile is
// not possible).
func readFilePart(dst []byte, p Part) ([]byte, error) {
	n := len(dst)
	if cap(dst)-n < p.Size {
		nb := make([]byte, n, n+p.Size+n/4)
		copy(nb, dst)
		dst = nb
	}
	dst = dst[:n+p.Size]
	if _, err := p.File.ReadAt(dst[n:], p.Pos); err != nil {
		return dst[:n], fmt.Errorf("read %s at %d: %w", p.File.Name(), p.Pos, err)
	}
	return dst, nil
}

// canSendfile reports whether file parts can go straight to c.
func canSendfile(c net.Conn) bool {
	_, ok := c.(*net.TCPConn)
	return ok && sendfileSupported
}
