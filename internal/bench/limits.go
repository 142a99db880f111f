package bench

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Limits are the machine's own ceilings, measured in the same run so that
// the broker figures can be read against them.
type Limits struct {
	LoopbackMBps  float64 `json:"loopback_mb_per_sec"`
	DiskWriteMBps float64 `json:"disk_write_mb_per_sec"`
	DiskDir       string  `json:"disk_dir"`
}

// MeasureLoopback streams bytes from one goroutine to another over a
// loopback TCP connection for d and returns MB/s (10^6 bytes) received.
func MeasureLoopback(d time.Duration) (float64, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("loopback listen: %w", err)
	}
	defer ln.Close()

	var (
		wg       sync.WaitGroup
		received int64
		recvErr  error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		c, err := ln.Accept()
		if err != nil {
			recvErr = err
			return
		}
		defer c.Close()
		buf := make([]byte, 256<<10)
		for {
			n, err := c.Read(buf)
			received += int64(n)
			if err != nil {
				if !errors.Is(err, io.EOF) {
					recvErr = err
				}
				return
			}
		}
	}()

	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return 0, fmt.Errorf("loopback dial: %w", err)
	}
	buf := make([]byte, 256<<10)
	start := time.Now()
	deadline := start.Add(d)
	for time.Now().Before(deadline) {
		if _, err := c.Write(buf); err != nil {
			c.Close()
			return 0, fmt.Errorf("loopback write: %w", err)
		}
	}
	c.Close()
	wg.Wait()
	elapsed := time.Since(start)
	if recvErr != nil {
		return 0, fmt.Errorf("loopback read: %w", recvErr)
	}
	return float64(received) / 1e6 / elapsed.Seconds(), nil
}

// MeasureDiskWrite writes size bytes sequentially in 1 MiB blocks to a file
// in dir and fdatasyncs once at the end (what dd conv=fdatasync does), and
// returns MB/s (10^6 bytes) including the sync.
func MeasureDiskWrite(dir string, size int64) (float64, error) {
	path := filepath.Join(dir, "disk-write-test")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return 0, fmt.Errorf("disk write test: %w", err)
	}
	defer os.Remove(path)
	defer f.Close()
	block := newPayload(1 << 20).buf[:1<<20] // incompressible, for filesystems that compress
	start := time.Now()
	var written int64
	for written < size {
		n, err := f.Write(block)
		written += int64(n)
		if err != nil {
			return 0, fmt.Errorf("disk write test %s: %w", path, err)
		}
	}
	if err := fdatasync(f); err != nil {
		return 0, fmt.Errorf("disk write test sync %s: %w", path, err)
	}
	elapsed := time.Since(start)
	return float64(written) / 1e6 / elapsed.Seconds(), nil
}
