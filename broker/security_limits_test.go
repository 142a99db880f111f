package broker_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/fjordhq/fjord/internal/testkit"
)

func saslPlainBroker(t *testing.T, extra map[string]string) string {
	props := map[string]string{"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "inter.broker.listener.name": "SASL_PLAINTEXT",
		"sasl.enabled.mechanisms": "PLAIN", "listener.name.sasl_plaintext.plain.sasl.jaas.config": plainJAAS}
	for k, v := range extra {
		props[k] = v
	}
	return startSecureBroker(t, props, nil).Addr().String()
}

// A SASL listener answers nothing but ApiVersions and the SASL APIs to a
// client that has not authenticated: Kafka closes the connection.
func TestSASLListenerRefusesUnauthenticatedClients(t *testing.T) {
	addr := saslPlainBroker(t, nil)
	ctx := testkit.Context(t, 30*time.Second)
	authed, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.SASL(plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism()))
	if err != nil {
		t.Fatal(err)
	}
	defer authed.Close()
	if _, err := kadm.NewClient(authed).CreateTopic(ctx, 1, 1, nil, "secret"); err != nil {
		t.Fatal(err)
	}

	md := kmsg.NewPtrMetadataRequest()
	md.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr("secret")}}
	if resp, err := testkit.RawRequest(addr, md, 5*time.Second); err == nil {
		t.Fatalf("unauthenticated Metadata answered: %+v", resp)
	}
	pr := kmsg.NewPtrProduceRequest()
	pr.Acks, pr.TimeoutMillis = 1, 1000
	pr.Topics = []kmsg.ProduceRequestTopic{{Topic: "secret", Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 0}}}}
	if resp, err := testkit.RawRequest(addr, pr, 5*time.Second); err == nil {
		t.Fatalf("unauthenticated Produce answered: %+v", resp)
	}

	// A client that does not do SASL gets nothing either.
	plainCl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RetryTimeout(3*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer plainCl.Close()
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := plainCl.ProduceSync(pctx, &kgo.Record{Topic: "secret", Value: []byte("x")}).FirstErr(); err == nil {
		t.Fatal("a client without SASL produced to a SASL listener")
	}
	// Nothing reached the log.
	offs, err := kadm.NewClient(authed).ListEndOffsets(ctx, "secret")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := offs.Lookup("secret", 0); o.Offset != 0 {
		t.Fatalf("end offset %d after refused produces, want 0", o.Offset)
	}
}

// franz-go re-authenticates when the broker gives its session a lifetime
// (KIP-368): a client keeps producing on the same connections well past
// connections.max.reauth.ms.
func TestSASLReauthenticationFranzGo(t *testing.T) {
	s := startSecureBroker(t, map[string]string{"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "inter.broker.listener.name": "SASL_PLAINTEXT",
		"sasl.enabled.mechanisms": "PLAIN", "listener.name.sasl_plaintext.plain.sasl.jaas.config": plainJAAS,
		"connections.max.reauth.ms": "1500"}, nil)
	addr := s.Addr().String()
	var connects, disconnects atomic.Int64
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.SASL(plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism()),
		kgo.WithHooks(connHooks{&connects, &disconnects}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := testkit.Context(t, 60*time.Second)
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "reauth"); err != nil {
		t.Fatal(err)
	}
	before := saslHandshakes(t, s.Gatherer())
	start := time.Now()
	for i := 0; time.Since(start) < 5*time.Second; i++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "reauth", Value: fmt.Appendf(nil, "%d", i)}).FirstErr(); err != nil {
			t.Fatalf("produce %d after %v: %v", i, time.Since(start), err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if n := disconnects.Load(); n != 0 {
		t.Fatalf("%d connections were closed while producing past the session lifetime (the client did not re-authenticate in time)", n)
	}
	// Over 5 s with 1.5 s sessions the producing connection
	// re-authenticated at least twice.
	if got := saslHandshakes(t, s.Gatherer()) - before; got < 2 {
		t.Fatalf("%v SaslHandshake requests while producing for 5 s with 1.5 s sessions, want re-authentications", got)
	}
}

type connHooks struct{ connects, disconnects *atomic.Int64 }

func (h connHooks) OnBrokerConnect(_ kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	if err == nil {
		h.connects.Add(1)
	}
}

func (h connHooks) OnBrokerDisconnect(kgo.BrokerMetadata, net.Conn) { h.disconnects.Add(1) }

// max.connections.per.ip: a flood of connections from one address is
// bounded (the excess is closed at once) while a client from another
// address keeps working.
func TestConnectionFloodPerIPLimit(t *testing.T) {
	s := startSecureBroker(t, map[string]string{"listeners": "PLAINTEXT://127.0.0.1:0", "max.connections.per.ip": "1000",
		"max.connections.per.ip.overrides": "127.0.0.2:20"}, nil)
	addr := s.Addr().String()
	ctx := testkit.Context(t, 60*time.Second)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var opened, refused atomic.Int64
	var mu sync.Mutex
	var held []net.Conn
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}, Timeout: 2 * time.Second}
			for {
				select {
				case <-stop:
					return
				default:
				}
				c, err := d.Dial("tcp", addr)
				if err != nil {
					continue
				}
				opened.Add(1)
				c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
				var b [1]byte
				if _, err := c.Read(b[:]); err != nil && !errors.Is(err, context.DeadlineExceeded) && !isTimeoutErr(err) {
					refused.Add(1) // closed by the broker
					c.Close()
					continue
				}
				mu.Lock()
				held = append(held, c)
				mu.Unlock()
			}
		}()
	}
	defer func() {
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	}()

	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "flood"); err != nil {
		t.Fatal(err)
	}
	maxOpen := 0
	for i := range 20 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "flood", Value: []byte("legit")}).FirstErr(); err != nil {
			t.Fatalf("legitimate produce %d during the flood: %v", i, err)
		}
		maxOpen = max(maxOpen, s.NumConnections())
		time.Sleep(50 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	mu.Lock()
	nheld := len(held)
	mu.Unlock()
	t.Logf("flood: %d connections opened, %d closed at once, %d held; broker peak %d open", opened.Load(), refused.Load(), nheld, maxOpen)
	if nheld > 20 {
		t.Fatalf("%d flood connections stayed open, limit 20", nheld)
	}
	if refused.Load() == 0 {
		t.Fatal("no flood connection was refused")
	}
	// 20 from the flood plus the legitimate client's few.
	if maxOpen > 20+5 {
		t.Fatalf("broker had %d connections open, want at most the per-IP limit plus the client's", maxOpen)
	}
}

func isTimeoutErr(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// saslHandshakes is the broker's count of SaslHandshake requests.
func saslHandshakes(t *testing.T, g prometheus.Gatherer) float64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "fjord_broker_requests_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetValue() == "SASLHandshake" {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatal("no fjord_broker_requests_total for SASLHandshake")
	return 0
}
