package testkit

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// restartMarker is what Process.Restart writes into the output between runs.
const restartMarker = "\n--- restart ---\n"

// DevProcess is `fjord dev` running as a separate process on loopback, so a
// test can SIGKILL it (Kill), stop it cleanly (Stop) and start it again on
// the same data dir and addresses (Restart).
type DevProcess struct {
	*Process
	DataDir   string
	LogDir    string // the broker's log.dirs (DataDir/broker)
	KafkaAddr string
	HTTPAddr  string
}

// StartDevProcess runs `fjord dev` on dataDir with free loopback Kafka and
// HTTP addresses, plus any extra flags (e.g. "--no-connect" for a test about
// the broker alone). It does not wait: call WaitServing.
func StartDevProcess(t testing.TB, dataDir string, extra ...string) *DevProcess {
	t.Helper()
	d := &DevProcess{
		DataDir:   dataDir,
		LogDir:    filepath.Join(dataDir, "broker"),
		KafkaAddr: FreeAddr(t),
		HTTPAddr:  FreeAddr(t),
	}
	args := append([]string{"dev", "--data-dir", dataDir, "--kafka-addr", d.KafkaAddr, "--http-addr", d.HTTPAddr}, extra...)
	d.Process = StartProcess(t, args...)
	return d
}

// WaitServing polls the broker with Metadata requests (every 5 ms, so the
// time is close to when it starts answering) until it answers and, if
// topic is set, lists that topic with a leader for every partition. It
// returns how long the wait took and fails the test after wait or if the
// process exits.
func (d *DevProcess) WaitServing(t testing.TB, wait time.Duration, topic string) time.Duration {
	t.Helper()
	start := time.Now()
	deadline := start.Add(wait)
	var err error
	for {
		if d.Exited() {
			t.Fatalf("fjord dev exited while waiting for it to serve; output:\n%s", d.LastRun())
		}
		if err = MetadataReady(d.KafkaAddr, topic, time.Second); err == nil {
			return time.Since(start)
		}
		if time.Now().After(deadline) {
			t.Fatalf("fjord dev not serving Metadata after %v: %v", wait, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Runs splits the process output into one string per start (Restart
// separates them).
func (p *Process) Runs() []string { return strings.Split(p.Output(), restartMarker) }

// LastRun is the output of the current (or last) start of the process.
func (p *Process) LastRun() string {
	runs := p.Runs()
	return runs[len(runs)-1]
}

// MetadataReady sends one Metadata request (v12) to addr on a fresh
// connection, without any client library's retries or backoff, and
// reports whether the broker answered and, if topic is set, knows the
// topic with a leader for every partition.
func MetadataReady(addr, topic string, timeout time.Duration) error {
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
	if topic != "" {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(topic)
		req.Topics = append(req.Topics, rt)
	}
	const corrID = 1
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID("testkit")).AppendRequest(nil, req, corrID)
	if _, err := conn.Write(frame); err != nil {
		return fmt.Errorf("write metadata request: %w", err)
	}
	var size [4]byte
	if _, err := io.ReadFull(conn, size[:]); err != nil {
		return fmt.Errorf("read metadata response size: %w", err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(conn, body); err != nil {
		return fmt.Errorf("read metadata response: %w", err)
	}
	// Response header v1 (flexible): correlation id, then tagged fields,
	// which nothing here sends (a zero count).
	if len(body) < 5 || binary.BigEndian.Uint32(body) != corrID || body[4] != 0 {
		return fmt.Errorf("unexpected metadata response header % x", body[:min(len(body), 5)])
	}
	resp := req.ResponseKind().(*kmsg.MetadataResponse)
	resp.SetVersion(req.GetVersion())
	if err := resp.ReadFrom(body[5:]); err != nil {
		return fmt.Errorf("decode metadata response: %w", err)
	}
	if topic == "" {
		return nil
	}
	for _, rt := range resp.Topics {
		if rt.Topic == nil || *rt.Topic != topic {
			continue
		}
		if err := kerr.ErrorForCode(rt.ErrorCode); err != nil {
			return fmt.Errorf("topic %s: %w", topic, err)
		}
		if len(rt.Partitions) == 0 {
			return fmt.Errorf("topic %s has no partitions yet", topic)
		}
		for _, p := range rt.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return fmt.Errorf("topic %s partition %d: %w", topic, p.Partition, err)
			}
			if p.Leader < 0 {
				return fmt.Errorf("topic %s partition %d has no leader", topic, p.Partition)
			}
		}
		return nil
	}
	return fmt.Errorf("topic %s not in metadata", topic)
}

// ProcIO is a process's I/O accounting from /proc/PID/io.
type ProcIO struct {
	// RChar counts bytes the process asked read(2)/pread(2) and friends
	// for, whether served from the page cache or the disk: what a test
	// uses to see how much of its files a broker read, independent of
	// caching and timing.
	RChar int64
	// ReadBytes counts bytes fetched from the block device.
	ReadBytes int64
	WChar     int64
}

// IO returns the process's I/O counters (Linux only).
func (p *Process) IO() (ProcIO, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/io", p.PID()))
	if err != nil {
		return ProcIO{}, fmt.Errorf("read process I/O counters: %w", err)
	}
	defer f.Close()
	var io ProcIO
	found := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "rchar":
			io.RChar, found = n, found+1
		case "read_bytes":
			io.ReadBytes, found = n, found+1
		case "wchar":
			io.WChar, found = n, found+1
		}
	}
	if err := sc.Err(); err != nil {
		return ProcIO{}, err
	}
	if found < 3 {
		return ProcIO{}, errors.New("/proc/PID/io lacks rchar, read_bytes or wchar")
	}
	return io, nil
}
