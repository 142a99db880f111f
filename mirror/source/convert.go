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
	m        *partitionMetrics
	key      metricKey
}

// convertRecord is MirrorSourceTask.convertRecord: the record for the
// remote topic's partition of the same number, key, value and headers as
// bytes, the timestamp kept. With identity naming it returns nil for a
// record that came from the target (its provenance says so) and stamps
// the others with the source alias; sourceAlias and targetAlias name the
// flow.
func convertRecord(p *partition, r *kgo.Record, sourceAlias, targetAlias string) *connect.SourceRecord {
	out := &connect.SourceRecord{
		Topic:           p.remote,
		Partition:       r.Partition,
		KeySchema:       connect.OptionalBytesSchema,
		ValueSchema:     connect.BytesSchema,
		Timestamp:       r.Timestamp.UnixMilli(),
		SourcePartition: p.sourcePartition,
		SourceOffset:    wrapOffset(r.Offset),
		Offset:          -1,
		TimestampType:   connect.NoTimestampType,
	}
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
	var provenance []byte
	seen := false
	if len(r.Headers) > 0 || p.identity {
		out.Headers = make(connect.Headers, 0, len(r.Headers)+1)
	}
	for _, h := range r.Headers {
		if p.identity && h.Key == policy.ProvenanceHeader {
			// Only the last one counts, as Headers.Last; it is replaced
			// in place below.
			provenance, seen = h.Value, true
		}
		var v any
		if h.Value != nil {
			v = h.Value
		}
		out.Headers = append(out.Headers, connect.Header{Key: h.Key, Schema: connect.BytesSchema, Value: v})
	}
	if !p.identity {
		return out
	}
	if seen && policy.LoopsBack(provenance, targetAlias) {
		return nil
	}
	stamped := policy.AppendProvenance(provenance, sourceAlias)
	if seen {
		for i := len(out.Headers) - 1; i >= 0; i-- {
			if out.Headers[i].Key == policy.ProvenanceHeader {
				out.Headers[i].Value = stamped
				break
			}
		}
	} else {
		out.Headers = append(out.Headers, connect.Header{Key: policy.ProvenanceHeader, Schema: connect.BytesSchema, Value: stamped})
	}
	return out
}
