package wire

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
)

// Dialer opens node-to-node connections with the security protocol of the
// listener dialled (inter.broker.listener.name): TLS when TLS is set, SASL
// authentication (SaslHandshake v1 + SaslAuthenticate v2) when SASL is
// set. The zero Dialer (or nil) dials PLAINTEXT.
type Dialer struct {
	TLS  *tls.Config
	SASL sasl.Mechanism
}

// reauthMargin is how long before its SASL session expires a connection
// reports itself broken, so callers (which redial broken connections)
// replace it before the broker would close it (KIP-368).
const reauthMargin = 0.8

// Dial connects to addr, completing the TLS handshake and SASL exchange
// before returning.
func (d *Dialer) Dial(ctx context.Context, addr, clientID string) (*Conn, error) {
	if d == nil || d.TLS == nil && d.SASL == nil {
		return Dial(ctx, addr, clientID)
	}
	var nd net.Dialer
	nc, err := nd.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if d.TLS != nil {
		cfg := d.TLS.Clone()
		if cfg.ServerName == "" {
			host, _, _ := net.SplitHostPort(addr)
			cfg.ServerName = host
		}
		tc := tls.Client(nc, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, fmt.Errorf("TLS handshake with %s: %w", addr, err)
		}
		nc = tc
	}
	c := NewConn(nc, clientID)
	if d.SASL != nil {
		lifetime, err := authenticate(ctx, c, d.SASL, addr)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("SASL %s with %s: %w", d.SASL.Name(), addr, err)
		}
		if lifetime > 0 {
			c.expiry.Store(time.Now().Add(time.Duration(float64(lifetime) * reauthMargin)).UnixNano())
		}
	}
	return c, nil
}

// authenticate runs the SASL exchange and returns the session lifetime
// the broker granted (0: unlimited).
func authenticate(ctx context.Context, c *Conn, m sasl.Mechanism, addr string) (time.Duration, error) {
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.SetVersion(1)
	hs.Mechanism = m.Name()
	resp, err := c.Request(ctx, hs)
	if err != nil {
		return 0, err
	}
	if hr := resp.(*kmsg.SASLHandshakeResponse); hr.ErrorCode != 0 {
		return 0, fmt.Errorf("%w (enabled: %v)", kerr.ErrorForCode(hr.ErrorCode), hr.SupportedMechanisms)
	}
	host, _, _ := net.SplitHostPort(addr)
	sess, msg, err := m.Authenticate(ctx, host)
	if err != nil {
		return 0, err
	}
	for {
		ar := kmsg.NewPtrSASLAuthenticateRequest()
		ar.SetVersion(2)
		ar.SASLAuthBytes = msg
		resp, err := c.Request(ctx, ar)
		if err != nil {
			return 0, err
		}
		r := resp.(*kmsg.SASLAuthenticateResponse)
		if r.ErrorCode != 0 {
			e := kerr.ErrorForCode(r.ErrorCode)
			if r.ErrorMessage != nil {
				return 0, fmt.Errorf("%w: %s", e, *r.ErrorMessage)
			}
			return 0, e
		}
		done, next, err := sess.Challenge(r.SASLAuthBytes)
		if err != nil {
			return 0, err
		}
		if done {
			if len(next) > 0 {
				return 0, errors.New("mechanism has a final message the broker does not expect")
			}
			return time.Duration(r.SessionLifetimeMillis) * time.Millisecond, nil
		}
		msg = next
	}
}

// sessionExpiry is the time (unix ns) after which the connection counts
// as broken; 0 for never.
type sessionExpiry = atomic.Int64
