package bench

import (
	"encoding/binary"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

const statusSample = `Name:	java
Umask:	0022
State:	S (sleeping)
VmPeak:	 3768736 kB
VmSize:	 3768736 kB
VmHWM:	  507432 kB
VmRSS:	  396796 kB
Threads:	97
`

func TestParseStatus(t *testing.T) {
	m, err := ParseStatus([]byte(statusSample))
	if err != nil {
		t.Fatal(err)
	}
	if m.RSSKB != 396796 || m.HWMKB != 507432 {
		t.Fatalf("ParseStatus = %+v", m)
	}
	for name, bad := range map[string]string{
		"zombie":   "Name:\tx\nState:\tZ (zombie)\n",
		"no unit":  "VmHWM:\t1\nVmRSS:\t2\n",
		"negative": "VmHWM:\t-1 kB\nVmRSS:\t2 kB\n",
		"only rss": "VmRSS:\t2 kB\n",
	} {
		if _, err := ParseStatus([]byte(bad)); err == nil {
			t.Errorf("%s: ParseStatus accepted %q", name, bad)
		}
	}
}

func TestReadMemSelf(t *testing.T) {
	m, err := ReadMem(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if m.RSSKB <= 0 || m.HWMKB < m.RSSKB {
		t.Fatalf("own memory %+v: want 0 < RSS <= HWM", m)
	}
	if processGone(os.Getpid()) {
		t.Fatal("processGone(self) = true")
	}
	if !processGone(1 << 30) {
		t.Fatal("processGone(absent pid) = false")
	}
}

func TestSkipResponseHeader(t *testing.T) {
	body := []byte{0, 0, 0, 7, 1, 5, 2, 0xaa, 0xbb, 'x'} // corr 7, one tag (5) of 2 bytes, then body
	rest, err := skipResponseHeader(body, 7)
	if err != nil || string(rest) != "x" {
		t.Fatalf("skipResponseHeader = %q, %v", rest, err)
	}
	if _, err := skipResponseHeader(body, 8); err == nil {
		t.Fatal("wrong correlation id accepted")
	}
	if _, err := skipResponseHeader([]byte{0, 0, 0, 7, 1, 5, 9, 0}, 7); err == nil {
		t.Fatal("tag longer than the body accepted")
	}
}

// TestProbeMetadataRefusesNonKafka checks that a listener that is not a
// Kafka broker (accepts, answers garbage) is an error, not a hang or a
// false "serving" that would fake a start-up time.
func TestProbeMetadataRefusesNonKafka(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			var size [4]byte
			binary.BigEndian.PutUint32(size[:], 8)
			_, _ = c.Write(append(size[:], 0, 0, 0, 1, 0, 0xff, 0xff, 0xff))
			c.Close()
		}
	}()
	start := time.Now()
	err = probeMetadata(ln.Addr().String(), 2*time.Second)
	if err == nil {
		t.Fatal("probe accepted a garbage answer")
	}
	if time.Since(start) > 2*time.Second {
		t.Fatal("probe did not respect its timeout")
	}
	if err := probeMetadata("127.0.0.1:1", time.Second); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("probe of a closed port: %v", err)
	}
}

func TestMeasureLimits(t *testing.T) {
	mbps, err := MeasureLoopback(50 * time.Millisecond)
	if err != nil || mbps <= 0 {
		t.Fatalf("MeasureLoopback = %v, %v", mbps, err)
	}
	dir := t.TempDir()
	mbps, err = MeasureDiskWrite(dir, 3<<20)
	if err != nil || mbps <= 0 {
		t.Fatalf("MeasureDiskWrite = %v, %v", mbps, err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("disk test left %d files behind", len(left))
	}
}

func TestParseStatCPU(t *testing.T) {
	// utime 250 + stime 50 ticks = 3 s; the command name has spaces and a ')'.
	stat := "1234 (java (x) y) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 97 0 5 0\n"
	d, err := parseStatCPU([]byte(stat))
	if err != nil || d != 3*time.Second {
		t.Fatalf("parseStatCPU = %v, %v", d, err)
	}
	if _, err := parseStatCPU([]byte("1 (x) S 1 2")); err == nil {
		t.Fatal("short stat accepted")
	}
	if _, err := ProcessCPU(os.Getpid()); err != nil {
		t.Fatal(err)
	}
}
