package protocol

import (
	"context"
	"crypto/tls"
	"crypto/x509/pkix"
	"encoding/asn1"
	"net"
	"time"

	"github.com/fjordhq/fjord/broker/auth"
)

// Security is how a listener authenticates its connections: Kafka's
// security protocol (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL) with the
// TLS and SASL settings it needs. A nil *Security is PLAINTEXT.
type Security struct {
	// Listener is the listener's name (for logs).
	Listener string
	// Protocol is the security protocol from listener.security.protocol.map.
	Protocol string
	// TLS is set for SSL and SASL_SSL.
	TLS *tls.Config
	// PrincipalMapper names a client certificate's principal
	// (ssl.principal.mapping.rules); nil is DEFAULT, the subject DN.
	PrincipalMapper *PrincipalMapper
	// SASL is set for SASL_PLAINTEXT and SASL_SSL.
	SASL *SASLConfig
}

// SASLConfig is a SASL listener's mechanisms and credentials.
type SASLConfig struct {
	// Mechanisms are sasl.enabled.mechanisms (PLAIN, SCRAM-SHA-256,
	// SCRAM-SHA-512).
	Mechanisms []string
	// Plain are the PLAIN users (from the listener's JAAS config).
	Plain PlainUsers
	// Scram holds the SCRAM credentials.
	Scram auth.ScramStore
	// SessionLifetime is connections.max.reauth.ms: an authenticated
	// session expires after it and the client must re-authenticate
	// (KIP-368). 0 means sessions never expire.
	SessionLifetime time.Duration
	// MaxReceiveSize is sasl.server.max.receive.size: the largest frame
	// accepted before authentication completes (default 512 KiB).
	MaxReceiveSize int32
}

// tlsConn is a TLS connection: a *tls.Conn, or a connection a listener
// already wrapped (the controller listener's mux completes the handshake
// to classify raft and Kafka connections).
type tlsConn interface {
	net.Conn
	HandshakeContext(context.Context) error
	ConnectionState() tls.ConnectionState
}

// tlsHandshakeTimeout bounds a TLS handshake, so a client that connects
// and says nothing does not hold a connection slot.
const tlsHandshakeTimeout = 10 * time.Second

// handshakeTLS completes the TLS handshake of a TLS listener's connection
// and takes the principal from the client certificate, if one was sent:
// the subject's X.500 distinguished name in RFC 2253 form
// ("CN=alice,OU=eng,O=acme") mapped by ssl.principal.mapping.rules
// (DEFAULT keeps it as it is).
func (c *Conn) handshakeTLS() bool {
	tc, ok := c.nc.(tlsConn)
	if !ok {
		return true
	}
	ctx, cancel := context.WithTimeout(c.ctx, tlsHandshakeTimeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		c.log.Info("TLS handshake failed; closing connection", "listener", c.sec.Listener, "err", err)
		return false
	}
	if certs := tc.ConnectionState().PeerCertificates; len(certs) > 0 {
		name, err := c.sec.PrincipalMapper.Name(subjectDN(certs[0].RawSubject, certs[0].Subject))
		if err != nil { // Kafka fails the connection when no rule applies
			c.log.Info("TLS client certificate maps to no principal; closing connection", "listener", c.sec.Listener, "err", err)
			return false
		}
		c.setPrincipal(auth.User(name))
	}
	return true
}

// subjectDN is the RFC 2253 form of a certificate subject, in the order
// the certificate lists its attributes (reversed, as RFC 2253 writes them),
// which is what Java's X500Principal.getName() returns.
func subjectDN(raw []byte, parsed pkix.Name) string {
	var seq pkix.RDNSequence
	if rest, err := asn1.Unmarshal(raw, &seq); err == nil && len(rest) == 0 {
		return seq.String()
	}
	return parsed.String()
}

// Principal is the connection's authenticated identity: the SASL user on
// SASL listeners, the client certificate's subject on SSL listeners with
// client authentication, else User:ANONYMOUS.
func (c *Conn) Principal() auth.Principal {
	c.authMu.Lock()
	defer c.authMu.Unlock()
	if c.principal == (auth.Principal{}) {
		return auth.Anonymous
	}
	return c.principal
}

func (c *Conn) setPrincipal(p auth.Principal) {
	c.authMu.Lock()
	c.principal = p
	c.authMu.Unlock()
}

// SecurityProtocol is the listener's security protocol (PLAINTEXT, SSL,
// SASL_PLAINTEXT or SASL_SSL).
func (c *Conn) SecurityProtocol() string {
	if c.sec == nil || c.sec.Protocol == "" {
		return "PLAINTEXT"
	}
	return c.sec.Protocol
}

// ListenerName is the name of the listener the connection came in on
// ("" for an unnamed PLAINTEXT listener).
func (c *Conn) ListenerName() string {
	if c.sec == nil {
		return ""
	}
	return c.sec.Listener
}
