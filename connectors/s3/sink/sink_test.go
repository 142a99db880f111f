package sink_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/internal/testkit"
)

// Records of two partitions land in Confluent's keys — one object per
// flush.size records, named by its first offset — with the values, keys
// and headers in their files in offset order, and the group's committed
// offsets follow the uploaded files.
func TestDefaultPartitionerObjectsAndContent(t *testing.T) {
	testkit.SkipShort(t, "needs the S3 server")
	e := startEnv(t)
	createTopic(t, e.broker.Addr, "orders", 2)
	var recs []*kgo.Record
	for p := int32(0); p < 2; p++ {
		for i := int64(0); i < 300; i++ {
			id := int64(p)*1000 + i
			recs = append(recs, &kgo.Record{Topic: "orders", Partition: p, Key: fmt.Appendf(nil, `"k%d"`, id),
				Value: envelope(id, fmt.Sprint("n", id)), Headers: []kgo.RecordHeader{{Key: "trace", Value: fmt.Appendf(nil, "t%d", id)}}})
		}
	}
	produce(t, e.broker.Addr, recs)
	e.worker.Create(t, e.connector("orders-sink", "orders",
		"store.kafka.keys", "true", "keys.format.class", "io.confluent.connect.s3.format.json.JsonFormat",
		"store.kafka.headers", "true"))

	var want []string
	for p := 0; p < 2; p++ {
		for start := 0; start < 300; start += 100 {
			base := fmt.Sprintf("topics/orders/partition=%d/orders+%d+%010d", p, p, start)
			want = append(want, base+".headers.avro", base+".json", base+".keys.json")
		}
	}
	slices.Sort(want)
	e.waitKeys(t, "topics/", want, 60*time.Second)

	for p := int64(0); p < 2; p++ {
		for start := int64(0); start < 300; start += 100 {
			base := fmt.Sprintf("topics/orders/partition=%d/orders+%d+%010d", p, p, start)
			values := e.read(t, base+".json", "JsonFormat", nil)
			keys := e.read(t, base+".keys.json", "JsonFormat", nil)
			headers := e.read(t, base+".headers.avro", "AvroFormat", nil)
			if len(values) != 100 || len(keys) != 100 || len(headers) != 100 {
				t.Fatalf("%s: %d values, %d keys, %d headers, want 100 each", base, len(values), len(keys), len(headers))
			}
			for i, v := range values {
				id := p*1000 + start + int64(i)
				if got := asInt(t, field(t, v, "id")); got != id {
					t.Fatalf("%s record %d: id %d, want %d", base, i, got, id)
				}
				if got := field(t, v, "name"); got != fmt.Sprint("n", id) {
					t.Fatalf("%s record %d: name %v", base, i, got)
				}
				if keys[i] != fmt.Sprint("k", id) {
					t.Fatalf("%s record %d: key %v, want k%d", base, i, keys[i], id)
				}
				hs, ok := headers[i].([]any)
				if !ok || len(hs) != 1 || field(t, hs[0], "key") != "trace" || field(t, hs[0], "value") != fmt.Sprint("t", id) {
					t.Fatalf("%s record %d: headers %v", base, i, headers[i])
				}
			}
		}
	}
	testkit.CheckFor(t, 10*time.Second, 100*time.Millisecond, func() error {
		c := committed(t, e.broker.Addr, "orders-sink", "orders")
		if c[0] != 300 || c[1] != 300 {
			return fmt.Errorf("committed %v, want 300 for both partitions", c)
		}
		return nil
	})
}

// The hourly partitioner with record timestamps: records of one Kafka
// partition spread over three hours share commits (flush.size counts the
// Kafka partition), each file is named by its own first offset, and the
// layout is exactly what Confluent's TopicPartitionWriter produces.
func TestHourlyPartitionerRecordTime(t *testing.T) {
	testkit.SkipShort(t, "needs the S3 server")
	e := startEnv(t)
	createTopic(t, e.broker.Addr, "clicks", 1)
	base := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	const n, flush = 600, 150
	hourOf := func(i int) int { return (i / 40) % 3 } // 40 records per hour, cycling
	var recs []*kgo.Record
	for i := 0; i < n; i++ {
		ts := base.Add(time.Duration(hourOf(i))*time.Hour + time.Duration(i)*time.Second)
		recs = append(recs, &kgo.Record{Topic: "clicks", Value: fmt.Appendf(nil, `{"i":%d}`, i), Timestamp: ts})
	}
	produce(t, e.broker.Addr, recs)
	e.worker.Create(t, e.connector("clicks-sink", "clicks", "flush.size", fmt.Sprint(flush),
		"value.converter", "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable", "false",
		"partitioner.class", "io.confluent.connect.storage.partitioner.HourlyPartitioner",
		"timestamp.extractor", "Record", "locale", "en-US", "timezone", "UTC"))

	// Expected: every flush.size records commit; within a commit each hour
	// has one file named by the first offset of that hour in it.
	type file struct {
		key     string
		records []int
	}
	var want []file
	for start := 0; start < n; start += flush {
		byHour := map[int]*file{}
		var order []int
		for i := start; i < start+flush; i++ {
			h := hourOf(i)
			f := byHour[h]
			if f == nil {
				hour := base.Add(time.Duration(h) * time.Hour)
				f = &file{key: fmt.Sprintf("topics/clicks/year=%04d/month=%02d/day=%02d/hour=%02d/clicks+0+%010d.json",
					hour.Year(), hour.Month(), hour.Day(), hour.Hour(), i)}
				byHour[h] = f
				order = append(order, h)
			}
			f.records = append(f.records, i)
		}
		for _, h := range order {
			want = append(want, *byHour[h])
		}
	}
	var wantKeys []string
	for _, f := range want {
		wantKeys = append(wantKeys, f.key)
	}
	slices.Sort(wantKeys)
	e.waitKeys(t, "topics/", wantKeys, 60*time.Second)
	for _, f := range want {
		got := e.read(t, f.key, "JsonFormat", nil)
		if len(got) != len(f.records) {
			t.Fatalf("%s: %d records, want %d", f.key, len(got), len(f.records))
		}
		for j, v := range got {
			if i := asInt(t, field(t, v, "i")); i != int64(f.records[j]) {
				t.Fatalf("%s record %d: i=%d, want %d", f.key, j, i, f.records[j])
			}
		}
	}
}
