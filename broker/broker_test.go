package broker_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/internal/testkit"
)

func createTopic(t *testing.T, adm *kadm.Client, name string, partitions int32, configs map[string]*string) {
	t.Helper()
	ctx := testkit.Context(t, 10*time.Second)
	resp, err := adm.CreateTopic(ctx, partitions, 1, configs, name)
	if err != nil || resp.Err != nil {
		t.Fatalf("create topic %s: %v %v", name, err, resp.Err)
	}
}

// consumeN reads n records from the start of topic.
func consumeN(t *testing.T, addr, topic string, n int, opts ...kgo.Opt) []*kgo.Record {
	t.Helper()
	cl := testkit.Client(t, addr, append([]kgo.Opt{kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, opts...)...)
	ctx := testkit.Context(t, 20*time.Second)
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d records before timeout", len(out), n)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s[%d]: %v", topic, p, err) })
		out = append(out, fs.Records()...)
	}
	return out
}

func TestProduceConsumeEveryCodec(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	adm := testkit.Admin(t, b.Addr)
	codecs := map[string]kgo.CompressionCodec{
		"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(), "snappy": kgo.SnappyCompression(),
		"lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression(),
	}
	for name, codec := range codecs {
		t.Run(name, func(t *testing.T) {
			topic := "codec-" + name
			createTopic(t, adm, topic, 3, nil)
			cl := testkit.Client(t, b.Addr, kgo.ProducerBatchCompression(codec), kgo.DefaultProduceTopic(topic))
			ctx := testkit.Context(t, 20*time.Second)
			const n = 500
			var want []*kgo.Record
			for i := 0; i < n; i++ {
				r := &kgo.Record{
					Key:     []byte(fmt.Sprintf("key-%d", i%17)),
					Value:   bytes.Repeat([]byte{byte('a' + i%26)}, 100+i),
					Headers: []kgo.RecordHeader{{Key: "h", Value: []byte(fmt.Sprint(i))}, {Key: "empty", Value: nil}},
				}
				if i%50 == 0 {
					r.Value = nil // tombstone
				}
				want = append(want, r)
			}
			if err := cl.ProduceSync(ctx, want...).FirstErr(); err != nil {
				t.Fatalf("produce: %v", err)
			}
			got := consumeN(t, b.Addr, topic, n)
			if len(got) != n {
				t.Fatalf("got %d records, want %d", len(got), n)
			}
			byHeader := map[string]*kgo.Record{}
			for _, r := range got {
				byHeader[string(r.Headers[0].Value)] = r
			}
			for i, w := range want {
				g := byHeader[fmt.Sprint(i)]
				if g == nil {
					t.Fatalf("record %d missing", i)
				}
				if !bytes.Equal(g.Key, w.Key) || !bytes.Equal(g.Value, w.Value) || (w.Value == nil) != (g.Value == nil) {
					t.Fatalf("record %d: got key %q value len %d (nil %v), want key %q len %d (nil %v)", i, g.Key, len(g.Value), g.Value == nil, w.Key, len(w.Value), w.Value == nil)
				}
				if len(g.Headers) != 2 || g.Headers[1].Key != "empty" {
					t.Fatalf("record %d headers: %v", i, g.Headers)
				}
			}
			// Offsets are contiguous per partition.
			next := map[int32]int64{}
			for _, r := range got {
				if r.Offset != next[r.Partition] {
					t.Fatalf("partition %d: offset %d, want %d", r.Partition, r.Offset, next[r.Partition])
				}
				next[r.Partition]++
			}
		})
	}
}

func TestMessageSizeLimits(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	adm := testkit.Admin(t, b.Addr)
	createTopic(t, adm, "big", 1, nil)
	cl := testkit.Client(t, b.Addr, kgo.DefaultProduceTopic("big"), kgo.ProducerBatchMaxBytes(16<<20), kgo.RecordRetries(1))
	ctx := testkit.Context(t, 20*time.Second)

	big := bytes.Repeat([]byte("x"), 900<<10)
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: big}).FirstErr(); err != nil {
		t.Fatalf("900 KB record refused: %v", err)
	}
	got := consumeN(t, b.Addr, "big", 1, kgo.FetchMaxBytes(1<<10), kgo.FetchMaxPartitionBytes(1<<10))
	if !bytes.Equal(got[0].Value, big) {
		t.Fatalf("900 KB record came back as %d bytes", len(got[0].Value))
	}

	// Over the 1 MiB default max.message.bytes even compressed (kgo
	// compresses by default, and Kafka checks the batch as sent).
	tooBig := make([]byte, 1100<<10)
	rand.Read(tooBig)
	err := cl.ProduceSync(ctx, &kgo.Record{Value: tooBig}).FirstErr()
	if !errors.Is(err, kerr.MessageTooLarge) {
		t.Fatalf("oversized record: got %v, want MESSAGE_TOO_LARGE", err)
	}
	// The topic still works after the refusal.
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("after")}).FirstErr(); err != nil {
		t.Fatalf("produce after refusal: %v", err)
	}
}

func TestConsumerGroupAndRestart(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	adm := testkit.Admin(t, b.Addr)
	createTopic(t, adm, "orders", 4, nil)
	prod := testkit.Client(t, b.Addr, kgo.DefaultProduceTopic("orders"))
	ctx := testkit.Context(t, 60*time.Second)
	for i := 0; i < 200; i++ {
		prod.Produce(ctx, &kgo.Record{Key: []byte(fmt.Sprint(i)), Value: []byte(fmt.Sprint(i))}, nil)
	}
	if err := prod.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	// Two members split the partitions; together they read everything once.
	seen := make(chan string, 400)
	consume := func(name string) *kgo.Client {
		cl := testkit.Client(t, b.Addr, kgo.ConsumerGroup("g1"), kgo.ConsumeTopics("orders"),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.ClientID(name))
		go func() {
			for {
				fs := cl.PollFetches(ctx)
				if fs.IsClientClosed() || ctx.Err() != nil {
					return
				}
				fs.EachRecord(func(r *kgo.Record) { seen <- string(r.Value) })
				cl.CommitUncommittedOffsets(ctx)
			}
		}()
		return cl
	}
	c1 := consume("c1")
	c2 := consume("c2")
	got := map[string]bool{}
	for len(got) < 200 {
		select {
		case v := <-seen:
			got[v] = true
		case <-ctx.Done():
			t.Fatalf("group consumed %d of 200", len(got))
		}
	}
	testkit.CheckFor(t, 20*time.Second, 100*time.Millisecond, func() error {
		groups, err := adm.DescribeGroups(ctx, "g1")
		if err != nil {
			return err
		}
		g := groups["g1"]
		if g.State != "Stable" || len(g.Members) != 2 {
			return fmt.Errorf("group state %s with %d members", g.State, len(g.Members))
		}
		return nil
	})
	c1.CommitUncommittedOffsets(ctx)
	c2.CommitUncommittedOffsets(ctx)
	testkit.CheckFor(t, 20*time.Second, 100*time.Millisecond, func() error {
		lags, err := adm.Lag(ctx, "g1")
		if err != nil {
			return err
		}
		if total := lags["g1"].Lag.Total(); total != 0 {
			return fmt.Errorf("lag %d", total)
		}
		return nil
	})
	c1.Close()
	c2.Close()

	// Committed offsets survive a restart.
	b.Restart()
	adm = testkit.Admin(t, b.Addr)
	offs, err := adm.FetchOffsets(ctx, "g1")
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	offs.Each(func(o kadm.OffsetResponse) { sum += o.At })
	if sum != 200 {
		t.Fatalf("committed offsets after restart sum to %d, want 200", sum)
	}
	got2 := consumeN(t, b.Addr, "orders", 200)
	if len(got2) != 200 {
		t.Fatalf("after restart read %d records", len(got2))
	}
}

func TestAdminOperations(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	adm := testkit.Admin(t, b.Addr)
	ctx := testkit.Context(t, 30*time.Second)

	// Create: duplicates and invalid names give Kafka's errors.
	createTopic(t, adm, "admin-a", 2, map[string]*string{"retention.ms": kmsg.StringPtr("3600000")})
	if resp, _ := adm.CreateTopic(ctx, 1, 1, nil, "admin-a"); !errors.Is(resp.Err, kerr.TopicAlreadyExists) {
		t.Fatalf("duplicate create: %v", resp.Err)
	}
	if resp, _ := adm.CreateTopic(ctx, 1, 3, nil, "rf3"); !errors.Is(resp.Err, kerr.InvalidReplicationFactor) {
		t.Fatalf("rf 3 on one broker: %v", resp.Err)
	}
	if resp, _ := adm.CreateTopic(ctx, 1, 1, nil, "bad/name"); !errors.Is(resp.Err, kerr.InvalidTopicException) {
		t.Fatalf("bad name: %v", resp.Err)
	}
	if resp, _ := adm.CreateTopic(ctx, 1, 1, map[string]*string{"no.such.config": kmsg.StringPtr("1")}, "bad-config"); !errors.Is(resp.Err, kerr.InvalidConfig) {
		t.Fatalf("unknown config: %v", resp.Err)
	}

	// Describe configs shows the override with its source.
	rcs, err := adm.DescribeTopicConfigs(ctx, "admin-a")
	if err != nil {
		t.Fatal(err)
	}
	rc, _ := rcs.On("admin-a", nil)
	found := false
	for _, c := range rc.Configs {
		if c.Key == "retention.ms" {
			found = true
			if c.MaybeValue() != "3600000" || c.Source != kmsg.ConfigSourceDynamicTopicConfig {
				t.Fatalf("retention.ms = %q source %v", c.MaybeValue(), c.Source)
			}
		}
	}
	if !found {
		t.Fatal("retention.ms not described")
	}

	// Alter, then describe again.
	if _, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "cleanup.policy", Value: kmsg.StringPtr("compact")}}, "admin-a"); err != nil {
		t.Fatal(err)
	}
	rcs, _ = adm.DescribeTopicConfigs(ctx, "admin-a")
	rc, _ = rcs.On("admin-a", nil)
	for _, c := range rc.Configs {
		if c.Key == "cleanup.policy" && c.MaybeValue() != "compact" {
			t.Fatalf("cleanup.policy after alter: %q", c.MaybeValue())
		}
	}

	// Partitions grow.
	if _, err := adm.CreatePartitions(ctx, 3, "admin-a"); err != nil {
		t.Fatal(err)
	}
	td, err := adm.ListTopics(ctx, "admin-a")
	if err != nil || len(td["admin-a"].Partitions) != 5 {
		t.Fatalf("partitions after grow: %v %v", len(td["admin-a"].Partitions), err)
	}

	// Delete records moves the start offset.
	cl := testkit.Client(t, b.Addr, kgo.DefaultProduceTopic("admin-a"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i := 0; i < 10; i++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Key: []byte{byte(i)}, Value: []byte("v"), Partition: 0}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	offs := kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: "admin-a", Partition: 0, At: 4})
	dr, err := adm.DeleteRecords(ctx, offs)
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := dr.Lookup("admin-a", 0); r.Err != nil || r.LowWatermark != 4 {
		t.Fatalf("delete records: low watermark %d err %v", r.LowWatermark, r.Err)
	}
	starts, err := adm.ListStartOffsets(ctx, "admin-a")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := starts.Lookup("admin-a", 0); o.Offset != 4 {
		t.Fatalf("start offset %d, want 4", o.Offset)
	}
	ends, _ := adm.ListEndOffsets(ctx, "admin-a")
	if o, _ := ends.Lookup("admin-a", 0); o.Offset != 10 {
		t.Fatalf("end offset %d, want 10", o.Offset)
	}

	// Log dirs report the partitions.
	dirs, err := adm.DescribeAllLogDirs(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var size int64
	dirs.Each(func(d kadm.DescribedLogDir) {
		d.Topics.Each(func(p kadm.DescribedLogDirPartition) {
			if p.Topic == "admin-a" {
				size += p.Size
			}
		})
	})
	if size == 0 {
		t.Fatal("describe log dirs shows no data for admin-a")
	}

	// Delete the topic; it is gone and can be recreated empty.
	if _, err := adm.DeleteTopics(ctx, "admin-a"); err != nil {
		t.Fatal(err)
	}
	td, _ = adm.ListTopics(ctx)
	if td.Has("admin-a") {
		t.Fatal("topic still listed after delete")
	}
	createTopic(t, adm, "admin-a", 1, nil)
	ends, _ = adm.ListEndOffsets(ctx, "admin-a")
	if o, _ := ends.Lookup("admin-a", 0); o.Offset != 0 {
		t.Fatalf("recreated topic has end offset %d", o.Offset)
	}
}

func TestAutoCreateAndListOffsetsByTime(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	ctx := testkit.Context(t, 20*time.Second)
	cl := testkit.Client(t, b.Addr, kgo.DefaultProduceTopic("auto"), kgo.AllowAutoTopicCreation())
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	for i := 0; i < 10; i++ {
		r := &kgo.Record{Value: []byte{byte(i)}, Timestamp: base.Add(time.Duration(i) * time.Minute)}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("produce to auto-created topic: %v", err)
		}
	}
	adm := testkit.Admin(t, b.Addr)
	offs, err := adm.ListOffsetsAfterMilli(ctx, base.Add(4*time.Minute+time.Second).UnixMilli(), "auto")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := offs.Lookup("auto", 0); o.Offset != 5 {
		t.Fatalf("offset for timestamp: %d, want 5", o.Offset)
	}
	// Max timestamp (-3).
	req := kmsg.NewPtrListOffsetsRequest()
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = "auto"
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Timestamp = -3
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	p := resp.Topics[0].Partitions[0]
	if p.Offset != 9 || p.Timestamp != base.Add(9*time.Minute).UnixMilli() {
		t.Fatalf("max timestamp: offset %d ts %d", p.Offset, p.Timestamp)
	}
}

func TestIdempotentProducerSurvivesRestart(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	createTopic(t, testkit.Admin(t, b.Addr), "idem", 1, nil)
	ctx := testkit.Context(t, 30*time.Second)
	cl := testkit.Client(t, b.Addr, kgo.DefaultProduceTopic("idem"))
	for i := 0; i < 100; i++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprint(i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// DescribeProducers sees the idempotent producer.
	req := kmsg.NewPtrDescribeProducersRequest()
	rt := kmsg.NewDescribeProducersRequestTopic()
	rt.Topic, rt.Partitions = "idem", []int32{0}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	ps := resp.Topics[0].Partitions[0].ActiveProducers
	if len(ps) != 1 || ps[0].LastSequence != 99 {
		t.Fatalf("active producers: %+v", ps)
	}
	b.Restart()
	// The same client keeps producing with its sequence numbers: the
	// restarted broker must know where the sequence stands.
	for i := 100; i < 150; i++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprint(i))}).FirstErr(); err != nil {
			t.Fatalf("produce after restart: %v", err)
		}
	}
	got := consumeN(t, b.Addr, "idem", 150)
	for i, r := range got {
		if string(r.Value) != fmt.Sprint(i) || r.Offset != int64(i) {
			t.Fatalf("record %d: value %s offset %d", i, r.Value, r.Offset)
		}
	}
}

func TestTopicLevelRules(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	adm := testkit.Admin(t, b.Addr)
	ctx := testkit.Context(t, 20*time.Second)
	createTopic(t, adm, "lat", 1, map[string]*string{"message.timestamp.type": kmsg.StringPtr("LogAppendTime")})
	createTopic(t, adm, "zst", 1, map[string]*string{"compression.type": kmsg.StringPtr("zstd")})
	createTopic(t, adm, "cmp", 1, map[string]*string{"cleanup.policy": kmsg.StringPtr("compact")})

	cl := testkit.Client(t, b.Addr)
	old := time.Now().Add(-48 * time.Hour)
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "lat", Value: []byte("x"), Timestamp: old}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	got := consumeN(t, b.Addr, "lat", 1)
	if got[0].Timestamp.Before(time.Now().Add(-time.Minute)) || got[0].Attrs.TimestampType() != 1 {
		t.Fatalf("LogAppendTime topic returned timestamp %v type %d", got[0].Timestamp, got[0].Attrs.TimestampType())
	}

	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "zst", Value: []byte(strings.Repeat("z", 1000))}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	got = consumeN(t, b.Addr, "zst", 1)
	if got[0].Attrs.CompressionType() != 4 || len(got[0].Value) != 1000 {
		t.Fatalf("compression.type=zstd topic served codec %d", got[0].Attrs.CompressionType())
	}

	err := cl.ProduceSync(ctx, &kgo.Record{Topic: "cmp", Value: []byte("no key")}).FirstErr()
	if !errors.Is(err, kerr.InvalidRecord) {
		t.Fatalf("keyless record to compacted topic: %v, want INVALID_RECORD", err)
	}
}

// Transactions are not supported yet: a transactional producer must fail
// at once with a clear error, not retry until it times out.
func TestTransactionalProducerFailsFast(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	createTopic(t, testkit.Admin(t, b.Addr), "txn", 1, nil)
	cl := testkit.Client(t, b.Addr, kgo.TransactionalID("tx-1"), kgo.DefaultProduceTopic("txn"))
	ctx := testkit.Context(t, 30*time.Second)
	start := time.Now()
	err := cl.BeginTransaction()
	if err == nil {
		err = cl.ProduceSync(ctx, &kgo.Record{Value: []byte("x")}).FirstErr()
	}
	if !errors.Is(err, kerr.TransactionalIDAuthorizationFailed) {
		t.Fatalf("transactional produce: %v, want TRANSACTIONAL_ID_AUTHORIZATION_FAILED", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("took %v to fail", d)
	}
}

// Several log.dirs: new partitions go to the dir with the fewest
// partitions, as Kafka places them, and all are found after a restart.
func TestSeveralLogDirs(t *testing.T) {
	d1, d2 := t.TempDir(), t.TempDir()
	b := testkit.StartBroker(t, map[string]string{"log.dirs": d1 + "," + d2})
	adm := testkit.Admin(t, b.Addr)
	createTopic(t, adm, "spread", 6, nil)
	count := func(dir string) int {
		m, _ := filepath.Glob(filepath.Join(dir, "spread-*"))
		return len(m)
	}
	if c1, c2 := count(d1), count(d2); c1 != 3 || c2 != 3 {
		t.Fatalf("partitions per dir: %d and %d, want 3 and 3", c1, c2)
	}
	cl := testkit.Client(t, b.Addr, kgo.DefaultProduceTopic("spread"))
	ctx := testkit.Context(t, 20*time.Second)
	for i := 0; i < 60; i++ {
		cl.Produce(ctx, &kgo.Record{Value: []byte(fmt.Sprint(i))}, nil)
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	b.Restart()
	if got := consumeN(t, b.Addr, "spread", 60); len(got) != 60 {
		t.Fatalf("after restart read %d of 60", len(got))
	}
	dirs, err := testkit.Admin(t, b.Addr).DescribeAllLogDirs(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	dirs.Each(func(d kadm.DescribedLogDir) { n++ })
	if n != 2 {
		t.Fatalf("DescribeLogDirs lists %d dirs, want 2", n)
	}
}

// TestSingleNodeLeadershipAPIs: on one node ElectLeaders has nothing to do
// (named partitions answer ELECTION_NOT_NEEDED, "all" answers nothing),
// a reassignment to the current replica is accepted, any other is refused,
// and none is ever listed as in progress.
func TestSingleNodeLeadershipAPIs(t *testing.T) {
	b := testkit.StartBroker(t, nil)
	adm := testkit.Admin(t, b.Addr)
	createTopic(t, adm, "lead", 2, nil)
	ctx := testkit.Context(t, 10*time.Second)

	res, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, kadm.TopicsSet{"lead": {0: {}}, "nope": {0: {}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res["lead"][0].Err; !errors.Is(got, kerr.ElectionNotNeeded) {
		t.Errorf("lead[0]: %v, want ELECTION_NOT_NEEDED", got)
	}
	if got := res["nope"][0].Err; !errors.Is(got, kerr.UnknownTopicOrPartition) {
		t.Errorf("nope[0]: %v, want UNKNOWN_TOPIC_OR_PARTITION", got)
	}
	all, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, nil)
	if err != nil || len(all) != 0 {
		t.Errorf("elect all: %v, %v; want no results", all, err)
	}

	alter, err := adm.AlterPartitionAssignments(ctx, kadm.AlterPartitionAssignmentsReq{"lead": {0: {0}, 1: {0, 7}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := alter["lead"][0].Err; got != nil {
		t.Errorf("reassign to the current replica: %v", got)
	}
	if got := alter["lead"][1].Err; !errors.Is(got, kerr.InvalidReplicaAssignment) {
		t.Errorf("reassign to a missing broker: %v, want INVALID_REPLICA_ASSIGNMENT", got)
	}
	list, err := adm.ListPartitionReassignments(ctx, nil)
	if err != nil || len(list) != 0 {
		t.Errorf("list reassignments: %v, %v; want none", list, err)
	}
}
