package log

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Kafka's small metadata files, byte for byte as Kafka 4.4 writes them.
//
// Offset checkpoints (recovery-point-offset-checkpoint,
// log-start-offset-checkpoint, cleaner-offset-checkpoint) are text:
//
//	0                  version
//	2                  entry count
//	orders 0 1234      topic partition offset
//	orders 1 99
//
// leader-epoch-checkpoint is the same with "epoch startOffset" lines.
// partition.metadata is "version: 0\ntopic_id: <base64url uuid>" with no
// trailing newline. All are replaced atomically: write a .tmp, fsync,
// rename, fsync the directory.
const (
	recoveryPointFile = "recovery-point-offset-checkpoint"
	// replicationOffsetFile holds high watermarks of replicated partitions,
	// so a restarted replica knows what was committed before it learns it
	// again from the leader (Kafka's replication-offset-checkpoint).
	replicationOffsetFile = "replication-offset-checkpoint"
	logStartOffsetFile    = "log-start-offset-checkpoint"
	cleanerOffsetFile     = "cleaner-offset-checkpoint"
	leaderEpochFile       = "leader-epoch-checkpoint"
	partitionMetaFile     = "partition.metadata"
	metaPropertiesFile    = "meta.properties"
	cleanShutdownFile     = ".kafka_cleanshutdown"
)

// TopicPartition names a partition in checkpoint files.
type TopicPartition struct {
	Topic     string
	Partition int32
}

func (tp TopicPartition) String() string { return tp.Topic + "-" + strconv.Itoa(int(tp.Partition)) }

// parsePartitionDir splits "<topic>-<partition>" at the last dash.
func parsePartitionDir(name string) (TopicPartition, bool) {
	i := strings.LastIndexByte(name, '-')
	if i <= 0 || i == len(name)-1 {
		return TopicPartition{}, false
	}
	p, err := strconv.ParseInt(name[i+1:], 10, 32)
	if err != nil || p < 0 {
		return TopicPartition{}, false
	}
	return TopicPartition{Topic: name[:i], Partition: int32(p)}, true
}

func encodeOffsetCheckpoint(m map[TopicPartition]int64) []byte {
	keys := make([]TopicPartition, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Topic != keys[j].Topic {
			return keys[i].Topic < keys[j].Topic
		}
		return keys[i].Partition < keys[j].Partition
	})
	var b bytes.Buffer
	fmt.Fprintf(&b, "0\n%d\n", len(keys))
	for _, k := range keys {
		fmt.Fprintf(&b, "%s %d %d\n", k.Topic, k.Partition, m[k])
	}
	return b.Bytes()
}

// checkpointLines checks the version and count lines and returns the
// entry lines, each split into fields.
func checkpointLines(b []byte, fieldsPerLine int) ([][]string, error) {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(b) == 0 {
		return nil, nil
	}
	if len(lines) < 2 || strings.TrimSpace(lines[0]) != "0" {
		return nil, fmt.Errorf("unsupported checkpoint version line %q", lines[0])
	}
	n, err := strconv.Atoi(strings.TrimSpace(lines[1]))
	if err != nil || n < 0 || n != len(lines)-2 {
		return nil, fmt.Errorf("checkpoint says %q entries but has %d", lines[1], len(lines)-2)
	}
	out := make([][]string, 0, n)
	for _, ln := range lines[2:] {
		f := strings.Fields(ln)
		if len(f) != fieldsPerLine {
			return nil, fmt.Errorf("malformed checkpoint line %q", ln)
		}
		out = append(out, f)
	}
	return out, nil
}

func decodeOffsetCheckpoint(b []byte) (map[TopicPartition]int64, error) {
	lines, err := checkpointLines(b, 3)
	if err != nil {
		return nil, err
	}
	m := make(map[TopicPartition]int64, len(lines))
	for _, f := range lines {
		p, err1 := strconv.ParseInt(f[1], 10, 32)
		o, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("malformed checkpoint entry %q", strings.Join(f, " "))
		}
		m[TopicPartition{f[0], int32(p)}] = o
	}
	return m, nil
}

// readOffsetCheckpoint reads a checkpoint file; a missing file is empty.
func readOffsetCheckpoint(path string) (map[TopicPartition]int64, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return map[TopicPartition]int64{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	m, err := decodeOffsetCheckpoint(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

type epochEntry struct {
	epoch int32
	start int64
}

func encodeEpochCheckpoint(entries []epochEntry) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "0\n%d\n", len(entries))
	for _, e := range entries {
		fmt.Fprintf(&b, "%d %d\n", e.epoch, e.start)
	}
	return b.Bytes()
}

func decodeEpochCheckpoint(b []byte) ([]epochEntry, error) {
	lines, err := checkpointLines(b, 2)
	if err != nil {
		return nil, err
	}
	out := make([]epochEntry, 0, len(lines))
	for _, f := range lines {
		e, err1 := strconv.ParseInt(f[0], 10, 32)
		o, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil || e < 0 || o < 0 {
			return nil, fmt.Errorf("malformed leader epoch entry %q", strings.Join(f, " "))
		}
		out = append(out, epochEntry{int32(e), o})
	}
	return out, nil
}

func encodePartitionMetadata(id [16]byte) []byte {
	return []byte("version: 0\ntopic_id: " + base64.RawURLEncoding.EncodeToString(id[:]))
}

func decodePartitionMetadata(b []byte) ([16]byte, error) {
	var id [16]byte
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || strings.TrimSpace(lines[0]) != "version: 0" || !strings.HasPrefix(lines[1], "topic_id: ") {
		return id, fmt.Errorf("malformed partition.metadata %q", b)
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimSpace(strings.TrimPrefix(lines[1], "topic_id: ")))
	if err != nil || len(raw) != 16 {
		return id, fmt.Errorf("malformed topic id in partition.metadata %q", b)
	}
	copy(id[:], raw)
	return id, nil
}

// writeFileAtomic replaces path with data durably: a crash leaves either
// the old or the new content, as Kafka's CheckpointFile does.
func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("fsync %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename %s: %w", tmp, err)
	}
	return syncDir(filepath.Dir(path))
}

// syncDir fsyncs a directory so renames and new files in it are durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("open dir %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync dir %s: %w", dir, err)
	}
	return nil
}
