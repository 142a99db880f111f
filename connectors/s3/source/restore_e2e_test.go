package source_test

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/fjordhq/fjord/internal/testkit"
	"github.com/fjordhq/fjord/internal/testkit/connectkit"
)

// JSON objects under the default partitioner, with .keys (Avro) and
// .headers (JSON) side files: every record comes back once, in order,
// into its original partition, with its key and headers.
func TestRestoreJSONIntoOriginalPartitions(t *testing.T) {
	testkit.SkipShort(t, "S3 source end to end (MinIO and a broker)")
	s3 := testkit.StartS3(t)
	s3.CreateBucket(t, "backup-json")
	brk := testkit.StartBroker(t, nil)
	props := s3.Props("backup-json")
	props["format.class"] = jsonFormat
	// What a sink with store.kafka.keys and store.kafka.headers wrote.
	props["keys.format.class"], props["headers.format.class"] = avroFormat, jsonFormat
	bk := newBackup(t, props, true)
	const topic, perPart = "orders", 23
	for p := int32(0); p < 3; p++ {
		for start := int64(0); start < perPart; start += 5 {
			bk.write(topic, fmt.Sprintf("partition=%d", p), p, start, min(5, perPart-int(start)))
		}
	}
	createTopic(t, brk.Addr, topic, 3)
	w := connectkit.Start(t, brk.Addr, connectkit.Options{})
	w.Create(t, sourceConfig("restore-json", props))
	got := consume(t, brk.Addr, topic, 3*perPart)
	if err := w.Failed(); err != nil {
		t.Fatal(err)
	}
	for p := int32(0); p < 3; p++ {
		if len(got[p]) != perPart {
			t.Fatalf("partition %d has %d records, want %d", p, len(got[p]), perPart)
		}
		for i, r := range got[p] {
			k, _, _ := row(p, int64(i))
			if r.id != int64(i) || r.key != k || r.headers["origin"] != fmt.Sprintf("p%d", p) || r.headers["n"] != strconv.Itoa(i) {
				t.Fatalf("partition %d record %d: %+v, want id %d key %s", p, i, r, i, k)
			}
		}
	}
	// Nothing more arrives: each record was restored once.
	time.Sleep(time.Second)
	if n := total(t, brk.Addr, topic); n != 3*perPart {
		t.Fatalf("topic holds %d records, want %d", n, 3*perPart)
	}
}

// Avro objects under a time-based layout: one Kafka partition's objects
// are spread over hour directories whose names sort against the offsets.
// They are read by start offset, and a RegexRouter renames the topic.
func TestRestoreAvroTimeBasedLayout(t *testing.T) {
	testkit.SkipShort(t, "S3 source end to end (MinIO and a broker)")
	s3 := testkit.StartS3(t)
	s3.CreateBucket(t, "backup-avro")
	brk := testkit.StartBroker(t, nil)
	props := s3.Props("backup-avro")
	for k, v := range map[string]string{
		"format.class": avroFormat, "topics.dir": "backups/kafka",
		"partitioner.class":     "io.confluent.connect.storage.partitioner.TimeBasedPartitioner",
		"path.format":           "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH",
		"partition.duration.ms": "3600000", "locale": "en-US", "timezone": "UTC",
	} {
		props[k] = v
	}
	bk := newBackup(t, props, false)
	const topic = "events"
	for p := int32(0); p < 2; p++ {
		// Offsets 0..39 in 4 objects; later offsets in earlier hours.
		for i := 0; i < 4; i++ {
			bk.write(topic, fmt.Sprintf("year=2026/month=11/day=29/hour=%02d", 13-i), p, int64(i*10), 10)
		}
	}
	createTopic(t, brk.Addr, "restored-"+topic, 2)
	w := connectkit.Start(t, brk.Addr, connectkit.Options{})
	w.Create(t, sourceConfig("restore-avro", props,
		"transforms", "route",
		"transforms.route.type", "org.apache.kafka.connect.transforms.RegexRouter",
		"transforms.route.regex", "(.*)", "transforms.route.replacement", "restored-$1"))
	got := consume(t, brk.Addr, "restored-"+topic, 80)
	if err := w.Failed(); err != nil {
		t.Fatal(err)
	}
	for p := int32(0); p < 2; p++ {
		ids := make([]int64, len(got[p]))
		for i, r := range got[p] {
			ids[i] = r.id
			if r.key != "" || len(r.headers) != 0 {
				t.Fatalf("partition %d: key %q headers %v without side files", p, r.key, r.headers)
			}
		}
		if want := seqIDs(0, 40); !slices.Equal(ids, want) {
			t.Fatalf("partition %d ids %v, want %v", p, ids, want)
		}
	}
}

func seqIDs(from, n int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = from + int64(i)
	}
	return out
}
