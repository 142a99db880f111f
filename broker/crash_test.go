package broker_test

// Crash tests of a real `fjord dev` process: SIGKILL under produce load,
// torn writes at a segment's tail, and start-up after a clean stop.
//
// What SIGKILL can and cannot show: the kernel keeps every write(2) the
// broker finished in the page cache, so a killed process loses only what
// it had not written yet (and, rarely, the tail of a write it was in).
// These tests therefore check the broker's own bookkeeping across
// crashes — acknowledging only what is in the log, recovery, producer
// state, indexes, offsets — not fsync placement, which needs a power cut
// (or a fault-injecting filesystem) to test. Torn writes are made by hand
// in TestCrashTornWrite.

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/broker/batch"
	"github.com/fjordhq/fjord/internal/testkit"
)

// crashProducer is one franz-go producer of the load test and every
// record the broker acknowledged to it.
type crashProducer struct {
	name       string
	idempotent bool // acks=all + idempotence; otherwise acks=1, idempotence off
	codec      kgo.CompressionCodec
	cl         *kgo.Client

	mu    sync.Mutex
	acked []ackedRecord
	errs  []error // first few produce errors
	nerrs int
	// abandoned counts records franz-go gave up on after an EOF as the
	// broker's first answer (see the produce callback).
	abandoned int
}

type ackedRecord struct {
	partition int32
	offset    int64
	seq       int64
}

func (p *crashProducer) ackCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.acked)
}

// crashRecordID is a record's key: the producer's name and its sequence
// number in that producer, unique over the test.
func crashRecordID(producer string, seq int64) string { return fmt.Sprintf("%s-%d", producer, seq) }

func parseCrashRecordID(id string) (producer string, seq int64, ok bool) {
	i := strings.LastIndexByte(id, '-')
	if i < 0 {
		return "", 0, false
	}
	seq, err := strconv.ParseInt(id[i+1:], 10, 64)
	return id[:i], seq, err == nil
}

// crashRecordValue is derived from the id so any served record can be
// checked byte for byte; the filler compresses, so codecs do real work.
func crashRecordValue(id string, seq int64) []byte {
	n := 50 + int(seq%500)
	v := make([]byte, 0, len(id)+1+n)
	v = append(v, id...)
	v = append(v, '|')
	for i := 0; i < n; i++ {
		v = append(v, byte('a'+(seq+int64(i/7))%26))
	}
	return v
}

func newCrashRecord(producer string, seq int64) *kgo.Record {
	id := crashRecordID(producer, seq)
	return &kgo.Record{
		Key:     []byte(id),
		Value:   crashRecordValue(id, seq),
		Headers: []kgo.RecordHeader{{Key: "producer", Value: []byte(producer)}},
	}
}

// checkCrashRecord verifies a served record is one the test produced,
// unaltered, and returns its producer and sequence.
func checkCrashRecord(r *kgo.Record) (producer string, seq int64, err error) {
	id := string(r.Key)
	producer, seq, ok := parseCrashRecordID(id)
	if !ok {
		return "", 0, fmt.Errorf("%s[%d]@%d: unexpected key %q", r.Topic, r.Partition, r.Offset, id)
	}
	if !bytes.Equal(r.Value, crashRecordValue(id, seq)) {
		return "", 0, fmt.Errorf("%s[%d]@%d: value of %s differs from what was produced", r.Topic, r.Partition, r.Offset, id)
	}
	if len(r.Headers) != 1 || r.Headers[0].Key != "producer" || string(r.Headers[0].Value) != producer {
		return "", 0, fmt.Errorf("%s[%d]@%d: headers of %s are %v", r.Topic, r.Partition, r.Offset, id, r.Headers)
	}
	return producer, seq, nil
}

func crashCreateTopic(t *testing.T, addr, topic string, partitions int32, configs map[string]*string) kadm.TopicID {
	t.Helper()
	adm := testkit.Admin(t, addr)
	ctx := testkit.Context(t, 15*time.Second)
	resp, err := adm.CreateTopic(ctx, partitions, 1, configs, topic)
	if err != nil || resp.Err != nil {
		t.Fatalf("create topic %s: %v %v", topic, err, resp.Err)
	}
	return resp.ID
}

func crashOffsets(t *testing.T, adm *kadm.Client, topic string, end bool) map[int32]int64 {
	t.Helper()
	ctx := testkit.Context(t, 15*time.Second)
	list := adm.ListStartOffsets
	if end {
		list = adm.ListEndOffsets
	}
	lo, err := list(ctx, topic)
	if err == nil {
		err = lo.Error()
	}
	if err != nil {
		t.Fatalf("list offsets of %s: %v", topic, err)
	}
	out := map[int32]int64{}
	lo.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
	return out
}

// consumeAll reads every partition of topic from its start offset up to
// its end offset with a fresh franz-go consumer, checking that offsets
// follow each other without gaps and that every record is one the test
// produced. It returns the records by partition, in offset order.
func consumeAll(t *testing.T, addr, topic string, start, end map[int32]int64) map[int32][]*kgo.Record {
	t.Helper()
	offsets := map[int32]kgo.Offset{}
	next := map[int32]int64{}
	for p, o := range start {
		if end[p] > o {
			offsets[p] = kgo.NewOffset().At(o)
		}
		next[p] = o
	}
	out := map[int32][]*kgo.Record{}
	if len(offsets) == 0 {
		return out
	}
	cl := testkit.Client(t, addr, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}),
		kgo.FetchMaxWait(200*time.Millisecond))
	ctx := testkit.Context(t, 60*time.Second)
	done := func() bool {
		for p, e := range end {
			if next[p] < e {
				return false
			}
		}
		return true
	}
	for !done() {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consuming %s timed out: positions %v, ends %v", topic, next, end)
		}
		fs.EachError(func(tp string, p int32, err error) { t.Fatalf("fetch %s[%d]: %v", tp, p, err) })
		for _, r := range fs.Records() {
			if r.Offset != next[r.Partition] {
				t.Fatalf("%s[%d]: record at offset %d, want %d: offsets not contiguous", topic, r.Partition, r.Offset, next[r.Partition])
			}
			if r.Offset >= end[r.Partition] {
				t.Fatalf("%s[%d]: record at offset %d at or past the end offset %d", topic, r.Partition, r.Offset, end[r.Partition])
			}
			if _, _, err := checkCrashRecord(r); err != nil {
				t.Fatal(err)
			}
			next[r.Partition]++
			out[r.Partition] = append(out[r.Partition], r)
		}
	}
	return out
}

// checkServedBatches fetches every partition raw and validates each batch
// (CRC, header, contiguity); it returns the number of batches per codec.
func checkServedBatches(t *testing.T, addr, topic string, id kadm.TopicID, start, end map[int32]int64) map[batch.Codec]int {
	t.Helper()
	cl := testkit.Client(t, addr)
	ctx := testkit.Context(t, 60*time.Second)
	codecs := map[batch.Codec]int{}
	for p, e := range end {
		bs, err := testkit.FetchBatches(ctx, cl, topic, id, p, start[p], e)
		if err != nil {
			t.Fatalf("raw fetch: %v", err)
		}
		for _, b := range bs {
			codecs[b.Codec()]++
		}
	}
	return codecs
}

var logsLoadedTook = regexp.MustCompile(`msg="logs loaded".* took=(\S+)`)

// loadTime is the broker's own "logs loaded" figure in one run's output.
func loadTime(run string) string {
	if m := logsLoadedTook.FindStringSubmatch(run); m != nil {
		return m[1]
	}
	return "?"
}

func crashSeed(t *testing.T) uint64 {
	if s := os.Getenv("FJORD_CRASH_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("FJORD_CRASH_SEED=%q: %v", s, err)
		}
		return n
	}
	return uint64(time.Now().UnixNano())
}

// TestCrashUnderLoad kills a broker with SIGKILL at random moments while
// an idempotent acks=all producer and a plain acks=1 producer (five
// clients over every codec) write to it, restarts it on the same data dir
// and address each time, and then checks that every acknowledged record
// is served at exactly its acknowledged offset, that offsets are
// contiguous, that every served batch is valid, and that idempotent
// producers were never duplicated nor reordered.
func TestCrashUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test runs fjord as a process for ~30 s; skipped with -short")
	}
	const (
		topic      = "crash"
		partitions = 6
		kills      = 5
		// Each producer offers ratePerTick records every tick, at most
		// 1000/s; under -race on two cores they manage about half that.
		tick        = 5 * time.Millisecond
		ratePerTick = 5
	)
	seed := crashSeed(t)
	t.Logf("seed %d (rerun with FJORD_CRASH_SEED=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0))

	dev := testkit.StartDevProcess(t, t.TempDir(), "--no-connect")
	dev.WaitServing(t, 30*time.Second, "")
	// Small, time-rolled segments so kills also land around rolls and
	// recovery sees several segments per partition.
	id := crashCreateTopic(t, dev.KafkaAddr, topic, partitions, map[string]*string{
		"segment.bytes": kadm.StringPtr("1048576"),
		"segment.ms":    kadm.StringPtr("4000"),
	})

	producers := []*crashProducer{
		{name: "idem-zstd", idempotent: true, codec: kgo.ZstdCompression()},
		{name: "idem-lz4", idempotent: true, codec: kgo.Lz4Compression()},
		{name: "idem-none", idempotent: true, codec: kgo.NoCompression()},
		{name: "acks1-gzip", codec: kgo.GzipCompression()},
		{name: "acks1-snappy", codec: kgo.SnappyCompression()},
	}
	// produceCtx outlives the generators: records already buffered must
	// get their answer (the final Flush), not be cancelled.
	produceCtx := testkit.Context(t, 3*time.Minute)
	genCtx, stopGen := context.WithCancel(produceCtx)
	defer stopGen()
	var gen sync.WaitGroup
	for _, p := range producers {
		opts := []kgo.Opt{
			kgo.ClientID(p.name),
			kgo.DefaultProduceTopic(topic),
			kgo.ProducerBatchCompression(p.codec),
			kgo.MaxBufferedRecords(5000),
			// Reconnect soon after a restart, so the test spends its time
			// under load rather than in client backoff.
			kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }),
			kgo.MetadataMinAge(100 * time.Millisecond),
		}
		if p.idempotent {
			opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
		} else {
			opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
		}
		p.cl = testkit.Client(t, dev.KafkaAddr, opts...)
		gen.Add(1)
		go func() {
			defer gen.Done()
			tk := time.NewTicker(tick)
			defer tk.Stop()
			for seq := int64(0); ; {
				select {
				case <-genCtx.Done():
					return
				case <-tk.C:
				}
				for range ratePerTick {
					s := seq
					seq++
					p.cl.Produce(produceCtx, newCrashRecord(p.name, s), func(r *kgo.Record, err error) {
						p.mu.Lock()
						defer p.mu.Unlock()
						if _, firstReadEOF := errors.AsType[*kgo.ErrFirstReadEOF](err); firstReadEOF {
							// The broker was killed right after accepting the
							// connection (a kill during start-up): franz-go
							// gives up on an EOF as the first answer on
							// purpose (it usually means missing TLS or SASL)
							// instead of retrying. The record was never acked,
							// so nothing is owed; it is counted, not failed.
							p.abandoned++
							return
						}
						if err != nil {
							p.nerrs++
							if len(p.errs) < 5 {
								p.errs = append(p.errs, fmt.Errorf("seq %d: %w", s, err))
							}
							return
						}
						p.acked = append(p.acked, ackedRecord{r.Partition, r.Offset, s})
					})
				}
			}
		}()
	}
	waitProgress := func(what string, since []int, more int) {
		t.Helper()
		testkit.CheckFor(t, 30*time.Second, 20*time.Millisecond, func() error {
			for i, p := range producers {
				if n := p.ackCount(); n < since[i]+more {
					return fmt.Errorf("%s: producer %s has %d acks, want %d", what, p.name, n, since[i]+more)
				}
			}
			return nil
		})
	}
	counts := func() []int {
		out := make([]int, len(producers))
		for i, p := range producers {
			out[i] = p.ackCount()
		}
		return out
	}
	waitProgress("warm-up", make([]int, len(producers)), 500)

	// Stops, in order: SIGKILLs, one of them followed by a second SIGKILL
	// during the next start-up, and one clean stop (SIGTERM) in the middle,
	// so later recoveries start from a recovery point inside the log and
	// clean-start bookkeeping (no rescan) is checked under load too.
	const doubleKill, cleanStop = 2, 3
	// restartKind is what ended the run before each Restart: "kill",
	// "startup-kill" (the run was killed while starting) or "stop".
	var restartKind []string
	var restarts []time.Duration
	started := time.Now()
	for k := 0; k < kills+1; k++ {
		// A random moment of the load: the point of the test is that the
		// kill lands anywhere in the produce path, so this is a sleep.
		time.Sleep(1500*time.Millisecond + time.Duration(rng.Int64N(int64(2500*time.Millisecond))))
		atStop := counts()
		what := "kill"
		if k == cleanStop {
			what = "SIGTERM"
			if err := dev.Stop(30 * time.Second); err != nil {
				t.Fatalf("clean stop under load: %v", err)
			}
			restartKind = append(restartKind, "stop")
		} else {
			dev.Kill()
			if k == doubleKill {
				// Kill again during start-up, likely mid-recovery:
				// recovery itself must survive being interrupted.
				dev.Restart()
				restartKind = append(restartKind, "kill")
				time.Sleep(time.Duration(rng.Int64N(int64(150 * time.Millisecond))))
				dev.Kill()
				what = "kill, and kill during the next start-up"
				restartKind = append(restartKind, "startup-kill")
			} else {
				restartKind = append(restartKind, "kill")
			}
		}
		time.Sleep(time.Duration(rng.Int64N(int64(700 * time.Millisecond)))) // down for a while: producers retry
		t0 := time.Now()
		dev.Restart()
		dev.WaitServing(t, 30*time.Second, topic)
		took := time.Since(t0)
		restarts = append(restarts, took)
		// Producers must carry on by themselves after a restart.
		waitProgress(fmt.Sprintf("after stop %d (%s)", k+1, what), atStop, 50)
		t.Logf("stop %d (%s) at %v: acks so far %v; restarted and serving in %v (broker's log load: %s); every producer acked 50 more %v after the restart",
			k+1, what, time.Since(started).Round(time.Millisecond), atStop, took.Round(time.Millisecond), loadTime(dev.LastRun()),
			time.Since(t0).Round(time.Millisecond))
	}
	time.Sleep(time.Second) // some load on the last incarnation too
	stopGen()
	gen.Wait()
	for _, p := range producers {
		ctx, cancel := context.WithTimeout(produceCtx, 30*time.Second)
		err := p.cl.Flush(ctx)
		cancel()
		if err != nil {
			t.Fatalf("flush %s: %v", p.name, err)
		}
	}
	for _, p := range producers {
		p.mu.Lock()
		t.Logf("producer %s: %d records acknowledged, %d failed %v, %d abandoned by the client after a first-read EOF", p.name, len(p.acked), p.nerrs, p.errs, p.abandoned)
		if p.nerrs > 0 {
			// Retries are unbounded and the broker always comes back, so
			// a failed record means the broker answered something no
			// retry fixes (e.g. OUT_OF_ORDER_SEQUENCE_NUMBER after it lost
			// producer state).
			t.Errorf("producer %s: %d records failed, first: %v", p.name, p.nerrs, p.errs)
		}
		p.mu.Unlock()
	}

	// Read everything back with fresh clients.
	verifyStart := time.Now()
	adm := testkit.Admin(t, dev.KafkaAddr)
	start, end := crashOffsets(t, adm, topic, false), crashOffsets(t, adm, topic, true)
	for p := int32(0); p < partitions; p++ {
		if start[p] != 0 {
			t.Errorf("%s[%d]: log start offset %d, want 0 (nothing deletes records here)", topic, p, start[p])
		}
	}
	served := consumeAll(t, dev.KafkaAddr, topic, start, end)
	total := 0
	for _, rs := range served {
		total += len(rs)
	}
	t.Logf("served %d records, end offsets %v", total, end)
	at := func(p int32, off int64) *kgo.Record {
		rs := served[p]
		if len(rs) == 0 || off < rs[0].Offset || off > rs[len(rs)-1].Offset {
			return nil
		}
		return rs[off-rs[0].Offset]
	}
	byName := map[string]*crashProducer{}
	for _, p := range producers {
		byName[p.name] = p
		for _, a := range p.acked {
			r := at(a.partition, a.offset)
			want := crashRecordID(p.name, a.seq)
			switch {
			case r == nil:
				t.Errorf("acknowledged record %s at %s[%d]@%d is missing (end offset %d)", want, topic, a.partition, a.offset, end[a.partition])
			case string(r.Key) != want:
				t.Errorf("acknowledged record %s at %s[%d]@%d: offset holds %s", want, topic, a.partition, a.offset, r.Key)
			}
		}
	}
	// Unacknowledged records may or may not be there. An idempotent
	// producer's record is there at most once and in the order produced
	// within a partition. A non-idempotent acks=1 producer re-sends a
	// batch whose answer a kill swallowed, so its records may be there
	// twice: allowed, and only counted.
	seen := map[string]int{}
	dups := map[string]int{}
	for p, rs := range served {
		last := map[string]int64{}
		for _, r := range rs {
			name, seq, _ := parseCrashRecordID(string(r.Key))
			prod := byName[name]
			if prod == nil {
				t.Fatalf("%s[%d]@%d: record %s from no producer of this test", topic, p, r.Offset, r.Key)
			}
			seen[string(r.Key)]++
			if seen[string(r.Key)] > 1 {
				dups[name]++
				if prod.idempotent {
					t.Errorf("idempotent producer's record %s served twice (again at %s[%d]@%d)", r.Key, topic, p, r.Offset)
				}
			}
			if l, ok := last[name]; ok && prod.idempotent && seq <= l {
				t.Errorf("%s[%d]@%d: idempotent producer %s's seq %d after seq %d: reordered", topic, p, r.Offset, name, seq, l)
			}
			last[name] = seq
		}
	}
	t.Logf("duplicates by producer (allowed for acks=1 without idempotence only): %v", dups)

	codecs := checkServedBatches(t, dev.KafkaAddr, topic, id, start, end)
	t.Logf("batches served and validated by codec: %v (reading back and checking took %v)", codecs, time.Since(verifyStart).Round(time.Millisecond))
	for _, c := range []batch.Codec{batch.CodecNone, batch.CodecGzip, batch.CodecSnappy, batch.CodecLZ4, batch.CodecZstd} {
		if codecs[c] == 0 {
			t.Errorf("no %v batch served: the load did not exercise that codec", c)
		}
	}

	// Every start after a kill must have run recovery (no clean marker);
	// the start after the clean stop must not have.
	runs := dev.Runs()
	if len(runs) != len(restartKind)+1 {
		t.Fatalf("%d runs in the output for %d restarts", len(runs), len(restartKind))
	}
	recovered, truncations := 0, 0
	for i, run := range runs[1:] {
		loaded := strings.Contains(run, `msg="loaded log dir"`)
		clean, unclean := strings.Contains(run, "clean_shutdown=true"), strings.Contains(run, "clean_shutdown=false")
		switch restartKind[i] {
		case "kill":
			// The run killed while starting may not have got as far as
			// loading; every other one served, so it loaded.
			killedStarting := i+1 < len(restartKind) && restartKind[i+1] == "startup-kill"
			if clean || !loaded && !killedStarting {
				t.Errorf("run %d, after a SIGKILL, did not report an unclean load:\n%s", i+2, run)
			}
			if unclean {
				recovered++
			}
		case "startup-kill":
			if clean || !unclean {
				t.Errorf("run %d, after a SIGKILL during start-up, reported a clean shutdown:\n%s", i+2, run)
			}
			if unclean {
				recovered++
			}
		case "stop":
			if !clean || unclean {
				t.Errorf("run %d, after a clean stop, did not report a clean load:\n%s", i+2, run)
			}
			if strings.Contains(run, "truncated invalid data during recovery") {
				t.Errorf("run %d, after a clean stop, truncated data:\n%s", i+2, run)
			}
		}
		truncations += strings.Count(run, "truncated invalid data during recovery")
	}
	if recovered < kills {
		t.Errorf("%d restarts logged an unclean load (recovery) after %d SIGKILLs", recovered, kills)
	}
	sort.Slice(restarts, func(i, j int) bool { return restarts[i] < restarts[j] })
	t.Logf("%d recoveries after SIGKILL; restart-to-serving min %v median %v max %v; %d partitions truncated a torn tail",
		recovered, restarts[0].Round(time.Millisecond), restarts[len(restarts)/2].Round(time.Millisecond),
		restarts[len(restarts)-1].Round(time.Millisecond), truncations)
}

// activeSegment returns the path of a partition's newest .log file.
func activeSegment(t *testing.T, partDir string) string {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(partDir, "*.log"))
	if err != nil || len(logs) == 0 {
		t.Fatalf("no segment in %s: %v", partDir, err)
	}
	sort.Strings(logs) // 20-digit names sort by base offset
	return logs[len(logs)-1]
}

func appendToFile(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCrashTornWrite kills a broker, damages the tail of each partition's
// active segment the ways a crash can (half a batch, a batch whose CRC
// does not match followed by a valid one, zero fill, random bytes, a lost
// index, torn producer snapshots), restarts it, and checks that recovery cut exactly the damage,
// that the broker serves, and that producing continues at the offset
// after the last good batch — also for the idempotent producer whose next
// sequence number the corrupt batch claimed.
func TestCrashTornWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test runs fjord as a process; skipped with -short")
	}
	const topic, partitions, n = "torn", 4, 100
	dev := testkit.StartDevProcess(t, t.TempDir(), "--no-connect")
	dev.WaitServing(t, 30*time.Second, "")
	id := crashCreateTopic(t, dev.KafkaAddr, topic, partitions, nil)

	idem := testkit.Client(t, dev.KafkaAddr, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(kgo.SnappyCompression()))
	want := map[int32][]string{} // ids by offset
	produce := func(cl *kgo.Client, name string, count int) {
		t.Helper()
		var recs []*kgo.Record
		for p := int32(0); p < partitions; p++ {
			for range count {
				seq := int64(len(want[p]))
				r := newCrashRecord(fmt.Sprintf("%s%d", name, p), seq)
				r.Partition = p
				recs = append(recs, r)
				want[p] = append(want[p], string(r.Key))
			}
		}
		res := cl.ProduceSync(testkit.Context(t, 30*time.Second), recs...)
		if err := res.FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
		for _, pr := range res {
			r := pr.Record
			if ids := want[r.Partition]; r.Offset < 0 || r.Offset >= int64(len(ids)) || ids[r.Offset] != string(r.Key) {
				t.Errorf("%s acknowledged at %s[%d]@%d, not at its place in the log", r.Key, topic, r.Partition, r.Offset)
			}
		}
	}
	produce(idem, "idem-p", n)
	dev.Kill()

	sizes := map[int32]int64{}
	for p := int32(0); p < partitions; p++ {
		seg := activeSegment(t, filepath.Join(dev.LogDir, fmt.Sprintf("%s-%d", topic, p)))
		data, err := os.ReadFile(seg)
		if err != nil {
			t.Fatal(err)
		}
		sizes[p] = int64(len(data))
		first, _, err := batch.Next(data)
		if err != nil {
			t.Fatalf("%s: %v", seg, err)
		}
		// A copy of the first batch placed at the end offset, the idempotent
		// producer's next sequence number in it: what the producer's next
		// write would look like.
		next := append(batch.Batch(nil), first...)
		next.SetBaseOffset(n)
		var junk []byte
		switch p {
		case 0: // torn: the first half of that batch reached the file
			junk = next[:len(next)/2]
		case 1: // complete length but a CRC that does not match, then a valid batch
			const offBaseSequence = 53
			binary.BigEndian.PutUint32(next[offBaseSequence:], n)
			valid := append(batch.Batch(nil), first...)
			valid.SetBaseOffset(n + int64(next.LastOffsetDelta()) + 1)
			junk = append(append(junk, next...), valid...)
		case 2: // blocks allocated but never written, and torn producer snapshots
			junk = make([]byte, 4096)
			snaps, _ := filepath.Glob(filepath.Join(filepath.Dir(seg), "*.snapshot"))
			for _, sn := range snaps {
				if err := os.WriteFile(sn, []byte("torn"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			t.Logf("partition %d: overwrote producer snapshots %v", p, snaps)
		case 3: // random bytes, and the offset index lost
			junk = make([]byte, 1000)
			rand.NewChaCha8([32]byte{3}).Read(junk)
			if err := os.Remove(strings.TrimSuffix(seg, ".log") + ".index"); err != nil {
				t.Fatal(err)
			}
		}
		appendToFile(t, seg, junk)
		t.Logf("partition %d: appended %d bytes of damage to %s (%d bytes)", p, len(junk), filepath.Base(seg), sizes[p])
	}

	t0 := time.Now()
	dev.Restart()
	took := dev.WaitServing(t, 30*time.Second, topic)
	run := dev.LastRun()
	t.Logf("restarted and serving in %v (since the restart %v)", took.Round(time.Millisecond), time.Since(t0).Round(time.Millisecond))
	for p := int32(0); p < partitions; p++ {
		tp := fmt.Sprintf("%s-%d", topic, p)
		if !regexp.MustCompile(`msg="truncated invalid data during recovery".* partition=` + tp + ` `).MatchString(run) {
			t.Errorf("partition %s: no truncation logged; output:\n%s", tp, run)
		}
		seg := activeSegment(t, filepath.Join(dev.LogDir, tp))
		if st, err := os.Stat(seg); err != nil || st.Size() != sizes[p] {
			t.Errorf("%s: size after recovery %v (%v), want %d: recovery must cut exactly the damage", seg, st.Size(), err, sizes[p])
		}
	}
	adm := testkit.Admin(t, dev.KafkaAddr)
	for p, e := range crashOffsets(t, adm, topic, true) {
		if e != n {
			t.Errorf("%s[%d]: end offset %d after recovery, want %d", topic, p, e, n)
		}
	}

	// The same idempotent producer continues (its next sequence is the
	// one the corrupt batch in partition 1 claimed), then a new acks=1 one.
	produce(idem, "idem-p", 50)
	plain := testkit.Client(t, dev.KafkaAddr, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	produce(plain, "plain-p", 10)

	start, end := crashOffsets(t, adm, topic, false), crashOffsets(t, adm, topic, true)
	served := consumeAll(t, dev.KafkaAddr, topic, start, end)
	for p := int32(0); p < partitions; p++ {
		if int64(len(want[p])) != end[p] || start[p] != 0 {
			t.Errorf("%s[%d]: offsets %d-%d, want 0-%d", topic, p, start[p], end[p], len(want[p]))
		}
		for i, r := range served[p] {
			if string(r.Key) != want[p][i] {
				t.Errorf("%s[%d]@%d: %s, want %s", topic, p, r.Offset, r.Key, want[p][i])
			}
		}
	}
	checkServedBatches(t, dev.KafkaAddr, topic, id, start, end)
}

// recoveryPoints reads a log dir's recovery-point-offset-checkpoint
// (Kafka's text format: version, count, then "topic partition offset").
func recoveryPoints(t *testing.T, logDir string) map[string]int64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(logDir, "recovery-point-offset-checkpoint"))
	if err != nil {
		t.Fatalf("read recovery points: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) < 2 || lines[0] != "0" {
		t.Fatalf("recovery-point-offset-checkpoint: unexpected content %q", b)
	}
	out := map[string]int64{}
	for _, ln := range lines[2:] {
		f := strings.Fields(ln)
		if len(f) != 3 {
			t.Fatalf("recovery-point-offset-checkpoint: bad line %q", ln)
		}
		o, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			t.Fatalf("recovery-point-offset-checkpoint: bad line %q", ln)
		}
		out[f[0]+"-"+f[1]] = o
	}
	return out
}

// segmentBytes sums the .log sizes of every partition of a log dir: all
// of them, and those a recovery from the checkpointed recovery points has
// to read (from the segment holding the recovery point on).
func segmentBytes(t *testing.T, logDir string, rps map[string]int64) (total, tail int64, segments int) {
	t.Helper()
	dirs, err := os.ReadDir(logDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if !d.IsDir() || strings.HasPrefix(d.Name(), "__fjord") {
			continue
		}
		logs, _ := filepath.Glob(filepath.Join(logDir, d.Name(), "*.log"))
		sort.Strings(logs)
		from := 0 // the last segment whose base is at or below the recovery point
		for i, l := range logs {
			base, err := strconv.ParseInt(strings.TrimSuffix(filepath.Base(l), ".log"), 10, 64)
			if err != nil {
				t.Fatalf("segment name %s: %v", l, err)
			}
			if base <= rps[d.Name()] {
				from = i
			}
		}
		for i, l := range logs {
			st, err := os.Stat(l)
			if err != nil {
				t.Fatal(err)
			}
			total += st.Size()
			segments++
			if i >= from {
				tail += st.Size()
			}
		}
	}
	return total, tail, segments
}

// TestCleanRestartDoesNotRescan fills a broker with a few hundred MB,
// stops it cleanly and measures the restart against one of a broker
// holding almost nothing. What is asserted cannot flake: the clean start
// reads (rchar, page cache or not) about as little as the tiny broker's,
// far below the data size, and runs no recovery. Then, after a SIGKILL,
// recovery must read the tail from the recovery points — not every
// segment. Times are logged, with only a generous bound.
func TestCleanRestartDoesNotRescan(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a broker with ~300 MB; skipped with -short")
	}
	const (
		topic      = "bulk"
		partitions = 4
		target     = 320 << 20
		minData    = 128 << 20 // below this the comparison says little: fail
		valueSize  = 128 << 10
	)

	// The baseline: a broker with one tiny topic.
	tiny := testkit.StartDevProcess(t, t.TempDir(), "--no-connect")
	tiny.WaitServing(t, 30*time.Second, "")
	crashCreateTopic(t, tiny.KafkaAddr, "tiny", 1, nil)
	tcl := testkit.Client(t, tiny.KafkaAddr, kgo.DefaultProduceTopic("tiny"))
	if err := tcl.ProduceSync(testkit.Context(t, 10*time.Second), newCrashRecord("tiny", 0), newCrashRecord("tiny", 1)).FirstErr(); err != nil {
		t.Fatalf("produce to tiny: %v", err)
	}
	tcl.Close()
	if err := tiny.Stop(30 * time.Second); err != nil {
		t.Fatalf("stop tiny broker: %v", err)
	}
	tiny.Restart()
	tinyStart := tiny.WaitServing(t, 30*time.Second, "tiny")
	tinyIO, err := tiny.IO()
	if err != nil {
		t.Fatal(err)
	}
	tinyLoad := loadTime(tiny.LastRun())
	if err := tiny.Stop(30 * time.Second); err != nil {
		t.Fatalf("stop tiny broker: %v", err)
	}

	// The big one: 4 MiB segments, so the data spans dozens of them and
	// the tail is a small part of it.
	big := testkit.StartDevProcess(t, t.TempDir(), "--no-connect")
	big.WaitServing(t, 30*time.Second, "")
	id := crashCreateTopic(t, big.KafkaAddr, topic, partitions, map[string]*string{"segment.bytes": kadm.StringPtr(strconv.Itoa(4 << 20))})
	cl := testkit.Client(t, big.KafkaAddr, kgo.DefaultProduceTopic(topic), kgo.MaxBufferedBytes(32<<20),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.ProducerBatchMaxBytes(1<<20))
	value := make([]byte, valueSize)
	rand.NewChaCha8([32]byte{1}).Read(value) // incompressible, so bytes on disk ≈ bytes produced
	ctx := testkit.Context(t, 60*time.Second)
	var failed atomic.Value
	var produced atomic.Int64
	fill := func(until int64, deadline time.Time) {
		t.Helper()
		for sent := int64(0); sent < until && time.Now().Before(deadline); sent += valueSize {
			cl.Produce(ctx, &kgo.Record{Value: value}, func(r *kgo.Record, err error) {
				if err != nil {
					failed.CompareAndSwap(nil, err)
					return
				}
				produced.Add(int64(len(r.Value)))
			})
		}
		if err := cl.Flush(ctx); err != nil {
			t.Fatalf("flush: %v", err)
		}
		if err, _ := failed.Load().(error); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	t0 := time.Now()
	fill(target, t0.Add(25*time.Second))
	fillTook := time.Since(t0)
	if produced.Load() < minData {
		t.Fatalf("produced only %d MB in %v; need %d MB for a meaningful comparison", produced.Load()>>20, fillTook, minData>>20)
	}
	total, _, segments := segmentBytes(t, big.LogDir, nil)
	t.Logf("produced %d MB in %v (%.0f MB/s): %d MB in %d segments on disk",
		produced.Load()>>20, fillTook.Round(time.Millisecond), float64(produced.Load())/(1<<20)/fillTook.Seconds(), total>>20, segments)

	t0 = time.Now()
	if err := big.Stop(60 * time.Second); err != nil {
		t.Fatalf("clean stop of the big broker: %v", err)
	}
	t.Logf("clean stop (SIGTERM to exit, flushing everything) took %v", time.Since(t0).Round(time.Millisecond))
	big.Restart()
	bigStart := big.WaitServing(t, 60*time.Second, topic)
	bigIO, err := big.IO()
	if err != nil {
		t.Fatal(err)
	}
	run := big.LastRun()
	t.Logf("clean restart to serving Metadata: tiny broker %v (log load %s, read %d KB), %d MB broker %v (log load %s, read %d KB)",
		tinyStart.Round(time.Millisecond), tinyLoad, tinyIO.RChar>>10,
		total>>20, bigStart.Round(time.Millisecond), loadTime(run), bigIO.RChar>>10)
	if !strings.Contains(run, "clean_shutdown=true") || strings.Contains(run, "clean_shutdown=false") {
		t.Errorf("start after a clean stop did not report clean_shutdown=true:\n%s", run)
	}
	if strings.Contains(run, "truncated invalid data") || strings.Contains(run, "recovering") {
		t.Errorf("start after a clean stop recovered data:\n%s", run)
	}
	// Reading the segments would cost at least their size; a clean start
	// reads indexes of active segments and tails past their last entry.
	if extra := bigIO.RChar - tinyIO.RChar; extra > total/50 || extra > 8<<20 {
		t.Errorf("clean start of a %d MB broker read %d KB more than a tiny broker's: it rescans data", total>>20, extra>>10)
	}
	if bigStart > 15*time.Second {
		t.Errorf("clean start took %v", bigStart)
	}

	// A little more data, then a crash: recovery reads from the segment
	// holding each recovery point (written at the clean stop, or by the
	// periodic checkpoint since), not the whole log.
	fill(8<<20, time.Now().Add(20*time.Second))
	adm := testkit.Admin(t, big.KafkaAddr)
	ends := crashOffsets(t, adm, topic, true)
	big.Kill()
	rps := recoveryPoints(t, big.LogDir)
	total, tail, _ := segmentBytes(t, big.LogDir, rps)
	t0 = time.Now()
	big.Restart()
	crashStart := big.WaitServing(t, 60*time.Second, topic)
	crashIO, err := big.IO()
	if err != nil {
		t.Fatal(err)
	}
	run = big.LastRun()
	t.Logf("restart after SIGKILL: serving in %v (log load %s); %d MB of segments, %d MB from the recovery points %v on; the broker read %d MB",
		crashStart.Round(time.Millisecond), loadTime(run), total>>20, tail>>20, rps, crashIO.RChar>>20)
	if !strings.Contains(run, "clean_shutdown=false") {
		t.Errorf("start after SIGKILL did not report an unclean load:\n%s", run)
	}
	// Recovery validates every batch of the tail (so it read it all) and
	// nothing before it. Its reader re-reads the part of its 1 MiB buffer
	// after a batch that did not fit whole, so allow half again.
	if crashIO.RChar < tail {
		t.Errorf("recovery read %d bytes, less than the %d bytes of segments from the recovery points on: did it validate them?", crashIO.RChar, tail)
	}
	limit := tail + tail/2 + tinyIO.RChar + 8<<20
	if limit >= total {
		t.Fatalf("test setup: the tail (%d MB) is too large a part of the data (%d MB) to tell a tail recovery from a full one", tail>>20, total>>20)
	}
	if crashIO.RChar > limit {
		t.Errorf("recovery read %d MB, more than the %d MB tail allows (of %d MB): it rescans segments below the recovery point", crashIO.RChar>>20, tail>>20, total>>20)
	}
	for p, e := range crashOffsets(t, adm, topic, true) {
		if e != ends[p] {
			t.Errorf("%s[%d]: end offset %d after the crash, want the acknowledged %d", topic, p, e, ends[p])
		}
	}
	// The tail recovery touched is served intact (CRC of every batch).
	from := map[int32]int64{}
	for p, e := range ends {
		from[p] = max(0, e-64)
	}
	checkServedBatches(t, big.KafkaAddr, topic, id, from, ends)
}
