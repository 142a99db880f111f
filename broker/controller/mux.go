package controller

import (
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
	return muxListener(l, muxPeekTimeout)
}

func muxListener(l net.Listener, peekTimeout time.Duration) (kafka net.Listener, raftL net.Listener) {
	m := &mux{l: l, peekTimeout: peekTimeout, done: make(chan struct{})}
	m.kafka = &muxHalf{m: m, ch: make(chan net.Conn, muxBacklog), closed: make(chan struct{})}
	m.raft = &muxHalf{m: m, ch: make(chan net.Conn, muxBacklog), closed: make(chan struct{})}
	go m.acceptLoop()
	return m.kafka, m.raft
}

type mux struct {
	l           net.Listener
	peekTimeout time.Duration
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
	c.SetReadDeadline(time.Now().Add(m.peekTimeout))
	if _, err := io.ReadFull(c, b[:]); err != nil {
		c.Close()
		return
	}
	c.SetReadDeadline(time.Time{})
	half := m.kafka
	if binary.BigEndian.Uint32(b[:]) == RaftMagic {
		half = m.raft
	} else {
		c = &peekedConn{Conn: c, peeked: b[:]}
	}
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
