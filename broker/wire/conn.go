// Package wire is the broker's own Kafka-protocol client connection, for
// traffic between Fjord nodes: replica fetchers, the controller client,
// forwarded admin requests. franz-go's kgo routes requests by cluster
// metadata and cannot target "the leader of this partition as the
// controller last told me" or "the active controller", so nodes talk over
// a plain connection: one TCP stream, kmsg framing, pipelined requests
// answered in order (the Kafka protocol guarantees per-connection order).
//
// Versions are the caller's: set them on the request (SetVersion) to what
// both sides serve; Fjord nodes of one build serve the same ranges. A
// request without an explicit version is sent at kmsg's maximum, which is
// usually not what a peer supports — always set it.
package wire

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ErrClosed is returned for requests on a closed or broken connection.
var ErrClosed = errors.New("wire: connection closed")

// Conn is a pipelined Kafka client connection. It is safe for concurrent
// use; responses are matched to requests by order and correlation id.
// After any I/O or framing error the connection is broken for good: every
// pending and later request fails, and the caller dials again.
type Conn struct {
	nc   net.Conn
	fmtr *kmsg.RequestFormatter

	writeMu sync.Mutex // serialises correlation ids + writes (order = pending order)
	nextID  int32
	buf     []byte

	mu      sync.Mutex
	pending []*call
	err     error
	done    chan struct{}
	// expiry is when the SASL session nears its end (Dialer.Dial);
	// Broken reports true from then on so callers redial.
	expiry sessionExpiry
}

type call struct {
	id   int32
	req  kmsg.Request
	resp kmsg.Response
	err  error
	done chan struct{}
}

// Dial connects to addr. clientID is sent in every request header.
func Dial(ctx context.Context, addr, clientID string) (*Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return NewConn(nc, clientID), nil
}

// NewConn wraps an established connection (e.g. one that already wrote a
// preamble) and starts its reader.
func NewConn(nc net.Conn, clientID string) *Conn {
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	c := &Conn{
		nc:   nc,
		fmtr: kmsg.NewRequestFormatter(kmsg.FormatterClientID(clientID)),
		done: make(chan struct{}),
	}
	go c.readLoop()
	return c
}

// RemoteAddr is the peer's address.
func (c *Conn) RemoteAddr() net.Addr { return c.nc.RemoteAddr() }

// Close breaks the connection; pending requests fail with ErrClosed.
func (c *Conn) Close() error {
	c.fail(ErrClosed)
	return nil
}

// Broken reports whether the connection can no longer be used.
func (c *Conn) Broken() bool {
	if e := c.expiry.Load(); e != 0 && time.Now().UnixNano() > e {
		// Retire it once idle: requests in flight finish first (the
		// margin leaves them time before the broker's deadline).
		c.mu.Lock()
		idle := len(c.pending) == 0
		c.mu.Unlock()
		if idle {
			c.fail(errors.New("wire: SASL session lifetime (connections.max.reauth.ms) nearly over; redial"))
			return true
		}
	}
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// Request sends req and waits for its response. If ctx ends first the
// connection is closed (its stream position is unknowable otherwise) and
// ctx's error returned.
func (c *Conn) Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	cl := &call{req: req, done: make(chan struct{})}
	if err := c.send(cl); err != nil {
		return nil, err
	}
	select {
	case <-cl.done:
		return cl.resp, cl.err
	case <-ctx.Done():
		c.fail(fmt.Errorf("wire: request %s abandoned: %w", kmsg.NameForKey(req.Key()), ctx.Err()))
		<-cl.done
		return nil, ctx.Err()
	}
}

func (c *Conn) send(cl *call) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return err
	}
	c.nextID++
	cl.id = c.nextID
	c.pending = append(c.pending, cl)
	c.mu.Unlock()

	c.buf = c.fmtr.AppendRequest(c.buf[:0], cl.req, cl.id)
	c.nc.SetWriteDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.nc.Write(c.buf); err != nil {
		c.fail(fmt.Errorf("wire: write to %s: %w", c.nc.RemoteAddr(), err))
		return err
	}
	if cap(c.buf) > 1<<20 {
		c.buf = nil // do not pin a large produce/forward buffer
	}
	return nil
}

// fail breaks the connection once and fails every pending call.
func (c *Conn) fail(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	pending := c.pending
	c.pending = nil
	close(c.done)
	c.mu.Unlock()
	c.nc.Close()
	for _, cl := range pending {
		cl.err = err
		close(cl.done)
	}
}

func (c *Conn) readLoop() {
	r := bufio.NewReaderSize(c.nc, 64<<10)
	var size [4]byte
	for {
		if _, err := io.ReadFull(r, size[:]); err != nil {
			c.fail(fmt.Errorf("wire: read from %s: %w", c.nc.RemoteAddr(), err))
			return
		}
		n := binary.BigEndian.Uint32(size[:])
		if n < 4 || n > 1<<30 {
			c.fail(fmt.Errorf("wire: bad response size %d from %s", n, c.nc.RemoteAddr()))
			return
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			c.fail(fmt.Errorf("wire: read from %s: %w", c.nc.RemoteAddr(), err))
			return
		}
		c.mu.Lock()
		if len(c.pending) == 0 {
			c.mu.Unlock()
			c.fail(fmt.Errorf("wire: unexpected response from %s", c.nc.RemoteAddr()))
			return
		}
		cl := c.pending[0]
		c.pending = c.pending[1:]
		c.mu.Unlock()
		if err := decode(cl, body); err != nil {
			cl.err = err
			close(cl.done)
			c.fail(err)
			return
		}
		close(cl.done)
	}
}

// decode parses a response frame body for cl: correlation id, the
// response header's tagged fields when the response is flexible (never
// for ApiVersions), then the body.
func decode(cl *call, body []byte) error {
	if id := int32(binary.BigEndian.Uint32(body)); id != cl.id {
		return fmt.Errorf("wire: correlation id %d, want %d", id, cl.id)
	}
	body = body[4:]
	resp := cl.req.ResponseKind()
	resp.SetVersion(cl.req.GetVersion())
	if resp.IsFlexible() && resp.Key() != int16(kmsg.ApiVersions) {
		rest, err := skipTaggedFields(body)
		if err != nil {
			return fmt.Errorf("wire: %s response header: %w", kmsg.NameForKey(cl.req.Key()), err)
		}
		body = rest
	}
	if err := resp.ReadFrom(body); err != nil {
		return fmt.Errorf("wire: decode %s v%d response: %w", kmsg.NameForKey(cl.req.Key()), cl.req.GetVersion(), err)
	}
	cl.resp = resp
	return nil
}

// skipTaggedFields skips a tagged-field section: a count, then per field
// a tag, a size and that many bytes (all unsigned varints but the bytes).
func skipTaggedFields(b []byte) ([]byte, error) {
	uvarint := func() (uint64, error) {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, errors.New("truncated tagged fields")
		}
		b = b[n:]
		return v, nil
	}
	count, err := uvarint()
	if err != nil {
		return nil, err
	}
	for ; count > 0; count-- {
		if _, err := uvarint(); err != nil {
			return nil, err
		}
		size, err := uvarint()
		if err != nil {
			return nil, err
		}
		if size > uint64(len(b)) {
			return nil, errors.New("truncated tagged field")
		}
		b = b[size:]
	}
	return b, nil
}
