package controller

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

func TestMuxListener(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	kafka, raftL := muxListener(l, 300*time.Millisecond, MuxOptions{})
	addr := l.Addr().String()
	dial := func(first []byte) net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if _, err := c.Write(first); err != nil {
			t.Fatal(err)
		}
		return c
	}
	accept := func(l net.Listener) net.Conn {
		t.Helper()
		type res struct {
			c   net.Conn
			err error
		}
		ch := make(chan res, 1)
		go func() { c, err := l.Accept(); ch <- res{c, err} }()
		select {
		case r := <-ch:
			if r.err != nil {
				t.Fatal(r.err)
			}
			t.Cleanup(func() { r.c.Close() })
			return r.c
		case <-time.After(5 * time.Second):
			t.Fatal("accept timed out")
			return nil
		}
	}

	// A silent client first: it must not hold up the others.
	silent := dial(nil)
	magic := binary.BigEndian.AppendUint32(nil, RaftMagic)
	dial(append(magic, "hello"...))
	kafkaFrame := []byte{0, 0, 0, 5, 'a', 'b', 'c', 'd', 'e'}
	dial(kafkaFrame)

	rc := accept(raftL)
	got := make([]byte, 5)
	if _, err := io.ReadFull(rc, got); err != nil || string(got) != "hello" {
		t.Fatalf("raft half read %q %v (magic must be consumed)", got, err)
	}
	kc := accept(kafka)
	got = make([]byte, len(kafkaFrame))
	if _, err := io.ReadFull(kc, got); err != nil || string(got) != string(kafkaFrame) {
		t.Fatalf("kafka half read %q %v (peeked bytes must be replayed)", got, err)
	}
	// The silent client is dropped after the peek timeout.
	silent.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := silent.Read(make([]byte, 1)); err == nil {
		t.Fatal("silent client was not closed")
	}

	// Closing one half leaves the other serving; closing both closes l.
	if err := kafka.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := kafka.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("accept on closed half: %v", err)
	}
	dial(append(magic, 'x'))
	accept(raftL)
	raftL.Close()
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Fatal("listener still open after both halves closed")
	}
}
