package testkit

import (
	"log/slog"
	"maps"
	"os"
	"testing"
	"time"

	"github.com/fjordhq/fjord/broker"
)

// Broker is an in-process Fjord broker for tests.
type Broker struct {
	t       testing.TB
	Server  *broker.Server
	Addr    string
	DataDir string
	props   map[string]string
	done    chan error
}

// StartBroker starts a one-node broker on a free loopback port with its
// data in a temp dir. props override the test defaults (Kafka property
// names). The broker is closed when the test ends.
func StartBroker(t testing.TB, props map[string]string) *Broker {
	t.Helper()
	b := &Broker{t: t, DataDir: t.TempDir()}
	b.props = map[string]string{
		"node.id":                          "0",
		"listeners":                        "PLAINTEXT://127.0.0.1:0",
		"log.dirs":                         b.DataDir,
		"offsets.topic.replication.factor": "1",
		"group.initial.rebalance.delay.ms": "0",
		"offsets.topic.num.partitions":     "50",
	}
	maps.Copy(b.props, props)
	b.start()
	t.Cleanup(func() { b.Close() })
	return b
}

func (b *Broker) start() {
	b.t.Helper()
	level := slog.LevelWarn
	if os.Getenv("FJORD_TEST_LOG") != "" {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	cfg, err := broker.ConfigFromProperties(b.props, logger)
	if err != nil {
		b.t.Fatalf("broker config: %v", err)
	}
	srv, err := broker.New(cfg)
	if err != nil {
		b.t.Fatalf("start broker: %v", err)
	}
	b.Server = srv
	b.Addr = srv.Addr().String()
	b.done = make(chan error, 1)
	go func() { b.done <- srv.Serve() }()
}

// Close stops the broker cleanly (idempotent).
func (b *Broker) Close() {
	if b.Server == nil {
		return
	}
	if err := b.Server.Close(); err != nil {
		b.t.Errorf("close broker: %v", err)
	}
	select {
	case <-b.done:
	case <-time.After(10 * time.Second):
		b.t.Errorf("broker Serve did not return after Close")
	}
	b.Server = nil
}

// Restart closes the broker cleanly and starts it again on the same data
// dir and the same address.
func (b *Broker) Restart() {
	b.t.Helper()
	b.Close()
	b.props["listeners"] = "PLAINTEXT://" + b.Addr
	b.start()
}
