package protocol

// SASL for streams that are not Kafka connections: the raft half of a
// controller listener. Kafka's controllers replicate their log over the
// Kafka protocol, so a SASL controller listener authenticates raft peers
// like any client; Fjord's controllers replicate with hashicorp/raft on
// the same port, so the raft half runs the same mechanisms (the same
// server code, credentials and error messages) in a small framing of its
// own, before raft reads a byte. Only Fjord controllers speak it, and
// broker/wire.AuthenticateStream is its client side:
//
//	client: int16 length, mechanism name
//	then until done:
//	client: int32 length, token (the first one right after the name)
//	server: int16 error code, int8 done, int32 length, bytes
//	        (the mechanism's answer, or the error message)
//
// An error code other than 0 ends the exchange and the connection.

import (
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"

	"github.com/fjordhq/fjord/broker/auth"
)

// AuthenticateStream runs the server side of a stream's SASL exchange
// with cfg's mechanisms and returns the authenticated principal. The
// caller bounds it with a deadline on nc.
func AuthenticateStream(nc net.Conn, cfg *SASLConfig) (auth.Principal, error) {
	var n [4]byte
	if _, err := io.ReadFull(nc, n[:2]); err != nil {
		return auth.Principal{}, err
	}
	name := make([]byte, binary.BigEndian.Uint16(n[:2]))
	if _, err := io.ReadFull(nc, name); err != nil {
		return auth.Principal{}, err
	}
	mech := string(name)
	limit := cfg.MaxReceiveSize
	if limit <= 0 {
		limit = maxSASLTokenSize
	}
	var server saslMechanism
	if slices.Contains(cfg.Mechanisms, mech) {
		server = cfg.newMechanism(mech)
	}
	for {
		// Each token is read whole before answering, so the framing
		// stays in lockstep even when the mechanism is refused.
		if _, err := io.ReadFull(nc, n[:]); err != nil {
			return auth.Principal{}, err
		}
		size := int32(binary.BigEndian.Uint32(n[:]))
		if size < 0 || size > limit {
			return auth.Principal{}, fmt.Errorf("SASL token of %d bytes is out of range (sasl.server.max.receive.size=%d)", size, limit)
		}
		token := make([]byte, size)
		if _, err := io.ReadFull(nc, token); err != nil {
			return auth.Principal{}, err
		}
		if server == nil {
			msg := fmt.Sprintf("Unsupported SASL mechanism %s (enabled: %v)", mech, cfg.Mechanisms)
			writeStreamAnswer(nc, errUnsupportedSASLMechanism, false, []byte(msg))
			return auth.Principal{}, errors.New(msg)
		}
		out, user, done, err := server.next(token)
		if err != nil {
			msg := "Authentication failed during authentication due to invalid credentials with SASL mechanism " + mech
			var ae *errAuthentication
			if errors.As(err, &ae) {
				msg = ae.msg
			}
			writeStreamAnswer(nc, errSASLAuthenticationFailed, false, []byte(msg))
			return auth.Principal{}, fmt.Errorf("SASL %s: %w", mech, err)
		}
		if err := writeStreamAnswer(nc, 0, done, out); err != nil {
			return auth.Principal{}, err
		}
		if done {
			return auth.User(user), nil
		}
	}
}

func writeStreamAnswer(nc net.Conn, code int16, done bool, b []byte) error {
	buf := make([]byte, 7+len(b))
	binary.BigEndian.PutUint16(buf, uint16(code))
	if done {
		buf[2] = 1
	}
	binary.BigEndian.PutUint32(buf[3:], uint32(len(b)))
	copy(buf[7:], b)
	_, err := nc.Write(buf)
	return err
}

// TLSPrincipal is the principal a TLS connection's client certificate
// names on listener sec (ssl.principal.mapping.rules applied), as a TLS
// listener's connections get it; ANONYMOUS without a certificate. An
// error means no mapping rule applies (Kafka refuses the connection).
func TLSPrincipal(sec *Security, cs tls.ConnectionState) (auth.Principal, error) {
	if len(cs.PeerCertificates) == 0 {
		return auth.Anonymous, nil
	}
	c := cs.PeerCertificates[0]
	var m *PrincipalMapper
	if sec != nil {
		m = sec.PrincipalMapper
	}
	name, err := m.Name(subjectDN(c.RawSubject, c.Subject))
	if err != nil {
		return auth.Principal{}, err
	}
	return auth.User(name), nil
}
