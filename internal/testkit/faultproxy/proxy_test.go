package faultproxy

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// echoServer is the proxied target: it echoes every byte back and counts
// the connections it accepted. A client half-close ends its echo, and the
// server then closes its side.
type echoServer struct {
	ln       net.Listener
	accepted atomic.Int64
}

func startEcho(t *testing.T) *echoServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e := &echoServer{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			e.accepted.Add(1)
			go func() {
				defer c.Close()
				io.Copy(c, c)
			}()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return e
}

func dial(t *testing.T, addr string) *net.TCPConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c.(*net.TCPConn)
}

// roundTrip writes msg and reads back len(msg) bytes within wait.
func roundTrip(c net.Conn, msg []byte, wait time.Duration) ([]byte, error) {
	c.SetDeadline(time.Now().Add(wait))
	defer c.SetDeadline(time.Time{})
	errc := make(chan error, 1)
	go func() { _, err := c.Write(msg); errc <- err }()
	got := make([]byte, len(msg))
	_, rerr := io.ReadFull(c, got)
	if werr := <-errc; werr != nil {
		return got, werr
	}
	return got, rerr
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func TestForwardsBothWays(t *testing.T) {
	e := startEcho(t)
	p := Start(t, e.ln.Addr().String())
	c := dial(t, p.Addr())
	msg := make([]byte, 1<<20)
	rand.Read(msg)
	got, err := roundTrip(c, msg, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, msg) {
		t.Fatal("echo through the proxy differs from what was sent")
	}
	if p.Forwarded() != 2<<20 {
		t.Errorf("Forwarded() = %d, want %d", p.Forwarded(), 2<<20)
	}
	if p.Conns() != 1 || p.Accepted() != 1 {
		t.Errorf("Conns() = %d, Accepted() = %d, want 1, 1", p.Conns(), p.Accepted())
	}
}

func TestPartitionHoldsConnectionsAndBytesUntilHeal(t *testing.T) {
	e := startEcho(t)
	p := Start(t, e.ln.Addr().String())
	c := dial(t, p.Addr())
	if _, err := roundTrip(c, []byte("before"), 2*time.Second); err != nil {
		t.Fatal(err)
	}

	p.Partition()
	if !p.Partitioned() {
		t.Fatal("Partitioned() = false after Partition")
	}
	// A write succeeds (it only reaches the socket buffer) but nothing
	// comes back: the read times out rather than seeing EOF or a reset.
	_, err := roundTrip(c, []byte("during"), 300*time.Millisecond)
	if !isTimeout(err) {
		t.Fatalf("round trip during partition: %v, want a timeout", err)
	}
	// A new connection is accepted but does not reach the target.
	before := e.accepted.Load()
	c2 := dial(t, p.Addr())
	time.Sleep(100 * time.Millisecond)
	if got := e.accepted.Load(); got != before {
		t.Fatalf("target accepted %d connections during the partition", got-before)
	}
	if p.Conns() != 2 {
		t.Fatalf("Conns() = %d during the partition, want 2 (held, not closed)", p.Conns())
	}

	p.Heal()
	// The bytes written during the partition arrive now.
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	got := make([]byte, len("during"))
	if _, err := io.ReadFull(c, got); err != nil || string(got) != "during" {
		t.Fatalf("after heal read %q, %v; want the held bytes \"during\"", got, err)
	}
	if _, err := roundTrip(c2, []byte("held conn"), 2*time.Second); err != nil {
		t.Fatalf("connection accepted during the partition, after heal: %v", err)
	}
	if got := e.accepted.Load(); got != before+1 {
		t.Fatalf("target accepted %d connections after heal, want 1", got-before)
	}
}

func TestResetClosesEveryConnection(t *testing.T) {
	e := startEcho(t)
	p := Start(t, e.ln.Addr().String())
	c := dial(t, p.Addr())
	if _, err := roundTrip(c, []byte("x"), 2*time.Second); err != nil {
		t.Fatal(err)
	}
	p.Reset()
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	_, err := c.Read(make([]byte, 1))
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("read after Reset: %v, want ECONNRESET", err)
	}
	if p.Conns() != 0 {
		t.Fatalf("Conns() = %d after Reset", p.Conns())
	}
	// The proxy keeps working for new connections.
	c2 := dial(t, p.Addr())
	if _, err := roundTrip(c2, []byte("again"), 2*time.Second); err != nil {
		t.Fatal(err)
	}
}

func TestResetDuringPartition(t *testing.T) {
	e := startEcho(t)
	p := Start(t, e.ln.Addr().String())
	c := dial(t, p.Addr())
	// The kernel completes the connect before the proxy accepts it.
	testkitWait(t, func() bool { return p.Conns() == 1 })
	p.Partition()
	p.Reset()
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, io.EOF) {
		t.Fatalf("read after Reset of a held connection: %v, want a reset", err)
	}
	p.Heal()
}

func TestDelayAddsLatencyEachWay(t *testing.T) {
	e := startEcho(t)
	p := Start(t, e.ln.Addr().String())
	c := dial(t, p.Addr())
	const d = 50 * time.Millisecond
	p.Delay(d)
	start := time.Now()
	if _, err := roundTrip(c, []byte("slow"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if rtt := time.Since(start); rtt < 2*d {
		t.Fatalf("round trip took %v with %v delay each way, want at least %v", rtt, d, 2*d)
	}
	p.Delay(0)
	start = time.Now()
	if _, err := roundTrip(c, []byte("fast"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if rtt := time.Since(start); rtt >= 2*d {
		t.Fatalf("round trip took %v after Delay(0)", rtt)
	}
}

func TestDropResetsConnections(t *testing.T) {
	e := startEcho(t)
	p := Start(t, e.ln.Addr().String())
	p.Drop(1)
	c := dial(t, p.Addr())
	_, err := roundTrip(c, []byte("lost"), 2*time.Second)
	if !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, io.EOF) && !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("round trip with Drop(1): %v, want the connection reset", err)
	}
	p.Drop(0)
	c2 := dial(t, p.Addr())
	if _, err := roundTrip(c2, []byte("kept"), 2*time.Second); err != nil {
		t.Fatal(err)
	}
}

func TestHalfCloseIsPassedOn(t *testing.T) {
	e := startEcho(t)
	p := Start(t, e.ln.Addr().String())
	c := dial(t, p.Addr())
	if _, err := c.Write([]byte("last words")); err != nil {
		t.Fatal(err)
	}
	c.CloseWrite()
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "last words" {
		t.Fatalf("after half-close read %q, %v; want the echo then EOF", got, err)
	}
	testkitWait(t, func() bool { return p.Conns() == 0 })
}

func TestTargetDownRefusesClient(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	target := ln.Addr().String()
	ln.Close()
	p := Start(t, target)
	// The reset can come before the client's connect returns or after.
	c, err := net.DialTimeout("tcp", p.Addr(), 2*time.Second)
	if err == nil {
		defer c.Close()
		c.SetReadDeadline(time.Now().Add(6 * time.Second))
		_, err = c.Read(make([]byte, 1))
	}
	if isTimeout(err) || err == nil {
		t.Fatalf("read through a proxy to a closed port: %v, want the connection closed", err)
	}
}

func TestCloseEndsEverything(t *testing.T) {
	e := startEcho(t)
	p, err := Listen("127.0.0.1:0", e.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, p.Addr())
	p.Partition()
	done := make(chan struct{})
	go func() { p.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return while partitioned with an open connection")
	}
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Read(make([]byte, 1)); isTimeout(err) {
		t.Fatal("connection still open after Close")
	}
	if c2, err := net.DialTimeout("tcp", p.Addr(), time.Second); err == nil {
		c2.Close()
		t.Fatal("proxy still accepts after Close")
	}
}

func testkitWait(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 2s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
