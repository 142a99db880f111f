package protocol

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
)

const sendfileSupported = true

// sendFile sends size bytes of f from pos to c with sendfile(2), waiting
// on the poller when the socket buffer is full. The file's own offset is
// not used, so concurrent sends from one file are safe.
func sendFile(c net.Conn, f *os.File, pos int64, size int) error {
	sc, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		return err
	}
	fc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	cerr := fc.Control(func(ffd uintptr) {
		werr := sc.Write(func(sfd uintptr) bool {
			for size > 0 {
				n, e := syscall.Sendfile(int(sfd), int(ffd), &pos, min(size, 1<<30))
				if n > 0 {
					size -= n
				}
				switch {
				case e == syscall.EAGAIN:
					return false // wait until writable
				case e == syscall.EINTR:
					continue
				case e != nil:
					ferr = os.NewSyscallError("sendfile", e)
					return true
				case n == 0:
					// The file is shorter than the range: truncated under us.
					ferr = io.ErrUnexpectedEOF
					return true
				}
			}
			return true
		})
		if ferr == nil {
			ferr = werr
		}
	})
	return errors.Join(cerr, ferr)
}
