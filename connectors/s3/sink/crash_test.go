package sink_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/internal/testkit"
	"github.com/fjordhq/fjord/internal/testkit/faultproxy"
)

// `fjord dev` is SIGKILLed while files are open and again in the middle
// of a multipart upload (the S3 link is cut while parts travel, so the
// upload is certainly unfinished at the kill). After restarts the bucket
// holds exactly the objects a crash-free run writes — same keys, every
// record once, in offset order — and no unfinished multipart upload.
func TestCrashMidFileAndMidMultipart(t *testing.T) {
	testkit.SkipShort(t, "process-level crash test")
	srv := testkit.StartS3(t)
	srv.CreateBucket(t, "crash")
	client := srv.Client(t)
	proxy := faultproxy.Start(t, strings.TrimPrefix(srv.Endpoint, "http://"))

	dev := testkit.StartDevProcess(t, t.TempDir())
	dev.WaitServing(t, 60*time.Second, "")
	createTopic(t, dev.KafkaAddr, "events", 2)
	const perPartition, flush = 20000, 10000
	pad := strings.Repeat("x", 600)
	var recs []*kgo.Record
	for p := int32(0); p < 2; p++ {
		for i := 0; i < perPartition; i++ {
			recs = append(recs, &kgo.Record{Topic: "events", Partition: p, Value: fmt.Appendf(nil, `{"p":%d,"i":%d,"pad":%q}`, p, i, pad)})
		}
	}
	produce(t, dev.KafkaAddr, recs)

	cfg := map[string]string{
		"name": "crash-sink", "connector.class": "s3-sink", "topics": "events", "tasks.max": "1",
		"flush.size": fmt.Sprint(flush), "s3.part.size": "5242880",
		"format.class":    "io.confluent.connect.s3.format.json.JsonFormat",
		"value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false",
	}
	maps.Copy(cfg, srv.Props("crash"))
	cfg["store.url"] = "http://" + proxy.Addr()
	postConnector(t, dev.HTTPAddr, cfg)

	// 1. Mid-file: the first object is up, the other files are open.
	testkit.CheckFor(t, 120*time.Second, 5*time.Millisecond, func() error {
		if n := len(listKeys(t, client, "crash")); n == 0 {
			return fmt.Errorf("no object yet")
		}
		return nil
	})
	dev.Kill()
	dev.Restart()
	dev.WaitServing(t, 60*time.Second, "")

	// 2. Mid-multipart: an upload has begun; cut the link so its parts
	// cannot finish, then kill.
	caught := false
	deadline := time.Now().Add(120 * time.Second)
	for !caught && time.Now().Before(deadline) {
		if len(uploads(t, client, "crash")) > 0 {
			proxy.Partition()
			if len(uploads(t, client, "crash")) > 0 {
				caught = true
				dev.Kill()
			}
			proxy.Heal()
		}
		time.Sleep(2 * time.Millisecond)
	}
	if !caught {
		t.Fatalf("never saw a multipart upload in progress; keys now: %v", listKeys(t, client, "crash"))
	}
	dev.Restart()
	dev.WaitServing(t, 60*time.Second, "")

	var want []string
	for p := 0; p < 2; p++ {
		for start := 0; start < perPartition; start += flush {
			want = append(want, fmt.Sprintf("topics/events/partition=%d/events+%d+%010d.json", p, p, start))
		}
	}
	testkit.CheckFor(t, 180*time.Second, 200*time.Millisecond, func() error {
		if got := listKeys(t, client, "crash"); !slices.Equal(got, want) {
			return fmt.Errorf("keys %v, want %v", got, want)
		}
		return nil
	})
	for _, key := range want {
		var p, start int
		fmt.Sscanf(key[strings.LastIndex(key, "/")+1:], "events+%d+%d.json", &p, &start)
		out, err := client.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String("crash"), Key: aws.String(key)})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		buf.ReadFrom(out.Body)
		out.Body.Close()
		lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
		if len(lines) != flush {
			t.Fatalf("%s: %d records, want %d", key, len(lines), flush)
		}
		for j, line := range lines {
			var v struct{ P, I int }
			if err := json.Unmarshal([]byte(line), &v); err != nil {
				t.Fatalf("%s line %d: %v", key, j, err)
			}
			if v.P != p || v.I != start+j {
				t.Fatalf("%s line %d: record p=%d i=%d, want p=%d i=%d", key, j, v.P, v.I, p, start+j)
			}
		}
	}
	if u := uploads(t, client, "crash"); len(u) > 0 {
		t.Errorf("unfinished multipart uploads left in the bucket: %v", u)
	}
}

func listKeys(t *testing.T, c *s3.Client, bucket string) []string {
	t.Helper()
	out, err := c.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range out.Contents {
		keys = append(keys, *o.Key)
	}
	slices.Sort(keys)
	return keys
}

func uploads(t *testing.T, c *s3.Client, bucket string) []string {
	t.Helper()
	out, err := c.ListMultipartUploads(context.Background(), &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, u := range out.Uploads {
		keys = append(keys, *u.Key)
	}
	return keys
}

func postConnector(t *testing.T, httpAddr string, cfg map[string]string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"name": cfg["name"], "config": cfg})
	testkit.CheckFor(t, 60*time.Second, 200*time.Millisecond, func() error {
		resp, err := http.Post("http://"+httpAddr+"/connectors", "application/json", bytes.NewReader(body))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			var b bytes.Buffer
			b.ReadFrom(resp.Body)
			return fmt.Errorf("POST /connectors: %s %s", resp.Status, b.String())
		}
		return nil
	})
}
