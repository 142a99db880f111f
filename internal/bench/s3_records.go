package bench

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The S3 benchmark's records: an order event of ten fields (ids, strings,
// a double, a Timestamp), written as JsonConverter's envelope with its
// schema, as a Connect source with the worker's default converter would
// have written it. The payload alone is about 280 bytes (what JsonFormat
// writes per line); the envelope about 1 KB.
const s3ValueSchema = `{"type":"struct","fields":[` +
	`{"type":"int64","optional":false,"field":"id"},` +
	`{"type":"string","optional":false,"field":"order_id"},` +
	`{"type":"int64","optional":false,"field":"customer_id"},` +
	`{"type":"string","optional":false,"field":"customer"},` +
	`{"type":"string","optional":false,"field":"email"},` +
	`{"type":"double","optional":false,"field":"amount"},` +
	`{"type":"string","optional":false,"field":"currency"},` +
	`{"type":"string","optional":false,"field":"status"},` +
	`{"type":"int64","optional":false,"name":"org.apache.kafka.connect.data.Timestamp","version":1,"field":"created_at"},` +
	`{"type":"string","optional":true,"field":"note"}` +
	`],"optional":false,"name":"bench.s3.Order"}`

// s3Fields are the value's field names, in schema order.
var s3Fields = []string{"id", "order_id", "customer_id", "customer", "email", "amount", "currency", "status", "created_at", "note"}

var (
	s3Currencies = []string{"EUR", "USD", "GBP", "NOK", "SEK"}
	s3Statuses   = []string{"created", "paid", "packed", "shipped", "delivered", "returned"}
	s3Words      = []string{"express", "gift", "wrap", "leave", "at", "door", "fragile", "handle", "with", "care",
		"call", "before", "delivery", "second", "floor", "back", "entrance", "no", "weekend", "please",
		"invoice", "attached", "customer", "requested", "split", "shipment", "priority", "standard", "reorder", "of", "last", "month"}
)

// s3CreatedBase is the first record's created_at: 2026-01-01T00:00:00Z.
const s3CreatedBase = 1767225600000

// mix64 is splitmix64's finaliser: record i's pseudo-random bits, the
// same in every run.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// appendS3Payload appends record i's payload (the value without its
// schema) as JSON. The strings need no escaping: they are plain ASCII.
func appendS3Payload(b []byte, i int64) []byte {
	h := mix64(uint64(i))
	cust := int64(h%100_000) + 1
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, i, 10)
	b = append(b, `,"order_id":"ord-`...)
	b = appendPadded(b, int64(mix64(h)%10_000_000_000), 10)
	b = append(b, `","customer_id":`...)
	b = strconv.AppendInt(b, cust, 10)
	b = append(b, `,"customer":"customer-`...)
	b = strconv.AppendInt(b, cust, 10)
	b = append(b, `","email":"user`...)
	b = strconv.AppendInt(b, cust, 10)
	b = append(b, `@example.com","amount":`...)
	b = strconv.AppendFloat(b, float64((h>>17)%1_000_000)/100, 'g', -1, 64)
	b = append(b, `,"currency":"`...)
	b = append(b, s3Currencies[(h>>37)%uint64(len(s3Currencies))]...)
	b = append(b, `","status":"`...)
	b = append(b, s3Statuses[(h>>41)%uint64(len(s3Statuses))]...)
	b = append(b, `","created_at":`...)
	b = strconv.AppendInt(b, s3CreatedBase+i*37, 10)
	b = append(b, `,"note":"`...)
	w := mix64(h ^ 0x5bd1e995)
	n := 8 + int(w%6) // 8–13 words
	for j := range n {
		if j > 0 {
			b = append(b, ' ')
		}
		w = mix64(w)
		b = append(b, s3Words[w%uint64(len(s3Words))]...)
	}
	return append(b, `"}`...)
}

func appendPadded(b []byte, v int64, width int) []byte {
	s := strconv.FormatInt(v, 10)
	for range width - len(s) {
		b = append(b, '0')
	}
	return append(b, s...)
}

// s3Record is record i (1-based): key the id as a string
// (StringConverter), value the JsonConverter envelope.
func s3Record(i int64, buf []byte) (key, value []byte) {
	key = strconv.AppendInt(nil, i, 10)
	value = append(buf[:0], `{"schema":`...)
	value = append(value, s3ValueSchema...)
	value = append(value, `,"payload":`...)
	value = appendS3Payload(value, i)
	return key, append(value, '}')
}

// s3PartitionRecords is how many of n records go to each of p
// partitions: record i (1-based) to partition (i-1) mod p.
func s3PartitionRecords(n, p int) []int64 {
	out := make([]int64, p)
	for q := range p {
		out[q] = int64(n / p)
		if q < n%p {
			out[q]++
		}
	}
	return out
}

// createS3Topic creates the topic with p partitions and waits until each
// has a leader.
func createS3Topic(ctx context.Context, adm *kadm.Client, topic string, p int) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	resp, err := adm.CreateTopic(ctx, int32(p), 1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	for {
		md, err := adm.Metadata(ctx, topic)
		if err == nil {
			td := md.Topics[topic]
			switch {
			case td.Err != nil:
				err = td.Err
			case len(td.Partitions) != p:
				err = fmt.Errorf("%d partitions, want %d", len(td.Partitions), p)
			default:
				for _, pd := range td.Partitions {
					if pd.Err != nil || pd.Leader < 0 {
						err = fmt.Errorf("partition %d has no leader yet", pd.Partition)
					}
				}
			}
		}
		if err == nil {
			return nil
		}
		if !sleepCtx(ctx, 50*time.Millisecond) { // polling metadata
			return fmt.Errorf("topic %s not ready: %w", topic, err)
		}
	}
}

// produceS3Records writes records 1..n to topic, record i to partition
// (i-1) mod p, and waits for every ack. Batched and snappy-compressed
// (the envelope's schema repeats in every record), as a Connect worker's
// producer with compression.type=snappy would write them.
func produceS3Records(ctx context.Context, addr, topic string, n, p int, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(10*time.Millisecond), kgo.ProducerBatchMaxBytes(1<<20),
		kgo.ProducerBatchCompression(kgo.SnappyCompression()), kgo.MaxBufferedRecords(100_000))
	if err != nil {
		return err
	}
	defer cl.Close()
	var pc produceCounter
	for i := int64(1); i <= int64(n); i++ {
		k, v := s3Record(i, make([]byte, 0, 1100))
		cl.Produce(ctx, &kgo.Record{Key: k, Value: v, Partition: int32((i - 1) % int64(p))}, pc.promise)
	}
	if err := cl.Flush(ctx); err != nil {
		return fmt.Errorf("produce the records: %w", err)
	}
	if err := pc.err(); err != nil {
		return fmt.Errorf("produce the records: %w", err)
	}
	return nil
}
