package log

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func openTestManager(t *testing.T, dirs []string, c *clock) *Manager {
	t.Helper()
	m, err := OpenManager(ManagerConfig{Dirs: dirs, RecoveryThreadsPerDir: 2}, func(string) Config { return testConfig() }, testOpts(c))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestManagerLifecycle(t *testing.T) {
	root := t.TempDir()
	dirs := []string{filepath.Join(root, "d1"), filepath.Join(root, "d2")}
	m := openTestManager(t, dirs, nil)
	id := [16]byte{9, 9, 9}
	for p := int32(0); p < 4; p++ {
		l, err := m.Create("orders", p, id, testConfig())
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i <= int(p); i++ {
			mustAppend(t, l, valueBatch(noPID, 2, 30))
		}
	}
	// Placement: the dir with the fewest partitions, so 2 and 2.
	for _, d := range m.DirInfo() {
		if len(d.Partitions) != 2 {
			t.Fatalf("dir %s has %d partitions, want 2", d.Path, len(d.Partitions))
		}
		if d.TotalBytes <= 0 || d.UsableBytes <= 0 || d.DirectoryID == "" {
			t.Fatalf("dir info %+v", d)
		}
	}
	if _, err := OpenManager(ManagerConfig{Dirs: dirs}, nil, testOpts(nil)); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("second manager on the same dirs: %v", err)
	}
	l3 := m.Get("orders", 3)
	if err := l3.DeleteRecordsBefore(5); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, cleanShutdownFile)); err != nil {
			t.Fatalf("no clean shutdown marker in %s", d)
		}
	}

	m = openTestManager(t, dirs, nil)
	defer m.Close()
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, cleanShutdownFile)); !os.IsNotExist(err) {
			t.Fatalf("marker still present after open: %v", err)
		}
	}
	all := m.All()
	if len(all) != 4 {
		t.Fatalf("reopened %d logs", len(all))
	}
	for _, p := range all {
		if p.TopicID != id {
			t.Fatalf("topic id %x", p.TopicID)
		}
		if want := int64(2 * (p.Partition + 1)); p.Log.LogEndOffset() != want {
			t.Fatalf("%s-%d log end %d, want %d", p.Topic, p.Partition, p.Log.LogEndOffset(), want)
		}
	}
	if got := m.Get("orders", 3).LogStartOffset(); got != 5 {
		t.Fatalf("log start after restart %d, want 5 (DeleteRecords must persist)", got)
	}
	if _, err := m.Get("orders", 3).Read(4, 100, 100, true); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("read below the persisted log start: %v", err)
	}

	// Delete renames to -delete at once and removes it later.
	l0 := m.Get("orders", 0)
	dir0 := l0.Dir()
	if err := m.Delete("orders", 0); err != nil {
		t.Fatal(err)
	}
	if m.Get("orders", 0) != nil {
		t.Fatal("deleted log still listed")
	}
	if _, err := l0.Append(valueBatch(noPID, 1, 1), AppendOptions{AssignOffsets: true}); !errors.Is(err, ErrClosed) {
		t.Fatalf("append to deleted log: %v", err)
	}
	if _, err := os.Stat(dir0); !os.IsNotExist(err) {
		t.Fatalf("partition dir still there: %v", err)
	}
	checkFor(t, 5*time.Second, 10*time.Millisecond, func() error {
		ents, _ := os.ReadDir(filepath.Dir(dir0))
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), "-delete") {
				return fmt.Errorf("%s still present", e.Name())
			}
		}
		return nil
	})
}

// A dir Apache Kafka shut down cleanly loads without recovery, with the
// log start offset from Kafka's checkpoint (DeleteRecords to 5).
func TestManagerOpensKafkaDataDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	copyDir(t, kafkaData, dir)
	if err := os.WriteFile(filepath.Join(dir, cleanShutdownFile), []byte(`{"version":0,"brokerEpoch":11}`), 0o644); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(dir, "t2-0")) // from another broker
	m := openTestManager(t, []string{dir}, newClock())
	l := m.Get("g1", 0)
	if l == nil {
		t.Fatal("g1-0 not loaded")
	}
	if l.LogStartOffset() != 5 || l.LogEndOffset() != 211 || l.RecoveryPoint() != 211 {
		t.Fatalf("offsets %d %d %d", l.LogStartOffset(), l.LogEndOffset(), l.RecoveryPoint())
	}
	if got := m.DirInfo()[0].DirectoryID; got != "mBmkCJp36BmEb8tZBOuPig" && got == "" {
		t.Fatalf("directory id %q", got)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	compareFile(t, filepath.Join(dir, recoveryPointFile), filepath.Join(kafkaData, recoveryPointFile))
	compareFile(t, filepath.Join(dir, logStartOffsetFile), filepath.Join(kafkaData, logStartOffsetFile))
}

// writeCheckpointsAll writes every dir's checkpoints, as the periodic task.
func (m *Manager) writeCheckpointsAll() {
	for _, d := range m.dirs {
		m.writeCheckpoints(d)
	}
}

// crashForTest abandons the manager like a killed process: no flush, no
// final checkpoints, no clean shutdown marker.
func (m *Manager) crashForTest() {
	m.mu.Lock()
	m.closed = true
	cancel := m.cancel
	logs := m.logs
	m.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	m.bg.Wait()
	for _, ml := range logs {
		ml.log.abandon()()
	}
	m.deletes.Wait()
	m.releaseDirs()
}

// After a crash (no marker) the Manager validates each partition from its
// checkpointed recovery point and keeps exactly the valid prefix.
func TestManagerRecoversAfterCrash(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "d")
	c := newClock()
	cfg := testConfig()
	cfg.SegmentBytes = 2000
	mc := ManagerConfig{Dirs: []string{dir}, RecoveryThreadsPerDir: 3}
	m, err := OpenManager(mc, func(string) Config { return cfg }, testOpts(c))
	if err != nil {
		t.Fatal(err)
	}
	var ends [3]int64
	for p := int32(0); p < 3; p++ {
		l, err := m.Create("t", p, [16]byte{7}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 30; i++ {
			mustAppend(t, l, valueBatch(noPID, 2, 50))
		}
		if err := l.Flush(); err != nil {
			t.Fatal(err)
		}
		ends[p] = l.LogEndOffset()
	}
	m.writeCheckpointsAll()
	// Unflushed appends after the checkpoint, then a torn write on t-1.
	l1 := m.Get("t", 1)
	for i := 0; i < 5; i++ {
		mustAppend(t, l1, valueBatch(noPID, 2, 50))
	}
	good := l1.LogEndOffset()
	active := l1.active()
	mustAppend(t, l1, valueBatch(noPID, 2, 50))
	path := active.path(logSuffix)
	m.crashForTest()
	b := mustRead(t, path)
	if err := os.WriteFile(path, b[:len(b)-7], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, cleanShutdownFile)); !os.IsNotExist(err) {
		t.Fatal("crash left a clean shutdown marker")
	}
	m, err = OpenManager(mc, func(string) Config { return cfg }, testOpts(c))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for p := int32(0); p < 3; p++ {
		want := ends[p]
		if p == 1 {
			want = good
		}
		l := m.Get("t", p)
		if l.LogEndOffset() != want {
			t.Fatalf("t-%d log end %d after recovery, want %d", p, l.LogEndOffset(), want)
		}
		if got := len(readAllBatches(t, l, 0)); int64(got) != want/2 {
			t.Fatalf("t-%d: %d batches", p, got)
		}
	}
}

// Close does not wait out file.delete.delay.ms of a deleted partition.
func TestManagerCloseFinishesPendingDeletes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "d")
	cfg := testConfig()
	cfg.FileDeleteDelayMs = 3_600_000
	m, err := OpenManager(ManagerConfig{Dirs: []string{dir}}, func(string) Config { return cfg }, testOpts(nil))
	if err != nil {
		t.Fatal(err)
	}
	l, err := m.Create("gone", 0, [16]byte{}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, valueBatch(noPID, 1, 10))
	if err := m.Delete("gone", 0); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("Close took %v", d)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), "-delete") {
			t.Fatalf("%s left after Close", e.Name())
		}
	}
}

// TestHighWatermarkCheckpoint: high watermarks set on replicated logs
// survive a restart through replication-offset-checkpoint (capped at the
// log end), and logs whose high watermark was never set stay without one.
func TestHighWatermarkCheckpoint(t *testing.T) {
	dirs := []string{t.TempDir()}
	m := openTestManager(t, dirs, nil)
	repl, err := m.Create("repl", 0, [16]byte{1}, testConfig())
	if err != nil {
		t.Fatal(err)
	}
	single, err := m.Create("single", 0, [16]byte{2}, testConfig())
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		mustAppend(t, repl, valueBatch(noPID, 2, 30))
		mustAppend(t, single, valueBatch(noPID, 2, 30))
	}
	repl.SetHighWatermark(4)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dirs[0], replicationOffsetFile))
	if err != nil {
		t.Fatal(err)
	}
	if want := "0\n1\nrepl 0 4\n"; string(b) != want {
		t.Fatalf("checkpoint %q, want %q", b, want)
	}

	m = openTestManager(t, dirs, nil)
	defer m.Close()
	if hw, ok := m.Get("repl", 0).HighWatermark(); !ok || hw != 4 {
		t.Errorf("repl high watermark after restart: %d, %v; want 4", hw, ok)
	}
	if hw, ok := m.Get("single", 0).HighWatermark(); ok {
		t.Errorf("single-replica log got a high watermark %d", hw)
	}
}
