// Package protocol serves the Kafka wire protocol over TCP.
//
// A Server accepts connections on its listeners and, per connection, runs
// three goroutines joined by bounded channels:
//
//	reader ──requests──▶ processor ──responses──▶ writer
//
// The reader frames requests (4-byte size, capped by socket.request.max.bytes),
// parses the request header and decodes the body with kmsg. The processor
// hands requests to the Handler one at a time, in arrival order, so a
// connection's requests are answered in order (what every Kafka client
// relies on) while reading the next request and writing the previous
// response overlap with the handling. Many connections run concurrently.
//
// Requests the server cannot parse — a bad frame, an unknown API key, a
// version outside the advertised range — are logged and the connection is
// closed, which is what Apache Kafka does; clients avoid them by asking
// ApiVersions first. ApiVersions itself with a too-new version is answered
// with UNSUPPORTED_VERSION at v0 so clients can downgrade (KIP-511).
package protocol

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/auth"
)

const apiVersionsKey = int16(kmsg.ApiVersions)

// Request is one decoded request.
type Request struct {
	Key           int16
	Version       int16
	CorrelationID int32
	ClientID      string
	Body          kmsg.Request
	// Received is when the request's bytes were read: used for latency
	// metrics and throttling.
	Received time.Time
	// Size is the frame size in bytes (after the length prefix).
	Size int
	// raw is a SASL token framed without a Kafka header (after a
	// SaslHandshake v0); Key is then saslTokenKey.
	raw []byte
}

// Response is what a Handler returns for one request.
type Response struct {
	// Msg is the response body; its version must be the request's version.
	Msg kmsg.Response
	// None means no response is written (produce with acks=0).
	None bool
	// Close closes the connection after writing (after Msg, if any).
	Close bool
	// Done, if set, is called once Msg has been written (or dropped), so
	// buffers referenced by Msg can be reused.
	Done func()
	// Parts, if set, is the body already encoded (Msg then only decides
	// the header version): bytes and file ranges written in order.
	Parts []Part
	// Wait, if set, completes the response later: the connection's writer
	// calls it, in response order, and writes what it returns. The
	// processor meanwhile handles the next requests, so a produce waiting
	// for replication (acks=all) does not stop the requests pipelined
	// behind it from being appended — Kafka's purgatory. Wait must return
	// by itself (a deadline), since the connection's answers queue behind it.
	Wait func() Response
	// Throttle, if set, is a quota throttle (KIP-219): the response goes
	// out at once (carrying throttle_time_ms), then the connection's next
	// requests are not processed for this long — Kafka mutes the channel.
	// Requests already read stay queued; the reader stops once ReadAhead
	// of them wait, so the client is held back without being answered
	// late.
	Throttle time.Duration
	// token is a SASL token answered without a Kafka header (the raw
	// framing that follows a SaslHandshake v0).
	token []byte
}

// Handler serves requests. Handle is called on the connection's processor
// goroutine: one request at a time per connection, concurrently across
// connections. ctx is cancelled when the connection closes, so long polls
// (fetch, join group) can give up.
type Handler interface {
	Handle(ctx context.Context, c *Conn, req *Request) Response
}

// VersionRange is an API's supported [Min, Max] versions.
type VersionRange struct{ Min, Max int16 }

// Config configures a Server.
type Config struct {
	// Versions lists the served APIs; requests for others close the connection.
	Versions map[int16]VersionRange
	// MaxRequestSize is socket.request.max.bytes (default 100 MiB).
	MaxRequestSize int32
	// IdleTimeout closes connections with no request for this long
	// (connections.max.idle.ms, default 10 minutes). 0 disables.
	IdleTimeout time.Duration
	// ReadAhead is how many decoded requests may wait for the processor.
	ReadAhead int
	Logger    *slog.Logger
	// Observer, if set, is told about every handled request (metrics).
	Observer func(req *Request, elapsed time.Duration)
	// SendBuffer and ReceiveBuffer set SO_SNDBUF/SO_RCVBUF on accepted
	// connections (socket.send.buffer.bytes, socket.receive.buffer.bytes);
	// 0 or -1 leaves the OS default.
	SendBuffer, ReceiveBuffer int
	// OnConnection, if set, is called when a connection opens (+1) or closes (-1).
	OnConnection func(delta int)
	// MaxConnections is max.connections: beyond it the listeners stop
	// accepting until a connection closes (0: no limit).
	MaxConnections int
	// MaxConnectionsPerIP is max.connections.per.ip: a new connection
	// from an address that already has this many is closed at once
	// (0: no limit). MaxConnectionsPerIPOverrides are
	// max.connections.per.ip.overrides (host or IP → limit).
	MaxConnectionsPerIP          int
	MaxConnectionsPerIPOverrides map[string]int
}

// Server serves the Kafka protocol on one or more listeners.
type Server struct {
	cfg     Config
	handler Handler
	log     *slog.Logger

	mu        sync.Mutex
	listeners []net.Listener
	conns     map[*Conn]struct{}
	closed    bool
	wg        sync.WaitGroup
	nextID    atomic.Uint64
	limits    connLimits
}

// NewServer returns a server that dispatches to h.
func NewServer(cfg Config, h Handler) *Server {
	if cfg.MaxRequestSize <= 0 {
		cfg.MaxRequestSize = 100 << 20
	}
	if cfg.ReadAhead <= 0 {
		cfg.ReadAhead = 8
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Server{cfg: cfg, handler: h, log: cfg.Logger, conns: make(map[*Conn]struct{})}
	s.limits.init(cfg)
	return s
}

// Serve accepts PLAINTEXT connections on l until l is closed or the
// server shuts down. It returns nil after Close.
func (s *Server) Serve(l net.Listener) error { return s.ServeSecure(l, nil) }

// ServeSecure is Serve for a listener with a security protocol: TLS
// handshakes and SASL authentication as sec says (nil: PLAINTEXT).
func (s *Server) ServeSecure(l net.Listener, sec *Security) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		l.Close()
		return nil
	}
	s.listeners = append(s.listeners, l)
	s.mu.Unlock()

	var backoff time.Duration
	for {
		// max.connections: wait for a free slot before accepting, as
		// Kafka's acceptor does; clients queue in the listen backlog.
		if !s.limits.acquire() {
			return nil
		}
		nc, err := l.Accept()
		if err != nil {
			s.limits.release()
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed || errors.Is(err, net.ErrClosed) {
				return nil
			}
			// Out of file descriptors and similar: back off and retry
			// rather than spin or die.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			s.log.Warn("accept failed, retrying", "err", err, "backoff", backoff)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		ip, ok := s.limits.admitIP(nc.RemoteAddr())
		if !ok {
			// max.connections.per.ip: refuse at once, before any TLS
			// work, so a flood costs little.
			s.limits.release()
			nc.Close()
			continue
		}
		if tc, ok := nc.(*net.TCPConn); ok {
			tc.SetNoDelay(true)
			if n := s.cfg.SendBuffer; n > 0 {
				tc.SetWriteBuffer(n)
			}
			if n := s.cfg.ReceiveBuffer; n > 0 {
				tc.SetReadBuffer(n)
			}
		}
		if _, already := nc.(tlsConn); sec != nil && sec.TLS != nil && !already {
			nc = tls.Server(nc, sec.TLS)
		}
		c := s.newConn(nc, sec, ip)
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			nc.Close()
			s.limits.done(ip)
			return nil
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go c.run()
	}
}

// Close stops accepting, closes every connection and waits for their
// goroutines to finish.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	s.limits.shutdown()
	for _, l := range s.listeners {
		l.Close()
	}
	for c := range s.conns {
		c.close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return nil
}

// NumConnections returns the number of open connections.
func (s *Server) NumConnections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

func (s *Server) removeConn(c *Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.limits.done(c.ip)
	s.wg.Done()
}

// Conn is one client connection.
type Conn struct {
	srv    *Server
	nc     net.Conn
	id     uint64
	ctx    context.Context
	cancel context.CancelFunc
	once   sync.Once
	log    *slog.Logger
	sec    *Security
	ip     string // for max.connections.per.ip

	authMu    sync.Mutex
	principal auth.Principal
	sasl      saslSession
}

func (s *Server) newConn(nc net.Conn, sec *Security, ip string) *Conn {
	ctx, cancel := context.WithCancel(context.Background())
	id := s.nextID.Add(1)
	return &Conn{
		srv: s, nc: nc, id: id, ctx: ctx, cancel: cancel, sec: sec, ip: ip,
		log: s.log.With("conn", id, "remote", nc.RemoteAddr().String()),
	}
}

// RemoteAddr is the client's address.
func (c *Conn) RemoteAddr() net.Addr { return c.nc.RemoteAddr() }

// LocalAddr is the listener address the client connected to.
func (c *Conn) LocalAddr() net.Addr { return c.nc.LocalAddr() }

// ID is a process-unique connection number.
func (c *Conn) ID() uint64 { return c.id }

func (c *Conn) close() {
	c.once.Do(func() {
		c.cancel()
		c.nc.Close()
	})
}

// pending is a request travelling from reader to processor, or a response
// from processor to writer.
type pending struct {
	req  *Request
	resp Response
	buf  *[]byte // pooled frame buffer to release after handling, if any
}

func (c *Conn) run() {
	defer c.srv.removeConn(c)
	if f := c.srv.cfg.OnConnection; f != nil {
		f(1)
		defer f(-1)
	}
	if !c.handshakeTLS() {
		c.close()
		return
	}
	reqs := make(chan pending, c.srv.cfg.ReadAhead)
	resps := make(chan pending, c.srv.cfg.ReadAhead)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); c.process(reqs, resps) }()
	go func() { defer wg.Done(); c.write(resps) }()
	c.read(reqs)
	wg.Wait()
	c.close()
}

// reusableFrames are the frequent requests whose decoded form keeps no
// reference to the frame: followers' and consumers' fetches, heartbeats,
// metadata. Pooling their frames spares a zeroed 16 KiB allocation per
// request, which showed in the profiles of replicated acks=all produce
// (about two follower fetches per produce).
var reusableFrames = map[int16]bool{
	int16(kmsg.Fetch):                true,
	int16(kmsg.ListOffsets):          true,
	int16(kmsg.Metadata):             true,
	int16(kmsg.OffsetFetch):          true,
	int16(kmsg.FindCoordinator):      true,
	int16(kmsg.Heartbeat):            true,
	int16(kmsg.ApiVersions):          true,
	int16(kmsg.OffsetForLeaderEpoch): true,
	int16(kmsg.BrokerHeartbeat):      true,
}

// read frames and decodes requests until the connection fails.
func (c *Conn) read(out chan<- pending) {
	defer close(out)
	var sizeBuf [4]byte
	for {
		if t := c.srv.cfg.IdleTimeout; t > 0 {
			c.nc.SetReadDeadline(time.Now().Add(t))
		}
		if _, err := io.ReadFull(c.nc, sizeBuf[:]); err != nil {
			c.logReadErr(err)
			c.close()
			return
		}
		size := int32(uint32(sizeBuf[0])<<24 | uint32(sizeBuf[1])<<16 | uint32(sizeBuf[2])<<8 | uint32(sizeBuf[3]))
		if c.sasl.rawTokens.Load() {
			// After a SaslHandshake v0 the client's next frames are
			// bare SASL tokens. The flag is read after the size: the
			// client sends a token only once it has the previous answer,
			// written after the processor set or cleared the flag.
			if !c.readRawToken(size, out) {
				return
			}
			continue
		}
		if size < 8 || size > c.srv.cfg.MaxRequestSize {
			c.log.Warn("closing connection: request size out of range",
				"size", size, "socket.request.max.bytes", c.srv.cfg.MaxRequestSize)
			c.close()
			return
		}
		if limit := c.maxUnauthenticatedSize(); limit > 0 && size > limit {
			c.log.Warn("closing connection: request before SASL authentication larger than sasl.server.max.receive.size",
				"size", size, "sasl.server.max.receive.size", limit)
			c.close()
			return
		}
		// Reading the body has its own deadline: a client that sent a
		// size and stalls must not hold the connection forever.
		c.nc.SetReadDeadline(time.Now().Add(30 * time.Second))
		bufp := getBuf(int(size))
		buf := *bufp
		if _, err := io.ReadFull(c.nc, buf); err != nil {
			putBuf(bufp)
			c.logReadErr(err)
			c.close()
			return
		}
		received := time.Now()
		req, err := c.decode(buf)
		if err != nil {
			putBuf(bufp)
			c.log.Warn("closing connection: bad request", "err", err)
			c.close()
			return
		}
		req.Received = received
		req.Size = int(size)
		p := pending{req: req}
		// Produce bodies are consumed (written to the log) before the
		// handler returns, and the requests in reusableFrames decode into
		// copies (kmsg's ReadFrom copies strings and they have no byte
		// fields), so their frame buffers can be reused. Other requests
		// may hand slices of their body to long-lived state (group member
		// metadata), so their buffer is left to the GC.
		if req.Key == int16(kmsg.Produce) || reusableFrames[req.Key] {
			p.buf = bufp
		}
		select {
		case out <- p:
		case <-c.ctx.Done():
			return
		}
	}
}

func (c *Conn) logReadErr(err error) {
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed):
	case errors.Is(err, io.ErrUnexpectedEOF):
		c.log.Debug("connection closed mid-request")
	default:
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			c.log.Debug("closing idle connection")
			return
		}
		c.log.Debug("read failed", "err", err)
	}
}

// errUnsupportedAPIVersions marks an ApiVersions request whose version we
// do not serve: answered, not a reason to close.
var errUnsupportedAPIVersions = errors.New("unsupported ApiVersions version")

func (c *Conn) decode(buf []byte) (*Request, error) {
	h, body, err := parseHeader(buf)
	if err != nil {
		return nil, err
	}
	req := &Request{Key: h.key, Version: h.version, CorrelationID: h.correlationID, ClientID: h.clientID}
	vr, ok := c.srv.cfg.Versions[h.key]
	if !ok {
		return nil, fmt.Errorf("unsupported API key %d (%s) v%d from client %q", h.key, kmsg.NameForKey(h.key), h.version, h.clientID)
	}
	if h.version < vr.Min || h.version > vr.Max {
		if h.key == int16(kmsg.ApiVersions) {
			// KIP-511: answer at v0 with UNSUPPORTED_VERSION and our
			// ranges so the client retries with a version we speak.
			r := kmsg.NewPtrApiVersionsRequest()
			r.Version = h.version
			req.Body = r
			return req, nil
		}
		return nil, fmt.Errorf("unsupported %s version %d (supported %d-%d) from client %q",
			kmsg.NameForKey(h.key), h.version, vr.Min, vr.Max, h.clientID)
	}
	kr := kmsg.RequestForKey(h.key)
	if kr == nil {
		return nil, fmt.Errorf("unknown API key %d", h.key)
	}
	kr.SetVersion(h.version)
	if kr.IsFlexible() {
		// Request header v2 carries tagged fields after the client id.
		body, err = skipTags(body)
		if err != nil {
			return nil, fmt.Errorf("%s v%d header: %w", kmsg.NameForKey(h.key), h.version, err)
		}
	}
	if err := decodeBody(kr, body); err != nil {
		return nil, fmt.Errorf("%s v%d from client %q: %w", kmsg.NameForKey(h.key), h.version, h.clientID, err)
	}
	req.Body = kr
	return req, nil
}

// decodeBody decodes with kmsg, turning a decoder panic on hostile input
// into an error so one bad client cannot take the broker down.
func decodeBody(kr kmsg.Request, body []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed body: %v", r)
		}
	}()
	return kr.ReadFrom(body)
}

func (c *Conn) process(in <-chan pending, out chan<- pending) {
	defer close(out)
	for p := range in {
		// Requests that arrived whole are handled even if the client has
		// closed its side since: an acks=0 producer closes right after
		// writing, and its records must not be dropped. Long polls see the
		// cancelled context and return at once.
		resp := c.handle(p.req)
		putBuf(p.buf)
		if obs := c.srv.cfg.Observer; obs != nil {
			obs(p.req, time.Since(p.req.Received))
		}
		if resp.None && !resp.Close {
			c.throttle(resp.Throttle)
			continue
		}
		p.resp = resp
		select {
		case out <- p:
		case <-c.ctx.Done():
			if resp.Done != nil {
				resp.Done()
			}
		}
		if resp.Close {
			return
		}
		c.throttle(resp.Throttle)
	}
}

// throttle holds the processor for d after a response was handed to the
// writer (Response.Throttle), or until the connection closes.
func (c *Conn) throttle(d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-c.ctx.Done():
	}
}

func (c *Conn) handle(req *Request) (resp Response) {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("handler panic; closing connection", "api", kmsg.NameForKey(req.Key),
				"version", req.Version, "panic", r, "stack", stack())
			resp = Response{None: true, Close: true}
		}
	}()
	if resp, handled := c.authenticate(req); handled {
		return resp
	}
	if req.Key == int16(kmsg.ApiVersions) {
		if vr := c.srv.cfg.Versions[req.Key]; req.Version > vr.Max {
			return Response{Msg: c.unsupportedAPIVersions(req)}
		}
	}
	return c.srv.handler.Handle(c.ctx, c, req)
}

func (c *Conn) unsupportedAPIVersions(req *Request) kmsg.Response {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = 0
	resp.ErrorCode = 35 // UNSUPPORTED_VERSION
	for _, k := range sortedKeys(c.srv.cfg.Versions) {
		vr := c.srv.cfg.Versions[k]
		resp.ApiKeys = append(resp.ApiKeys, kmsg.ApiVersionsResponseApiKey{ApiKey: k, MinVersion: vr.Min, MaxVersion: vr.Max})
	}
	// The request keeps its version for the header: ApiVersions responses
	// always use header v0, so only the body version matters.
	return resp
}

func (c *Conn) write(in <-chan pending) {
	w := &respWriter{c: c, buf: make([]byte, 0, 64<<10), sendfile: canSendfile(c.nc)}
	drain := func() {
		for q := range in {
			if q.resp.Wait != nil {
				q.resp = q.resp.Wait()
			}
			if q.resp.Done != nil {
				q.resp.Done()
			}
		}
	}
	// resolve completes a deferred response, first writing out what is
	// already buffered so earlier answers do not wait behind it.
	resolve := func(p pending) (pending, bool) {
		if p.resp.Wait == nil {
			return p, true
		}
		if w.pending() && !w.flush() {
			return p, false
		}
		p.resp = p.resp.Wait()
		return p, true
	}
	for p := range in {
		p, ok := resolve(p)
		if ok {
			w.add(p)
		}
		// Coalesce responses that are already waiting into one write.
		for more := ok; more && len(w.buf) < 1<<20; {
			select {
			case q, open := <-in:
				if !open {
					more = false
					break
				}
				if q, ok = resolve(q); !ok {
					more = false
					break
				}
				w.add(q)
			default:
				more = false
			}
		}
		if !ok || !w.flush() {
			drain()
			return
		}
		if w.closeAfter {
			c.close()
		}
	}
}

// respWriter batches encoded responses into one buffer and writes it,
// sending file parts with sendfile in between.
type respWriter struct {
	c          *Conn
	buf        []byte
	sendfile   bool
	done       []func()
	files      []filePart // file parts to send after buf[:at]
	err        error
	closeAfter bool
}

type filePart struct {
	at int // position in buf where the file part goes
	Part
}

func (w *respWriter) add(p pending) {
	if p.resp.Done != nil {
		w.done = append(w.done, p.resp.Done)
	}
	if p.resp.Close {
		w.closeAfter = true
	}
	if p.req.Key == saslTokenKey {
		if p.resp.token != nil {
			w.buf = appendInt32(w.buf, int32(len(p.resp.token)))
			w.buf = append(w.buf, p.resp.token...)
		}
		return
	}
	if p.resp.Parts == nil {
		w.buf = appendResponse(w.buf, p.req, p.resp.Msg)
		return
	}
	flexible := p.resp.Msg != nil && p.resp.Msg.IsFlexible()
	w.buf = appendPartsHeader(w.buf, p.req, flexible, p.resp.Parts)
	for _, part := range p.resp.Parts {
		switch {
		case part.File == nil:
			w.buf = append(w.buf, part.Bytes...)
		case w.sendfile:
			w.files = append(w.files, filePart{len(w.buf), part})
		default:
			var err error
			if w.buf, err = readFilePart(w.buf, part); err != nil && w.err == nil {
				w.err = err
			}
		}
	}
}

// pending reports whether anything was added since the last flush.
func (w *respWriter) pending() bool { return len(w.buf) > 0 || len(w.files) > 0 || len(w.done) > 0 }

// flush writes everything added; false means the connection is done.
func (w *respWriter) flush() bool {
	err := w.err
	at := 0
	for _, fp := range w.files {
		if err != nil {
			break
		}
		if fp.at > at {
			_, err = w.c.nc.Write(w.buf[at:fp.at])
			at = fp.at
		}
		if err == nil {
			err = sendFile(w.c.nc, fp.File, fp.Pos, fp.Size)
		}
	}
	if err == nil && at < len(w.buf) {
		_, err = w.c.nc.Write(w.buf[at:])
	}
	for _, f := range w.done {
		f()
	}
	w.done, w.files, w.err = w.done[:0], w.files[:0], nil
	if cap(w.buf) > 16<<20 {
		// Don't pin a huge buffer after one big response.
		w.buf = make([]byte, 0, 64<<10)
	} else {
		w.buf = w.buf[:0]
	}
	if err != nil {
		w.c.log.Debug("write failed", "err", err)
		w.c.close()
		return false
	}
	return true
}

// appendResponse frames msg as the response to req.
func appendResponse(dst []byte, req *Request, msg kmsg.Response) []byte {
	if msg == nil {
		return dst
	}
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0) // size, filled below
	dst = appendInt32(dst, req.CorrelationID)
	// Response header v1 (tagged fields) for flexible versions, except
	// ApiVersions, whose response header is always v0 so that a client
	// can parse it before knowing our versions.
	if msg.IsFlexible() && req.Key != apiVersionsKey {
		dst = append(dst, 0)
	}
	dst = msg.AppendTo(dst)
	size := uint32(len(dst) - start - 4)
	dst[start], dst[start+1], dst[start+2], dst[start+3] = byte(size>>24), byte(size>>16), byte(size>>8), byte(size)
	return dst
}
