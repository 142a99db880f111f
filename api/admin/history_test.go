package admin

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/broker"
	"github.com/fjordhq/fjord/internal/testkit"
)

// kxStartBrokerWithMetrics starts an in-process broker registering its
// metrics in reg, as fjord dev and fjord broker do with their /metrics
// registry (testkit.StartBroker keeps them private).
func kxStartBrokerWithMetrics(t *testing.T, reg prometheus.Registerer) string {
	t.Helper()
	cfg, err := broker.ConfigFromProperties(map[string]string{
		"node.id": "0", "listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": t.TempDir(),
		"offsets.topic.replication.factor": "1", "group.initial.rebalance.delay.ms": "0",
	}, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Registerer = reg
	srv, err := broker.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve() }()
	t.Cleanup(func() {
		srv.Close()
		<-done
	})
	return srv.Addr().String()
}

func TestHistory(t *testing.T) {
	reg := prometheus.NewRegistry()
	addr := kxStartBrokerWithMetrics(t, reg)
	e := kxStartOn(t, addr, Options{Gatherer: reg, SampleInterval: 100 * time.Millisecond, HistoryPoints: 20})
	e.createTopic(t, "h", 2)
	// A group behind by everything produced below.
	if _, err := e.adm.CommitOffsets(testkit.Context(t, 10*time.Second), "watchers", offsetsOf("h", 0, 0)); err != nil {
		t.Fatal(err)
	}

	var rs []*kgo.Record
	for i := 0; i < 100; i++ {
		rs = append(rs, &kgo.Record{Topic: "h", Partition: int32(i % 2), Value: bytes.Repeat([]byte("x"), 1000)})
	}
	e.produce(t, rs...)

	// A sample after the burst shows it: messages from the end offsets
	// (100 in one sample's ~100 ms: far above 10/s), bytes from the
	// broker's produce counter, the group's lag (50 on the partition it
	// committed at 0, 50 on the other, which it has no commit for: kadm
	// counts an empty group's lag on every partition of its topics).
	var page historyPage
	testkit.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		e.do(t, "GET", "/history", nil, http.StatusOK, &page)
		if page.IntervalMs != 100 {
			return fmt.Errorf("interval_ms %d", page.IntervalMs)
		}
		for _, p := range page.Points {
			if p.MessagesIn >= 10 && p.BytesIn > 0 && p.GroupLag["watchers"] == 100 {
				return nil
			}
		}
		return fmt.Errorf("no point shows the burst: %+v", page.Points)
	})

	// Reading the records shows as bytes out.
	e.readAll(t, "h", 100)
	testkit.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		e.do(t, "GET", "/history", nil, http.StatusOK, &page)
		for _, p := range page.Points {
			if p.BytesOut > 0 {
				return nil
			}
		}
		return fmt.Errorf("no point shows the fetch: %+v", page.Points)
	})

	// Only HistoryPoints are kept, oldest first.
	testkit.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		e.do(t, "GET", "/history", nil, http.StatusOK, &page)
		if len(page.Points) != 20 {
			return fmt.Errorf("%d points", len(page.Points))
		}
		return nil
	})
	for i := 1; i < len(page.Points); i++ {
		if page.Points[i].Time <= page.Points[i-1].Time {
			t.Fatalf("points not in time order: %+v", page.Points)
		}
	}
	time.Sleep(300 * time.Millisecond)
	if e.do(t, "GET", "/history", nil, http.StatusOK, &page); len(page.Points) != 20 {
		t.Fatalf("%d points kept, want 20", len(page.Points))
	}

	// /cluster's throughput is the latest point's: with a steady stream
	// of records it shows messages coming in.
	stop := make(chan struct{})
	defer close(stop)
	ctx := testkit.Context(t, time.Minute)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
				e.cl.Produce(ctx, &kgo.Record{Topic: "h", Value: []byte("tick")}, nil)
			}
		}
	}()
	testkit.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		var c clusterInfo
		e.do(t, "GET", "/cluster", nil, http.StatusOK, &c)
		if c.Throughput.MessagesIn <= 0 || c.Throughput.BytesIn <= 0 {
			return fmt.Errorf("cluster throughput %+v", c.Throughput)
		}
		return nil
	})
}

func TestHistoryWithoutGatherer(t *testing.T) {
	e := kxStart(t, Options{SampleInterval: 50 * time.Millisecond})
	e.createTopic(t, "n", 1)
	e.produce(t, &kgo.Record{Topic: "n", Value: []byte("1")}, &kgo.Record{Topic: "n", Value: []byte("2")})
	testkit.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		var page historyPage
		e.do(t, "GET", "/history", nil, http.StatusOK, &page)
		for _, p := range page.Points {
			if p.BytesIn != 0 || p.BytesOut != 0 || p.GroupLag == nil {
				return fmt.Errorf("without a Gatherer bytes are 0 and group_lag is {}: %+v", p)
			}
			if p.MessagesIn > 0 {
				return nil
			}
		}
		return fmt.Errorf("no point with messages: %+v", page.Points)
	})
}
