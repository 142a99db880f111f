package protocol

import (
	"errors"
	"io"
	"slices"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/auth"
)

// saslTokenKey marks a Request carrying a bare SASL token (v0 framing).
const saslTokenKey = -1

// maxSASLTokenSize is Kafka's sasl.server.max.receive.size default: a
// token frame larger than this closes the connection before it is read.
const maxSASLTokenSize = 524288

// Kafka error codes of the SASL exchange.
const (
	errUnsupportedSASLMechanism = 33
	errIllegalSASLState         = 34
	errSASLAuthenticationFailed = 58
)

type saslState int

const (
	// saslInitial: only ApiVersions and SaslHandshake are accepted.
	saslInitial saslState = iota
	// saslAuthenticating: a mechanism was chosen; tokens are expected.
	saslAuthenticating
	// saslComplete: authenticated; every API is served until the session
	// expires, and SaslHandshake v1+ starts a re-authentication.
	saslComplete
)

// saslSession is a connection's SASL state, used on its processor
// goroutine (rawTokens is read by the reader too).
type saslSession struct {
	state     saslState
	mech      string
	server    saslMechanism
	reauth    bool
	expiry    time.Time // zero: the session does not expire
	rawTokens atomic.Bool
	// authenticated is set once the first exchange succeeded; until then
	// the reader caps frames at sasl.server.max.receive.size.
	authenticated atomic.Bool
}

// saslMechanism is one mechanism's server side: it consumes a client
// token and returns the answer; done with the authenticated user once
// the exchange succeeded.
type saslMechanism interface {
	next(msg []byte) (resp []byte, user string, done bool, err error)
}

func (cfg *SASLConfig) newMechanism(name string) saslMechanism {
	switch name {
	case "PLAIN":
		return &plainServer{users: cfg.Plain}
	case "SCRAM-SHA-256":
		return &scramServer{mech: auth.ScramSHA256, store: cfg.Scram}
	case "SCRAM-SHA-512":
		return &scramServer{mech: auth.ScramSHA512, store: cfg.Scram}
	}
	return nil
}

func (c *Conn) saslConfig() *SASLConfig {
	if c.sec == nil {
		return nil
	}
	return c.sec.SASL
}

var closeConn = Response{None: true, Close: true}

// authenticate answers the SASL APIs and, on a SASL listener, refuses
// every other request until the connection has authenticated (Kafka's
// SaslServerAuthenticator) or once its session has expired (KIP-368).
// handled means resp is the answer and the Handler is not called.
func (c *Conn) authenticate(req *Request) (resp Response, handled bool) {
	switch req.Key {
	case int16(kmsg.SASLHandshake), int16(kmsg.SASLAuthenticate), saslTokenKey:
		return c.handleSASL(req), true
	}
	cfg := c.saslConfig()
	if cfg == nil {
		return Response{}, false
	}
	s := &c.sasl
	switch {
	case s.state == saslInitial && req.Key == int16(kmsg.ApiVersions):
		return Response{}, false
	case s.state != saslComplete:
		c.log.Info("closing connection: request before SASL authentication completed",
			"api", kmsg.NameForKey(req.Key), "listener", c.sec.Listener, "client", req.ClientID)
		return closeConn, true
	case !s.expiry.IsZero() && time.Now().After(s.expiry):
		c.log.Info("closing connection: SASL session expired without re-authentication (connections.max.reauth.ms)",
			"api", kmsg.NameForKey(req.Key), "principal", c.Principal().String(), "client", req.ClientID)
		return closeConn, true
	}
	return Response{}, false
}

func (c *Conn) handleSASL(req *Request) Response {
	cfg := c.saslConfig()
	s := &c.sasl
	switch r := req.Body.(type) {
	case *kmsg.SASLHandshakeRequest:
		resp := r.ResponseKind().(*kmsg.SASLHandshakeResponse)
		if cfg == nil {
			// Kafka answers SaslHandshake on a listener without SASL
			// with ILLEGAL_SASL_STATE and keeps the connection.
			resp.ErrorCode = errIllegalSASLState
			return Response{Msg: resp}
		}
		resp.SupportedMechanisms = slices.Clone(cfg.Mechanisms)
		reauth := s.state == saslComplete
		if s.state == saslAuthenticating || reauth && req.Version < 1 {
			c.log.Info("closing connection: unexpected SaslHandshake", "state", s.state, "version", req.Version)
			resp.ErrorCode = errIllegalSASLState
			return Response{Msg: resp, Close: true}
		}
		mech := cfg.newMechanism(r.Mechanism)
		if !slices.Contains(cfg.Mechanisms, r.Mechanism) || mech == nil || reauth && r.Mechanism != s.mech {
			c.log.Info("closing connection: unsupported SASL mechanism", "mechanism", r.Mechanism, "enabled", cfg.Mechanisms)
			resp.ErrorCode = errUnsupportedSASLMechanism
			return Response{Msg: resp, Close: true}
		}
		s.mech, s.server, s.reauth, s.state = r.Mechanism, mech, reauth, saslAuthenticating
		if req.Version == 0 {
			// KIP-43: after a v0 handshake the tokens travel as bare
			// size-prefixed frames, not SaslAuthenticate requests.
			s.rawTokens.Store(true)
		}
		return Response{Msg: resp}

	case *kmsg.SASLAuthenticateRequest:
		resp := r.ResponseKind().(*kmsg.SASLAuthenticateResponse)
		if cfg == nil || s.state != saslAuthenticating || s.rawTokens.Load() {
			resp.ErrorCode = errIllegalSASLState
			msg := "Unexpected SaslAuthenticate request: send SaslHandshake first"
			if cfg == nil {
				msg = "SaslAuthenticate on a listener without SASL (" + c.SecurityProtocol() + ")"
			}
			resp.ErrorMessage = &msg
			return Response{Msg: resp, Close: true}
		}
		out, err := c.saslStep(r.SASLAuthBytes)
		if err != nil {
			resp.ErrorCode = errSASLAuthenticationFailed
			msg := c.saslErrorMessage(err)
			resp.ErrorMessage = &msg
			return Response{Msg: resp, Close: true}
		}
		resp.SASLAuthBytes = out
		if s.state == saslComplete && cfg.SessionLifetime > 0 {
			resp.SessionLifetimeMillis = cfg.SessionLifetime.Milliseconds()
		}
		return Response{Msg: resp}

	default: // a bare token
		if cfg == nil || s.state != saslAuthenticating {
			return closeConn
		}
		out, err := c.saslStep(req.raw)
		if err != nil {
			// v0 has no way to carry an error: Kafka closes.
			c.saslErrorMessage(err)
			return closeConn
		}
		if out == nil {
			out = []byte{}
		}
		return Response{token: out}
	}
}

// saslStep feeds a token to the mechanism and, when the exchange
// completes, makes the user the connection's principal.
func (c *Conn) saslStep(token []byte) ([]byte, error) {
	s := &c.sasl
	cfg := c.saslConfig()
	out, user, done, err := s.server.next(token)
	if err != nil {
		return nil, err
	}
	if !done {
		return out, nil
	}
	p := auth.User(user)
	if s.reauth && p != c.Principal() {
		return nil, authFailed("Cannot change principals during re-authentication from " + c.Principal().String() + ": " + p.String())
	}
	c.setPrincipal(p)
	s.authenticated.Store(true)
	s.state, s.server = saslComplete, nil
	s.rawTokens.Store(false)
	s.expiry = time.Time{}
	if cfg.SessionLifetime > 0 {
		s.expiry = time.Now().Add(cfg.SessionLifetime)
	}
	c.log.Debug("SASL authentication succeeded", "principal", p.String(), "mechanism", s.mech, "reauthentication", s.reauth)
	return out, nil
}

// saslErrorMessage is the message Kafka sends for a failed exchange: an
// authentication failure's own message, else the generic one (details
// stay in the broker's log).
func (c *Conn) saslErrorMessage(err error) string {
	c.log.Info("SASL authentication failed", "mechanism", c.sasl.mech, "listener", c.sec.Listener, "err", err)
	var ae *errAuthentication
	if errors.As(err, &ae) {
		return ae.msg
	}
	return "Authentication failed during authentication due to invalid credentials with SASL mechanism " + c.sasl.mech
}

// readRawToken reads a bare SASL token frame of the given size and queues
// it for the processor; false when the connection is done.
// maxUnauthenticatedSize is the largest frame a SASL listener reads from
// a connection that has not authenticated yet (Kafka's
// sasl.server.max.receive.size), so unauthenticated clients cannot make
// the broker allocate socket.request.max.bytes; 0 when not limited.
func (c *Conn) maxUnauthenticatedSize() int32 {
	cfg := c.saslConfig()
	if cfg == nil || c.sasl.authenticated.Load() {
		return 0
	}
	if cfg.MaxReceiveSize > 0 {
		return cfg.MaxReceiveSize
	}
	return maxSASLTokenSize
}

func (c *Conn) readRawToken(size int32, out chan<- pending) bool {
	if limit := c.maxUnauthenticatedSize(); size < 0 || limit > 0 && size > limit {
		c.log.Warn("closing connection: SASL token size out of range (sasl.server.max.receive.size)", "size", size, "max", limit)
		c.close()
		return false
	}
	c.nc.SetReadDeadline(time.Now().Add(30 * time.Second))
	buf := make([]byte, size)
	if _, err := io.ReadFull(c.nc, buf); err != nil {
		c.logReadErr(err)
		c.close()
		return false
	}
	req := &Request{Key: saslTokenKey, CorrelationID: -1, Received: time.Now(), Size: int(size), raw: buf}
	select {
	case out <- pending{req: req}:
		return true
	case <-c.ctx.Done():
		return false
	}
}
