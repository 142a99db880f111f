package wire

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/sasl"
)

// maxStreamAnswer bounds a server answer in the stream framing: SCRAM's
// are a few hundred bytes.
const maxStreamAnswer = 64 << 10

// AuthenticateStream is the client side of broker/protocol's
// AuthenticateStream: a SASL exchange on a raft connection to a
// controller listener, before raft's own bytes. host is the peer's host
// (mechanisms that bind to it); ctx's deadline bounds the exchange.
func AuthenticateStream(ctx context.Context, nc net.Conn, m sasl.Mechanism, host string) error {
	if dl, ok := ctx.Deadline(); ok {
		nc.SetDeadline(dl)
		defer nc.SetDeadline(time.Time{})
	}
	name := m.Name()
	hello := make([]byte, 2+len(name))
	binary.BigEndian.PutUint16(hello, uint16(len(name)))
	copy(hello[2:], name)
	if _, err := nc.Write(hello); err != nil {
		return err
	}
	sess, msg, err := m.Authenticate(ctx, host)
	if err != nil {
		return err
	}
	for {
		frame := make([]byte, 4+len(msg))
		binary.BigEndian.PutUint32(frame, uint32(len(msg)))
		copy(frame[4:], msg)
		if _, err := nc.Write(frame); err != nil {
			return err
		}
		var head [7]byte
		if _, err := io.ReadFull(nc, head[:]); err != nil {
			return fmt.Errorf("reading the SASL answer: %w", err)
		}
		code := int16(binary.BigEndian.Uint16(head[:2]))
		done := head[2] == 1
		size := binary.BigEndian.Uint32(head[3:])
		if size > maxStreamAnswer {
			return fmt.Errorf("SASL answer of %d bytes is too large", size)
		}
		body := make([]byte, size)
		if _, err := io.ReadFull(nc, body); err != nil {
			return fmt.Errorf("reading the SASL answer: %w", err)
		}
		if code != 0 {
			return fmt.Errorf("%w: %s", kerr.ErrorForCode(code), body)
		}
		clientDone, next, err := sess.Challenge(body)
		if err != nil {
			return err
		}
		switch {
		case clientDone && done:
			if len(next) > 0 {
				return errors.New("mechanism has a final message the controller does not expect")
			}
			return nil
		case clientDone || done:
			return fmt.Errorf("SASL %s: client and controller disagree on when the exchange ends", name)
		}
		msg = next
	}
}
