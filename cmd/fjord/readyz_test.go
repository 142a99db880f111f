package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect/runtime"
	"github.com/fjordhq/fjord/internal/testkit"
)

// TestBrokerCommandReadyz: `fjord broker --http-addr` serves /readyz
// (ready once it serves) beside /healthz, and /metrics has the
// scrape-time broker metrics.
func TestBrokerCommandReadyz(t *testing.T) {
	testkit.SkipShort(t, "builds and runs the fjord binary")
	path, addr := writeProperties(t, "")
	httpAddr := testkit.FreeAddr(t)
	p := testkit.StartProcess(t, "broker", "--config", path, "--http-addr", httpAddr)
	testkit.WaitForPort(t, addr, 20*time.Second)
	testkit.CheckFor(t, 20*time.Second, 50*time.Millisecond, func() error {
		body, err := httpGet("http://" + httpAddr + "/readyz")
		if err != nil || !strings.Contains(body, `"status":"ready"`) || !strings.Contains(body, `"broker":"ok"`) {
			return fmt.Errorf("/readyz: %v %s", err, body)
		}
		return nil
	})
	metrics, err := httpGet("http://" + httpAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"fjord_broker_under_replicated_partitions 0", "fjord_controller_active 1", "fjord_broker_offline_partitions 0"} {
		if !strings.Contains(metrics, name) {
			t.Errorf("/metrics has no %q", name)
		}
	}
	if err := p.Stop(10 * time.Second); err != nil {
		t.Fatalf("stop: %v", err)
	}
}

// TestConnectWorkerReadyz: a distributed worker's /readyz answers 200
// once its herder has joined the group and read its configs, and 503
// once the worker has stopped.
func TestConnectWorkerReadyz(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	rest := testkit.FreeAddr(t)
	wc, err := runtime.ParseWorkerConfig(map[string]string{
		"bootstrap.servers": b.Addr, "group.id": "readyz", "listeners": "http://" + rest,
		"config.storage.topic": "readyz-configs", "offset.storage.topic": "readyz-offsets", "status.storage.topic": "readyz-status",
		"config.storage.replication.factor": "1", "offset.storage.replication.factor": "1", "status.storage.replication.factor": "1",
		"key.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter": "org.apache.kafka.connect.json.JsonConverter",
	}, runtime.Distributed)
	if err != nil {
		t.Fatal(err)
	}
	cw, err := startConnectWorker(context.Background(), wc, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			cw.close()
		}
	})
	testkit.CheckFor(t, 30*time.Second, 50*time.Millisecond, func() error {
		body, err := httpGet("http://" + rest + "/readyz")
		if err != nil || !strings.Contains(body, `"status":"ready"`) || !strings.Contains(body, `"connect":"ok"`) {
			return fmt.Errorf("/readyz: %v %s", err, body)
		}
		return nil
	})
	check := herderReady(cw.herder)
	cw.close()
	closed = true
	if err := check(); err == nil || !strings.Contains(err.Error(), "not ready") {
		t.Fatalf("ready check of a stopped worker: %v", err)
	}
}
