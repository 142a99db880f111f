package source_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/internal/testkit"
	"github.com/fjordhq/fjord/internal/testkit/connectkit"
)

// The S3 sink and the source in one worker: the sink backs a topic up
// (Avro values, .keys and .headers side files) while the source restores
// what it writes — following it as objects appear — into another topic
// (RegexRouter): each partition comes back with the same records, keys
// and headers, in order.
func TestRestoreWhatTheSinkWrote(t *testing.T) {
	testkit.SkipShort(t, "S3 sink to S3 source round trip (MinIO and a broker)")
	s3 := testkit.StartS3(t)
	s3.CreateBucket(t, "roundtrip")
	brk := testkit.StartBroker(t, nil)
	const parts, perPart = 3, 100
	createTopic(t, brk.Addr, "orders", parts)
	createTopic(t, brk.Addr, "orders-restored", parts)
	var recs []*kgo.Record
	for p := int32(0); p < parts; p++ {
		for id := int64(0); id < perPart; id++ {
			k, _, _ := row(p, id)
			recs = append(recs, &kgo.Record{Topic: "orders", Partition: p, Key: []byte(k),
				Value: fmt.Appendf(nil, `{"schema":{"type":"struct","name":"order","fields":[{"field":"id","type":"int64"},`+
					`{"field":"name","type":"string"}]},"payload":{"id":%d,"name":"p%d-row-%d"}}`, id, p, id),
				Headers: []kgo.RecordHeader{{Key: "origin", Value: fmt.Appendf(nil, "p%d", p)}, {Key: "n", Value: []byte(strconv.FormatInt(id, 10))}}})
		}
	}
	cl := testkit.Client(t, brk.Addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := cl.ProduceSync(testkit.Context(t, 30*time.Second), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	common := s3.Props("roundtrip")
	common["format.class"] = avroFormat
	common["key.converter"] = "org.apache.kafka.connect.storage.StringConverter"
	w := connectkit.Start(t, brk.Addr, connectkit.Options{})
	sink := map[string]string{"name": "backup", "connector.class": "io.confluent.connect.s3.S3SinkConnector",
		"topics": "orders", "tasks.max": "1", "flush.size": "10",
		"store.kafka.keys": "true", "store.kafka.headers": "true"}
	source := sourceConfig("restore", common, "value.converter.schemas.enable", "true", "object.min.age.ms", "1000",
		"transforms", "route", "transforms.route.type", "org.apache.kafka.connect.transforms.RegexRouter",
		"transforms.route.regex", "orders", "transforms.route.replacement", "orders-restored")
	for k, v := range common {
		sink[k] = v
	}
	w.Create(t, source) // first: it restores objects as the sink writes them
	w.Create(t, sink)

	got := consumeEnvelopes(t, brk.Addr, "orders-restored", parts*perPart)
	if err := w.Failed(); err != nil {
		t.Fatal(err)
	}
	for p := int32(0); p < parts; p++ {
		if len(got[p]) != perPart {
			t.Fatalf("partition %d: %d records, want %d", p, len(got[p]), perPart)
		}
		for i, r := range got[p] {
			k, _, _ := row(p, int64(i))
			if r.id != int64(i) || r.key != k || r.headers["origin"] != fmt.Sprintf("p%d", p) || r.headers["n"] != strconv.Itoa(i) {
				t.Fatalf("partition %d record %d: %+v", p, i, r)
			}
		}
	}
}

// consumeEnvelopes is consume for JsonConverter values with schemas.
func consumeEnvelopes(t *testing.T, addr, topic string, n int) map[int32][]restored {
	t.Helper()
	ctx := testkit.Context(t, 90*time.Second)
	cl := testkit.Client(t, addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	out := map[int32][]restored{}
	for got := 0; got < n; {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d records of %s, want %d", got, topic, n)
		}
		fs.EachRecord(func(r *kgo.Record) {
			var env struct {
				Payload struct {
					ID   int64  `json:"id"`
					Name string `json:"name"`
				} `json:"payload"`
			}
			if err := json.Unmarshal(r.Value, &env); err != nil {
				t.Fatalf("value %q: %v", r.Value, err)
			}
			if want := fmt.Sprintf("p%d-row-%d", r.Partition, env.Payload.ID); env.Payload.Name != want {
				t.Fatalf("partition %d offset %d: name %q, want %q", r.Partition, r.Offset, env.Payload.Name, want)
			}
			h := map[string]string{}
			for _, x := range r.Headers {
				h[x.Key] = string(x.Value)
			}
			out[r.Partition] = append(out[r.Partition], restored{id: env.Payload.ID, key: string(r.Key), headers: h})
			got++
		})
	}
	return out
}
