package admin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/internal/testkit"
)

// readAll reads every record of topic with a franz-go consumer.
func (e *kxEnv) readAll(t *testing.T, topic string, want int) []*kgo.Record {
	t.Helper()
	cl := testkit.Client(t, e.addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ctx := testkit.Context(t, 10*time.Second)
	var out []*kgo.Record
	for len(out) < want {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("reading %s: %v (have %d of %d records)", topic, err, len(out), want)
		}
		out = append(out, fs.Records()...)
	}
	return out
}

func TestProduceMessages(t *testing.T) {
	e := kxStart(t, Options{})
	e.createTopic(t, "in", 3)

	var p produced
	e.do(t, "POST", "/topics/in/messages", map[string]any{"partition": 2, "key": "k1", "value": "hello",
		"headers": []map[string]any{{"key": "trace", "value": "abc"}, {"key": "empty", "value": nil}}}, http.StatusCreated, &p)
	if p.Partition != 2 || p.Offset != 0 || p.Timestamp < time.Now().Add(-time.Minute).UnixMilli() {
		t.Fatalf("produced text: %+v", p)
	}
	e.do(t, "POST", "/topics/in/messages", map[string]any{"partition": 2, "key": nil, "value": `{ "a": [1, 2] }`, "value_format": "json"}, http.StatusCreated, &p)
	if p.Partition != 2 || p.Offset != 1 {
		t.Fatalf("produced json: %+v", p)
	}
	e.do(t, "POST", "/topics/in/messages", map[string]any{"partition": 2, "key": "AAEC", "key_format": "base64", "value": "ff00", "value_format": "hex"}, http.StatusCreated, &p)
	e.do(t, "POST", "/topics/in/messages", map[string]any{"partition": 2, "value": nil}, http.StatusCreated, &p) // a tombstone
	// Without a partition the default partitioner picks one.
	e.do(t, "POST", "/topics/in/messages", map[string]any{"key": "some key", "value": "v"}, http.StatusCreated, &p)
	if p.Partition < 0 || p.Partition > 2 {
		t.Fatalf("default partitioner chose partition %d", p.Partition)
	}

	// What a franz-go consumer reads is what was sent.
	recs := e.readAll(t, "in", 5)
	byOffset := map[int64]*kgo.Record{}
	for _, r := range recs {
		if r.Partition == 2 {
			byOffset[r.Offset] = r
		}
	}
	if r := byOffset[0]; string(r.Key) != "k1" || string(r.Value) != "hello" || len(r.Headers) != 2 ||
		r.Headers[0].Key != "trace" || string(r.Headers[0].Value) != "abc" || r.Headers[1].Value != nil {
		t.Fatalf("text record: %+v", r)
	}
	if r := byOffset[1]; r.Key != nil || string(r.Value) != `{"a":[1,2]}` {
		t.Fatalf("json record (compacted): key %q value %q", r.Key, r.Value)
	}
	if r := byOffset[2]; !bytes.Equal(r.Key, []byte{0, 1, 2}) || !bytes.Equal(r.Value, []byte{0xff, 0}) {
		t.Fatalf("base64/hex record: key %x value %x", r.Key, r.Value)
	}
	if r := byOffset[3]; r.Value != nil {
		t.Fatalf("tombstone has value %q", r.Value)
	}

	e.wantError(t, "POST", "/topics/in/messages", map[string]any{"value": "{nope", "value_format": "json"}, http.StatusBadRequest, "value is not valid JSON")
	e.wantError(t, "POST", "/topics/in/messages", map[string]any{"key": "***", "key_format": "base64"}, http.StatusBadRequest, "key is not valid base64")
	e.wantError(t, "POST", "/topics/in/messages", map[string]any{"value": "zz", "value_format": "hex"}, http.StatusBadRequest, "value is not valid hex")
	e.wantError(t, "POST", "/topics/in/messages", map[string]any{"value": "x", "value_format": "avro"}, http.StatusBadRequest, "value_format must be")
	e.wantError(t, "POST", "/topics/in/messages", map[string]any{"partition": 3, "value": "x"}, http.StatusNotFound, "UNKNOWN_TOPIC_OR_PARTITION: ")
	e.wantError(t, "POST", "/topics/nope/messages", map[string]any{"value": "x"}, http.StatusNotFound, "UNKNOWN_TOPIC_OR_PARTITION: ")
}

// kxTimed produces n records to each of parts partitions of topic, the
// i-th record of partition p at timestamp base + (i*parts+p+1)*1000 ms,
// so that timestamps interleave the partitions: 1000 (p0), 2000 (p1),
// 3000 (p0), ...
func kxTimed(t *testing.T, e *kxEnv, topic string, parts, n int, base time.Time) {
	t.Helper()
	var rs []*kgo.Record
	for i := 0; i < n; i++ {
		for p := 0; p < parts; p++ {
			rs = append(rs, &kgo.Record{Topic: topic, Partition: int32(p), Value: []byte(fmt.Sprintf("p%d-%d", p, i)),
				Timestamp: base.Add(time.Duration(i*parts+p+1) * time.Second)})
		}
	}
	e.produce(t, rs...)
}

// readPage GETs topic's messages with query and checks the answer is
// sorted by (timestamp, partition, offset).
func (e *kxEnv) readPage(t *testing.T, topic, query string) messagesPage {
	t.Helper()
	var page messagesPage
	e.do(t, "GET", "/topics/"+topic+"/messages?"+query, nil, http.StatusOK, &page)
	for i := 1; i < len(page.Messages); i++ {
		a, b := page.Messages[i-1], page.Messages[i]
		if a.Timestamp > b.Timestamp || a.Timestamp == b.Timestamp && (a.Partition > b.Partition || a.Partition == b.Partition && a.Offset >= b.Offset) {
			t.Fatalf("%s: messages not sorted: %+v before %+v", query, a, b)
		}
	}
	return page
}

// values lists the messages' text values.
func values(page messagesPage) []string {
	var out []string
	for _, m := range page.Messages {
		if m.Value == nil {
			out = append(out, "<null>")
			continue
		}
		out = append(out, fmt.Sprint(m.Value.Value))
	}
	return out
}

func TestReadMessages(t *testing.T) {
	e := kxStart(t, Options{})
	e.createTopic(t, "r", 2)
	base := time.UnixMilli(1_700_000_000_000)
	kxTimed(t, e, "r", 2, 10, base) // p0: 1s,3s,...,19s; p1: 2s,4s,...,20s

	page := e.readPage(t, "r", "")
	if len(page.Messages) != 20 || len(page.Partitions) != 2 {
		t.Fatalf("default read: %d messages, partitions %+v", len(page.Messages), page.Partitions)
	}
	for _, pr := range page.Partitions {
		if pr.StartOffset != 0 || pr.EndOffset != 10 {
			t.Fatalf("partition offsets: %+v", page.Partitions)
		}
	}
	m := page.Messages[0]
	if m.Partition != 0 || m.Offset != 0 || m.Timestamp != base.Add(time.Second).UnixMilli() || m.TimestampType != "CreateTime" ||
		m.Key != nil || m.Value.Format != "text" || m.Value.Value != "p0-0" || m.Value.Size != 4 || m.Size != 4 || len(m.Headers) != 0 {
		t.Fatalf("first message: %+v value %+v", m, m.Value)
	}

	// latest: the last `limit` across partitions, by time.
	if got := fmt.Sprint(values(e.readPage(t, "r", "limit=3"))); got != "[p1-8 p0-9 p1-9]" {
		t.Fatalf("latest 3: %s", got)
	}
	if got := fmt.Sprint(values(e.readPage(t, "r", "from=latest&limit=2&partition=0"))); got != "[p0-8 p0-9]" {
		t.Fatalf("latest 2 of partition 0: %s", got)
	}
	// earliest and offsets: the next `limit` from there.
	if got := fmt.Sprint(values(e.readPage(t, "r", "from=earliest&limit=3"))); got != "[p0-0 p1-0 p0-1]" {
		t.Fatalf("earliest 3: %s", got)
	}
	if got := fmt.Sprint(values(e.readPage(t, "r", "partition=1&offset=8"))); got != "[p1-8 p1-9]" {
		t.Fatalf("partition 1 from offset 8: %s", got)
	}
	if got := fmt.Sprint(values(e.readPage(t, "r", "offset=5&limit=3"))); got != "[p0-5 p1-5 p0-6]" {
		t.Fatalf("every partition from offset 5: %s", got)
	}
	if got := values(e.readPage(t, "r", "offset=99")); len(got) != 0 {
		t.Fatalf("past the end: %v", got)
	}
	// timestamp: from the first record at or after it.
	ts := base.Add(10500 * time.Millisecond).UnixMilli()
	if got := fmt.Sprint(values(e.readPage(t, "r", fmt.Sprintf("timestamp=%d&limit=3", ts)))); got != "[p0-5 p1-5 p0-6]" {
		t.Fatalf("from timestamp 10.5s: %s", got)
	}
	if got := values(e.readPage(t, "r", fmt.Sprintf("timestamp=%d", base.Add(time.Hour).UnixMilli()))); len(got) != 0 {
		t.Fatalf("after the last timestamp: %v", got)
	}

	// An empty topic answers at once with no messages.
	e.createTopic(t, "empty", 3)
	start := time.Now()
	page = e.readPage(t, "empty", "")
	if len(page.Messages) != 0 || len(page.Partitions) != 3 || time.Since(start) > 2*time.Second {
		t.Fatalf("empty topic: %+v after %v", page, time.Since(start))
	}

	e.wantError(t, "GET", "/topics/r/messages?partition=2", nil, http.StatusNotFound, "UNKNOWN_TOPIC_OR_PARTITION: ")
	e.wantError(t, "GET", "/topics/nope/messages", nil, http.StatusNotFound, "UNKNOWN_TOPIC_OR_PARTITION: ")
	e.wantError(t, "GET", "/topics/r/messages?limit=0", nil, http.StatusBadRequest, "limit must be between 1 and 500")
	e.wantError(t, "GET", "/topics/r/messages?limit=501", nil, http.StatusBadRequest, "limit must be between 1 and 500")
	e.wantError(t, "GET", "/topics/r/messages?offset=1&from=latest", nil, http.StatusBadRequest, "give one of")
	e.wantError(t, "GET", "/topics/r/messages?from=middle", nil, http.StatusBadRequest, "from must be earliest or latest")
	e.wantError(t, "GET", "/topics/r/messages?value_format=xml", nil, http.StatusBadRequest, "value_format must be one of")
}

func TestReadLogAppendTime(t *testing.T) {
	e := kxStart(t, Options{})
	var d topicDetail
	e.do(t, "POST", "/topics", map[string]any{"name": "lat", "configs": map[string]string{"message.timestamp.type": "LogAppendTime"}}, http.StatusCreated, &d)
	before := time.Now().Add(-time.Second).UnixMilli()
	e.produce(t, &kgo.Record{Topic: "lat", Value: []byte("x"), Timestamp: time.UnixMilli(1000)})
	page := e.readPage(t, "lat", "")
	if len(page.Messages) != 1 || page.Messages[0].TimestampType != "LogAppendTime" || page.Messages[0].Timestamp < before {
		t.Fatalf("LogAppendTime record: %+v", page.Messages)
	}
}

func TestDecodeFormats(t *testing.T) {
	e := kxStart(t, Options{})
	e.createTopic(t, "d", 1)
	e.produce(t,
		&kgo.Record{Topic: "d", Key: nil, Value: []byte(`{"id": 7, "tags": ["a"]}`),
			Headers: []kgo.RecordHeader{{Key: "h-json", Value: []byte(`[1]`)}, {Key: "h-text", Value: []byte("plain")}, {Key: "h-null"}}},
		&kgo.Record{Topic: "d", Key: []byte("user-1"), Value: []byte("hello\nworld")},
		&kgo.Record{Topic: "d", Key: []byte{0xff, 0x00, 0x10}, Value: []byte{0x00, 0x00, 0x00, 0x00, 0x01, 0x02}}, // framed, but no registry
		&kgo.Record{Topic: "d", Value: []byte("a\x01b")},                                                          // valid UTF-8 with a control character
	)

	ms := e.readPage(t, "d", "from=earliest").Messages
	if len(ms) != 4 {
		t.Fatalf("%d messages", len(ms))
	}
	// auto: JSON as JSON, text as text, the rest as hex; null as null.
	if ms[0].Key != nil || ms[0].Value.Format != "json" || ms[0].Value.Size != 24 {
		t.Fatalf("json value: %+v", ms[0].Value)
	}
	if got, _ := json.Marshal(ms[0].Value.Value); string(got) != `{"id":7,"tags":["a"]}` {
		t.Fatalf("json value decoded as %s", got)
	}
	h := ms[0].Headers
	if len(h) != 3 || h[0].Value.Format != "json" || h[1].Value.Format != "text" || h[1].Value.Value != "plain" || h[2].Key != "h-null" || h[2].Value != nil {
		t.Fatalf("headers: %+v", h)
	}
	if ms[0].Size != 24+len("h-json")+3+len("h-text")+5+len("h-null") {
		t.Fatalf("message size %d", ms[0].Size)
	}
	if k, v := ms[1].Key, ms[1].Value; k.Format != "text" || k.Value != "user-1" || v.Format != "text" || v.Value != "hello\nworld" {
		t.Fatalf("text: key %+v value %+v", k, v)
	}
	if k, v := ms[2].Key, ms[2].Value; k.Format != "hex" || k.Value != "ff0010" || v.Format != "hex" || v.Value != "000000000102" || v.SchemaID != nil {
		t.Fatalf("binary: key %+v value %+v", k, v)
	}
	if v := ms[3].Value; v.Format != "hex" || v.Value != "610162" {
		t.Fatalf("text with a control character: %+v", v)
	}

	// Formats asked for.
	ms = e.readPage(t, "d", "from=earliest&value_format=base64&key_format=hex").Messages
	if ms[1].Key.Format != "hex" || ms[1].Key.Value != "757365722d31" || ms[1].Value.Format != "base64" || ms[1].Value.Value != "aGVsbG8Kd29ybGQ=" {
		t.Fatalf("hex key, base64 value: %+v %+v", ms[1].Key, ms[1].Value)
	}
	ms = e.readPage(t, "d", "from=earliest&value_format=json").Messages
	if ms[0].Value.Format != "json" || ms[1].Value.Format != "hex" || ms[1].Value.Error != "not valid JSON" {
		t.Fatalf("json asked for: %+v %+v", ms[0].Value, ms[1].Value)
	}
	ms = e.readPage(t, "d", "from=earliest&value_format=text").Messages
	if ms[2].Value.Format != "text" || ms[3].Value.Value != "a\x01b" {
		t.Fatalf("text asked for: %+v %+v", ms[2].Value, ms[3].Value)
	}
	ms = e.readPage(t, "d", "from=earliest&value_format=avro").Messages
	if v := ms[2].Value; v.Format != "hex" || v.Error != "no schema registry is configured on this node to decode Avro" {
		t.Fatalf("avro asked for without a registry: %+v", v)
	}
}
