package broker_test

import (
	"context"
	"crypto/rand"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkListenerThroughput compares produce and consume throughput
// over PLAINTEXT, SSL (TLS 1.3, no sendfile: records are copied through
// the TLS writer) and SASL_SSL with SCRAM-SHA-256, with franz-go over
// loopback: 1 KiB random records, uncompressed, one partition.
func BenchmarkListenerThroughput(b *testing.B) {
	pki := newTestPKI(b)
	cases := listenerCases()
	for _, lc := range []listenerCase{cases[0], cases[1], cases[4]} {
		b.Run(lc.name, func(b *testing.B) {
			s := startSecureBroker(b, lc.props(pki), newMemScram(b, testUsers))
			addr := s.Addr().String()
			opts := lc.franzOpts(b, pki, "alice", "alice-secret")
			// Random bytes, uncompressed: franz-go compresses with snappy
			// by default, which would hide the bytes TLS has to encrypt.
			value := make([]byte, 1024)
			rand.Read(value)
			opts = append(opts, kgo.ProducerBatchCompression(kgo.NoCompression()))
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			admin, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
			if err != nil {
				b.Fatal(err)
			}
			defer admin.Close()
			b.Run("produce", func(b *testing.B) {
				topic := "bench-produce-" + time.Now().Format("150405.000000")
				if _, err := kadm.NewClient(admin).CreateTopic(ctx, 1, 1, nil, topic); err != nil {
					b.Fatal(err)
				}
				cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.ProducerLinger(time.Millisecond)}, opts...)...)
				if err != nil {
					b.Fatal(err)
				}
				defer cl.Close()
				b.SetBytes(int64(len(value)))
				b.ResetTimer()
				for range b.N {
					cl.Produce(ctx, &kgo.Record{Topic: topic, Value: value}, func(_ *kgo.Record, err error) {
						if err != nil {
							b.Error(err)
						}
					})
				}
				if err := cl.Flush(ctx); err != nil {
					b.Fatal(err)
				}
			})
			b.Run("consume", func(b *testing.B) {
				topic := "bench-consume-" + time.Now().Format("150405.000000")
				if _, err := kadm.NewClient(admin).CreateTopic(ctx, 1, 1, nil, topic); err != nil {
					b.Fatal(err)
				}
				for range b.N {
					admin.Produce(ctx, &kgo.Record{Topic: topic, Value: value}, nil)
				}
				if err := admin.Flush(ctx); err != nil {
					b.Fatal(err)
				}
				cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
					kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, opts...)...)
				if err != nil {
					b.Fatal(err)
				}
				defer cl.Close()
				b.SetBytes(int64(len(value)))
				b.ResetTimer()
				for got := 0; got < b.N; {
					fs := cl.PollFetches(ctx)
					if err := fs.Err0(); err != nil {
						b.Fatal(err)
					}
					got += fs.NumRecords()
				}
			})
		})
	}
}
