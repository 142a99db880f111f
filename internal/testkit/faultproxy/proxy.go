// Package faultproxy is a TCP proxy on loopback that injects network faults
// between the parts of a test cluster: a partition (bytes stop flowing in
// both directions but connections stay open, as when a switch drops every
// packet), added latency, and connection resets.
//
// A partition is deliberately not a reset. A broker cut off by a real
// network partition sees no FIN and no RST: its requests time out, its
// sessions expire, and that is what a test must exercise (a leader that
// keeps believing it leads; a follower that learns late). So Partition
// stops reading and writing while holding every socket open, and bytes
// already read are delivered after Heal, as TCP retransmission would.
// Connections accepted during a partition are held too and reach the target
// only after Heal, the way a SYN retransmitted after the link came back
// completes a connect. Reset is the other fault: every connection is closed
// at once with RST, as a peer restart or a firewall reset would.
//
// Usage:
//
//	p := faultproxy.Start(t, brokerAddr) // closed when the test ends
//	client connects to p.Addr()
//	p.Partition(); ...; p.Heal()
//	p.Delay(20 * time.Millisecond)
//	p.Reset()
package faultproxy

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Proxy forwards TCP connections from Addr() to a target address.
type Proxy struct {
	ln     net.Listener
	target string

	mu          sync.Mutex
	partitioned bool
	healed      chan struct{} // closed by Heal; replaced by Partition
	delay       time.Duration
	drop        float64
	conns       map[*link]struct{}
	closed      bool

	accepted  atomic.Int64
	forwarded atomic.Int64
	wg        sync.WaitGroup
}

// Start listens on a free 127.0.0.1 port and forwards every connection to
// target. The proxy is closed when the test ends.
func Start(t testing.TB, target string) *Proxy {
	t.Helper()
	p, err := Listen("127.0.0.1:0", target)
	if err != nil {
		t.Fatalf("faultproxy: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}

// Listen is Start without a test: it listens on addr (host:port, port 0
// for a free one) and forwards to target until Close.
func Listen(addr, target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s for a proxy to %s: %w", addr, target, err)
	}
	p := &Proxy{ln: ln, target: target, healed: make(chan struct{}), conns: map[*link]struct{}{}}
	close(p.healed)
	p.wg.Add(1)
	go p.acceptLoop()
	return p, nil
}

// Addr is the address clients connect to instead of the target.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Target is the address the proxy forwards to.
func (p *Proxy) Target() string { return p.target }

// Partition stops all forwarding in both directions, on existing and new
// connections, without closing anything, until Heal.
func (p *Proxy) Partition() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.partitioned {
		p.partitioned = true
		p.healed = make(chan struct{})
	}
}

// Heal ends a partition: held bytes and held connections go through.
func (p *Proxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.partitioned {
		p.partitioned = false
		close(p.healed)
	}
}

// Partitioned reports whether the proxy is partitioned.
func (p *Proxy) Partitioned() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.partitioned
}

// Delay adds d of one-way latency to every chunk of bytes in each
// direction (a round trip gains 2d); 0 removes it. Order is kept, and
// throughput is not limited beyond what the latency implies for a
// request/response protocol.
func (p *Proxy) Delay(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.delay = max(d, 0)
}

// Drop makes each chunk of bytes, with probability fraction, reset its
// connection instead of being delivered: a lossy link as a TCP endpoint
// sees one, where lost segments end in a broken connection rather than a
// corrupt stream. 0 turns it off.
func (p *Proxy) Drop(fraction float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.drop = min(max(fraction, 0), 1)
}

// Reset closes every current connection with RST on both sides. New
// connections are accepted as before.
func (p *Proxy) Reset() {
	p.mu.Lock()
	links := make([]*link, 0, len(p.conns))
	for l := range p.conns {
		links = append(links, l)
	}
	p.mu.Unlock()
	for _, l := range links {
		l.reset()
	}
}

// Conns is the number of connections open through the proxy now.
func (p *Proxy) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// Accepted is the number of connections accepted since Start.
func (p *Proxy) Accepted() int64 { return p.accepted.Load() }

// Forwarded is the number of bytes delivered, both directions together.
func (p *Proxy) Forwarded() int64 { return p.forwarded.Load() }

// Close stops listening, resets every connection and waits for the
// proxy's goroutines to end.
func (p *Proxy) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	if p.partitioned {
		// Release goroutines waiting for Heal so they can see the close.
		p.partitioned = false
		close(p.healed)
	}
	p.mu.Unlock()
	p.ln.Close()
	p.Reset()
	p.wg.Wait()
}

func (p *Proxy) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// gate returns nil when forwarding may proceed, or a channel closed when
// the partition ends.
func (p *Proxy) gate() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.partitioned {
		return p.healed
	}
	return nil
}

// waitOpen blocks while the proxy is partitioned; false if done closed
// first.
func (p *Proxy) waitOpen(done <-chan struct{}) bool {
	for {
		g := p.gate()
		if g == nil {
			return true
		}
		select {
		case <-g:
		case <-done:
			return false
		}
	}
}

func (p *Proxy) settings() (time.Duration, float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.delay, p.drop
}

func (p *Proxy) acceptLoop() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || p.isClosed() {
				return
			}
			// Temporary accept errors (EMFILE): back off briefly.
			time.Sleep(10 * time.Millisecond)
			continue
		}
		p.accepted.Add(1)
		l := &link{p: p, client: c.(*net.TCPConn), done: make(chan struct{})}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			c.Close()
			return
		}
		p.conns[l] = struct{}{}
		p.mu.Unlock()
		p.wg.Add(1)
		go l.run()
	}
}

// link is one proxied connection.
type link struct {
	p      *Proxy
	client *net.TCPConn

	mu     sync.Mutex
	server *net.TCPConn
	once   sync.Once
	done   chan struct{} // closed when the link ends
}

func (l *link) run() {
	defer l.p.wg.Done()
	defer l.close(false)
	// A connection accepted during a partition does not reach the target
	// until Heal.
	if !l.p.waitOpen(l.done) {
		return
	}
	s, err := net.DialTimeout("tcp", l.p.target, 5*time.Second)
	if err != nil {
		// The target is down: refuse the client as the target would have.
		l.close(true)
		return
	}
	l.mu.Lock()
	select {
	case <-l.done:
		l.mu.Unlock()
		s.Close()
		return
	default:
	}
	l.server = s.(*net.TCPConn)
	l.mu.Unlock()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); l.pump(l.client, l.server) }()
	go func() { defer wg.Done(); l.pump(l.server, l.client) }()
	wg.Wait()
}

type chunk struct {
	b  []byte
	at time.Time // when it was read; delivered at at+delay
}

// pump copies src to dst through a queue, so delay applies per chunk
// without stalling reads, and a partition holds chunks already read (at
// most the queue and one more per direction: the reader stops reading
// while partitioned, so the sender's socket buffers fill as they would).
func (l *link) pump(src, dst *net.TCPConn) {
	q := make(chan chunk, 64)
	l.p.wg.Add(1)
	go func() {
		defer l.p.wg.Done()
		defer close(q)
		for {
			if !l.p.waitOpen(l.done) {
				return
			}
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				select {
				case q <- chunk{buf[:n], time.Now()}:
				case <-l.done:
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range q {
		delay, drop := l.p.settings()
		if d := time.Until(c.at.Add(delay)); d > 0 {
			select {
			case <-time.After(d):
			case <-l.done:
				return
			}
		}
		if !l.p.waitOpen(l.done) {
			return
		}
		if drop > 0 && rand.Float64() < drop {
			l.reset()
			return
		}
		if _, err := dst.Write(c.b); err != nil {
			l.close(false)
			return
		}
		l.p.forwarded.Add(int64(len(c.b)))
	}
	// src reached EOF (or failed): pass the half-close on, so a peer that
	// closes its write side is seen to, and the link ends when both have.
	select {
	case <-l.done:
	default:
		dst.CloseWrite()
		src.CloseRead()
	}
}

// reset closes both sides with RST.
func (l *link) reset() { l.close(true) }

func (l *link) close(rst bool) {
	l.once.Do(func() {
		l.mu.Lock()
		close(l.done)
		s := l.server
		l.mu.Unlock()
		for _, c := range []*net.TCPConn{l.client, s} {
			if c == nil {
				continue
			}
			if rst {
				c.SetLinger(0)
			}
			c.Close()
		}
		l.p.mu.Lock()
		delete(l.p.conns, l)
		l.p.mu.Unlock()
	})
}
