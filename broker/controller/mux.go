package controller

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"syscall"
	"time"
)

// muxPeekTimeout bounds how long a new connection on a controller
// listener may stay silent before its first four bytes arrive. Kafka
// clients and raft peers both speak first, at once; a connection that
// says nothing is a probe or a stuck client and is closed.
const muxPeekTimeout = 10 * time.Second

// muxBacklog is how many classified connections may wait for Accept on
// each half before classification blocks (per connection, never the
// accept loop).
const muxBacklog = 64

// MuxListener splits a controller listener by the first four bytes of each
// connection: RaftMagic goes to raftL (with the magic consumed, as raft's
// transport expects its own framing next), anything else to kafka, whose
// connections replay the peeked bytes. Each new connection is classified
// on its own goroutine under a read deadline, so a slow or silent client
// never holds up Accept for others. Closing both halves closes l; either
// half's Accept fails once l does.
func MuxListener(l net.Listener) (kafka net.Listener, raftL net.Listener) {
	return muxListener(l, muxPeekTimeout, MuxOptions{})
}

// MuxOptions secure a controller listener (SSL, SASL_PLAINTEXT,
// SASL_SSL in listener.security.protocol.map).
type MuxOptions struct {
	// TLS, if set, is the listener's TLS: each connection completes its
	// handshake before it is classified, so raft and the Kafka protocol
	// both run encrypted (and, with ssl.client.auth, both authenticate
	// the peer's certificate). Kafka connections come out with
	// ConnectionState and HandshakeContext, so the protocol server takes
	// the principal from them without wrapping them again.
	TLS *tls.Config
	// AuthenticateRaft, if set, runs on each raft connection after its
	// magic and before raft reads it: the listener's SASL exchange and
	// the authorizer's check of the peer. An error closes the connection.
	// It runs on the connection's own goroutine under the peek deadline.
	AuthenticateRaft func(net.Conn) error
}

// MuxListenerWith is MuxListener for a secured controller listener.
func MuxListenerWith(l net.Listener, o MuxOptions) (kafka net.Listener, raftL net.Listener) {
	return muxListener(l, muxPeekTimeout, o)
}

func muxListener(l net.Listener, peekTimeout time.Duration, o MuxOptions) (kafka net.Listener, raftL net.Listener) {
	m := &mux{l: l, peekTimeout: peekTimeout, opts: o, done: make(chan struct{})}
	m.kafka = &muxHalf{m: m, ch: make(chan net.Conn, muxBacklog), closed: make(chan struct{})}
	m.raft = &muxHalf{m: m, ch: make(chan net.Conn, muxBacklog), closed: make(chan struct{})}
	go m.acceptLoop()
	return m.kafka, m.raft
}

type mux struct {
	l           net.Listener
	peekTimeout time.Duration
	opts        MuxOptions
	kafka, raft *muxHalf
	done        chan struct{} // closed when l fails or is closed
	mu          sync.Mutex
	err         error // why the accept loop stopped
	closedOnce  sync.Once
}

func (m *mux) acceptLoop() {
	var backoff time.Duration
	for {
		c, err := m.l.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				// Temporary (EMFILE and the like surface as timeouts on
				// some platforms): back off as net/http does.
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				time.Sleep(backoff)
				continue
			}
			m.mu.Lock()
			m.err = err
			m.mu.Unlock()
			m.closedOnce.Do(func() { close(m.done) })
			return
		}
		backoff = 0
		go m.classify(c)
	}
}

func (m *mux) classify(c net.Conn) {
	var b [4]byte
	deadline := time.Now().Add(m.peekTimeout)
	c.SetDeadline(deadline)
	var tc *tls.Conn
	if m.opts.TLS != nil {
		tc = tls.Server(c, m.opts.TLS)
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		err := tc.HandshakeContext(ctx)
		cancel()
		if err != nil {
			c.Close()
			return
		}
		c = tc
	}
	if _, err := io.ReadFull(c, b[:]); err != nil {
		c.Close()
		return
	}
	half := m.kafka
	if binary.BigEndian.Uint32(b[:]) == RaftMagic {
		half = m.raft
		if m.opts.AuthenticateRaft != nil {
			if err := m.opts.AuthenticateRaft(c); err != nil {
				c.Close()
				return
			}
		}
	} else if tc != nil {
		c = &peekedTLSConn{peekedConn: peekedConn{Conn: c, peeked: b[:]}, tc: tc}
	} else {
		c = &peekedConn{Conn: c, peeked: b[:]}
	}
	c.SetDeadline(time.Time{})
	select {
	case half.ch <- c:
	case <-half.closed:
		c.Close()
	case <-m.done:
		c.Close()
	}
}

// muxHalf is one side of a MuxListener.
type muxHalf struct {
	m      *mux
	ch     chan net.Conn
	once   sync.Once
	closed chan struct{}
}

func (h *muxHalf) Accept() (net.Conn, error) {
	// A connection already classified is handed out even if the listener
	// failed meanwhile; after Close, nothing is.
	select {
	case <-h.closed:
		return nil, net.ErrClosed
	default:
	}
	select {
	case c := <-h.ch:
		return c, nil
	case <-h.closed:
		return nil, net.ErrClosed
	case <-h.m.done:
		h.m.mu.Lock()
		err := h.m.err
		h.m.mu.Unlock()
		return nil, err
	}
}

// Close stops this half; the underlying listener closes when both halves
// have.
func (h *muxHalf) Close() error {
	var err error
	h.once.Do(func() {
		close(h.closed)
		// Drain connections nobody will accept now.
		for {
			select {
			case c := <-h.ch:
				c.Close()
				continue
			default:
			}
			break
		}
		other := h.m.kafka
		if other == h {
			other = h.m.raft
		}
		select {
		case <-other.closed:
			err = h.m.l.Close()
		default:
		}
	})
	return err
}

func (h *muxHalf) Addr() net.Addr { return h.m.l.Addr() }

// peekedConn replays the bytes MuxListener read to classify the
// connection, then reads from the connection itself.
type peekedConn struct {
	net.Conn
	peeked []byte
}

func (c *peekedConn) Read(p []byte) (int, error) {
	if len(c.peeked) > 0 {
		n := copy(p, c.peeked)
		c.peeked = c.peeked[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// SyscallConn exposes the socket for writes that bypass Read (sendfile);
// reading through it would skip the replayed bytes.
func (c *peekedConn) SyscallConn() (syscall.RawConn, error) {
	if sc, ok := c.Conn.(syscall.Conn); ok {
		return sc.SyscallConn()
	}
	return nil, errors.New("connection has no file descriptor")
}

// peekedTLSConn is a peekedConn over a TLS connection whose handshake the
// mux completed: the protocol server reads the peer's certificate from it.
type peekedTLSConn struct {
	peekedConn
	tc *tls.Conn
}

func (c *peekedTLSConn) ConnectionState() tls.ConnectionState { return c.tc.ConnectionState() }

func (c *peekedTLSConn) HandshakeContext(ctx context.Context) error {
	return c.tc.HandshakeContext(ctx)
}

// SyscallConn is not offered: bytes written to the socket directly would
// bypass TLS.
func (c *peekedTLSConn) SyscallConn() (syscall.RawConn, error) {
	return nil, errors.New("a TLS connection cannot be written to directly")
}
