package protocol

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// echoHandler answers ApiVersions and Metadata; Metadata sleeps for the
// number of milliseconds in its first topic name's length, so tests can
// check that slow and fast requests on one connection stay in order.
type echoHandler struct{ handled atomic.Int64 }

func (h *echoHandler) Handle(ctx context.Context, c *Conn, req *Request) Response {
	h.handled.Add(1)
	switch r := req.Body.(type) {
	case *kmsg.ApiVersionsRequest:
		resp := r.ResponseKind().(*kmsg.ApiVersionsResponse)
		resp.ApiKeys = []kmsg.ApiVersionsResponseApiKey{{ApiKey: 18, MinVersion: 0, MaxVersion: 4}, {ApiKey: 3, MinVersion: 0, MaxVersion: 12}}
		return Response{Msg: resp}
	case *kmsg.MetadataRequest:
		if len(r.Topics) > 0 && r.Topics[0].Topic != nil {
			time.Sleep(time.Duration(len(*r.Topics[0].Topic)) * time.Millisecond)
		}
		resp := r.ResponseKind().(*kmsg.MetadataResponse)
		resp.ControllerID = req.CorrelationID
		return Response{Msg: resp}
	case *kmsg.ProduceRequest:
		return Response{None: true}
	}
	return Response{None: true, Close: true}
}

func startServer(t *testing.T, h Handler) (*Server, string) {
	t.Helper()
	srv := NewServer(Config{
		Versions: map[int16]VersionRange{
			int16(kmsg.ApiVersions): {0, 4},
			int16(kmsg.Metadata):    {0, 12},
			int16(kmsg.Produce):     {3, 9},
		},
		MaxRequestSize: 1 << 20,
	}, h)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return srv, l.Addr().String()
}

// frame encodes a request with header v1/v2 as a client would.
func frame(r kmsg.Request, version int16, corr int32) []byte {
	r.SetVersion(version)
	b := make([]byte, 4, 64)
	b = binary.BigEndian.AppendUint16(b, uint16(r.Key()))
	b = binary.BigEndian.AppendUint16(b, uint16(version))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	b = binary.BigEndian.AppendUint16(b, 4)
	b = append(b, "test"...)
	if r.IsFlexible() {
		b = append(b, 0)
	}
	b = r.AppendTo(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

func readFrame(t *testing.T, c net.Conn) []byte {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var sz [4]byte
	if _, err := io.ReadFull(c, sz[:]); err != nil {
		t.Fatalf("read response size: %v", err)
	}
	b := make([]byte, binary.BigEndian.Uint32(sz[:]))
	if _, err := io.ReadFull(c, b); err != nil {
		t.Fatalf("read response: %v", err)
	}
	return b
}

func TestRealClientTalksToServer(t *testing.T) {
	_, addr := startServer(t, &echoHandler{})
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("metadata through kgo: %v", err)
	}
	if resp.Version < 9 {
		t.Fatalf("kgo negotiated metadata v%d, want a flexible version", resp.Version)
	}
}

func TestPipelinedResponsesKeepOrder(t *testing.T) {
	_, addr := startServer(t, &echoHandler{})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Slow first (30 ms), then fast ones: answers must come back in order.
	var out []byte
	for i, name := range []string{"slow-topic-name-of-thirty-chars", "a", "b", "c"} {
		req := kmsg.NewPtrMetadataRequest()
		req.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr(name)}}
		out = append(out, frame(req, 9, int32(100+i))...)
	}
	if _, err := c.Write(out); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		b := readFrame(t, c)
		if got := int32(binary.BigEndian.Uint32(b)); got != int32(100+i) {
			t.Fatalf("response %d has correlation id %d, want %d", i, got, 100+i)
		}
		resp := kmsg.NewPtrMetadataResponse()
		resp.Version = 9
		// Flexible response header: one tag byte after the correlation id.
		if err := resp.ReadFrom(b[5:]); err != nil {
			t.Fatalf("decode response %d: %v", i, err)
		}
		if resp.ControllerID != int32(100+i) {
			t.Fatalf("response %d body is for request %d", i, resp.ControllerID)
		}
	}
}

func TestNoResponseForAcksZero(t *testing.T) {
	_, addr := startServer(t, &echoHandler{})
	c, _ := net.Dial("tcp", addr)
	defer c.Close()
	p := kmsg.NewPtrProduceRequest()
	p.Acks = 0
	meta := kmsg.NewPtrMetadataRequest()
	c.Write(append(frame(p, 7, 1), frame(meta, 9, 2)...))
	b := readFrame(t, c)
	if got := int32(binary.BigEndian.Uint32(b)); got != 2 {
		t.Fatalf("first response has correlation id %d, want 2 (acks=0 produce gets none)", got)
	}
}

func TestUnsupportedApiVersionsAnsweredAtV0(t *testing.T) {
	_, addr := startServer(t, &echoHandler{})
	c, _ := net.Dial("tcp", addr)
	defer c.Close()
	// A made-up future ApiVersions v9: header v2 style, empty body.
	b := make([]byte, 4)
	b = binary.BigEndian.AppendUint16(b, 18)
	b = binary.BigEndian.AppendUint16(b, 9)
	b = binary.BigEndian.AppendUint32(b, 7)
	b = binary.BigEndian.AppendUint16(b, 0xffff)
	b = append(b, 0, 0, 0, 0)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	c.Write(b)
	resp := readFrame(t, c)
	av := kmsg.NewPtrApiVersionsResponse()
	av.Version = 0
	if err := av.ReadFrom(resp[4:]); err != nil {
		t.Fatal(err)
	}
	if av.ErrorCode != 35 || len(av.ApiKeys) != 3 {
		t.Fatalf("got error %d with %d keys, want UNSUPPORTED_VERSION(35) and our 3 keys", av.ErrorCode, len(av.ApiKeys))
	}
}

func TestBadRequestsCloseOnlyThatConnection(t *testing.T) {
	srv, addr := startServer(t, &echoHandler{})
	good, _ := net.Dial("tcp", addr)
	defer good.Close()

	cases := map[string][]byte{
		"oversized":           {0x7f, 0, 0, 0},
		"negative size":       {0xff, 0xff, 0xff, 0xff},
		"tiny":                {0, 0, 0, 2, 0, 18},
		"unknown api":         frameRaw(999, 0, nil),
		"unsupported version": frameRaw(3, 99, nil),
		"garbage body":        frameRaw(3, 9, []byte{0xff, 0xff, 0xff, 0xff, 0xff}),
	}
	for name, bytes := range cases {
		t.Run(name, func(t *testing.T) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.Write(bytes)
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			// EOF, or a reset when unread bytes were pending: either way closed.
			if _, err := c.Read(make([]byte, 1)); err == nil || isTimeout(err) {
				t.Fatalf("want the server to close the connection, got %v", err)
			}
		})
	}
	// The well-behaved connection is still served.
	good.Write(frame(kmsg.NewPtrApiVersionsRequest(), 3, 42))
	if got := int32(binary.BigEndian.Uint32(readFrame(t, good))); got != 42 {
		t.Fatalf("good connection got correlation %d", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for srv.NumConnections() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections open, want only the good one", srv.NumConnections())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func frameRaw(key, version int16, body []byte) []byte {
	b := make([]byte, 4)
	b = binary.BigEndian.AppendUint16(b, uint16(key))
	b = binary.BigEndian.AppendUint16(b, uint16(version))
	b = binary.BigEndian.AppendUint32(b, 1)
	b = binary.BigEndian.AppendUint16(b, 0xffff)
	if kr := kmsg.RequestForKey(key); kr != nil {
		kr.SetVersion(version)
		if version <= kr.MaxVersion() && kr.IsFlexible() {
			b = append(b, 0)
		}
	}
	b = append(b, body...)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

func TestCloseStopsEverything(t *testing.T) {
	h := &echoHandler{}
	srv, addr := startServer(t, h)
	var conns []net.Conn
	for i := 0; i < 5; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		c.Write(frame(kmsg.NewPtrApiVersionsRequest(), 3, 1))
		readFrame(t, c)
	}
	done := make(chan struct{})
	go func() { srv.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return")
	}
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err == nil {
			t.Fatal("connection still open after Close")
		}
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// A client that writes requests and closes at once (acks=0 producers do)
// still has every complete request handled.
func TestRequestsBeforeCloseAreHandled(t *testing.T) {
	h := &echoHandler{}
	_, addr := startServer(t, h)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	for i := 0; i < 20; i++ {
		p := kmsg.NewPtrProduceRequest()
		p.Acks = 0
		out = append(out, frame(p, 7, int32(i))...)
	}
	c.Write(out)
	c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for h.handled.Load() < 20 {
		if time.Now().After(deadline) {
			t.Fatalf("handled %d of 20 requests sent before the close", h.handled.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitHandler defers Metadata answers whose topic is "slow" until
// release is closed; other requests are answered at once. It records the
// order in which requests were handled.
type waitHandler struct {
	release chan struct{}
	handled chan int32
}

func (h *waitHandler) Handle(ctx context.Context, c *Conn, req *Request) Response {
	r := req.Body.(*kmsg.MetadataRequest)
	resp := r.ResponseKind().(*kmsg.MetadataResponse)
	resp.ControllerID = req.CorrelationID
	h.handled <- req.CorrelationID
	if len(r.Topics) > 0 && *r.Topics[0].Topic == "slow" {
		return Response{Msg: resp, Wait: func() Response {
			<-h.release
			return Response{Msg: resp}
		}}
	}
	return Response{Msg: resp}
}

// TestDeferredResponseKeepsOrder: a deferred (Wait) response lets the
// requests behind it be handled at once, yet answers go out in request
// order.
func TestDeferredResponseKeepsOrder(t *testing.T) {
	h := &waitHandler{release: make(chan struct{}), handled: make(chan int32, 10)}
	_, addr := startServer(t, h)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	topic := func(name string) *kmsg.MetadataRequest {
		r := kmsg.NewPtrMetadataRequest()
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(name)
		r.Topics = append(r.Topics, rt)
		return r
	}
	for i, name := range []string{"fast", "slow", "fast", "fast"} {
		if _, err := c.Write(frame(topic(name), 1, int32(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	// All four are handled while the second one's answer is held back.
	for want := int32(1); want <= 4; want++ {
		select {
		case got := <-h.handled:
			if got != want {
				t.Fatalf("handled %d, want %d", got, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("request %d not handled while an earlier answer waits", want)
		}
	}
	if got := int32(binary.BigEndian.Uint32(readFrame(t, c))); got != 1 {
		t.Fatalf("first answer has correlation id %d, want 1", got)
	}
	c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	var b [1]byte
	if n, _ := c.Read(b[:]); n != 0 {
		t.Fatal("an answer overtook the deferred one")
	}
	close(h.release)
	for want := int32(2); want <= 4; want++ {
		if got := int32(binary.BigEndian.Uint32(readFrame(t, c))); got != want {
			t.Fatalf("answer %d has correlation id %d", want, got)
		}
	}
}
