package admin

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	defaultMessageLimit = 20
	maxMessageLimit     = 500
	// readDeadline bounds a message read: what has arrived by then is
	// answered (a partition whose last offsets are transaction markers
	// or compacted away is never "reached").
	readDeadline = 3 * time.Second
)

// message is the Message entity.
type message struct {
	Partition     int32    `json:"partition"`
	Offset        int64    `json:"offset"`
	Timestamp     int64    `json:"timestamp"`
	TimestampType string   `json:"timestamp_type"`
	Key           *data    `json:"key"`
	Value         *data    `json:"value"`
	Headers       []header `json:"headers"`
	Size          int      `json:"size"`
}

type header struct {
	Key   string `json:"key"`
	Value *data  `json:"value"`
}

type partitionRange struct {
	Partition   int32 `json:"partition"`
	StartOffset int64 `json:"start_offset"`
	EndOffset   int64 `json:"end_offset"`
}

type messagesPage struct {
	Messages   []message        `json:"messages"`
	Partitions []partitionRange `json:"partitions"`
}

// readQuery is GET /topics/{topic}/messages's parsed query.
type readQuery struct {
	partition int32 // -1: all
	from      string
	offset    int64
	timestamp int64
	limit     int
	keyFormat string
	valFormat string
}

func parseReadQuery(r *http.Request) (readQuery, error) {
	q := r.URL.Query()
	rq := readQuery{partition: -1, limit: defaultMessageLimit, keyFormat: "auto", valFormat: "auto"}
	if v := q.Get("partition"); v != "" {
		p, err := strconv.ParseInt(v, 10, 32)
		if err != nil || p < 0 {
			return rq, errorf(http.StatusBadRequest, "partition must be a partition number (0, 1, ...), not %q; omit it for all partitions", v)
		}
		rq.partition = int32(p)
	}
	given := 0
	if v := q.Get("offset"); v != "" {
		o, err := strconv.ParseInt(v, 10, 64)
		if err != nil || o < 0 {
			return rq, errorf(http.StatusBadRequest, "offset must be a non-negative number, not %q", v)
		}
		rq.from, rq.offset = "offset", o
		given++
	}
	if v := q.Get("timestamp"); v != "" {
		ts, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ts < 0 {
			return rq, errorf(http.StatusBadRequest, "timestamp must be milliseconds since the epoch, not %q", v)
		}
		rq.from, rq.timestamp = "timestamp", ts
		given++
	}
	if v := q.Get("from"); v != "" {
		if v != "earliest" && v != "latest" {
			return rq, errorf(http.StatusBadRequest, "from must be earliest or latest, not %q (use offset= or timestamp= to start elsewhere)", v)
		}
		rq.from = v
		given++
	}
	if given > 1 {
		return rq, errorf(http.StatusBadRequest, "give one of offset, timestamp and from")
	}
	if rq.from == "" {
		rq.from = "latest"
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxMessageLimit {
			return rq, errorf(http.StatusBadRequest, "limit must be between 1 and %d, not %q", maxMessageLimit, v)
		}
		rq.limit = n
	}
	for name, dst := range map[string]*string{"key_format": &rq.keyFormat, "value_format": &rq.valFormat} {
		if v := q.Get(name); v != "" {
			if !decodeFormats[v] {
				return rq, errorf(http.StatusBadRequest, "%s must be one of auto, json, avro, text, hex, base64, not %q", name, v)
			}
			*dst = v
		}
	}
	return rq, nil
}

func (s *Server) readMessages(w http.ResponseWriter, r *http.Request) {
	topic := chi.URLParam(r, "topic")
	rq, err := parseReadQuery(r)
	if err != nil {
		fail(w, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	td, err := s.topicMetadata(ctx, topic)
	if err != nil {
		fail(w, err)
		return
	}
	parts := td.Partitions.Numbers()
	if rq.partition >= 0 {
		if _, ok := td.Partitions[rq.partition]; !ok {
			writeError(w, http.StatusNotFound, "UNKNOWN_TOPIC_OR_PARTITION: topic '"+topic+"' has no partition "+strconv.Itoa(int(rq.partition))+
				" (it has "+strconv.Itoa(len(parts))+")")
			return
		}
		parts = []int32{rq.partition}
	}
	starts, err := s.adm.ListStartOffsets(ctx, topic)
	if err != nil {
		fail(w, kafkaError(err, ""))
		return
	}
	ends, err := s.adm.ListEndOffsets(ctx, topic)
	if err != nil {
		fail(w, kafkaError(err, ""))
		return
	}
	var byTime kadm.ListedOffsets
	if rq.from == "timestamp" {
		if byTime, err = s.adm.ListOffsetsAfterMilli(ctx, rq.timestamp, topic); err != nil {
			fail(w, kafkaError(err, ""))
			return
		}
	}

	page := messagesPage{Messages: []message{}, Partitions: []partitionRange{}}
	ranges := map[int32][2]int64{} // partition → [from, stop)
	for _, p := range parts {
		so, ok1 := starts.Lookup(topic, p)
		eo, ok2 := ends.Lookup(topic, p)
		if !ok1 || !ok2 || so.Err != nil || eo.Err != nil {
			err := so.Err
			if err == nil {
				err = eo.Err
			}
			if err == nil {
				err = errors.New("no offsets listed")
			}
			fail(w, kafkaError(err, ""))
			return
		}
		start, end := so.Offset, eo.Offset
		page.Partitions = append(page.Partitions, partitionRange{Partition: p, StartOffset: start, EndOffset: end})
		var from, stop int64
		switch rq.from {
		case "latest":
			from, stop = max(start, end-int64(rq.limit)), end
		case "earliest":
			from = start
		case "offset":
			from = min(max(rq.offset, start), end)
		case "timestamp":
			from = end
			if o, ok := byTime.Lookup(topic, p); ok && o.Err == nil && o.Offset >= 0 {
				from = min(max(o.Offset, start), end)
			}
		}
		if rq.from != "latest" {
			stop = min(end, from+int64(rq.limit))
		}
		if from < stop {
			ranges[p] = [2]int64{from, stop}
		}
	}

	recs, err := s.consume(ctx, topic, ranges)
	if err != nil {
		fail(w, err)
		return
	}
	sort.Slice(recs, func(i, j int) bool {
		a, b := recs[i], recs[j]
		if !a.Timestamp.Equal(b.Timestamp) {
			return a.Timestamp.Before(b.Timestamp)
		}
		if a.Partition != b.Partition {
			return a.Partition < b.Partition
		}
		return a.Offset < b.Offset
	})
	if len(recs) > rq.limit {
		if rq.from == "latest" {
			recs = recs[len(recs)-rq.limit:]
		} else {
			recs = recs[:rq.limit]
		}
	}
	dec := s.newDecoder(ctx)
	for _, rec := range recs {
		page.Messages = append(page.Messages, toMessage(dec, rec, rq))
	}
	writeJSON(w, http.StatusOK, page)
}

// consume reads each partition's [from, stop) with a direct partition
// consumer (no group: reading commits nothing and joins nothing), for
// at most readDeadline.
func (s *Server) consume(ctx context.Context, topic string, ranges map[int32][2]int64) ([]*kgo.Record, error) {
	if len(ranges) == 0 {
		return nil, nil
	}
	offsets := map[int32]kgo.Offset{}
	for p, rg := range ranges {
		offsets[p] = kgo.NewOffset().At(rg[0])
	}
	opts := append([]kgo.Opt{kgo.ClientID("fjord-admin-api")}, s.opts.ClientOpts...)
	opts = append(opts,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}),
		kgo.FetchMaxWait(500*time.Millisecond),
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, readDeadline)
	defer cancel()
	var out []*kgo.Record
	pending := len(ranges)
	done := map[int32]bool{}
	for pending > 0 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			break // answer what has arrived
		}
		for _, fe := range fs.Errors() {
			if !errors.Is(fe.Err, context.DeadlineExceeded) && !errors.Is(fe.Err, context.Canceled) {
				return nil, kafkaError(fe.Err, "")
			}
		}
		fs.EachRecord(func(rec *kgo.Record) {
			rg, ok := ranges[rec.Partition]
			if !ok || done[rec.Partition] || rec.Offset >= rg[1] {
				return
			}
			out = append(out, rec)
			if rec.Offset >= rg[1]-1 {
				done[rec.Partition] = true
				pending--
			}
		})
	}
	return out, nil
}

func toMessage(dec *decoder, rec *kgo.Record, rq readQuery) message {
	m := message{
		Partition: rec.Partition, Offset: rec.Offset, Timestamp: rec.Timestamp.UnixMilli(),
		TimestampType: "CreateTime",
		Key:           dec.decode(rec.Key, rq.keyFormat), Value: dec.decode(rec.Value, rq.valFormat),
		Headers: []header{}, Size: len(rec.Key) + len(rec.Value),
	}
	if rec.Attrs.TimestampType() == 1 {
		m.TimestampType = "LogAppendTime"
	}
	for _, h := range rec.Headers {
		// Header values are shown as their bytes suggest (they are
		// rarely framed Avro; "auto" finds text or JSON).
		m.Headers = append(m.Headers, header{Key: h.Key, Value: dec.decode(h.Value, "auto")})
		m.Size += len(h.Key) + len(h.Value)
	}
	return m
}

// produceRequest is POST /topics/{topic}/messages's body.
type produceRequest struct {
	Partition   *int32          `json:"partition"`
	Key         *string         `json:"key"`
	Value       *string         `json:"value"`
	KeyFormat   string          `json:"key_format"`
	ValueFormat string          `json:"value_format"`
	Headers     []produceHeader `json:"headers"`
}

type produceHeader struct {
	Key   string  `json:"key"`
	Value *string `json:"value"`
}

type produced struct {
	Partition int32 `json:"partition"`
	Offset    int64 `json:"offset"`
	Timestamp int64 `json:"timestamp"`
}

func (s *Server) produceMessage(w http.ResponseWriter, r *http.Request) {
	topic := chi.URLParam(r, "topic")
	var req produceRequest
	if err := decodeBody(r, &req); err != nil {
		fail(w, err)
		return
	}
	rec := &kgo.Record{Topic: topic}
	var err error
	if rec.Key, err = encodeData("key", req.Key, req.KeyFormat); err != nil {
		fail(w, err)
		return
	}
	if rec.Value, err = encodeData("value", req.Value, req.ValueFormat); err != nil {
		fail(w, err)
		return
	}
	for _, h := range req.Headers {
		kh := kgo.RecordHeader{Key: h.Key}
		if h.Value != nil {
			kh.Value = []byte(*h.Value)
		}
		rec.Headers = append(rec.Headers, kh)
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	// Check the topic first: a producer waits (and retries) for a topic
	// it does not know.
	td, err := s.topicMetadata(ctx, topic)
	if err != nil {
		fail(w, err)
		return
	}
	cl := s.client // the default partitioner: the key's murmur2 hash, as Kafka's
	if req.Partition != nil && *req.Partition >= 0 {
		if _, ok := td.Partitions[*req.Partition]; !ok {
			writeError(w, http.StatusNotFound, "UNKNOWN_TOPIC_OR_PARTITION: topic '"+topic+"' has no partition "+
				strconv.Itoa(int(*req.Partition))+" (it has "+strconv.Itoa(len(td.Partitions))+")")
			return
		}
		// A record for a chosen partition needs a client with the
		// manual partitioner. One per request: producing by hand is
		// rare, and the shared client keeps Kafka's default.
		opts := append([]kgo.Opt{kgo.ClientID("fjord-admin-api")}, s.opts.ClientOpts...)
		mc, err := kgo.NewClient(append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
		if err != nil {
			fail(w, err)
			return
		}
		defer mc.Close()
		cl, rec.Partition = mc, *req.Partition
	}
	if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
		fail(w, kafkaError(err, ""))
		return
	}
	writeJSON(w, http.StatusCreated, produced{Partition: rec.Partition, Offset: rec.Offset, Timestamp: rec.Timestamp.UnixMilli()})
}

// encodeData turns a produced key or value into its bytes: text as is,
// json checked and compacted, base64 and hex decoded. null stays null.
func encodeData(field string, v *string, format string) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	switch format {
	case "", "text":
		return []byte(*v), nil
	case "json":
		var buf bytes.Buffer
		if err := json.Compact(&buf, []byte(*v)); err != nil {
			return nil, errorf(http.StatusBadRequest, "%s is not valid JSON (%v); send it with %s_format text to produce it as is", field, err, field)
		}
		return buf.Bytes(), nil
	case "base64":
		b, err := base64.StdEncoding.DecodeString(*v)
		if err != nil {
			return nil, errorf(http.StatusBadRequest, "%s is not valid base64: %v", field, err)
		}
		return b, nil
	case "hex":
		b, err := hex.DecodeString(*v)
		if err != nil {
			return nil, errorf(http.StatusBadRequest, "%s is not valid hex: %v", field, err)
		}
		return b, nil
	}
	return nil, errorf(http.StatusBadRequest, "%s_format must be text, json, base64 or hex, not %q (to produce Avro, send the Confluent-framed bytes as base64)", field, format)
}
