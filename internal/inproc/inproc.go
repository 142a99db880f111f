// Package inproc connects Kafka clients to a broker in the same process
// without a socket. `fjord dev` runs its broker, Connect worker and
// schema registry in one process; their clients would otherwise talk to
// the broker over loopback TCP, paying two system calls and two kernel
// copies for every request and response. Through an in-process listener
// a request goes from the client's buffer into the broker's in one copy.
//
// The broker serves the listener exactly as its first client listener
// (same security, same listener name), so nothing but the transport
// changes: authentication, ACLs, quotas and metrics see the same
// connection they would over TCP, from 127.0.0.1.
//
// Clients opt in through Dial (kgo.Dialer): an address registered here is
// dialed in process, every other address over TCP.
package inproc

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Listener is a net.Listener whose connections are in-memory pipes made
// by Dial.
type Listener struct {
	addr  net.Addr
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
	port  atomic.Uint32 // the next client "port", for distinct remote addresses
}

// Listen returns a listener that stands for addr (the TCP listener the
// broker also serves): its connections report addr as their local address.
func Listen(addr net.Addr) *Listener {
	return &Listener{addr: addr, conns: make(chan net.Conn), done: make(chan struct{})}
}

// Accept waits for the next Dial.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close stops accepting; Dial fails from now on. Open connections stay
// open (the server closes its ends when it shuts down).
func (l *Listener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

// Addr is the address the listener stands for.
func (l *Listener) Addr() net.Addr { return l.addr }

// Dial connects to the listener; it waits until the server accepts, ctx
// ends or the listener closes.
func (l *Listener) Dial(ctx context.Context) (net.Conn, error) {
	client, server := net.Pipe()
	remote := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: int(40000 + l.port.Add(1)%20000)}
	sc := &conn{Conn: server, local: l.addr, remote: remote}
	select {
	case l.conns <- sc:
		return &conn{Conn: client, local: remote, remote: l.addr}, nil
	case <-l.done:
	case <-ctx.Done():
		client.Close()
		server.Close()
		return nil, ctx.Err()
	}
	client.Close()
	server.Close()
	return nil, &net.OpError{Op: "dial", Net: "inproc", Addr: l.addr, Err: errors.New("in-process listener closed")}
}

// conn is one end of a pipe with the addresses a TCP connection would have.
type conn struct {
	net.Conn
	local, remote net.Addr
}

func (c *conn) LocalAddr() net.Addr  { return c.local }
func (c *conn) RemoteAddr() net.Addr { return c.remote }

var (
	mu        sync.RWMutex
	listeners = map[string]*Listener{}
)

// Register makes Dial connect to l for each of addrs (host:port as
// clients write them: the bound address, the configured one). The
// returned func removes them again.
func Register(l *Listener, addrs ...string) (unregister func()) {
	mu.Lock()
	defer mu.Unlock()
	for _, a := range addrs {
		listeners[a] = l
	}
	return func() {
		mu.Lock()
		defer mu.Unlock()
		for _, a := range addrs {
			if listeners[a] == l {
				delete(listeners, a)
			}
		}
	}
}

// Active reports whether any listener is registered, i.e. whether
// clients made now should dial through Dial.
func Active() bool {
	mu.RLock()
	defer mu.RUnlock()
	return len(listeners) > 0
}

// tcp dials what is not registered, as franz-go's default dialer does.
var tcp = &net.Dialer{Timeout: 10 * time.Second}

// Dial connects to host in process if a listener is registered for it,
// else over the network. It has the signature kgo.Dialer takes.
func Dial(ctx context.Context, network, host string) (net.Conn, error) {
	mu.RLock()
	l := listeners[host]
	mu.RUnlock()
	if l != nil {
		if c, err := l.Dial(ctx); err == nil || ctx.Err() != nil {
			return c, err
		}
		// The listener closed under us (shutdown): fall back to TCP.
	}
	return tcp.DialContext(ctx, network, host)
}
