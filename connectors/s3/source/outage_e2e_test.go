package source_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fjordhq/fjord/internal/testkit"
	"github.com/fjordhq/fjord/internal/testkit/connectkit"
	"github.com/fjordhq/fjord/internal/testkit/faultproxy"
)

// S3 failing under a running restore — every connection reset for a
// while, mid-listing and mid-object — is retried: the task does not fail,
// and once S3 is back every record arrives exactly once, in order.
func TestRestoreRidesOutS3Failures(t *testing.T) {
	testkit.SkipShort(t, "S3 source outage test (MinIO and a broker)")
	s3 := testkit.StartS3(t)
	s3.CreateBucket(t, "backup-outage")
	brk := testkit.StartBroker(t, nil)
	props := s3.Props("backup-outage")
	props["format.class"] = jsonFormat
	bk := newBackup(t, props, false)
	const topic, objects, perObject = "payments", 40, 100
	const perPart = objects * perObject
	for p := int32(0); p < 2; p++ {
		for i := 0; i < objects; i++ {
			bk.write(topic, fmt.Sprintf("partition=%d", p), p, int64(i*perObject), perObject)
		}
	}
	createTopic(t, brk.Addr, topic, 2)
	proxy := faultproxy.Start(t, strings.TrimPrefix(s3.Endpoint, "http://"))
	proxy.Delay(5 * time.Millisecond)
	w := connectkit.Start(t, brk.Addr, connectkit.Options{})
	w.Create(t, sourceConfig("restore-outage", props, "record.batch.max.size", "10",
		"store.url", "http://"+proxy.Addr(), "s3.part.retries", "1", "s3.retry.backoff.ms", "20"))
	testkit.CheckFor(t, 60*time.Second, 5*time.Millisecond, func() error {
		if n := total(t, brk.Addr, topic); n < 500 {
			return fmt.Errorf("%d records so far", n)
		}
		return nil
	})
	before := total(t, brk.Addr, topic)
	proxy.Drop(1)
	proxy.Reset()
	time.Sleep(2 * time.Second)
	during := total(t, brk.Addr, topic)
	if during >= 2*perPart {
		t.Fatalf("the restore finished (%d records) during the outage: nothing tested", during)
	}
	if err := w.Failed(); err != nil {
		t.Fatalf("failed during the outage: %v", err)
	}
	proxy.Drop(0)
	got := consume(t, brk.Addr, topic, 2*perPart)
	if err := w.Failed(); err != nil {
		t.Fatal(err)
	}
	for p := int32(0); p < 2; p++ {
		checkReplay(t, p, got[p], perPart, -1)
	}
	time.Sleep(time.Second)
	if n := total(t, brk.Addr, topic); n != 2*perPart {
		t.Fatalf("topic holds %d records, want %d: records were sent twice", n, 2*perPart)
	}
	t.Logf("%d records restored before the outage, %d during it (what was in flight)", before, during-before)
}
