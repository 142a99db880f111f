package storage

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/fjordhq/fjord/connect"
)

// OffsetKey encodes a source offset's key as Kafka's
// OffsetStorageWriter does: the JSON array [connector, partition].
func OffsetKey(connector string, partition map[string]any) ([]byte, error) {
	if partition == nil {
		partition = map[string]any{}
	}
	b, err := EncodeJSON([]any{connector, partition})
	if err != nil {
		return nil, fmt.Errorf("encode offset key of connector %s: %w", connector, err)
	}
	return b, nil
}

// ParseOffsetKey decodes a key written by OffsetKey or by Kafka Connect.
func ParseOffsetKey(key []byte) (connector string, partition map[string]any, err error) {
	v, err := DecodeJSON(key)
	if err != nil {
		return "", nil, fmt.Errorf("offset key %q is not JSON: %w", key, err)
	}
	arr, ok := v.([]any)
	if !ok || len(arr) != 2 {
		return "", nil, fmt.Errorf("offset key %q is not a [connector, partition] array", key)
	}
	connector, ok = arr[0].(string)
	if !ok {
		return "", nil, fmt.Errorf("offset key %q does not start with a connector name", key)
	}
	if arr[1] != nil {
		if partition, ok = arr[1].(map[string]any); !ok {
			return "", nil, fmt.Errorf("offset key %q has a partition that is not an object", key)
		}
	}
	return connector, partition, nil
}

// EncodeOffset encodes a source offset value (nil for a tombstone).
func EncodeOffset(offset map[string]any) ([]byte, error) {
	if offset == nil {
		return nil, nil
	}
	return EncodeJSON(offset)
}

// DecodeOffset decodes an offset value; nil bytes are a tombstone.
func DecodeOffset(value []byte) (map[string]any, error) {
	if value == nil {
		return nil, nil
	}
	v, err := DecodeJSON(value)
	if err != nil {
		return nil, fmt.Errorf("offset value %q is not JSON: %w", value, err)
	}
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("offset value %q is not an object", value)
	}
	return m, nil
}

// offsetEntry is one stored offset, kept as bytes so every read decodes a
// fresh copy (callers may modify what they get) and every store returns the
// same types whatever wrote them.
type offsetEntry struct {
	connector string
	partition []byte // canonical JSON
	value     []byte
}

// offsetTable is the in-memory view every OffsetStore keeps: canonical
// key → entry. Keys written by Kafka with another field order are
// re-encoded canonically, so lookups do not depend on it.
type offsetTable struct {
	mu      sync.RWMutex
	entries map[string]offsetEntry // by canonical [connector, partition]
}

func newOffsetTable() *offsetTable { return &offsetTable{entries: map[string]offsetEntry{}} }

// apply records one key/value read from a log or file; bad keys are
// reported and skipped, as Kafka skips what its converter cannot read.
func (t *offsetTable) apply(key, value []byte) error {
	conn, part, err := ParseOffsetKey(key)
	if err != nil {
		return err
	}
	if _, err := DecodeOffset(value); err != nil {
		return err
	}
	return t.set(conn, part, value)
}

func (t *offsetTable) set(connector string, partition map[string]any, value []byte) error {
	ck, err := OffsetKey(connector, partition)
	if err != nil {
		return err
	}
	pk, _ := EncodeJSON(nonNil(partition))
	t.mu.Lock()
	defer t.mu.Unlock()
	if value == nil {
		delete(t.entries, string(ck))
	} else {
		t.entries[string(ck)] = offsetEntry{connector: connector, partition: pk, value: value}
	}
	return nil
}

func nonNil(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func (t *offsetTable) get(connector string, partitions []map[string]any) ([]map[string]any, error) {
	out := make([]map[string]any, len(partitions))
	t.mu.RLock()
	defer t.mu.RUnlock()
	for i, p := range partitions {
		ck, err := OffsetKey(connector, p)
		if err != nil {
			return nil, err
		}
		if e, ok := t.entries[string(ck)]; ok {
			if out[i], err = DecodeOffset(e.value); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

func (t *offsetTable) all(connector string) ([]connect.SourcePartitionOffset, error) {
	t.mu.RLock()
	var es []offsetEntry
	for _, e := range t.entries {
		if e.connector == connector {
			es = append(es, e)
		}
	}
	t.mu.RUnlock()
	slices.SortFunc(es, func(a, b offsetEntry) int { return strings.Compare(string(a.partition), string(b.partition)) })
	out := make([]connect.SourcePartitionOffset, 0, len(es))
	for _, e := range es {
		p, err := DecodeJSON(e.partition)
		if err != nil {
			return nil, err
		}
		o, err := DecodeOffset(e.value)
		if err != nil {
			return nil, err
		}
		pm, _ := p.(map[string]any)
		out = append(out, connect.SourcePartitionOffset{Partition: pm, Offset: o})
	}
	return out, nil
}

// snapshot returns key → value bytes of every entry (for the file store).
func (t *offsetTable) snapshot() map[string][]byte {
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := make(map[string][]byte, len(t.entries))
	for k, e := range t.entries {
		out[k] = e.value
	}
	return out
}

// encodeOffsets turns a Put's offsets into key/value bytes.
func encodeOffsets(connector string, offsets []connect.SourcePartitionOffset) (keys, values [][]byte, err error) {
	for _, o := range offsets {
		k, err := OffsetKey(connector, o.Partition)
		if err != nil {
			return nil, nil, err
		}
		v, err := EncodeOffset(o.Offset)
		if err != nil {
			return nil, nil, fmt.Errorf("encode offset of connector %s partition %s: %w", connector, k, err)
		}
		keys, values = append(keys, k), append(values, v)
	}
	return keys, values, nil
}

// MemoryOffsetStore keeps offsets in memory (tests; Kafka's
// MemoryOffsetBackingStore). Values round-trip through JSON like the
// durable stores, so callers see the same types.
type MemoryOffsetStore struct{ t *offsetTable }

var _ OffsetStore = (*MemoryOffsetStore)(nil)

// NewMemoryOffsetStore returns an empty store.
func NewMemoryOffsetStore() *MemoryOffsetStore { return &MemoryOffsetStore{t: newOffsetTable()} }

func (m *MemoryOffsetStore) Get(_ context.Context, connector string, partitions []map[string]any) ([]map[string]any, error) {
	return m.t.get(connector, partitions)
}

func (m *MemoryOffsetStore) Put(_ context.Context, connector string, offsets []connect.SourcePartitionOffset) error {
	keys, values, err := encodeOffsets(connector, offsets)
	if err != nil {
		return err
	}
	for i := range keys {
		if err := m.t.apply(keys[i], values[i]); err != nil {
			return err
		}
	}
	return nil
}

func (m *MemoryOffsetStore) All(_ context.Context, connector string) ([]connect.SourcePartitionOffset, error) {
	return m.t.all(connector)
}

func (m *MemoryOffsetStore) Close() error { return nil }

// cloneConfig copies a config map (nil stays nil).
func cloneConfig(m map[string]string) map[string]string { return maps.Clone(m) }
