//go:build !linux

package protocol

import (
	"errors"
	"net"
	"os"
)

const sendfileSupported = false

func sendFile(c net.Conn, f *os.File, pos int64, size int) error {
	return errors.New("sendfile not supported on this platform")
}
