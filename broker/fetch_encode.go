package broker

import (
	"encoding/binary"
	"errors"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/fjordhq/fjord/broker/log"
	"github.com/fjordhq/fjord/broker/protocol"
)

// fetchData is one partition's records as file ranges, to be spliced into
// the encoded response.
type fetchData struct {
	topic, partition int
	res              log.ReadResult
	part             *partition // whose per-topic counters count the bytes sent
}

// recordsSentinel marks partitions whose records are spliced in.
var recordsSentinel = []byte{0xA5}

// encodeFetch encodes resp with kmsg and splices each partition's records
// in as file ranges, so the writer can send them with sendfile instead of
// copying them through user space twice.
//
// kmsg encodes whole messages only, so the positions of the records
// fields are found by encoding twice: once with every record set empty
// (e0), once with a one-byte sentinel in the partitions that have data
// (e1). Walking both encodings side by side, the first byte that differs
// is the length prefix of the next partition with data (the records field
// is the last field of a partition before its tagged fields). All
// encoding is kmsg's; only the length prefix of each spliced field is
// written here (compact bytes: uvarint(n+1); classic: int32 n).
func encodeFetch(resp *kmsg.FetchResponse, data []fetchData) ([]protocol.Part, error) {
	for _, d := range data {
		resp.Topics[d.topic].Partitions[d.partition].RecordBatches = emptyRecords
	}
	e0 := resp.AppendTo(nil)
	if len(data) == 0 {
		return []protocol.Part{{Bytes: e0}}, nil
	}
	for _, d := range data {
		resp.Topics[d.topic].Partitions[d.partition].RecordBatches = recordsSentinel
	}
	e1 := resp.AppendTo(make([]byte, 0, len(e0)+len(data)))
	for _, d := range data {
		resp.Topics[d.topic].Partitions[d.partition].RecordBatches = emptyRecords
	}
	flexible := resp.IsFlexible()
	parts := make([]protocol.Part, 0, 3*len(data)+1)
	prefixes := make([]byte, 0, 5*len(data))
	i, j, prev := 0, 0, 0
	for _, d := range data {
		for i < len(e0) && j < len(e1) && e0[i] == e1[j] {
			i++
			j++
		}
		if i >= len(e0) || j+1 >= len(e1) || e1[j+1] != recordsSentinel[0] {
			return nil, errors.New("internal: cannot locate records field in fetch response")
		}
		start, end := i, i+1 // compact bytes: the empty prefix is one byte (uvarint 1)
		if !flexible {
			start = i - 3 // int32 0 vs int32 1 differ in their last byte
		}
		if start < prev {
			return nil, errors.New("internal: records fields out of order in fetch response")
		}
		n := d.res.Size
		p0 := len(prefixes)
		if flexible {
			prefixes = binary.AppendUvarint(prefixes, uint64(n)+1)
		} else {
			prefixes = binary.BigEndian.AppendUint32(prefixes, uint32(n))
		}
		parts = append(parts, protocol.Part{Bytes: e0[prev:start]}, protocol.Part{Bytes: prefixes[p0:len(prefixes):len(prefixes)]})
		for _, fr := range d.res.Ranges {
			parts = append(parts, protocol.Part{File: fr.File, Pos: fr.Pos, Size: fr.Size})
		}
		prev = end
		i, j = end, j+2
	}
	parts = append(parts, protocol.Part{Bytes: e0[prev:]})
	return parts, nil
}
