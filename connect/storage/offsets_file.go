package storage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/fjordhq/fjord/connect"
)

// fileFormat names the layout of the offsets file, so a future change can
// be told apart.
const fileFormat = "fjord-connect-offsets-v1"

// FileOffsetStore keeps standalone offsets in offset.storage.file.filename.
//
// Kafka's FileOffsetBackingStore writes a Java-serialized
// HashMap<ByteBuffer, ByteBuffer>; Fjord writes the same keys and values
// (Kafka's JSON) as a readable JSON document instead:
//
//	{"format": "fjord-connect-offsets-v1",
//	 "offsets": [{"key": ["my-source", {"file": "a.txt"}], "value": {"position": 42}}]}
//
// so a Kafka offsets file is not read (the worker starts without offsets
// and says so in the log) and Kafka cannot read Fjord's. Every Put rewrites
// the file atomically (temp file, fsync, rename, fsync of the directory).
type FileOffsetStore struct {
	path string
	t    *offsetTable
	mu   sync.Mutex // serialises file writes
}

var _ OffsetStore = (*FileOffsetStore)(nil)

type fileDoc struct {
	Format  string      `json:"format"`
	Offsets []fileEntry `json:"offsets"`
}

type fileEntry struct {
	Key   json.RawMessage `json:"key"`
	Value json.RawMessage `json:"value"`
}

// ErrForeignOffsetFile is returned (wrapped) by OpenFileOffsetStore for a
// file that is not Fjord's JSON, such as a Kafka Connect offsets file.
var ErrForeignOffsetFile = errors.New("not a Fjord offsets file")

// OpenFileOffsetStore loads path (missing or empty is an empty store).
func OpenFileOffsetStore(path string) (*FileOffsetStore, error) {
	s := &FileOffsetStore{path: path, t: newOffsetTable()}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) || (err == nil && len(bytes.TrimSpace(data)) == 0) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read offsets file: %w", err)
	}
	var doc fileDoc
	if err := json.Unmarshal(data, &doc); err != nil || doc.Format != fileFormat {
		// Java serialization starts with 0xACED.
		return nil, fmt.Errorf("offsets file %s: %w (Kafka Connect's Java-serialized offsets cannot be read; move it away to start without offsets)", path, ErrForeignOffsetFile)
	}
	for _, e := range doc.Offsets {
		var value []byte
		if len(e.Value) > 0 && string(e.Value) != "null" {
			value = e.Value
		}
		if err := s.t.apply(e.Key, value); err != nil {
			return nil, fmt.Errorf("offsets file %s: %w", path, err)
		}
	}
	return s, nil
}

// Path returns the file's path.
func (s *FileOffsetStore) Path() string { return s.path }

func (s *FileOffsetStore) Get(_ context.Context, connector string, partitions []map[string]any) ([]map[string]any, error) {
	return s.t.get(connector, partitions)
}

func (s *FileOffsetStore) All(_ context.Context, connector string) ([]connect.SourcePartitionOffset, error) {
	return s.t.all(connector)
}

func (s *FileOffsetStore) Put(_ context.Context, connector string, offsets []connect.SourcePartitionOffset) error {
	keys, values, err := encodeOffsets(connector, offsets)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range keys {
		if err := s.t.apply(keys[i], values[i]); err != nil {
			return err
		}
	}
	return s.save()
}

func (s *FileOffsetStore) save() error {
	snap := s.t.snapshot()
	doc := fileDoc{Format: fileFormat, Offsets: make([]fileEntry, 0, len(snap))}
	for k, v := range snap {
		doc.Offsets = append(doc.Offsets, fileEntry{Key: json.RawMessage(k), Value: json.RawMessage(v)})
	}
	slices.SortFunc(doc.Offsets, func(a, b fileEntry) int { return bytes.Compare(a.Key, b.Key) })
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("encode offsets file: %w", err)
	}
	return writeFileAtomic(s.path, append(data, '\n'))
}

func (s *FileOffsetStore) Close() error { return nil }

// writeFileAtomic replaces path with data so that a crash leaves either
// the old or the new file, never a torn one.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create directory for %s: %w", path, err)
	}
	f, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after the rename
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("replace %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		// The rename is durable only once the directory is.
		_ = d.Sync()
		d.Close()
	}
	return nil
}
