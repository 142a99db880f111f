package runtime

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/herder"
	"github.com/fjordhq/fjord/connect/runtime/runtimetest"
	"github.com/fjordhq/fjord/connect/storage"
	"github.com/fjordhq/fjord/internal/testkit"
)

func TestSourceOffsetsAlterReset(t *testing.T) {
	ctx := testkit.Context(t, time.Minute)
	store := storage.NewMemoryOffsetStore()
	w := newTestWorker(t, workerProps("127.0.0.1:1"), store)
	cfg := runtimetest.SourceConfig("src", runtimetest.TestID(t), "t", 1)
	store.Put(ctx, "src", []connect.SourcePartitionOffset{{Partition: map[string]any{"task": "0"}, Offset: map[string]any{"seq": 5}}})
	o, err := w.ConnectorOffsets(ctx, "src", cfg)
	if err != nil || len(o.Offsets) != 1 || o.Offsets[0].Offset["seq"] != int64(5) {
		t.Fatalf("offsets %+v %v", o, err)
	}
	msg, err := w.ModifyConnectorOffsets(ctx, "src", cfg, &herder.ConnectorOffsets{Offsets: []herder.ConnectorOffset{
		{Partition: map[string]any{"task": "0"}, Offset: map[string]any{"seq": json.Number("10")}}, // as the REST API decodes it
		{Partition: map[string]any{"task": "1"}, Offset: nil},
	}})
	if err != nil || msg != alteredFramework {
		t.Fatalf("alter: %q %v", msg, err)
	}
	got, _ := store.Get(ctx, "src", []map[string]any{{"task": "0"}})
	if got[0]["seq"] != int64(10) {
		t.Errorf("altered offset %v (JSON numbers normalise to int64)", got[0])
	}
	msg, err = w.ModifyConnectorOffsets(ctx, "src", cfg, nil)
	if err != nil || msg != resetFramework {
		t.Fatalf("reset: %q %v", msg, err)
	}
	if o, _ := w.ConnectorOffsets(ctx, "src", cfg); len(o.Offsets) != 0 {
		t.Errorf("offsets after reset %+v", o.Offsets)
	}
}

func TestSinkOffsetsAlterReset(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	ctx := testkit.Context(t, time.Minute)
	cl := testkit.Client(t, b.Addr, kgo.AllowAutoTopicCreation())
	for i := range 5 {
		produce(t, cl, &kgo.Record{Topic: "so", Value: []byte(fmt.Sprint(i))})
	}
	w := newTestWorker(t, workerProps(b.Addr, "offset.flush.interval.ms", "20"), nil)
	ev := newEvents()
	cfg := runtimetest.SinkConfig("so", runtimetest.TestID(t), "so")
	ids := run(t, w, ev, cfg)
	awaitDistinct(t, runtimetest.Collector(cfg["test.id"]), 5)
	testkit.CheckFor(t, 10*time.Second, 20*time.Millisecond, func() error {
		o, err := w.ConnectorOffsets(ctx, "so", cfg)
		if err != nil || len(o.Offsets) != 1 || o.Offsets[0].Offset[kafkaOffsetKey] != int64(5) {
			return fmt.Errorf("offsets %+v %v", o, err)
		}
		if o.Offsets[0].Partition[kafkaTopicKey] != "so" || o.Offsets[0].Partition[kafkaPartitionKey] != 0 {
			return fmt.Errorf("partition %v", o.Offsets[0].Partition)
		}
		return nil
	})
	w.StopTasks(ctx, ids)
	w.StopConnector(ctx, "so")

	for _, c := range []struct {
		offsets []herder.ConnectorOffset
		want    string
	}{
		{[]herder.ConnectorOffset{{Partition: nil}}, "cannot be null or missing"},
		{[]herder.ConnectorOffset{{Partition: map[string]any{"kafka_topic": "so"}}}, "must contain the keys 'kafka_topic' and 'kafka_partition'"},
		{[]herder.ConnectorOffset{{Partition: map[string]any{"kafka_topic": "so", "kafka_partition": "x"}}}, "Failed to parse the following Kafka partition value in the provided offsets: 'x'"},
		{[]herder.ConnectorOffset{{Partition: map[string]any{"kafka_topic": "so", "kafka_partition": 0.0}, Offset: map[string]any{}}}, "should either be null or contain the key 'kafka_offset'"},
	} {
		_, err := w.ModifyConnectorOffsets(ctx, "so", cfg, &herder.ConnectorOffsets{Offsets: c.offsets})
		if err == nil || !strings.Contains(err.Error(), c.want) || herder.StatusOf(err) != 400 {
			t.Errorf("%+v: %v (status %d)", c.offsets, err, herder.StatusOf(err))
		}
	}
	msg, err := w.ModifyConnectorOffsets(ctx, "so", cfg, &herder.ConnectorOffsets{Offsets: []herder.ConnectorOffset{
		{Partition: map[string]any{"kafka_topic": "so", "kafka_partition": "0"}, Offset: map[string]any{"kafka_offset": json.Number("2")}}}})
	if err != nil || msg != alteredFramework {
		t.Fatalf("alter: %q %v", msg, err)
	}
	o, _ := w.ConnectorOffsets(ctx, "so", cfg)
	if len(o.Offsets) != 1 || o.Offsets[0].Offset[kafkaOffsetKey] != int64(2) {
		t.Errorf("after alter %+v", o.Offsets)
	}
	if msg, err := w.ModifyConnectorOffsets(ctx, "so", cfg, nil); err != nil || msg != resetFramework {
		t.Fatalf("reset: %q %v", msg, err)
	}
	if o, _ := w.ConnectorOffsets(ctx, "so", cfg); len(o.Offsets) != 0 {
		t.Errorf("after reset %+v", o.Offsets)
	}
}
