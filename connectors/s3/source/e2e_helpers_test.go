package source_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connectors/s3/format"
	"github.com/fjordhq/fjord/connectors/s3/partitioner"
	_ "github.com/fjordhq/fjord/connectors/s3/sink"
	_ "github.com/fjordhq/fjord/connectors/s3/source"
	"github.com/fjordhq/fjord/connectors/s3/storage"
	_ "github.com/fjordhq/fjord/converters/all"
	"github.com/fjordhq/fjord/internal/testkit"
	_ "github.com/fjordhq/fjord/transforms"
)

const (
	jsonFormat = "io.confluent.connect.s3.format.json.JsonFormat"
	avroFormat = "io.confluent.connect.s3.format.avro.AvroFormat"
)

// backup writes objects into a bucket as the S3 sink lays them out.
type backup struct {
	t      *testing.T
	props  map[string]string // the sink-side config: storage, format, partitioner keys
	store  *storage.Store
	layout partitioner.Layout
	value  format.Format
	keys   format.Format // nil: no .keys files
	hdrs   format.Format // nil: no .headers files
}

var valueSchema = connect.NewStruct().Name("restore.Row").
	Field("id", connect.Int64Schema).
	Field("name", connect.StringSchema).Build()

func newBackup(t *testing.T, props map[string]string, sideFiles bool) *backup {
	t.Helper()
	cfg, err := storage.ConfigFrom(props)
	if err != nil {
		t.Fatal(err)
	}
	st, err := storage.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	b := &backup{t: t, props: props, store: st, layout: partitioner.LayoutFrom(props)}
	if b.value, err = format.New(props["format.class"], props); err != nil {
		t.Fatal(err)
	}
	if sideFiles {
		k, err := format.New(props["keys.format.class"], props)
		if err != nil {
			t.Fatal(err)
		}
		b.keys = format.KeysFormat(k)
		if b.hdrs, err = format.New(props["headers.format.class"], props); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// row is record id of a partition: its key, value and headers.
func row(p int32, id int64) (key string, value *connect.Struct, headers connect.Headers) {
	v := connect.NewStructValue(valueSchema).MustPut("id", id).MustPut("name", fmt.Sprintf("p%d-row-%d", p, id))
	h := connect.Headers{{Key: "origin", Schema: connect.StringSchema, Value: fmt.Sprintf("p%d", p)},
		{Key: "n", Schema: connect.StringSchema, Value: strconv.FormatInt(id, 10)}}
	return fmt.Sprintf("k-%d-%d", p, id), v, h
}

// write stores records [start, start+n) of topic's partition p as one
// object in directory encoded, with its side files.
func (b *backup) write(topic, encoded string, p int32, start int64, n int) {
	b.t.Helper()
	var vb, kb, hb bytes.Buffer
	vw := b.writer(b.value, &vb)
	var kw, hw format.RecordWriter
	if b.keys != nil {
		kw, hw = b.writer(b.keys, &kb), b.writer(b.hdrs, &hb)
	}
	for id := start; id < start+int64(n); id++ {
		k, v, h := row(p, id)
		b.must(vw.Write(valueSchema, v))
		if kw != nil {
			b.must(kw.Write(connect.StringSchema, k))
			hs, hv := format.HeadersView(h)
			b.must(hw.Write(hs, hv))
		}
	}
	key := b.layout.Key(topic, encoded, p, start, b.value.Extension())
	b.put(key, vw, &vb)
	if kw != nil {
		base := key[:len(key)-len(b.value.Extension())]
		b.put(base+format.KeysExtension(b.keys), kw, &kb)
		b.put(base+format.HeadersExtension(b.hdrs), hw, &hb)
	}
}

func (b *backup) writer(f format.Format, buf *bytes.Buffer) format.RecordWriter {
	b.t.Helper()
	w, err := f.NewWriter(buf)
	b.must(err)
	return w
}

func (b *backup) put(key string, w format.RecordWriter, buf *bytes.Buffer) {
	b.t.Helper()
	b.must(w.Close())
	b.must(b.store.Put(context.Background(), key, bytes.NewReader(buf.Bytes()), int64(buf.Len()), nil))
}

func (b *backup) must(err error) {
	b.t.Helper()
	if err != nil {
		b.t.Fatal(err)
	}
}

// restored is one consumed record.
type restored struct {
	id      int64
	key     string
	headers map[string]string
}

// consume reads n records of topic (all partitions) and returns them by
// partition, in offset order.
func consume(t *testing.T, addr, topic string, n int) map[int32][]restored {
	t.Helper()
	ctx := testkit.Context(t, 90*time.Second)
	cl := testkit.Client(t, addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	out := map[int32][]restored{}
	got := 0
	for got < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d records of %s, want %d", got, topic, n)
		}
		fs.EachRecord(func(r *kgo.Record) {
			var v struct {
				ID   int64  `json:"id"`
				Name string `json:"name"`
			}
			if err := json.Unmarshal(r.Value, &v); err != nil {
				t.Fatalf("value %q: %v", r.Value, err)
			}
			if want := fmt.Sprintf("p%d-row-%d", r.Partition, v.ID); v.Name != want {
				t.Fatalf("partition %d offset %d: name %q, want %q (wrong partition?)", r.Partition, r.Offset, v.Name, want)
			}
			h := map[string]string{}
			for _, x := range r.Headers {
				h[x.Key] = string(x.Value)
			}
			out[r.Partition] = append(out[r.Partition], restored{id: v.ID, key: string(r.Key), headers: h})
			got++
		})
	}
	return out
}

// total returns how many records topic holds.
func total(t *testing.T, addr, topic string) int64 {
	t.Helper()
	ends, err := testkit.Admin(t, addr).ListEndOffsets(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
	return n
}

func createTopic(t *testing.T, addr, topic string, partitions int32) {
	t.Helper()
	if _, err := testkit.Admin(t, addr).CreateTopics(testkit.Context(t, 30*time.Second), partitions, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
}

// sourceConfig is the connector config on top of the sink-side props.
func sourceConfig(name string, sinkProps map[string]string, extra ...string) map[string]string {
	cfg := map[string]string{
		"name": name, "connector.class": "s3-source", "tasks.max": "2",
		"s3.poll.interval.ms": "200", "record.batch.max.size": "17",
		// The backups are written before the restore starts: no object
		// needs to settle (the round trip with a live sink sets it).
		"object.min.age.ms": "0",
		"key.converter":     "org.apache.kafka.connect.storage.StringConverter",
		"value.converter":   "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false",
	}
	for k, v := range sinkProps {
		cfg[k] = v
	}
	for i := 0; i+1 < len(extra); i += 2 {
		cfg[extra[i]] = extra[i+1]
	}
	return cfg
}
