package sink_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/internal/testkit"
)

// The S3 server is down for a while in the middle of a run: the task
// keeps its files and its offsets uncommitted, retries by itself, does
// not fail, and once the server is back the bucket holds every record
// exactly once under the keys of an undisturbed run.
func TestS3OutageLosesNothing(t *testing.T) {
	testkit.SkipShort(t, "needs the S3 server")
	e := startEnv(t)
	createTopic(t, e.broker.Addr, "ticks", 1)
	batch := func(from, to int) []*kgo.Record {
		var out []*kgo.Record
		for i := from; i < to; i++ {
			out = append(out, &kgo.Record{Topic: "ticks", Value: fmt.Appendf(nil, `{"i":%d}`, i)})
		}
		return out
	}
	produce(t, e.broker.Addr, batch(0, 1000))
	e.worker.Create(t, e.connector("ticks-sink", "ticks", "flush.size", "200",
		"value.converter", "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable", "false",
		"s3.part.retries", "1", "s3.retry.backoff.ms", "50"))
	key := func(start int) string { return fmt.Sprintf("topics/ticks/partition=0/ticks+0+%010d.json", start) }
	e.waitKeys(t, "topics/", []string{key(0), key(200), key(400), key(600), key(800)}, 60*time.Second)

	e.s3.Stop()
	produce(t, e.broker.Addr, batch(1000, 2000))
	// The uploads fail; once the closed files pile up the task stops
	// taking records and its RUNNING status says why.
	testkit.CheckFor(t, 60*time.Second, 100*time.Millisecond, func() error {
		if err := e.worker.Failed(); err != nil {
			t.Fatalf("the task failed during the outage instead of retrying: %v", err)
		}
		st, err := e.worker.H.ConnectorStatus(context.Background(), "ticks-sink")
		if err != nil {
			return err
		}
		if len(st.Tasks) != 1 || st.Tasks[0].State != "RUNNING" || !strings.Contains(st.Tasks[0].Trace, "S3") {
			return fmt.Errorf("task status %+v: want RUNNING with the S3 cause in its trace", st.Tasks)
		}
		return nil
	})
	if c := committed(t, e.broker.Addr, "ticks-sink", "ticks"); c[0] > 1000 {
		t.Fatalf("offset %d committed while S3 was down", c[0])
	}
	e.s3.Start()

	var want []string
	for start := 0; start < 2000; start += 200 {
		want = append(want, key(start))
	}
	e.waitKeys(t, "topics/", want, 90*time.Second)
	for start := 0; start < 2000; start += 200 {
		vals := e.read(t, key(start), "JsonFormat", nil)
		if len(vals) != 200 {
			t.Fatalf("%s: %d records", key(start), len(vals))
		}
		for j, v := range vals {
			if i := asInt(t, field(t, v, "i")); i != int64(start+j) {
				t.Fatalf("%s record %d: i=%d", key(start), j, i)
			}
		}
	}
	testkit.CheckFor(t, 20*time.Second, 100*time.Millisecond, func() error {
		if c := committed(t, e.broker.Addr, "ticks-sink", "ticks"); c[0] != 2000 {
			return fmt.Errorf("committed %v, want 2000", c)
		}
		st, err := e.worker.H.ConnectorStatus(context.Background(), "ticks-sink")
		if err != nil {
			return err
		}
		if st.Tasks[0].State != "RUNNING" || st.Tasks[0].Trace != "" {
			return fmt.Errorf("task status %+v: want RUNNING without a trace once S3 is back", st.Tasks)
		}
		return nil
	})
}
