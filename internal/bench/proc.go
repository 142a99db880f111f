package bench

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Mem is a process's resident memory as the kernel reports it.
type Mem struct {
	RSSKB int64 // VmRSS: resident now
	HWMKB int64 // VmHWM: peak resident since the process started
}

// ReadMem reads /proc/PID/status.
func ReadMem(pid int) (Mem, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Mem{}, fmt.Errorf("read memory of pid %d: %w", pid, err)
	}
	return ParseStatus(b)
}

// ParseStatus extracts VmRSS and VmHWM from the text of /proc/PID/status.
func ParseStatus(b []byte) (Mem, error) {
	var m Mem
	var haveRSS, haveHWM bool
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		key, rest, ok := bytes.Cut(sc.Bytes(), []byte(":"))
		if !ok {
			continue
		}
		var dst *int64
		switch string(key) {
		case "VmRSS":
			dst, haveRSS = &m.RSSKB, true
		case "VmHWM":
			dst, haveHWM = &m.HWMKB, true
		default:
			continue
		}
		f := bytes.Fields(rest)
		if len(f) != 2 || string(f[1]) != "kB" {
			return Mem{}, fmt.Errorf("/proc status line %q: want \"<n> kB\"", sc.Text())
		}
		n, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil || n < 0 {
			return Mem{}, fmt.Errorf("/proc status line %q: bad number", sc.Text())
		}
		*dst = n
	}
	if err := sc.Err(); err != nil {
		return Mem{}, fmt.Errorf("scan /proc status: %w", err)
	}
	if !haveRSS || !haveHWM {
		// A zombie or kernel thread has no Vm lines.
		return Mem{}, errors.New("/proc status has no VmRSS/VmHWM: the process has exited")
	}
	return m, nil
}

// processGone reports whether pid no longer runs (absent or a zombie, which
// happens to processes a script started and nobody reaps).
func processGone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the parenthesised command name, which may itself
	// contain spaces or parentheses.
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] == 'Z' || b[i+2] == 'X'
}

// ProcessCPU returns the user+system CPU time pid has used so far, from
// /proc/PID/stat (fields 14 and 15, in USER_HZ ticks, 100 per second on
// every Linux we run on).
func ProcessCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("read cpu time of pid %d: %w", pid, err)
	}
	return parseStatCPU(b)
}

func parseStatCPU(b []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("/proc stat: no command name")
	}
	// After ") " come fields 3 (state) onwards; utime and stime are 14, 15.
	f := bytes.Fields(b[i+1:])
	if len(f) < 13 {
		return 0, errors.New("/proc stat: too few fields")
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(string(s), 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("/proc stat: bad cpu field %q", s)
		}
		ticks += n
	}
	const userHZ = 100
	return time.Duration(ticks) * (time.Second / userHZ), nil
}

// probeMetadata sends one Metadata request (v12, all topics) on a fresh
// connection and reports whether the broker answered with at least one
// broker. It speaks the wire protocol directly rather than through kgo so
// that no client retry backoff blurs a start-up measurement.
func probeMetadata(addr string, timeout time.Duration) error {
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return err
	}
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(12)
	const corr = 1
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("fjord-bench-probe")).AppendRequest(nil, req, corr)
	if _, err := conn.Write(frame); err != nil {
		return fmt.Errorf("write metadata request: %w", err)
	}
	body, err := readFrame(conn, 64<<20)
	if err != nil {
		return fmt.Errorf("read metadata response: %w", err)
	}
	body, err = skipResponseHeader(body, corr)
	if err != nil {
		return err
	}
	resp := req.ResponseKind().(*kmsg.MetadataResponse)
	if err := resp.ReadFrom(body); err != nil {
		return fmt.Errorf("decode metadata response: %w", err)
	}
	if len(resp.Brokers) == 0 {
		return errors.New("metadata response lists no brokers yet")
	}
	return nil
}

func readFrame(r io.Reader, limit int) ([]byte, error) {
	var sz [4]byte
	if _, err := io.ReadFull(r, sz[:]); err != nil {
		return nil, err
	}
	n := int(int32(binary.BigEndian.Uint32(sz[:])))
	if n < 4 || n > limit {
		return nil, fmt.Errorf("response size %d out of range", n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, err
	}
	return body, nil
}

// skipResponseHeader checks the correlation id and skips the tagged fields
// of a flexible (v1) response header.
func skipResponseHeader(b []byte, corr int32) ([]byte, error) {
	if len(b) < 4 {
		return nil, errors.New("response shorter than its header")
	}
	if got := int32(binary.BigEndian.Uint32(b)); got != corr {
		return nil, fmt.Errorf("response correlation id %d, want %d", got, corr)
	}
	b = b[4:]
	ntags, n := binary.Uvarint(b)
	if n <= 0 {
		return nil, errors.New("bad tagged-field count in response header")
	}
	b = b[n:]
	for range ntags {
		if _, n = binary.Uvarint(b); n <= 0 {
			return nil, errors.New("bad tag in response header")
		}
		b = b[n:]
		size, n := binary.Uvarint(b)
		if n <= 0 || uint64(len(b)-n) < size {
			return nil, errors.New("bad tag size in response header")
		}
		b = b[n+int(size):]
	}
	return b, nil
}
