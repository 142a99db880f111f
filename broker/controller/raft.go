package controller

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/fjordhq/fjord/broker/wire"
)

// raftStream is raft's StreamLayer over the raft half of a MuxListener:
// accepted connections already had RaftMagic consumed, and dialing a peer
// writes RaftMagic first so the peer's MuxListener routes it to raft.
type raftStream struct {
	net.Listener
	// advertised is this voter's address from controller.quorum.voters:
	// raft sends it to peers (as the leader address followers report), so
	// it must be the dialable address, not the bind address.
	advertised net.Addr
	// dialer secures connections to peers (nil: PLAINTEXT).
	dialer *wire.Dialer
}

func (s *raftStream) Addr() net.Addr { return s.advertised }

func (s *raftStream) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	d := net.Dialer{}
	c, err := d.DialContext(ctx, "tcp", string(addr))
	if err != nil {
		return nil, err
	}
	host, _, _ := net.SplitHostPort(string(addr))
	if s.dialer != nil && s.dialer.TLS != nil {
		cfg := s.dialer.TLS.Clone()
		if cfg.ServerName == "" {
			cfg.ServerName = host
		}
		tc := tls.Client(c, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return nil, fmt.Errorf("TLS handshake with controller %s: %w", addr, err)
		}
		c = tc
	}
	var magic [4]byte
	binary.BigEndian.PutUint32(magic[:], RaftMagic)
	c.SetWriteDeadline(time.Now().Add(timeout))
	if _, err := c.Write(magic[:]); err != nil {
		c.Close()
		return nil, err
	}
	c.SetWriteDeadline(time.Time{})
	if s.dialer != nil && s.dialer.SASL != nil {
		if err := wire.AuthenticateStream(ctx, c, s.dialer.SASL, host); err != nil {
			c.Close()
			return nil, fmt.Errorf("SASL %s with controller %s: %w", s.dialer.SASL.Name(), addr, err)
		}
	}
	return c, nil
}

// voterAddr is a net.Addr for a host:port string.
type voterAddr string

func (a voterAddr) Network() string { return "tcp" }
func (a voterAddr) String() string  { return string(a) }

// hclogWriter feeds hashicorp/raft's log lines into slog, at the level the
// line carries.
type hclogWriter struct{ log *slog.Logger }

func (w hclogWriter) Write(p []byte) (int, error) {
	line := string(bytes.TrimRight(p, "\n"))
	level := slog.LevelInfo
	switch {
	case bytes.Contains(p, []byte("[ERROR]")):
		level = slog.LevelError
	case bytes.Contains(p, []byte("[WARN]")):
		level = slog.LevelWarn
	case bytes.Contains(p, []byte("[DEBUG]")), bytes.Contains(p, []byte("[TRACE]")):
		level = slog.LevelDebug
	}
	w.log.Log(context.Background(), level, line)
	return len(p), nil
}

func newHCLogger(log *slog.Logger) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{
		Name:            "raft",
		Level:           hclog.Info,
		Output:          hclogWriter{log},
		DisableTime:     true,
		IncludeLocation: false,
	})
}
