package protocol

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"math/big"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/auth"
)

// principalHandler answers ApiVersions and Metadata, recording the
// connection's principal for each Metadata request.
type principalHandler struct {
	mu   sync.Mutex
	seen []auth.Principal
}

func (h *principalHandler) Handle(ctx context.Context, c *Conn, req *Request) Response {
	switch r := req.Body.(type) {
	case *kmsg.ApiVersionsRequest:
		return Response{Msg: r.ResponseKind()}
	case *kmsg.MetadataRequest:
		h.mu.Lock()
		h.seen = append(h.seen, c.Principal())
		h.mu.Unlock()
		return Response{Msg: r.ResponseKind()}
	}
	return Response{None: true, Close: true}
}

func (h *principalHandler) last() auth.Principal {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.seen) == 0 {
		return auth.Principal{}
	}
	return h.seen[len(h.seen)-1]
}

type memStore map[string]auth.ScramCredential

func (m memStore) ScramCredential(user string, mech auth.ScramMechanism) (auth.ScramCredential, bool) {
	c, ok := m[mech.Name()+"/"+user]
	return c, ok
}

func startSecure(t *testing.T, sec *Security) (*principalHandler, string) {
	t.Helper()
	h := &principalHandler{}
	srv := NewServer(Config{
		Versions: map[int16]VersionRange{
			int16(kmsg.ApiVersions):      {0, 4},
			int16(kmsg.Metadata):         {0, 12},
			int16(kmsg.SASLHandshake):    {0, 1},
			int16(kmsg.SASLAuthenticate): {0, 2},
		},
		MaxRequestSize: 1 << 20,
	}, h)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.ServeSecure(l, sec)
	t.Cleanup(func() { srv.Close() })
	return h, l.Addr().String()
}

func plainSASL(lifetime time.Duration) *Security {
	return &Security{Listener: "SASL_PLAINTEXT", Protocol: "SASL_PLAINTEXT", SASL: &SASLConfig{
		Mechanisms: []string{"PLAIN", "SCRAM-SHA-256"}, Plain: PlainUsers{"alice": "pw-a", "bob": "pw-b"},
		Scram: memStore{}, SessionLifetime: lifetime,
	}}
}

// call sends one request and decodes its answer; io.EOF-like errors
// mean the server closed the connection.
func call(t *testing.T, c net.Conn, req kmsg.Request, version int16, corr int32) (kmsg.Response, error) {
	t.Helper()
	if _, err := c.Write(frame(req, version, corr)); err != nil {
		return nil, err
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var sz [4]byte
	if _, err := io.ReadFull(c, sz[:]); err != nil {
		return nil, err
	}
	buf := make([]byte, int(sz[0])<<24|int(sz[1])<<16|int(sz[2])<<8|int(sz[3]))
	if _, err := io.ReadFull(c, buf); err != nil {
		return nil, err
	}
	resp := req.ResponseKind()
	resp.SetVersion(version)
	body := buf[4:]
	if resp.IsFlexible() && req.Key() != int16(kmsg.ApiVersions) {
		body = body[1:]
	}
	if err := resp.ReadFrom(body); err != nil {
		t.Fatalf("decode %s: %v", kmsg.NameForKey(req.Key()), err)
	}
	return resp, nil
}

func mustClosed(t *testing.T, c net.Conn, what string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var b [1]byte
	if _, err := c.Read(b[:]); err == nil || isTimeout(err) {
		t.Fatalf("%s: connection still open (err %v)", what, err)
	}
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func handshake(t *testing.T, c net.Conn, mech string, version int16) *kmsg.SASLHandshakeResponse {
	t.Helper()
	r := kmsg.NewPtrSASLHandshakeRequest()
	r.Mechanism = mech
	resp, err := call(t, c, r, version, 1)
	if err != nil {
		t.Fatalf("SaslHandshake: %v", err)
	}
	return resp.(*kmsg.SASLHandshakeResponse)
}

func authenticate(t *testing.T, c net.Conn, token string) (*kmsg.SASLAuthenticateResponse, error) {
	t.Helper()
	r := kmsg.NewPtrSASLAuthenticateRequest()
	r.SASLAuthBytes = []byte(token)
	resp, err := call(t, c, r, 2, 2)
	if err != nil {
		return nil, err
	}
	return resp.(*kmsg.SASLAuthenticateResponse), nil
}

func metadata(t *testing.T, c net.Conn) error {
	_, err := call(t, c, kmsg.NewPtrMetadataRequest(), 9, 3)
	return err
}

func TestSASLRefusesRequestsBeforeAuthentication(t *testing.T) {
	_, addr := startSecure(t, plainSASL(0))

	c := dial(t, addr)
	if err := metadata(t, c); err == nil {
		t.Fatal("Metadata before SASL authentication was answered")
	}

	// ApiVersions is allowed first, but nothing else after it.
	c = dial(t, addr)
	if _, err := call(t, c, kmsg.NewPtrApiVersionsRequest(), 3, 1); err != nil {
		t.Fatalf("ApiVersions before authentication: %v", err)
	}
	if err := metadata(t, c); err == nil {
		t.Fatal("Metadata after ApiVersions but before authentication was answered")
	}

	// SaslAuthenticate without a handshake: ILLEGAL_SASL_STATE, closed.
	c = dial(t, addr)
	resp, err := authenticate(t, c, "\x00alice\x00pw-a")
	if err != nil || resp.ErrorCode != errIllegalSASLState {
		t.Fatalf("SaslAuthenticate before SaslHandshake: want ILLEGAL_SASL_STATE, got %+v, %v", resp, err)
	}
	mustClosed(t, c, "after ILLEGAL_SASL_STATE")

	// A mechanism not enabled: UNSUPPORTED_SASL_MECHANISM naming the enabled ones.
	c = dial(t, addr)
	hs := handshake(t, c, "GSSAPI", 1)
	if hs.ErrorCode != errUnsupportedSASLMechanism || strings.Join(hs.SupportedMechanisms, ",") != "PLAIN,SCRAM-SHA-256" {
		t.Fatalf("GSSAPI handshake: got %+v", hs)
	}
	mustClosed(t, c, "after UNSUPPORTED_SASL_MECHANISM")

	// Handshake done but not authenticated: still refused.
	c = dial(t, addr)
	if hs := handshake(t, c, "PLAIN", 1); hs.ErrorCode != 0 {
		t.Fatalf("PLAIN handshake: %+v", hs)
	}
	if err := metadata(t, c); err == nil {
		t.Fatal("Metadata between SaslHandshake and SaslAuthenticate was answered")
	}
}

func TestSASLPlainAuthenticates(t *testing.T) {
	h, addr := startSecure(t, plainSASL(time.Hour))

	c := dial(t, addr)
	handshake(t, c, "PLAIN", 1)
	resp, err := authenticate(t, c, "\x00alice\x00wrong")
	if err != nil || resp.ErrorCode != errSASLAuthenticationFailed || resp.ErrorMessage == nil ||
		*resp.ErrorMessage != "Authentication failed: Invalid username or password" {
		t.Fatalf("wrong password: got %+v, %v", resp, err)
	}
	mustClosed(t, c, "after a failed authentication")

	c = dial(t, addr)
	handshake(t, c, "PLAIN", 1)
	resp, err = authenticate(t, c, "\x00alice\x00pw-a")
	if err != nil || resp.ErrorCode != 0 {
		t.Fatalf("right password: %+v, %v", resp, err)
	}
	if resp.SessionLifetimeMillis != time.Hour.Milliseconds() {
		t.Fatalf("session lifetime %d ms, want connections.max.reauth.ms %d", resp.SessionLifetimeMillis, time.Hour.Milliseconds())
	}
	if err := metadata(t, c); err != nil {
		t.Fatalf("Metadata after authentication: %v", err)
	}
	if got := h.last(); got != auth.User("alice") {
		t.Fatalf("principal %v, want User:alice", got)
	}

	// KIP-43 v0: bare tokens after SaslHandshake v0 (kafka-python 2.0).
	c = dial(t, addr)
	handshake(t, c, "PLAIN", 0)
	tok := "\x00bob\x00pw-b"
	c.Write(append([]byte{0, 0, 0, byte(len(tok))}, tok...))
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var sz [4]byte
	if _, err := io.ReadFull(c, sz[:]); err != nil || sz != [4]byte{} {
		t.Fatalf("v0 PLAIN: want an empty token frame, got %v, %v", sz, err)
	}
	if err := metadata(t, c); err != nil {
		t.Fatalf("Metadata after v0 authentication: %v", err)
	}
	if got := h.last(); got != auth.User("bob") {
		t.Fatalf("principal %v, want User:bob", got)
	}
}

func TestSASLSessionExpiryAndReauthentication(t *testing.T) {
	h, addr := startSecure(t, plainSASL(400*time.Millisecond))

	// Re-authenticating before expiry keeps the connection.
	c := dial(t, addr)
	handshake(t, c, "PLAIN", 1)
	if resp, err := authenticate(t, c, "\x00alice\x00pw-a"); err != nil || resp.ErrorCode != 0 {
		t.Fatalf("authenticate: %+v, %v", resp, err)
	}
	for i := range 4 {
		time.Sleep(250 * time.Millisecond)
		if hs := handshake(t, c, "PLAIN", 1); hs.ErrorCode != 0 {
			t.Fatalf("re-authentication %d handshake: %+v", i, hs)
		}
		if resp, err := authenticate(t, c, "\x00alice\x00pw-a"); err != nil || resp.ErrorCode != 0 {
			t.Fatalf("re-authentication %d: %+v, %v", i, resp, err)
		}
		if err := metadata(t, c); err != nil {
			t.Fatalf("Metadata after re-authentication %d (%v since the first login): %v", i, time.Duration(i+1)*250*time.Millisecond, err)
		}
	}
	if got := h.last(); got != auth.User("alice") {
		t.Fatalf("principal %v after re-authentication", got)
	}
	// Re-authenticating as someone else is refused (Kafka: principals
	// cannot change on a connection).
	handshake(t, c, "PLAIN", 1)
	resp, err := authenticate(t, c, "\x00bob\x00pw-b")
	if err != nil || resp.ErrorCode != errSASLAuthenticationFailed || !strings.Contains(*resp.ErrorMessage, "Cannot change principals") {
		t.Fatalf("re-authentication as bob: %+v, %v", resp, err)
	}

	// A connection that lets its session expire is closed on its next request.
	c = dial(t, addr)
	handshake(t, c, "PLAIN", 1)
	authenticate(t, c, "\x00alice\x00pw-a")
	if err := metadata(t, c); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if err := metadata(t, c); err == nil {
		t.Fatal("Metadata after the session expired was answered")
	}
}

func TestSASLScramAuthenticates(t *testing.T) {
	cred, err := NewScramCredential(auth.ScramSHA256, "pw-s", nil, 4096)
	if err != nil {
		t.Fatal(err)
	}
	sec := plainSASL(0)
	sec.SASL.Scram = memStore{"SCRAM-SHA-256/sam": cred}
	h, addr := startSecure(t, sec)
	for _, tc := range []struct {
		pass string
		ok   bool
	}{{"pw-s", true}, {"nope", false}} {
		c := dial(t, addr)
		handshake(t, c, "SCRAM-SHA-256", 1)
		cl := newScramClient(auth.ScramSHA256, "sam", tc.pass)
		resp, err := authenticate(t, c, cl.first())
		if err != nil || resp.ErrorCode != 0 {
			t.Fatalf("client-first: %+v, %v", resp, err)
		}
		final, err := cl.final(string(resp.SASLAuthBytes))
		if err != nil {
			t.Fatal(err)
		}
		resp, err = authenticate(t, c, final)
		if !tc.ok {
			if err != nil || resp.ErrorCode != errSASLAuthenticationFailed ||
				*resp.ErrorMessage != "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256" {
				t.Fatalf("wrong password: %+v, %v", resp, err)
			}
			continue
		}
		if err != nil || resp.ErrorCode != 0 || !cl.verify(string(resp.SASLAuthBytes)) {
			t.Fatalf("client-final: %+v, %v", resp, err)
		}
		if err := metadata(t, c); err != nil || h.last() != auth.User("sam") {
			t.Fatalf("after SCRAM: %v, principal %v", err, h.last())
		}
	}
}

// testCerts makes a CA, a server certificate for 127.0.0.1 and a client
// certificate with the given subject.
func testCerts(t *testing.T, client pkix.Name) (server, clientCert tls.Certificate, pool *x509.CertPool) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, _ := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	ca, _ := x509.ParseCertificate(caDER)
	pool = x509.NewCertPool()
	pool.AddCert(ca)
	issue := func(n int64, subj pkix.Name, usage x509.ExtKeyUsage) tls.Certificate {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(n), Subject: subj,
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	}
	return issue(2, pkix.Name{CommonName: "server"}, x509.ExtKeyUsageServerAuth), issue(3, client, x509.ExtKeyUsageClientAuth), pool
}

func TestTLSClientCertificatePrincipal(t *testing.T) {
	srvCert, cliCert, pool := testCerts(t, pkix.Name{CommonName: "alice", OrganizationalUnit: []string{"eng"}, Organization: []string{"Acme, Inc."}, Country: []string{"NO"}})
	h, addr := startSecure(t, &Security{Listener: "SSL", Protocol: "SSL", TLS: &tls.Config{
		Certificates: []tls.Certificate{srvCert}, ClientCAs: pool, ClientAuth: tls.VerifyClientCertIfGiven, MinVersion: tls.VersionTLS12}})

	for _, tc := range []struct {
		certs []tls.Certificate
		want  auth.Principal
	}{
		// RFC 2253, most specific first, ',' in a value escaped.
		{[]tls.Certificate{cliCert}, auth.User(`CN=alice,OU=eng,O=Acme\, Inc.,C=NO`)},
		{nil, auth.Anonymous},
	} {
		c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, Certificates: tc.certs})
		if err != nil {
			t.Fatal(err)
		}
		if err := metadata(t, c); err != nil {
			t.Fatal(err)
		}
		c.Close()
		if got := h.last(); got != tc.want {
			t.Fatalf("principal %q, want %q", got, tc.want)
		}
	}
}

func TestTLS11Refused(t *testing.T) {
	srvCert, _, pool := testCerts(t, pkix.Name{CommonName: "x"})
	cfg, err := func() (*tls.Config, error) {
		c := &tls.Config{Certificates: []tls.Certificate{srvCert}}
		return c, applyProtocols(c, func(string) string { return "" })
	}()
	if err != nil {
		t.Fatal(err)
	}
	_, addr := startSecure(t, &Security{Listener: "SSL", Protocol: "SSL", TLS: cfg})
	_, err = tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11})
	if err == nil {
		t.Fatal("a TLS 1.1 client completed the handshake")
	}
	c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, MaxVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatalf("TLS 1.2: %v", err)
	}
	c.Close()
	if err := applyProtocols(&tls.Config{}, func(string) string { return "TLSv1.1,TLSv1.2" }); err == nil {
		t.Fatal("ssl.enabled.protocols=TLSv1.1 was accepted")
	}
}

// Before authenticating, a SASL listener reads no frame larger than
// sasl.server.max.receive.size: the size alone closes the connection.
func TestSASLUnauthenticatedFrameSizeCapped(t *testing.T) {
	sec := plainSASL(0)
	sec.SASL.MaxReceiveSize = 4096
	_, addr := startSecure(t, sec)
	c := dial(t, addr)
	c.Write([]byte{0, 0, 0x20, 0}) // 8 KiB announced, nothing sent after
	mustClosed(t, c, "an 8 KiB frame before authentication")

	// The cap is lifted once authenticated.
	c = dial(t, addr)
	handshake(t, c, "PLAIN", 1)
	if resp, err := authenticate(t, c, "\x00alice\x00pw-a"); err != nil || resp.ErrorCode != 0 {
		t.Fatalf("authenticate: %+v, %v", resp, err)
	}
	md := kmsg.NewPtrMetadataRequest()
	for i := range 400 {
		md.Topics = append(md.Topics, kmsg.MetadataRequestTopic{Topic: kmsg.StringPtr(fmt.Sprintf("topic-with-a-long-name-%04d", i))})
	}
	if _, err := call(t, c, md, 9, 9); err != nil {
		t.Fatalf("a >4 KiB Metadata after authentication: %v", err)
	}
}
