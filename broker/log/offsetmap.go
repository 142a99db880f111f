package log

import (
	"crypto/md5"
	"encoding/binary"
)

// offsetMap is the cleaner's key → latest offset map, Kafka's
// SkimpyOffsetMap: a fixed-size open-addressing table of MD5(key) → offset,
// 24 bytes per slot, so log.cleaner.dedupe.buffer.size bounds its memory
// whatever the keys. Two keys with the same MD5 would count as one, as in
// Kafka. It is considered full at 90% of its slots; the cleaner then cleans
// the part of the dirty log it managed to map and continues next round.
type offsetMap struct {
	hashes  [][md5.Size]byte
	offsets []int64 // -1: empty slot
	used    int
	latest  int64 // latest offset mapped (or skipped as keyless)
}

const offsetMapLoadFactor = 0.9

func newOffsetMap(memory int64) *offsetMap {
	slots := max(int(memory/(md5.Size+8)), 16)
	m := &offsetMap{hashes: make([][md5.Size]byte, slots), offsets: make([]int64, slots)}
	m.clear()
	return m
}

func (m *offsetMap) clear() {
	for i := range m.offsets {
		m.offsets[i] = -1
	}
	m.used = 0
	m.latest = -1
}

func (m *offsetMap) slots() int { return len(m.offsets) }

// full reports whether another key may not fit.
func (m *offsetMap) full() bool {
	return float64(m.used) >= float64(m.slots())*offsetMapLoadFactor
}

func (m *offsetMap) slot(h *[md5.Size]byte) int {
	return int(binary.BigEndian.Uint64(h[:8]) % uint64(m.slots()))
}

func (m *offsetMap) put(key []byte, offset int64) {
	h := md5.Sum(key)
	n := m.slots()
	for i, probes := m.slot(&h), 0; probes < n; i, probes = (i+1)%n, probes+1 {
		if m.offsets[i] < 0 {
			m.hashes[i] = h
			m.offsets[i] = offset
			m.used++
			break
		}
		if m.hashes[i] == h {
			m.offsets[i] = offset
			break
		}
	}
	m.latest = max(m.latest, offset)
}

// get returns the latest offset of key, or -1.
func (m *offsetMap) get(key []byte) int64 {
	h := md5.Sum(key)
	n := m.slots()
	for i, probes := m.slot(&h), 0; probes < n; i, probes = (i+1)%n, probes+1 {
		if m.offsets[i] < 0 {
			return -1
		}
		if m.hashes[i] == h {
			return m.offsets[i]
		}
	}
	return -1
}

func (m *offsetMap) updateLatest(offset int64) { m.latest = max(m.latest, offset) }

func (m *offsetMap) utilization() float64 { return float64(m.used) / float64(m.slots()) }
