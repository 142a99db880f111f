package group

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unicode/utf16"
)

// The Connect sub-protocols a worker offers in JoinGroup, most preferred
// first (Kafka's ConnectProtocolCompatibility). The coordinator picks the
// first one every member supports.
const (
	// ProtocolDefault is the eager protocol (Kafka's EAGER, version 0):
	// every rebalance stops everything.
	ProtocolDefault = "default"
	// ProtocolCompatible is incremental cooperative rebalancing (KIP-415,
	// version 1).
	ProtocolCompatible = "compatible"
	// ProtocolSessioned is version 1 plus KIP-507 session keys (version 2);
	// its encoding is version 1's with another header.
	ProtocolSessioned = "sessioned"
)

// ProtocolType is the group protocol type Connect workers join with.
const ProtocolType = "connect"

// Assignment error codes (Kafka's ConnectProtocol.Assignment).
const (
	NoError int16 = 0
	// ConfigMismatch: the leader could not catch up with the config offset
	// some member reported; members read the config topic to the end and
	// rejoin.
	ConfigMismatch int16 = 1
)

// connectorTask is the task id standing for the connector itself in the
// wire assignment (Kafka's CONNECTOR_TASK).
const connectorTask = -1

// ProtocolVersion returns the header version of a sub-protocol, or -1 if
// the name is not one of Kafka's.
func ProtocolVersion(protocol string) int16 {
	switch protocol {
	case ProtocolDefault:
		return 0
	case ProtocolCompatible:
		return 1
	case ProtocolSessioned:
		return 2
	}
	return -1
}

// TaskID names a task. Task is an int32 because that is its wire type.
type TaskID struct {
	Connector string
	Task      int32
}

func (t TaskID) String() string { return fmt.Sprintf("%s-%d", t.Connector, t.Task) }

// WorkerState is what a worker tells the group when it joins: where its
// REST API is, how far it has read the config topic, and (cooperative
// protocols only) what it runs now — which is how a new leader learns the
// current assignment.
type WorkerState struct {
	URL          string
	ConfigOffset int64
	// Assignment is nil on a worker's first join (encoded as a null
	// allocation), and ignored by the default protocol.
	Assignment *Assignment
}

// Assignment is what the leader hands each worker in SyncGroup (Kafka's
// ExtendedAssignment). Under the cooperative protocols Connectors and
// Tasks are what to start in addition to what the worker already runs,
// and Revoked* what to stop; under the default protocol they are the
// whole assignment.
type Assignment struct {
	// Version is the header version (0 default, 1 compatible, 2
	// sessioned) it was decoded with; EncodeAssignment writes the
	// version of the protocol it is given.
	Version           int16
	Error             int16
	Leader            string
	LeaderURL         string
	ConfigOffset      int64
	Connectors        []string
	Tasks             []TaskID
	RevokedConnectors []string
	RevokedTasks      []TaskID
	// Delay is how long (ms) until the leader wants a follow-up rebalance
	// to reassign the work of departed workers (0: none scheduled).
	Delay int32
}

// Failed reports whether the leader could not make the assignment.
func (a *Assignment) Failed() bool { return a.Error != NoError }

// EncodeMetadata encodes a worker's JoinGroup metadata for a protocol,
// byte for byte as Kafka's ConnectProtocol.serializeMetadata (default) and
// IncrementalCooperativeConnectProtocol.serializeMetadata (compatible,
// sessioned) do.
func EncodeMetadata(protocol string, s WorkerState) ([]byte, error) {
	v := ProtocolVersion(protocol)
	if v < 0 {
		return nil, fmt.Errorf("unknown Connect protocol %q (want default, compatible or sessioned)", protocol)
	}
	var e encoder
	e.int16(v)
	e.string(s.URL)
	e.int64(s.ConfigOffset)
	if v == 0 {
		return e.b, nil
	}
	if s.Assignment == nil {
		e.int32(-1) // null allocation
		return e.b, nil
	}
	alloc, err := EncodeAssignment(protocol, s.Assignment)
	if err != nil {
		return nil, err
	}
	e.bytes(alloc)
	return e.b, nil
}

// DecodeMetadata decodes a member's JoinGroup metadata for the protocol
// the coordinator chose. As in Kafka, any header version is accepted and
// read with the chosen protocol's schema, so a newer worker's metadata
// still decodes.
func DecodeMetadata(protocol string, b []byte) (WorkerState, error) {
	v := ProtocolVersion(protocol)
	if v < 0 {
		return WorkerState{}, fmt.Errorf("unknown Connect protocol %q", protocol)
	}
	d := decoder{b: b}
	if ver := d.int16(); d.err == nil && ver < 0 {
		return WorkerState{}, fmt.Errorf("decode worker metadata: unsupported subscription version %d", ver)
	}
	var s WorkerState
	s.URL = d.string()
	s.ConfigOffset = d.int64()
	if v > 0 && d.err == nil && d.remaining() > 0 {
		// The allocation field tolerates absence (Kafka's
		// TOLERATE_MISSING_FIELDS_WITH_DEFAULTS): missing means null.
		if alloc := d.nullableBytes(); alloc != nil && d.err == nil {
			a, err := DecodeAssignment(alloc)
			if err != nil {
				return WorkerState{}, fmt.Errorf("decode worker metadata: allocation: %w", err)
			}
			s.Assignment = a
		}
	}
	if d.err != nil {
		return WorkerState{}, fmt.Errorf("decode worker metadata: %w", d.err)
	}
	return s, nil
}

// EncodeAssignment encodes an assignment for a protocol as Kafka does
// (ConnectProtocol.serializeAssignment for default,
// IncrementalCooperativeConnectProtocol.serializeAssignment otherwise).
//
// Kafka groups tasks under their connector, and lists assigned connectors
// in the iteration order of a java.util.HashSet; that order is reproduced
// (as Java 17's HashSet(Collection) sizes its table) so the bytes are
// Kafka's. Revoked connectors keep their order, duplicates dropped.
func EncodeAssignment(protocol string, a *Assignment) ([]byte, error) {
	v := ProtocolVersion(protocol)
	if v < 0 {
		return nil, fmt.Errorf("unknown Connect protocol %q (want default, compatible or sessioned)", protocol)
	}
	var e encoder
	e.int16(v)
	e.int16(a.Error)
	e.string(a.Leader)
	e.string(a.LeaderURL)
	e.int64(a.ConfigOffset)
	e.connectorAssignments(groupTasks(javaHashSetOrder(a.Connectors), a.Tasks))
	if v == 0 {
		return e.b, nil
	}
	e.connectorAssignments(groupTasks(distinct(a.RevokedConnectors), a.RevokedTasks))
	e.int32(a.Delay)
	return e.b, nil
}

// DecodeAssignment decodes an assignment of any protocol version (Kafka
// reads all of them with the version 1 schema, whose assignment, revoked
// and delay fields may be missing: they default to empty and 0).
func DecodeAssignment(b []byte) (*Assignment, error) {
	d := decoder{b: b}
	a := &Assignment{Version: d.int16()}
	if d.err == nil && a.Version < 0 {
		return nil, fmt.Errorf("decode assignment: unsupported version %d", a.Version)
	}
	a.Error = d.int16()
	a.Leader = d.string()
	a.LeaderURL = d.string()
	a.ConfigOffset = d.int64()
	if d.err == nil && d.remaining() > 0 {
		a.Connectors, a.Tasks = d.connectorAssignments()
	}
	if d.err == nil && d.remaining() > 0 {
		a.RevokedConnectors, a.RevokedTasks = d.connectorAssignments()
	}
	if d.err == nil && d.remaining() > 0 {
		a.Delay = d.int32()
	}
	if d.err != nil {
		return nil, fmt.Errorf("decode assignment: %w", d.err)
	}
	return a, nil
}

// connectorAssignment is one element of the wire's assignment array: a
// connector and its task ids, -1 standing for the connector itself.
type connectorAssignment struct {
	connector string
	tasks     []int32
}

// groupTasks builds the wire array as Kafka's Assignment.asMap does:
// connectors first (each with -1), then each task appended under its
// connector, adding connectors not seen yet in task order.
func groupTasks(connectors []string, tasks []TaskID) []connectorAssignment {
	var out []connectorAssignment
	index := map[string]int{}
	add := func(c string, t int32) {
		i, ok := index[c]
		if !ok {
			i = len(out)
			index[c] = i
			out = append(out, connectorAssignment{connector: c})
		}
		out[i].tasks = append(out[i].tasks, t)
	}
	for _, c := range connectors {
		add(c, connectorTask)
	}
	for _, t := range tasks {
		add(t.Connector, t.Task)
	}
	return out
}

func distinct(ss []string) []string {
	seen := make(map[string]bool, len(ss))
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// javaHashSetOrder returns the distinct strings in the order Java 17's
// new HashSet<>(list) iterates them: by bucket of the spread String
// hashCode, insertion order within a bucket. The table starts at
// tableSizeFor(max(n/.75+1, 16)) and doubles when it passes 3/4 full or
// when a bucket grows past 8 in a table under 64 (Java treeifies a bucket
// past 8 in a larger table and then iterates it differently; nine names
// sharing a bucket of a 64-slot table is far-fetched enough to ignore).
func javaHashSetOrder(items []string) []string {
	items = distinct(items)
	if len(items) <= 1 {
		return items
	}
	n := tableSizeFor(max(int(float32(len(items))/0.75)+1, 16))
	type entry struct {
		s string
		h uint32
	}
	buckets := make([][]entry, n)
	resize := func() {
		nb := make([][]entry, 2*len(buckets))
		for _, b := range buckets { // split keeps relative order, like Java
			for _, e := range b {
				i := e.h & uint32(len(nb)-1)
				nb[i] = append(nb[i], e)
			}
		}
		buckets = nb
	}
	size := 0
	for _, s := range items {
		h := javaStringHash(s)
		h ^= h >> 16
		i := h & uint32(len(buckets)-1)
		buckets[i] = append(buckets[i], entry{s, h})
		size++
		if len(buckets[i]) > 8 && len(buckets) < 64 {
			resize()
		}
		if float64(size) > float64(len(buckets))*0.75 {
			resize()
		}
	}
	out := make([]string, 0, len(items))
	for _, b := range buckets {
		for _, e := range b {
			out = append(out, e.s)
		}
	}
	return out
}

// javaStringHash is java.lang.String.hashCode: over UTF-16 code units.
func javaStringHash(s string) uint32 {
	var h uint32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + uint32(u)
	}
	return h
}

func tableSizeFor(c int) int {
	n := 1
	for n < c {
		n <<= 1
	}
	return n
}

// encoder writes Kafka's protocol primitive types (big endian; STRING is
// an int16 length and UTF-8; BYTES and arrays an int32 length, -1 null).
type encoder struct{ b []byte }

func (e *encoder) int16(v int16) { e.b = binary.BigEndian.AppendUint16(e.b, uint16(v)) }
func (e *encoder) int32(v int32) { e.b = binary.BigEndian.AppendUint32(e.b, uint32(v)) }
func (e *encoder) int64(v int64) { e.b = binary.BigEndian.AppendUint64(e.b, uint64(v)) }

func (e *encoder) string(s string) {
	if len(s) > math.MaxInt16 {
		s = s[:math.MaxInt16] // Kafka would refuse; names this long never reach here
	}
	e.int16(int16(len(s)))
	e.b = append(e.b, s...)
}

func (e *encoder) bytes(b []byte) {
	e.int32(int32(len(b)))
	e.b = append(e.b, b...)
}

func (e *encoder) connectorAssignments(as []connectorAssignment) {
	e.int32(int32(len(as)))
	for _, a := range as {
		e.string(a.connector)
		e.int32(int32(len(a.tasks)))
		for _, t := range a.tasks {
			e.int32(t)
		}
	}
}

var errShort = errors.New("buffer too short")

// decoder reads the primitives, remembering the first error so callers
// check once.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) remaining() int { return len(d.b) }

func (d *decoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.b) {
		d.err = errShort
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) int16() int16 {
	if b := d.take(2); b != nil {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}

func (d *decoder) int32() int32 {
	if b := d.take(4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

func (d *decoder) int64() int64 {
	if b := d.take(8); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

func (d *decoder) string() string {
	n := d.int16()
	if d.err == nil && n < 0 {
		d.err = fmt.Errorf("string length %d cannot be negative", n)
		return ""
	}
	return string(d.take(int(n)))
}

func (d *decoder) nullableBytes() []byte {
	n := d.int32()
	if d.err != nil || n == -1 {
		return nil
	}
	if n < -1 {
		d.err = fmt.Errorf("bytes size %d cannot be negative", n)
		return nil
	}
	return d.take(int(n))
}

// arrayLen reads an array length, refusing counts the remaining bytes
// cannot hold (each element takes at least min bytes) so a corrupt length
// never makes us allocate.
func (d *decoder) arrayLen(min int) int {
	n := d.int32()
	if d.err != nil || n == -1 {
		return -1
	}
	if n < 0 || int(n) > len(d.b)/min {
		d.err = fmt.Errorf("array size %d does not fit in the %d remaining bytes", n, len(d.b))
		return -1
	}
	return int(n)
}

func (d *decoder) connectorAssignments() ([]string, []TaskID) {
	var connectors []string
	var tasks []TaskID
	n := d.arrayLen(6) // a STRING (2) and an array length (4) at least
	for range max(n, 0) {
		c := d.string()
		m := d.arrayLen(4)
		if d.err != nil {
			return nil, nil
		}
		if m < 0 {
			d.err = fmt.Errorf("connector %q has a null task array", c)
			return nil, nil
		}
		for range m {
			t := d.int32()
			if t == connectorTask {
				connectors = append(connectors, c)
			} else {
				tasks = append(tasks, TaskID{Connector: c, Task: t})
			}
		}
	}
	if d.err != nil {
		return nil, nil
	}
	return connectors, tasks
}
