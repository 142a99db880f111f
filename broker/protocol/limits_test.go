package protocol

import (
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// max.connections: the acceptor waits while the limit is reached, so a
// further client is answered only once an open connection closes.
func TestMaxConnectionsWaitsForAFreeSlot(t *testing.T) {
	h := &principalHandler{}
	srv := NewServer(Config{
		Versions:       map[int16]VersionRange{int16(kmsg.ApiVersions): {0, 4}, int16(kmsg.Metadata): {0, 12}},
		MaxConnections: 2,
	}, h)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	addr := l.Addr().String()

	a, b := dial(t, addr), dial(t, addr)
	for _, c := range []net.Conn{a, b} {
		if err := metadata(t, c); err != nil {
			t.Fatal(err)
		}
	}
	third := dial(t, addr) // TCP completes in the listen backlog
	if _, err := third.Write(frame(kmsg.NewPtrMetadataRequest(), 9, 7)); err != nil {
		t.Fatal(err)
	}
	third.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	var buf [4]byte
	if _, err := third.Read(buf[:]); err == nil || !isTimeout(err) {
		t.Fatalf("a third connection was served over max.connections=2 (err %v)", err)
	}
	if n := srv.NumConnections(); n != 2 {
		t.Fatalf("%d connections open, want 2", n)
	}
	a.Close()
	third.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := third.Read(buf[:]); err != nil {
		t.Fatalf("the waiting connection was not served after one closed: %v", err)
	}
}

// SaslHandshake on a listener without SASL: ILLEGAL_SASL_STATE, and the
// connection stays usable (as Kafka answers it).
func TestSASLHandshakeOnPlaintextListener(t *testing.T) {
	_, addr := startSecure(t, nil)
	c := dial(t, addr)
	if hs := handshake(t, c, "PLAIN", 1); hs.ErrorCode != errIllegalSASLState {
		t.Fatalf("SaslHandshake on PLAINTEXT: %+v", hs)
	}
	if err := metadata(t, c); err != nil {
		t.Fatalf("Metadata after the refused handshake: %v", err)
	}
}
