package broker_test

// Interoperability with Kafka clients nobody here wrote: kafka-python and
// confluent-kafka (librdkafka) from Debian's packages, and kcat. Each
// client creates topics with its own admin API (kcat only lists
// metadata), produces keyed records with headers and tombstones in every
// codec it can write, reads them back in a consumer group that commits,
// and has a 900 KB record accepted and one over max.message.bytes refused
// with MESSAGE_TOO_LARGE, as the client names that error. What the
// clients wrote is checked on the broker side too, with franz-go: the
// stored batches must really carry the codec asked for (librdkafka before
// 2.8 silently sends uncompressed batches to brokers it thinks too old).
// TestCrossClientInterop has each client read what the others wrote, and
// TestMixedClientGroupRebalance runs kafka-python and confluent-kafka
// members in one group through joins, a clean leave and a crash.
//
// A missing client fails the test (never skips it): `make deps` installs
// them.

import (
	"bufio"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/internal/testkit"
)

// realTime skips, under -short (the inner loop), the tests that drive
// real client processes or wait for real time; make test runs them.
func realTime(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("drives real clients in real time: run without -short (make test)")
	}
}

// codecIDs are the record-batch attribute values of each codec.
var codecIDs = map[string]uint8{"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}

// clientRecord is one record as a test asks a client to write it and as
// clients report what they read. Keys are unique within a test, so
// records are matched by key; a nil Value is a tombstone.
type clientRecord struct {
	Topic     string      `json:"topic"`
	Codec     string      `json:"codec,omitempty"`
	Key       string      `json:"key"`
	Value     *string     `json:"value"`
	Headers   [][2]string `json:"headers"`
	Partition int32       `json:"partition"`
	Offset    int64       `json:"offset"`
}

// makeRecords builds n records per codec for client to write to topic:
// compressible values, every fourth one a tombstone, headers naming the
// writer and codec (and, where perHeader, a sequence number and an
// empty-valued header: kcat can only put the same headers on every
// record of one run).
func makeRecords(client, topic string, codecs []string, n int, perHeader bool) []clientRecord {
	var out []clientRecord
	for _, c := range codecs {
		for i := 0; i < n; i++ {
			r := clientRecord{Topic: topic, Codec: c, Key: fmt.Sprintf("%s-%s-%s-%d", client, topic, c, i)}
			if i%4 != 3 {
				v := strings.Repeat(fmt.Sprintf("%s/%s value %d. ", client, c, i), 20)
				r.Value = &v
			}
			r.Headers = [][2]string{{"client", client}, {"codec", c}}
			if perHeader {
				r.Headers = append(r.Headers, [2]string{"seq", fmt.Sprint(i)}, [2]string{"empty", ""})
			}
			out = append(out, r)
		}
	}
	return out
}

func toJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// lastJSON decodes the last line a script printed into v.
func lastJSON(t *testing.T, out string, v any) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), v); err != nil {
		t.Fatalf("script output is not the expected JSON: %v\n%s", err, out)
	}
}

// checkRead compares what a reader got with what was written: every
// record exactly once (at-least-once duplicates are tolerated only where
// allowDup), with its value, tombstone-ness and headers; where the writer
// reported its placement, the same partition and offset.
func checkRead(t *testing.T, reader string, want, got []clientRecord) {
	t.Helper()
	byKey := map[string]clientRecord{}
	for _, w := range want {
		byKey[w.Key] = w
	}
	seen := map[string]bool{}
	for _, g := range got {
		w, ok := byKey[g.Key]
		if !ok {
			t.Errorf("%s read a record nobody wrote: %+v", reader, g)
			continue
		}
		if seen[g.Key] {
			t.Errorf("%s read %s twice", reader, g.Key)
		}
		seen[g.Key] = true
		switch {
		case (w.Value == nil) != (g.Value == nil):
			t.Errorf("%s: %s tombstone mismatch: wrote %v, read %v", reader, g.Key, w.Value == nil, g.Value == nil)
		case w.Value != nil && *w.Value != *g.Value:
			t.Errorf("%s: %s value %q, want %q", reader, g.Key, *g.Value, *w.Value)
		}
		if !slices.Equal(w.Headers, g.Headers) {
			t.Errorf("%s: %s headers %q, want %q", reader, g.Key, g.Headers, w.Headers)
		}
		if g.Topic != w.Topic {
			t.Errorf("%s: %s read from topic %q, written to %q", reader, g.Key, g.Topic, w.Topic)
		}
		if w.Offset >= 0 && (g.Partition != w.Partition || g.Offset != w.Offset) {
			t.Errorf("%s: %s at %d/%d, the writer was told %d/%d", reader, g.Key, g.Partition, g.Offset, w.Partition, w.Offset)
		}
	}
	if len(seen) != len(want) {
		t.Errorf("%s read %d of %d records", reader, len(seen), len(want))
	}
}

// placeRecords copies the partition/offset a writer reported into want;
// writers that do not report placement leave Offset at -1.
func placeRecords(t *testing.T, want []clientRecord, placed [][2]int64) {
	t.Helper()
	if placed == nil {
		for i := range want {
			want[i].Offset = -1
		}
		return
	}
	if len(placed) != len(want) {
		t.Fatalf("writer placed %d of %d records", len(placed), len(want))
	}
	for i, p := range placed {
		want[i].Partition, want[i].Offset = int32(p[0]), p[1]
	}
}

// checkStored reads topics with franz-go and checks every record a client
// wrote: content, placement, and the codec of the batch it is stored in.
func checkStored(t *testing.T, addr string, want []clientRecord) {
	t.Helper()
	topics := map[string]int{}
	for _, w := range want {
		topics[w.Topic]++
	}
	var got []clientRecord
	codecOf := map[string]uint8{}
	for topic, n := range topics {
		for _, r := range consumeN(t, addr, topic, n) {
			c := clientRecord{Topic: r.Topic, Key: string(r.Key), Partition: r.Partition, Offset: r.Offset}
			if r.Value != nil {
				v := string(r.Value)
				c.Value = &v
			}
			for _, h := range r.Headers {
				c.Headers = append(c.Headers, [2]string{h.Key, string(h.Value)})
			}
			codecOf[c.Key] = r.Attrs.CompressionType()
			got = append(got, c)
		}
	}
	checkRead(t, "franz-go (broker-side check)", want, got)
	for _, w := range want {
		id, ok := codecOf[w.Key]
		// Clients send a batch uncompressed when compressing would not
		// shrink it, as with one that holds only tombstones; a batch
		// with one of these values always shrinks.
		if ok && id != codecIDs[w.Codec] && (w.Value != nil || id != 0) {
			t.Errorf("%s was written with %s but is stored in a batch with codec %d", w.Key, w.Codec, id)
		}
	}
}

// committed sums a group's committed offsets per topic.
func committed(t *testing.T, adm *kadm.Client, group string) map[string]int64 {
	t.Helper()
	offs, err := adm.FetchOffsets(testkit.Context(t, 10*time.Second), group)
	if err == nil {
		err = offs.Error()
	}
	if err != nil {
		t.Fatalf("fetch offsets of %s: %v", group, err)
	}
	sums := map[string]int64{}
	offs.Each(func(o kadm.OffsetResponse) { sums[o.Topic] += o.At })
	return sums
}

// endOffsets sums the end offsets of a topic's partitions.
func endOffsets(t *testing.T, adm *kadm.Client, topic string) int64 {
	t.Helper()
	ends, err := adm.ListEndOffsets(testkit.Context(t, 10*time.Second), topic)
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	ends.Each(func(o kadm.ListedOffset) { sum += o.Offset })
	return sum
}

// limitsResult is what the limits scripts report: the 900 KB record's
// offset, the client's own words for the refusal of the oversized one,
// and what reading the topic back gave.
type limitsResult struct {
	BigOffset   int64   `json:"big_offset"`
	TooLarge    string  `json:"too_large"`
	AfterOffset int64   `json:"after_offset"`
	ReadLens    []int   `json:"read_lens"`
	ReadOffsets []int64 `json:"read_offsets"`
}

// checkLimits checks a limits script's report and, with franz-go, that
// the topic holds the 900 KB record and the one after it at contiguous
// offsets: the refused record took no offset.
func checkLimits(t *testing.T, addr, topic, client string, res limitsResult, wantErr ...string) {
	t.Helper()
	for _, w := range wantErr {
		if !strings.Contains(res.TooLarge, w) {
			t.Errorf("%s: oversized record: %q, want it to contain %q", client, res.TooLarge, w)
		}
	}
	if res.BigOffset != 0 || res.AfterOffset != 1 {
		t.Errorf("%s: 900 KB record at offset %d, the next at %d; want 0 and 1", client, res.BigOffset, res.AfterOffset)
	}
	if !slices.Equal(res.ReadLens, []int{900 << 10, 5}) || !slices.Equal(res.ReadOffsets, []int64{0, 1}) {
		t.Errorf("%s read back lengths %v at offsets %v, want [921600 5] at [0 1]", client, res.ReadLens, res.ReadOffsets)
	}
	got := consumeN(t, addr, topic, 2)
	if len(got) != 2 || len(got[0].Value) != 900<<10 || string(got[1].Value) != "after" || got[1].Offset != 1 {
		t.Errorf("%s: broker holds %d records in %s", client, len(got), topic)
	}
}

// pyKafkaPythonConsume reads n records from topics in a group (or, with
// an empty group, by assigning every partition), commits, and prints them.

func TestKafkaPythonClient(t *testing.T) {
	t.Parallel()
	realTime(t)
	b := testkit.StartBroker(t, nil)
	adm := testkit.Admin(t, b.Addr)
	const data, big = "py-data", "py-big"

	var admin struct {
		APIVersion  []int                `json:"api_version"`
		Duplicate   string               `json:"duplicate"`
		Listed      []string             `json:"listed"`
		Retention   map[string][2]string `json:"retention"`
		AfterDelete []string             `json:"after_delete"`
		Codecs      []string             `json:"codecs"`
	}
	lastJSON(t, testkit.Python(t, time.Minute, pyKafkaPythonAdmin, b.Addr, `{"py-data": 3, "py-big": 1}`), &admin)
	t.Logf("kafka-python detected broker version %v, can write %v", admin.APIVersion, admin.Codecs)
	if admin.Duplicate != "TopicAlreadyExistsError" {
		t.Errorf("creating an existing topic: %s", admin.Duplicate)
	}
	if !slices.Contains(admin.Listed, data) || !slices.Contains(admin.Listed, big) || !slices.Contains(admin.Listed, "py-scratch") {
		t.Errorf("list_topics after create: %v", admin.Listed)
	}
	if slices.Contains(admin.AfterDelete, "py-scratch") {
		t.Errorf("list_topics after delete_topics: %v", admin.AfterDelete)
	}
	// Source 1 is DYNAMIC_TOPIC_CONFIG.
	if r := admin.Retention[data]; r != [2]string{"3600000", "1"} {
		t.Errorf("describe_configs retention.ms of %s: %v", data, r)
	}
	if !slices.Contains(admin.Codecs, "gzip") {
		t.Fatalf("kafka-python cannot write gzip (%v): run `make deps`", admin.Codecs)
	}

	want := makeRecords("py", data, admin.Codecs, 8, true)
	var prod struct{ Placed [][2]int64 }
	lastJSON(t, testkit.Python(t, time.Minute, pyKafkaPythonProduce, b.Addr, toJSON(t, want)), &prod)
	placeRecords(t, want, prod.Placed)
	checkStored(t, b.Addr, want)

	var got []clientRecord
	lastJSON(t, testkit.Python(t, time.Minute, pyKafkaPythonConsume, b.Addr, "py-readers", `["py-data"]`, fmt.Sprint(len(want))), &got)
	checkRead(t, "kafka-python", want, got)
	if c := committed(t, adm, "py-readers"); c[data] != int64(len(want)) {
		t.Errorf("kafka-python group committed %d of %d", c[data], len(want))
	}

	var lim limitsResult
	lastJSON(t, testkit.Python(t, time.Minute, pyKafkaPythonLimits, b.Addr, big), &lim)
	// kafka-python raises the same class for its own pre-send size check,
	// whose message says "when serialized": the broker must be the judge.
	checkLimits(t, b.Addr, big, "kafka-python", lim, "MessageSizeTooLargeError errno=10")
	if strings.Contains(lim.TooLarge, "when serialized") {
		t.Errorf("kafka-python refused the record itself, not the broker: %s", lim.TooLarge)
	}
}

func TestConfluentKafkaClient(t *testing.T) {
	t.Parallel()
	realTime(t)
	b := testkit.StartBroker(t, nil)
	adm := testkit.Admin(t, b.Addr)
	const data, big = "ck-data", "ck-big"

	var admin struct {
		Duplicate   string               `json:"duplicate"`
		Listed      map[string]int       `json:"listed"`
		Brokers     []string             `json:"brokers"`
		Retention   map[string][2]string `json:"retention"`
		AfterDelete []string             `json:"after_delete"`
	}
	lastJSON(t, testkit.Python(t, time.Minute, pyConfluentAdmin, b.Addr, `{"ck-data": 3, "ck-big": 1}`), &admin)
	if admin.Duplicate != "TOPIC_ALREADY_EXISTS" {
		t.Errorf("creating an existing topic: %s", admin.Duplicate)
	}
	if admin.Listed[data] != 3 || admin.Listed[big] != 1 || admin.Listed["ck-scratch"] != 2 {
		t.Errorf("list_topics after create: %v", admin.Listed)
	}
	if want := "0@" + b.Addr; !slices.Equal(admin.Brokers, []string{want}) {
		t.Errorf("metadata brokers %v, want [%s]", admin.Brokers, want)
	}
	if slices.Contains(admin.AfterDelete, "ck-scratch") {
		t.Errorf("topics after delete_topics: %v", admin.AfterDelete)
	}
	// Source 1 is DYNAMIC_TOPIC_CONFIG.
	if r := admin.Retention[data]; r != [2]string{"3600000", "1"} {
		t.Errorf("describe_configs retention.ms of %s: %v", data, r)
	}

	want := makeRecords("ck", data, []string{"none", "gzip", "snappy", "lz4", "zstd"}, 8, true)
	var prod struct{ Placed [][2]int64 }
	lastJSON(t, testkit.Python(t, time.Minute, pyConfluentProduce, b.Addr, toJSON(t, want)), &prod)
	placeRecords(t, want, prod.Placed)
	checkStored(t, b.Addr, want)

	var cons struct {
		Records []clientRecord
		Group   struct {
			State        string   `json:"state"`
			ProtocolType string   `json:"protocol_type"`
			Members      []string `json:"members"`
		}
	}
	lastJSON(t, testkit.Python(t, time.Minute, pyConfluentConsume, b.Addr, "ck-readers", `["ck-data"]`, fmt.Sprint(len(want))), &cons)
	checkRead(t, "confluent-kafka", want, cons.Records)
	if g := cons.Group; g.State != "Stable" || g.ProtocolType != "consumer" || !slices.Equal(g.Members, []string{"ck-reader"}) {
		t.Errorf("AdminClient.list_groups while consuming: %+v", g)
	}
	if c := committed(t, adm, "ck-readers"); c[data] != int64(len(want)) {
		t.Errorf("confluent-kafka group committed %d of %d", c[data], len(want))
	}

	var lim limitsResult
	lastJSON(t, testkit.Python(t, time.Minute, pyConfluentLimits, b.Addr, big), &lim)
	// librdkafka's own size check would fail produce() itself; a delivery
	// report with "Broker:" is the broker's answer.
	checkLimits(t, b.Addr, big, "confluent-kafka", lim, "MSG_SIZE_TOO_LARGE code=10 Broker: Message size too large")
}

// kcatRecord is one line of kcat -C -J.
type kcatRecord struct {
	Topic     string   `json:"topic"`
	Partition int32    `json:"partition"`
	Offset    int64    `json:"offset"`
	Key       string   `json:"key"`
	Payload   *string  `json:"payload"`
	Headers   []string `json:"headers"`
}

func parseKcat(t *testing.T, out string) []clientRecord {
	t.Helper()
	var recs []clientRecord
	for line := range strings.Lines(out) {
		var k kcatRecord
		if err := json.Unmarshal([]byte(line), &k); err != nil {
			t.Fatalf("kcat -J line %q: %v", line, err)
		}
		r := clientRecord{Topic: k.Topic, Partition: k.Partition, Offset: k.Offset, Key: k.Key, Value: k.Payload}
		for i := 0; i+1 < len(k.Headers); i += 2 {
			r.Headers = append(r.Headers, [2]string{k.Headers[i], k.Headers[i+1]})
		}
		recs = append(recs, r)
	}
	return recs
}

// kcatProduce writes recs (all of one codec) with kcat -P: "key:value"
// lines, an empty value sent as NULL (-Z), the first record's headers on
// every record.
func kcatProduce(t *testing.T, addr, topic, codec string, recs []clientRecord) {
	t.Helper()
	var in strings.Builder
	for _, r := range recs {
		in.WriteString(r.Key + ":")
		if r.Value != nil {
			in.WriteString(*r.Value)
		}
		in.WriteString("\n")
	}
	args := []string{"-b", addr, "-P", "-t", topic, "-K:", "-Z", "-z", codec}
	for _, h := range recs[0].Headers {
		args = append(args, "-H", h[0]+"="+h[1])
	}
	if _, stderr, err := testkit.Kcat(t, time.Minute, in.String(), args...); err != nil {
		t.Fatalf("kcat -P -z %s: %v\n%s", codec, err, stderr)
	}
}

func TestKcatClient(t *testing.T) {
	t.Parallel()
	realTime(t)
	b := testkit.StartBroker(t, nil)
	adm := testkit.Admin(t, b.Addr)
	const data, big = "kcat-data", "kcat-big"
	createTopic(t, adm, data, 1, nil)
	createTopic(t, adm, big, 1, nil)

	// -L: brokers, the controller, partitions with leader, replicas, ISR.
	out, stderr, err := testkit.Kcat(t, 30*time.Second, "", "-b", b.Addr, "-L", "-J")
	if err != nil {
		t.Fatalf("kcat -L: %v\n%s", err, stderr)
	}
	var md struct {
		ControllerID int32
		Brokers      []struct {
			ID   int32
			Name string
		}
		Topics []struct {
			Topic      string
			Partitions []struct {
				Partition, Leader int32
				Replicas, ISRs    []struct{ ID int32 }
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &md); err != nil {
		t.Fatalf("kcat -L -J: %v\n%s", err, out)
	}
	if md.ControllerID != 0 || len(md.Brokers) != 1 || md.Brokers[0].ID != 0 || md.Brokers[0].Name != b.Addr {
		t.Errorf("kcat -L: controller %d, brokers %+v", md.ControllerID, md.Brokers)
	}
	listed := 0
	for _, tp := range md.Topics {
		if tp.Topic == data || tp.Topic == big {
			listed++
			if p := tp.Partitions; len(p) != 1 || p[0].Leader != 0 || len(p[0].Replicas) != 1 || p[0].Replicas[0].ID != 0 || len(p[0].ISRs) != 1 || p[0].ISRs[0].ID != 0 {
				t.Errorf("kcat -L: %s partitions %+v", tp.Topic, p)
			}
		}
	}
	if listed != 2 {
		t.Errorf("kcat -L lists %+v", md.Topics)
	}

	// -P in every codec; one partition, so offsets follow the input order.
	codecs := []string{"none", "gzip", "snappy", "lz4", "zstd"}
	want := makeRecords("kcat", data, codecs, 8, false)
	for i, c := range codecs {
		kcatProduce(t, b.Addr, data, c, want[i*8:(i+1)*8])
	}
	for i := range want {
		want[i].Partition, want[i].Offset = 0, int64(i)
	}
	checkStored(t, b.Addr, want)

	// -C reads them back, tombstones as null.
	out, stderr, err = testkit.Kcat(t, time.Minute, "", "-b", b.Addr, "-C", "-t", data, "-J", "-e", "-o", "beginning")
	if err != nil {
		t.Fatalf("kcat -C: %v\n%s", err, stderr)
	}
	checkRead(t, "kcat -C", want, parseKcat(t, out))

	// A 900 KB record is taken; one over max.message.bytes is refused by
	// the broker (message.max.bytes lifts librdkafka's own check).
	dir := t.TempDir()
	bigFile, tooBigFile := filepath.Join(dir, "big"), filepath.Join(dir, "too-big")
	if err := os.WriteFile(bigFile, []byte(strings.Repeat("x", 900<<10)), 0o644); err != nil {
		t.Fatal(err)
	}
	tooBig := make([]byte, 1100<<10)
	rand.Read(tooBig)
	if err := os.WriteFile(tooBigFile, tooBig, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := testkit.Kcat(t, time.Minute, "", "-b", b.Addr, "-P", "-t", big, bigFile); err != nil {
		t.Fatalf("kcat -P of a 900 KB record: %v\n%s", err, stderr)
	}
	_, stderr, err = testkit.Kcat(t, time.Minute, "", "-b", b.Addr, "-P", "-t", big, "-z", "none", "-X", "message.max.bytes=4000000", tooBigFile)
	if err == nil {
		t.Errorf("kcat -P of a 1.1 MB record succeeded")
	}
	if _, stderr, err := testkit.Kcat(t, time.Minute, "after\n", "-b", b.Addr, "-P", "-t", big); err != nil {
		t.Fatalf("kcat -P after the refusal: %v\n%s", err, stderr)
	}
	res := limitsResult{TooLarge: stderr, BigOffset: -1, AfterOffset: -1}
	out, _, _ = testkit.Kcat(t, time.Minute, "", "-b", b.Addr, "-C", "-t", big, "-e", "-f", "%o %S\n")
	for line := range strings.Lines(out) {
		var off int64
		var n int
		fmt.Sscan(line, &off, &n)
		res.ReadOffsets, res.ReadLens = append(res.ReadOffsets, off), append(res.ReadLens, n)
	}
	if len(res.ReadOffsets) == 2 {
		res.BigOffset, res.AfterOffset = res.ReadOffsets[0], res.ReadOffsets[1]
	}
	checkLimits(t, b.Addr, big, "kcat", res, "Broker: Message size too large")
}

// TestCrossClientInterop: every client reads what every other client
// wrote. interop-gzip holds gzip batches from all four writers (Debian's
// kafka-python reads no other codec); interop-mixed holds each writer's
// own codec and is read by the three that decode everything. kcat reads
// in a consumer group (-G) that commits.
func TestCrossClientInterop(t *testing.T) {
	t.Parallel()
	realTime(t)
	b := testkit.StartBroker(t, nil)
	adm := testkit.Admin(t, b.Addr)
	const gz, mixed = "interop-gzip", "interop-mixed"
	createTopic(t, adm, gz, 2, nil)
	createTopic(t, adm, mixed, 2, nil)

	py := append(makeRecords("py", gz, []string{"gzip"}, 6, true), makeRecords("py", mixed, []string{"none"}, 6, true)...)
	ck := append(makeRecords("ck", gz, []string{"gzip"}, 6, true), makeRecords("ck", mixed, []string{"zstd"}, 6, true)...)
	kc := append(makeRecords("kcat", gz, []string{"gzip"}, 6, false), makeRecords("kcat", mixed, []string{"snappy"}, 6, false)...)
	kg := append(makeRecords("kgo", gz, []string{"gzip"}, 6, true), makeRecords("kgo", mixed, []string{"lz4"}, 6, true)...)

	var placed struct{ Placed [][2]int64 }
	lastJSON(t, testkit.Python(t, time.Minute, pyKafkaPythonProduce, b.Addr, toJSON(t, py)), &placed)
	placeRecords(t, py, placed.Placed)
	lastJSON(t, testkit.Python(t, time.Minute, pyConfluentProduce, b.Addr, toJSON(t, ck)), &placed)
	placeRecords(t, ck, placed.Placed)
	kcatProduce(t, b.Addr, gz, "gzip", kc[:6])
	kcatProduce(t, b.Addr, mixed, "snappy", kc[6:])
	placeRecords(t, kc, nil)
	// One ProduceSync per codec, so that records share batches: franz-go
	// sends a batch uncompressed when compressing would not shrink it, as
	// with a lone tombstone.
	for _, codec := range []string{"gzip", "lz4"} {
		cl := testkit.Client(t, b.Addr, kgo.ProducerBatchCompression(map[string]kgo.CompressionCodec{
			"gzip": kgo.GzipCompression(), "lz4": kgo.Lz4Compression()}[codec]))
		index := map[*kgo.Record]int{}
		var recs []*kgo.Record
		for i, r := range kg {
			if r.Codec != codec {
				continue
			}
			rec := &kgo.Record{Topic: r.Topic, Key: []byte(r.Key)}
			if r.Value != nil {
				rec.Value = []byte(*r.Value)
			}
			for _, h := range r.Headers {
				rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: h[0], Value: []byte(h[1])})
			}
			index[rec] = i
			recs = append(recs, rec)
		}
		results := cl.ProduceSync(testkit.Context(t, 30*time.Second), recs...)
		if err := results.FirstErr(); err != nil {
			t.Fatalf("kgo produce: %v", err)
		}
		for _, res := range results {
			r := &kg[index[res.Record]]
			r.Partition, r.Offset = res.Record.Partition, res.Record.Offset
		}
	}

	var all, onlyGzip []clientRecord
	for _, set := range [][]clientRecord{py, ck, kc, kg} {
		all = append(all, set...)
		for _, r := range set {
			if r.Topic == gz {
				onlyGzip = append(onlyGzip, r)
			}
		}
	}
	checkStored(t, b.Addr, all)

	var got []clientRecord
	lastJSON(t, testkit.Python(t, time.Minute, pyKafkaPythonConsume, b.Addr, "", `["interop-gzip"]`, fmt.Sprint(len(onlyGzip))), &got)
	checkRead(t, "kafka-python", onlyGzip, got)

	var cons struct{ Records []clientRecord }
	lastJSON(t, testkit.Python(t, time.Minute, pyConfluentConsume, b.Addr, "interop-ck", `["interop-gzip", "interop-mixed"]`, fmt.Sprint(len(all))), &cons)
	checkRead(t, "confluent-kafka", all, cons.Records)

	out, stderr, err := testkit.Kcat(t, time.Minute, "", "-b", b.Addr, "-G", "interop-kcat", "-J", "-c", fmt.Sprint(len(all)),
		"-X", "auto.offset.reset=earliest", gz, mixed)
	if err != nil {
		t.Fatalf("kcat -G: %v\n%s", err, stderr)
	}
	checkRead(t, "kcat -G", all, parseKcat(t, out))
	// kcat commits what it printed as it closes.
	testkit.CheckFor(t, 10*time.Second, 100*time.Millisecond, func() error {
		c := committed(t, adm, "interop-kcat")
		if c[gz]+c[mixed] != int64(len(all)) {
			return fmt.Errorf("kcat group committed %v, want %d in all", c, len(all))
		}
		return nil
	})
}

// pyProcess is a long-running Python client whose stdout lines are
// JSON events.
type pyProcess struct {
	name   string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	events chan map[string]any
	done   chan struct{}
	stderr string // file the process writes its stderr to
}

// startPython runs script with Debian's python3 until the test ends
// (closing stdin asks the scripts below to leave cleanly).
func startPython(t *testing.T, name, script string, args ...string) *pyProcess {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".py")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &pyProcess{name: name, events: make(chan map[string]any, 1000), done: make(chan struct{}), stderr: path + ".stderr"}
	stderr, err := os.Create(p.stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	p.cmd = exec.Command("/usr/bin/python3", append([]string{path}, args...)...)
	p.cmd.Stderr = stderr
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v (is python3 installed? run `make deps`)", name, err)
	}
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var ev map[string]any
			if json.Unmarshal(sc.Bytes(), &ev) == nil {
				p.events <- ev
			}
		}
		close(p.events)
		p.cmd.Wait()
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			out, _ := os.ReadFile(p.stderr)
			t.Logf("%s stderr (missing modules? run `make deps`):\n%s", name, out)
		}
	})
	return p
}

// leave closes stdin and waits for the process to exit.
func (p *pyProcess) leave(t *testing.T) {
	t.Helper()
	p.stdin.Close()
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not exit after its stdin closed", p.name)
	}
}

// crash kills the process with SIGKILL: it leaves no LeaveGroup behind.
func (p *pyProcess) crash() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// pyGroupMemberPrelude (testdata/clients/group_member_prelude.py) is
// shared by the group member scripts: a thread that notices stdin closing,
// and event output.

var pyKafkaPythonMember = pyGroupMemberPrelude + `
from kafka import KafkaConsumer
c = KafkaConsumer(topic, bootstrap_servers=addr, group_id=group, client_id=name, auto_offset_reset="earliest",
                  session_timeout_ms=session_ms, heartbeat_interval_ms=300, enable_auto_commit=False)
last = None
while not stop.is_set():
    batches = c.poll(timeout_ms=200)
    for tp, msgs in batches.items():
        for m in msgs:
            emit(member=name, value=m.value.decode())
    if batches:
        c.commit()
    now = sorted(tp.partition for tp in c.assignment())
    if now != last:
        emit(member=name, assigned=now)
        last = now
c.close()
`

var pyConfluentMember = pyGroupMemberPrelude + `
from confluent_kafka import Consumer
def on_assign(consumer, partitions):
    emit(member=name, assigned=sorted(p.partition for p in partitions))
def on_revoke(consumer, partitions):
    emit(member=name, assigned=[])
c = Consumer({"bootstrap.servers": addr, "group.id": group, "client.id": name, "auto.offset.reset": "earliest",
              "session.timeout.ms": session_ms, "heartbeat.interval.ms": 300, "enable.auto.commit": False,
              "partition.assignment.strategy": "range"})
c.subscribe([topic], on_assign=on_assign, on_revoke=on_revoke)
while not stop.is_set():
    m = c.poll(0.2)
    if m is None or m.error():
        continue
    emit(member=name, value=m.value().decode())
    c.commit(message=m, asynchronous=False)
c.close()
`

// TestMixedClientGroupRebalance runs a confluent-kafka and kafka-python
// members in one group: the second member joining splits the partitions,
// a clean leave hands them back at once, and a member killed without
// leaving is dropped after its session timeout. Every record is consumed,
// and the group's committed offsets reach the end. (broker/group's e2e
// tests cover franz-go members, static membership and each client alone.)
func TestMixedClientGroupRebalance(t *testing.T) {
	t.Parallel()
	realTime(t)
	// Fails at once, with the hint to run `make deps`, if a module is missing.
	testkit.Python(t, 30*time.Second, "import kafka, confluent_kafka")
	// Kafka's group.min.session.timeout.ms (6 s) is lowered so a crashed
	// member's 3 s session runs out quickly.
	b := testkit.StartBroker(t, map[string]string{"group.min.session.timeout.ms": "1000"})
	adm := testkit.Admin(t, b.Addr)
	const topic, group = "rebalance", "mixed-group"
	createTopic(t, adm, topic, 4, nil)
	ctx := testkit.Context(t, 90*time.Second)

	var mu sync.Mutex
	assigned := map[string][]int{}
	values := map[string]int{}
	byMember := map[string]int{}
	watch := func(p *pyProcess) {
		go func() {
			for ev := range p.events {
				mu.Lock()
				if v, ok := ev["value"].(string); ok {
					values[v]++
					byMember[p.name]++
				}
				if a, ok := ev["assigned"].([]any); ok {
					var ps []int
					for _, x := range a {
						ps = append(ps, int(x.(float64)))
					}
					assigned[p.name] = ps
				}
				mu.Unlock()
			}
		}()
	}
	produce := func(from, n int) {
		cl := testkit.Client(t, b.Addr, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
		for i := from; i < from+n; i++ {
			if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprint(i))}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	// members checks the group is stable with exactly these members, each
	// owning the given number of partitions, by the broker's and the
	// clients' accounts.
	members := func(want map[string]int) error {
		d, err := adm.DescribeGroups(ctx, group)
		if err != nil {
			return err
		}
		g := d[group]
		if g.State != "Stable" || len(g.Members) != len(want) {
			return fmt.Errorf("group %s with %d members, want Stable with %d", g.State, len(g.Members), len(want))
		}
		mu.Lock()
		defer mu.Unlock()
		var owned []int
		for _, m := range g.Members {
			n, ok := want[m.ClientID]
			if !ok {
				return fmt.Errorf("member %s (%s) in the group", m.ClientID, m.MemberID)
			}
			ca, _ := m.Assigned.AsConsumer()
			var ps []int
			for _, tp := range ca.Topics {
				for _, p := range tp.Partitions {
					ps = append(ps, int(p))
				}
			}
			sort.Ints(ps)
			if len(ps) != n {
				return fmt.Errorf("broker assigned %s partitions %v, want %d", m.ClientID, ps, n)
			}
			if !slices.Equal(assigned[m.ClientID], ps) {
				return fmt.Errorf("%s says it owns %v, the broker says %v", m.ClientID, assigned[m.ClientID], ps)
			}
			owned = append(owned, ps...)
		}
		sort.Ints(owned)
		if !slices.Equal(owned, []int{0, 1, 2, 3}) {
			return fmt.Errorf("partitions owned: %v", owned)
		}
		return nil
	}
	consumedAll := func(n int) error {
		mu.Lock()
		defer mu.Unlock()
		for i := 0; i < n; i++ {
			if values[fmt.Sprint(i)] == 0 {
				return fmt.Errorf("record %d not consumed yet (%d distinct so far)", i, len(values))
			}
		}
		return nil
	}
	committedAll := func() error {
		c := committed(t, adm, group)
		if end := endOffsets(t, adm, topic); c[topic] != end {
			return fmt.Errorf("group committed %d of %d", c[topic], end)
		}
		return nil
	}

	ck := startPython(t, "ck-member", pyConfluentMember, b.Addr, group, topic, "ck-member", "3000")
	watch(ck)
	testkit.CheckFor(t, 20*time.Second, 100*time.Millisecond, func() error { return members(map[string]int{"ck-member": 4}) })
	produce(0, 40)
	testkit.CheckFor(t, 20*time.Second, 100*time.Millisecond, func() error { return consumedAll(40) })

	// A kafka-python member joins: two partitions each. Its session is
	// long, so that only its LeaveGroup can explain a prompt rebalance.
	py := startPython(t, "py-member", pyKafkaPythonMember, b.Addr, group, topic, "py-member", "15000")
	watch(py)
	testkit.CheckFor(t, 30*time.Second, 100*time.Millisecond, func() error {
		return members(map[string]int{"ck-member": 2, "py-member": 2})
	})
	produce(40, 40)
	testkit.CheckFor(t, 20*time.Second, 100*time.Millisecond, func() error { return consumedAll(80) })
	mu.Lock()
	if byMember["py-member"] == 0 {
		t.Errorf("the kafka-python member consumed nothing of its two partitions")
	}
	mu.Unlock()

	// It leaves cleanly (LeaveGroup): the other takes all four well
	// before the 15 s session timeout could have done it.
	left := time.Now()
	py.leave(t)
	testkit.CheckFor(t, 20*time.Second, 100*time.Millisecond, func() error { return members(map[string]int{"ck-member": 4}) })
	if took := time.Since(left); took > 8*time.Second {
		t.Errorf("rebalance after a clean leave took %v: the leave was not seen", took)
	}

	// Another kafka-python member joins and is killed: it is dropped
	// after its 3 s session timeout, and the records produced meanwhile
	// are all consumed.
	py2 := startPython(t, "py-member-2", pyKafkaPythonMember, b.Addr, group, topic, "py-member-2", "3000")
	watch(py2)
	testkit.CheckFor(t, 30*time.Second, 100*time.Millisecond, func() error {
		return members(map[string]int{"ck-member": 2, "py-member-2": 2})
	})
	py2.crash()
	killed := time.Now()
	produce(80, 40)
	testkit.CheckFor(t, 30*time.Second, 100*time.Millisecond, func() error { return members(map[string]int{"ck-member": 4}) })
	if took := time.Since(killed); took < 2*time.Second {
		t.Errorf("killed member dropped after %v, before its 3 s session timeout", took)
	}
	testkit.CheckFor(t, 20*time.Second, 100*time.Millisecond, func() error { return consumedAll(120) })
	testkit.CheckFor(t, 20*time.Second, 200*time.Millisecond, committedAll)
	mu.Lock()
	t.Logf("records consumed per member: %v", byMember)
	mu.Unlock()
}

// The Python client scripts live in testdata/clients so that they can be
// read (and run by hand) as Python.
var (
	pyKafkaPythonAdmin   = clientScript("kafka_python_admin.py")
	pyKafkaPythonProduce = clientScript("kafka_python_produce.py")
	pyKafkaPythonConsume = clientScript("kafka_python_consume.py")
	pyKafkaPythonLimits  = clientScript("kafka_python_limits.py")
	pyConfluentAdmin     = clientScript("confluent_admin.py")
	pyConfluentProduce   = clientScript("confluent_produce.py")
	pyConfluentConsume   = clientScript("confluent_consume.py")
	pyConfluentLimits    = clientScript("confluent_limits.py")
	pyGroupMemberPrelude = clientScript("group_member_prelude.py")
)

func clientScript(name string) string {
	b, err := os.ReadFile(filepath.Join("testdata", "clients", name))
	if err != nil {
		panic(err)
	}
	return string(b)
}
