package sink_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connectors/s3/format"
	_ "github.com/fjordhq/fjord/connectors/s3/sink"
	_ "github.com/fjordhq/fjord/converters/all"
	"github.com/fjordhq/fjord/internal/testkit"
	"github.com/fjordhq/fjord/internal/testkit/connectkit"
)

// env is a broker, an S3 server with a bucket, and a Connect worker.
type env struct {
	broker *testkit.Broker
	s3     *testkit.S3Server
	bucket string
	worker *connectkit.Worker
	client *s3.Client
}

func startEnv(t *testing.T) *env {
	t.Helper()
	e := &env{broker: testkit.StartBroker(t, nil), s3: testkit.StartS3(t), bucket: "sink-test"}
	e.s3.CreateBucket(t, e.bucket)
	e.client = e.s3.Client(t)
	e.worker = connectkit.Start(t, e.broker.Addr, connectkit.Options{Props: map[string]string{"offset.flush.interval.ms": "200"}})
	return e
}

// connector returns the S3 sink config for topics with the env's bucket,
// over the given keys.
func (e *env) connector(name, topics string, kv ...string) map[string]string {
	cfg := map[string]string{
		"name": name, "connector.class": "io.confluent.connect.s3.S3SinkConnector", "topics": topics,
		"tasks.max": "1", "flush.size": "100",
		"format.class":  "io.confluent.connect.s3.format.json.JsonFormat",
		"storage.class": "io.confluent.connect.s3.storage.S3Storage",
		"key.converter": "org.apache.kafka.connect.json.JsonConverter", "key.converter.schemas.enable": "false",
	}
	maps.Copy(cfg, e.s3.Props(e.bucket))
	for i := 0; i+1 < len(kv); i += 2 {
		cfg[kv[i]] = kv[i+1]
	}
	return cfg
}

func createTopic(t *testing.T, addr, topic string, partitions int32) {
	t.Helper()
	adm := testkit.Admin(t, addr)
	if _, err := adm.CreateTopic(testkit.Context(t, 10*time.Second), partitions, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
}

// produce sends records synchronously.
func produce(t *testing.T, addr string, recs []*kgo.Record) {
	t.Helper()
	cl := testkit.Client(t, addr, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(5*time.Millisecond))
	if err := cl.ProduceSync(testkit.Context(t, 60*time.Second), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// envelope is a JsonConverter value with its schema: a struct of id (int64),
// name (string), amount (optional double).
func envelope(id int64, name string) []byte {
	return fmt.Appendf(nil, `{"schema":{"type":"struct","name":"order","fields":[{"field":"id","type":"int64"},{"field":"name","type":"string"},{"field":"amount","type":"double","optional":true}]},"payload":{"id":%d,"name":%q,"amount":%d.5}}`, id, name, id)
}

// keys lists the bucket's object keys under prefix, sorted.
func (e *env) keys(t testing.TB, prefix string) []string {
	t.Helper()
	var out []string
	p := s3.NewListObjectsV2Paginator(e.client, &s3.ListObjectsV2Input{Bucket: aws.String(e.bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Contents {
			out = append(out, *o.Key)
		}
	}
	slices.Sort(out)
	return out
}

func (e *env) object(t testing.TB, key string) []byte {
	t.Helper()
	out, err := e.client.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(e.bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// read decodes an object with the format named by class.
func (e *env) read(t testing.TB, key, class string, props map[string]string) []any {
	t.Helper()
	f, err := format.New(class, props)
	if err != nil {
		t.Fatal(err)
	}
	b := e.object(t, key)
	r, err := f.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	var out []any
	for {
		_, v, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("%s: record %d: %v", key, len(out), err)
		}
		out = append(out, v)
	}
}

// waitKeys waits until the keys under prefix are want (and fails early
// on a FAILED task).
func (e *env) waitKeys(t *testing.T, prefix string, want []string, wait time.Duration) {
	t.Helper()
	testkit.CheckFor(t, wait, 100*time.Millisecond, func() error {
		if err := e.worker.Failed(); err != nil {
			t.Fatal(err)
		}
		got := e.keys(t, prefix)
		if !slices.Equal(got, want) {
			return fmt.Errorf("keys:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		return nil
	})
}

// committed returns the sink group's committed offsets per partition.
func committed(t *testing.T, addr, connector, topic string) map[int32]int64 {
	t.Helper()
	adm := testkit.Admin(t, addr)
	offs, err := adm.FetchOffsets(context.Background(), "connect-"+connector)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]int64{}
	offs.Each(func(o kadm.OffsetResponse) {
		if o.Topic == topic {
			out[o.Partition] = o.At
		}
	})
	return out
}

// field reads a struct field or a map entry.
func field(t testing.TB, v any, name string) any {
	t.Helper()
	switch x := v.(type) {
	case *connect.Struct:
		f, err := x.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		return f
	case map[string]any:
		return x[name]
	}
	t.Fatalf("not a struct or map: %T %v", v, v)
	return nil
}

func asInt(t testing.TB, v any) int64 {
	t.Helper()
	switch x := v.(type) {
	case int64:
		return x
	case int32:
		return int64(x)
	case float64:
		return int64(x)
	}
	t.Fatalf("not a number: %T %v", v, v)
	return 0
}
