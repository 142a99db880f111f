package sink

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fjordhq/fjord/connect"
	jsonconv "github.com/fjordhq/fjord/converters/json"

	"github.com/fjordhq/fjord/internal/bench/s3records"
)

// discardS3 is the least an S3 endpoint must answer for a sink task: the
// recovery listings (empty) and PUTs, whose bodies it reads and drops.
// The benchmark's profile then shows the sink's costs, not a fake
// store's.
func discardS3(tb testing.TB) (url string, objects, bytes *atomic.Int64) {
	objects, bytes = new(atomic.Int64), new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		switch {
		case r.Method == http.MethodPut:
			n, _ := io.Copy(io.Discard, r.Body)
			objects.Add(1)
			bytes.Add(n)
			w.Header().Set("ETag", `"0"`)
		case r.Method == http.MethodGet && q.Has("uploads"):
			w.Header().Set("Content-Type", "application/xml")
			io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><ListMultipartUploadsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><IsTruncated>false</IsTruncated></ListMultipartUploadsResult>`)
		case r.Method == http.MethodGet:
			w.Header().Set("Content-Type", "application/xml")
			io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><IsTruncated>false</IsTruncated><KeyCount>0</KeyCount></ListBucketResult>`)
		default:
			http.Error(w, "not in the benchmark's fake", http.StatusNotImplemented)
		}
	}))
	tb.Cleanup(srv.Close)
	return srv.URL, objects, bytes
}

// BenchmarkPutJSONEnvelopes drives one sink task's Put path as the
// Connect runtime does for `fjord bench s3`'s JSON phase: envelope bytes
// through the JsonConverter (schemas.enable=true), Put in batches of
// max.poll.records (500), JsonFormat files of flush.size 50,000 records
// uploaded (one PutObject each: below s3.part.size) to a loopback
// endpoint that drops the bytes. "sink" leaves the converter out (the
// records are converted before the timer starts). Per op: one record.
//
//	go test -run '^$' -bench PutJSONEnvelopes -benchtime 200000x -cpuprofile cpu.out ./connectors/s3/sink/
func BenchmarkPutJSONEnvelopes(b *testing.B) {
	const records, batch, flush = 50_000, 500, 50_000
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.DiscardHandler))
	values := make([][]byte, records)
	for i := range values {
		values[i] = s3records.Envelope(int64(i+1), nil) // fjord bench s3's records
	}
	conv := jsonconv.New()
	if err := conv.Configure(map[string]string{jsonconv.SchemasEnableConfig: "true"}, false); err != nil {
		b.Fatal(err)
	}
	convert := func(b *testing.B, off int64, out *connect.SinkRecord) {
		s, v, err := conv.ToConnectData("orders", nil, values[off%records])
		if err != nil {
			b.Fatal(err)
		}
		*out = connect.SinkRecord{Topic: "orders", Partition: 0, Offset: off, Timestamp: 1767225600000 + off,
			Key: strconv.FormatInt(off, 10), KeySchema: connect.OptionalStringSchema, ValueSchema: s, Value: v}
	}
	for _, withConverter := range []bool{true, false} {
		name := "sink"
		if withConverter {
			name = "converter+sink"
		}
		b.Run(name, func(b *testing.B) {
			url, objects, uploaded := discardS3(b)
			props := map[string]string{"name": "bench", "topics": "orders", "flush.size": strconv.Itoa(flush),
				"format.class": "JsonFormat", "s3.bucket.name": "bench", "s3.region": "us-east-1", "store.url": url,
				"s3.path.style.access.enabled": "true", "aws.access.key.id": "bench", "aws.secret.access.key": "bench-secret"}
			task := &Task{}
			task.Initialize(&fakeContext{props: props})
			ctx := context.Background()
			if err := task.Start(ctx, props); err != nil {
				b.Fatal(err)
			}
			defer task.Stop()
			tp := connect.TopicPartition{Topic: "orders", Partition: 0}
			if err := task.Open([]connect.TopicPartition{tp}); err != nil {
				b.Fatal(err)
			}
			recs := make([]connect.SinkRecord, batch)
			ptrs := make([]*connect.SinkRecord, batch)
			for i := range ptrs {
				ptrs[i] = &recs[i]
			}
			// "sink": every record converted once, before the timer.
			var pre []connect.SinkRecord
			if !withConverter {
				pre = make([]connect.SinkRecord, records)
				for i := range pre {
					convert(b, int64(i), &pre[i])
				}
			}
			b.ReportAllocs()
			cpu0 := processCPU(b)
			b.ResetTimer()
			var off int64
			for off < int64(b.N) {
				n := min(int64(batch), int64(b.N)-off)
				for i := range n {
					if withConverter {
						convert(b, off+i, &recs[i])
					} else {
						recs[i] = pre[(off+i)%records]
						recs[i].Offset = off + i
					}
				}
				if err := task.Put(ctx, ptrs[:n]); err != nil {
					b.Fatal(err)
				}
				off += n
			}
			// The files still open are left out: the benchmark times
			// complete files in the bucket, as `fjord bench s3` does.
			want := off / flush * flush
			deadline := time.Now().Add(time.Minute)
			for {
				got, err := task.PreCommit(ctx, nil)
				if err != nil {
					b.Fatal(err)
				}
				if got[tp] >= want {
					break
				}
				if time.Now().After(deadline) {
					b.Fatalf("uploads did not finish: durable %v, want %d", got, want)
				}
				time.Sleep(time.Millisecond)
			}
			b.StopTimer()
			// CPU time of the whole process (the uploads and the
			// endpoint included) is steadier than ns/op on a shared
			// machine.
			b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/record")
			if objects.Load() != want/flush {
				b.Fatalf("%d objects uploaded, want %d", objects.Load(), want/flush)
			}
			if want > 0 {
				b.ReportMetric(float64(uploaded.Load())/float64(want), "B/record")
			}
		})
	}
}

// processCPU is the process's user and system CPU time so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
