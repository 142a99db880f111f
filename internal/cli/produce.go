package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ProduceOptions are the flags of `fjord produce`, named after
// kafka-console-producer.sh's properties.
type ProduceOptions struct {
	Topic string
	// KeySeparator, when set, splits each line into key and value at its
	// first occurrence (parse.key + key.separator); a line without it is an
	// error, as in Kafka.
	KeySeparator string
	// Headers are "k=v,k2=v2" lists added to every record; a backslash
	// escapes ',' '=' or '\'. A header without '=' has a null value.
	Headers []string
	// Partition sends every record to one partition; -1 lets the default
	// (Kafka-compatible murmur2 sticky) partitioner choose.
	Partition int32
	// Acks is all (or -1), 1 or 0.
	Acks string
	// Compression is none, gzip, snappy, lz4 or zstd.
	Compression string
	// NullValueMarker: a value equal to it is produced as null, so
	// tombstones for compacted topics can be written from text.
	NullValueMarker string
	Linger          time.Duration
	BatchSize       int // max bytes of one record batch; 0 keeps kgo's default
	// ProgressEvery is how often a progress line goes to the status writer
	// while input keeps coming; 0 means every 5s.
	ProgressEvery time.Duration
}

// ProduceResult counts what happened to the input lines.
type ProduceResult struct {
	Sent   int64 // records handed to the client
	Acked  int64 // records the broker acknowledged
	Failed int64 // records that were not acknowledged
}

// produceFailure remembers the earliest line whose record failed.
type produceFailure struct {
	mu    sync.Mutex
	line  int64
	err   error
	count atomic.Int64
}

func (f *produceFailure) record(line int64, err error) {
	f.count.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil || line < f.line {
		f.line, f.err = line, err
	}
}

func (f *produceFailure) get() (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.line, f.err
}

// producerOpts maps the flags onto kgo options.
func (o *ProduceOptions) producerOpts(deliveryTimeout time.Duration) ([]kgo.Opt, error) {
	opts := []kgo.Opt{
		kgo.DefaultProduceTopic(o.Topic),
		kgo.RecordDeliveryTimeout(deliveryTimeout),
	}
	switch strings.ToLower(o.Acks) {
	case "all", "-1", "":
		opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
	case "1":
		// Idempotence needs acks=all; Kafka's producer drops it the same way.
		opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	case "0":
		opts = append(opts, kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite())
	default:
		return nil, fmt.Errorf("--acks %q: want all, 1 or 0", o.Acks)
	}
	codec, err := compressionCodec(o.Compression)
	if err != nil {
		return nil, err
	}
	opts = append(opts, kgo.ProducerBatchCompression(codec))
	if o.Partition >= 0 {
		opts = append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	} else if o.Partition < -1 {
		return nil, fmt.Errorf("--partition %d: want a partition number (0 or more)", o.Partition)
	}
	if o.Linger < 0 {
		return nil, fmt.Errorf("--linger %v: want 0 or more", o.Linger)
	}
	opts = append(opts, kgo.ProducerLinger(o.Linger))
	if o.BatchSize < 0 || o.BatchSize > 1<<30 {
		return nil, fmt.Errorf("--batch-size %d: want bytes between 1 and 1GiB", o.BatchSize)
	}
	if o.BatchSize > 0 {
		opts = append(opts, kgo.ProducerBatchMaxBytes(int32(o.BatchSize)))
	}
	return opts, nil
}

func compressionCodec(name string) (kgo.CompressionCodec, error) {
	switch strings.ToLower(name) {
	case "", "none":
		return kgo.NoCompression(), nil
	case "gzip":
		return kgo.GzipCompression(), nil
	case "snappy":
		return kgo.SnappyCompression(), nil
	case "lz4":
		return kgo.Lz4Compression(), nil
	case "zstd":
		return kgo.ZstdCompression(), nil
	}
	return kgo.CompressionCodec{}, fmt.Errorf("--compression %q: want none, gzip, snappy, lz4 or zstd", name)
}

// lineParser turns input lines into records.
type lineParser struct {
	keySep     []byte
	nullMarker []byte
	hasMarker  bool
	headers    []kgo.RecordHeader
	partition  int32
}

func (o *ProduceOptions) parser() (*lineParser, error) {
	hs, err := parseHeaderFlags(o.Headers)
	if err != nil {
		return nil, err
	}
	return &lineParser{
		keySep:     []byte(o.KeySeparator),
		nullMarker: []byte(o.NullValueMarker),
		hasMarker:  o.NullValueMarker != "",
		headers:    hs,
		partition:  o.Partition,
	}, nil
}

// parse builds the record for one line (without its newline). The record
// owns line.
func (lp *lineParser) parse(line []byte) (*kgo.Record, error) {
	r := &kgo.Record{Partition: lp.partition}
	value := line
	if len(lp.keySep) > 0 {
		k, v, ok := bytes.Cut(line, lp.keySep)
		if !ok {
			return nil, fmt.Errorf("no key separator %q in the line: with --key-separator every line must be KEY%sVALUE", lp.keySep, lp.keySep)
		}
		r.Key, value = k, v
	}
	if lp.hasMarker && bytes.Equal(value, lp.nullMarker) {
		value = nil
	} else if value == nil {
		value = []byte{}
	}
	r.Value = value
	if len(lp.headers) > 0 {
		// Records are handed to another goroutine; each gets its own slice.
		r.Headers = append([]kgo.RecordHeader(nil), lp.headers...)
	}
	return r, nil
}

// parseHeaderFlags parses --headers values: comma-separated k=v pairs.
func parseHeaderFlags(flags []string) ([]kgo.RecordHeader, error) {
	var hs []kgo.RecordHeader
	for _, f := range flags {
		for _, item := range splitEscaped(f, ',') {
			if item == "" {
				continue
			}
			parts := splitEscaped(item, '=')
			k := unescapeBackslashes(parts[0])
			if k == "" {
				return nil, fmt.Errorf("--headers %q: header %q has no key: want key=value", f, item)
			}
			h := kgo.RecordHeader{Key: k}
			if len(parts) > 1 {
				// Only the first unescaped '=' separates; the rest is value.
				rest := item[len(parts[0])+1:]
				h.Value = []byte(unescapeBackslashes(rest))
			}
			hs = append(hs, h)
		}
	}
	return hs, nil
}

// splitEscaped splits s at every sep not preceded by a backslash, keeping
// escapes in the pieces.
func splitEscaped(s string, sep byte) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case sep:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

func unescapeBackslashes(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

type inputLine struct {
	no   int64
	data []byte
	err  error
}

// readLines sends in's lines (newline and a preceding '\r' removed) until
// EOF, an error, or done closes. Reading happens on its own goroutine so an
// interrupt is noticed even while stdin blocks.
func readLines(in io.Reader, out chan<- inputLine, done <-chan struct{}) {
	defer close(out)
	br := bufio.NewReaderSize(in, 64<<10)
	for no := int64(1); ; no++ {
		b, err := br.ReadBytes('\n')
		if len(b) > 0 && b[len(b)-1] == '\n' {
			b = b[:len(b)-1]
			if len(b) > 0 && b[len(b)-1] == '\r' {
				b = b[:len(b)-1]
			}
		} else if len(b) == 0 && err == io.EOF {
			return
		}
		var rerr error
		if err != nil && err != io.EOF {
			rerr = err
		}
		select {
		case out <- inputLine{no: no, data: b, err: rerr}:
		case <-done:
			return
		}
		if err != nil {
			return
		}
	}
}

// Produce sends every line of in as one record and waits until each is
// acknowledged. Progress and the final count go to status. The first
// failure stops reading; the error names its line and the Kafka error.
func Produce(ctx context.Context, co *ClientOptions, o ProduceOptions, in io.Reader, status io.Writer) (ProduceResult, error) {
	var res ProduceResult
	kopts, err := o.producerOpts(co.timeout())
	if err != nil {
		return res, err
	}
	lp, err := o.parser()
	if err != nil {
		return res, err
	}
	c, err := co.Connect(ctx, kopts...)
	if err != nil {
		return res, err
	}
	defer c.Close()
	if err := checkTopicPartition(ctx, c, o.Topic, o.Partition); err != nil {
		return res, err
	}

	var acked atomic.Int64
	var fail produceFailure
	// Records are produced under their own context: an interrupt stops
	// reading input, but what was already read is still delivered.
	pctx := context.WithoutCancel(ctx)
	lines := make(chan inputLine, 256)
	done := make(chan struct{})
	defer close(done)
	go readLines(in, lines, done)

	every := o.ProgressEvery
	if every <= 0 {
		every = 5 * time.Second
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	start := time.Now()
	var stopErr error
read:
	for {
		select {
		case <-ctx.Done():
			stopErr = fmt.Errorf("interrupted after %d lines", res.Sent)
			break read
		case <-tick.C:
			secs := time.Since(start).Seconds()
			fmt.Fprintf(status, "produce: %d records sent, %d acknowledged (%.0f records/s)\n",
				res.Sent, acked.Load(), float64(acked.Load())/secs)
		case l, ok := <-lines:
			if !ok {
				break read
			}
			if l.err != nil {
				stopErr = fmt.Errorf("read input after line %d: %w", l.no-1, l.err)
				break read
			}
			if _, err := fail.get(); err != nil {
				break read
			}
			r, err := lp.parse(l.data)
			if err != nil {
				stopErr = fmt.Errorf("line %d: %w", l.no, err)
				break read
			}
			no := l.no
			c.Client.Produce(pctx, r, func(_ *kgo.Record, err error) {
				if err != nil {
					fail.record(no, err)
					return
				}
				acked.Add(1)
			})
			res.Sent++
		}
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), co.timeout()+o.Linger)
	defer cancel()
	if err := c.Client.Flush(fctx); err != nil {
		// Whatever is still buffered fails through its promise.
		c.Client.PurgeTopicsFromProducing(o.Topic)
	}
	res.Acked, res.Failed = acked.Load(), fail.count.Load()
	ackWord := "acknowledged"
	if strings.TrimSpace(o.Acks) == "0" {
		ackWord = "sent (acks=0: not confirmed by the broker)"
	}
	fmt.Fprintf(status, "%s %s to topic %s", plural(int(res.Acked), "record"), ackWord, o.Topic)
	if res.Failed > 0 {
		fmt.Fprintf(status, ", %d failed", res.Failed)
	}
	fmt.Fprintln(status, ".")

	if line, err := fail.get(); err != nil {
		return res, fmt.Errorf("record from line %d was not acknowledged: %w%s", line, err, produceHint(o.Topic, err))
	}
	if stopErr != nil {
		return res, stopErr
	}
	return res, nil
}

// produceHint adds what to do next for produce errors people can fix.
func produceHint(topic string, err error) string {
	switch {
	case errors.Is(err, kerr.MessageTooLarge), errors.Is(err, kerr.RecordListTooLarge):
		return fmt.Sprintf(" (raise max.message.bytes with `fjord topic alter %s --config max.message.bytes=N`, or send smaller lines)", topic)
	case errors.Is(err, kerr.UnknownTopicOrPartition):
		return fmt.Sprintf(" (create it with `fjord topic create %s`)", topic)
	case errors.Is(err, kerr.NotEnoughReplicas), errors.Is(err, kerr.NotEnoughReplicasAfterAppend):
		return " (fewer in-sync replicas than min.insync.replicas: bring brokers back, or produce with --acks 1)"
	case errors.Is(err, kgo.ErrRecordTimeout), errors.Is(err, context.DeadlineExceeded):
		return " (the cluster did not answer in time: check the brokers, or raise --timeout)"
	}
	return ""
}

// topicGrace is how long a just-created topic may take to show up.
const topicGrace = time.Second

// checkTopicPartition fails early, before reading input, when the topic or
// the requested partition does not exist: kgo would otherwise retry in
// silence, and nothing of the typed input would be sent.
func checkTopicPartition(ctx context.Context, c *Conn, topic string, partition int32) error {
	if err := validateTopicName(topic); err != nil {
		return err
	}
	// A topic created a moment ago may not be in every broker's metadata
	// yet (Kafka applies it asynchronously), so a missing topic is looked
	// up again for a short while before it is reported.
	var d kadm.TopicDetail
	for deadline := time.Now().Add(topicGrace); ; {
		tds, err := c.Admin.ListTopics(ctx, topic)
		if err != nil {
			return fmt.Errorf("look up topic %s: %w", topic, err)
		}
		var ok bool
		d, ok = tds[topic]
		if !ok {
			d.Err = kerr.UnknownTopicOrPartition
		}
		if !errors.Is(d.Err, kerr.UnknownTopicOrPartition) || time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	if d.Err != nil {
		return topicErr(topic, d.Err)
	}
	if partition >= 0 {
		if _, ok := d.Partitions[partition]; !ok {
			return fmt.Errorf("topic %s has no partition %d: it has %s (0-%d); grow it with `fjord topic alter %s --partitions N`",
				topic, partition, plural(len(d.Partitions), "partition"), len(d.Partitions)-1, topic)
		}
	}
	return nil
}
