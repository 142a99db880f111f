package log

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fjordhq/fjord/broker/batch"
)

// The files under testdata/kafka-4.4 were written by Apache Kafka 4.4
// (scripts/kafka.sh start with log.index.interval.bytes=100; g1-0 filled by
// testdata/kafka-4.4/produce.py with five idempotent producers using every
// codec, plain and tombstone records, then DeleteRecords to offset 5 and a
// clean shutdown; t2-0 by one idempotent producer). These tests fail
// loudly if our encoding of any of them drifts from Kafka's.

const kafkaData = "testdata/kafka-4.4/data"

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() {
			copyDir(t, filepath.Join(from, e.Name()), filepath.Join(to, e.Name()))
			continue
		}
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func kafkaBatches(t *testing.T, part string) []batch.Batch {
	t.Helper()
	data := mustRead(t, filepath.Join(kafkaData, part, "00000000000000000000.log"))
	var out []batch.Batch
	for len(data) > 0 {
		b, rest, err := batch.Next(data)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Validate(); err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
		data = rest
	}
	return out
}

func goldenConfig() Config {
	cfg := testConfig()
	cfg.IndexIntervalBytes = 100 // as the Kafka broker that wrote the files
	return cfg
}

func compareFile(t *testing.T, got, want string) {
	t.Helper()
	g, w := mustRead(t, got), mustRead(t, want)
	if !bytes.Equal(g, w) {
		t.Errorf("%s differs from Kafka's %s:\n got % x\nwant % x", filepath.Base(got), want, g, w)
	}
}

// Appending Kafka's batches one by one (as produce requests did) must
// produce Kafka's .index, .timeindex and producer snapshot byte for byte.
func TestGoldenAppendMatchesKafka(t *testing.T) {
	for _, part := range []string{"g1-0", "t2-0"} {
		t.Run(part, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), part)
			l := mustOpen(t, dir, goldenConfig(), testOpts(nil), false)
			for _, b := range kafkaBatches(t, part) {
				if _, err := l.Append(append([]byte(nil), b...), AppendOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			leo := l.LogEndOffset()
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			compareFile(t, filepath.Join(dir, "00000000000000000000.log"), filepath.Join(kafkaData, part, "00000000000000000000.log"))
			compareFile(t, filepath.Join(dir, "00000000000000000000.index"), filepath.Join(kafkaData, part, "00000000000000000000.index"))
			compareFile(t, filepath.Join(dir, "00000000000000000000.timeindex"), filepath.Join(kafkaData, part, "00000000000000000000.timeindex"))
			snap := segmentName(leo) + ".snapshot"
			compareFile(t, filepath.Join(dir, snap), filepath.Join(kafkaData, part, snap))
		})
	}
}

// Recovery rebuilds Kafka's indexes from Kafka's .log.
func TestGoldenRecoveryRebuildsKafkaIndexes(t *testing.T) {
	for _, part := range []string{"g1-0", "t2-0"} {
		t.Run(part, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), part)
			copyDir(t, filepath.Join(kafkaData, part), dir)
			os.Remove(filepath.Join(dir, "00000000000000000000.index"))
			os.WriteFile(filepath.Join(dir, "00000000000000000000.timeindex"), []byte("garbage!"), 0o644)
			l := mustOpen(t, dir, goldenConfig(), testOpts(nil), true)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			compareFile(t, filepath.Join(dir, "00000000000000000000.index"), filepath.Join(kafkaData, part, "00000000000000000000.index"))
			compareFile(t, filepath.Join(dir, "00000000000000000000.timeindex"), filepath.Join(kafkaData, part, "00000000000000000000.timeindex"))
		})
	}
}

// A partition directory Kafka shut down cleanly opens without recovery and
// serves exactly Kafka's batches, producer state and leader epochs.
func TestGoldenOpenKafkaPartition(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "g1-0")
	copyDir(t, filepath.Join(kafkaData, "g1-0"), dir)
	// The records are from 2023: a clock then keeps the producers from
	// expiring (producer.id.expiration.ms counts from their timestamps).
	l := mustOpen(t, dir, goldenConfig(), testOpts(newClock()), false)
	defer l.Close()
	if l.LogEndOffset() != 211 {
		t.Fatalf("log end %d, want 211", l.LogEndOffset())
	}
	want := kafkaBatches(t, "g1-0")
	got := readAllBatches(t, l, 0)
	if len(got) != len(want) {
		t.Fatalf("%d batches, want %d", len(got), len(want))
	}
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("batch %d differs", i)
		}
	}
	ps := l.Producers()
	if len(ps) != 5 {
		t.Fatalf("producers %+v, want 5 from the snapshot", ps)
	}
	for i, p := range ps {
		if p.ProducerID != int64(i) || p.Epoch != 0 || p.LastSequence != 39 || p.TxnStartOffset != -1 || p.CoordinatorEpoch != -1 {
			t.Errorf("producer %d: %+v", i, p)
		}
	}
	if e, off := l.EndOffsetForEpoch(0); e != 0 || off != 211 {
		t.Errorf("EndOffsetForEpoch(0) = %d, %d", e, off)
	}
	id, ok := l.TopicID()
	if !ok {
		t.Errorf("no topic id from partition.metadata")
	}
	if got := encodePartitionMetadata(id); !bytes.Equal(got, mustRead(t, filepath.Join(kafkaData, "g1-0", "partition.metadata"))) {
		t.Errorf("partition.metadata re-encoded as %q", got)
	}
}

func TestGoldenCheckpointFiles(t *testing.T) {
	rp := mustRead(t, filepath.Join(kafkaData, "recovery-point-offset-checkpoint"))
	m, err := decodeOffsetCheckpoint(rp)
	if err != nil || m[TopicPartition{"g1", 0}] != 211 || len(m) != 1 {
		t.Fatalf("decode recovery points: %v %v", m, err)
	}
	if got := encodeOffsetCheckpoint(m); !bytes.Equal(got, rp) {
		t.Errorf("recovery-point-offset-checkpoint encodes as %q, Kafka wrote %q", got, rp)
	}
	ls := mustRead(t, filepath.Join(kafkaData, "log-start-offset-checkpoint"))
	m, err = decodeOffsetCheckpoint(ls)
	if err != nil || m[TopicPartition{"g1", 0}] != 5 {
		t.Fatalf("decode log start offsets: %v %v", m, err)
	}
	if got := encodeOffsetCheckpoint(m); !bytes.Equal(got, ls) {
		t.Errorf("log-start-offset-checkpoint encodes as %q, Kafka wrote %q", got, ls)
	}
	if got := encodeOffsetCheckpoint(map[TopicPartition]int64{}); string(got) != "0\n0\n" {
		t.Errorf("empty checkpoint %q", got)
	}
	le := mustRead(t, filepath.Join(kafkaData, "g1-0", "leader-epoch-checkpoint"))
	ents, err := decodeEpochCheckpoint(le)
	if err != nil || len(ents) != 1 || ents[0] != (epochEntry{0, 5}) {
		t.Fatalf("decode leader epochs: %v %v", ents, err)
	}
	if got := encodeEpochCheckpoint(ents); !bytes.Equal(got, le) {
		t.Errorf("leader-epoch-checkpoint encodes as %q, Kafka wrote %q", got, le)
	}
	multi := []epochEntry{{0, 0}, {3, 120}, {7, 9000}}
	if got := string(encodeEpochCheckpoint(multi)); got != "0\n3\n0 0\n3 120\n7 9000\n" {
		t.Errorf("multi-epoch checkpoint %q", got)
	}
}

// Compaction golden test. testdata/kafka-4.4/compaction/before holds a
// partition written by compaction/produce.py with cleanup.policy=delete
// (an idempotent producer's batch later overwritten, plain batches,
// tombstones, four segments rolled by segment.ms); alter.py then switched
// the topic to compact and Kafka 4.4's cleaner produced after/: one merged
// segment for offsets 0-15 (16 is the active segment). Our cleaner must
// produce the same .log, .index and .timeindex byte for byte — record
// selection, empty producer batch, offset ranges, rebuilt batches, the
// delete horizon of the tombstones' batches and per-batch index entries.
func TestGoldenCompactionMatchesKafka(t *testing.T) {
	const cleanedAt = 1795942168839 // Kafka's delete horizon minus delete.retention.ms
	src := filepath.Join("testdata", "kafka-4.4", "compaction")
	dir := filepath.Join(t.TempDir(), "cmp-0")
	copyDir(t, filepath.Join(src, "before"), dir)
	cfg := DefaultConfig()
	cfg.Compact, cfg.Delete = true, false
	cfg.IndexIntervalBytes = 100
	cfg.MinCleanableDirtyRatio = 0.01
	cfg.RetentionMs = -1
	c := &clock{t: time.UnixMilli(cleanedAt)}
	l := mustOpen(t, dir, cfg, testOpts(c), true)
	defer l.Close()
	if l.NumSegments() != 4 || l.LogEndOffset() != 18 {
		t.Fatalf("loaded %d segments, log end %d", l.NumSegments(), l.LogEndOffset())
	}
	st, ok, err := l.Compact(1<<20, false)
	if err != nil || !ok || st.EndOffset != 16 {
		t.Fatalf("compact: %+v %v %v", st, ok, err)
	}
	if l.NumSegments() != 2 {
		t.Fatalf("%d segments after compaction, want the merged one and the active one", l.NumSegments())
	}
	if err := l.segments()[0].finalize(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"00000000000000000000.log", "00000000000000000000.index", "00000000000000000000.timeindex"} {
		compareFile(t, filepath.Join(dir, name), filepath.Join(src, "after", name))
	}
	compareFile(t, filepath.Join(dir, "00000000000000000016.log"), filepath.Join(src, "before", "00000000000000000016.log"))
}
