package broker_test

// Storage end to end, in real time, through the Kafka protocol: segments
// roll by size and by time, retention deletes old segments by time and by
// size (never leaving the log without an active segment), the log start
// offset moves and consumers from the start see it, compaction keeps the
// latest value per key at its original offset and drops tombstones after
// delete.retention.ms (compressed batches too), DeleteRecords. Sizes and
// intervals are shrunk with Kafka's own property names:
// log.retention.check.interval.ms and log.cleaner.backoff.ms on the
// broker, segment.bytes (1 MiB is its minimum), segment.ms, retention.ms,
// retention.bytes, cleanup.policy, min.compaction.lag.ms,
// delete.retention.ms, min.cleanable.dirty.ratio and file.delete.delay.ms
// on topics. Each test takes a few seconds.

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/internal/testkit"
)

// storageBroker is a broker whose retention and cleaner threads run
// every 100 ms instead of every 5 minutes / 15 s.
func storageBroker(t *testing.T) (*testkit.Broker, *kadm.Client) {
	t.Helper()
	b := testkit.StartBroker(t, map[string]string{
		"log.retention.check.interval.ms": "100",
		"log.cleaner.backoff.ms":          "100",
	})
	return b, testkit.Admin(t, b.Addr)
}

// topicConfigs turns key=value pairs into CreateTopics configs.
func topicConfigs(kv ...string) map[string]*string {
	m := map[string]*string{}
	for _, s := range kv {
		k, v, _ := strings.Cut(s, "=")
		m[k] = kmsg.StringPtr(v)
	}
	return m
}

const recordSize = 100 << 10

// produceBig writes n incompressible 100 KiB records to partition 0 of
// topic, one batch each (so a 1 MiB segment holds ten), with timestamp ts
// (zero: now). It returns the offsets.
func produceBig(t *testing.T, addr, topic string, n int, ts time.Time) []int64 {
	t.Helper()
	cl := testkit.Client(t, addr, kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(kgo.NoCompression()))
	ctx := testkit.Context(t, 30*time.Second)
	var offs []int64
	for i := 0; i < n; i++ {
		v := make([]byte, recordSize)
		rand.Read(v)
		r, err := cl.ProduceSync(ctx, &kgo.Record{Key: []byte(strconv.Itoa(i)), Value: v, Timestamp: ts}).First()
		if err != nil {
			t.Fatalf("produce record %d: %v", i, err)
		}
		offs = append(offs, r.Offset)
	}
	return offs
}

// segments lists the base offsets of partition 0's segment files (live
// .log files; deleted ones are renamed first), checking Kafka's naming and
// that each has its indexes.
func segments(t *testing.T, b *testkit.Broker, topic string) []int64 {
	t.Helper()
	dir := filepath.Join(b.DataDir, topic+"-0")
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("partition dir: %v", err)
	}
	files := map[string]bool{}
	for _, e := range ents {
		files[e.Name()] = true
	}
	var bases []int64
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".log")
		if !ok {
			continue
		}
		base, err := strconv.ParseInt(name, 10, 64)
		if err != nil || len(name) != 20 {
			t.Fatalf("segment file %s is not named by a 20-digit base offset", e.Name())
		}
		for _, ext := range []string{".index", ".timeindex"} {
			if !files[name+ext] {
				t.Errorf("segment %s has no %s file", name, ext)
			}
		}
		bases = append(bases, base)
	}
	slices.Sort(bases)
	return bases
}

// segmentSizes returns each live .log file's size by base offset.
func segmentSizes(t *testing.T, b *testkit.Broker, topic string) map[int64]int64 {
	t.Helper()
	sizes := map[int64]int64{}
	for _, base := range segments(t, b, topic) {
		fi, err := os.Stat(filepath.Join(b.DataDir, topic+"-0", fmt.Sprintf("%020d.log", base)))
		if err != nil {
			t.Fatal(err)
		}
		sizes[base] = fi.Size()
	}
	return sizes
}

// logDirSize is partition 0's size by DescribeLogDirs.
func logDirSize(t *testing.T, adm *kadm.Client, topic string) int64 {
	t.Helper()
	dirs, err := adm.DescribeAllLogDirs(testkit.Context(t, 10*time.Second), kadm.TopicsSet{topic: {0: {}}})
	if err != nil {
		t.Fatalf("describe log dirs: %v", err)
	}
	size := int64(-1)
	dirs.Each(func(d kadm.DescribedLogDir) {
		d.Topics.Each(func(p kadm.DescribedLogDirPartition) {
			if p.Topic == topic && p.Partition == 0 {
				size = p.Size
			}
		})
	})
	if size < 0 {
		t.Fatalf("describe log dirs does not list %s-0", topic)
	}
	return size
}

// offsets returns partition 0's earliest and latest offsets (ListOffsets).
func offsets(t *testing.T, adm *kadm.Client, topic string) (int64, int64) {
	t.Helper()
	ctx := testkit.Context(t, 10*time.Second)
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := starts.Lookup(topic, 0)
	e, _ := ends.Lookup(topic, 0)
	if s.Err != nil || e.Err != nil {
		t.Fatalf("list offsets of %s: %v %v", topic, s.Err, e.Err)
	}
	return s.Offset, e.Offset
}

// firstOffsetFromStart is the offset a consumer starting at the beginning
// gets first.
func firstOffsetFromStart(t *testing.T, addr, topic string) int64 {
	t.Helper()
	return consumeN(t, addr, topic, 1)[0].Offset
}

// fetchAt fetches partition 0 at offset with a raw request and returns
// the partition's error.
func fetchAt(t *testing.T, addr, topic string, offset int64) error {
	t.Helper()
	cl := testkit.Client(t, addr)
	ctx := testkit.Context(t, 10*time.Second)
	td, err := kadm.NewClient(cl).ListTopics(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrFetchRequest()
	req.MaxBytes, req.MaxWaitMillis = 1<<20, 100
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = topic, td[topic].ID // v13+ name topics by id
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.FetchOffset, rp.PartitionMaxBytes = offset, 1<<20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	// The client sends the request to any broker; there is one.
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("fetch: %v", err)
	}
	return kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode)
}

func TestSegmentsRollBySize(t *testing.T) {
	t.Parallel()
	b, adm := storageBroker(t)
	const topic = "roll-size"
	createTopic(t, adm, topic, 1, topicConfigs("segment.bytes=1048576"))
	offs := produceBig(t, b.Addr, topic, 35, time.Time{})
	if offs[0] != 0 || offs[34] != 34 {
		t.Fatalf("offsets %d..%d, want 0..34", offs[0], offs[34])
	}
	// Ten 100 KiB batches fill a 1 MiB segment; the eleventh rolls.
	if got := segments(t, b, topic); !slices.Equal(got, []int64{0, 10, 20, 30}) {
		t.Fatalf("segments %v, want [0 10 20 30]", got)
	}
	sizes := segmentSizes(t, b, topic)
	var total int64
	for base, size := range sizes {
		total += size
		if base < 30 && (size > 1<<20 || size < 10*recordSize) {
			t.Errorf("closed segment %d holds %d bytes, want ten records within segment.bytes", base, size)
		}
	}
	if got := logDirSize(t, adm, topic); got != total {
		t.Errorf("DescribeLogDirs size %d, segment files add up to %d", got, total)
	}
	// Reads cross segment boundaries.
	for i, r := range consumeN(t, b.Addr, topic, 35) {
		if r.Offset != int64(i) || len(r.Value) != recordSize {
			t.Fatalf("record %d: offset %d, %d bytes", i, r.Offset, len(r.Value))
		}
	}
	// Topic-level segment.bytes is enforced when altered too.
	if _, err := adm.AlterTopicConfigs(testkit.Context(t, 10*time.Second),
		[]kadm.AlterConfig{{Op: kadm.SetConfig, Name: "segment.bytes", Value: kmsg.StringPtr("2097152")}}, topic); err != nil {
		t.Fatal(err)
	}
	produceBig(t, b.Addr, topic, 16, time.Time{})
	if got := segments(t, b, topic); !slices.Equal(got, []int64{0, 10, 20, 30, 50}) {
		t.Fatalf("segments after raising segment.bytes to 2 MiB: %v, want [0 10 20 30 50]", got)
	}
}

func TestSegmentsRollByTime(t *testing.T) {
	t.Parallel()
	realTime(t)
	b, adm := storageBroker(t)
	const topic = "roll-time"
	createTopic(t, adm, topic, 1, topicConfigs("segment.ms=1000"))
	cl := testkit.Client(t, b.Addr, kgo.DefaultProduceTopic(topic))
	ctx := testkit.Context(t, 20*time.Second)
	first := time.Now()
	for i := 0; i < 3; i++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("early")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// Kafka rolls on the first append after segment.ms has passed since
	// the segment's first batch; keep appending until it does.
	var rolledAt time.Time
	testkit.CheckFor(t, 10*time.Second, 100*time.Millisecond, func() error {
		now := time.Now()
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("later")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if segs := segments(t, b, topic); len(segs) < 2 {
			return fmt.Errorf("segments %v", segs)
		}
		rolledAt = now
		return nil
	})
	if waited := rolledAt.Sub(first); waited < 900*time.Millisecond || waited > 3*time.Second {
		t.Errorf("rolled by time after %v, want about segment.ms (1 s)", waited)
	}
	segs := segments(t, b, topic)
	_, end := offsets(t, adm, topic)
	if len(segs) != 2 || segs[1] != end-1 {
		t.Errorf("segments %v with end offset %d: the roll should start a segment at the last record", segs, end)
	}
}

// TestRetentionByTimeKeepsTheActiveSegment: segments whose records are
// older than retention.ms go, from the oldest, while the active segment
// holding recent records stays; the log start offset moves to the first
// kept segment, persists over a restart, and a consumer from the start
// begins there while older offsets are out of range.
func TestRetentionByTimeKeepsTheActiveSegment(t *testing.T) {
	t.Parallel()
	b, adm := storageBroker(t)
	const topic = "retention-time"
	createTopic(t, adm, topic, 1, topicConfigs("segment.bytes=1048576", "retention.ms=-1", "file.delete.delay.ms=100"))
	// 25 records two hours old (two closed segments and the start of the
	// active one), then five from now into the active segment. Only then
	// is retention.ms lowered to an hour, so no retention check sees the
	// active segment holding old records alone.
	produceBig(t, b.Addr, topic, 25, time.Now().Add(-2*time.Hour))
	produceBig(t, b.Addr, topic, 5, time.Time{})
	if _, err := adm.AlterTopicConfigs(testkit.Context(t, 10*time.Second),
		[]kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: kmsg.StringPtr("3600000")}}, topic); err != nil {
		t.Fatal(err)
	}
	testkit.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		if segs := segments(t, b, topic); !slices.Equal(segs, []int64{20}) {
			return fmt.Errorf("segments %v, want [20]", segs)
		}
		return nil
	})
	if start, end := offsets(t, adm, topic); start != 20 || end != 30 {
		t.Errorf("offsets %d..%d after retention, want 20..30", start, end)
	}
	if got := firstOffsetFromStart(t, b.Addr, topic); got != 20 {
		t.Errorf("consumer from the start got offset %d first, want 20", got)
	}
	if err := fetchAt(t, b.Addr, topic, 5); !errors.Is(err, kerr.OffsetOutOfRange) {
		t.Errorf("fetch below the log start: %v, want OFFSET_OUT_OF_RANGE", err)
	}
	if size, files := logDirSize(t, adm, topic), segmentSizes(t, b, topic)[20]; size != files {
		t.Errorf("DescribeLogDirs size %d, the remaining segment has %d bytes", size, files)
	}
	b.Restart()
	adm = testkit.Admin(t, b.Addr)
	if start, end := offsets(t, adm, topic); start != 20 || end != 30 {
		t.Errorf("offsets %d..%d after restart, want 20..30", start, end)
	}
}

// TestRetentionByTimeExpiresEverything: when every record is past
// retention.ms, Kafka rolls a new empty active segment and deletes the
// rest; the log start offset reaches the end offset and producing goes on
// from there.
func TestRetentionByTimeExpiresEverything(t *testing.T) {
	t.Parallel()
	realTime(t)
	b, adm := storageBroker(t)
	const topic = "retention-all"
	createTopic(t, adm, topic, 1, topicConfigs("retention.ms=1500", "file.delete.delay.ms=100"))
	cl := testkit.Client(t, b.Addr, kgo.DefaultProduceTopic(topic))
	ctx := testkit.Context(t, 20*time.Second)
	var last time.Time
	for i := 0; i < 3; i++ {
		last = time.Now()
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	testkit.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		if start, _ := offsets(t, adm, topic); start != 3 {
			return fmt.Errorf("log start %d", start)
		}
		return nil
	})
	if took := time.Since(last); took < 1500*time.Millisecond {
		t.Errorf("records deleted %v after they were written, before retention.ms", took)
	}
	testkit.CheckFor(t, 5*time.Second, 50*time.Millisecond, func() error {
		if segs := segments(t, b, topic); !slices.Equal(segs, []int64{3}) {
			return fmt.Errorf("segments %v, want one empty active segment at 3", segs)
		}
		return nil
	})
	if start, end := offsets(t, adm, topic); start != 3 || end != 3 {
		t.Errorf("offsets %d..%d, want 3..3", start, end)
	}
	r, err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("again")}).First()
	if err != nil || r.Offset != 3 {
		t.Fatalf("produce after full retention: offset %v, %v", r, err)
	}
	if got := firstOffsetFromStart(t, b.Addr, topic); got != 3 {
		t.Errorf("consumer from the start got offset %d, want 3", got)
	}
}

// TestRetentionBySize: retention.bytes deletes whole segments, oldest
// first, while what remains would still be at least retention.bytes.
func TestRetentionBySize(t *testing.T) {
	t.Parallel()
	b, adm := storageBroker(t)
	const topic = "retention-size"
	// 1.5 MiB: of 45 records (segments at 0, 10, 20, 30, 40), 0 and 10
	// can go; deleting 20 too would leave less than retention.bytes.
	createTopic(t, adm, topic, 1, topicConfigs("segment.bytes=1048576", "retention.bytes=1572864", "file.delete.delay.ms=100"))
	produceBig(t, b.Addr, topic, 45, time.Time{})
	testkit.CheckFor(t, 10*time.Second, 50*time.Millisecond, func() error {
		if segs := segments(t, b, topic); !slices.Equal(segs, []int64{20, 30, 40}) {
			return fmt.Errorf("segments %v, want [20 30 40]", segs)
		}
		return nil
	})
	var total int64
	for _, s := range segmentSizes(t, b, topic) {
		total += s
	}
	if got := logDirSize(t, adm, topic); got != total || total < 1572864 {
		t.Errorf("DescribeLogDirs size %d, files %d: want equal and at least retention.bytes", got, total)
	}
	if start, end := offsets(t, adm, topic); start != 20 || end != 45 {
		t.Errorf("offsets %d..%d, want 20..45", start, end)
	}
	if got := firstOffsetFromStart(t, b.Addr, topic); got != 20 {
		t.Errorf("consumer from the start got offset %d first, want 20", got)
	}
}

func TestDeleteRecordsAcrossSegments(t *testing.T) {
	t.Parallel()
	b, adm := storageBroker(t)
	const topic = "delete-records"
	createTopic(t, adm, topic, 1, topicConfigs("segment.bytes=1048576", "file.delete.delay.ms=100"))
	produceBig(t, b.Addr, topic, 35, time.Time{})
	ctx := testkit.Context(t, 20*time.Second)
	deleteBefore := func(at int64) kadm.DeleteRecordsResponse {
		offs := kadm.Offsets{}
		offs.Add(kadm.Offset{Topic: topic, Partition: 0, At: at})
		resp, err := adm.DeleteRecords(ctx, offs)
		if err != nil {
			t.Fatal(err)
		}
		r, _ := resp.Lookup(topic, 0)
		return r
	}
	// Mid-segment: the segment holding offset 15 stays, the one below goes.
	if r := deleteBefore(15); r.Err != nil || r.LowWatermark != 15 {
		t.Fatalf("delete records before 15: low watermark %d, %v", r.LowWatermark, r.Err)
	}
	testkit.CheckFor(t, 5*time.Second, 50*time.Millisecond, func() error {
		if segs := segments(t, b, topic); !slices.Equal(segs, []int64{10, 20, 30}) {
			return fmt.Errorf("segments %v, want [10 20 30]", segs)
		}
		return nil
	})
	if start, _ := offsets(t, adm, topic); start != 15 {
		t.Errorf("earliest offset %d, want 15", start)
	}
	if got := firstOffsetFromStart(t, b.Addr, topic); got != 15 {
		t.Errorf("consumer from the start got offset %d first, want 15", got)
	}
	if err := fetchAt(t, b.Addr, topic, 12); !errors.Is(err, kerr.OffsetOutOfRange) {
		t.Errorf("fetch at 12, below the log start: %v, want OFFSET_OUT_OF_RANGE", err)
	}
	// Beyond the high watermark: refused; backwards: a no-op.
	if r := deleteBefore(36); !errors.Is(r.Err, kerr.OffsetOutOfRange) {
		t.Errorf("delete records before 36 (end 35): %v, want OFFSET_OUT_OF_RANGE", r.Err)
	}
	if r := deleteBefore(5); r.Err != nil || r.LowWatermark != 15 {
		t.Errorf("delete records before 5 after 15: low watermark %d, %v", r.LowWatermark, r.Err)
	}
	// -1 is the high watermark: everything goes but the active segment.
	if r := deleteBefore(-1); r.Err != nil || r.LowWatermark != 35 {
		t.Fatalf("delete records before the high watermark: low watermark %d, %v", r.LowWatermark, r.Err)
	}
	testkit.CheckFor(t, 5*time.Second, 50*time.Millisecond, func() error {
		if segs := segments(t, b, topic); !slices.Equal(segs, []int64{30}) {
			return fmt.Errorf("segments %v, want [30]", segs)
		}
		return nil
	})
	b.Restart()
	adm = testkit.Admin(t, b.Addr)
	if start, end := offsets(t, adm, topic); start != 35 || end != 35 {
		t.Errorf("offsets %d..%d after restart, want 35..35", start, end)
	}
}

// TestGroupsBehindTheLogStartReset: consumer groups whose committed
// offset fell below the log start (DeleteRecords here) get
// OFFSET_OUT_OF_RANGE and, with auto.offset.reset=earliest, go on from
// the new log start: kafka-python, confluent-kafka and franz-go.
func TestGroupsBehindTheLogStartReset(t *testing.T) {
	t.Parallel()
	realTime(t)
	b, adm := storageBroker(t)
	const topic = "behind"
	createTopic(t, adm, topic, 1, nil)
	cl := testkit.Client(t, b.Addr, kgo.DefaultProduceTopic(topic))
	ctx := testkit.Context(t, 30*time.Second)
	for i := 0; i < 20; i++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Key: []byte(fmt.Sprint(i)), Value: []byte(fmt.Sprint(i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	groups := []string{"behind-py", "behind-ck", "behind-kgo"}
	for _, g := range groups {
		offs := kadm.Offsets{}
		offs.Add(kadm.Offset{Topic: topic, Partition: 0, At: 5, LeaderEpoch: -1})
		if resp, err := adm.CommitOffsets(ctx, g, offs); err != nil || resp.Error() != nil {
			t.Fatalf("commit for %s: %v %v", g, err, resp.Error())
		}
	}
	offs := kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: topic, Partition: 0, At: 12})
	if _, err := adm.DeleteRecords(ctx, offs); err != nil {
		t.Fatal(err)
	}
	check := func(client string, got []clientRecord) {
		t.Helper()
		var at []int64
		for _, r := range got {
			at = append(at, r.Offset)
		}
		if !slices.Equal(at, []int64{12, 13, 14, 15, 16, 17, 18, 19}) {
			t.Errorf("%s group behind the log start read offsets %v, want 12..19", client, at)
		}
	}
	var py []clientRecord
	lastJSON(t, testkit.Python(t, time.Minute, pyKafkaPythonConsume, b.Addr, groups[0], `["behind"]`, "8"), &py)
	check("kafka-python", py)
	var ck struct{ Records []clientRecord }
	lastJSON(t, testkit.Python(t, time.Minute, pyConfluentConsume, b.Addr, groups[1], `["behind"]`, "8"), &ck)
	check("confluent-kafka", ck.Records)
	kc := testkit.Client(t, b.Addr, kgo.ConsumerGroup(groups[2]), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var kg []clientRecord
	for len(kg) < 8 && ctx.Err() == nil {
		kc.PollFetches(ctx).EachRecord(func(r *kgo.Record) { kg = append(kg, clientRecord{Offset: r.Offset}) })
	}
	check("franz-go", kg)
	for _, g := range groups[:2] {
		if c := committed(t, adm, g); c[topic] != 20 {
			t.Errorf("%s committed %d after reading, want 20", g, c[topic])
		}
	}
}

// TestCleanerBackoffZero: log.cleaner.backoff.ms=0 is valid in Kafka (the
// cleaner looks for work again at once); it must not fall back to the
// 15 s default.
func TestCleanerBackoffZero(t *testing.T) {
	t.Parallel()
	realTime(t)
	b := testkit.StartBroker(t, map[string]string{"log.cleaner.backoff.ms": "0"})
	adm := testkit.Admin(t, b.Addr)
	const topic = "backoff-zero"
	createTopic(t, adm, topic, 1, topicConfigs("cleanup.policy=compact", "segment.ms=100", "min.cleanable.dirty.ratio=0.01"))
	cl := testkit.Client(t, b.Addr, kgo.DefaultProduceTopic(topic))
	ctx := testkit.Context(t, 20*time.Second)
	produce := func(k, v string) {
		if err := cl.ProduceSync(ctx, &kgo.Record{Key: []byte(k), Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	produce("k", "old")
	produce("k", "new")
	start := time.Now()
	// Appends after segment.ms roll the segment holding both; the
	// cleaner then keeps only "new" of it.
	testkit.CheckFor(t, 10*time.Second, 150*time.Millisecond, func() error {
		produce("roller", "r")
		if first := consumeN(t, b.Addr, topic, 1)[0]; string(first.Value) != "new" || first.Offset != 1 {
			return fmt.Errorf("first record %q at %d, want \"new\" at 1", first.Value, first.Offset)
		}
		return nil
	})
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("compacted after %v with log.cleaner.backoff.ms=0", took)
	}
}

// compactedRecord is what a compacted log should hold for a key.
type compactedRecord struct {
	offset int64
	value  []byte // nil: tombstone
}

// readCompacted reads partition 0 from the start to its end offset.
func readCompacted(t *testing.T, addr, topic string, end int64) []*kgo.Record {
	t.Helper()
	cl := testkit.Client(t, addr, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}))
	ctx := testkit.Context(t, 10*time.Second)
	var out []*kgo.Record
	for len(out) == 0 || out[len(out)-1].Offset < end-1 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d records of %s up to offset %d before timeout", len(out), topic, end)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatalf("fetch %s: %v", topic, err) })
		out = append(out, fs.Records()...)
	}
	return out
}

// compactionMatches checks the log holds exactly want (key → latest
// record) at the original offsets, in batches of the given codec.
func compactionMatches(recs []*kgo.Record, want map[string]compactedRecord, codec uint8) error {
	if len(recs) != len(want) {
		return fmt.Errorf("%d records in the log, want %d", len(recs), len(want))
	}
	for _, r := range recs {
		w, ok := want[string(r.Key)]
		switch {
		case !ok:
			return fmt.Errorf("key %q at offset %d should be gone", r.Key, r.Offset)
		case r.Offset != w.offset:
			return fmt.Errorf("key %q at offset %d, want %d: compaction must keep offsets", r.Key, r.Offset, w.offset)
		case (r.Value == nil) != (w.value == nil) || string(r.Value) != string(w.value):
			return fmt.Errorf("key %q value %q, want %q", r.Key, r.Value, w.value)
		case r.Attrs.CompressionType() != codec:
			return fmt.Errorf("key %q in a batch with codec %d, want %d", r.Key, r.Attrs.CompressionType(), codec)
		}
	}
	return nil
}

// TestCompaction: the cleaner keeps the latest record per key at its
// original offset, keeps tombstones for delete.retention.ms and then
// drops them, leaves records younger than min.compaction.lag.ms and the
// active segment alone, and re-compresses compressed batches with their
// codec.
func TestCompaction(t *testing.T) {
	t.Parallel()
	realTime(t)
	for _, tc := range []struct {
		name  string
		codec kgo.CompressionCodec
		id    uint8
	}{{"none", kgo.NoCompression(), 0}, {"zstd", kgo.ZstdCompression(), 4}, {"gzip", kgo.GzipCompression(), 1}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b, adm := storageBroker(t)
			topic := "compact-" + tc.name
			// Segments roll every 300 ms of appends; records must be 1 s
			// old before they are compacted; tombstones live 1.5 s.
			createTopic(t, adm, topic, 1, topicConfigs("cleanup.policy=compact", "segment.ms=300",
				"min.compaction.lag.ms=1000", "delete.retention.ms=1500", "min.cleanable.dirty.ratio=0.01",
				"file.delete.delay.ms=100"))
			cl := testkit.Client(t, b.Addr, kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(tc.codec))
			ctx := testkit.Context(t, 30*time.Second)
			want := map[string]compactedRecord{}
			produce := func(recs ...*kgo.Record) {
				res := cl.ProduceSync(ctx, recs...)
				if err := res.FirstErr(); err != nil {
					t.Fatal(err)
				}
				for _, r := range res {
					want[string(r.Record.Key)] = compactedRecord{r.Record.Offset, r.Record.Value}
				}
			}
			// Five rounds over ten keys, each round one batch; the last
			// round deletes k0 and k1.
			for round := 0; round < 5; round++ {
				var recs []*kgo.Record
				for k := 0; k < 10; k++ {
					r := &kgo.Record{Key: []byte(fmt.Sprintf("k%d", k)), Value: []byte(strings.Repeat(fmt.Sprintf("round %d ", round), 30))}
					if round == 4 && k < 2 {
						r.Value = nil
					}
					recs = append(recs, r)
				}
				produce(recs...)
			}
			// Nothing is compacted while the records are younger than
			// min.compaction.lag.ms, even with segments rolled by an
			// append after segment.ms.
			wrote := time.Now()
			testkit.CheckFor(t, 5*time.Second, 100*time.Millisecond, func() error {
				produce(&kgo.Record{Key: []byte("roller"), Value: []byte("r")})
				if segs := segments(t, b, topic); len(segs) < 2 {
					return fmt.Errorf("segments %v: not rolled yet", segs)
				}
				return nil
			})
			_, end := offsets(t, adm, topic)
			if time.Since(wrote) < 700*time.Millisecond {
				if recs := readCompacted(t, b.Addr, topic, end); len(recs) < 50 {
					t.Fatalf("%d records left %v after writing, before min.compaction.lag.ms", len(recs), time.Since(wrote))
				}
			}
			// Compacted once the lag has passed: one record per key,
			// tombstones still there. Appending keeps rolling segments
			// so the roller's own records become cleanable too.
			testkit.CheckFor(t, 10*time.Second, 200*time.Millisecond, func() error {
				_, end := offsets(t, adm, topic)
				recs := readCompacted(t, b.Addr, topic, end)
				// The active segment is never cleaned: the last roller
				// may have older copies before it.
				var keep []*kgo.Record
				for _, r := range recs {
					if string(r.Key) != "roller" {
						keep = append(keep, r)
					}
				}
				if err := compactionMatches(keep, withoutRoller(want), tc.id); err != nil {
					produce(&kgo.Record{Key: []byte("roller"), Value: []byte("r")})
					return err
				}
				return nil
			})
			// After delete.retention.ms the tombstones go too (at a
			// cleaning that dirty data triggers, as in Kafka).
			delete(want, "k0")
			delete(want, "k1")
			testkit.CheckFor(t, 10*time.Second, 200*time.Millisecond, func() error {
				_, end := offsets(t, adm, topic)
				var keep []*kgo.Record
				for _, r := range readCompacted(t, b.Addr, topic, end) {
					if string(r.Key) != "roller" {
						keep = append(keep, r)
					}
				}
				if err := compactionMatches(keep, withoutRoller(want), tc.id); err != nil {
					produce(&kgo.Record{Key: []byte("roller"), Value: []byte("r")})
					return err
				}
				return nil
			})
		})
	}
}

// withoutRoller drops the key the tests append to roll segments.
func withoutRoller(m map[string]compactedRecord) map[string]compactedRecord {
	out := map[string]compactedRecord{}
	for k, v := range m {
		if k != "roller" {
			out[k] = v
		}
	}
	return out
}

// TestCloseAfterTopicDeleteIsPrompt: a deleted topic's files wait
// file.delete.delay.ms before removal, but closing the broker must not
// wait for that (Kafka drops the pending deletions at shutdown and
// removes leftover "-delete" directories at the next start). Otherwise
// `fjord dev` hangs on Ctrl-C for a minute after any topic deletion.
func TestCloseAfterTopicDeleteIsPrompt(t *testing.T) {
	t.Parallel()
	b := testkit.StartBroker(t, nil)
	adm := testkit.Admin(t, b.Addr)
	const topic = "deleted-then-close"
	createTopic(t, adm, topic, 1, topicConfigs("file.delete.delay.ms=20000"))
	cl := testkit.Client(t, b.Addr, kgo.DefaultProduceTopic(topic))
	if err := cl.ProduceSync(testkit.Context(t, 10*time.Second), &kgo.Record{Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	if _, err := adm.DeleteTopics(testkit.Context(t, 10*time.Second), topic); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	b.Close()
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("broker Close took %v after a topic deletion: it waits out file.delete.delay.ms", took)
	}
	// Nothing of the topic survives a restart.
	b.Restart()
	ents, err := os.ReadDir(b.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), topic) {
			testkit.CheckFor(t, 5*time.Second, 50*time.Millisecond, func() error {
				if _, err := os.Stat(filepath.Join(b.DataDir, e.Name())); err == nil {
					return fmt.Errorf("%s left in the data dir after restart", e.Name())
				}
				return nil
			})
		}
	}
}
