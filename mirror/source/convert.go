package source

import (
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/fjordhq/fjord/connect"
	"github.com/fjordhq/fjord/mirror/policy"
)

// partition is what a task knows of one assigned source partition.
type partition struct {
	source connect.TopicPartition
	// sourcePartition is the record's source partition map, shared by
	// all of the partition's records (the runtime tracks offsets per map
	// and recognises a repeated map cheaply).
	sourcePartition map[string]any
	remote          string
	// identity: the remote topic has the source's name, so loops are
	// stopped by the provenance header instead of by the name.
	identity bool
	skips    skipRuns
	m        *partitionMetrics
	key      metricKey
}

// batch holds a poll's records and their headers in one allocation each
// rather than one per record: the records live until the target has
// acknowledged them all, which is about as long as each would.
type batch struct {
	recs []connect.SourceRecord
	hdrs []connect.Header
}

// newBatch makes room for n records with headers headers in all (each
// identity-named record may add one).
func newBatch(n, headers int) *batch {
	return &batch{recs: make([]connect.SourceRecord, 0, n), hdrs: make([]connect.Header, 0, headers)}
}

// convertRecord is MirrorSourceTask.convertRecord: the record for the
// remote topic's partition of the same number, key, value and headers as
// bytes, the timestamp kept. With identity naming it returns nil for a
// record that came from the target (its provenance says so) and stamps
// the others with the source alias; sourceAlias and targetAlias name the
// flow. The record is appended to b, which must have room for it.
func (b *batch) convertRecord(p *partition, r *kgo.Record, sourceAlias, targetAlias string) *connect.SourceRecord {
	var provenance []byte
	seen := false
	if p.identity {
		for _, h := range r.Headers {
			// Only the last one counts, as Headers.Last.
			if h.Key == policy.ProvenanceHeader {
				provenance, seen = h.Value, true
			}
		}
		if seen && policy.LoopsBack(provenance, targetAlias) {
			return nil
		}
	}
	b.recs = append(b.recs, connect.SourceRecord{
		Topic:           p.remote,
		Partition:       r.Partition,
		KeySchema:       connect.OptionalBytesSchema,
		ValueSchema:     connect.BytesSchema,
		Timestamp:       r.Timestamp.UnixMilli(),
		SourcePartition: p.sourcePartition,
		SourceOffset:    wrapOffset(r.Offset),
		Offset:          -1,
		TimestampType:   connect.NoTimestampType,
	})
	out := &b.recs[len(b.recs)-1]
	if r.Key != nil {
		out.Key = r.Key
	}
	if r.Value != nil {
		out.Value = r.Value
	} else {
		// A tombstone: MM2 keeps BYTES_SCHEMA, which a converter other
		// than ByteArrayConverter refuses for null.
		out.ValueSchema = connect.OptionalBytesSchema
	}
	if len(r.Headers) == 0 && !p.identity {
		return out
	}
	// The record's share of the batch's headers, capped so that nothing
	// appended to it reaches the next record's.
	n := len(r.Headers)
	if p.identity && !seen {
		n++
	}
	start := len(b.hdrs)
	for _, h := range r.Headers {
		var v any
		if h.Value != nil {
			v = h.Value
		}
		b.hdrs = append(b.hdrs, connect.Header{Key: h.Key, Schema: connect.BytesSchema, Value: v})
	}
	out.Headers = b.hdrs[start : len(b.hdrs) : start+n]
	if !p.identity {
		return out
	}
	stamped := policy.AppendProvenance(provenance, sourceAlias)
	if !seen {
		b.hdrs = append(b.hdrs, connect.Header{Key: policy.ProvenanceHeader, Schema: connect.BytesSchema, Value: stamped})
		out.Headers = b.hdrs[start : start+n : start+n]
		return out
	}
	for i := len(out.Headers) - 1; i >= 0; i-- {
		if out.Headers[i].Key == policy.ProvenanceHeader {
			out.Headers[i].Value = stamped
			break
		}
	}
	return out
}
