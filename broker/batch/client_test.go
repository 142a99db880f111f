package batch

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// newCluster starts a one-broker kfake cluster on loopback with topic t
// (one partition).
func newCluster(t *testing.T, topic string) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, topic), kfake.Ports(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// TestFranzGoProduced checks batches written by franz-go's producer, for
// every codec, captured from the produce requests kfake receives.
func TestFranzGoProduced(t *testing.T) {
	kcodecs := map[Codec]kgo.CompressionCodec{CodecNone: kgo.NoCompression(), CodecGzip: kgo.GzipCompression(),
		CodecSnappy: kgo.SnappyCompression(), CodecLZ4: kgo.Lz4Compression(), CodecZstd: kgo.ZstdCompression()}
	for _, codec := range codecs {
		t.Run(codec.String(), func(t *testing.T) {
			c := newCluster(t, "kgo")
			var mu sync.Mutex
			var captured [][]byte
			c.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
				c.KeepControl()
				mu.Lock()
				defer mu.Unlock()
				for _, tp := range req.(*kmsg.ProduceRequest).Topics {
					for _, p := range tp.Partitions {
						captured = append(captured, bytes.Clone(p.Records))
					}
				}
				return nil, nil, false
			})
			cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ProducerBatchCompression(kcodecs[codec]),
				kgo.ProducerLinger(50*time.Millisecond), kgo.DefaultProduceTopic("kgo"))
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			want := goldenRecords()
			for i, r := range want {
				rec := &kgo.Record{Key: []byte(r.key), Value: []byte(r.value),
					Headers: []kgo.RecordHeader{{Key: "i", Value: fmt.Appendf(nil, "%d", i)}}}
				cl.Produce(ctx, rec, func(_ *kgo.Record, err error) {
					if err != nil {
						t.Errorf("produce: %v", err)
					}
				})
			}
			if err := cl.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			var d Decoder
			next := 0
			for _, raw := range captured {
				for rest := raw; len(rest) > 0; {
					b, r, err := Next(rest)
					if err != nil {
						t.Fatal(err)
					}
					rest = r
					if err := b.Validate(); err != nil {
						t.Fatal(err)
					}
					if b.Codec() != codec || !b.Idempotent() || int(b.BaseSequence()) != next {
						t.Fatalf("%s: codec %s, producer %d seq %d (want %d)", b, b.Codec(), b.ProducerID(), b.BaseSequence(), next)
					}
					if s, err := d.Check(b); err != nil || !s.Contiguous {
						t.Fatalf("check %s: %+v, %v", b, s, err)
					}
					err = d.Records(b, func(r *Record) error {
						w := want[next]
						if string(r.Key) != w.key || string(r.Value) != w.value || len(r.Headers) != 1 ||
							string(r.Headers[0].Value) != fmt.Sprint(next) {
							return fmt.Errorf("record %d: %q=%q %q", next, r.Key, r.Value, r.Headers)
						}
						next++
						return nil
					})
					if err != nil {
						t.Fatal(err)
					}
					checkRecompressions(t, b)
				}
			}
			if next != len(want) {
				t.Fatalf("%d records in %d produce requests, want %d", next, len(captured), len(want))
			}
		})
	}
}

// sentRecord is one record produceOurBatches sent.
type sentRecord struct{ key, value, header string }

// produceOurBatches builds a batch of every codec (uncompressed, then
// recompressed, so both paths are exercised) and produces each as raw
// bytes to partition 0 of topic "ours" on c. It returns what was sent.
func produceOurBatches(ctx context.Context, t *testing.T, c *kfake.Cluster) []sentRecord {
	t.Helper()
	// Produce v13 names topics by ID; v12 by name is simpler for raw
	// requests.
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.MaxVersions(kversion.V3_9_0()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var want []sentRecord
	offset := int64(0)
	for round, codec := range codecs {
		var recs []Record
		for i := range 120 {
			k := fmt.Sprintf("%s-%03d", codec, i)
			v := strings.Repeat(fmt.Sprintf("value %d of batch %d; ", i, round), 1+i%30)
			recs = append(recs, Record{Offset: int64(i), Timestamp: time.Now().UnixMilli(), Key: []byte(k), Value: []byte(v),
				Headers: []Header{{Key: []byte("codec"), Value: []byte(codec.String())}}})
			want = append(want, sentRecord{k, v, codec.String()})
		}
		raw, err := Build(nil, BuildHeader{PartitionLeaderEpoch: -1}, recs, CodecNone)
		if err != nil {
			t.Fatal(err)
		}
		if raw, err = Recompress(nil, raw, codec); err != nil {
			t.Fatal(err)
		}
		req := kmsg.NewPtrProduceRequest()
		req.Acks, req.TimeoutMillis = -1, 5000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "ours"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = raw
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		p := resp.Topics[0].Partitions[0]
		if p.ErrorCode != 0 || p.BaseOffset != offset {
			t.Fatalf("%s: produce error %d at %d", codec, p.ErrorCode, p.BaseOffset)
		}
		offset += int64(len(recs))
	}
	return want
}

// TestClientsReadOurBatches reads batches we built, of every codec, with
// franz-go's consumer and with librdkafka (kcat): decoders we did not
// write. For snappy this shows librdkafka reads our xerial framing.
func TestClientsReadOurBatches(t *testing.T) {
	c := newCluster(t, "ours")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	want := produceOurBatches(ctx, t, c)

	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"ours": {0: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var got []sentRecord
	checkFor(t, 30*time.Second, 10*time.Millisecond, func() error {
		fs := cl.PollFetches(ctx)
		if errs := fs.Errors(); len(errs) > 0 {
			return fmt.Errorf("fetch: %v", errs)
		}
		fs.EachRecord(func(r *kgo.Record) {
			got = append(got, sentRecord{string(r.Key), string(r.Value), string(r.Headers[0].Value)})
		})
		if len(got) < len(want) {
			return fmt.Errorf("franz-go consumed %d of %d", len(got), len(want))
		}
		return nil
	})
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("franz-go record %d: %q, want %q", i, got[i], want[i])
		}
	}

	// kcat prints key, value and headers per record; values have no
	// newlines or tabs.
	cmd := exec.CommandContext(ctx, "kcat", "-C", "-b", c.ListenAddrs()[0], "-t", "ours", "-p", "0",
		"-o", "beginning", "-e", "-q", "-f", "%k\t%s\t%h\n")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kcat: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("kcat read %d records, want %d\n%s", len(lines), len(want), out)
	}
	for i, line := range lines {
		w := want[i]
		if line != w.key+"\t"+w.value+"\tcodec="+w.header {
			t.Fatalf("kcat record %d: %q", i, line)
		}
	}
}
