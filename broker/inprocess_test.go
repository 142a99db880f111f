package broker_test

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/fjordhq/fjord/internal/inproc"
	"github.com/fjordhq/fjord/internal/testkit"
)

// countingListener counts the connections the broker accepted from it.
type countingListener struct {
	net.Listener
	n atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// TestServeInProcess: clients dialing through internal/inproc reach the
// broker without a socket, and meet the first listener's security as a
// TCP client would: SASL first, then the authorizer.
func TestServeInProcess(t *testing.T) {
	s := startSecureBroker(t, authzProps(nil), nil)
	addr := s.Addr().String()
	l := &countingListener{Listener: inproc.Listen(s.Addr())}
	go s.ServeInProcess(l)
	t.Cleanup(inproc.Register(l.Listener.(*inproc.Listener), addr))

	client := func(user, pass string) *kgo.Client {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.Dialer(inproc.Dial),
			kgo.SASL(plain.Auth{User: user, Pass: pass}.AsMechanism()),
			kgo.RetryTimeout(3*time.Second), kgo.DefaultProduceTopic("inproc"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return cl
	}
	ctx := testkit.Context(t, 30*time.Second)
	admin := client("admin", "admin-secret")
	if _, err := kadm.NewClient(admin).CreateTopic(ctx, 3, 1, nil, "inproc"); err != nil {
		t.Fatal(err)
	}
	const n = 2000
	for i := range n {
		admin.Produce(ctx, &kgo.Record{Value: []byte{byte(i), byte(i >> 8)}}, func(_ *kgo.Record, err error) {
			if err != nil {
				t.Errorf("produce: %v", err)
			}
		})
	}
	if err := admin.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	consumer := client("admin", "admin-secret")
	consumer.AddConsumeTopics("inproc")
	seen := map[int]bool{}
	for len(seen) < n && ctx.Err() == nil {
		consumer.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			seen[int(r.Value[0])|int(r.Value[1])<<8] = true
		})
	}
	if len(seen) != n {
		t.Fatalf("consumed %d distinct records in process, want %d", len(seen), n)
	}
	if l.n.Load() == 0 {
		t.Fatal("the broker accepted no in-process connection: the clients went over TCP")
	}

	// alice authenticates but has no ACL: refused as over TCP.
	err := client("alice", "alice-secret").ProduceSync(ctx, &kgo.Record{Value: []byte("x")}).FirstErr()
	if !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("alice's produce in process: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
	// A wrong password fails SASL.
	short, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err = kadm.NewClient(client("admin", "wrong")).ListTopics(short)
	if !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Fatalf("wrong password in process: %v, want SASL_AUTHENTICATION_FAILED", err)
	}
}
