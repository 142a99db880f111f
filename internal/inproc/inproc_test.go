package inproc

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

func TestDialRegisteredGoesThroughListener(t *testing.T) {
	bound := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9092}
	l := Listen(bound)
	unregister := Register(l, "127.0.0.1:9092", "localhost:9092")
	defer unregister()
	if !Active() {
		t.Fatal("Active() = false with a registered listener")
	}
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			t.Error(err)
			return
		}
		accepted <- c
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := Dial(ctx, "tcp", "localhost:9092")
	if err != nil {
		t.Fatal(err)
	}
	s := <-accepted
	if s.LocalAddr().String() != "127.0.0.1:9092" || c.RemoteAddr().String() != "127.0.0.1:9092" {
		t.Fatalf("addresses: server local %v, client remote %v", s.LocalAddr(), c.RemoteAddr())
	}
	if ra, ok := s.RemoteAddr().(*net.TCPAddr); !ok || !ra.IP.IsLoopback() {
		t.Fatalf("server sees remote %v, want a loopback TCP address", s.RemoteAddr())
	}
	msg := make([]byte, 1<<20)
	for i := range msg {
		msg[i] = byte(i * 7)
	}
	go func() { c.Write(msg) }()
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(s, got); err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if got[i] != msg[i] {
			t.Fatalf("byte %d: got %d want %d", i, got[i], msg[i])
		}
	}
	// Deadlines work as on TCP (franz-go sets them on every request).
	s.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	var ne net.Error
	if _, err := s.Read(got[:1]); !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("read past deadline: %v, want a timeout", err)
	}
	c.Close()
	s.SetReadDeadline(time.Time{})
	if _, err := s.Read(got[:1]); err != io.EOF {
		t.Fatalf("read after the client closed: %v, want EOF", err)
	}
}

func TestDialUnregisteredUsesTCP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Write([]byte("tcp"))
			c.Close()
		}
	}()
	c, err := Dial(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, ok := c.(*net.TCPConn); !ok {
		t.Fatalf("dialed %T, want *net.TCPConn", c)
	}
	b, _ := io.ReadAll(c)
	if string(b) != "tcp" {
		t.Fatalf("read %q", b)
	}
}

func TestClosedListener(t *testing.T) {
	l := Listen(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1})
	unregister := Register(l, "127.0.0.1:1")
	l.Close()
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Accept after Close: %v", err)
	}
	if _, err := l.Dial(context.Background()); err == nil {
		t.Fatal("Dial on a closed listener succeeded")
	}
	unregister()
	if Active() {
		t.Fatal("Active() after unregister")
	}
	// A registered but unserved listener: the dial waits for ctx.
	l2 := Listen(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 2})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := l2.Dial(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Dial with nobody accepting: %v", err)
	}
}
