package protocol

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/fjordhq/fjord/broker/auth"
	"github.com/fjordhq/fjord/broker/wire"
)

// streamAuth runs broker/wire's client side against AuthenticateStream
// over a pipe.
func streamAuth(t *testing.T, cfg *SASLConfig, m sasl.Mechanism) (auth.Principal, error, error) {
	t.Helper()
	client, server := net.Pipe()
	defer client.Close()
	defer server.Close()
	type result struct {
		p   auth.Principal
		err error
	}
	done := make(chan result, 1)
	go func() {
		server.SetDeadline(time.Now().Add(10 * time.Second))
		p, err := AuthenticateStream(server, cfg)
		if err != nil {
			server.Close()
		}
		done <- result{p, err}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cerr := wire.AuthenticateStream(ctx, client, m, "127.0.0.1")
	r := <-done
	return r.p, r.err, cerr
}

func TestAuthenticateStream(t *testing.T) {
	cred, err := NewScramCredential(auth.ScramSHA512, "pw-s", nil, 4096)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &SASLConfig{
		Mechanisms: []string{"PLAIN", "SCRAM-SHA-512"},
		Plain:      PlainUsers{"ctl": "ctl-secret"},
		Scram:      memStore{"SCRAM-SHA-512/sam": cred},
	}
	for _, tc := range []struct {
		name string
		mech sasl.Mechanism
		want string // principal name, "" for a failure
		code error
	}{
		{"plain", plain.Auth{User: "ctl", Pass: "ctl-secret"}.AsMechanism(), "ctl", nil},
		{"plain wrong password", plain.Auth{User: "ctl", Pass: "nope"}.AsMechanism(), "", kerr.SaslAuthenticationFailed},
		{"scram", scram.Auth{User: "sam", Pass: "pw-s"}.AsSha512Mechanism(), "sam", nil},
		{"scram wrong password", scram.Auth{User: "sam", Pass: "nope"}.AsSha512Mechanism(), "", kerr.SaslAuthenticationFailed},
		{"mechanism not enabled", scram.Auth{User: "sam", Pass: "pw-s"}.AsSha256Mechanism(), "", kerr.UnsupportedSaslMechanism},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, serr, cerr := streamAuth(t, cfg, tc.mech)
			if tc.want != "" {
				if serr != nil || cerr != nil || p != auth.User(tc.want) {
					t.Fatalf("principal %v, server %v, client %v; want User:%s", p, serr, cerr, tc.want)
				}
				return
			}
			if serr == nil || !errors.Is(cerr, tc.code) {
				t.Fatalf("server %v, client %v; want both to fail with %v", serr, cerr, tc.code)
			}
		})
	}
}

// FuzzAuthenticateStream: whatever a peer sends, the server ends the
// exchange (with a principal only for valid credentials) and never
// allocates beyond the token limit.
func FuzzAuthenticateStream(f *testing.F) {
	f.Add([]byte("\x00\x05PLAIN\x00\x00\x00\x0f\x00ctl\x00ctl-secret"))
	f.Add([]byte("\x00\x05PLAIN\x7f\xff\xff\xff"))
	f.Add([]byte("\x00\x0dSCRAM-SHA-512\x00\x00\x00\x05n,,n="))
	f.Add([]byte("\xff\xff"))
	f.Add([]byte{})
	cfg := &SASLConfig{
		Mechanisms:     []string{"PLAIN", "SCRAM-SHA-512"},
		Plain:          PlainUsers{"ctl": "ctl-secret"},
		Scram:          memStore{},
		MaxReceiveSize: 4096,
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		client, server := net.Pipe()
		defer client.Close()
		go func() {
			client.Write(in)
			client.Close()
		}()
		go func() {
			// Drain the server's answers so its writes never block.
			buf := make([]byte, 512)
			for {
				if _, err := client.Read(buf); err != nil {
					return
				}
			}
		}()
		server.SetDeadline(time.Now().Add(5 * time.Second))
		p, err := AuthenticateStream(server, cfg)
		server.Close()
		if err == nil && p != auth.User("ctl") {
			t.Fatalf("authenticated %v from fuzz input", p)
		}
	})
}
