package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/connect/plugins"
	// Every shipped plugin registers: the drivers look converters up by
	// class as the worker does, and the fjord binary (which imports this
	// package) gets the null sink the benchmark runs.
	_ "github.com/fjordhq/fjord/connect/plugins/all"
	"github.com/fjordhq/fjord/connectors/datagen"
)

// ConnectDriverConfig is what the Connect benchmark's raw baseline
// drivers (`fjord bench connect produce|consume`) share: the records are
// datagen's, made from the same settings as the connector's, and encoded
// by the same converter classes with the same settings.
type ConnectDriverConfig struct {
	Brokers   string
	Topic     string
	Records   int // all records, warm-up included (as the connector's count)
	Warmup    int // the first Warmup records are not timed
	Converter string
	Registry  string // schema registry URL, for Avro
	Spec      string // datagen value.schema
	Seed      int64
	// Convert makes the driver do the converter's work in the timed part,
	// as an application would: produce generates and encodes each record,
	// consume decodes each key and value. Without it the producer sends
	// bytes encoded beforehand and the consumer only counts them.
	Convert bool
	// Pool is how many distinct records a producer without Convert
	// encodes beforehand; record i is pool[i % Pool], so that memory
	// stays bounded at any Records. Pool >= Records gives every record.
	Pool int
	// ExpectBytes is the key+value bytes the consumer must read in all
	// (0: not checked).
	ExpectBytes int64
	// MaxPoll > 0 makes the consumer take at most this many records per
	// poll (PollRecords, as the worker's sink loop does with
	// max.poll.records) instead of everything buffered (PollFetches).
	MaxPoll int
	Timeout time.Duration
}

func (c ConnectDriverConfig) validate() error {
	switch {
	case c.Brokers == "":
		return errors.New("--brokers is required")
	case c.Topic == "":
		return errors.New("--topic is required")
	case c.Records <= 0:
		return fmt.Errorf("--records %d: want > 0", c.Records)
	case c.Warmup < 0 || c.Warmup >= c.Records:
		return fmt.Errorf("--warmup %d: want 0 <= warmup < records (%d)", c.Warmup, c.Records)
	case c.Pool <= 0:
		return fmt.Errorf("--pool %d: want > 0", c.Pool)
	case c.Timeout <= 0:
		return fmt.Errorf("--timeout %s: want > 0", c.Timeout)
	}
	_, err := ConverterProps(c.Converter, c.Registry)
	return err
}

// ConnectResult is what one raw driver process measured, printed as one
// JSON line. The timed window's wall-clock ends let the orchestrator
// read the broker's CPU use over the same window.
type ConnectResult struct {
	Mode       string  `json:"mode"` // produce or consume
	Topic      string  `json:"topic"`
	Converter  string  `json:"converter"`
	Convert    bool    `json:"convert"`
	Records    int64   `json:"records"`     // timed records
	Bytes      int64   `json:"bytes"`       // timed key+value bytes
	TotalBytes int64   `json:"total_bytes"` // every record's key+value bytes, warm-up included
	Seconds    float64 `json:"seconds"`

	RecordsPerSec float64 `json:"records_per_sec"`
	// ClientCPUSeconds is the driver's own CPU time over the timed part.
	ClientCPUSeconds float64 `json:"client_cpu_seconds"`
	StartUnixNano    int64   `json:"start_unix_nano"`
	EndUnixNano      int64   `json:"end_unix_nano"`
}

// Converter names the benchmark knows, with the connector settings that
// select them (key and value alike).
const (
	ConvJSON = "json"
	ConvAvro = "avro"
)

// ConverterProps are the connector config entries that make key and value
// use the named converter: Kafka's JsonConverter with schemas (the
// envelope, as Kafka's sample worker config), or Confluent's
// AvroConverter against the schema registry at registry.
func ConverterProps(name, registry string) (map[string]string, error) {
	switch name {
	case ConvJSON:
		const class = "org.apache.kafka.connect.json.JsonConverter"
		return map[string]string{
			"key.converter": class, "key.converter.schemas.enable": "true",
			"value.converter": class, "value.converter.schemas.enable": "true",
		}, nil
	case ConvAvro:
		if registry == "" {
			return nil, errors.New("the Avro converter needs a schema registry URL")
		}
		const class = "io.confluent.connect.avro.AvroConverter"
		return map[string]string{
			"key.converter": class, "key.converter.schema.registry.url": registry,
			"value.converter": class, "value.converter.schema.registry.url": registry,
		}, nil
	}
	return nil, fmt.Errorf("converter %q: want %s or %s", name, ConvJSON, ConvAvro)
}

// DatagenProps are the datagen settings of n records on topic: one task,
// as fast as possible, keyed by the id field.
func DatagenProps(topic, spec string, seed int64, n int) map[string]string {
	return map[string]string{
		datagen.KafkaTopicConfig:     topic,
		datagen.ValueSchemaConfig:    spec,
		datagen.SchemaKeyfieldConfig: "id",
		datagen.SeedConfig:           strconv.FormatInt(seed, 10),
		datagen.CountConfig:          strconv.Itoa(n),
		datagen.RateConfig:           "0",
	}
}

// connConverters are a record's key and value converters.
type connConverters struct{ key, value connect.Converter }

// newConverters configures converters from connector-style props, as the
// worker does: the class under key.converter, its settings under the
// key.converter. prefix.
func newConverters(props map[string]string) (connConverters, error) {
	var out connConverters
	for _, side := range []struct {
		prefix string
		dst    *connect.Converter
		isKey  bool
	}{{"key.converter", &out.key, true}, {"value.converter", &out.value, false}} {
		p, err := plugins.LookupKind(props[side.prefix], plugins.Converter)
		if err != nil {
			return out, err
		}
		c, ok := p.New().(connect.Converter)
		if !ok {
			return out, fmt.Errorf("%s is not a converter", p.Class)
		}
		if err := c.Configure(connect.WithPrefix(props, side.prefix+"."), side.isKey); err != nil {
			return out, fmt.Errorf("configure %s: %w", p.Class, err)
		}
		*side.dst = c
	}
	return out, nil
}

// generator hands out the connector's records in order, from a datagen
// task run outside the runtime.
type generator struct {
	task *datagen.Task
	buf  []*connect.SourceRecord
	left int
}

func newGenerator(ctx context.Context, c ConnectDriverConfig, n int) (*generator, error) {
	t := &datagen.Task{}
	if err := t.Start(ctx, DatagenProps(c.Topic, c.Spec, c.Seed, n)); err != nil {
		return nil, fmt.Errorf("datagen: %w", err)
	}
	return &generator{task: t, left: n}, nil
}

func (g *generator) next(ctx context.Context) (*connect.SourceRecord, error) {
	for len(g.buf) == 0 {
		if g.left == 0 {
			return nil, errors.New("datagen: no records left")
		}
		recs, err := g.task.Poll(ctx)
		if err != nil {
			return nil, fmt.Errorf("datagen poll: %w", err)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		g.buf = recs
	}
	r := g.buf[0]
	g.buf = g.buf[1:]
	g.left--
	return r, nil
}

func (cv connConverters) encode(topic string, r *connect.SourceRecord) (k, v []byte, err error) {
	if k, err = cv.key.FromConnectData(topic, &r.Headers, r.KeySchema, r.Key); err != nil {
		return nil, nil, fmt.Errorf("encode key: %w", err)
	}
	if v, err = cv.value.FromConnectData(topic, &r.Headers, r.ValueSchema, r.Value); err != nil {
		return nil, nil, fmt.Errorf("encode value: %w", err)
	}
	return k, v, nil
}

// connectProducer is the producer configuration of a Connect source
// task, which Fjord's worker takes from Kafka's producer defaults: acks=all,
// no compression, linger 5 ms; everything else is franz-go's default.
func connectProducerOpts(c ConnectDriverConfig) []kgo.Opt {
	return []kgo.Opt{
		kgo.SeedBrokers(c.Brokers), kgo.DefaultProduceTopic(c.Topic),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.ProducerLinger(5 * time.Millisecond),
	}
}

// RunConnectProduce produces the connector's records with a plain
// franz-go producer: the first Warmup untimed, then the rest timed until
// every one is acknowledged.
func RunConnectProduce(ctx context.Context, c ConnectDriverConfig) (ConnectResult, error) {
	if err := c.validate(); err != nil {
		return ConnectResult{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	props, _ := ConverterProps(c.Converter, c.Registry)
	conv, err := newConverters(props)
	if err != nil {
		return ConnectResult{}, err
	}
	gen, err := newGenerator(ctx, c, c.Records)
	if err != nil {
		return ConnectResult{}, err
	}
	var pool [][2][]byte
	if !c.Convert {
		// Encoded beforehand: the timed part moves bytes only.
		pool = make([][2][]byte, min(c.Pool, c.Records))
		for i := range pool {
			r, err := gen.next(ctx)
			if err != nil {
				return ConnectResult{}, err
			}
			if pool[i][0], pool[i][1], err = conv.encode(c.Topic, r); err != nil {
				return ConnectResult{}, err
			}
		}
	}
	cl, err := kgo.NewClient(connectProducerOpts(c)...)
	if err != nil {
		return ConnectResult{}, fmt.Errorf("new client: %w", err)
	}
	defer cl.Close()

	var counter produceCounter
	var total, timedBytes int64
	// produce sends records [from, to) and waits for every acknowledgement.
	produce := func(from, to int) error {
		const slab = 4096
		var recs []kgo.Record
		for i := from; i < to; i++ {
			if len(recs) == 0 {
				recs = make([]kgo.Record, min(slab, to-i))
			}
			kr := &recs[0]
			recs = recs[1:]
			if c.Convert {
				r, err := gen.next(ctx)
				if err != nil {
					return err
				}
				if kr.Key, kr.Value, err = conv.encode(c.Topic, r); err != nil {
					return err
				}
			} else {
				p := &pool[i%len(pool)]
				kr.Key, kr.Value = p[0], p[1]
			}
			n := int64(len(kr.Key) + len(kr.Value))
			total += n
			if i >= c.Warmup {
				timedBytes += n
			}
			cl.Produce(ctx, kr, counter.promise)
		}
		if err := cl.Flush(ctx); err != nil {
			return fmt.Errorf("produce to %s: flush: %w", c.Brokers, err)
		}
		return counter.err()
	}
	// The warm-up is acknowledged before the clock starts, as the broker
	// benchmark's producer does: the timed part starts with the client
	// connected and its buffers grown, and ends with the last ack.
	if err := produce(0, c.Warmup); err != nil {
		return ConnectResult{}, fmt.Errorf("warm-up: %w", err)
	}
	start, cpu0 := time.Now(), selfCPU()
	if err := produce(c.Warmup, c.Records); err != nil {
		return ConnectResult{}, err
	}
	end, cpu1 := time.Now(), selfCPU()
	if got := counter.acked.Load(); got != int64(c.Records) {
		return ConnectResult{}, fmt.Errorf("produce: %d of %d records acknowledged", got, c.Records)
	}
	return connectResult("produce", c, int64(c.Records-c.Warmup), timedBytes, total, start, end, cpu1-cpu0), nil
}

func connectResult(mode string, c ConnectDriverConfig, n, timedBytes, total int64, from, end time.Time, cpu time.Duration) ConnectResult {
	s := max(end.Sub(from).Seconds(), 1e-9)
	return ConnectResult{
		Mode: mode, Topic: c.Topic, Converter: c.Converter, Convert: c.Convert,
		Records: n, Bytes: timedBytes, TotalBytes: total, Seconds: s,
		RecordsPerSec:    float64(n) / s,
		ClientCPUSeconds: cpu.Seconds(),
		StartUnixNano:    from.UnixNano(), EndUnixNano: end.UnixNano(),
	}
}

// RunConnectConsume reads the topic from the beginning with a plain
// franz-go consumer (no group) until it has all Records records,
// decoding each key and value with the converter when Convert is set.
// The clock starts after the poll that brought the Warmup'th record.
func RunConnectConsume(ctx context.Context, c ConnectDriverConfig) (ConnectResult, error) {
	if err := c.validate(); err != nil {
		return ConnectResult{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	var conv connConverters
	if c.Convert {
		props, _ := ConverterProps(c.Converter, c.Registry)
		var err error
		if conv, err = newConverters(props); err != nil {
			return ConnectResult{}, err
		}
	}
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(c.Brokers),
		kgo.ConsumeTopics(c.Topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	)
	if err != nil {
		return ConnectResult{}, fmt.Errorf("new client: %w", err)
	}
	defer cl.Close()

	want := int64(c.Records)
	var (
		seen, total, timedFrom, bytesFrom int64
		start                             time.Time
		cpu0                              time.Duration
		convErr                           error
	)
	if c.Warmup == 0 {
		start, cpu0 = time.Now(), selfCPU()
	}
	var hdrs connect.Headers
	for seen < want {
		var fs kgo.Fetches
		if c.MaxPoll > 0 {
			fs = cl.PollRecords(ctx, c.MaxPoll)
		} else {
			fs = cl.PollFetches(ctx)
		}
		if err := ctx.Err(); err != nil {
			return ConnectResult{}, fmt.Errorf("consume %s from %s: %d of %d records after %s: %w", c.Topic, c.Brokers, seen, want, c.Timeout, err)
		}
		var fetchErr error
		fs.EachError(func(t string, p int32, err error) {
			fetchErr = errors.Join(fetchErr, fmt.Errorf("%s[%d]: %w", t, p, err))
		})
		if fetchErr != nil {
			return ConnectResult{}, fmt.Errorf("consume from %s: %w", c.Brokers, fetchErr)
		}
		fs.EachRecord(func(r *kgo.Record) {
			seen++
			total += int64(len(r.Key) + len(r.Value))
			if c.Convert && convErr == nil {
				hdrs = hdrs[:0]
				if _, _, err := conv.key.ToConnectData(r.Topic, &hdrs, r.Key); err != nil {
					convErr = fmt.Errorf("decode key at %s[%d]@%d: %w", r.Topic, r.Partition, r.Offset, err)
				}
				if _, _, err := conv.value.ToConnectData(r.Topic, &hdrs, r.Value); err != nil && convErr == nil {
					convErr = fmt.Errorf("decode value at %s[%d]@%d: %w", r.Topic, r.Partition, r.Offset, err)
				}
			}
		})
		if convErr != nil {
			return ConnectResult{}, convErr
		}
		if start.IsZero() && seen >= int64(c.Warmup) {
			start, cpu0, timedFrom, bytesFrom = time.Now(), selfCPU(), seen, total
		}
	}
	end, cpu1 := time.Now(), selfCPU()
	switch {
	case seen != want:
		return ConnectResult{}, fmt.Errorf("consume: read %d records, the topic should hold %d", seen, want)
	case c.ExpectBytes > 0 && total != c.ExpectBytes:
		return ConnectResult{}, fmt.Errorf("consume: read %d key+value bytes, the producer wrote %d", total, c.ExpectBytes)
	case seen == timedFrom:
		return ConnectResult{}, fmt.Errorf("consume: all %d records arrived with the warm-up fetches; use more records", seen)
	}
	return connectResult("consume", c, seen-timedFrom, total-bytesFrom, total, start, end, cpu1-cpu0), nil
}
